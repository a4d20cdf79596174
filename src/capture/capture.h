/* SPDX-License-Identifier: MIT */
/*
 * From captured packets to ONC RPC messages.  Two layers:
 *
 *  - struct tbbt_capdec, the packet decoder: link layer (EN10MB with 802.1Q
 *    tags, LINUX_SLL, LINUX_SLL2, NULL/LOOP, RAW, IPV4, IPV6), IPv4 (with
 *    fragment reassembly) and IPv6, UDP (one RPC message per datagram) and TCP
 *    (per-connection stream reassembly with RPC record marking, RFC 5531 11).
 *    It knows nothing of files; tests and fuzzers feed it hand-built packets.
 *  - struct tbbt_cap, the capture source: pcap and pcapng files (gzip-compressed
 *    ones too) checked by libpcap and read by a salvaging record walker,
 *    several files merged in time order, an optional BPF filter, feeding one
 *    tbbt_capdec.
 *
 * Messages are delivered to a callback as soon as they are complete.  The
 * decoder does not interpret RPC beyond a plausibility check used to find
 * record boundaries; every UDP datagram and TCP stream that looks like RPC is
 * delivered, whatever its ports (programs are recognized by the caller).
 *
 * Bad packets are data: they are counted in struct tbbt_cap_stats and
 * skipped.  Not thread-safe.
 */
#ifndef TBBT_CAPTURE_CAPTURE_H
#define TBBT_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest RPC record we reassemble; longer records are skipped and counted. */
#define TBBT_CAP_MAX_RECORD (4u << 20)

/* One reassembled RPC message. Everything is borrowed for the callback's duration. */
struct tbbt_cap_msg {
    uint64_t ts_ns;          /* time of the packet that completed the message's header */
    const uint8_t *data;     /* captured bytes of the message, record marks removed */
    uint32_t len;            /* bytes at data */
    uint32_t wire_len;       /* length of the message on the wire (>= len) */
    bool truncated;          /* len < wire_len: part of the message was not captured */
    bool tcp;
    uint8_t af;              /* 4 or 6 */
    uint8_t src[16], dst[16]; /* addresses (IPv4 in the first 4 bytes) */
    uint16_t sport, dport;
    /*
     * TBBT_CAP_MEMO words the callback may keep about the message's TCP
     * stream (one direction of a connection), 0 when the stream starts and
     * the same for each of its messages; NULL for UDP.  The callback's own:
     * never read here.
     */
    uint32_t *memo;
};

#define TBBT_CAP_MEMO 2

typedef void (*tbbt_cap_msg_cb)(const struct tbbt_cap_msg *msg, void *arg);

struct tbbt_cap_stats {
    uint64_t packets;            /* packets read */
    uint64_t bytes;              /* bytes on the wire (original lengths) */
    uint64_t truncated_packets;  /* captured length < original length */
    uint64_t malformed_packets;  /* unusable headers: counted and skipped */
    uint64_t other_packets;      /* well-formed but not IP/UDP/TCP (ARP, ICMP, ...) */
    uint64_t ip_fragments;       /* IPv4 fragments seen */
    uint64_t ip_reassembled;     /* datagrams rebuilt from fragments */
    uint64_t ip_frag_dropped;    /* fragments never completed (timeout, overlap, limit) */
    uint64_t tcp_segments;       /* TCP segments with payload */
    uint64_t tcp_retransmits;    /* segments whose bytes were already seen */
    uint64_t tcp_out_of_order;   /* segments that arrived ahead of a hole */
    uint64_t tcp_gaps;           /* holes declared lost (capture loss) */
    uint64_t tcp_gap_bytes;      /* bytes in those holes */
    uint64_t tcp_resyncs;        /* times a record boundary was searched for */
    uint64_t rpc_bad_marks;      /* implausible record marks (zero, too long) */
    uint64_t rpc_oversize;       /* records over TBBT_CAP_MAX_RECORD, skipped */
    uint64_t rpc_messages;       /* messages delivered */
    uint64_t rpc_truncated;      /* delivered messages with truncated set */
    uint64_t non_rpc_streams;    /* TCP streams/UDP datagrams that never looked like RPC */
    /* damaged files (sums of struct tbbt_cap_damage over the files) */
    uint64_t skipped_records;    /* bad record headers or blocks skipped */
    uint64_t resyncs;            /* times the next good record was found after a bad one */
    uint64_t damaged_bytes;      /* (decompressed) file bytes passed over */
    uint64_t damaged_files;      /* files with any of the above, or that end early */
};

