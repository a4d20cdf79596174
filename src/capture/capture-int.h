/* SPDX-License-Identifier: MIT */
/*
 * Internals of the packet decoder shared by its files: the decoder object,
 * the per-direction TCP stream with its record-marking parser state, and
 * the entry points between layers (link/IP in capdec.c, IPv4/IPv6
 * fragments in ipfrag.c, TCP ordering in tcp.c, RPC record marking in
 * rpcrec.c).  Nothing here is visible outside src/capture/.
 *
 * References: RFC 791 (IPv4 fragments), RFC 8200 (IPv6 and its extension
 * headers), RFC 9293 (TCP sequence space), RFC 5531 11 (record marking).
 */
#ifndef TBBT_CAPTURE_CAPTURE_INT_H
#define TBBT_CAPTURE_CAPTURE_INT_H

#include "util/dlist.h"
#include "capture/capture.h"

#include <glib.h>

#define TBBT__CAP_MAGIC 0x43415044u /* "CAPD" */

/* Smallest RPC message: a reply is 24 bytes, a call 40 (RFC 5531 9). */
#define TBBT__CAP_MIN_MSG 24u
/* Fragment lengths above this are garbage, not merely oversize records. */
#define TBBT__CAP_ABSURD_FRAG (64u << 20)

/* TCP stream bounds. */
#define TBBT__CAP_OOO_SEGS 128u                /* buffered ahead-of-hole segments/stream */
#define TBBT__CAP_OOO_BYTES (8u << 20)         /* their captured bytes per stream */
#define TBBT__CAP_OOO_TOTAL (256u << 20)       /* ... over all streams */
#define TBBT__CAP_MAX_STREAMS (1u << 18)       /* live streams before the oldest go */
#define TBBT__CAP_IDLE_NS (600ull * 1000000000ull) /* idle stream lifetime */
#define TBBT__CAP_FRONT 256u                   /* direct-mapped cache of streams */

/* IP fragment reassembly bounds. */
#define TBBT__CAP_FRAG_DGRAMS 1024u            /* datagrams in progress */
#define TBBT__CAP_FRAG_BYTES (32u << 20)       /* their buffered bytes */
#define TBBT__CAP_FRAG_PIECES 128u             /* fragments per datagram */
#define TBBT__CAP_FRAG_NS (30ull * 1000000000ull) /* lifetime of a datagram */

/* Network-layer facts about one packet, handed to the transport layer. */
struct tbbt__cap_ip {
    uint8_t af;           /* 4 or 6 */
    const uint8_t *src;   /* 4 or 16 bytes, borrowed */
    const uint8_t *dst;
};

/* Direction of a TCP connection: packed, zero-padded, hashed and compared bytewise. */
struct tbbt__cap_flow {
    uint8_t af;
    uint8_t pad[3];
    uint16_t sport, dport;
    uint8_t src[16], dst[16];
};

enum tbbt__cap_rec_state {
    TBBT__REC_MARK = 0,  /* reading a 4-byte record mark */
    TBBT__REC_FRAG,      /* inside a fragment body */
    TBBT__REC_RESYNC,    /* searching captured bytes for a record boundary */
};

/*
 * Record-marking parser of one stream.  Positions advance by wire bytes:
 * bytes that were sent but not captured (snap length) still count, so the
 * parser knows where a record ends even when it has only its prefix.
 */
struct tbbt__cap_rec {
    uint8_t state;
    uint8_t mark_have;      /* bytes of a split mark in mark_buf */
    uint8_t mark_buf[4];
    bool verified;          /* a plausible RPC header was seen on this stream */
    bool had_data;          /* any payload at all */
    bool in_record;         /* a record is open across fragments/segments */
    bool last;              /* the current fragment is the record's last */
    bool skip;              /* oversize record: its bytes are passed over */
    bool prefix_open;       /* captured bytes of the record are still contiguous */
    bool hdr_pending;       /* the record's RPC header is not checked yet */
    uint32_t frag_left;     /* wire bytes left in the current fragment */
    uint64_t rec_wire;      /* wire bytes of the record's fragments so far */
    uint32_t rec_cap;       /* captured prefix bytes held in buf */
    uint64_t rec_ts;        /* time of the packet with the record's first byte */
    uint8_t *buf;           /* captured prefix of a record spanning segments */
    uint32_t buf_cap;
};

