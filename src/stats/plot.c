/* SPDX-License-Identifier: MIT */
/*
 * tbbt-stats --plot DIR: one .dat file (whitespace-separated columns, '#' header) and one
 * gnuplot script per figure, and the script run by gnuplot (found on PATH) inside DIR to
 * draw NAME.png and NAME.svg with the plain png and svg terminals.  Figures: rate (ops/s
 * per interval), mix (share per procedure), rank-temperature (iPcress thesis Figure 1,
 * log-log), runs (run-length histogram), hot-set (overlap and persistence per period
 * pair), concurrency (TBBT paper Figure 6: ops/s per window and policy).  A figure
 * without data still gets its files, with a "no data" label.  Files and the gnuplot run:
 * util/gnuplot.h.
 */
#include "stats/stats.h"

#include <math.h>
#include <string.h>

#include "util/gnuplot.h"
#include "util/util.h"

bool tbbt_stats_have_gnuplot(void)
{
    return tbbt_gnuplot_available();
}

/* One figure of tbbt-stats (util/gnuplot.h). */
static int figure(const char *dir, const char *name, const GString *dat, const char *setup,
                  const char *plot_cmd, bool has_data, char *err, size_t errlen)
{
    return tbbt_gnuplot_figure(dir, "tbbt-stats", name, dat, setup, plot_cmd, has_data, err,
                               errlen);
}

static int fig_rate(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# seconds_since_start ops_per_second\n");
    for (guint i = 0; i < st->bins->len; i++)
        g_string_append_printf(d, "%.6f %.6f\n", i * st->interval_s,
                               (double)g_array_index(st->bins, uint64_t, i) / st->interval_s);
    char *setup = g_strdup_printf("set title 'Request rate (interval %g s)'\n"
                                  "set xlabel 'time since start (s)'\nset ylabel 'ops/s'\n"
                                  "set grid\nset yrange [0:*]",
                                  st->interval_s);
    int rc = figure(dir, "rate", d, setup,
                    "plot 'rate.dat' using 1:2 with steps lw 2 title 'ops/s'",
                    st->bins->len > 0, err, errlen);
    g_free(setup);
    g_string_free(d, TRUE);
    return rc;
}

static int fig_mix(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# procedure count share\n");
    bool any = false;
    for (int p = 0; p < TBBT_STATS_NPROG; p++)
        for (int i = 0; i < TBBT_STATS_NPROC; i++) {
            if (!st->mix[p][i])
                continue;
            char *l = tbbt_stats_proc_label(p, i);
            g_string_append_printf(d, "%s %" G_GUINT64_FORMAT " %.6f\n", l, st->mix[p][i],
                                   (double)st->mix[p][i] / (double)st->records);
            g_free(l);
            any = true;
        }
    int rc = figure(dir, "mix", d,
                    "set title 'Operation mix'\nset ylabel 'share of records'\n"
                    "set style fill solid 0.6\nset boxwidth 0.7\nset xtics rotate by -45\n"
                    "set yrange [0:*]\nset grid ytics",
                    "plot 'mix.dat' using 0:3:xtic(1) with boxes notitle", any, err, errlen);
    g_string_free(d, TRUE);
    return rc;
}

static int fig_temp(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# rank fh size bytes temperature\n");
    for (guint i = 0; i < st->temps->len; i++) {
        const struct tbbt_stats_temp *t = &g_array_index(st->temps, struct tbbt_stats_temp, i);
        g_string_append_printf(d, "%u %u %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %.9g\n",
                               i + 1, t->fh, t->size, t->bytes, t->temp);
    }
    int rc = figure(dir, "rank-temperature", d,
                    "set title 'File temperature by rank (bytes transferred / file size)'\n"
                    "set xlabel 'file rank'\nset ylabel 'temperature'\n"
                    "set logscale xy\nset grid",
                    "plot 'rank-temperature.dat' using 1:5 with linespoints pt 7 ps 0.5 "
                    "title 'files'",
                    st->temps->len > 0, err, errlen);
    g_string_free(d, TRUE);
    return rc;
}

