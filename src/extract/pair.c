/* SPDX-License-Identifier: MIT */
/*
 * Call/reply pairing in call order (see pair.h).
 *
 * Flows (a key's addresses and ports) are numbered on first sight and kept
 * for the pairer's life, each with its XID progression: an array by number,
 * and a hash table of their keys for tbbt__pairer_flow().  An exchange is
 * then the 64-bit word flow << 32 | XID: compared as one word, placed in
 * tables by its XXH3 hash, and its own exact fingerprint.
 *
 * Pending exchanges sit in a ring in arrival order (each with a sequence
 * number; the ring doubles when full) and, while open, in an open-addressing
 * table of (exchange word, sequence number) with linear probing.  Completed
 * exchanges are remembered in a direct-mapped cache of exchange words (the
 * newest of a slot wins) so late retransmissions are recognized.  Clients
 * mostly number their calls in sequence, so the slot of an exchange is chosen
 * per block of 8 XIDs of its flow (a 64-byte cache line) and by the XID within
 * the block: a flow's consecutive exchanges share a line, instead of each
 * missing the CPU caches at a random slot, while blocks spread over the cache
 * as randomly as exchanges did.  Nothing is allocated per exchange once the
 * ring and the table have grown to the working set.
 */
#include "extract/pair.h"

#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "util/hash.h"

#define RECENT_SLOTS 65536     /* completed exchanges remembered for duplicate detection */
#define RECENT_BLOCK_BITS 13   /* RECENT_SLOTS / 8 blocks of 8 slots */
#define XID_WINDOW 4096        /* XID jumps up to this size are losses, larger ones restarts */
#define RING_MIN 64
#define OPEN_MIN 128

G_STATIC_ASSERT(sizeof(struct tbbt__pair_key) == 48);

struct pending {
    uint64_t fx;               /* flow << 32 | XID */
    uint64_t call_ns;
    uint64_t tag;              /* the caller's */
    uint32_t slot;             /* its slot in the cache of completed exchanges */
    bool done;                 /* reply seen */
    bool in_hash;              /* still in the open-call table */
};

/* An open call: its exchange word and its sequence number + 1 (0 = empty slot). */
struct open_slot {
    uint64_t fx;
    uint64_t seq1;
};

/* A flow: one client's port talking to one server port, and its XIDs. */
struct flow {
    struct tbbt__pair_key key;   /* a pair key with XID 0 */
    uint64_t seed;               /* picks its blocks in the cache of completed exchanges */
    uint32_t last;
    uint64_t calls;
    int64_t lost;
};

struct tbbt__pairer {
    uint64_t timeout_ns;
    uint32_t max_pending;
    tbbt__pair_emit_cb emit;
    void *arg;
    struct pending *ring;      /* sequence numbers [head, tail) at seq & ring_mask */
    uint64_t ring_mask, head, tail;
    struct open_slot *open;    /* open calls, by exchange hash */
    uint64_t open_mask, open_n;
    uint64_t *recent;          /* RECENT_SLOTS exchange words of completed calls, 0 = empty */
    GPtrArray *flows;          /* flow number n at index n - 1 (owned) */
    GHashTable *by_key;        /* &flow->key -> flow number */
    uint32_t last_flow;        /* the flow tbbt__pairer_flow() found last */
    uint64_t now_ns;           /* latest capture time seen */
    struct tbbt__pair_stats st;
};

/* ---- hashing ----------------------------------------------------------------- */

/* The hash of an exchange word, for its table slot. */
static uint64_t fx_hash(uint64_t fx)
{
    return tbbt_hash(&fx, sizeof(fx), 0);
}

static uint64_t exchange(uint32_t flow, uint32_t xid)
{
    return (uint64_t)flow << 32 | xid;
}

static guint key_hash_g(gconstpointer p)
{
    uint64_t h = tbbt_hash(p, sizeof(struct tbbt__pair_key), 0);

    return (guint)(h ^ h >> 32);
}

