/* SPDX-License-Identifier: MIT */
/*
 * Timing of a compared replay (compare.h, "Timing"), accumulated per matched pair:
 *   - latency (reply - call) per procedure on both sides, in the player's log-linear
 *     histograms (player/report.h: 1/32 relative resolution);
 *   - lag = (replay call - replay origin) - (original call - original origin) / speed,
 *     the origins being the two calls of the pair whose original comes first: a replay
 *     on schedule has lag 0, one that falls behind a growing positive lag.  |lag| goes
 *     into a histogram, and the signed lag into per-second bins of the replay's time
 *     (mean and max);
 *   - turnaround: a call whose endpoint's previous call (in trace order) was answered
 *     before it gives the time from that reply to this call; tbbt__cmp_turnaround()
 *     computes it for every record of each trace in its own order (the player's
 *     conservative order waits for exactly such replies), and a matched pair adds both
 *     sides' samples;
 *   - the matched span of each side (first and last matched call), for the rates;
 *   - held: after the last pair, the lag split by its cause (compare.h, "Timing").  The
 *     pairs are sorted by original reply; a sweep in original call order keeps the
 *     latest replay reply among the pairs answered before the call (the conservative
 *     rule's dependencies), O(n log n) time and 32 bytes per pair.
 */
#include "compare/compare-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ll
#define MAX_SECONDS (1u << 22)      /* lag series cap (~48 days); later pairs count in the last */

void tbbt__cmp_timing_init(struct tbbt__cmp_timing *t)
{
    memset(t, 0, sizeof(*t));
    t->lat = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    tbbt_hist_init(&t->lag);
    t->lag_series = g_array_new(FALSE, TRUE, sizeof(struct tbbt__cmp_lagsec));
    for (int s = 0; s < 2; s++) {
        tbbt_hist_init(&t->turn[s]);
        t->span_min[s] = UINT64_MAX;
        t->prev_reply[s] = g_array_new(FALSE, TRUE, sizeof(uint64_t));
    }
    t->pairs = g_array_new(FALSE, FALSE, sizeof(struct tbbt__cmp_tpair));
    tbbt_hist_init(&t->own);
    tbbt_hist_init(&t->held);
    tbbt_hist_init(&t->react);
}

void tbbt__cmp_timing_fini(struct tbbt__cmp_timing *t)
{
    if (t->lat)
        g_hash_table_destroy(t->lat);
    if (t->lag_series)
        g_array_free(t->lag_series, TRUE);
    for (int s = 0; s < 2; s++)
        if (t->prev_reply[s])
            g_array_free(t->prev_reply[s], TRUE);
    if (t->pairs)
        g_array_free(t->pairs, TRUE);
    memset(t, 0, sizeof(*t));
}

int64_t tbbt__cmp_turnaround(struct tbbt__cmp_timing *t, int side,
                             const struct tbbt_trace_rec *rec)
{
    GArray *prev = t->prev_reply[side];
    int64_t sample = CMP_NO_TURN;

    if (rec->flags & TBBT_RF_NO_CALL)
        return sample;
    if (rec->endpoint >= prev->len)
        g_array_set_size(prev, rec->endpoint + 1);
    uint64_t *p = &g_array_index(prev, uint64_t, rec->endpoint);
    if (*p && *p <= rec->call_ns)
        sample = (int64_t)(rec->call_ns - *p);
    *p = (rec->flags & TBBT_RF_REPLY) ? rec->reply_ns : 0;
    return sample;
}

