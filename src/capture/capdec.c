/* SPDX-License-Identifier: MIT */
/*
 * The packet decoder's outer layers: link-layer headers (EN10MB with
 * 802.1Q/802.1ad tags, LINUX_SLL, LINUX_SLL2, NULL, LOOP, RAW, IPV4, IPV6),
 * IPv4 (RFC 791) and IPv6 with its extension headers (RFC 8200 4), and UDP
 * (RFC 768), where each datagram that looks like RPC is one message
 * (RFC 5531 10).  TCP is in tcp.c, fragments in ipfrag.c.
 *
 * Every header is read through a bounds-checked cursor.  A header cut short
 * by the snap length is not counted as malformed (the packet already counts
 * as truncated); one that is inconsistent is.  Checksums are not verified.
 */
#include "capture/capture-int.h"
#include "onc/onc.h"
#include "util/buf.h"
#include "util/util.h"

#include <pcap/dlt.h>
#include <string.h>

#define ETH_IP4 0x0800
#define ETH_IP6 0x86dd
#define ETH_VLAN 0x8100   /* 802.1Q */
#define ETH_QINQ 0x88a8   /* 802.1ad */
#define ETH_QINQ_OLD 0x9100
#define LINKTYPE_RAW 101
#define MAX_VLAN_TAGS 8
#define MAX_IP6_EXT 16

struct tbbt_capdec *tbbt_capdec_new(tbbt_cap_msg_cb cb, void *arg)
{
    struct tbbt_capdec *d = g_new0(struct tbbt_capdec, 1);

    d->magic = TBBT__CAP_MAGIC;
    d->cb = cb;
    d->arg = arg;
    d->frags = tbbt__cap_frags_new();
    tbbt__cap_tcp_init(d);
    return d;
}

void tbbt_capdec_free(struct tbbt_capdec *d)
{
    if (!d)
        return;
    g_assert(d->magic == TBBT__CAP_MAGIC);
    tbbt__cap_tcp_fini(d);
    tbbt__cap_frags_free(d, d->frags);
    d->magic = 0;
    g_free(d);
}

void tbbt_capdec_flush(struct tbbt_capdec *d)
{
    tbbt__cap_tcp_flush(d);
    tbbt__cap_frags_flush(d);
}

const struct tbbt_cap_stats *tbbt_capdec_stats(const struct tbbt_capdec *d)
{
    return &d->st;
}

int tbbt_capdec_check_linktype(int dlt)
{
    switch (dlt) {
    case DLT_EN10MB:
    case DLT_LINUX_SLL:
    case DLT_LINUX_SLL2:
    case DLT_NULL:
    case DLT_LOOP:
    case DLT_RAW:
    case LINKTYPE_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
        return 0;
    default:
        return TBBT_E_LINKTYPE;
    }
}

void tbbt__cap_short(struct tbbt_capdec *d, uint32_t cap, uint32_t wire)
{
    if (cap >= wire)
        d->st.malformed_packets++;
}

/* ---- UDP ------------------------------------------------------------------- */

static void udp(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, const uint8_t *p,
                uint32_t cap, uint32_t wire, uint64_t ts)
{
    struct tbbt_buf b;
    struct tbbt_cap_msg m;
    uint32_t ulen, pcap;

    if (cap < 8) {
        tbbt__cap_short(d, cap, wire);
        return;
    }
    tbbt_buf_init(&b, p, cap);
    m.sport = tbbt_buf_get_be16(&b);
    m.dport = tbbt_buf_get_be16(&b);
    ulen = tbbt_buf_get_be16(&b);
    if (ulen < 8 || ulen > wire) {
        d->st.malformed_packets++;
        return;
    }
    pcap = cap - 8 < ulen - 8 ? cap - 8 : ulen - 8;
    if (ulen - 8 < TBBT__CAP_MIN_MSG || pcap < 12 || !tbbt_onc_plausible(p + 8)) {
        d->st.non_rpc_streams++;
        return;
    }
    m.ts_ns = ts;
    m.data = p + 8;
    m.len = pcap;
    m.wire_len = ulen - 8;
    m.truncated = pcap < ulen - 8;
    m.tcp = false;
    m.memo = NULL;
    m.af = ip->af;
    memset(m.src, 0, sizeof m.src);
    memset(m.dst, 0, sizeof m.dst);
    memcpy(m.src, ip->src, ip->af == 4 ? 4 : 16);
    memcpy(m.dst, ip->dst, ip->af == 4 ? 4 : 16);
    tbbt__cap_deliver(d, &m);
}

