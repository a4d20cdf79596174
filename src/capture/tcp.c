/* SPDX-License-Identifier: MIT */
/*
 * TCP for the packet decoder: the header (RFC 9293 3.1), one stream per
 * direction of a connection keyed by its packed 4-tuple, and ordering of
 * segments by sequence number before rpcrec.c sees the bytes.
 *
 * Sequence space is counted in wire bytes (from the IP length), so a
 * segment whose payload was cut by the snap length still moves the stream
 * on by its full length.  Bytes already seen are trimmed (retransmissions);
 * segments ahead of a hole wait in a bounded, sorted list; a hole that is
 * not filled before that bound, a FIN or RST, idle expiry or the end of
 * input is declared a gap.  SYN restarts a stream, FIN tears down its
 * direction, RST both.  Streams idle for TBBT__CAP_IDLE_NS of capture time,
 * or the oldest beyond TBBT__CAP_MAX_STREAMS, are ended.  No checksums are
 * verified (captures taken on the sender carry offloaded, wrong ones).
 */
#include "capture/capture-int.h"
#include "util/buf.h"

#include <string.h>

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04

static guint flow_hash(gconstpointer k)
{
    const uint8_t *p = k;
    uint64_t h = 0x9e3779b97f4a7c15ull;

    for (size_t i = 0; i < sizeof(struct tbbt__cap_flow); i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return (guint)(h ^ h >> 32);
}

static gboolean flow_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct tbbt__cap_flow)) == 0;
}

void tbbt__cap_tcp_init(struct tbbt_capdec *d)
{
    G_STATIC_ASSERT(sizeof(struct tbbt__cap_flow) == 40);
    G_STATIC_ASSERT(TBBT__CAP_FRONT == 1u << 8);   /* front_slot() makes 8 bits */
    d->streams = g_hash_table_new(flow_hash, flow_equal);
}

/* ---- stream list --------------------------------------------------------- */

/* The least recently used stream, or NULL. */
static struct tbbt__cap_stream *lru_oldest(const struct tbbt_capdec *d)
{
    return TBBT_DLIST_ENTRY(d->ages.first, struct tbbt__cap_stream, age);
}

static void touch(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint64_t ts)
{
    s->last_ts = ts;
    tbbt_dlist_touch(&d->ages, &s->age);
}

/* ---- ordering -------------------------------------------------------------- */

static void declare_gap(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t n)
{
    d->st.tcp_gaps++;
    d->st.tcp_gap_bytes += n;
    tbbt__cap_rec_gap(d, s, n);
    s->next_seq += n;
}

/* Bytes at seq, which is at or before next_seq: trims what was seen, feeds the rest. */
static void in_order(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t seq,
                     const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts)
{
    uint32_t old = s->next_seq - seq;

    if (old) {
        d->st.tcp_retransmits++;
        if (old >= wire)
            return;
        if (old >= cap) {
            cap = 0;
        } else {
            p += old;
            cap -= old;
        }
        wire -= old;
    }
    tbbt__cap_rec_feed(d, s, p, cap, wire, ts);
    s->next_seq += wire;
}

/* Feeds buffered segments that are now in order; with force, declares holes lost. */
static void drain(struct tbbt_capdec *d, struct tbbt__cap_stream *s, bool force)
{
    struct tbbt__cap_seg *g;

    while ((g = s->ooo) != NULL) {
        int32_t ahead = (int32_t)(g->seq - s->next_seq);
        if (ahead > 0) {
            if (!force)
                break;
            declare_gap(d, s, (uint32_t)ahead);
        }
        s->ooo = g->next;
        s->ooo_count--;
        s->ooo_bytes -= g->cap;
        d->ooo_total -= g->cap;
        in_order(d, s, g->seq, g->data, g->cap, g->wire, g->ts);
        g_free(g);
    }
}

static bool over_bounds(const struct tbbt_capdec *d, const struct tbbt__cap_stream *s)
{
    return s->ooo_count > TBBT__CAP_OOO_SEGS || s->ooo_bytes > TBBT__CAP_OOO_BYTES ||
           d->ooo_total > TBBT__CAP_OOO_TOTAL;
}

