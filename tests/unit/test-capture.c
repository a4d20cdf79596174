/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the capture module: hand-built packets through the packet
 * decoder (each link type, VLAN, IPv6, UDP, IPv4/IPv6 fragments, TCP
 * reassembly and RPC record marking, RFC 5531 11) and small capture files
 * written here through the file source (pcap, pcapng, gzip, merge, filter,
 * broken files).
 */
#include "capture/capture.h"
#include "util/util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#define MAXPKT 70000
#define LINKTYPE_RAW 101
#define SEC 1000000000ull

/* ---- byte helpers ---------------------------------------------------------- */

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* An RPC call of 40 + body bytes (AUTH_NULL, NFSv3 GETATTR); body filled with 0xab. */
static size_t rpc_call(uint8_t *p, uint32_t xid, size_t body)
{
    static const uint32_t hdr[10] = {0, 0, 2, 100003, 3, 1, 0, 0, 0, 0};
    for (int i = 0; i < 10; i++)
        put32(p + 4 * i, hdr[i]);
    put32(p, xid);
    memset(p + 40, 0xab, body);
    return 40 + body;
}

/* An accepted RPC reply of 24 + body bytes. */
static size_t rpc_reply(uint8_t *p, uint32_t xid, size_t body)
{
    memset(p, 0, 24);
    put32(p, xid);
    put32(p + 4, 1);
    memset(p + 24, 0xcd, body);
    return 24 + body;
}

/* A single-fragment record: mark, then the message. */
static size_t record(uint8_t *p, const uint8_t *msg, size_t n)
{
    put32(p, 0x80000000u | (uint32_t)n);
    memmove(p + 4, msg, n);
    return n + 4;
}

/* A call record with the given xid and body: returns its length. */
static size_t call_rec(uint8_t *p, uint32_t xid, size_t body)
{
    size_t n = rpc_call(p + 4, xid, body);
    put32(p, 0x80000000u | (uint32_t)n);
    return n + 4;
}

/* ---- packet builders ------------------------------------------------------- */

static const uint8_t CLI4[4] = {10, 0, 0, 1}, SRV4[4] = {10, 0, 0, 2};
static const uint8_t CLI6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
static const uint8_t SRV6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 2};

static size_t put_udp(uint8_t *p, uint16_t sport, uint16_t dport, const uint8_t *pl, size_t n)
{
    put16(p, sport);
    put16(p + 2, dport);
    put16(p + 4, (uint32_t)(8 + n));
    put16(p + 6, 0);
    memmove(p + 8, pl, n);
    return 8 + n;
}

static size_t put_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t seq, uint8_t flags,
                      const uint8_t *pl, size_t n)
{
    memset(p, 0, 20);
    put16(p, sport);
    put16(p + 2, dport);
    put32(p + 4, seq);
    p[12] = 5 << 4;
    p[13] = flags;
    put16(p + 14, 65535);
    if (n)
        memmove(p + 20, pl, n);
    return 20 + n;
}

/* IPv4 header + l4 (copied); frag = flags/offset field. */
static size_t put_ip4(uint8_t *p, const uint8_t *src, const uint8_t *dst, uint8_t proto,
                      uint16_t id, uint16_t frag, const uint8_t *l4, size_t n)
{
    memmove(p + 20, l4, n);
    memset(p, 0, 20);
    p[0] = 0x45;
    put16(p + 2, (uint32_t)(20 + n));
    put16(p + 4, id);
    put16(p + 6, frag);
    p[8] = 64;
    p[9] = proto;
    memcpy(p + 12, src, 4);
    memcpy(p + 16, dst, 4);
    return 20 + n;
}

static size_t put_ip6(uint8_t *p, const uint8_t *src, const uint8_t *dst, uint8_t nh,
                      const uint8_t *l4, size_t n)
{
    memmove(p + 40, l4, n);
    memset(p, 0, 40);
    p[0] = 0x60;
    put16(p + 4, (uint32_t)n);
    p[6] = nh;
    p[7] = 64;
    memcpy(p + 8, src, 16);
    memcpy(p + 24, dst, 16);
    return 40 + n;
}

/* Ethernet header with ntags VLAN tags (tpids given) before type; l3 copied after. */
static size_t put_eth(uint8_t *p, uint16_t type, int ntags, const uint16_t *tpids,
                      const uint8_t *l3, size_t n)
{
    size_t h = 14 + 4 * (size_t)ntags;

    memmove(p + h, l3, n);
    memset(p, 0x02, 12);
    for (int i = 0; i < ntags; i++) {
        put16(p + 12 + 4 * i, tpids[i]);
        put16(p + 14 + 4 * i, 100 + (uint32_t)i);
    }
    put16(p + h - 2, type);
    return h + n;
}

/* ---- collected messages ---------------------------------------------------- */

struct got {
    struct tbbt_cap_msg m;   /* data points to copy */
    uint8_t *copy;
    const uint8_t *orig;     /* the pointer the callback saw */
};

static GArray *msgs;

static void collect(const struct tbbt_cap_msg *m, void *arg)
{
    struct got g = {*m, g_memdup2(m->data, m->len ? m->len : 1), m->data};

    (void)arg;
    g.m.data = g.copy;
    g_array_append_val(msgs, g);
}

static struct got *msg(guint i)
{
    assert_true(i < msgs->len);
    return &g_array_index(msgs, struct got, i);
}

static uint32_t msg_xid(guint i)
{
    assert_true(msg(i)->m.len >= 4);
    return get32(msg(i)->m.data);
}

static void clear_msgs(void)
{
    for (guint i = 0; i < msgs->len; i++)
        g_free(g_array_index(msgs, struct got, i).copy);
    g_array_set_size(msgs, 0);
}

static struct tbbt_capdec *dec;
static uint8_t pkt[MAXPKT], tmp[MAXPKT], tmp2[MAXPKT];