void tbbt__cap_l4(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint8_t proto,
                  const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts)
{
    if (proto == 6)
        tbbt__cap_tcp(d, ip, p, cap, wire, ts);
    else if (proto == 17)
        udp(d, ip, p, cap, wire, ts);
    else
        d->st.other_packets++;
}

/* ---- IPv4 and IPv6 --------------------------------------------------------- */

static void ip4(struct tbbt_capdec *d, const uint8_t *p, uint32_t cap, uint32_t wire,
                uint64_t ts)
{
    struct tbbt_buf b;
    struct tbbt__cap_ip ip = {4, p + 12, p + 16};
    uint32_t hl, tot, fo, id;
    uint8_t vhl, proto;

    if (cap < 20) {
        tbbt__cap_short(d, cap, wire);
        return;
    }
    tbbt_buf_init(&b, p, cap);
    vhl = tbbt_buf_get_u8(&b);
    tbbt_buf_skip(&b, 1);
    tot = tbbt_buf_get_be16(&b);
    id = tbbt_buf_get_be16(&b);
    fo = tbbt_buf_get_be16(&b);
    tbbt_buf_skip(&b, 1);
    proto = tbbt_buf_get_u8(&b);
    hl = (vhl & 15u) * 4;
    if (tot == 0)
        tot = wire;   /* segmentation offload on the capturing host */
    if (vhl >> 4 != 4 || hl < 20 || tot < hl || tot > wire) {
        d->st.malformed_packets++;
        return;
    }
    if (hl > cap)
        return;   /* options cut by the snap length */
    cap = cap < tot ? cap : tot;
    if ((fo & 0x3fffu) != 0) {   /* MF or an offset: a fragment */
        tbbt__cap_frag_add(d, &ip, id, proto, (fo & 0x1fffu) * 8, fo & 0x2000u, p + hl,
                           cap - hl, tot - hl, ts);
        return;
    }
    tbbt__cap_l4(d, &ip, proto, p + hl, cap - hl, tot - hl, ts);
}

/* An IPv6 fragment header at p (8 bytes present); the fragment follows it. */
static void ip6_frag(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, const uint8_t *p,
                     uint32_t cap, uint32_t wire, uint64_t ts)
{
    uint8_t nh = p[0];
    uint32_t offm = tbbt_be16(p + 2), id = tbbt_be32(p + 4);

    if ((offm & 0xfff9u) == 0) {   /* atomic fragment: offset 0, no M */
        tbbt__cap_ip6_chain(d, ip, nh, p + 8, cap - 8, wire - 8, ts, true);
        return;
    }
    tbbt__cap_frag_add(d, ip, id, nh, offm & 0xfff8u, offm & 1u, p + 8, cap - 8, wire - 8, ts);
}

void tbbt__cap_ip6_chain(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint8_t nh,
                         const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts,
                         bool in_frag)
{
    for (int i = 0; i < MAX_IP6_EXT; i++) {
        uint32_t len;

        switch (nh) {
        case 0:    /* hop-by-hop options */
        case 43:   /* routing */
        case 60:   /* destination options */
            if (cap < 2) {
                tbbt__cap_short(d, cap, wire);
                return;
            }
            len = ((uint32_t)p[1] + 1) * 8;
            if (len > wire) {
                d->st.malformed_packets++;
                return;
            }
            if (len > cap)
                return;   /* cut by the snap length */
            nh = p[0];
            p += len;
            cap -= len;
            wire -= len;
            break;
        case 44:   /* fragment */
            if (in_frag || wire < 8) {
                d->st.malformed_packets++;
                return;
            }
            if (cap < 8)
                return;
            ip6_frag(d, ip, p, cap, wire, ts);
            return;
        default:
            tbbt__cap_l4(d, ip, nh, p, cap, wire, ts);
            return;
        }
    }
    d->st.malformed_packets++;
}

static void ip6(struct tbbt_capdec *d, const uint8_t *p, uint32_t cap, uint32_t wire,
                uint64_t ts)
{
    struct tbbt__cap_ip ip = {6, p + 8, p + 24};
    uint32_t plen;

    if (cap < 40) {
        tbbt__cap_short(d, cap, wire);
        return;
    }
    plen = tbbt_be16(p + 4);
    if (plen == 0 && wire >= 40)
        plen = wire - 40;   /* jumbogram or segmentation offload */
    if (p[0] >> 4 != 6 || 40 + plen > wire) {
        d->st.malformed_packets++;
        return;
    }
    cap = cap < 40 + plen ? cap : 40 + plen;
    tbbt__cap_ip6_chain(d, &ip, p[6], p + 40, cap - 40, plen, ts, false);
}

