/* SPDX-License-Identifier: MIT */
/*
 * tbbt-stats output: the readable text sections and the JSON document.  The JSON keys
 * are a stable interface, listed in docs/tbbt-stats.md "JSON"; add keys, never rename.
 * Those that are a counter's value come from the table report-keys.def.
 */
#include "stats/stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/json-fields.h"
#include "tbbt-version.h"

#define TEXT_TOP 10         /* hottest files listed in the text */
#define JSON_TOP 20         /* ... in the JSON */
#define CURVE_POINTS 200    /* rank-temperature points in the JSON */

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

/* ---- shared helpers ---------------------------------------------------------------- */

struct mix_row {
    int prog, proc;
    uint64_t count;
};

static int mix_cmp(const void *a, const void *b)
{
    const struct mix_row *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->prog != y->prog)
        return x->prog < y->prog ? -1 : 1;
    return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* Procedures seen, most frequent first (given: g_free()). */
static struct mix_row *mix_rows(const struct tbbt_stats *st, size_t *n)
{
    struct mix_row *r = g_new(struct mix_row, TBBT_STATS_NPROG * TBBT_STATS_NPROC);
    size_t k = 0;
    for (int p = 0; p < TBBT_STATS_NPROG; p++)
        for (int i = 0; i < TBBT_STATS_NPROC; i++)
            if (st->mix[p][i])
                r[k++] = (struct mix_row){p, i, st->mix[p][i]};
    qsort(r, k, sizeof(*r), mix_cmp);
    *n = k;
    return r;
}

struct rate_sum {
    double mean, peak;
    guint peak_at;
};

static struct rate_sum rate_summary(const struct tbbt_stats *st)
{
    struct rate_sum s = {0};
    uint64_t total = 0;
    for (guint i = 0; i < st->bins->len; i++) {
        uint64_t v = g_array_index(st->bins, uint64_t, i);
        total += v;
        if ((double)v / st->interval_s > s.peak) {
            s.peak = (double)v / st->interval_s;
            s.peak_at = i;
        }
    }
    s.mean = ratio((double)total, st->bins->len * st->interval_s);
    return s;
}

static double span_s(const struct tbbt_stats *st)
{
    return st->t_last > st->t_first ? (double)(st->t_last - st->t_first) / 1e9 : 0;
}

static double median_temp(const struct tbbt_stats *st)
{
    guint n = st->temps->len;
    if (n == 0)
        return NAN;
    const struct tbbt_stats_temp *t = (const struct tbbt_stats_temp *)(void *)st->temps->data;
    return n % 2 ? t[n / 2].temp : (t[n / 2 - 1].temp + t[n / 2].temp) / 2;
}

struct hot_means {
    double ok, op, pk, pp;
};

static struct hot_means hot_means(const struct tbbt_stats *st)
{
    struct hot_means m = {0};
    guint n = st->hot_pairs->len;
    for (guint i = 0; i < n; i++) {
        const struct tbbt_stats_hot_pair *p =
            &g_array_index(st->hot_pairs, struct tbbt_stats_hot_pair, i);
        m.ok += p->overlap_k;
        m.op += p->overlap_p;
        m.pk += p->persist_k;
        m.pp += p->persist_p;
    }
    m.ok = ratio(m.ok, n);
    m.op = ratio(m.op, n);
    m.pk = ratio(m.pk, n);
    m.pp = ratio(m.pp, n);
    return m;
}

/* ---- text ----------------------------------------------------------------------------- */

static void text_head(const struct tbbt_stats *st, const char *trace, FILE *out)
{
    fprintf(out, "trace    %s\n", trace);
    fprintf(out, "records  %" PRIu64 " (nfs %" PRIu64 ", mount %" PRIu64 ", other %" PRIu64
                 ", without call %" PRIu64 ")\n",
            st->records, st->nfs_ops, st->mount_ops, st->other_ops, st->no_call);
    fprintf(out, "span     %.3f s, files (handles) %" PRIu64 ", clients %u\n", span_s(st),
            st->n_files, st->clients->len);
}