static int setup(void **state)
{
    (void)state;
    msgs = g_array_new(FALSE, TRUE, sizeof(struct got));
    dec = tbbt_capdec_new(collect, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tbbt_capdec_free(dec);
    dec = NULL;
    clear_msgs();
    g_array_free(msgs, TRUE);
    return 0;
}

static const struct tbbt_cap_stats *st(void)
{
    return tbbt_capdec_stats(dec);
}

/* ---- TCP conversation helper ----------------------------------------------- */

struct conn {
    uint16_t port[2];
    uint32_t seq[2];
    uint64_t ts;
};

static struct conn conn_new(uint16_t cport)
{
    return (struct conn){{cport, 2049}, {1000, 5000000}, SEC};
}

/*
 * Sends n payload bytes from side dir (0 client) at sequence seq as an
 * Ethernet/IPv4/TCP packet, keeping only capn payload bytes.
 */
static void tcp_at(struct conn *c, int dir, uint32_t seq, uint8_t flags, const uint8_t *pl,
                   size_t n, size_t capn)
{
    size_t l4 = put_tcp(tmp, c->port[dir], c->port[!dir], seq, flags, pl, n);
    size_t l3 = put_ip4(tmp2, dir ? SRV4 : CLI4, dir ? CLI4 : SRV4, 6, 1, 0x4000, tmp, l4);
    size_t len = put_eth(pkt, 0x0800, 0, NULL, tmp2, l3);
    size_t cap = len - n + (capn < n ? capn : n);

    c->ts += 1000;
    tbbt_capdec_packet(dec, DLT_EN10MB, c->ts, pkt, (uint32_t)cap, (uint32_t)len);
}

static void tcp_send(struct conn *c, int dir, uint8_t flags, const uint8_t *pl, size_t n)
{
    tcp_at(c, dir, c->seq[dir], flags, pl, n, n);
    c->seq[dir] += (uint32_t)n + ((flags & 0x03) ? 1 : 0);
}

/* Same, keeping only capn bytes of the payload (snap length). */
static void tcp_send_cut(struct conn *c, int dir, const uint8_t *pl, size_t n, size_t capn)
{
    tcp_at(c, dir, c->seq[dir], 0x18, pl, n, capn);
    c->seq[dir] += (uint32_t)n;
}

#define PSH 0x18
#define SYN 0x02
#define FIN 0x11
#define RST 0x04

/* ---- link layers ----------------------------------------------------------- */

/* An IPv4/UDP call to port 2049 in b; returns its length. */
static size_t udp4_call(uint8_t *b, uint32_t xid, size_t body)
{
    uint8_t m[2048], u[2100];
    size_t n = rpc_call(m, xid, body);
    size_t l4 = put_udp(u, 800, 2049, m, n);
    return put_ip4(b, CLI4, SRV4, 17, 7, 0, u, l4);
}

static size_t udp6_call(uint8_t *b, uint32_t xid, size_t body)
{
    uint8_t m[2048], u[2100];
    size_t n = rpc_call(m, xid, body);
    size_t l4 = put_udp(u, 800, 2049, m, n);
    return put_ip6(b, CLI6, SRV6, 17, u, l4);
}

static void check_udp_call(guint i, uint32_t xid, uint8_t af)
{
    struct got *g = msg(i);
    assert_int_equal(msg_xid(i), xid);
    assert_int_equal(g->m.af, af);
    assert_false(g->m.tcp);
    assert_false(g->m.truncated);
    assert_int_equal(g->m.len, 40 + 8);
    assert_int_equal(g->m.wire_len, 48);
    assert_int_equal(g->m.sport, 800);
    assert_int_equal(g->m.dport, 2049);
    assert_memory_equal(g->m.src, af == 4 ? CLI4 : CLI6, af == 4 ? 4 : 16);
    assert_memory_equal(g->m.dst, af == 4 ? SRV4 : SRV6, af == 4 ? 4 : 16);
}

static void feed(int dlt, const uint8_t *b, size_t n)
{
    tbbt_capdec_packet(dec, dlt, SEC, b, (uint32_t)n, (uint32_t)n);
}

static void test_link_ethernet(void **state)
{
    uint16_t q[] = {0x8100}, qinq[] = {0x88a8, 0x8100};
    size_t l3, n;

    (void)state;
    l3 = udp4_call(tmp2, 1, 8);
    n = put_eth(pkt, 0x0800, 0, NULL, tmp2, l3);
    feed(DLT_EN10MB, pkt, n);
    l3 = udp4_call(tmp2, 2, 8);
    n = put_eth(pkt, 0x0800, 1, q, tmp2, l3);
    feed(DLT_EN10MB, pkt, n);
    l3 = udp6_call(tmp2, 3, 8);
    n = put_eth(pkt, 0x86dd, 2, qinq, tmp2, l3);
    feed(DLT_EN10MB, pkt, n);
    /* Ethernet padding after a short IP packet is ignored. */
    l3 = udp4_call(tmp2, 4, 8);
    n = put_eth(pkt, 0x0800, 0, NULL, tmp2, l3);
    memset(pkt + n, 0, 20);
    feed(DLT_EN10MB, pkt, n + 20);
    /* ARP is not IP. */
    n = put_eth(pkt, 0x0806, 0, NULL, tmp2, 28);
    feed(DLT_EN10MB, pkt, n);
    assert_int_equal(msgs->len, 4);
    check_udp_call(0, 1, 4);
    check_udp_call(1, 2, 4);
    check_udp_call(2, 3, 6);
    check_udp_call(3, 4, 4);
    assert_int_equal(st()->other_packets, 1);
    assert_int_equal(st()->packets, 5);
    assert_int_equal(st()->malformed_packets, 0);
    assert_int_equal(st()->rpc_messages, 4);
}

static void test_link_sll(void **state)
{
    size_t l3;

    (void)state;
    l3 = udp4_call(tmp2, 10, 8);
    memset(pkt, 0, 16);
    put16(pkt + 14, 0x0800);
    memcpy(pkt + 16, tmp2, l3);
    feed(DLT_LINUX_SLL, pkt, 16 + l3);
    l3 = udp6_call(tmp2, 11, 8);
    memset(pkt, 0, 20);
    put16(pkt, 0x86dd);
    memcpy(pkt + 20, tmp2, l3);
    feed(DLT_LINUX_SLL2, pkt, 20 + l3);
    feed(DLT_LINUX_SLL2, pkt, 10);   /* shorter than its link header */
    assert_int_equal(msgs->len, 2);
    check_udp_call(0, 10, 4);
    check_udp_call(1, 11, 6);
    assert_int_equal(st()->malformed_packets, 1);
}

static void test_link_null_loop(void **state)
{
    static const uint8_t fams[][4] = {
        {2, 0, 0, 0}, {0, 0, 0, 2}, {24, 0, 0, 0}, {0, 0, 0, 28}, {30, 0, 0, 0}, {0, 0, 0, 30},
    };
    size_t l3;

    (void)state;
    for (int i = 0; i < 6; i++) {
        l3 = i < 2 ? udp4_call(tmp2, 20 + (uint32_t)i, 8) : udp6_call(tmp2, 20 + (uint32_t)i, 8);
        memcpy(pkt, fams[i], 4);
        memcpy(pkt + 4, tmp2, l3);
        feed(i % 2 ? DLT_LOOP : DLT_NULL, pkt, 4 + l3);
    }
    put32(pkt, 7);   /* AF 7: not IP */
    feed(DLT_NULL, pkt, 4 + l3);
    assert_int_equal(msgs->len, 6);
    for (int i = 0; i < 6; i++)
        check_udp_call((guint)i, 20 + (uint32_t)i, i < 2 ? 4 : 6);
    assert_int_equal(st()->other_packets, 1);
}

static void test_link_raw(void **state)
{
    size_t l3;

    (void)state;
    l3 = udp4_call(pkt, 30, 8);
    feed(DLT_RAW, pkt, l3);
    l3 = udp6_call(pkt, 31, 8);
    feed(LINKTYPE_RAW, pkt, l3);
    l3 = udp4_call(pkt, 32, 8);
    feed(DLT_IPV4, pkt, l3);
    l3 = udp6_call(pkt, 33, 8);
    feed(DLT_IPV6, pkt, l3);
    pkt[0] = 0x50;   /* version 5 */
    feed(DLT_RAW, pkt, l3);
    assert_int_equal(msgs->len, 4);
    for (int i = 0; i < 4; i++)
        check_udp_call((guint)i, 30 + (uint32_t)i, i % 2 ? 6 : 4);
    assert_int_equal(st()->malformed_packets, 1);
    assert_int_equal(tbbt_capdec_check_linktype(DLT_EN10MB), 0);
    assert_int_equal(tbbt_capdec_check_linktype(DLT_LINUX_SLL2), 0);
    assert_int_equal(tbbt_capdec_check_linktype(DLT_IEEE802_11), TBBT_E_LINKTYPE);
}

/* ---- IPv6 extension headers, UDP ------------------------------------------- */

static void test_ipv6_ext(void **state)
{
    uint8_t m[256], u[300], ext[400];
    size_t n, l4, l3;

    (void)state;
    n = rpc_call(m, 40, 8);
    l4 = put_udp(u, 800, 2049, m, n);
    /* hop-by-hop (8 bytes) -> destination options (16 bytes) -> UDP */
    memset(ext, 0, 24);
    ext[0] = 60;
    ext[1] = 0;
    ext[8] = 17;
    ext[9] = 1;
    memcpy(ext + 24, u, l4);
    l3 = put_ip6(pkt, CLI6, SRV6, 0, ext, 24 + l4);
    feed(DLT_RAW, pkt, l3);
    check_udp_call(0, 40, 6);
    /* An extension header claiming more than the packet holds. */
    ext[1] = 200;
    l3 = put_ip6(pkt, CLI6, SRV6, 0, ext, 24 + l4);
    feed(DLT_RAW, pkt, l3);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(st()->malformed_packets, 1);
}

static void test_udp(void **state)
{
    uint8_t m[2048], u[2100];
    size_t n, l4, l3;

    (void)state;
    n = rpc_reply(m, 50, 1000);
    l4 = put_udp(u, 2049, 800, m, n);
    l3 = put_ip4(pkt, SRV4, CLI4, 17, 9, 0, u, l4);
    tbbt_capdec_packet(dec, DLT_RAW, 5 * SEC, pkt, 200, (uint32_t)l3);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg(0)->m.len, 200 - 28);
    assert_int_equal(msg(0)->m.wire_len, 1024);
    assert_true(msg(0)->m.truncated);
    assert_int_equal(msg(0)->m.ts_ns, 5 * SEC);
    assert_int_equal(st()->truncated_packets, 1);
    assert_int_equal(st()->rpc_truncated, 1);
    /* Not RPC (DNS-like), and a UDP length beyond the IP packet. */
    memset(m, 0x11, 40);
    l4 = put_udp(u, 53, 5353, m, 40);
    l3 = put_ip4(pkt, SRV4, CLI4, 17, 9, 0, u, l4);
    feed(DLT_RAW, pkt, l3);
    put16(pkt + 20 + 4, 500);
    feed(DLT_RAW, pkt, l3);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(st()->non_rpc_streams, 1);
    assert_int_equal(st()->malformed_packets, 1);
}