static gboolean key_equal_g(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct tbbt__pair_key)) == 0;
}

/* ---- life ------------------------------------------------------------------- */

struct tbbt__pairer *tbbt__pairer_new(uint64_t timeout_ns, uint32_t max_pending,
                                      tbbt__pair_emit_cb emit, void *arg)
{
    struct tbbt__pairer *p = g_new0(struct tbbt__pairer, 1);

    p->timeout_ns = timeout_ns;
    p->max_pending = max_pending ? max_pending : 1;
    p->emit = emit;
    p->arg = arg;
    p->ring = g_new(struct pending, RING_MIN);
    p->ring_mask = RING_MIN - 1;
    p->open = g_new0(struct open_slot, OPEN_MIN);
    p->open_mask = OPEN_MIN - 1;
    p->recent = g_new0(uint64_t, RECENT_SLOTS);
    p->flows = g_ptr_array_new_with_free_func(g_free);
    p->by_key = g_hash_table_new(key_hash_g, key_equal_g);
    return p;
}

void tbbt__pairer_free(struct tbbt__pairer *p)
{
    if (!p)
        return;
    g_free(p->ring);
    g_free(p->open);
    g_free(p->recent);
    g_ptr_array_free(p->flows, TRUE);
    g_hash_table_destroy(p->by_key);
    g_free(p);
}

static struct pending *at(const struct tbbt__pairer *p, uint64_t seq)
{
    return &p->ring[seq & p->ring_mask];
}

static void ring_grow(struct tbbt__pairer *p)
{
    uint64_t cap = (p->ring_mask + 1) * 2;
    struct pending *n = g_new(struct pending, cap);

    for (uint64_t s = p->head; s != p->tail; s++)
        n[s & (cap - 1)] = *at(p, s);
    g_free(p->ring);
    p->ring = n;
    p->ring_mask = cap - 1;
}

/* ---- flows ------------------------------------------------------------------- */

static struct flow *flow_at(const struct tbbt__pairer *p, uint32_t flow)
{
    g_assert(flow > 0 && flow <= p->flows->len);
    return g_ptr_array_index(p->flows, flow - 1);
}

uint32_t tbbt__pairer_flow(struct tbbt__pairer *p, const struct tbbt__pair_key *k)
{
    struct tbbt__pair_key sk = *k;
    struct flow *f;
    gpointer v;

    sk.xid = 0;
    if (p->last_flow && memcmp(&flow_at(p, p->last_flow)->key, &sk, sizeof(sk)) == 0)
        return p->last_flow;
    v = g_hash_table_lookup(p->by_key, &sk);
    if (v)
        return p->last_flow = GPOINTER_TO_UINT(v);
    g_assert(p->flows->len < UINT32_MAX);
    f = g_new0(struct flow, 1);
    f->key = sk;
    f->seed = tbbt_hash(&sk, sizeof(sk), 0);
    g_ptr_array_add(p->flows, f);
    g_hash_table_insert(p->by_key, &f->key, GUINT_TO_POINTER(p->flows->len));
    return p->last_flow = p->flows->len;
}

static void track_xid(struct flow *f, uint32_t xid)
{
    int32_t d;

    if (f->calls++ == 0) {
        f->last = xid;      /* the flow may have been numbered by a reply */
        return;
    }
    d = (int32_t)(xid - f->last);
    if (d > 0 && d <= XID_WINDOW) {
        f->lost += d - 1;
        f->last = xid;
    } else if (d < 0 && d > -XID_WINDOW) {
        if (f->lost > 0)
            f->lost--;      /* a late call fills a hole counted before */
    } else if (d != 0) {
        f->last = xid;      /* a new XID sequence (client restart, random start) */
    }
}

/* ---- the open-call table ---------------------------------------------------- */

