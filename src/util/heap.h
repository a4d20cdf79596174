/* SPDX-License-Identifier: MIT */
/*
 * A binary min-heap of (key, seq) pairs in a GArray, ordered by key, then seq: the
 * scheduler's ready and pending queues (src/sched/sched.c) and the concurrency
 * simulator's event queue (src/stats/concsim.c).  The caller owns the GArray (made
 * with tbbt_heap_new(), freed with g_array_free()).  Not thread-safe.
 */
#ifndef TBBT_UTIL_HEAP_H
#define TBBT_UTIL_HEAP_H

#include <glib.h>
#include <stdint.h>

struct tbbt_heap_item {
    uint64_t key, seq;
};

/* The heap's order: key, then seq. */
static inline gboolean tbbt_heap_less(const struct tbbt_heap_item *a,
                                      const struct tbbt_heap_item *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

/* An empty heap (given: g_array_free(h, TRUE)). */
GArray *tbbt_heap_new(void);
void tbbt_heap_push(GArray *h, uint64_t key, uint64_t seq);
/* The least item (borrowed, valid until the next push or pop), or NULL when empty. */
const struct tbbt_heap_item *tbbt_heap_top(const GArray *h);
/* Removes the least item; h must not be empty. */
void tbbt_heap_pop(GArray *h);

#endif
