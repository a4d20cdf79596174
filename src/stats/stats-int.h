/* SPDX-License-Identifier: MIT */
/*
 * Internals of the stats module shared between its files: the file table and the hooks
 * by which tbbt_stats_add() and tbbt_stats_finish() (stats.c) drive each analysis
 * (mix.c, seq.c, temp.c, share.c).  Not for use outside src/stats/.
 */
#ifndef TBBT_STATS_STATS_INT_H
#define TBBT_STATS_STATS_INT_H

#include "stats/stats.h"

/* The file of handle ref, created if new (owned by st). */
struct tbbt_stats_file *tbbt__stats_file(struct tbbt_stats *st, uint32_t ref);

/* Per-concern hooks called by tbbt_stats_add()/finish() (internal). */
void tbbt__stats_mix_add(struct tbbt_stats *st, const struct tbbt_trace_rec *rec,
                         uint32_t client, uint64_t t);
uint32_t tbbt__stats_client(struct tbbt_stats *st, const char *addr);
void tbbt__stats_seq_add(struct tbbt_stats *st, struct tbbt_stats_file *f, bool write,
                         uint64_t offset, uint64_t bytes);
void tbbt__stats_seq_finish(struct tbbt_stats *st);
void tbbt__stats_temp_time(struct tbbt_stats *st, uint64_t t);
void tbbt__stats_temp_add(struct tbbt_stats *st, struct tbbt_stats_file *f, uint64_t bytes);
void tbbt__stats_temp_finish(struct tbbt_stats *st);
void tbbt__stats_share_add(struct tbbt_stats_file *f, uint32_t client, int kind);
void tbbt__stats_share_finish(struct tbbt_stats *st);

/* Access kinds for tbbt__stats_share_add. */
enum { TBBT_STATS_ACC_OTHER = 0, TBBT_STATS_ACC_READ = 1, TBBT_STATS_ACC_WRITE = 2 };

#endif