static void add_latency(struct tbbt__cmp_timing *t, const struct tbbt__cmp_op *a,
                        const struct tbbt__cmp_op *b)
{
    gpointer k = GUINT_TO_POINTER(((guint)a->prog << 8 | a->proc) + 1);
    struct tbbt__cmp_lat *l = g_hash_table_lookup(t->lat, k);

    if (!l) {
        l = g_new(struct tbbt__cmp_lat, 1);
        tbbt_hist_init(&l->a);
        tbbt_hist_init(&l->b);
        g_hash_table_insert(t->lat, k, l);
    }
    if ((a->flags & TBBT_RF_REPLY) && a->reply_ns >= a->call_ns && a->call_ns)
        tbbt_hist_add(&l->a, a->reply_ns - a->call_ns);
    if ((b->flags & TBBT_RF_REPLY) && b->reply_ns >= b->call_ns && b->call_ns)
        tbbt_hist_add(&l->b, b->reply_ns - b->call_ns);
}

static void add_lag(struct tbbt__cmp_timing *t, double speed, const struct tbbt__cmp_op *a,
                    const struct tbbt__cmp_op *b)
{
    if (!t->have_origin) {
        t->have_origin = true;
        t->origin_a = a->call_ns;
        t->origin_b = b->call_ns;
    }
    double rel_a = ((double)a->call_ns - (double)t->origin_a) / speed;
    int64_t rel_b = (int64_t)(b->call_ns - t->origin_b);
    int64_t lag = (int64_t)llround((double)rel_b - rel_a);
    tbbt_hist_add(&t->lag, lag < 0 ? (uint64_t)-lag : (uint64_t)lag);
    uint64_t sec = rel_b > 0 ? (uint64_t)(rel_b / NS_PER_S) : 0;
    if (sec >= MAX_SECONDS)
        sec = MAX_SECONDS - 1;
    if (sec >= t->lag_series->len)
        g_array_set_size(t->lag_series, (guint)sec + 1);
    struct tbbt__cmp_lagsec *s = &g_array_index(t->lag_series, struct tbbt__cmp_lagsec, sec);
    if (s->n == 0 || lag > s->max)
        s->max = lag;
    s->sum += (double)lag;
    s->n++;
}

void tbbt__cmp_timing_pair(struct tbbt__cmp_timing *t, double speed, const struct tbbt__cmp_op *a,
                           const struct tbbt__cmp_op *b)
{
    const struct tbbt__cmp_op *side[2] = {a, b};

    add_latency(t, a, b);
    if (a->call_ns && b->call_ns) {
        add_lag(t, speed, a, b);
        struct tbbt__cmp_tpair p = {
            a->call_ns, (a->flags & TBBT_RF_REPLY) && a->reply_ns >= a->call_ns ? a->reply_ns : 0,
            b->call_ns, (b->flags & TBBT_RF_REPLY) && b->reply_ns >= b->call_ns ? b->reply_ns : 0};
        g_array_append_val(t->pairs, p);
    }
    for (int s = 0; s < 2; s++) {
        if (side[s]->turn_ns != CMP_NO_TURN)
            tbbt_hist_add(&t->turn[s], (uint64_t)side[s]->turn_ns);
        if (!side[s]->call_ns)
            continue;
        t->span_min[s] = MIN(t->span_min[s], side[s]->call_ns);
        t->span_max[s] = MAX(t->span_max[s], side[s]->call_ns);
    }
}

static gint by_a_call(gconstpointer x, gconstpointer y)
{
    const struct tbbt__cmp_tpair *p = x, *q = y;
    return p->a_call < q->a_call ? -1 : p->a_call > q->a_call;
}

static gint by_a_reply(gconstpointer x, gconstpointer y)
{
    const struct tbbt__cmp_tpair *p = x, *q = y;
    return p->a_reply < q->a_reply ? -1 : p->a_reply > q->a_reply;
}

