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
#include "tbbt-version.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct main_opts {
    char *map_a, *map_b, *root_b, *speed, *json, *plot, *show, *horizon;
    gboolean quiet, version;
    char **args;
};

static int usage_error(const char *msg)
{
    return tbbt_cli_usage_error("tbbt-compare", msg);
}

/* Fills o from the option strings; 0, or an exit code after a message. */
static int build_opts(const struct main_opts *m, struct tbbt_compare_opts *o)
{
    uint64_t v;

    tbbt_compare_opts_init(o);
    for (int i = 0; i < 2; i++)
        if (strcmp(m->args[i], "-") == 0)
            return usage_error("a trace cannot be standard input ('-'): each trace is read "
                               "more than once, give a file");
    o->trace_a = m->args[0];
    o->trace_b = m->args[1];
    o->map_a = m->map_a;
    o->map_b = m->map_b;
    o->root_b = m->root_b;
    if (m->speed) {
        char *end;
        errno = 0;
        o->speed = strtod(m->speed, &end);
        if (errno || end == m->speed || *end || !isfinite(o->speed) || o->speed <= 0 ||
            o->speed > 1e6)
            return usage_error("--speed: expected a factor > 0");
    }
    if (m->show) {
        if (!tbbt_cli_parse_u64(m->show, 0, 1000, &v))
            return usage_error("--show: expected a count 0..1000");
        o->show = (uint32_t)v;
    }
    if (m->horizon && !tbbt_cli_parse_u64(m->horizon, 1, UINT32_MAX, &o->horizon))
        return usage_error("--horizon: expected a count of operations >= 1");
    return 0;
}

static int output(const struct main_opts *m, const struct tbbt_compare *c)
{
    char err[512];

    if (!m->quiet) {
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

/* --version, or the comparison; the exit code. */
static int run(const struct main_opts *m)
{
    struct tbbt_compare_opts o;
    char err[1024] = "";
    int rc;

    if (m->version)
        return tbbt_cli_print_version("tbbt-compare", TBBT_TRACE_MAJOR, TBBT_TRACE_MINOR);
    if (!m->args || g_strv_length(m->args) != 2)
        return usage_error("expected two traces: ORIGINAL.tbbt REPLAY.tbbt");
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

static void free_opts(struct main_opts *m)
{
    char *s[] = {m->map_a, m->map_b, m->root_b, m->speed, m->json, m->plot, m->show, m->horizon};
    for (size_t i = 0; i < G_N_ELEMENTS(s); i++)
        g_free(s[i]);
    g_strfreev(m->args);
}

int main(int argc, char **argv)
{
    struct main_opts m = {0};
    GOptionEntry entries[] = {
        {"map-a", 0, 0, G_OPTION_ARG_FILENAME, &m.map_a,
         "Hierarchy map of the original (default ORIGINAL.map)", "MAP"},
        {"map-b", 0, 0, G_OPTION_ARG_FILENAME, &m.map_b,
         "Hierarchy map of the replay (default REPLAY.map)", "MAP"},
        {"root-b", 0, 0, G_OPTION_ARG_FILENAME, &m.root_b,
         "Image root in the replay's map, e.g. img/tbbt-clone-0 (default: found)", "PATH"},
        {"speed", 0, 0, G_OPTION_ARG_STRING, &m.speed,
         "The replay's --speed in timestamp timing (default 1)", "X"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &m.json, "Write the results as JSON to FILE",
         "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &m.plot,
         "Write figures (.dat, .gp, .png, .svg) into DIR (needs gnuplot)", "DIR"},
        {"show", 0, 0, G_OPTION_ARG_STRING, &m.show,
         "Examples printed per difference (default 2; 0: none)", "N"},
        {"horizon", 0, 0, G_OPTION_ARG_STRING, &m.horizon,
         "How far (operations) the replay may run ahead of or behind the original "
         "(default 32768)", "N"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &m.quiet, "No text summary", NULL},
        {"version", 0, 0, G_OPTION_ARG_NONE, &m.version, "Print versions and exit", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &m.args, NULL,
         "ORIGINAL.tbbt REPLAY.tbbt"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    int rc;

    setlocale(LC_CTYPE, "");
    tbbt_log_init("tbbt-compare", TBBT_LOG_WARN);
    rc = tbbt_cli_parse(&(struct tbbt_cli_spec){
        .prog = "tbbt-compare", .entries = entries,
        .summary = "Compare an original TBBT trace with the trace of its replay, object by "
                   "object:\noperations matched, identical, missing and extra; argument, "
                   "status and reply\ndifferences; latency, lag and rates.",
        .description = "ORIGINAL.tbbt and REPLAY.tbbt are binary TBBT traces (files: each "
                       "is read more\nthan once), each with its hierarchy map beside it.\n"
                       "Exit status: 0 compared (differences are results), 1 an input "
                       "cannot be read,\n2 usage error.  Algorithm and JSON keys: "
                       "docs/tbbt-compare.md.\n" }, &argc, &argv);
    if (rc == 0)
        rc = run(&m);
    free_opts(&m);
    return rc;
}