/* What was skipped in one capture file (see docs/tbbt-convert.md "Damaged input"). */
struct tbbt_cap_damage {
    uint64_t skipped_records;    /* bad record headers or blocks */
    uint64_t resyncs;            /* bad records after which a good one was found */
    uint64_t damaged_bytes;      /* bytes passed over, from the bad records to the next good */
    uint64_t trailing_bytes;     /* after the last gzip member, not all zero (also in damaged_bytes) */
    bool ends_early;             /* inside a record, or the compressed data is cut or corrupt */
    char why[160];               /* the first problem in one line, "" if none */
};

/* True when the file was damaged in any of the ways above. */
static inline bool tbbt_cap_damaged(const struct tbbt_cap_damage *d)
{
    return d->skipped_records || d->trailing_bytes || d->ends_early;
}

/* ---- packet decoder -------------------------------------------------------- */

struct tbbt_capdec;

/* Creates a decoder delivering to cb(arg).  Given: free with tbbt_capdec_free(). */
struct tbbt_capdec *tbbt_capdec_new(tbbt_cap_msg_cb cb, void *arg);
/* Flushes what can still be delivered (streams with pending data), frees. NULL ok. */
void tbbt_capdec_free(struct tbbt_capdec *d);
/* Returns 0 if the libpcap link type (DLT_*) is supported, else TBBT_E_LINKTYPE. */
int tbbt_capdec_check_linktype(int dlt);
/*
 * Decodes one packet: dlt its DLT_* link type, data/caplen the captured bytes
 * (borrowed), wire_len its original length.  May invoke the callback zero or
 * more times before returning.  Never fails: trouble is counted.
 */
void tbbt_capdec_packet(struct tbbt_capdec *d, int dlt, uint64_t ts_ns, const uint8_t *data,
                        uint32_t caplen, uint32_t wire_len);
/* Delivers/discards everything pending (end of input); the decoder stays usable. */
void tbbt_capdec_flush(struct tbbt_capdec *d);
const struct tbbt_cap_stats *tbbt_capdec_stats(const struct tbbt_capdec *d);

/* ---- capture files --------------------------------------------------------- */

struct tbbt_cap;

/*
 * Opens paths[0..n-1] (pcap, pcapng, or either gzip-compressed) and compiles
 * filter (a BPF expression, or NULL) for each.  On failure returns NULL and
 * writes a one-line reason naming the file into errbuf (errlen bytes).
 */
struct tbbt_cap *tbbt_cap_open(const char *const *paths, int n, const char *filter,
                               char *errbuf, size_t errlen);
/*
 * Reads every packet of every file in time order into a decoder that delivers
 * to cb(arg).  progress_cb, if not NULL, is called about every 64k packets
 * or 256 MiB of packet data, with the bytes read so far.  Returns 0, or
 * TBBT_E_TRUNC if a file ends in the middle of a packet or its compressed
 * data ends early, or TBBT_E_DAMAGED if bad records were skipped or the
 * compressed data is corrupt (what could be read is still delivered; the
 * first such problem is described in errbuf, each file's in
 * tbbt_cap_damage()), or another error with a reason in errbuf.  Damage ends
 * or thins out its file only: the other files are still read.  Call once per
 * tbbt_cap_open(); the callbacks do not fire after it returns.
 */
int tbbt_cap_run(struct tbbt_cap *c, tbbt_cap_msg_cb cb, void *arg,
                 void (*progress_cb)(uint64_t bytes_read, void *arg), char *errbuf,
                 size_t errlen);
/* Statistics of the last run (borrowed, valid until close). */
const struct tbbt_cap_stats *tbbt_cap_stats(const struct tbbt_cap *c);
/* Number of files, and the path (borrowed) and damage (borrowed, NULL before the run) of file i. */
int tbbt_cap_nfiles(const struct tbbt_cap *c);
const char *tbbt_cap_path(const struct tbbt_cap *c, int i);
const struct tbbt_cap_damage *tbbt_cap_damage(const struct tbbt_cap *c, int i);
/* Total size in bytes of the input files (for progress), 0 if unknown. */
uint64_t tbbt_cap_input_size(const struct tbbt_cap *c);
void tbbt_cap_close(struct tbbt_cap *c);

#endif
