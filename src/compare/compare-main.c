/* SPDX-License-Identifier: MIT */
/*
 * tbbt-compare: compares an original TBBT trace with the trace of its replay, object by
 * object, and reports operations matched, identical, missing and extra, the argument,
 * status and reply differences, latency, timing on the wire and rates (text, --json,
 * --plot).  The command line is in docs/tbbt-compare.md.  A thin shell over
 * src/compare/.
 */
#include "compare/compare.h"
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/gnuplot.h"
#include "util/json.h"
#include "util/util.h"

#include <string.h>

#define PROG "tbbt-compare"

/* The option values (compare-options.def), owned here until tbbt_cli_main() frees them. */
static struct main_opts {
    char *map_a, *map_b, *root_b, *speed, *json, *plot, *show, *horizon;
    struct tbbt_cli_common common;
    char **args;
} opts;

static const GOptionEntry entries[] = {
#include "compare/compare-options.def"
    TBBT_CLI_END,
};

/* Fills o from the option strings; 0, or an exit code after a message. */
static int build_opts(const struct main_opts *m, struct tbbt_compare_opts *o)
{
    uint64_t v;

    tbbt_compare_opts_init(o);
    for (int i = 0; i < 2; i++)
        if (strcmp(m->args[i], "-") == 0)
            return tbbt_cli_usage("a trace cannot be standard input ('-'): each trace is "
                                  "read more than once, give a file");
    o->trace_a = m->args[0];
    o->trace_b = m->args[1];
    o->map_a = m->map_a;
    o->map_b = m->map_b;
    o->root_b = m->root_b;
    if (m->speed && (!tbbt_cli_parse_double(m->speed, 0, 1e6, &o->speed) || o->speed == 0))
        return tbbt_cli_usage("--speed: expected a factor > 0");
    if (m->show) {
        if (!tbbt_cli_parse_u64(m->show, 0, 1000, &v))
            return tbbt_cli_usage("--show: expected a count 0..1000");
        o->show = (uint32_t)v;
    }
    if (m->horizon && !tbbt_cli_parse_u64(m->horizon, 1, UINT32_MAX, &o->horizon))
        return tbbt_cli_usage("--horizon: expected a count of operations >= 1");
    return 0;
}

static int output(const struct main_opts *m, const struct tbbt_compare *c)
{
    char err[512];

    if (!m->common.quiet) {
        tbbt_compare_print(c, stdout);
        if (tbbt_cli_flush_stdout("stdout") != TBBT_EXIT_OK)
            return TBBT_EXIT_FAIL;
    }
    if (m->json) {
        char *doc = tbbt_compare_json(c);
        int rc = tbbt_json_write_file(m->json, doc);
        g_free(doc);
        if (rc < 0)
            return tbbt_cli_fail("cannot write '%s': %s", m->json, tbbt_strerror(rc));
    }
    if (m->plot && tbbt_compare_plot(c, m->plot, err, sizeof(err)) < 0)
        return tbbt_cli_fail("%s", err);
    return TBBT_EXIT_OK;
}

/* The comparison; the exit code. */
static int run(void)
{
    const struct main_opts *m = &opts;
    struct tbbt_compare_opts o;
    char err[1024] = "";
    int rc;

    if (!m->args || g_strv_length(m->args) != 2)
        return tbbt_cli_usage("expected two traces: ORIGINAL.tbbt REPLAY.tbbt");
    if ((rc = build_opts(m, &o)))
        return rc;
    if (m->plot && !tbbt_gnuplot_available())
        return tbbt_cli_fail("--plot needs gnuplot, which is not on PATH");
    struct tbbt_compare *c = tbbt_compare_new(&o);
    if (tbbt_compare_run(c, err, sizeof(err)) < 0) {
        tbbt_log(TBBT_LOG_ERROR, "%s", err);
        rc = TBBT_EXIT_FAIL;
    } else {
        rc = output(m, c);
    }
    tbbt_compare_free(c);
    return rc;
}

int main(int argc, char **argv)
{
    return tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .entries = entries, .locale = true, .common = &opts.common,
        .trace_major = TBBT_TRACE_MAJOR, .trace_minor = TBBT_TRACE_MINOR,
        .summary = "Compare an original TBBT trace with the trace of its replay, object by "
                   "object:\noperations matched, identical, missing and extra; argument, "
                   "status and reply\ndifferences; latency, lag and rates.",
        .description = "ORIGINAL.tbbt and REPLAY.tbbt are binary TBBT traces (files: each "
                       "is read more\nthan once), each with its hierarchy map beside it.\n"
                       "Exit status: 0 compared (differences are results), 1 an input "
                       "cannot be read,\n2 usage error.  Algorithm and JSON keys: "
                       "docs/tbbt-compare.md.\n" }, argc, argv, run);
}