static void test_malformed(void **state)
{
    size_t l3, l4;

    (void)state;
    l3 = udp4_call(pkt, 60, 8);
    pkt[0] = 0x44;   /* header length 16 */
    feed(DLT_RAW, pkt, l3);
    pkt[0] = 0x45;
    put16(pkt + 2, (uint32_t)l3 + 100);   /* total length past the packet */
    feed(DLT_RAW, pkt, l3);
    feed(DLT_RAW, pkt, 12);               /* shorter than an IP header, not cut */
    l4 = put_tcp(tmp, 1, 2, 0, 0x10, NULL, 0);
    tmp[12] = 15 << 4;                    /* data offset past the end */
    l3 = put_ip4(pkt, CLI4, SRV4, 6, 1, 0, tmp, l4);
    feed(DLT_RAW, pkt, l3);
    /* A header cut by the snap length is not malformed. */
    l3 = udp4_call(pkt, 61, 8);
    tbbt_capdec_packet(dec, DLT_RAW, SEC, pkt, 10, (uint32_t)l3);
    /* ICMP is other. */
    l3 = put_ip4(pkt, CLI4, SRV4, 1, 1, 0, tmp, 8);
    feed(DLT_RAW, pkt, l3);
    assert_int_equal(st()->malformed_packets, 4);
    assert_int_equal(st()->truncated_packets, 1);
    assert_int_equal(st()->other_packets, 1);
    assert_int_equal(msgs->len, 0);
}

/* ---- IP fragments ---------------------------------------------------------- */

/* Splits a UDP call of 1200 body bytes into fragments of 400 bytes: pieces in frag[]. */
struct fragset {
    uint8_t pk[4][600];
    size_t len[4];
    int n;
};

static void make_frags(struct fragset *f, uint16_t id, uint32_t xid)
{
    uint8_t m[2048], u[2100];
    size_t n = rpc_call(m, xid, 1200);
    size_t l4 = put_udp(u, 800, 2049, m, n);

    f->n = 0;
    for (size_t off = 0; off < l4; off += 400) {
        size_t len = l4 - off < 400 ? l4 - off : 400;
        uint16_t fo = (uint16_t)(off / 8) | (off + len < l4 ? 0x2000 : 0);
        f->len[f->n] = put_ip4(f->pk[f->n], CLI4, SRV4, 17, id, fo, u + off, len);
        f->n++;
    }
}

static void feed_frag(struct fragset *f, int i)
{
    tbbt_capdec_packet(dec, DLT_RAW, SEC + (uint64_t)i, f->pk[i], (uint32_t)f->len[i],
                       (uint32_t)f->len[i]);
}

static void check_frag_msg(guint i, uint32_t xid)
{
    assert_int_equal(msg_xid(i), xid);
    assert_int_equal(msg(i)->m.len, 1240);
    assert_int_equal(msg(i)->m.wire_len, 1240);
    assert_false(msg(i)->m.truncated);
    assert_int_equal(msg(i)->m.data[1239], 0xab);
}

static void test_frag_orders(void **state)
{
    struct fragset f;

    (void)state;
    make_frags(&f, 100, 70);
    assert_int_equal(f.n, 4);
    for (int i = 0; i < 4; i++)
        feed_frag(&f, i);
    check_frag_msg(0, 70);
    make_frags(&f, 101, 71);
    for (int i = 3; i >= 0; i--)
        feed_frag(&f, i);
    check_frag_msg(1, 71);
    make_frags(&f, 102, 72);   /* a duplicate in the middle */
    feed_frag(&f, 0);
    feed_frag(&f, 1);
    feed_frag(&f, 1);
    feed_frag(&f, 2);
    feed_frag(&f, 3);
    check_frag_msg(2, 72);
    assert_int_equal(st()->ip_reassembled, 3);
    assert_int_equal(st()->ip_fragments, 13);
    assert_int_equal(st()->ip_frag_dropped, 1);
    assert_int_equal(msgs->len, 3);
}

static void test_frag_missing_overlap(void **state)
{
    struct fragset f;

    (void)state;
    make_frags(&f, 200, 80);   /* one missing: never delivered, dropped at flush */
    feed_frag(&f, 0);
    feed_frag(&f, 1);
    feed_frag(&f, 3);
    make_frags(&f, 201, 81);   /* an overlapping fragment is dropped; the rest completes */
    feed_frag(&f, 0);
    put16(f.pk[1] + 6, 0x2000 | 10);   /* offset 80 overlaps the first 400 bytes */
    feed_frag(&f, 1);
    make_frags(&f, 201, 81);
    feed_frag(&f, 1);
    feed_frag(&f, 2);
    feed_frag(&f, 3);
    check_frag_msg(0, 81);
    tbbt_capdec_flush(dec);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(st()->ip_frag_dropped, 3 + 1);
    assert_int_equal(st()->ip_reassembled, 1);
}

static void test_frag_expire_truncated(void **state)
{
    struct fragset f;

    (void)state;
    make_frags(&f, 300, 90);
    feed_frag(&f, 0);
    /* 60 s later: the first datagram expired; a new one with snap-length cut pieces. */
    make_frags(&f, 301, 91);
    for (int i = 0; i < 4; i++)
        tbbt_capdec_packet(dec, DLT_RAW, 61 * SEC, f.pk[i], 120, (uint32_t)f.len[i]);
    assert_int_equal(st()->ip_frag_dropped, 1);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg(0)->m.len, 100 - 8);   /* first piece's captured bytes, UDP header out */
    assert_int_equal(msg(0)->m.wire_len, 1240);
    assert_true(msg(0)->m.truncated);
    assert_int_equal(msg_xid(0), 91);
}

static void test_frag_ipv6(void **state)
{
    uint8_t m[2048], u[2100], fr[1000];
    size_t n = rpc_call(m, 95, 1200), l4 = put_udp(u, 800, 2049, m, n), l3;

    (void)state;
    for (int k = 1; k >= 0; k--) {   /* second half first */
        size_t off = k ? 640 : 0, len = k ? l4 - 640 : 640;
        fr[0] = 17;
        fr[1] = 0;
        put16(fr + 2, (uint32_t)off | (k ? 0 : 1));
        put32(fr + 4, 0xdeadbeef);
        memcpy(fr + 8, u + off, len);
        l3 = put_ip6(pkt, CLI6, SRV6, 44, fr, 8 + len);
        feed(DLT_IPV6, pkt, l3);
    }
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg(0)->m.af, 6);
    assert_int_equal(msg(0)->m.len, 1240);
    assert_int_equal(st()->ip_reassembled, 1);
    assert_int_equal(st()->ip_fragments, 2);
}

/* ---- TCP ------------------------------------------------------------------- */

static void test_tcp_records_in_one_segment(void **state)
{
    struct conn c = conn_new(900);
    uint8_t b[4096];
    size_t n = 0;

    (void)state;
    tcp_send(&c, 0, SYN, NULL, 0);
    tcp_send(&c, 1, SYN | 0x10, NULL, 0);
    for (uint32_t x = 1; x <= 3; x++)
        n += call_rec(b + n, x, 20 * x);
    tcp_send(&c, 0, PSH, b, n);
    assert_int_equal(msgs->len, 3);
    for (guint i = 0; i < 3; i++) {
        assert_int_equal(msg_xid(i), i + 1);
        assert_int_equal(msg(i)->m.len, 40 + 20 * (i + 1));
        assert_true(msg(i)->m.tcp);
        assert_int_equal(msg(i)->m.sport, 900);
        assert_int_equal(msg(i)->m.dport, 2049);
        /* Zero copy: the data pointed into the packet. */
        assert_true(msg(i)->orig >= pkt && msg(i)->orig < pkt + sizeof pkt);
    }
    /* The reply direction is its own stream. */
    n = record(b, b + 2000, rpc_reply(b + 2000, 2, 10));
    tcp_send(&c, 1, PSH, b, n);
    assert_int_equal(msgs->len, 4);
    assert_int_equal(msg(3)->m.sport, 2049);
    assert_int_equal(st()->tcp_segments, 2);
    assert_int_equal(st()->tcp_resyncs, 0);
}

static void test_tcp_record_across_segments(void **state)
{
    struct conn c = conn_new(901);
    static uint8_t b[70000];
    size_t n = call_rec(b, 7, 60000);

    (void)state;
    for (size_t off = 0; off < n; off += 1448)
        tcp_send(&c, 0, PSH, b + off, n - off < 1448 ? n - off : 1448);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg(0)->m.len, 60040);
    assert_int_equal(msg(0)->m.wire_len, 60040);
    assert_false(msg(0)->m.truncated);
    assert_memory_equal(msg(0)->m.data, b + 4, 60040);
    assert_int_equal(msg(0)->m.ts_ns, SEC + 1000);   /* the first segment's time */
}

