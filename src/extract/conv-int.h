/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: the conversion core that every input reader
 * (capture files, nfsdump text traces) feeds, and the reader interface.
 *
 * A reader turns its input into RPC calls and replies and hands them to the
 * core, in one of two ways:
 *
 *  - Records filled by the reader (nfsdump): tbbt__conv_call() opens a record
 *    (the reader then fills the call's arguments), tbbt__conv_reply() returns
 *    the record of the call a reply answers (the reader fills the results).
 *  - Records filled from message bytes (pcap): tbbt__conv_call_bytes() and
 *    tbbt__conv_reply_bytes() hand over the bytes after the RPC header, and
 *    the core calls the reader's fill() with them where the records live.
 *    Such a reader may be pipelined (--threads 2): pairing stays on the
 *    reader's thread, records (filling, handle and endpoint interning,
 *    writing) move to a writer thread that receives the calls, replies and
 *    departures in batches and applies them in the same order, so the trace
 *    is the same byte for byte.
 *
 * Either way tbbt__conv_drain() lets finished records flow to the trace
 * writer in call order.  The core owns pairing, endpoint, handle and
 * credential interning, counting and the summary.
 */
#ifndef TBBT_EXTRACT_CONV_INT_H
#define TBBT_EXTRACT_CONV_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extract/extract.h"
#include "extract/pair.h"
#include "trace/trace.h"
#include "util/json.h"

struct tbbt__conv;

/* One RPC message as a reader sees it, whatever the input format. */
struct tbbt__conv_msg {
    struct tbbt__pair_key key;  /* client address and port, server address and port, XID */
    uint64_t ts_ns;             /* the record's call or reply time */
    /*
     * The time the pairer's reply timeout runs on (pair.h): ts_ns for a
     * capture; for an nfsdump trace a clock that clock steps do not move
     * (stepclock.h).
     */
    uint64_t pair_ns;
    bool tcp;
    bool truncated;             /* cut short by the snap length */
    /*
     * Where the reader remembers the flow number of key's addresses and ports
     * (0 until the core has looked it up once; see pair.h), e.g. in its TCP
     * stream, or NULL: the core looks it up for every message.
     */
    uint32_t *flow_cache;
};

/* An input reader (one file per implementation). */
struct tbbt__source_ops {
    const char *name;           /* "pcap", "nfsdump" */
    int version;
    /* True if the first bytes of a file (already gunzipped) are this format. */
    bool (*probe)(const uint8_t *head, size_t len);
    /*
     * Reads every input into c.  Returns 0, TBBT_E_TRUNC (input ended inside
     * an item: what came before is kept) or another error with a one-line
     * reason naming the file in errbuf.
     */
    int (*run)(struct tbbt__conv *c, const char *const *paths, int n, char *errbuf,
               size_t errlen);
    /* Writes the reader's keys (packets, bytes, truncated_packets, malformed_packets ...). */
    void (*summary)(struct tbbt__conv *c, struct tbbt_json *j);
    /* Releases the reader's state (tbbt__conv_source_state). */
    void (*fini)(struct tbbt__conv *c);
    /*
     * Readers that hand over message bytes only: fills rec with a call's
     * arguments (reply false) or a reply's results from p[0..len) (borrowed
     * for the call), trunc if the message was cut short.  Runs on the thread
     * that holds the records: the writer thread when pipelined, so it may
     * touch only state that the reader's thread leaves alone.  NULL: the
     * reader fills records itself and is never pipelined.
     */
    void (*fill)(struct tbbt__conv *c, struct tbbt_trace_rec *rec, bool reply,
                 const uint8_t *p, size_t len, bool trunc);
    /*
     * How many leading bytes of a body of len bytes fill() reads for (prog,
     * proc); the rest (bulk data it only skips) need not cross threads and
     * then reads as zeros.  Must be len whenever fill() could look further.
     * NULL: all of them.  Runs on the reader's thread.
     */
    uint32_t (*keep)(int prog, uint32_t proc, bool reply, uint32_t len, bool trunc);
};

extern const struct tbbt__source_ops tbbt__source_pcap;
extern const struct tbbt__source_ops tbbt__source_nfsdump;

/* The reader's private state slot (owned by the reader). */
void **tbbt__conv_source_state(struct tbbt__conv *c);
const struct tbbt_convert_opts *tbbt__conv_opts(struct tbbt__conv *c);
/* The handle table: only where the records live (in fill(), or when not pipelined). */
struct tbbt_fhtab *tbbt__conv_fhtab(struct tbbt__conv *c);

/*
 * A call of (prog, proc) arrived.  Returns the record to fill (header set:
 * call time, prog, proc, xid, endpoint, uid/gid, TCP flag), owned by the core
 * and valid until the next tbbt__conv_* call, or NULL when the call is a
 * retransmission, not NFS/MOUNT (prog TBBT_PROG_NONE) or an unknown
 * procedure (counted as malformed).  Not for readers with fill().
 */
struct tbbt_trace_rec *tbbt__conv_call(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                                       int prog, uint32_t proc, uint32_t uid, uint32_t gid);
/*
 * A reply arrived.  Returns its call's record (reply time, TBBT_RF_REPLY and
 * rpc_stat set) for the reader to add results to, or NULL (no call, a
 * duplicate, or the call was not NFS/MOUNT).  Not for readers with fill().
 */
struct tbbt_trace_rec *tbbt__conv_reply(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                                        int rpc_stat);
/*
 * The same for readers with fill(): the record that tbbt__conv_call() would
 * return is filled by fill() from body[0..len) (the bytes after the RPC
 * header; borrowed for the call: copied when pipelined).  For a reply, body
 * NULL means there are no results to decode (an RPC error).  sys (NULL:
 * none) is the call's AUTH_SYS credential as rpc.h's tbbt__rpc_hdr has it
 * (sys, sys_len: borrowed for the call): the record gets its reference
 * (field `cred`).  The reply returns 0, or the side of a call paired with
 * tbbt__conv_side_call().
 */
void tbbt__conv_call_bytes(struct tbbt__conv *c, const struct tbbt__conv_msg *m, int prog,
                           uint32_t proc, uint32_t uid, uint32_t gid, const uint8_t *sys,
                           uint32_t sys_len, const uint8_t *body, size_t len);
uint8_t tbbt__conv_reply_bytes(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                               int rpc_stat, const uint8_t *body, size_t len);
/*
 * A call the reader handles itself (NFSv4, counted in nfs4count.c) and that
 * opens no record: paired and counted as a call of another program, with
 * side (1..255), which tbbt__conv_reply_bytes() returns for its reply.
 */
void tbbt__conv_side_call(struct tbbt__conv *c, const struct tbbt__conv_msg *m, uint8_t side);
/* Lets every record that is complete leave for the writer. */
void tbbt__conv_drain(struct tbbt__conv *c);
/* Progress: bytes of input read so far and in total (0 if unknown). */
void tbbt__conv_progress(struct tbbt__conv *c, uint64_t done, uint64_t total);

#endif
