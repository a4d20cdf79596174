/* SPDX-License-Identifier: MIT */
/*
 * Call/reply pairing in call order (see pair.h).  Pending exchanges sit in a
 * ring in arrival order (each with a sequence number; the ring doubles when
 * full) and, while open, in an open-addressing table of (key hash, sequence
 * number) with linear probing.  Completed keys are remembered in a
 * direct-mapped cache of 64-bit key hashes (the newest key of a slot wins) so
 * late retransmissions are recognized; two different keys are confused only
 * if their 64-bit hashes agree.  Clients mostly number their calls in
 * sequence, so the slot of a key is chosen per block of 8 XIDs of its stream
 * (a 64-byte cache line) and by the XID within the block: a stream's
 * consecutive exchanges share a line, instead of each missing the CPU caches
 * at a random slot, while blocks spread over the cache as randomly as keys
 * did.  Per-stream XID tracking has a direct-mapped cache in front of its
 * hash table.  Nothing is allocated per exchange once the ring
 * and the table have grown to the working set.
 */
#include "extract/pair.h"
#include "util/hash.h"

#include <glib.h>
#include <stddef.h>
#include <string.h>

#define RECENT_SLOTS 65536     /* completed exchanges remembered for duplicate detection */
#define RECENT_BLOCK_BITS 13   /* RECENT_SLOTS / 8 blocks of 8 slots */
#define XID_WINDOW 4096        /* XID jumps up to this size are losses, larger ones restarts */
#define STREAM_FRONT 64        /* direct-mapped cache of XID streams */
#define RING_MIN 64
#define OPEN_MIN 128

G_STATIC_ASSERT(sizeof(struct tbbt__pair_key) == 48);
G_STATIC_ASSERT(offsetof(struct tbbt__pair_key, af) == 40);
G_STATIC_ASSERT(offsetof(struct tbbt__pair_key, xid) == 32);

struct pending {
    struct tbbt__pair_key key;
    uint64_t hash;             /* key_hash() of key */
    uint32_t slot;             /* its slot in the cache of completed keys */
    uint64_t call_ns;
    uint64_t tag;              /* the caller's */
    bool done;                 /* reply seen */
    bool in_hash;              /* still in the open-call table */
};

/* An open call: its key hash and its sequence number + 1 (0 = empty slot). */
struct open_slot {
    uint64_t hash;
    uint64_t seq1;
};

/* XIDs of one client stream (client address and port, server address). */
struct xid_stream {
    struct tbbt__pair_key skey;  /* the stream key: a pair key with XID 0 */
    uint64_t hash;               /* key_hash() of skey */
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
    struct open_slot *open;    /* open calls, by key hash */
    uint64_t open_mask, open_n;
    uint64_t *recent;          /* RECENT_SLOTS hashes of completed keys, 0 = empty */
    GHashTable *streams;       /* &skey -> struct xid_stream */
    struct xid_stream *stream_front[STREAM_FRONT];
    uint64_t now_ns;           /* latest capture time seen */
    struct tbbt__pair_stats st;
};

/* ---- hashing ----------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return h ^ h >> 32;
}

/*
 * The key's 48 bytes as six words: four of addresses, one of XID and ports
 * (tail_word()), one of the family.  This hashes all but the XID word.
 */
static uint64_t addr_hash(const struct tbbt__pair_key *k)
{
    return tbbt_hash(k, 32, k->af);
}

/* The bits of the key's last word (below) that hold the XID (its first 4 bytes). */
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
#define XID_BITS 0x00000000ffffffffull
#else
#define XID_BITS 0xffffffff00000000ull
#endif

/* The key's fifth word (XID, ports), with the XID as 0 unless with_xid. */
static uint64_t tail_word(const struct tbbt__pair_key *k, bool with_xid)
{
    uint64_t t;

    memcpy(&t, (const uint8_t *)k + 32, sizeof(t));
    return with_xid ? t : t & ~XID_BITS;
}

static uint64_t finish_hash(uint64_t ah, uint64_t tail)
{
    uint64_t h = mix(ah, tail);

    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ h >> 33;
}

static uint64_t key_hash(const struct tbbt__pair_key *k)
{
    return finish_hash(addr_hash(k), tail_word(k, true));
}

/* The hash of k's stream: the key with XID 0 (ah: addr_hash(k)). */
static uint64_t stream_hash(uint64_t ah, const struct tbbt__pair_key *k)
{
    return finish_hash(ah, tail_word(k, false));
}