static uint64_t open_home(const struct tbbt__pairer *p, uint64_t fx)
{
    return fx_hash(fx) & p->open_mask;
}

/* Slot of the open call of exchange fx, or -1. */
static int64_t open_find(const struct tbbt__pairer *p, uint64_t fx)
{
    for (uint64_t i = open_home(p, fx);; i = (i + 1) & p->open_mask) {
        const struct open_slot *s = &p->open[i];
        if (!s->seq1)
            return -1;
        if (s->fx == fx)
            return (int64_t)i;
    }
}

static void open_insert(struct open_slot *tab, uint64_t mask, uint64_t fx, uint64_t seq1)
{
    uint64_t i = fx_hash(fx) & mask;

    while (tab[i].seq1)
        i = (i + 1) & mask;
    tab[i].fx = fx;
    tab[i].seq1 = seq1;
}

static void open_put(struct tbbt__pairer *p, uint64_t fx, uint64_t seq)
{
    if ((p->open_n + 1) * 2 > p->open_mask + 1) {
        uint64_t size = (p->open_mask + 1) * 2;
        struct open_slot *n = g_new0(struct open_slot, size);
        for (uint64_t i = 0; i <= p->open_mask; i++)
            if (p->open[i].seq1)
                open_insert(n, size - 1, p->open[i].fx, p->open[i].seq1);
        g_free(p->open);
        p->open = n;
        p->open_mask = size - 1;
    }
    open_insert(p->open, p->open_mask, fx, seq + 1);
    p->open_n++;
}

/* Empties slot i, moving later entries of its probe run back (no tombstones). */
static void open_del(struct tbbt__pairer *p, uint64_t i)
{
    uint64_t mask = p->open_mask, j = i;

    p->open_n--;
    for (;;) {
        p->open[i].seq1 = 0;
        for (;;) {
            j = (j + 1) & mask;
            if (!p->open[j].seq1)
                return;
            uint64_t home = open_home(p, p->open[j].fx);
            /* The entry at j may move to i unless its home lies cyclically in (i, j]. */
            bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays)
                break;
        }
        p->open[i] = p->open[j];
        i = j;
    }
}

/* ---- completed exchanges ---------------------------------------------------- */

/* The slot of XID xid of flow f in the cache of completed exchanges. */
static uint32_t recent_slot(const struct flow *f, uint32_t xid)
{
    uint64_t block = ((f->seed ^ (xid >> 3)) * 0x9e3779b97f4a7c15ull) >> (64 - RECENT_BLOCK_BITS);

    G_STATIC_ASSERT(RECENT_SLOTS == 8u << RECENT_BLOCK_BITS);
    return (uint32_t)(block << 3 | (xid & 7));
}

/* ---- calls, replies, emission -------------------------------------------------- */

bool tbbt__pairer_call_flow(struct tbbt__pairer *p, uint32_t flow, uint32_t xid, uint64_t ts_ns,
                            uint64_t tag)
{
    struct flow *f = flow_at(p, flow);
    uint64_t fx = exchange(flow, xid);
    uint32_t slot = recent_slot(f, xid);

    p->st.calls++;
    if (ts_ns > p->now_ns)
        p->now_ns = ts_ns;
    if (p->recent[slot] == fx || open_find(p, fx) >= 0) {
        p->st.duplicate_calls++;
        return false;
    }
    track_xid(f, xid);
    if ((xid & 7) == 4)   /* the flow's next block, before its calls come */
        __builtin_prefetch(&p->recent[recent_slot(f, xid + 4)]);
    if (p->tail - p->head > p->ring_mask)
        ring_grow(p);
    *at(p, p->tail) = (struct pending){ .fx = fx, .call_ns = ts_ns, .tag = tag, .slot = slot,
                                        .in_hash = true };
    open_put(p, fx, p->tail);
    p->tail++;
    return true;
}