/* A segment ahead of a hole: kept (copied) in sequence order. */
static void hold(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t seq,
                 const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts)
{
    struct tbbt__cap_seg **pp = &s->ooo, *g;
    uint32_t rel = seq - s->next_seq;

    while (*pp && (*pp)->seq - s->next_seq < rel)
        pp = &(*pp)->next;
    if (*pp && (*pp)->seq == seq && (*pp)->wire >= wire) {
        d->st.tcp_retransmits++;   /* a copy of a held segment */
        return;
    }
    d->st.tcp_out_of_order++;
    g = g_malloc(sizeof *g + cap);
    g->seq = seq;
    g->wire = wire;
    g->cap = cap;
    g->ts = ts;
    if (cap)
        memcpy(g->data, p, cap);
    g->next = *pp;
    *pp = g;
    s->ooo_count++;
    s->ooo_bytes += cap;
    d->ooo_total += cap;
    /* Too much held: the first hole will not be filled. */
    while (s->ooo && over_bounds(d, s)) {
        declare_gap(d, s, s->ooo->seq - s->next_seq);
        drain(d, s, false);
    }
}

static void segment(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t seq,
                    const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts)
{
    if (!s->have_seq) {
        s->have_seq = true;
        s->next_seq = seq;
    }
    if ((int32_t)(seq - s->next_seq) > 0) {
        hold(d, s, seq, p, cap, wire, ts);
        return;
    }
    in_order(d, s, seq, p, cap, wire, ts);
    if (s->ooo)
        drain(d, s, false);
}

/* ---- stream life ----------------------------------------------------------- */

/* Declares every hole lost, delivers what is left, resets the parser. */
static void stream_end(struct tbbt_capdec *d, struct tbbt__cap_stream *s)
{
    drain(d, s, true);
    tbbt__cap_rec_finish(d, s);
    s->have_seq = false;
}

/* Slot of a flow in the stream cache: ports and the outer address words, mixed. */
static uint32_t front_slot(const struct tbbt__cap_flow *k)
{
    uint32_t a, a2, b, b2, h;

    memcpy(&a, k->src, 4);
    memcpy(&a2, k->src + 12, 4);   /* IPv6: the host part; IPv4: 0 */
    memcpy(&b, k->dst, 4);
    memcpy(&b2, k->dst + 12, 4);
    h = (k->sport * 0x9e3779b1u) ^ (k->dport * 0x85ebca6bu) ^ (a ^ a2) ^
        ((b ^ b2) * 0xc2b2ae35u);
    h ^= h >> 15;
    return (h * 0x27d4eb2fu) >> 24;   /* 8 bits: TBBT__CAP_FRONT slots */
}

/* Finds a stream, trying the direct-mapped cache first. */
static struct tbbt__cap_stream *lookup(struct tbbt_capdec *d, const struct tbbt__cap_flow *k)
{
    struct tbbt__cap_stream **slot = &d->front[front_slot(k)];
    struct tbbt__cap_stream *s = *slot;

    if (s && memcmp(&s->key, k, sizeof *k) == 0)
        return s;
    s = g_hash_table_lookup(d->streams, k);
    if (s)
        *slot = s;
    return s;
}

static void teardown(struct tbbt_capdec *d, struct tbbt__cap_stream *s)
{
    stream_end(d, s);
    if (d->front[front_slot(&s->key)] == s)
        d->front[front_slot(&s->key)] = NULL;
    g_hash_table_remove(d->streams, &s->key);
    tbbt_dlist_unlink(&d->ages, &s->age);
    d->nstreams--;
    g_free(s->rec.buf);
    g_free(s);
}

static struct tbbt__cap_stream *create(struct tbbt_capdec *d, const struct tbbt__cap_flow *key,
                                       uint64_t ts)
{
    struct tbbt__cap_stream *s;

    if (d->nstreams >= TBBT__CAP_MAX_STREAMS && d->ages.first)
        teardown(d, lru_oldest(d));
    s = g_new0(struct tbbt__cap_stream, 1);
    s->key = *key;
    s->last_ts = ts;
    g_hash_table_insert(d->streams, &s->key, s);
    tbbt_dlist_push(&d->ages, &s->age);
    d->nstreams++;
    return s;
}

