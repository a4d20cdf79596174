/* SPDX-License-Identifier: MIT */
/*
 * IP fragment reassembly for the packet decoder (RFC 791 3.2 for IPv4,
 * RFC 8200 4.5 for IPv6).  A datagram is identified by (af, source,
 * destination, protocol, identification).  Fragments are kept in offset
 * order with their captured bytes; one that overlaps another (duplicates
 * included) or does not fit the datagram is dropped and counted.  Memory is
 * bounded: at most TBBT__CAP_FRAG_DGRAMS datagrams and TBBT__CAP_FRAG_BYTES
 * buffered, the oldest going first, and a datagram not completed within
 * TBBT__CAP_FRAG_NS of capture time is dropped.
 *
 * A fragment cut by the snap length still counts with its wire length; the
 * rebuilt datagram's captured bytes end at the first byte not captured.
 */
#include "capture/capture-int.h"

#include <string.h>

#define IP_MAXPACKET 65535u

struct frag_key {
    uint8_t af;
    uint8_t proto;
    uint8_t pad[2];
    uint32_t id;
    uint8_t src[16], dst[16];
};

struct frag_piece {
    uint32_t off, wire, cap;
};

struct dgram {
    struct frag_key key;            /* hash key: first member */
    struct tbbt_dlink age;       /* in tbbt__cap_frags.ages */
    uint64_t first_ts;              /* arrival of its first fragment (expiry) */
    uint64_t ts0;                   /* time of the fragment at offset 0 */
    uint32_t total;                 /* payload length, once the last fragment came */
    bool have_last;
    uint32_t got;                   /* wire bytes received */
    uint32_t npieces;
    struct frag_piece pieces[TBBT__CAP_FRAG_PIECES];
    uint8_t *buf;
    uint32_t buf_len;
};

struct tbbt__cap_frags {
    GHashTable *h;                  /* &key -> struct dgram */
    struct tbbt_dlist ages;     /* the datagrams, oldest first */
    uint32_t count;
    size_t bytes;
};

static guint key_hash(gconstpointer k)
{
    const uint8_t *p = k;
    guint h = 2166136261u;

    for (size_t i = 0; i < sizeof(struct frag_key); i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct frag_key)) == 0;
}

struct tbbt__cap_frags *tbbt__cap_frags_new(void)
{
    struct tbbt__cap_frags *f = g_new0(struct tbbt__cap_frags, 1);

    f->h = g_hash_table_new(key_hash, key_equal);
    return f;
}

/* The datagram waiting longest, or NULL. */
static struct dgram *oldest(const struct tbbt__cap_frags *f)
{
    return TBBT_DLIST_ENTRY(f->ages.first, struct dgram, age);
}

/* Unlinks and frees a datagram. */
static void dgram_free(struct tbbt__cap_frags *f, struct dgram *g)
{
    g_hash_table_remove(f->h, &g->key);
    tbbt_dlist_unlink(&f->ages, &g->age);
    f->count--;
    f->bytes -= g->buf_len;
    g_free(g->buf);
    g_free(g);
}

static void dgram_drop(struct tbbt_capdec *d, struct dgram *g)
{
    d->st.ip_frag_dropped += g->npieces;
    dgram_free(d->frags, g);
}

void tbbt__cap_frags_flush(struct tbbt_capdec *d)
{
    while (d->frags->ages.first)
        dgram_drop(d, oldest(d->frags));
}

void tbbt__cap_frags_free(struct tbbt_capdec *d, struct tbbt__cap_frags *f)
{
    if (!f)
        return;
    tbbt__cap_frags_flush(d);
    g_hash_table_destroy(f->h);
    g_free(f);
}

static struct dgram *dgram_get(struct tbbt_capdec *d, const struct frag_key *k, uint64_t ts)
{
    struct tbbt__cap_frags *f = d->frags;
    struct dgram *g = g_hash_table_lookup(f->h, k);

    if (g)
        return g;
    while (oldest(f) && (f->count >= TBBT__CAP_FRAG_DGRAMS || f->bytes > TBBT__CAP_FRAG_BYTES))
        dgram_drop(d, oldest(f));
    g = g_new0(struct dgram, 1);
    g->key = *k;
    g->first_ts = ts;
    tbbt_dlist_push(&f->ages, &g->age);
    f->count++;
    g_hash_table_insert(f->h, &g->key, g);
    return g;
}