static void text_mix(const struct tbbt_stats *st, FILE *out)
{
    size_t n;
    struct mix_row *r = mix_rows(st, &n);
    fprintf(out, "\nOperation mix\n  %-16s %12s %8s\n", "procedure", "count", "share");
    for (size_t i = 0; i < n; i++) {
        char *l = tbbt_stats_proc_label(r[i].prog, r[i].proc);
        fprintf(out, "  %-16s %12" PRIu64 " %7.2f%%\n", l, r[i].count,
                100.0 * ratio((double)r[i].count, (double)st->records));
        g_free(l);
    }
    if (st->mix_other)
        fprintf(out, "  %-16s %12" PRIu64 "\n", "other", st->mix_other);
    g_free(r);
}

static void text_rate(const struct tbbt_stats *st, FILE *out)
{
    struct rate_sum s = rate_summary(st);
    fprintf(out, "\nRate (interval %g s)\n", st->interval_s);
    fprintf(out, "  intervals %u, mean %.2f ops/s, peak %.2f ops/s (interval %u, at %.3f s)\n",
            st->bins->len, s.mean, s.peak, s.peak_at, s.peak_at * st->interval_s);
    if (st->rate_out_of_range)
        fprintf(out, "  records too far from the start for an interval: %" PRIu64 "\n",
                st->rate_out_of_range);
}

static void text_clients(const struct tbbt_stats *st, FILE *out)
{
    fprintf(out, "\nClients\n  %-40s %10s %10s %10s %14s %14s\n", "client", "ops", "reads",
            "writes", "bytes read", "bytes written");
    for (guint i = 0; i < st->clients->len; i++) {
        const struct tbbt_stats_client *c =
            &g_array_index(st->clients, struct tbbt_stats_client, i);
        fprintf(out, "  %-40s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %14" PRIu64 " %14" PRIu64
                     "\n",
                c->addr, c->ops, c->reads, c->writes, c->bytes_read, c->bytes_written);
    }
}

static void text_seq_row(const char *name, const struct tbbt_stats_seq *q, FILE *out)
{
    fprintf(out, "  %-6s %10" PRIu64 " %10.4f %10.4f %8" PRIu64 " %9.2f %12.0f %9" PRIu64 "\n",
            name, q->accesses, ratio((double)q->sequential, (double)q->accesses),
            ratio((double)(q->sequential + q->runs_from_zero), (double)q->accesses), q->runs,
            ratio((double)q->accesses, (double)q->runs),
            ratio((double)q->bytes, (double)q->runs), q->max_run_ops);
}

static void text_seq(const struct tbbt_stats *st, FILE *out)
{
    const struct tbbt_stats_seq *r = &st->seq_read, *w = &st->seq_write;
    fprintf(out, "\nSequentiality\n  %-6s %10s %10s %10s %8s %9s %12s %9s\n", "", "accesses",
            "seq.share", "+starts", "runs", "mean ops", "mean bytes", "max ops");
    text_seq_row("read", r, out);
    text_seq_row("write", w, out);
    fprintf(out, "  run length (accesses)   read runs  write runs\n");
    for (unsigned b = 0; b < TBBT_STATS_BUCKETS; b++) {
        if (!r->ops_hist[b] && !w->ops_hist[b])
            continue;
        char range[48];
        uint64_t lo = (uint64_t)1 << b, hi = b == 63 ? UINT64_MAX : ((uint64_t)2 << b) - 1;
        if (lo == hi)
            g_snprintf(range, sizeof(range), "%" PRIu64, lo);
        else
            g_snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, lo, hi);
        fprintf(out, "  %-22s %10" PRIu64 " %11" PRIu64 "\n", range, r->ops_hist[b],
                w->ops_hist[b]);
    }
}

