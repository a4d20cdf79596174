/* SPDX-License-Identifier: MIT */
/*
 * File temperature (iPcress thesis, section 3.1): the number of bytes transferred to or
 * from a file divided by the length of the file.  Bytes are those READ and WRITE moved
 * (tbbt_stats_xfer_bytes); the length is the largest size seen in the post-op
 * attributes of replies.  The thesis ranks files by descending temperature (Figure 1,
 * rank 1 = hottest) and shows that the hottest files stay hot from one period to the next
 * (Figure 2); we measure that per period of --period seconds: the top-K and top-P% files
 * of each non-empty period, how many of them are again in the next non-empty period's
 * set (overlap), and which share of the next period's bytes went to them (persistence,
 * the thesis' measure).  docs/tbbt-stats.md "Temperature".
 */
#include "stats/stats-int.h"

#include <math.h>

struct ranked {
    double temp;
    struct tbbt_stats_file *f;
};

static int ranked_cmp(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->temp != y->temp)
        return x->temp > y->temp ? -1 : 1;
    return x->f->fh < y->f->fh ? -1 : x->f->fh > y->f->fh;
}

static bool sized(const struct tbbt_stats_file *f)
{
    return (f->flags & TBBT_STATS_F_SIZE) && f->size > 0;
}

/* Replaces set's files (clearing flag on the old ones) with the first n of r. */
static void set_top(GPtrArray *set, uint32_t flag, const struct ranked *r, guint n)
{
    for (guint i = 0; i < set->len; i++)
        ((struct tbbt_stats_file *)g_ptr_array_index(set, i))->flags &= ~flag;
    g_ptr_array_set_size(set, 0);
    for (guint i = 0; i < n; i++) {
        r[i].f->flags |= flag;
        g_ptr_array_add(set, r[i].f);
    }
}

static guint count_flag(const struct ranked *r, guint n, uint32_t flag)
{
    guint k = 0;
    for (guint i = 0; i < n; i++)
        k += (r[i].f->flags & flag) != 0;
    return k;
}

static void add_pair(struct tbbt_stats *st, const struct ranked *r, guint kk, guint kp)
{
    struct tbbt_stats_hot_pair p = {
        .period = st->prev_period,
        .next = st->period,
        .k_prev = st->top_k->len,
        .k_next = kk,
        .p_prev = st->top_p->len,
        .p_next = kp,
    };
    p.overlap_k = (double)count_flag(r, kk, TBBT_STATS_F_TOP_K) / st->top_k->len;
    p.overlap_p = (double)count_flag(r, kp, TBBT_STATS_F_TOP_P) / st->top_p->len;
    p.persist_k = (double)st->period_to_k / (double)st->period_total;
    p.persist_p = (double)st->period_to_p / (double)st->period_total;
    g_array_append_val(st->hot_pairs, p);
}

static void close_period(struct tbbt_stats *st)
{
    struct ranked *r = g_new(struct ranked, st->touched->len + 1);
    guint n = 0;
    for (guint i = 0; i < st->touched->len; i++) {
        struct tbbt_stats_file *f = g_ptr_array_index(st->touched, i);
        if (sized(f))
            r[n++] = (struct ranked){(double)f->period_bytes / (double)f->size, f};
    }
    if (n > 0) {
        qsort(r, n, sizeof(*r), ranked_cmp);
        guint kk = MIN(st->o.top_k, n);
        guint kp = (guint)ceil(st->o.top_percent / 100.0 * n - 1e-9);
        kp = CLAMP(kp, 1u, n);
        if (st->have_prev)
            add_pair(st, r, kk, kp);
        set_top(st->top_k, TBBT_STATS_F_TOP_K, r, kk);
        set_top(st->top_p, TBBT_STATS_F_TOP_P, r, kp);
        st->prev_period = st->period;
        st->have_prev = true;
        st->periods_ranked++;
    }
    g_free(r);
    for (guint i = 0; i < st->touched->len; i++) {
        struct tbbt_stats_file *f = g_ptr_array_index(st->touched, i);
        f->period_bytes = 0;
        f->flags &= ~TBBT_STATS_F_TOUCHED;
    }
    g_ptr_array_set_size(st->touched, 0);
    st->period_total = st->period_to_k = st->period_to_p = 0;
}

void tbbt__stats_temp_time(struct tbbt_stats *st, uint64_t t)
{
    uint64_t d = t > st->t0 ? t - st->t0 : 0;
    double fp = (double)d / 1e9 / st->o.period_s;
    uint64_t p = fp >= 1e18 ? (uint64_t)1e18 : (uint64_t)fp;
    if (!st->period_started) {
        st->period_started = true;
        st->period = p;
    } else if (p > st->period) {
        close_period(st);
        st->period = p;
    }
}

void tbbt__stats_temp_add(struct tbbt_stats *st, struct tbbt_stats_file *f, uint64_t bytes)
{
    if (bytes == 0)
        return;
    if (!(f->flags & TBBT_STATS_F_TOUCHED)) {
        f->flags |= TBBT_STATS_F_TOUCHED;
        g_ptr_array_add(st->touched, f);
    }
    f->period_bytes += bytes;
    st->period_total += bytes;
    if (f->flags & TBBT_STATS_F_TOP_K)
        st->period_to_k += bytes;
    if (f->flags & TBBT_STATS_F_TOP_P)
        st->period_to_p += bytes;
}

static int temp_cmp(const void *a, const void *b)
{
    const struct tbbt_stats_temp *x = a, *y = b;
    if (x->temp != y->temp)
        return x->temp > y->temp ? -1 : 1;
    return x->fh < y->fh ? -1 : x->fh > y->fh;
}

void tbbt__stats_temp_finish(struct tbbt_stats *st)
{
    if (st->period_started)
        close_period(st);
    for (guint i = 0; i < st->files->len; i++) {
        struct tbbt_stats_file *f = g_ptr_array_index(st->files, i);
        uint64_t bytes = f ? f->bytes_read + f->bytes_written : 0;
        if (bytes == 0)
            continue;
        if (!sized(f)) {
            st->temp_unsized++;
            continue;
        }
        struct tbbt_stats_temp t = {(double)bytes / (double)f->size, f->fh, f->id, f->size,
                                    bytes};
        g_array_append_val(st->temps, t);
    }
    if (st->temps->len > 1)
        qsort(st->temps->data, st->temps->len, sizeof(struct tbbt_stats_temp), temp_cmp);
}