/* Index where a piece at off goes, or -1 if [off, off+wire) overlaps a piece. */
static int place(const struct dgram *g, uint32_t off, uint32_t wire)
{
    uint32_t i = 0;

    while (i < g->npieces && g->pieces[i].off < off)
        i++;
    if (i < g->npieces && g->pieces[i].off < off + wire)
        return -1;
    if (i > 0 && g->pieces[i - 1].off + g->pieces[i - 1].wire > off)
        return -1;
    return (int)i;
}

/* False if the fragment contradicts what the datagram already has. */
static bool fits(const struct dgram *g, uint32_t off, uint32_t wire, bool more)
{
    uint32_t end = off + wire;

    if (g->npieces >= TBBT__CAP_FRAG_PIECES)
        return false;
    if (g->have_last)
        return more ? end <= g->total : false;   /* a second last fragment */
    if (!more && g->npieces > 0) {
        const struct frag_piece *hi = &g->pieces[g->npieces - 1];
        return hi->off + hi->wire <= end;
    }
    return true;
}

static void store(struct tbbt__cap_frags *f, struct dgram *g, int at, uint32_t off,
                  const uint8_t *p, uint32_t cap, uint32_t wire)
{
    if (cap > 0 && off + cap > g->buf_len) {
        g->buf = g_realloc(g->buf, off + cap);
        f->bytes += off + cap - g->buf_len;
        g->buf_len = off + cap;
    }
    if (cap > 0)
        memcpy(g->buf + off, p, cap);
    memmove(&g->pieces[at + 1], &g->pieces[at], (g->npieces - (uint32_t)at) * sizeof g->pieces[0]);
    g->pieces[at] = (struct frag_piece){off, wire, cap};
    g->npieces++;
    g->got += wire;
}

/* All bytes are in: hand the datagram's payload to the next layer. */
static void complete(struct tbbt_capdec *d, struct dgram *g)
{
    struct tbbt__cap_ip ip = {g->key.af, g->key.src, g->key.dst};
    uint32_t prefix = 0;

    /* Pieces are sorted, disjoint and add up to total: they tile [0, total). */
    for (uint32_t i = 0; i < g->npieces; i++) {
        prefix += g->pieces[i].cap;
        if (g->pieces[i].cap < g->pieces[i].wire)
            break;
    }
    d->st.ip_reassembled++;
    if (ip.af == 4)
        tbbt__cap_l4(d, &ip, g->key.proto, g->buf, prefix, g->total, g->ts0);
    else
        tbbt__cap_ip6_chain(d, &ip, g->key.proto, g->buf, prefix, g->total, g->ts0, true);
    dgram_free(d->frags, g);
}

static void expire(struct tbbt_capdec *d, uint64_t ts)
{
    struct tbbt__cap_frags *f = d->frags;
    struct dgram *g;

    while ((g = oldest(f)) && ts > g->first_ts + TBBT__CAP_FRAG_NS)
        dgram_drop(d, g);
}

void tbbt__cap_frag_add(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint32_t id,
                        uint8_t proto, uint32_t off, bool more, const uint8_t *p, uint32_t cap,
                        uint32_t wire, uint64_t ts)
{
    struct frag_key k;
    struct dgram *g;
    size_t alen = ip->af == 4 ? 4 : 16;
    int at;

    d->st.ip_fragments++;
    expire(d, ts);
    if (wire == 0 || off + wire > IP_MAXPACKET || (more && wire % 8 != 0)) {
        d->st.ip_frag_dropped++;
        return;
    }
    memset(&k, 0, sizeof k);
    k.af = ip->af;
    k.proto = proto;
    k.id = id;
    memcpy(k.src, ip->src, alen);
    memcpy(k.dst, ip->dst, alen);
    g = dgram_get(d, &k, ts);
    at = place(g, off, wire);
    if (at < 0 || !fits(g, off, wire, more)) {
        d->st.ip_frag_dropped++;
        return;
    }
    store(d->frags, g, at, off, p, cap < wire ? cap : wire, wire);
    if (off == 0)
        g->ts0 = ts;
    if (!more) {
        g->have_last = true;
        g->total = off + wire;
    }
    if (g->have_last && g->got == g->total)
        complete(d, g);
}