static int fig_runs(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# run_length_min read_runs write_runs read_accesses "
                              "write_accesses\n");
    const struct tbbt_stats_seq *r = &st->seq_read, *w = &st->seq_write;
    bool any = false;
    for (unsigned b = 0; b < TBBT_STATS_BUCKETS; b++) {
        if (!r->ops_hist[b] && !w->ops_hist[b])
            continue;
        g_string_append_printf(d, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                                  " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                                  " %" G_GUINT64_FORMAT "\n",
                               (uint64_t)1 << b, r->ops_hist[b], w->ops_hist[b],
                               r->ops_hist_acc[b], w->ops_hist_acc[b]);
        any = true;
    }
    int rc = figure(dir, "runs", d,
                    "set title 'Sequential run lengths (accesses per run, log2 buckets)'\n"
                    "set xlabel 'run length >= (accesses)'\nset ylabel 'accesses in runs'\n"
                    "set style data histograms\nset style histogram clustered\n"
                    "set style fill solid 0.6\nset yrange [0:*]\nset grid ytics",
                    "plot 'runs.dat' using 4:xtic(1) title 'read', '' using 5 title 'write'",
                    any, err, errlen);
    g_string_free(d, TRUE);
    return rc;
}

static int fig_hot(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# next_period overlap_top_k overlap_top_percent "
                              "persistence_top_k persistence_top_percent\n");
    for (guint i = 0; i < st->hot_pairs->len; i++) {
        const struct tbbt_stats_hot_pair *p =
            &g_array_index(st->hot_pairs, struct tbbt_stats_hot_pair, i);
        g_string_append_printf(d, "%" G_GUINT64_FORMAT " %.6f %.6f %.6f %.6f\n", p->next,
                               p->overlap_k, p->overlap_p, p->persist_k, p->persist_p);
    }
    char *setup = g_strdup_printf("set title 'Hottest-set stability (period %g s)'\n"
                                  "set xlabel 'period'\nset ylabel 'fraction'\n"
                                  "set yrange [0:1.05]\nset grid\nset key bottom right",
                                  st->o.period_s);
    char *cmd = g_strdup_printf(
        "plot 'hot-set.dat' using 1:2 with linespoints title 'overlap top %u', "
        "'' using 1:3 with linespoints title 'overlap top %g%%', "
        "'' using 1:4 with linespoints title 'persistence top %u', "
        "'' using 1:5 with linespoints title 'persistence top %g%%'",
        st->o.top_k, st->o.top_percent, st->o.top_k, st->o.top_percent);
    int rc = figure(dir, "hot-set", d, setup, cmd, st->hot_pairs->len > 0, err, errlen);
    g_free(cmd);
    g_free(setup);
    g_string_free(d, TRUE);
    return rc;
}

static void put_num(GString *d, double v)
{
    if (isfinite(v))
        g_string_append_printf(d, " %.6f", v);
    else
        g_string_append(d, " NaN");
}

static int fig_sim(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# window conservative_ops fsdep_ops\n");
    bool any = false;
    for (unsigned w = 0; st->o.sim_ops && w < st->o.n_windows; w++) {
        double c = tbbt_concsim_throughput(st->sims[0][w]);
        double f = tbbt_concsim_throughput(st->sims[1][w]);
        g_string_append_printf(d, "%u", st->o.windows[w]);
        put_num(d, c);
        put_num(d, f);
        g_string_append_c(d, '\n');
        any |= (isfinite(c) && c > 0) || (isfinite(f) && f > 0);
    }
    int rc = figure(dir, "concurrency", d,
                    "set title 'Throughput vs lookahead window (simulated)'\n"
                    "set xlabel 'lookahead window (requests)'\nset ylabel 'ops/s'\n"
                    "set logscale xy\nset grid\nset key top left",
                    "plot 'concurrency.dat' using 1:2 with linespoints title 'conservative', "
                    "'' using 1:3 with linespoints title 'fsdep'",
                    any, err, errlen);
    g_string_free(d, TRUE);
    return rc;
}

int tbbt_stats_plot(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen)
{
    int rc0 = tbbt_gnuplot_mkdir(dir, err, errlen);
    if (rc0 < 0)
        return rc0;
    int (*figs[])(const struct tbbt_stats *, const char *, char *, size_t) = {
        fig_rate, fig_mix, fig_temp, fig_runs, fig_hot, fig_sim,
    };
    for (size_t i = 0; i < G_N_ELEMENTS(figs); i++) {
        int rc = figs[i](st, dir, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}