void tbbt__cmp_timing_held(struct tbbt__cmp_timing *t, double speed)
{
    if (!t->have_origin)
        return;
    GArray *by_call = t->pairs;
    guint n = by_call->len, nr = 0;
    struct tbbt__cmp_tpair *r = g_new(struct tbbt__cmp_tpair, MAX(n, 1u));
    for (guint i = 0; i < n; i++) {
        const struct tbbt__cmp_tpair *p = &g_array_index(by_call, struct tbbt__cmp_tpair, i);
        if (p->a_reply && p->b_reply)
            r[nr++] = *p;
    }
    qsort(r, nr, sizeof(*r), by_a_reply);
    g_array_sort(by_call, by_a_call);
    uint64_t ready = 0;
    guint j = 0;
    for (guint i = 0; i < n; i++) {
        const struct tbbt__cmp_tpair *p = &g_array_index(by_call, struct tbbt__cmp_tpair, i);
        for (; j < nr && r[j].a_reply < p->a_call; j++)
            ready = MAX(ready, r[j].b_reply);
        double rel = ((double)p->a_call - (double)t->origin_a) / speed;
        int64_t due = (int64_t)t->origin_b + (int64_t)llround(rel);
        int64_t call = (int64_t)p->b_call, rdy = (int64_t)ready;
        int64_t own;
        if (ready && rdy > due) {
            tbbt_hist_add(&t->held, (uint64_t)(rdy - due));
            if (call >= rdy)
                tbbt_hist_add(&t->react, (uint64_t)(call - rdy));
            own = call >= rdy ? call - rdy : (call >= due ? 0 : due - call);
        } else {
            own = call >= due ? call - due : due - call;
        }
        tbbt_hist_add(&t->own, (uint64_t)own);
    }
    g_free(r);
}

static void quant(const struct tbbt_hist *h, uint64_t *n, uint64_t *p50, uint64_t *p99,
                  uint64_t *max)
{
    *n = h->count;
    *p50 = tbbt_hist_quantile(h, 0.5);
    *p99 = tbbt_hist_quantile(h, 0.99);
    *max = h->max;              /* 0 while empty (struct tbbt_hist) */
}

void tbbt__cmp_timing_summary(const struct tbbt__cmp_timing *t, uint64_t matched,
                              struct tbbt_compare_timing *out)
{
    memset(out, 0, sizeof(*out));
    out->lag_count = t->lag.count;
    out->lag_p50 = tbbt_hist_quantile(&t->lag, 0.5);
    out->lag_p99 = tbbt_hist_quantile(&t->lag, 0.99);
    out->lag_max = t->lag.max;
    quant(&t->held, &out->held_count, &out->held_p50, &out->held_p99, &out->held_max);
    quant(&t->own, &out->own_count, &out->own_p50, &out->own_p99, &out->own_max);
    quant(&t->react, &out->react_count, &out->react_p50, &out->react_p99, &out->react_max);
    for (int s = 0; s < 2; s++) {
        out->turn_count[s] = t->turn[s].count;
        out->turn_p50[s] = tbbt_hist_quantile(&t->turn[s], 0.5);
        out->turn_p99[s] = tbbt_hist_quantile(&t->turn[s], 0.99);
        double span = t->span_min[s] < t->span_max[s]
                          ? (double)(t->span_max[s] - t->span_min[s]) / 1e9 : 0;
        out->rate[s] = span > 0 ? (double)matched / span : 0;
    }
}

/* Latency tables in the order of their procedure labels (a stable order). */
static gint by_label(gconstpointer x, gconstpointer y)
{
    return strcmp(tbbt__cmp_lat_label(*(gpointer const *)x),
                  tbbt__cmp_lat_label(*(gpointer const *)y));
}

GPtrArray *tbbt__cmp_lat_keys(const struct tbbt__cmp_timing *t)
{
    GPtrArray *k = g_ptr_array_new();
    GHashTableIter it;
    gpointer key;

    g_hash_table_iter_init(&it, t->lat);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_ptr_array_add(k, key);
    g_ptr_array_sort(k, by_label);
    return k;
}

const char *tbbt__cmp_lat_label(gconstpointer key)
{
    guint v = GPOINTER_TO_UINT(key) - 1;
    return tbbt__cmp_proc_label((int)(v >> 8), (int)(v & 255));
}