static void text_temp(const struct tbbt_stats *st, FILE *out)
{
    guint n = st->temps->len;
    fprintf(out, "\nTemperature (bytes transferred / file size)\n");
    fprintf(out, "  files %u (and %" PRIu64 " without a known size), median %.4g, max %.4g\n", n,
            st->temp_unsized, median_temp(st),
            n ? g_array_index(st->temps, struct tbbt_stats_temp, 0).temp : NAN);
    if (n)
        fprintf(out, "  %6s %8s %12s %14s %14s %12s\n", "rank", "fh", "id", "size", "bytes",
                "temperature");
    for (guint i = 0; i < n && i < TEXT_TOP; i++) {
        const struct tbbt_stats_temp *t = &g_array_index(st->temps, struct tbbt_stats_temp, i);
        fprintf(out, "  %6u %8" PRIu32 " %12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %12.4f\n",
                i + 1, t->fh, t->id, t->size, t->bytes, t->temp);
    }
    struct hot_means m = hot_means(st);
    fprintf(out, "  hottest set (period %g s, top %" PRIu32 " and top %g%%): %" PRIu64
                 " non-empty periods, %u pairs\n",
            st->o.period_s, st->o.top_k, st->o.top_percent, st->periods_ranked,
            st->hot_pairs->len);
    if (st->hot_pairs->len)
        fprintf(out, "  mean overlap %.4f (top K), %.4f (top P%%); mean persistence %.4f, %.4f\n",
                m.ok, m.op, m.pk, m.pp);
}

static void text_share(const struct tbbt_stats *st, FILE *out)
{
    const struct tbbt_stats_share *s = &st->share;
    fprintf(out, "\nSharing between clients\n");
    fprintf(out, "  objects accessed %" PRIu64 ", by 2+ clients %" PRIu64 "\n", s->objects,
            s->shared);
    fprintf(out, "  regular files %" PRIu64 ", by 2+ clients %" PRIu64 "\n", s->files,
            s->files_shared);
    fprintf(out, "  files read or written %" PRIu64 ": read-shared %" PRIu64 " (%" PRIu64
                 " bytes), write-shared %" PRIu64 " (%" PRIu64 " bytes)\n",
            s->data_files, s->read_shared, s->bytes_read_shared, s->write_shared,
            s->bytes_write_shared);
}

static void text_sim(const struct tbbt_stats *st, FILE *out)
{
    if (!st->o.sim_ops) {
        fprintf(out, "\nConcurrency simulation: off (--sim-ops 0)\n");
        return;
    }
    fprintf(out, "\nConcurrency simulation (first %" PRIu64 " NFS requests; ops/s at full speed)\n",
            st->sim_fed);
    fprintf(out, "  %8s %14s %14s %10s %10s\n", "window", "conservative", "fsdep", "peak cons",
            "peak fsdep");
    for (unsigned w = 0; w < st->o.n_windows; w++)
        fprintf(out, "  %8" PRIu32 " %14.1f %14.1f %10" PRIu64 " %10" PRIu64 "\n",
                st->o.windows[w], tbbt_concsim_throughput(st->sims[0][w]),
                tbbt_concsim_throughput(st->sims[1][w]), tbbt_concsim_peak(st->sims[0][w]),
                tbbt_concsim_peak(st->sims[1][w]));
}

