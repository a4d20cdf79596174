/* SPDX-License-Identifier: MIT */
/*
 * Operation mix (records per procedure of NFSv2, NFSv3 and MOUNT), the rate over time
 * (records per interval, by record time: the call time, or the reply time of a reply
 * without a call), and per-client counts (client = the client address of the record's
 * endpoint; bytes read and written as tbbt_stats_xfer_bytes() counts them).
 * docs/tbbt-stats.md "Operation mix", "Rate", "Clients".
 */
#include "stats/stats-int.h"

#include <string.h>

#include "trace/trace.h"

#define AUTO_MAX_BINS 2000          /* the automatic interval doubles past this */
#define MAX_BINS (1u << 24)         /* a fixed interval keeps at most this many */

uint32_t tbbt__stats_client(struct tbbt_stats *st, const char *addr)
{
    gpointer v = g_hash_table_lookup(st->client_ix, addr);
    if (v)
        return GPOINTER_TO_UINT(v) - 1;
    struct tbbt_stats_client c = {0};
    g_strlcpy(c.addr, addr, sizeof(c.addr));
    g_array_append_val(st->clients, c);
    g_hash_table_insert(st->client_ix, g_strdup(addr), GUINT_TO_POINTER(st->clients->len));
    return st->clients->len - 1;
}

/* Halves the number of bins: each new bin sums two old ones. */
static void coarsen(struct tbbt_stats *st)
{
    uint64_t *b = (uint64_t *)(void *)st->bins->data;
    guint n = st->bins->len, k = 0;
    for (guint i = 0; i < n; i += 2)
        b[k++] = b[i] + (i + 1 < n ? b[i + 1] : 0);
    g_array_set_size(st->bins, k);
    st->interval_s *= 2;
}

static void rate_add(struct tbbt_stats *st, uint64_t t)
{
    uint64_t d = t > st->t0 ? t - st->t0 : 0;
    double fi = (double)d / 1e9 / st->interval_s;
    while (st->o.interval_auto && fi >= AUTO_MAX_BINS) {
        coarsen(st);
        fi = (double)d / 1e9 / st->interval_s;
    }
    if (fi >= MAX_BINS) {
        st->rate_out_of_range++;
        return;
    }
    guint i = (guint)fi;
    if (i >= st->bins->len)
        g_array_set_size(st->bins, i + 1);
    g_array_index(st->bins, uint64_t, i)++;
}

void tbbt__stats_mix_add(struct tbbt_stats *st, const struct tbbt_trace_rec *rec,
                         uint32_t client, uint64_t t)
{
    if (rec->prog < TBBT_STATS_NPROG && rec->proc < TBBT_STATS_NPROC)
        st->mix[rec->prog][rec->proc]++;
    else
        st->mix_other++;
    rate_add(st, t);

    struct tbbt_stats_client *c = &g_array_index(st->clients, struct tbbt_stats_client, client);
    c->ops++;
    enum tbbt_ns_op op = tbbt_ns_op(rec);
    if (op == TBBT_NS_OP_READ) {
        c->reads++;
        c->bytes_read += tbbt_stats_xfer_bytes(rec);
    } else if (op == TBBT_NS_OP_WRITE) {
        c->writes++;
        c->bytes_written += tbbt_stats_xfer_bytes(rec);
    }
}

char *tbbt_stats_proc_label(int prog, int proc)
{
    char buf[TBBT_PROC_LABEL_MAX];

    return g_strdup(tbbt_proc_label(prog, proc, buf, sizeof(buf)));
}