static void test_tcp_multi_fragment(void **state)
{
    struct conn c = conn_new(902);
    uint8_t m[600], b[800];
    size_t n = rpc_call(m, 8, 500), o = 0;

    (void)state;
    /* Three fragments 100 + 300 + rest, split across two segments mid-mark. */
    put32(b + o, 100);
    memcpy(b + o + 4, m, 100);
    o += 104;
    put32(b + o, 300);
    memcpy(b + o + 4, m + 100, 300);
    o += 304;
    put32(b + o, 0x80000000u | (uint32_t)(n - 400));
    memcpy(b + o + 4, m + 400, n - 400);
    o += 4 + n - 400;
    tcp_send(&c, 0, PSH, b, 106);
    tcp_send(&c, 0, PSH, b + 106, o - 106);
    n = call_rec(b, 9, 0);
    put32(b, 40);   /* not last */
    put32(b + 44, 0x80000000u);
    tcp_send(&c, 0, PSH, b, 48);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg(0)->m.len, 540);
    assert_memory_equal(msg(0)->m.data, m, 540);
    assert_int_equal(msg_xid(1), 9);
    assert_int_equal(msg(1)->m.len, 40);
    assert_int_equal(st()->rpc_bad_marks, 0);
}

static void test_tcp_retransmit_overlap(void **state)
{
    struct conn c = conn_new(903);
    uint8_t b[4096];
    size_t n = call_rec(b, 10, 100), n2;
    uint32_t s0 = c.seq[0];

    (void)state;
    tcp_send(&c, 0, PSH, b, n);
    tcp_at(&c, 0, s0, PSH, b, n, n);   /* full retransmission */
    /* A record in two parts, the second sent overlapping the first. */
    n2 = call_rec(b, 11, 200);
    s0 = c.seq[0];
    tcp_at(&c, 0, s0, PSH, b, 150, 150);
    tcp_at(&c, 0, s0 + 100, PSH, b + 100, n2 - 100, n2 - 100);
    c.seq[0] = s0 + (uint32_t)n2;
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(0), 10);
    assert_int_equal(msg_xid(1), 11);
    assert_int_equal(msg(1)->m.len, 240);
    assert_memory_equal(msg(1)->m.data, b + 4, 240);
    assert_int_equal(st()->tcp_retransmits, 2);
}

static void test_tcp_out_of_order(void **state)
{
    struct conn c = conn_new(904);
    uint8_t b[4096];
    size_t n = call_rec(b, 12, 1000);
    uint32_t s0 = c.seq[0];

    (void)state;
    tcp_at(&c, 0, s0, PSH, b, 10, 10);   /* establishes the stream */
    tcp_at(&c, 0, s0 + 500, PSH, b + 500, n - 500, n - 500);
    tcp_at(&c, 0, s0 + 300, PSH, b + 300, 200, 200);
    assert_int_equal(msgs->len, 0);
    tcp_at(&c, 0, s0 + 10, PSH, b + 10, 290, 290);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg(0)->m.len, 1040);
    assert_memory_equal(msg(0)->m.data, b + 4, 1040);
    assert_int_equal(st()->tcp_out_of_order, 2);
    assert_int_equal(st()->tcp_gaps, 0);
}

static void test_tcp_gap_resync(void **state)
{
    struct conn c = conn_new(905);
    uint8_t b[8192];
    size_t n1 = call_rec(b, 13, 100), n2 = call_rec(b + n1, 14, 3000);
    size_t n3 = call_rec(b + n1 + n2, 15, 50);
    uint32_t s0 = c.seq[0];

    (void)state;
    tcp_at(&c, 0, s0, PSH, b, n1 + 100, n1 + 100);   /* record 13, start of 14 */
    /* Bytes n1+100 .. n1+1500 lost; the rest of 14 (body) and 15 arrive. */
    tcp_at(&c, 0, s0 + (uint32_t)(n1 + 1500), PSH, b + n1 + 1500, n2 - 1500 + n3,
           n2 - 1500 + n3);
    assert_int_equal(msgs->len, 1);
    tbbt_capdec_flush(dec);   /* the hole is declared lost */
    assert_int_equal(st()->tcp_gaps, 1);
    assert_int_equal(st()->tcp_gap_bytes, 1400);
    assert_int_equal(msgs->len, 3);
    /* The end of record 14 was known: it is delivered truncated, 15 is whole. */
    assert_int_equal(msg_xid(1), 14);
    assert_true(msg(1)->m.truncated);
    assert_int_equal(msg(1)->m.len, 96);
    assert_int_equal(msg(1)->m.wire_len, 3040);
    assert_int_equal(msg_xid(2), 15);
    assert_false(msg(2)->m.truncated);
    clear_msgs();

    /* A hole that covers a record boundary: resync by scanning. */
    c = conn_new(906);
    s0 = c.seq[0];
    n1 = call_rec(b, 16, 100);
    n2 = call_rec(b + n1, 17, 100);
    n3 = call_rec(b + n1 + n2, 18, 100);
    tcp_at(&c, 0, s0, PSH, b, n1 - 20, n1 - 20);
    tcp_at(&c, 0, s0 + (uint32_t)(n1 + 30), PSH, b + n1 + 30, n2 - 30 + n3, n2 - 30 + n3);
    assert_int_equal(msgs->len, 0);
    tcp_at(&c, 0, s0 + (uint32_t)(n1 + n2 + n3), FIN, NULL, 0, 0);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(0), 16);
    assert_true(msg(0)->m.truncated);
    assert_int_equal(msg_xid(1), 18);
    assert_false(msg(1)->m.truncated);
    assert_int_equal(st()->tcp_gaps, 2);
    assert_int_equal(st()->tcp_resyncs, 1);
}

static void test_tcp_snaplen(void **state)
{
    struct conn c = conn_new(907);
    static uint8_t b[70000];
    size_t n1, n2, o;

    (void)state;
    /* Two big WRITE-like calls, each in one segment, 200 bytes captured. */
    n1 = call_rec(b, 20, 30000);
    tcp_send_cut(&c, 0, b, n1, 200);
    n2 = call_rec(b, 21, 30000);
    tcp_send_cut(&c, 0, b, n2, 200);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(0), 20);
    assert_int_equal(msg(0)->m.len, 196);
    assert_int_equal(msg(0)->m.wire_len, 30040);
    assert_true(msg(0)->m.truncated);
    assert_int_equal(msg_xid(1), 21);
    /* A record over three segments: only the first segment's prefix is kept. */
    n1 = call_rec(b, 22, 40000);
    for (o = 0; o < n1; o += 16000)
        tcp_send_cut(&c, 0, b + o, n1 - o < 16000 ? n1 - o : 16000, 200);
    assert_int_equal(msgs->len, 3);
    assert_int_equal(msg(2)->m.len, 196);
    assert_int_equal(msg(2)->m.wire_len, 40040);
    /* A small record followed by a big one in one segment; then the next segment. */
    n1 = call_rec(b, 23, 20);
    n2 = call_rec(b + n1, 24, 5000);
    tcp_send_cut(&c, 0, b, n1 + n2, 200);
    n1 = call_rec(b, 25, 20);
    tcp_send_cut(&c, 0, b, n1, 200);
    assert_int_equal(msgs->len, 6);
    assert_int_equal(msg_xid(3), 23);
    assert_false(msg(3)->m.truncated);
    assert_int_equal(msg_xid(4), 24);
    assert_int_equal(msg(4)->m.len, 200 - n1 - 4);
    assert_int_equal(msg_xid(5), 25);
    /* A record whose mark lies in the uncaptured part: the next segment resyncs. */
    n1 = call_rec(b, 26, 300);
    n2 = call_rec(b + n1, 27, 100);
    tcp_send_cut(&c, 0, b, n1 + n2, 200);
    n1 = call_rec(b, 28, 20);
    tcp_send_cut(&c, 0, b, n1, 200);
    assert_int_equal(msgs->len, 8);
    assert_int_equal(msg_xid(6), 26);
    assert_int_equal(msg_xid(7), 28);
    assert_int_equal(st()->tcp_gaps, 0);
    assert_int_equal(st()->tcp_resyncs, 1);
    assert_int_equal(st()->rpc_truncated, 5);
    assert_int_equal(st()->truncated_packets, 7);
}