/* ---- link layers ----------------------------------------------------------- */

static void by_version(struct tbbt_capdec *d, const uint8_t *p, uint32_t cap, uint32_t wire,
                       uint64_t ts)
{
    if (cap < 1) {
        tbbt__cap_short(d, cap, wire);
        return;
    }
    if (p[0] >> 4 == 4)
        ip4(d, p, cap, wire, ts);
    else if (p[0] >> 4 == 6)
        ip6(d, p, cap, wire, ts);
    else
        d->st.malformed_packets++;
}

/* Network layer after a link header of off bytes whose Ethernet type is type. */
static void by_ethertype(struct tbbt_capdec *d, const uint8_t *data, uint32_t cap,
                         uint32_t wire, uint32_t off, uint16_t type, uint64_t ts)
{
    struct tbbt_buf b;

    tbbt_buf_init(&b, data + off, cap - off);
    for (int i = 0; type == ETH_VLAN || type == ETH_QINQ || type == ETH_QINQ_OLD; i++) {
        if (i == MAX_VLAN_TAGS) {
            d->st.malformed_packets++;
            return;
        }
        tbbt_buf_skip(&b, 2);   /* tag control information */
        type = tbbt_buf_get_be16(&b);
        if (b.trunc) {
            tbbt__cap_short(d, cap, wire);
            return;
        }
        off += 4;
    }
    if (type == ETH_IP4)
        ip4(d, data + off, cap - off, wire - off, ts);
    else if (type == ETH_IP6)
        ip6(d, data + off, cap - off, wire - off, ts);
    else
        d->st.other_packets++;
}

static bool af_inet6(uint32_t af)
{
    return af == 24 || af == 28 || af == 30;   /* NetBSD/OpenBSD, FreeBSD, macOS */
}

/* DLT_NULL (host byte order of the capturing machine) and DLT_LOOP (network order). */
static void null_loop(struct tbbt_capdec *d, const uint8_t *data, uint32_t cap, uint32_t wire,
                      uint64_t ts)
{
    struct tbbt_buf b;
    uint32_t be, le;

    tbbt_buf_init(&b, data, cap);
    be = tbbt_buf_get_be32(&b);
    tbbt_buf_init(&b, data, cap);
    le = tbbt_buf_get_le32(&b);
    if (b.trunc)
        tbbt__cap_short(d, cap, wire);
    else if (be == 2 || le == 2)
        ip4(d, data + 4, cap - 4, wire - 4, ts);
    else if (af_inet6(be) || af_inet6(le))
        ip6(d, data + 4, cap - 4, wire - 4, ts);
    else
        d->st.other_packets++;
}

/* Link headers with the Ethernet type at a fixed place: {dlt, header length, type offset}. */
static const struct {
    int dlt;
    uint32_t hdr;
    uint32_t type_at;
} eth_like[] = {
    {DLT_EN10MB, 14, 12},
    {DLT_LINUX_SLL, 16, 14},
    {DLT_LINUX_SLL2, 20, 0},
    {0, 0, 0},
};

void tbbt_capdec_packet(struct tbbt_capdec *d, int dlt, uint64_t ts_ns, const uint8_t *data,
                        uint32_t caplen, uint32_t wire_len)
{
    d->st.packets++;
    d->st.bytes += wire_len;
    if (caplen > wire_len)
        wire_len = caplen;   /* inconsistent record header: trust what is there */
    if (caplen < wire_len)
        d->st.truncated_packets++;
    for (int i = 0; eth_like[i].hdr; i++) {
        if (eth_like[i].dlt != dlt)
            continue;
        if (caplen < eth_like[i].hdr) {
            tbbt__cap_short(d, caplen, wire_len);
            return;
        }
        by_ethertype(d, data, caplen, wire_len, eth_like[i].hdr,
                     tbbt_be16(data + eth_like[i].type_at), ts_ns);
        return;
    }
    switch (dlt) {
    case DLT_NULL:
    case DLT_LOOP:
        null_loop(d, data, caplen, wire_len, ts_ns);
        break;
    case DLT_RAW:
    case LINKTYPE_RAW:
        by_version(d, data, caplen, wire_len, ts_ns);
        break;
    case DLT_IPV4:
        ip4(d, data, caplen, wire_len, ts_ns);
        break;
    case DLT_IPV6:
        ip6(d, data, caplen, wire_len, ts_ns);
        break;
    default:
        d->st.other_packets++;
        break;
    }
}
