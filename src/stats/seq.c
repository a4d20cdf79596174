/* SPDX-License-Identifier: MIT */
/*
 * Read and write sequentiality per file, the measure behind FFS/NFS read-ahead (nfs-tricks
 * paper, section 6: "if the current offset is the same as the offset after the last
 * operation, increment seqCount").  For each file, and separately for READ and WRITE, a
 * run continues while each access starts where the previous access of that kind to the
 * file ended (offset == previous offset + bytes moved); any other access closes the run
 * and starts a new one.  Reported: the share of accesses that continue a run, and the
 * distribution of run lengths in accesses and in bytes (log2 buckets).
 * docs/tbbt-stats.md "Sequentiality".
 */
#include "stats/stats-int.h"

unsigned tbbt_stats_bucket(uint64_t v)
{
    unsigned b = 0;
    while (v > 1) {
        v >>= 1;
        b++;
    }
    return b;
}

static void close_run(struct tbbt_stats_seq *q, struct tbbt_stats_run *r)
{
    if (r->ops == 0)
        return;
    unsigned bo = tbbt_stats_bucket(r->ops), bb = tbbt_stats_bucket(r->bytes);
    q->ops_hist[bo]++;
    q->ops_hist_acc[bo] += r->ops;
    q->bytes_hist[bb]++;
    q->bytes_hist_bytes[bb] += r->bytes;
    q->max_run_ops = MAX(q->max_run_ops, r->ops);
    q->max_run_bytes = MAX(q->max_run_bytes, r->bytes);
    r->ops = r->bytes = 0;
}

void tbbt__stats_seq_add(struct tbbt_stats *st, struct tbbt_stats_file *f, bool write,
                         uint64_t offset, uint64_t bytes)
{
    struct tbbt_stats_seq *q = write ? &st->seq_write : &st->seq_read;
    struct tbbt_stats_run *r = write ? &f->wr : &f->rd;
    q->accesses++;
    q->bytes += bytes;
    if (r->ops && offset == r->end) {
        q->sequential++;
    } else {
        close_run(q, r);
        q->runs++;
        if (offset == 0)
            q->runs_from_zero++;
    }
    r->ops++;
    r->bytes += bytes;
    r->end = offset + bytes;
}

void tbbt__stats_seq_finish(struct tbbt_stats *st)
{
    for (guint i = 0; i < st->files->len; i++) {
        struct tbbt_stats_file *f = g_ptr_array_index(st->files, i);
        if (!f)
            continue;
        close_run(&st->seq_read, &f->rd);
        close_run(&st->seq_write, &f->wr);
    }
}