static void test_tcp_bad_marks(void **state)
{
    struct conn c = conn_new(908);
    uint8_t b[4096];
    size_t n;

    (void)state;
    n = call_rec(b, 30, 10);
    tcp_send(&c, 0, PSH, b, n);
    put32(b, 0x80000000u);   /* zero-length mark, then garbage, then a record */
    memset(b + 4, 0xee, 30);
    n = 34 + call_rec(b + 34, 31, 10);
    tcp_send(&c, 0, PSH, b, n);
    put32(b, 0xffffffffu);   /* absurd length */
    n = 4 + call_rec(b + 4, 32, 10);
    tcp_send(&c, 0, PSH, b, n);
    n = call_rec(b, 33, 10);   /* sane length, not RPC behind it */
    put32(b + 8, 7);
    n += call_rec(b + n, 34, 10);
    tcp_send(&c, 0, PSH, b, n);
    assert_int_equal(msgs->len, 4);
    assert_int_equal(msg_xid(0), 30);
    assert_int_equal(msg_xid(1), 31);
    assert_int_equal(msg_xid(2), 32);
    assert_int_equal(msg_xid(3), 34);
    assert_int_equal(st()->rpc_bad_marks, 3);
    assert_int_equal(st()->tcp_resyncs, 3);
}

static void test_tcp_garbage_and_midstream(void **state)
{
    struct conn c = conn_new(909);
    uint8_t b[4096];
    size_t n;

    (void)state;
    for (int i = 0; i < 3000; i++)
        b[i] = (uint8_t)(i * 37 + 11);
    tcp_send(&c, 0, PSH, b, 3000);
    tcp_send(&c, 0, FIN, NULL, 0);
    assert_int_equal(msgs->len, 0);
    assert_int_equal(st()->non_rpc_streams, 1);
    assert_int_equal(st()->rpc_bad_marks, 0);
    /* Picked up in the middle of a record: the next record is found. */
    c = conn_new(910);
    n = call_rec(b, 40, 500);
    n += call_rec(b + n, 41, 10);
    tcp_send(&c, 0, PSH, b + 300, n - 300);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg_xid(0), 41);
    assert_int_equal(st()->tcp_resyncs, 2);
    assert_int_equal(st()->rpc_bad_marks, 0);
}

static void test_tcp_syn_fin_rst(void **state)
{
    struct conn c = conn_new(911);
    uint8_t b[4096];
    size_t n = call_rec(b, 50, 1000);

    (void)state;
    tcp_send(&c, 0, SYN, NULL, 0);
    tcp_send(&c, 0, PSH, b, 500);   /* half a record, then FIN: delivered truncated */
    tcp_send(&c, 0, FIN, NULL, 0);
    assert_int_equal(msgs->len, 1);
    assert_true(msg(0)->m.truncated);
    assert_int_equal(msg(0)->m.len, 496);
    assert_int_equal(msg(0)->m.wire_len, 1040);
    /* SYN restarts the same 4-tuple with a new sequence space. */
    c.seq[0] = 777777;
    tcp_send(&c, 0, PSH, b, 300);
    c.seq[0] = 123;
    tcp_send(&c, 0, SYN, NULL, 0);
    tcp_send(&c, 0, PSH, b, n);
    assert_int_equal(msgs->len, 3);
    assert_int_equal(msg(2)->m.len, 1040);
    assert_false(msg(2)->m.truncated);
    /* RST ends both directions, delivering what they hold. */
    tcp_send(&c, 1, PSH, b, 100);
    tcp_send(&c, 1, RST, NULL, 0);
    assert_int_equal(msgs->len, 4);
    assert_int_equal(msg(3)->m.sport, 2049);
}

static void test_tcp_oversize_and_split_mark(void **state)
{
    struct conn c = conn_new(912);
    static uint8_t b[70000];
    size_t n;

    (void)state;
    n = rpc_call(b + 4, 60, 60000);
    put32(b, 0x80000000u | (TBBT_CAP_MAX_RECORD + 100));   /* claims 4 MiB + 100 */
    tcp_send(&c, 0, PSH, b, n + 4);
    for (uint32_t left = TBBT_CAP_MAX_RECORD + 100 - (uint32_t)n; left > 0;) {
        uint32_t k = left < 60000 ? left : 60000;
        memset(b, 0xab, k);
        tcp_send(&c, 0, PSH, b, k);
        left -= k;
    }
    n = call_rec(b, 61, 10);
    tcp_send(&c, 0, PSH, b, 2);   /* the mark in two pieces */
    tcp_send(&c, 0, PSH, b + 2, n - 2);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg_xid(0), 61);
    assert_int_equal(st()->rpc_oversize, 1);
}

static void test_tcp_header_split(void **state)
{
    struct conn c = conn_new(916);
    static uint8_t b[70000];
    size_t n;

    (void)state;
    n = call_rec(b, 62, 10);
    tcp_send(&c, 0, PSH, b, n);
    /* A mark alone in a segment, its header in the next: time of the header's packet. */
    n = call_rec(b, 63, 10);
    tcp_send(&c, 0, PSH, b, 4);
    tcp_send(&c, 0, PSH, b + 4, n - 4);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(1), 63);
    assert_int_equal(msg(1)->m.ts_ns, c.ts);
    /* The same with a header that is not RPC: a bad mark, then the next record. */
    n = call_rec(b, 64, 10);
    put32(b + 8, 9);
    tcp_send(&c, 0, PSH, b, 6);
    n += call_rec(b + n, 65, 10);
    tcp_send(&c, 0, PSH, b + 6, n - 6);
    assert_int_equal(msgs->len, 3);
    assert_int_equal(msg_xid(2), 65);
    assert_int_equal(st()->rpc_bad_marks, 1);
    /* Two fragments of 3 MiB: the record is oversize and skipped. */
    for (int f = 0; f < 2; f++) {
        uint32_t left = 3u << 20;
        n = rpc_call(b + 4, 66, 1000);
        put32(b, (f ? 0x80000000u : 0) | left);
        tcp_send(&c, 0, PSH, b, f ? 4 : n + 4);
        left -= f ? 0 : (uint32_t)n;
        memset(b, 0xab, 60000);
        for (; left > 0; left -= left < 60000 ? left : 60000)
            tcp_send(&c, 0, PSH, b, left < 60000 ? left : 60000);
    }
    n = call_rec(b, 67, 10);
    tcp_send(&c, 0, PSH, b, n);
    assert_int_equal(msgs->len, 4);
    assert_int_equal(msg_xid(3), 67);
    assert_int_equal(st()->rpc_oversize, 1);
}

static void test_tcp_idle_expiry(void **state)
{
    struct conn c = conn_new(913), c2 = conn_new(914);
    uint8_t b[4096];
    size_t n = call_rec(b, 70, 1000);

    (void)state;
    tcp_send(&c, 0, PSH, b, 500);
    c2.ts = c.ts + 11 * 60 * SEC;
    n = call_rec(b, 71, 10);
    tcp_send(&c2, 0, PSH, b, n);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(0), 70);
    assert_true(msg(0)->m.truncated);
    assert_int_equal(msg_xid(1), 71);
}

/*
 * Many connections at once, interleaved, some torn down (FIN, RST) and
 * started again under the same ports: more streams than the decoder's
 * direct-mapped stream cache has slots, so slots are shared and entries of
 * ended streams must not be found again.
 */
static void test_tcp_many_streams(void **state)
{
    enum { NCONN = 600, ROUNDS = 3 };
    struct conn *c = g_new(struct conn, NCONN);
    uint8_t b[256];

    (void)state;
    for (int i = 0; i < NCONN; i++)
        c[i] = conn_new((uint16_t)(20000 + i));
    for (uint32_t r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < NCONN; i++) {   /* the first half of a record each */
            size_t n = call_rec(b, (uint32_t)i * 16 + r, 100);
            tcp_send(&c[i], 0, PSH, b, n / 2);
        }
        for (int i = 0; i < NCONN; i++) {   /* the rest */
            size_t n = call_rec(b, (uint32_t)i * 16 + r, 100);
            tcp_send(&c[i], 0, PSH, b + n / 2, n - n / 2);
            if (i % 3 == 1)
                tcp_send(&c[i], 0, FIN, NULL, 0);
            else if (i % 3 == 2)
                tcp_send(&c[i], 1, RST, NULL, 0);
        }
    }
    assert_int_equal(msgs->len, NCONN * ROUNDS);
    for (guint k = 0; k < msgs->len; k++) {
        uint32_t r = k / NCONN, i = k % NCONN;
        assert_int_equal(msg_xid(k), i * 16 + r);
        assert_int_equal(msg(k)->m.sport, 20000 + i);
        assert_false(msg(k)->m.truncated);
    }
    assert_int_equal(st()->tcp_gaps, 0);
    g_free(c);
}

