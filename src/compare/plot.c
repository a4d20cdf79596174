/* SPDX-License-Identifier: MIT */
/*
 * tbbt-compare --plot DIR: two figures through util/gnuplot.h (NAME.dat, NAME.gp,
 * NAME.png, NAME.svg):
 *   lag       per second of the replay, the mean and the largest lag (us) of the pairs
 *             whose replay call fell in it: a replay that falls behind climbs;
 *   latency   per procedure, mean and p99 latency of the matched pairs, original beside
 *             replay (bars, log scale).
 */
#include "compare/compare-int.h"

#include <string.h>

#include "util/gnuplot.h"

static int fig_lag(const struct tbbt_compare *c, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# second_of_replay mean_lag_us max_lag_us pairs\n");
    bool any = false;

    for (guint i = 0; i < c->t.lag_series->len; i++) {
        const struct tbbt__cmp_lagsec *s =
            &g_array_index(c->t.lag_series, struct tbbt__cmp_lagsec, i);
        if (!s->n)
            continue;
        g_string_append_printf(d, "%u %.3f %.3f %" G_GUINT64_FORMAT "\n", i,
                               s->sum / (double)s->n / 1000.0, (double)s->max / 1000.0, s->n);
        any = true;
    }
    char *setup = g_strdup_printf("set title 'Lag of the replay (speed %g): replay call - "
                                  "original call / speed'\nset xlabel 'second of the replay'\n"
                                  "set ylabel 'lag (ms)'\nset grid",
                                  c->o.speed);
    int rc = tbbt_gnuplot_figure(dir, "tbbt-compare", "lag", d, setup,
                                 "plot 'lag.dat' using 1:($2/1000) with linespoints pt 7 "
                                 "ps 0.5 title 'mean', '' using 1:($3/1000) with lines "
                                 "title 'max'",
                                 any, err, errlen);
    g_free(setup);
    g_string_free(d, TRUE);
    return rc;
}

static int fig_latency(const struct tbbt_compare *c, const char *dir, char *err, size_t errlen)
{
    GString *d = g_string_new("# procedure orig_mean_us replay_mean_us orig_p99_us "
                              "replay_p99_us pairs\n");
    GPtrArray *k = tbbt__cmp_lat_keys(&c->t);

    for (guint i = 0; i < k->len; i++) {
        const struct tbbt__cmp_lat *l = g_hash_table_lookup(c->t.lat, k->pdata[i]);
        g_string_append_printf(d, "%s %.3f %.3f %.3f %.3f %" G_GUINT64_FORMAT "\n",
                               tbbt__cmp_lat_label(k->pdata[i]),
                               tbbt_hist_mean(&l->a) / 1000.0, tbbt_hist_mean(&l->b) / 1000.0,
                               (double)tbbt_hist_quantile(&l->a, 0.99) / 1000.0,
                               (double)tbbt_hist_quantile(&l->b, 0.99) / 1000.0,
                               MAX(l->a.count, l->b.count));
    }
    int rc = tbbt_gnuplot_figure(
        dir, "tbbt-compare", "latency", d,
        "set title 'Latency per procedure: original vs replay (matched pairs)'\n"
        "set ylabel 'latency (us)'\nset logscale y\nset style data histograms\n"
        "set style histogram clustered\nset style fill solid 0.6\nset xtics rotate by -45\n"
        "set grid ytics",
        "plot 'latency.dat' using 2:xtic(1) title 'original mean', '' using 3 title "
        "'replay mean', '' using 4 title 'original p99', '' using 5 title 'replay p99'",
        k->len > 0, err, errlen);
    g_ptr_array_free(k, TRUE);
    g_string_free(d, TRUE);
    return rc;
}

int tbbt_compare_plot(const struct tbbt_compare *c, const char *dir, char *err, size_t errlen)
{
    int rc = tbbt_gnuplot_mkdir(dir, err, errlen);

    if (rc == 0)
        rc = fig_lag(c, dir, err, errlen);
    if (rc == 0)
        rc = fig_latency(c, dir, err, errlen);
    return rc;
}