/* A segment held back until the hole before it fills (copy of its captured bytes). */
struct tbbt__cap_seg {
    struct tbbt__cap_seg *next;
    uint32_t seq, wire, cap;
    uint64_t ts;
    uint8_t data[];
};

struct tbbt__cap_stream {
    struct tbbt__cap_flow key;              /* hash key: first member */
    struct tbbt_dlink age;               /* in tbbt_capdec.ages */
    uint64_t last_ts;
    uint32_t next_seq;                      /* first sequence number not yet passed */
    bool have_seq;
    uint32_t ooo_count;
    size_t ooo_bytes;
    struct tbbt__cap_seg *ooo;              /* sorted by sequence number */
    struct tbbt__cap_rec rec;
    uint32_t memo[TBBT_CAP_MEMO];           /* the message callback's (capture.h) */
};

struct tbbt__cap_frags;

struct tbbt_capdec {
    uint32_t magic;
    tbbt_cap_msg_cb cb;
    void *arg;
    struct tbbt_cap_stats st;
    GHashTable *streams;                    /* &key -> struct tbbt__cap_stream */
    struct tbbt_dlist ages;             /* the streams, least recently used first */
    struct tbbt__cap_stream *front[TBBT__CAP_FRONT]; /* streams by a cheap hash of the key */
    uint32_t nstreams;
    size_t ooo_total;
    struct tbbt__cap_frags *frags;
};

/* capdec.c: transport dispatch for a (reassembled) IP payload. */
void tbbt__cap_l4(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint8_t proto,
                  const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts);
/* capdec.c: IPv6 extension-header walk; in_frag forbids a nested fragment header. */
void tbbt__cap_ip6_chain(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint8_t nh,
                         const uint8_t *p, uint32_t cap, uint32_t wire, uint64_t ts,
                         bool in_frag);
/* capdec.c: counts a header cut by the snap length (no count) or malformed. */
void tbbt__cap_short(struct tbbt_capdec *d, uint32_t cap, uint32_t wire);

/* ipfrag.c */
struct tbbt__cap_frags *tbbt__cap_frags_new(void);
void tbbt__cap_frags_free(struct tbbt_capdec *d, struct tbbt__cap_frags *f);
/* Drops every datagram in progress (counted as ip_frag_dropped). */
void tbbt__cap_frags_flush(struct tbbt_capdec *d);
/*
 * One fragment: id/proto identify the datagram with ip's addresses; off and
 * wire are its place and length in the datagram payload, p/cap its captured
 * bytes, more the MF bit.  Completes the datagram by calling tbbt__cap_l4()
 * (IPv4) or tbbt__cap_ip6_chain() (IPv6).
 */
void tbbt__cap_frag_add(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, uint32_t id,
                        uint8_t proto, uint32_t off, bool more, const uint8_t *p, uint32_t cap,
                        uint32_t wire, uint64_t ts);

/* tcp.c */
void tbbt__cap_tcp(struct tbbt_capdec *d, const struct tbbt__cap_ip *ip, const uint8_t *p,
                   uint32_t cap, uint32_t wire, uint64_t ts);
void tbbt__cap_tcp_init(struct tbbt_capdec *d);
/* Ends every stream (delivering what can be) and frees them. */
void tbbt__cap_tcp_flush(struct tbbt_capdec *d);
void tbbt__cap_tcp_fini(struct tbbt_capdec *d);

/* rpcrec.c: record marking over one stream's in-order bytes. */
/* In-order bytes: p/cap captured, wire - cap more sent but not captured. */
void tbbt__cap_rec_feed(struct tbbt_capdec *d, struct tbbt__cap_stream *s, const uint8_t *p,
                        uint32_t cap, uint32_t wire, uint64_t ts);
/* n bytes lost from the capture (a hole declared a gap). */
void tbbt__cap_rec_gap(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t n);
/* End of stream: delivers an open record as truncated, resets the parser (keeps buf). */
void tbbt__cap_rec_finish(struct tbbt_capdec *d, struct tbbt__cap_stream *s);
/* Delivers one message; fills addresses from the stream (s) or from ip and ports. */
void tbbt__cap_deliver(struct tbbt_capdec *d, struct tbbt_cap_msg *m);
void tbbt__cap_msg_from_flow(struct tbbt_cap_msg *m, const struct tbbt__cap_flow *f);

#endif