static void test_tcp_ooo_bound(void **state)
{
    struct conn c = conn_new(915);
    uint8_t b[4096];
    size_t n = call_rec(b, 80, 10);
    uint32_t s0 = c.seq[0];

    (void)state;
    tcp_at(&c, 0, s0, PSH, b, n, n);
    /* Hole of 100 bytes, then more segments than the bound: the hole is given up. */
    for (uint32_t i = 0; i < 200; i++) {
        size_t k = call_rec(b, 100 + i, 10);
        tcp_at(&c, 0, s0 + (uint32_t)n + 100 + i * (uint32_t)k, PSH, b, k, k);
    }
    assert_int_equal(st()->tcp_gaps, 1);
    assert_int_equal(st()->tcp_gap_bytes, 100);
    assert_int_equal(msgs->len, 201);
    assert_int_equal(msg_xid(200), 299);
}

static void test_tcp_ipv6_vlan(void **state)
{
    uint8_t b[512];
    uint16_t q[] = {0x8100};
    size_t n = call_rec(b, 90, 30), l4, l3, len;

    (void)state;
    l4 = put_tcp(tmp, 1000, 2049, 5, PSH, b, n);
    l3 = put_ip6(tmp2, CLI6, SRV6, 6, tmp, l4);
    len = put_eth(pkt, 0x86dd, 1, q, tmp2, l3);
    feed(DLT_EN10MB, pkt, len);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg(0)->m.af, 6);
    assert_true(msg(0)->m.tcp);
    assert_memory_equal(msg(0)->m.dst, SRV6, 16);
}

/*
 * Property test: a stream of records of random sizes, cut into random
 * segments sent with local reordering, duplicates and overlapping
 * retransmissions, comes out as exactly the records, in order.  With a
 * snap length, every message is a prefix of its record with the right
 * wire length, in order, without inventions.
 */
struct rstream {
    uint8_t *b;
    size_t len;
    size_t off[400], rlen[400];   /* record starts (at the mark) and lengths */
    int n;
};

static void make_rstream(struct rstream *r, GRand *g, int n)
{
    r->b = g_malloc(n * 20100);
    r->len = 0;
    r->n = n;
    for (int i = 0; i < n; i++) {
        size_t body = (size_t)g_rand_int_range(g, 0, i % 10 == 0 ? 20000 : 300);
        r->off[i] = r->len;
        r->rlen[i] = call_rec(r->b + r->len, 1000 + (uint32_t)i, body);
        r->len += r->rlen[i];
    }
}

/* Sends r after a SYN in random segments: swapped pairs, duplicates, overlaps. */
static void send_shuffled(struct conn *c, struct rstream *r, GRand *g, size_t snap)
{
    static size_t a[8000], e[8000];
    size_t n = 0, o = 0;
    uint32_t s0 = c->seq[0];

    tcp_at(c, 0, s0 - 1, SYN, NULL, 0, 0);
    while (o < r->len) {
        a[n] = o;
        o += (size_t)g_rand_int_range(g, 1, 3000);
        e[n++] = o < r->len ? o : r->len;
    }
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && g_rand_int_range(g, 0, 8) == 0) {   /* swap with the next */
            size_t ta = a[i], te = e[i];
            a[i] = a[i + 1], e[i] = e[i + 1];
            a[i + 1] = ta, e[i + 1] = te;
        }
        tcp_at(c, 0, s0 + (uint32_t)a[i], PSH, r->b + a[i], e[i] - a[i], snap);
        if (g_rand_int_range(g, 0, 8) == 0) {   /* a retransmission, maybe overlapping */
            size_t lo = a[i] > 10 ? a[i] - 10 : 0, hi = e[i] + 10 < r->len ? e[i] + 10 : r->len;
            tcp_at(c, 0, s0 + (uint32_t)lo, PSH, r->b + lo, hi - lo, snap);
        }
    }
    tbbt_capdec_flush(dec);
}

static void test_tcp_random_segments(void **state)
{
    GRand *g = g_rand_new_with_seed(42);

    (void)state;
    for (int round = 0; round < 20; round++) {
        struct rstream r;
        struct conn c = conn_new((uint16_t)(2000 + round));
        make_rstream(&r, g, 200);
        send_shuffled(&c, &r, g, SIZE_MAX);
        assert_int_equal(msgs->len, r.n);
        for (int i = 0; i < r.n; i++) {
            assert_int_equal(msg((guint)i)->m.len, r.rlen[i] - 4);
            assert_memory_equal(msg((guint)i)->m.data, r.b + r.off[i] + 4, r.rlen[i] - 4);
        }
        assert_int_equal(st()->tcp_gaps, 0);
        assert_int_equal(st()->rpc_bad_marks, 0);
        clear_msgs();
        g_free(r.b);
    }
    g_rand_free(g);
}

static void test_tcp_random_snaplen(void **state)
{
    GRand *g = g_rand_new_with_seed(7);
    uint64_t total = 0;

    (void)state;
    for (int round = 0; round < 20; round++) {
        struct rstream r;
        struct conn c = conn_new((uint16_t)(3000 + round));
        int next = 0;
        make_rstream(&r, g, 200);
        send_shuffled(&c, &r, g, (size_t)g_rand_int_range(g, 20, 400));
        for (guint i = 0; i < msgs->len; i++) {
            int x;
            if (msg(i)->m.len < 4)
                continue;   /* a prefix too short to name its record */
            x = (int)msg_xid(i) - 1000;
            assert_true(x >= next && x < r.n);
            assert_int_equal(msg(i)->m.wire_len, r.rlen[x] - 4);
            assert_true(msg(i)->m.len <= msg(i)->m.wire_len);
            assert_memory_equal(msg(i)->m.data, r.b + r.off[x] + 4, msg(i)->m.len);
            next = x + 1;
        }
        total += msgs->len;
        assert_int_equal(st()->tcp_gaps, 0);
        clear_msgs();
        g_free(r.b);
    }
    assert_true(total > 20 * 15);   /* about one record in eight has its mark captured */
    g_rand_free(g);
}

/* ---- capture files --------------------------------------------------------- */

static char *tmpdir;

static int file_setup(void **state)
{
    setup(state);
    tmpdir = g_dir_make_tmp("tbbt-cap-XXXXXX", NULL);
    assert_non_null(tmpdir);
    return 0;
}