static bool key_equal(const struct tbbt__pair_key *a, const struct tbbt__pair_key *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

static guint stream_hash_g(gconstpointer p)
{
    return (guint)key_hash(p);
}

static gboolean stream_equal_g(gconstpointer a, gconstpointer b)
{
    return key_equal(a, b);
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
    p->streams = g_hash_table_new_full(stream_hash_g, stream_equal_g, NULL, g_free);
    return p;
}

void tbbt__pairer_free(struct tbbt__pairer *p)
{
    if (!p)
        return;
    g_free(p->ring);
    g_free(p->open);
    g_free(p->recent);
    g_hash_table_destroy(p->streams);
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

/* ---- the open-call table ---------------------------------------------------- */

/* Slot of the open call with key k (hash h), or -1. */
static int64_t open_find(const struct tbbt__pairer *p, const struct tbbt__pair_key *k,
                         uint64_t h)
{
    for (uint64_t i = h & p->open_mask;; i = (i + 1) & p->open_mask) {
        const struct open_slot *s = &p->open[i];
        if (!s->seq1)
            return -1;
        if (s->hash == h && key_equal(&at(p, s->seq1 - 1)->key, k))
            return (int64_t)i;
    }
}

/* Slot of the open call with sequence number seq (which is in the table). */
static uint64_t open_slot_of(const struct tbbt__pairer *p, uint64_t h, uint64_t seq)
{
    uint64_t i = h & p->open_mask;

    while (p->open[i].seq1 != seq + 1)
        i = (i + 1) & p->open_mask;
    return i;
}

static void open_insert(struct open_slot *tab, uint64_t mask, uint64_t h, uint64_t seq1)
{
    uint64_t i = h & mask;

    while (tab[i].seq1)
        i = (i + 1) & mask;
    tab[i].hash = h;
    tab[i].seq1 = seq1;
}

static void open_put(struct tbbt__pairer *p, uint64_t h, uint64_t seq)
{
    if ((p->open_n + 1) * 2 > p->open_mask + 1) {
        uint64_t size = (p->open_mask + 1) * 2;
        struct open_slot *n = g_new0(struct open_slot, size);
        for (uint64_t i = 0; i <= p->open_mask; i++)
            if (p->open[i].seq1)
                open_insert(n, size - 1, p->open[i].hash, p->open[i].seq1);
        g_free(p->open);
        p->open = n;
        p->open_mask = size - 1;
    }
    open_insert(p->open, p->open_mask, h, seq + 1);
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
            uint64_t home = p->open[j].hash & mask;
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

/* The slot of XID xid of the stream with hash sh in the cache of completed keys. */
static uint32_t recent_slot(uint64_t sh, uint32_t xid)
{
    uint64_t block = ((sh ^ (xid >> 3)) * 0x9e3779b97f4a7c15ull) >> (64 - RECENT_BLOCK_BITS);

    G_STATIC_ASSERT(RECENT_SLOTS == 8u << RECENT_BLOCK_BITS);
    return (uint32_t)(block << 3 | (xid & 7));
}

static uint64_t fingerprint(uint64_t h)
{
    return h ? h : 1;   /* 0 marks an empty slot */
}

static void remember(struct tbbt__pairer *p, uint32_t slot, uint64_t h)
{
    p->recent[slot] = fingerprint(h);
}

static bool recently_done(const struct tbbt__pairer *p, uint32_t slot, uint64_t h)
{
    return p->recent[slot] == fingerprint(h);
}

/* ---- XID progression --------------------------------------------------------- */

static struct xid_stream *find_stream(struct tbbt__pairer *p, const struct tbbt__pair_key *k,
                                      uint64_t sh)
{
    struct xid_stream **slot = &p->stream_front[sh & (STREAM_FRONT - 1)];
    struct xid_stream *s = *slot;
    struct tbbt__pair_key sk;

    if (s && s->hash == sh && memcmp(s->skey.caddr, k->caddr, 32) == 0 &&
        tail_word(&s->skey, false) == tail_word(k, false) && s->skey.af == k->af)
        return s;
    sk = *k;
    sk.xid = 0;
    s = g_hash_table_lookup(p->streams, &sk);
    if (!s) {
        s = g_new0(struct xid_stream, 1);
        s->skey = sk;
        s->hash = sh;
        s->last = k->xid;
        g_hash_table_insert(p->streams, &s->skey, s);
    }
    return *slot = s;
}

static void track_xid(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t sh)
{
    struct xid_stream *s = find_stream(p, k, sh);
    int32_t d;

    if (s->calls++ == 0)
        return;
    d = (int32_t)(k->xid - s->last);
    if (d > 0 && d <= XID_WINDOW) {
        s->lost += d - 1;
        s->last = k->xid;
    } else if (d < 0 && d > -XID_WINDOW) {
        if (s->lost > 0)
            s->lost--;      /* a late call fills a hole counted before */
    } else if (d != 0) {
        s->last = k->xid;   /* a new XID sequence (client restart, random start) */
    }
}

/* ---- calls, replies, emission -------------------------------------------------- */

bool tbbt__pairer_call(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t ts_ns,
                       uint64_t tag)
{
    uint64_t ah = addr_hash(k), h = finish_hash(ah, tail_word(k, true));
    uint64_t sh = stream_hash(ah, k);
    uint32_t slot = recent_slot(sh, k->xid);
    struct pending *e;

    p->st.calls++;
    if (ts_ns > p->now_ns)
        p->now_ns = ts_ns;
    if (recently_done(p, slot, h) || open_find(p, k, h) >= 0) {
        p->st.duplicate_calls++;
        return false;
    }
    track_xid(p, k, sh);
    if ((k->xid & 7) == 4)   /* the stream's next block, before its calls come */
        __builtin_prefetch(&p->recent[recent_slot(sh, k->xid + 4)]);
    if (p->tail - p->head > p->ring_mask)
        ring_grow(p);
    e = at(p, p->tail);
    e->key = *k;
    e->hash = h;
    e->slot = slot;
    e->call_ns = ts_ns;
    e->tag = tag;
    e->done = false;
    e->in_hash = true;
    open_put(p, h, p->tail);
    p->tail++;
    return true;
}

bool tbbt__pairer_reply(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t ts_ns,
                        uint64_t *tag)
{
    uint64_t ah = addr_hash(k), h = finish_hash(ah, tail_word(k, true));
    int64_t i;
    struct pending *e;

    p->st.replies++;
    if (ts_ns > p->now_ns)
        p->now_ns = ts_ns;
    i = open_find(p, k, h);
    if (i < 0) {
        if (recently_done(p, recent_slot(stream_hash(ah, k), k->xid), h))
            p->st.duplicate_replies++;
        else
            p->st.unmatched_replies++;
        return false;
    }
    e = at(p, p->open[i].seq1 - 1);
    open_del(p, (uint64_t)i);
    e->in_hash = false;
    remember(p, e->slot, h);
    e->done = true;
    p->st.pairs++;
    *tag = e->tag;
    return true;
}

static void emit_head(struct tbbt__pairer *p)
{
    struct pending *e = at(p, p->head);

    if (!e->done) {
        p->st.unmatched_calls++;
        if (e->in_hash) {
            open_del(p, open_slot_of(p, e->hash, p->head));
            e->in_hash = false;
            remember(p, e->slot, e->hash);   /* a later reply is late, not new */
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
    GHashTableIter it;
    gpointer v;

    while (p->head != p->tail)
        emit_head(p);
    p->st.estimated_lost_calls = 0;
    g_hash_table_iter_init(&it, p->streams);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct xid_stream *s = v;
        p->st.estimated_lost_calls += s->lost > 0 ? (uint64_t)s->lost : 0;
    }
}

const struct tbbt__pair_stats *tbbt__pairer_stats(const struct tbbt__pairer *p)
{
    return &p->st;
}

void tbbt__pairer_foreach_client(const struct tbbt__pairer *p, tbbt__pair_client_cb cb,
                                 void *arg)
{
    GHashTable *by_client = g_hash_table_new_full(stream_hash_g, stream_equal_g, NULL, g_free);
    GHashTableIter it;
    gpointer v;

    /* Fold streams (client address and port) into clients (address). */
    g_hash_table_iter_init(&it, p->streams);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct xid_stream *s = v;
        struct tbbt__pair_key ck = {.af = s->skey.af};
        struct xid_stream *c;

        memcpy(ck.caddr, s->skey.caddr, 16);
        c = g_hash_table_lookup(by_client, &ck);
        if (!c) {
            c = g_new0(struct xid_stream, 1);
            c->skey = ck;
            g_hash_table_insert(by_client, &c->skey, c);
        }
        c->calls += s->calls;
        c->lost += s->lost > 0 ? s->lost : 0;
    }
    g_hash_table_iter_init(&it, by_client);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct xid_stream *c = v;
        cb(c->skey.af, c->skey.caddr, c->calls, (uint64_t)c->lost, arg);
    }
    g_hash_table_destroy(by_client);
}