void tbbt_stats_print_text(const struct tbbt_stats *st, const char *trace, FILE *out)
{
    text_head(st, trace, out);
    text_mix(st, out);
    text_rate(st, out);
    text_clients(st, out);
    text_seq(st, out);
    text_temp(st, out);
    text_share(st, out);
    text_sim(st, out);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_head(struct tbbt_json *j, const struct tbbt_stats *st, const char *trace)
{
    tbbt_json_kv_string(j, "tool", "tbbt-stats");
    tbbt_json_kv_string(j, "version", TBBT_VERSION);
    tbbt_json_kv_string(j, "trace", trace);
    tbbt_json_kv_object(j, "records");
#define STATS_RECORDS(key, member) tbbt_json_kv(j, key, st->member);
#include "stats/report-keys.def"
    tbbt_json_end_object(j);
    tbbt_json_kv_object(j, "time");
    tbbt_json_kv_uint(j, "first_ns", st->t_first);
    tbbt_json_kv_uint(j, "last_ns", st->t_last);
    tbbt_json_kv_double(j, "span_seconds", span_s(st));
    tbbt_json_end_object(j);
}

static void json_mix(struct tbbt_json *j, const struct tbbt_stats *st)
{
    size_t n;
    struct mix_row *r = mix_rows(st, &n);
    tbbt_json_kv_object(j, "op_mix");
    tbbt_json_kv_uint(j, "total", st->records);
    tbbt_json_kv_uint(j, "other", st->mix_other);
    tbbt_json_kv_array(j, "procedures");
    for (size_t i = 0; i < n; i++) {
        char *l = tbbt_stats_proc_label(r[i].prog, r[i].proc);
        const char *pn = tbbt_prog_name(r[i].prog);
        tbbt_json_begin_object(j);
        tbbt_json_kv_string(j, "name", l);
        tbbt_json_kv_string(j, "prog", pn ? pn : "none");
        tbbt_json_kv_uint(j, "proc", (uint64_t)r[i].proc);
        tbbt_json_kv_uint(j, "count", r[i].count);
        tbbt_json_kv_double(j, "share", ratio((double)r[i].count, (double)st->records));
        tbbt_json_end_object(j);
        g_free(l);
    }
    tbbt_json_end_array(j);
    tbbt_json_end_object(j);
    g_free(r);
}

static void json_rate(struct tbbt_json *j, const struct tbbt_stats *st)
{
    struct rate_sum s = rate_summary(st);
    tbbt_json_kv_object(j, "rate");
    tbbt_json_kv_double(j, "interval_seconds", st->interval_s);
    tbbt_json_kv_uint(j, "start_ns", st->t0);
    tbbt_json_kv_uint(j, "intervals", st->bins->len);
    tbbt_json_kv_double(j, "mean_ops", s.mean);
    tbbt_json_kv_double(j, "peak_ops", s.peak);
    tbbt_json_kv_uint(j, "out_of_range", st->rate_out_of_range);
    tbbt_json_kv_array(j, "ops_per_second");
    for (guint i = 0; i < st->bins->len; i++)
        tbbt_json_double(j, (double)g_array_index(st->bins, uint64_t, i) / st->interval_s);
    tbbt_json_end_array(j);
    tbbt_json_end_object(j);
}

/* The keys of the records of the JSON's arrays, from report-keys.def. */
static const struct tbbt_json_field client_keys[] = {
#define STATS_CLIENT(key, member) TBBT_JSON_FIELD(struct tbbt_stats_client, member, key),
#include "stats/report-keys.def"
};
static const struct tbbt_json_field temp_top_keys[] = {
#define STATS_TEMP_RANK(key) TBBT_JSON_RANK(key),
#define STATS_TEMP_TOP(key, member) TBBT_JSON_FIELD(struct tbbt_stats_temp, member, key),
#include "stats/report-keys.def"
};
static const struct tbbt_json_field hot_pair_keys[] = {
#define STATS_HOT_PAIR(key, member) TBBT_JSON_FIELD(struct tbbt_stats_hot_pair, member, key),
#include "stats/report-keys.def"
};

/* Writes key: the records of a (borrowed), at most max of them, with the given keys. */
static void json_records(struct tbbt_json *j, const char *key, GArray *a, guint max,
                         const struct tbbt_json_field *keys, size_t nkeys)
{
    tbbt_json_kv_records(j, key, a->data, MIN(a->len, max), g_array_get_element_size(a), keys,
                         nkeys);
}

static void json_hist(struct tbbt_json *j, const char *key, const uint64_t *runs,
                      const uint64_t *sum, const char *sum_key, bool bytes)
{
    tbbt_json_kv_array(j, key);
    for (unsigned b = 0; b < TBBT_STATS_BUCKETS; b++) {
        if (!runs[b])
            continue;
        tbbt_json_begin_object(j);
        tbbt_json_kv_uint(j, "min", bytes && b == 0 ? 0 : (uint64_t)1 << b);
        tbbt_json_kv_uint(j, "max", b == 63 ? UINT64_MAX : ((uint64_t)2 << b) - 1);
        tbbt_json_kv_uint(j, "runs", runs[b]);
        tbbt_json_kv_uint(j, sum_key, sum[b]);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
}

static void json_seq1(struct tbbt_json *j, const char *key, const struct tbbt_stats_seq *q)
{
    tbbt_json_kv_object(j, key);
    tbbt_json_kv_uint(j, "accesses", q->accesses);
    tbbt_json_kv_uint(j, "bytes", q->bytes);
    tbbt_json_kv_uint(j, "sequential", q->sequential);
    tbbt_json_kv_double(j, "sequential_share", ratio((double)q->sequential, (double)q->accesses));
    tbbt_json_kv_uint(j, "runs", q->runs);
    tbbt_json_kv_uint(j, "runs_from_zero", q->runs_from_zero);
    tbbt_json_kv_double(j, "sequential_incl_start_share",
       ratio((double)(q->sequential + q->runs_from_zero), (double)q->accesses));
    tbbt_json_kv_double(j, "mean_run_ops", ratio((double)q->accesses, (double)q->runs));
    tbbt_json_kv_double(j, "mean_run_bytes", ratio((double)q->bytes, (double)q->runs));
    tbbt_json_kv_uint(j, "max_run_ops", q->max_run_ops);
    tbbt_json_kv_uint(j, "max_run_bytes", q->max_run_bytes);
    json_hist(j, "run_ops", q->ops_hist, q->ops_hist_acc, "accesses", false);
    json_hist(j, "run_bytes", q->bytes_hist, q->bytes_hist_bytes, "bytes", true);
    tbbt_json_end_object(j);
}

static void json_seq(struct tbbt_json *j, const struct tbbt_stats *st)
{
    tbbt_json_kv_object(j, "sequentiality");
    json_seq1(j, "read", &st->seq_read);
    json_seq1(j, "write", &st->seq_write);
    tbbt_json_end_object(j);
}

static void json_temp_top(struct tbbt_json *j, const struct tbbt_stats *st)
{
    json_records(j, "top", st->temps, JSON_TOP, temp_top_keys, G_N_ELEMENTS(temp_top_keys));
    /* The curve: ranks 1..n, log-spaced, at most about CURVE_POINTS of them. */
    tbbt_json_kv_array(j, "curve");
    guint n = st->temps->len, last = 0;
    guint steps = MIN(n, CURVE_POINTS);
    for (guint i = 1; i <= steps; i++) {
        guint rank = n <= CURVE_POINTS ? i : (guint)lround(pow((double)n, (double)i / steps));
        rank = CLAMP(rank, 1u, n);
        if (rank <= last)
            continue;
        tbbt_json_begin_array(j);
        tbbt_json_uint(j, rank);
        tbbt_json_double(j, g_array_index(st->temps, struct tbbt_stats_temp, rank - 1).temp);
        tbbt_json_end_array(j);
        last = rank;
    }
    tbbt_json_end_array(j);
}

static void json_hot(struct tbbt_json *j, const struct tbbt_stats *st)
{
    struct hot_means m = hot_means(st);
    tbbt_json_kv_object(j, "hot_set");
    tbbt_json_kv_double(j, "period_seconds", st->o.period_s);
    tbbt_json_kv_uint(j, "top_k", st->o.top_k);
    tbbt_json_kv_double(j, "top_percent", st->o.top_percent);
    tbbt_json_kv_uint(j, "periods", st->periods_ranked);
    tbbt_json_kv_double(j, "mean_overlap_top_k", m.ok);
    tbbt_json_kv_double(j, "mean_overlap_top_percent", m.op);
    tbbt_json_kv_double(j, "mean_persistence_top_k", m.pk);
    tbbt_json_kv_double(j, "mean_persistence_top_percent", m.pp);
    json_records(j, "pairs", st->hot_pairs, G_MAXUINT, hot_pair_keys,
                 G_N_ELEMENTS(hot_pair_keys));
    tbbt_json_end_object(j);
}

static void json_temp(struct tbbt_json *j, const struct tbbt_stats *st)
{
    tbbt_json_kv_object(j, "temperature");
    tbbt_json_kv_uint(j, "files", st->temps->len);
    tbbt_json_kv_uint(j, "unsized", st->temp_unsized);
    tbbt_json_kv_double(j, "max", st->temps->len
                                      ? g_array_index(st->temps, struct tbbt_stats_temp, 0).temp
                                      : NAN);
    tbbt_json_kv_double(j, "median", median_temp(st));
    json_temp_top(j, st);
    json_hot(j, st);
    tbbt_json_end_object(j);
}

static void json_share(struct tbbt_json *j, const struct tbbt_stats *st)
{
    const struct tbbt_stats_share *s = &st->share;
    tbbt_json_kv_object(j, "sharing");
#define STATS_SHARE(key, member) tbbt_json_kv(j, key, s->member);
#include "stats/report-keys.def"
    tbbt_json_end_object(j);
}

static void json_latencies(struct tbbt_json *j, const struct tbbt_stats *st)
{
    static const int progs[] = {TBBT_PROG_NFS3, TBBT_PROG_NFS2};
    tbbt_json_kv_object(j, "latency_us");
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < tbbt_prog_nprocs(progs[k]) && i < TBBT_STATS_NPROC; i++) {
            char *l = tbbt_stats_proc_label(progs[k], i);
            tbbt_json_kv_double(j, l, (double)st->o.lat.ns[progs[k]][i] / 1e3);
            g_free(l);
        }
    tbbt_json_end_object(j);
}

static void json_sim(struct tbbt_json *j, const struct tbbt_stats *st)
{
    tbbt_json_kv_object(j, "concurrency");
    tbbt_json_kv_uint(j, "sim_ops_limit", st->o.sim_ops);
    tbbt_json_kv_uint(j, "sim_ops", st->sim_fed);
    json_latencies(j, st);
    tbbt_json_kv_array(j, "results");
    for (unsigned w = 0; st->o.sim_ops && w < st->o.n_windows; w++) {
        tbbt_json_begin_object(j);
        tbbt_json_kv_uint(j, "window", st->o.windows[w]);
        tbbt_json_kv_double(j, "conservative_ops", tbbt_concsim_throughput(st->sims[0][w]));
        tbbt_json_kv_double(j, "fsdep_ops", tbbt_concsim_throughput(st->sims[1][w]));
        tbbt_json_kv_uint(j, "conservative_peak", tbbt_concsim_peak(st->sims[0][w]));
        tbbt_json_kv_uint(j, "fsdep_peak", tbbt_concsim_peak(st->sims[1][w]));
        tbbt_json_kv_double(j, "conservative_seconds",
                            (double)tbbt_concsim_makespan(st->sims[0][w]) / 1e9);
        tbbt_json_kv_double(j, "fsdep_seconds",
                            (double)tbbt_concsim_makespan(st->sims[1][w]) / 1e9);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
    tbbt_json_end_object(j);
}

char *tbbt_stats_json(const struct tbbt_stats *st, const char *trace)
{
    struct tbbt_json j;
    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    json_head(&j, st, trace);
    json_mix(&j, st);
    json_rate(&j, st);
    json_records(&j, "clients", st->clients, G_MAXUINT, client_keys, G_N_ELEMENTS(client_keys));
    json_seq(&j, st);
    json_temp(&j, st);
    json_share(&j, st);
    json_sim(&j, st);
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}