static int file_teardown(void **state)
{
    GDir *dir = g_dir_open(tmpdir, 0, NULL);
    const char *name;

    while (dir && (name = g_dir_read_name(dir)) != NULL) {
        char *p = g_build_filename(tmpdir, name, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(tmpdir);
    g_free(tmpdir);
    return teardown(state);
}

static char *path_of(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

/* Writes a pcap of UDP calls xid0.. at times t0 + i*step (ns), link type dlt. */
static char *write_pcap(const char *name, int dlt, uint32_t xid0, int count, uint64_t t0,
                        uint64_t step)
{
    char *path = path_of(name);
    pcap_t *p = pcap_open_dead_with_tstamp_precision(dlt, 65535, PCAP_TSTAMP_PRECISION_NANO);
    pcap_dumper_t *w = pcap_dump_open(p, path);

    assert_non_null(w);
    for (int i = 0; i < count; i++) {
        uint8_t b[2048];
        size_t l3 = udp4_call(tmp2, xid0 + (uint32_t)i, 8);
        size_t n = put_eth(b, 0x0800, 0, NULL, tmp2, l3);
        uint64_t t = t0 + (uint64_t)i * step;
        struct pcap_pkthdr h = {{(time_t)(t / SEC), (suseconds_t)(t % SEC)}, (bpf_u_int32)n,
                                (bpf_u_int32)n};
        if (i == 1)
            put16(b + 14 + 20, 801);   /* the second packet from port 801 */
        pcap_dump((u_char *)w, &h, b);
    }
    pcap_dump_close(w);
    pcap_close(p);
    return path;
}

static int run_files(const char *const *paths, int n, const char *filter, char *err,
                     struct tbbt_cap_stats *out)
{
    struct tbbt_cap *c = tbbt_cap_open(paths, n, filter, err, 256);
    int rc;

    assert_non_null(c);
    rc = tbbt_cap_run(c, collect, NULL, NULL, err, 256);
    *out = *tbbt_cap_stats(c);
    assert_true(tbbt_cap_input_size(c) > 0);
    tbbt_cap_close(c);
    return rc;
}

static void test_file_pcap_and_gzip(void **state)
{
    char err[256] = "", *p = write_pcap("a.pcap", DLT_EN10MB, 1, 5, SEC, SEC);
    char *gzp = path_of("a.pcap.gz");
    const char *paths[1] = {p};
    struct tbbt_cap_stats s;
    gchar *data;
    gsize len;
    gzFile gz;

    (void)state;
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
    assert_int_equal(msgs->len, 5);
    assert_int_equal(s.packets, 5);
    assert_int_equal(s.rpc_messages, 5);
    assert_int_equal(msg(4)->m.ts_ns, 5 * SEC);
    clear_msgs();
    assert_true(g_file_get_contents(p, &data, &len, NULL));
    gz = gzopen(gzp, "wb");
    assert_int_equal(gzwrite(gz, data, (unsigned)len), (int)len);
    gzclose(gz);
    g_free(data);
    paths[0] = gzp;
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
    assert_int_equal(msgs->len, 5);
    assert_int_equal(msg_xid(4), 5);
    g_free(p);
    g_free(gzp);
}

/* data[0..n) as one gzip member of stored (level 0) deflate blocks into out; its size. */
static size_t gz_member(const uint8_t *data, size_t n, uint8_t *out, size_t cap)
{
    z_stream z = {0};

    assert_int_equal(deflateInit2(&z, Z_NO_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                                  Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

/*
 * A gzip file of two members whose boundary falls one byte before the end of the
 * walker's 256 KiB read: the second member's magic is split across two reads, and
 * every packet of both members is still read.
 */
static void test_file_gzip_members(void **state)
{
    enum { COUNT = 3000, TARGET = (256 << 10) - 1 };
    char err[256] = "", *p = write_pcap("m.pcap", DLT_EN10MB, 1, COUNT, SEC, 1000);
    char *gzp = path_of("m.pcap.gz");
    const char *paths[1] = {gzp};
    struct tbbt_cap_stats s;
    uint8_t *z1 = g_malloc(TARGET + 4096), *z2;
    size_t n1 = 0, l = TARGET - 10, l1 = 0, n2;
    gchar *data;
    gsize len;
    FILE *f;

    (void)state;
    assert_true(g_file_get_contents(p, &data, &len, NULL));
    assert_true(len > TARGET + 4096);
    for (; l > TARGET - 400 && n1 != TARGET; l--)   /* the first member: TARGET bytes */
        if ((n1 = gz_member((const uint8_t *)data, l, z1, TARGET + 4096)) == TARGET)
            l1 = l;
    assert_int_equal(n1, TARGET);
    z2 = g_malloc(len - l1 + 4096);
    n2 = gz_member((const uint8_t *)data + l1, len - l1, z2, len - l1 + 4096);
    f = fopen(gzp, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(z1, 1, n1, f), n1);
    assert_int_equal(fwrite(z2, 1, n2, f), n2);
    assert_int_equal(fclose(f), 0);
    if (run_files(paths, 1, NULL, err, &s) != 0)
        fail_msg("%s", err);
    assert_int_equal(s.packets, COUNT);
    assert_int_equal(msgs->len, COUNT);
    assert_int_equal(msg_xid(COUNT - 1), COUNT);
    g_free(z1);
    g_free(z2);
    g_free(data);
    g_free(p);
    g_free(gzp);
}

static void test_file_merge_filter(void **state)
{
    char err[256] = "";
    char *a = write_pcap("m1.pcap", DLT_EN10MB, 100, 4, SEC, 2 * SEC);
    char *b = write_pcap("m2.pcap", DLT_EN10MB, 200, 4, 2 * SEC, 2 * SEC);
    const char *paths[2] = {a, b};
    static const uint32_t want[8] = {100, 200, 101, 201, 102, 202, 103, 203};
    struct tbbt_cap_stats s;

    (void)state;
    assert_int_equal(run_files(paths, 2, NULL, err, &s), 0);
    assert_int_equal(msgs->len, 8);
    for (guint i = 0; i < 8; i++)
        assert_int_equal(msg_xid(i), want[i]);
    clear_msgs();
    assert_int_equal(run_files(paths, 2, "udp src port 801", err, &s), 0);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(0), 101);
    assert_int_equal(msg_xid(1), 201);
    assert_int_equal(s.packets, 2);
    assert_null(tbbt_cap_open(paths, 2, "port port", err, sizeof err));
    assert_non_null(strstr(err, "bad filter"));
    g_free(a);
    g_free(b);
}

static void test_file_errors(void **state)
{
    char err[256] = "", *bad = path_of("notes.txt"), *p, *trunc = path_of("t.pcap");
    const char *paths[1] = {bad};
    struct tbbt_cap_stats s;
    gchar *data;
    gsize len;

    (void)state;
    assert_true(g_file_set_contents(bad, "hello, this is not a capture\n", -1, NULL));
    assert_null(tbbt_cap_open(paths, 1, NULL, err, sizeof err));
    assert_non_null(strstr(err, bad));
    assert_non_null(strstr(err, "not a pcap"));
    /* Unsupported link type. */
    p = write_pcap("wifi.pcap", DLT_IEEE802_11, 1, 1, SEC, SEC);
    paths[0] = p;
    assert_null(tbbt_cap_open(paths, 1, NULL, err, sizeof err));
    assert_non_null(strstr(err, "unsupported link type"));
    assert_non_null(strstr(err, p));
    g_free(p);
    /* Truncated in the middle of the last packet. */
    p = write_pcap("full.pcap", DLT_EN10MB, 1, 3, SEC, SEC);
    assert_true(g_file_get_contents(p, &data, &len, NULL));
    assert_true(g_file_set_contents(trunc, data, (gssize)len - 10, NULL));
    g_free(data);
    g_free(p);
    paths[0] = trunc;
    err[0] = 0;
    assert_int_equal(run_files(paths, 1, NULL, err, &s), TBBT_E_TRUNC);
    assert_non_null(strstr(err, trunc));
    assert_int_equal(msgs->len, 2);
    assert_int_equal(s.packets, 2);
    clear_msgs();
    /* Header only: an empty capture is fine. */
    p = write_pcap("empty.pcap", DLT_EN10MB, 1, 0, SEC, SEC);
    paths[0] = p;
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
    assert_int_equal(s.packets, 0);
    g_free(p);
    g_free(bad);
    g_free(trunc);
}

static void put_be32(FILE *f, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    fwrite(b, 1, 4, f);
}

/*
 * A classic pcap written on a big-endian host with microsecond times, read
 * from the mapping: times, byte order, the filter, then the ends a broken
 * file can have (a cut header, a captured length past 256 KiB: the packets
 * before it are kept and the file is damaged, not failed).
 */
static void test_file_mapped_swapped(void **state)
{
    char err[256] = "", *path = path_of("be.pcap");
    const char *paths[1] = {path};
    struct tbbt_cap_stats s;
    FILE *f = fopen(path, "wb");

    (void)state;
    assert_non_null(f);
    put_be32(f, 0xa1b2c3d4);
    put_be32(f, 0x00020004);   /* version 2.4 */
    put_be32(f, 0);
    put_be32(f, 0);
    put_be32(f, 65535);
    put_be32(f, 1);            /* EN10MB */
    for (uint32_t i = 0; i < 3; i++) {
        uint8_t b[2048];
        size_t l3 = udp4_call(tmp2, 700 + i, 8), n = put_eth(b, 0x0800, 0, NULL, tmp2, l3);
        if (i == 2)
            put16(b + 14 + 20, 801);
        put_be32(f, 7);
        put_be32(f, 250000 + i);
        put_be32(f, (uint32_t)n);
        put_be32(f, (uint32_t)n);
        fwrite(b, 1, n, f);
    }
    fclose(f);
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
    assert_int_equal(msgs->len, 3);
    assert_int_equal(msg_xid(2), 702);
    assert_int_equal(msg(1)->m.ts_ns, 7 * SEC + 250001000ull);
    clear_msgs();
    assert_int_equal(run_files(paths, 1, "udp src port 801", err, &s), 0);
    assert_int_equal(msgs->len, 1);
    assert_int_equal(msg_xid(0), 702);
    assert_int_equal(s.packets, 1);
    clear_msgs();
    /* a record header cut short after the last packet */
    f = fopen(path, "ab");
    put_be32(f, 8);
    fclose(f);
    assert_int_equal(run_files(paths, 1, NULL, err, &s), TBBT_E_TRUNC);
    assert_non_null(strstr(err, "ends in the middle of a packet"));
    assert_int_equal(msgs->len, 3);
    clear_msgs();
    /* then a whole header claiming 300000 captured bytes */
    f = fopen(path, "ab");
    put_be32(f, 0);
    put_be32(f, 300000);
    put_be32(f, 300000);
    fclose(f);
    assert_int_equal(run_files(paths, 1, NULL, err, &s), TBBT_E_DAMAGED);
    assert_non_null(strstr(err, "300000"));
    assert_int_equal(msgs->len, 3);
    assert_int_equal(s.skipped_records, 1);
    assert_int_equal(s.resyncs, 0);
    assert_int_equal(s.damaged_bytes, 4 + 12);
    assert_int_equal(s.damaged_files, 1);
    g_free(path);
}

/* A minimal little-endian pcapng: section header, one Ethernet interface, two packets. */
static void test_file_pcapng(void **state)
{
    char err[256] = "", *path = path_of("x.pcapng");
    FILE *f = fopen(path, "wb");
    const char *paths[1] = {path};
    struct tbbt_cap_stats s;
    uint32_t shb[7] = {0x0a0d0d0a, 28, 0x1a2b3c4d, 1, 0xffffffff, 0xffffffff, 28};
    uint32_t idb[5] = {1, 20, 1 /* EN10MB */, 65535, 20};

    (void)state;
    shb[3] = 1;   /* major 1, minor 0 */
    assert_non_null(f);
    fwrite(shb, 4, 7, f);
    fwrite(idb, 4, 5, f);
    for (uint32_t i = 0; i < 2; i++) {
        uint8_t b[2048];
        size_t l3 = udp4_call(tmp2, 500 + i, 8), n = put_eth(b, 0x0800, 0, NULL, tmp2, l3);
        uint32_t padded = (uint32_t)((n + 3) & ~3u), total = 32 + padded;
        uint64_t us = 3000000 + i;   /* microseconds */
        uint32_t epb[7] = {6, total, 0, (uint32_t)(us >> 32), (uint32_t)us, (uint32_t)n,
                           (uint32_t)n};
        fwrite(epb, 4, 7, f);
        memset(b + n, 0, padded - n);
        fwrite(b, 1, padded, f);
        fwrite(&total, 4, 1, f);
    }
    fclose(f);
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(1), 501);
    assert_int_equal(msg(1)->m.ts_ns, 3 * SEC + 1000);
    g_free(path);
}

/*
 * A pcapng file of two sections: the first's interface is Ethernet (the link type
 * libpcap gives), the second's raw IP.  The second section's packets are of another
 * link type and are not decoded (as Ethernet or otherwise): only the first's count.
 */
static void test_file_pcapng_sections(void **state)
{
    char err[256] = "", *path = path_of("s.pcapng");
    FILE *f = fopen(path, "wb");
    const char *paths[1] = {path};
    struct tbbt_cap_stats s;
    const uint32_t shb[7] = {0x0a0d0d0a, 28, 0x1a2b3c4d, 1, 0xffffffff, 0xffffffff, 28};
    uint32_t idb[5] = {1, 20, 1 /* EN10MB */, 65535, 20};

    (void)state;
    assert_non_null(f);
    for (int sect = 0; sect < 2; sect++) {
        fwrite(shb, 4, 7, f);
        idb[2] = sect == 0 ? 1 : 101;   /* LINKTYPE_ETHERNET, then LINKTYPE_RAW */
        fwrite(idb, 4, 5, f);
        for (uint32_t i = 0; i < 2; i++) {
            uint8_t b[2048];
            size_t l3 = udp4_call(tmp2, 500 + 2 * (uint32_t)sect + i, 8);
            size_t n = sect == 0 ? put_eth(b, 0x0800, 0, NULL, tmp2, l3) : l3;
            uint32_t padded = (uint32_t)((n + 3) & ~3u), total = 32 + padded;
            uint64_t us = 3000000 + 2 * (uint64_t)sect + i;
            uint32_t epb[7] = {6, total, 0, (uint32_t)(us >> 32), (uint32_t)us, (uint32_t)n,
                               (uint32_t)n};
            if (sect == 1)
                memcpy(b, tmp2, n);
            fwrite(epb, 4, 7, f);
            memset(b + n, 0, padded - n);
            fwrite(b, 1, padded, f);
            fwrite(&total, 4, 1, f);
        }
    }
    fclose(f);
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
    assert_int_equal(s.packets, 2);
    assert_int_equal(msgs->len, 2);
    assert_int_equal(msg_xid(1), 501);
    g_free(path);
}

/*
 * A record header with a huge captured length in the middle of a classic
 * pcap file, read from the mapping and gzip-compressed: the walk skips that
 * one record and resynchronizes on the next (docs/tbbt-convert.md "Damaged
 * input"); libpcap's rule would have ended the file there.
 */
static void test_file_resync(void **state)
{
    char err[256] = "", *p = write_pcap("r.pcap", DLT_EN10MB, 1, 5, SEC, SEC);
    char *gzp = path_of("r.pcap.gz");
    const char *paths[1] = {p};
    struct tbbt_cap_stats s;
    gchar *data;
    gsize len, rec;
    gzFile gz;

    (void)state;
    assert_true(g_file_get_contents(p, &data, &len, NULL));
    rec = (len - 24) / 5;
    memset(data + 24 + 2 * rec + 8, 0x7f, 4);       /* record 3's captured length */
    assert_true(g_file_set_contents(p, data, (gssize)len, NULL));
    for (int pass = 0; pass < 2; pass++) {
        err[0] = 0;
        assert_int_equal(run_files(paths, 1, NULL, err, &s), TBBT_E_DAMAGED);
        assert_non_null(strstr(err, paths[0]));
        assert_int_equal(msgs->len, 4);
        assert_int_equal(msg_xid(2), 4);
        assert_int_equal(s.skipped_records, 1);
        assert_int_equal(s.resyncs, 1);
        assert_int_equal(s.damaged_bytes, rec);
        clear_msgs();
        gz = gzopen(gzp, "wb");
        assert_int_equal(gzwrite(gz, data, (unsigned)len), (int)len);
        gzclose(gz);
        paths[0] = gzp;
    }
    g_free(data);
    g_free(p);
    g_free(gzp);
}

/* The process's virtual memory (VmSize of /proc/self/status), in KiB. */
static long vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld", &kib) == 1)
            break;
    fclose(f);
    assert_true(kib > 0);
    return kib;
}

/*
 * A file opened and closed again leaves no mapping behind.  The walker maps a plain
 * capture at a 2 MiB boundary out of a larger reservation; the rest of it after the file
 * was unmapped from a byte offset, which munmap() refused, so every file opened left a
 * tail of up to 2 MiB reserved (the fuzzing campaign's fuzz-capfile ran out of mappings
 * after an hour).
 */
static void test_file_no_mapping_left(void **state)
{
    char err[256] = "", *p = write_pcap("m.pcap", DLT_EN10MB, 1, 3, SEC, SEC);
    const char *paths[1] = {p};
    struct tbbt_cap_stats s;
    long before;

    (void)state;
    assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);   /* first use: lazy set-up */
    clear_msgs();
    before = vm_size_kib();
    for (int i = 0; i < 200; i++) {
        assert_int_equal(run_files(paths, 1, NULL, err, &s), 0);
        clear_msgs();
    }
    assert_int_equal(s.rpc_messages, 3);
    /* each tail left was up to 2 MiB: 200 of them 400 MiB */
    assert_true(vm_size_kib() - before < 64 * 1024);
    g_free(p);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define TF(f) cmocka_unit_test_setup_teardown(f, file_setup, file_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_link_ethernet),
        T(test_link_sll),
        T(test_link_null_loop),
        T(test_link_raw),
        T(test_ipv6_ext),
        T(test_udp),
        T(test_malformed),
        T(test_frag_orders),
        T(test_frag_missing_overlap),
        T(test_frag_expire_truncated),
        T(test_frag_ipv6),
        T(test_tcp_records_in_one_segment),
        T(test_tcp_record_across_segments),
        T(test_tcp_multi_fragment),
        T(test_tcp_retransmit_overlap),
        T(test_tcp_out_of_order),
        T(test_tcp_gap_resync),
        T(test_tcp_snaplen),
        T(test_tcp_bad_marks),
        T(test_tcp_garbage_and_midstream),
        T(test_tcp_syn_fin_rst),
        T(test_tcp_oversize_and_split_mark),
        T(test_tcp_header_split),
        T(test_tcp_idle_expiry),
        T(test_tcp_ooo_bound),
        T(test_tcp_many_streams),
        T(test_tcp_ipv6_vlan),
        T(test_tcp_random_segments),
        T(test_tcp_random_snaplen),
        TF(test_file_pcap_and_gzip),
        TF(test_file_gzip_members),
        TF(test_file_merge_filter),
        TF(test_file_errors),
        TF(test_file_pcapng),
        TF(test_file_pcapng_sections),
        TF(test_file_mapped_swapped),
        TF(test_file_resync),
        TF(test_file_no_mapping_left),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
