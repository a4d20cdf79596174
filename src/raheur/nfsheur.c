/* SPDX-License-Identifier: MIT */
/*
 * The per-file state table of the read-ahead simulator, after FreeBSD 4's nfsheur
 * (nfs-tricks paper 6.3; nfsrv_read() in sys/nfs/nfs_serv.c): an open hash table probed
 * linearly from the key's home slot for a limited number of slots.  A key found keeps
 * its state; a key not found takes one of the probed slots and whatever was there is
 * ejected, so an entry can be lost while the table is far from full.
 *
 * Two replacement policies.  LRU (the paper's words: "the least recently used file
 * handle from among those probed is ejected"): an empty probed slot if there is one,
 * else the probed entry with the oldest last use.  USECOUNT: FreeBSD 4's loop as it
 * is, where "recently used" is approximated by nh_use (64 for a new entry, +16 per
 * use up to 2048, -1 each time a probe passes over the slot), and where the slot just
 * past the last probed one is also a candidate (the loop compares the next slot
 * before it leaves), although lookups never look there for their key.
 *
 * The models (raheur.c) keep their cursors in the entry; this file only zeroes them.
 */
#include "raheur/raheur.h"

#include <glib.h>
#include <string.h>

#define NHUSE_INIT 64
#define NHUSE_INC 16
#define NHUSE_MAX 2048

struct tbbt_nfsheur {
    uint32_t size, probes, ncursors;
    enum tbbt_raheur_policy policy;
    enum tbbt_raheur_hash hash;
    uint64_t tick;
    uint64_t ejections;
    /* size entries, then their cursors (size * ncursors), in this allocation */
    struct tbbt_nfsheur_entry slots[];
};

struct tbbt_nfsheur *tbbt_nfsheur_new(uint32_t size, uint32_t probes, uint32_t ncursors,
                                      enum tbbt_raheur_policy policy,
                                      enum tbbt_raheur_hash hash)
{
    _Static_assert(_Alignof(struct tbbt_raheur_cursor) <= _Alignof(struct tbbt_nfsheur_entry),
                   "the cursors follow the entries in one allocation");
    g_assert(size >= 1 && probes >= 1 && probes <= size && ncursors >= 1);
    struct tbbt_nfsheur *t = g_malloc0(sizeof(*t) + size * sizeof(t->slots[0]) +
                                       (size_t)size * ncursors * sizeof(struct tbbt_raheur_cursor));
    struct tbbt_raheur_cursor *cursors = (struct tbbt_raheur_cursor *)(void *)&t->slots[size];

    t->size = size;
    t->probes = probes;
    t->ncursors = ncursors;
    t->policy = policy;
    t->hash = hash;
    for (uint32_t i = 0; i < size; i++)
        t->slots[i].cur = &cursors[(size_t)i * ncursors];
    return t;
}

void tbbt_nfsheur_free(struct tbbt_nfsheur *t)
{
    g_free(t);
}

/* The splitmix64 finalizer: spreads consecutive keys over the table. */
static uint64_t mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint32_t tbbt_nfsheur_home(const struct tbbt_nfsheur *t, uint64_t key)
{
    uint64_t h = t->hash == TBBT_RAHEUR_HASH_MOD ? key : mix64(key);

    return (uint32_t)(h % t->size);
}

static uint32_t next_slot(const struct tbbt_nfsheur *t, uint32_t i)
{
    return i + 1 == t->size ? 0 : i + 1;
}

static bool holds(const struct tbbt_nfsheur_entry *e, uint64_t key)
{
    return e->in_use && e->key == key;
}

/* LRU policy: the slot holding key, else an empty probed slot, else the oldest. */
static uint32_t probe_lru(const struct tbbt_nfsheur *t, uint64_t key)
{
    uint32_t i = tbbt_nfsheur_home(t, key), victim = i;
    bool have_empty = false;

    for (uint32_t n = 0; n < t->probes; n++, i = next_slot(t, i)) {
        const struct tbbt_nfsheur_entry *e = &t->slots[i];

        if (holds(e, key))
            return i;
        if (have_empty)
            continue;
        if (!e->in_use) {
            victim = i;
            have_empty = true;
        } else if (e->last_use < t->slots[victim].last_use) {
            victim = i;
        }
    }
    return victim;
}

/* USECOUNT policy: FreeBSD 4 nfsrv_read()'s "Locate best candidate" loop. */
static uint32_t probe_usecount(struct tbbt_nfsheur *t, uint64_t key)
{
    uint32_t hi = tbbt_nfsheur_home(t, key), nh = hi;

    for (uint32_t n = 0; n < t->probes; n++) {
        if (holds(&t->slots[hi], key))
            return hi;
        if (t->slots[hi].use > 0)
            t->slots[hi].use--;
        hi = next_slot(t, hi);
        if (t->slots[hi].use < t->slots[nh].use)
            nh = hi;
    }
    return nh;
}

static void install(struct tbbt_nfsheur *t, struct tbbt_nfsheur_entry *e, uint64_t key,
                    struct tbbt_nfsheur_lookup *out)
{
    if (e->in_use) {
        out->ejected = true;
        out->ejected_key = e->key;
        t->ejections++;
    }
    e->key = key;
    e->in_use = true;
    e->use = NHUSE_INIT;
    e->ncur = 0;
    memset(e->cur, 0, sizeof(*e->cur) * t->ncursors);
}

struct tbbt_nfsheur_entry *tbbt_nfsheur_lookup(struct tbbt_nfsheur *t, uint64_t key,
                                               struct tbbt_nfsheur_lookup *out)
{
    struct tbbt_nfsheur_lookup dummy;
    struct tbbt_nfsheur_entry *e;
    uint32_t slot;

    if (!out)
        out = &dummy;
    memset(out, 0, sizeof(*out));
    t->tick++;
    slot = t->policy == TBBT_RAHEUR_USECOUNT ? probe_usecount(t, key) : probe_lru(t, key);
    e = &t->slots[slot];
    out->slot = slot;
    out->found = holds(e, key);
    if (!out->found)
        install(t, e, key, out);
    e->last_use = t->tick;
    e->use += NHUSE_INC;
    if (e->use > NHUSE_MAX)
        e->use = NHUSE_MAX;
    return e;
}

bool tbbt_nfsheur_contains(const struct tbbt_nfsheur *t, uint64_t key)
{
    uint32_t i = tbbt_nfsheur_home(t, key);
    /* USECOUNT may have put it one slot past the probed ones. */
    uint32_t window = t->probes + (t->policy == TBBT_RAHEUR_USECOUNT && t->probes < t->size);

    for (uint32_t n = 0; n < window; n++, i = next_slot(t, i))
        if (holds(&t->slots[i], key))
            return true;
    return false;
}

const struct tbbt_nfsheur_entry *tbbt_nfsheur_slot(const struct tbbt_nfsheur *t, uint32_t i)
{
    return i < t->size ? &t->slots[i] : NULL;
}

uint64_t tbbt_nfsheur_ejections(const struct tbbt_nfsheur *t)
{
    return t->ejections;
}

uint64_t tbbt_nfsheur_tick(const struct tbbt_nfsheur *t)
{
    return t->tick;
}
