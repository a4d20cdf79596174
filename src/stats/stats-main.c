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
#include "tbbt-version.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct main_opts {
    gboolean json, version;
    char *plot, *interval, *period, *top, *top_percent, *sim_ops, *windows;
    char *latency, *latency_from;
    char **args;
};

static int usage_error(const char *msg)
{
    return tbbt_cli_usage_error("tbbt-stats", msg);
}

static bool parse_pos_double(const char *s, double lo, double hi, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x) || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

/* Fills so from the option strings; 0, or an exit code after a message. */
static int build_opts(const struct main_opts *m, struct tbbt_stats_opts *so)
{
    char err[256], msg[320];
    uint64_t v;
    tbbt_stats_opts_init(so);
    if (m->interval) {
        if (!parse_pos_double(m->interval, 1e-6, 1e9, &so->interval_s))
            return usage_error("--interval: expected seconds > 0");
        so->interval_auto = false;
    }
    if (m->period && !parse_pos_double(m->period, 1e-6, 1e12, &so->period_s))
        return usage_error("--period: expected seconds > 0");
    if (m->top) {
        if (!tbbt_cli_parse_u64(m->top, 1, UINT32_MAX, &v))
            return usage_error("--top: expected a count >= 1");
        so->top_k = (uint32_t)v;
    }
    if (m->top_percent && (!parse_pos_double(m->top_percent, 1e-9, 100, &so->top_percent)))
        return usage_error("--top-percent: expected 0 < P <= 100");
    if (m->sim_ops && !tbbt_cli_parse_u64(m->sim_ops, 0, UINT64_MAX, &so->sim_ops))
        return usage_error("--sim-ops: expected a count (0: no simulation)");
    if (m->windows && tbbt_stats_parse_windows(so, m->windows, err, sizeof(err)) < 0) {
        g_snprintf(msg, sizeof(msg), "--windows: %s", err);
        return usage_error(msg);
    }
    if (m->latency_from &&
        tbbt_stats_lat_from_json(&so->lat, m->latency_from, err, sizeof(err)) < 0)
        return tbbt_cli_fail("--latency-from %s", err);
    if (m->latency && tbbt_stats_lat_parse(&so->lat, m->latency, err, sizeof(err)) < 0) {
        g_snprintf(msg, sizeof(msg), "--latency: %s", err);
        return usage_error(msg);
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

/* --version, or the analysis; the exit code. */
static int run(const struct main_opts *m)
{
    struct tbbt_stats_opts so;
    char err[320];
    int rc;

    if (m->version)
        return tbbt_cli_print_version("tbbt-stats", TBBT_TRACE_MAJOR, TBBT_TRACE_MINOR);
    if (!m->args || g_strv_length(m->args) != 1)
        return usage_error("expected exactly one TRACE argument");
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

static void free_opts(struct main_opts *m)
{
    char *s[] = {m->plot, m->interval, m->period, m->top, m->top_percent, m->sim_ops,
                 m->windows, m->latency, m->latency_from};
    for (size_t i = 0; i < G_N_ELEMENTS(s); i++)
        g_free(s[i]);
    g_strfreev(m->args);
}

int main(int argc, char **argv)
{
    struct main_opts m = {0};
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &m.json, "Print JSON instead of text", NULL},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &m.plot,
         "Write figures (.dat, .gp, .png, .svg) into DIR (needs gnuplot)", "DIR"},
        {"interval", 0, 0, G_OPTION_ARG_STRING, &m.interval,
         "Rate interval in seconds (default: 1, or chosen from the trace span)", "SECONDS"},
        {"period", 0, 0, G_OPTION_ARG_STRING, &m.period,
         "Temperature period in seconds (default: a tenth of the span)", "SECONDS"},
        {"top", 0, 0, G_OPTION_ARG_STRING, &m.top, "Hottest set: top K files (default 10)",
         "K"},
        {"top-percent", 0, 0, G_OPTION_ARG_STRING, &m.top_percent,
         "Hottest set: top P% of a period's files (default 10)", "P"},
        {"sim-ops", 0, 0, G_OPTION_ARG_STRING, &m.sim_ops,
         "Simulate the first N NFS requests (default 1000000; 0: off)", "N"},
        {"windows", 0, 0, G_OPTION_ARG_STRING, &m.windows,
         "Lookahead windows to simulate (default 1,2,4,...,4096)", "LIST"},
        {"latency", 0, 0, G_OPTION_ARG_STRING, &m.latency,
         "Simulated latencies, e.g. getattr=200,read=500,default=1000", "NAME=US,..."},
        {"latency-from", 0, 0, G_OPTION_ARG_FILENAME, &m.latency_from,
         "Take mean latencies from a tbbt-play --report-json FILE", "FILE"},
        {"version", 0, 0, G_OPTION_ARG_NONE, &m.version, "Print versions and exit", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &m.args, NULL, "TRACE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    int rc;

    setlocale(LC_CTYPE, "");
    tbbt_log_init("tbbt-stats", TBBT_LOG_WARN);
    rc = tbbt_cli_parse(&(struct tbbt_cli_spec){
        .prog = "tbbt-stats", .entries = entries,
        .summary = "Analyse a TBBT trace: operation mix, rate, clients, sequentiality, file "
                   "temperature,\nsharing, and the concurrency a replay could reach per "
                   "lookahead window.",
        .description = "TRACE is a binary TBBT trace (\"-\" = stdin).\n"
                       "--latency-from is applied first, then --latency.\n"
                       "Exit status: 0 success, 1 bad input or failed plot, 2 usage error.\n"
                       "Definitions and JSON keys: docs/tbbt-stats.md.\n" }, &argc, &argv);
    if (rc == 0)
        rc = run(&m);
    free_opts(&m);
    return rc;
}
