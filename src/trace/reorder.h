/* SPDX-License-Identifier: MIT */
/*
 * Read reordering as sloppy clients cause it (nfs-tricks paper, section 5: nfsiod
 * daemons and the network hand a server a client's reads slightly out of order).
 * With probability p, a read is swapped with a neighbour at distance 1..k after it,
 * chosen uniformly; the swap happens only when every record from the read to its
 * neighbour is itself swappable (the caller's rule: a READ that no other record in
 * between depends on), so no swap ever crosses a dependency.  Seeded and
 * reproducible: the same seed and the same stream give the same order.
 *
 * Used by tbbt-synth (on the generated read stream) and by tbbt-play --reorder (on
 * trace records inside the lookahead window, before they are admitted).  The
 * streaming form keeps a buffer of k+1 items: items go in with push(); an item
 * leaves (pop) when k newer ones are behind it or at flush.
 */
#ifndef TBBT_TRACE_REORDER_H
#define TBBT_TRACE_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TBBT_REORDER_MAX_K 1024

/* A reordering spec: "P[:K]" with P a probability in [0,1] or a percentage ("10%"),
 * K the largest swap distance (1..TBBT_REORDER_MAX_K, default 1). */
struct tbbt_reorder_spec {
    double p;
    unsigned k;
};

/* Parses "P[:K]"; 0, or -1 with a one-line reason in err. */
int tbbt_reorder_parse(const char *s, struct tbbt_reorder_spec *spec, char *err, size_t errlen);

/* The deterministic generator (splitmix64) the reorderer draws from. */
uint64_t tbbt_rng_next(uint64_t *state);
/* Uniform double in [0, 1). */
double tbbt_rng_unit(uint64_t *state);

/*
 * Streaming reorderer over opaque items (void *, owned by the caller).  The decision
 * for an item is made when it reaches the head of the buffer and k items follow it
 * (or at flush): with probability p, d in 1..k is drawn; if the item and every item
 * up to distance d are swappable, item 0 and item d trade places.  The item now at
 * the head then leaves (an item moved back gets its own decision when it reaches
 * the head, so a read may drift further).
 */
struct tbbt_reorder;
struct tbbt_reorder *tbbt_reorder_new(const struct tbbt_reorder_spec *spec, uint64_t seed);
void tbbt_reorder_free(struct tbbt_reorder *r);
/* True if there is room for push() (fewer than k+1 items buffered). */
bool tbbt_reorder_room(const struct tbbt_reorder *r);
/* Adds an item at the tail; swappable says whether it may move.  Needs room. */
void tbbt_reorder_push(struct tbbt_reorder *r, void *item, bool swappable);
/*
 * Takes the next item out in the new order: returns NULL while the buffer holds
 * fewer than k+1 items, unless flush is set (end of stream), when every buffered
 * item comes out in turn.
 */
void *tbbt_reorder_pop(struct tbbt_reorder *r, bool flush);
/* Items buffered now. */
size_t tbbt_reorder_count(const struct tbbt_reorder *r);
/* Swaps made so far. */
uint64_t tbbt_reorder_swaps(const struct tbbt_reorder *r);

/*
 * The same over an array in place: items[0..n) reordered, swappable[i] for each (or
 * NULL: all swappable; the flags move with their items).  Returns the number of swaps.
 */
uint64_t tbbt_reorder_array(void **items, bool *swappable, size_t n,
                            const struct tbbt_reorder_spec *spec, uint64_t seed);

#endif