bool tbbt__pairer_call(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t ts_ns,
                       uint64_t tag)
{
    return tbbt__pairer_call_flow(p, tbbt__pairer_flow(p, k), k->xid, ts_ns, tag);
}

bool tbbt__pairer_reply_flow(struct tbbt__pairer *p, uint32_t flow, uint32_t xid,
                             uint64_t ts_ns, uint64_t *tag)
{
    uint64_t fx = exchange(flow, xid);
    int64_t i;
    struct pending *e;

    p->st.replies++;
    if (ts_ns > p->now_ns)
        p->now_ns = ts_ns;
    i = open_find(p, fx);
    if (i < 0) {
        if (p->recent[recent_slot(flow_at(p, flow), xid)] == fx)
            p->st.duplicate_replies++;
        else
            p->st.unmatched_replies++;
        return false;
    }
    e = at(p, p->open[i].seq1 - 1);
    open_del(p, (uint64_t)i);
    e->in_hash = false;
    p->recent[e->slot] = fx;
    e->done = true;
    p->st.pairs++;
    *tag = e->tag;
    return true;
}

bool tbbt__pairer_reply(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t ts_ns,
                        uint64_t *tag)
{
    return tbbt__pairer_reply_flow(p, tbbt__pairer_flow(p, k), k->xid, ts_ns, tag);
}

static void emit_head(struct tbbt__pairer *p)
{
    struct pending *e = at(p, p->head);

    if (!e->done) {
        p->st.unmatched_calls++;
        if (e->in_hash) {
            int64_t i = open_find(p, e->fx);
            g_assert(i >= 0);
            open_del(p, (uint64_t)i);
            e->in_hash = false;
            p->recent[e->slot] = e->fx;   /* a later reply is late, not new */
        }
    }
    p->head++;
    p->emit(e->tag, e->done, p->arg);
}

void tbbt__pairer_drain(struct tbbt__pairer *p)
{
    while (p->head != p->tail) {
        const struct pending *e = at(p, p->head);
        if (!e->done && e->call_ns + p->timeout_ns >= p->now_ns &&
            p->tail - p->head <= p->max_pending)
            break;
        emit_head(p);
    }
}

void tbbt__pairer_finish(struct tbbt__pairer *p)
{
    while (p->head != p->tail)
        emit_head(p);
    p->st.estimated_lost_calls = 0;
    for (guint i = 0; i < p->flows->len; i++) {
        const struct flow *f = g_ptr_array_index(p->flows, i);
        p->st.estimated_lost_calls += f->lost > 0 ? (uint64_t)f->lost : 0;
    }
}

const struct tbbt__pair_stats *tbbt__pairer_stats(const struct tbbt__pairer *p)
{
    return &p->st;
}

void tbbt__pairer_foreach_client(const struct tbbt__pairer *p, tbbt__pair_client_cb cb,
                                 void *arg)
{
    GHashTable *by_client = g_hash_table_new_full(key_hash_g, key_equal_g, NULL, g_free);
    GHashTableIter it;
    gpointer v;

    /* Fold flows (client address and port) into clients (address). */
    for (guint i = 0; i < p->flows->len; i++) {
        const struct flow *f = g_ptr_array_index(p->flows, i);
        struct tbbt__pair_key ck = {.af = f->key.af};
        struct flow *c;

        if (f->calls == 0)
            continue;          /* only replies seen: not a client */
        memcpy(ck.caddr, f->key.caddr, 16);
        c = g_hash_table_lookup(by_client, &ck);
        if (!c) {
            c = g_new0(struct flow, 1);
            c->key = ck;
            g_hash_table_insert(by_client, &c->key, c);
        }
        c->calls += f->calls;
        c->lost += f->lost > 0 ? f->lost : 0;
    }
    g_hash_table_iter_init(&it, by_client);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct flow *c = v;
        cb(c->key.af, c->key.caddr, c->calls, (uint64_t)c->lost, arg);
    }
    g_hash_table_destroy(by_client);
}
