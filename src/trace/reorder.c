/* SPDX-License-Identifier: MIT */
/*
 * Read reordering as sloppy clients cause it: the seeded swap-with-a-neighbour
 * perturbation of reorder.h, streaming (a ring of k+1 items) and over an array.
 */
#include "trace/reorder.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tbbt_reorder_parse(const char *s, struct tbbt_reorder_spec *spec, char *err, size_t errlen)
{
    char *end;
    double p;
    unsigned long k = 1;

    if (!s || !*s) {
        snprintf(err, errlen, "empty reorder spec (want P[:K], e.g. 0.1:4 or 10%%:4)");
        return -1;
    }
    errno = 0;
    p = strtod(s, &end);
    if (end == s || errno || !isfinite(p)) {
        snprintf(err, errlen, "bad reorder probability in '%s' (want P[:K])", s);
        return -1;
    }
    if (*end == '%') {
        p /= 100.0;
        end++;
    }
    if (p < 0.0 || p > 1.0) {
        snprintf(err, errlen, "reorder probability in '%s' is outside [0, 1]", s);
        return -1;
    }
    if (*end == ':') {
        const char *ks = end + 1;
        if (*ks < '0' || *ks > '9') {
            snprintf(err, errlen, "bad reorder distance in '%s' (want P[:K])", s);
            return -1;
        }
        errno = 0;
        k = strtoul(ks, &end, 10);
        if (errno || k < 1 || k > TBBT_REORDER_MAX_K) {
            snprintf(err, errlen, "reorder distance in '%s' must be 1..%d", s,
                     TBBT_REORDER_MAX_K);
            return -1;
        }
    }
    if (*end) {
        snprintf(err, errlen, "trailing text in reorder spec '%s' (want P[:K])", s);
        return -1;
    }
    spec->p = p;
    spec->k = (unsigned)k;
    return 0;
}

uint64_t tbbt_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double tbbt_rng_unit(uint64_t *state)
{
    return (double)(tbbt_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

struct tbbt_reorder {
    struct tbbt_reorder_spec spec;
    uint64_t rng;
    size_t cap;     /* k + 1 */
    size_t head;    /* ring index of the oldest item */
    size_t n;       /* items buffered */
    uint64_t swaps;
    struct {
        void *item;
        bool swappable;
    } slot[];       /* cap, in the same allocation */
};

struct tbbt_reorder *tbbt_reorder_new(const struct tbbt_reorder_spec *spec, uint64_t seed)
{
    unsigned k = spec->k < 1 ? 1 : spec->k > TBBT_REORDER_MAX_K ? TBBT_REORDER_MAX_K : spec->k;
    struct tbbt_reorder *r = g_malloc0(sizeof(*r) + ((size_t)k + 1) * sizeof(r->slot[0]));

    r->spec = *spec;
    r->spec.k = k;
    r->rng = seed;
    r->cap = (size_t)k + 1;
    return r;
}

void tbbt_reorder_free(struct tbbt_reorder *r)
{
    g_free(r);
}

bool tbbt_reorder_room(const struct tbbt_reorder *r)
{
    return r->n < r->cap;
}

void tbbt_reorder_push(struct tbbt_reorder *r, void *item, bool swappable)
{
    size_t at;

    g_assert(r->n < r->cap);
    at = (r->head + r->n) % r->cap;
    r->slot[at].item = item;
    r->slot[at].swappable = swappable;
    r->n++;
}

/* The decision for the head item (items 0..n-1 of the ring are candidates). */
static void decide(struct tbbt_reorder *r)
{
    size_t d, i;

    if (r->spec.p <= 0.0 || !r->slot[r->head].swappable)
        return;
    if (tbbt_rng_unit(&r->rng) >= r->spec.p)
        return;
    d = 1 + (size_t)(tbbt_rng_next(&r->rng) % r->spec.k);
    if (d >= r->n)
        return;     /* the neighbour is past the end of the stream */
    for (i = 1; i <= d; i++)
        if (!r->slot[(r->head + i) % r->cap].swappable)
            return;
    {
        size_t a = r->head, b = (r->head + d) % r->cap;
        void *t = r->slot[a].item;
        r->slot[a].item = r->slot[b].item;
        r->slot[b].item = t;
        /* both are swappable: the flags need not move */
    }
    r->swaps++;
}

void *tbbt_reorder_pop(struct tbbt_reorder *r, bool flush)
{
    void *it;

    if (r->n == 0 || (!flush && r->n < r->cap))
        return NULL;
    decide(r);
    it = r->slot[r->head].item;
    r->slot[r->head].item = NULL;
    r->head = (r->head + 1) % r->cap;
    r->n--;
    return it;
}

size_t tbbt_reorder_count(const struct tbbt_reorder *r)
{
    return r->n;
}

uint64_t tbbt_reorder_swaps(const struct tbbt_reorder *r)
{
    return r->swaps;
}

uint64_t tbbt_reorder_array(void **items, bool *swappable, size_t n,
                            const struct tbbt_reorder_spec *spec, uint64_t seed)
{
    struct tbbt_reorder *r;
    size_t in = 0, out = 0;
    uint64_t swaps;
    void **tmp;
    bool *tsw;

    if (n == 0)
        return 0;
    r = tbbt_reorder_new(spec, seed);
    tmp = g_new(void *, n);
    tsw = swappable ? g_new(bool, n) : NULL;

    /* The swappable flags travel with their items: carry them in a side table keyed
     * by the item's original index.  The ring holds index + 1, so that item 0 is not
     * the NULL that pop() returns for "nothing yet". */
    while (out < n) {
        while (in < n && tbbt_reorder_room(r)) {
            tbbt_reorder_push(r, (void *)(uintptr_t)(in + 1), swappable ? swappable[in] : true);
            in++;
        }
        void *it = tbbt_reorder_pop(r, in == n);
        if (!it)
            continue;
        size_t idx = (size_t)(uintptr_t)it - 1;
        tmp[out] = items[idx];
        if (tsw)
            tsw[out] = swappable[idx];
        out++;
    }
    memcpy(items, tmp, n * sizeof *items);
    if (tsw)
        memcpy(swappable, tsw, n * sizeof *swappable);
    swaps = tbbt_reorder_swaps(r);
    g_free(tmp);
    g_free(tsw);
    tbbt_reorder_free(r);
    return swaps;
}