static void expire_idle(struct tbbt_capdec *d, uint64_t ts)
{
    struct tbbt__cap_stream *s;

    while ((s = lru_oldest(d)) && ts > s->last_ts + TBBT__CAP_IDLE_NS)
        teardown(d, s);
}

void tbbt__cap_tcp_flush(struct tbbt_capdec *d)
{
    while (d->ages.first)
        teardown(d, lru_oldest(d));
}

void tbbt__cap_tcp_fini(struct tbbt_capdec *d)
{
    tbbt__cap_tcp_flush(d);
    g_hash_table_destroy(d->streams);
    d->streams = NULL;
}

/* ---- segments -------------------------------------------------------------- */

static void make_key(struct tbbt__cap_flow *k, const struct tbbt__cap_ip *ip, uint16_t sport,
                     uint16_t dport, bool reverse)
{
    size_t alen = ip->af == 4 ? 4 : 16;

    memset(k, 0, sizeof *k);
    k->af = ip->af;
    k->sport = reverse ? dport : sport;
    k->dport = reverse ? sport : dport;
    memcpy(k->src, reverse ? ip->dst : ip->src, alen);
    memcpy(k->dst, reverse ? ip->src : ip->dst, alen);
}

static void reset_both(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint16_t sport,
                       uint16_t dport)
{
    struct tbbt__cap_flow k;
    struct tbbt__cap_stream *s;

    for (int rev = 0; rev < 2; rev++) {
        make_key(&k, ip, sport, dport, rev);
        if ((s = lookup(d, &k)) != NULL)
            teardown(d, s);
    }
}

static void fin(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t fin_seq)
{
    drain(d, s, true);
    if (s->have_seq && (int32_t)(fin_seq - s->next_seq) > 0)
        declare_gap(d, s, fin_seq - s->next_seq);
    teardown(d, s);
}

void tbbt__cap_tcp(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, const uint8_t *p,
                   uint32_t cap, uint32_t wire, uint64_t ts)
{
    struct tbbt_buf b;
    struct tbbt__cap_flow key;
    struct tbbt__cap_stream *s;
    uint16_t sport, dport, offflags;
    uint32_t seq, hl, pcap, pwire;

    if (cap < 14) {   /* ports, sequence number, data offset and flags */
        tbbt__cap_short(d, cap, wire);
        return;
    }
    tbbt_buf_init(&b, p, cap);
    sport = tbbt_buf_get_be16(&b);
    dport = tbbt_buf_get_be16(&b);
    seq = tbbt_buf_get_be32(&b);
    tbbt_buf_skip(&b, 4);   /* acknowledgment number */
    offflags = tbbt_buf_get_be16(&b);
    hl = (uint32_t)(offflags >> 12) * 4;
    if (hl < 20 || hl > wire) {
        d->st.malformed_packets++;
        return;
    }
    pwire = wire - hl;
    pcap = cap > hl ? cap - hl : 0;   /* options cut by the snap length: seq still counts */
    expire_idle(d, ts);
    if (offflags & TH_RST) {
        reset_both(d, ip, sport, dport);
        return;
    }
    make_key(&key, ip, sport, dport, false);
    s = lookup(d, &key);
    if (offflags & TH_SYN) {
        if (s)
            stream_end(d, s);
        else
            s = create(d, &key, ts);
        s->have_seq = true;
        s->next_seq = ++seq;
        touch(d, s, ts);
    }
    if (pwire > 0) {
        if (!s)
            s = create(d, &key, ts);
        d->st.tcp_segments++;
        touch(d, s, ts);
        segment(d, s, seq, pcap ? p + hl : NULL, pcap, pwire, ts);
    }
    if ((offflags & TH_FIN) && s)
        fin(d, s, seq + pwire);
}
