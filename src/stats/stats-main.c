/* SPDX-License-Identifier: MIT */
/*
 * tbbt-stats: analyses a TBBT trace (operation mix, rate, clients, sequentiality, file
 * temperature, sharing, and the lookahead-window concurrency simulation of the TBBT
 * paper's Figure 6) and prints text, JSON (--json) and gnuplot figures (--plot DIR).
 * The command line is in docs/tbbt-stats.md.  A thin shell over src/stats/.
 */
#include "stats/stats.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/util.h"

#include <string.h>

#define PROG "tbbt-stats"

/* The option values (stats-options.def), owned here until tbbt_cli_main() frees them. */
static struct main_opts {
    gboolean json;
    char *plot, *interval, *period, *top, *top_percent, *sim_ops, *windows;
    char *latency, *latency_from;
    struct tbbt_cli_common common;
    char **args;
} opts;

static const GOptionEntry entries[] = {
#include "stats/stats-options.def"
    TBBT_CLI_END,
};

/* Fills so from the option strings; 0, or an exit code after a message. */
static int build_opts(const struct main_opts *m, struct tbbt_stats_opts *so)
{
    char err[256], msg[320];
    uint64_t v;
    tbbt_stats_opts_init(so);
    if (m->interval) {
        if (!tbbt_cli_parse_double(m->interval, 1e-6, 1e9, &so->interval_s))
            return tbbt_cli_usage("--interval: expected seconds > 0");
        so->interval_auto = false;
    }
    if (m->period && !tbbt_cli_parse_double(m->period, 1e-6, 1e12, &so->period_s))
        return tbbt_cli_usage("--period: expected seconds > 0");
    if (m->top) {
        if (!tbbt_cli_parse_u64(m->top, 1, UINT32_MAX, &v))
            return tbbt_cli_usage("--top: expected a count >= 1");
        so->top_k = (uint32_t)v;
    }
    if (m->top_percent && (!tbbt_cli_parse_double(m->top_percent, 1e-9, 100, &so->top_percent)))
        return tbbt_cli_usage("--top-percent: expected 0 < P <= 100");
    if (m->sim_ops && !tbbt_cli_parse_u64(m->sim_ops, 0, UINT64_MAX, &so->sim_ops))
        return tbbt_cli_usage("--sim-ops: expected a count (0: no simulation)");
    if (m->windows && tbbt_stats_parse_windows(so, m->windows, err, sizeof(err)) < 0) {
        g_snprintf(msg, sizeof(msg), "--windows: %s", err);
        return tbbt_cli_usage(msg);
    }
    if (m->latency_from &&
        tbbt_stats_lat_from_json(&so->lat, m->latency_from, err, sizeof(err)) < 0)
        return tbbt_cli_fail("--latency-from %s", err);
    if (m->latency && tbbt_stats_lat_parse(&so->lat, m->latency, err, sizeof(err)) < 0) {
        g_snprintf(msg, sizeof(msg), "--latency: %s", err);
        return tbbt_cli_usage(msg);
    }
    return 0;
}

/* Picks the automatic interval and period from a first pass over a regular file. */
static int auto_span(const struct main_opts *m, const char *path, struct tbbt_stats_opts *so)
{
    if ((m->interval && m->period) || strcmp(path, "-") == 0)
        return 0;
    uint64_t a, b;
    char err[320];
    if (tbbt_stats_trace_span(path, &a, &b, err, sizeof(err)) < 0)
        return tbbt_cli_fail("%s", err);
    double span = b > a ? (double)(b - a) / 1e9 : 0;
    if (!m->interval)
        so->interval_s = tbbt_stats_auto_interval(span);
    if (!m->period)
        so->period_s = tbbt_stats_auto_period(span);
    return 0;
}

static int output(const struct main_opts *m, const struct tbbt_stats *st, const char *path)
{
    char err[512];
    if (m->json) {
        char *doc = tbbt_stats_json(st, path);
        fputs(doc, stdout);
        fputc('\n', stdout);
        g_free(doc);
    } else {
        tbbt_stats_print_text(st, path, stdout);
    }
    if (tbbt_cli_flush_stdout("stdout") != TBBT_EXIT_OK)
        return TBBT_EXIT_FAIL;
    if (m->plot && tbbt_stats_plot(st, m->plot, err, sizeof(err)) < 0)
        return tbbt_cli_fail("%s", err);
    return TBBT_EXIT_OK;
}

/* The analysis; the exit code. */
static int run(void)
{
    const struct main_opts *m = &opts;
    struct tbbt_stats_opts so;
    char err[320];
    int rc;

    if (!m->args || g_strv_length(m->args) != 1)
        return tbbt_cli_usage("expected exactly one TRACE argument");
    if ((rc = build_opts(m, &so)))
        return rc;
    const char *path = m->args[0];
    if (m->plot && !tbbt_stats_have_gnuplot())
        return tbbt_cli_fail("--plot needs gnuplot, which is not on PATH");
    if ((rc = auto_span(m, path, &so)))
        return rc;
    struct tbbt_stats *st = tbbt_stats_new(&so);
    if (tbbt_stats_read_trace(st, path, err, sizeof(err)) < 0) {
        tbbt_log(TBBT_LOG_ERROR, "%s", err);
        tbbt_stats_free(st);
        return TBBT_EXIT_FAIL;
    }
    tbbt_stats_finish(st);
    rc = output(m, st, path);
    tbbt_stats_free(st);
    return rc;
}

int main(int argc, char **argv)
{
    return tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .entries = entries, .locale = true, .common = &opts.common,
        .trace_major = TBBT_TRACE_MAJOR, .trace_minor = TBBT_TRACE_MINOR,
        .summary = "Analyse a TBBT trace: operation mix, rate, clients, sequentiality, file "
                   "temperature,\nsharing, and the concurrency a replay could reach per "
                   "lookahead window.",
        .description = "TRACE is a binary TBBT trace (\"-\" = stdin).\n"
                       "--latency-from is applied first, then --latency.\n"
                       "Exit status: 0 success, 1 bad input or failed plot, 2 usage error.\n"
                       "Definitions and JSON keys: docs/tbbt-stats.md.\n" }, argc, argv, run);
}
