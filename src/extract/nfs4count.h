/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: the NFSv4 messages of a capture, recognized
 * and counted for tbbt-convert's summary (its "nfs4" object, documented in
 * docs/tbbt-convert.md): the per-operation counts by minor version that are
 * checked against tshark.  (The COMPOUND records of the trace are filled by
 * decode-nfs4.c.)
 *
 * Recognized: program 100003 version 4 (NULL and COMPOUND; a COMPOUND under
 * RPCSEC_GSS is counted, not decoded: its arguments may be wrapped, RFC 2203
 * 5.3.2), and callbacks: a call of version 1 (CB_NULL and CB_COMPOUND) of a
 * program in RFC 5531's transient range 0x40000000-0x5fffffff, where clients
 * take the callback program they name in SETCLIENTID and CREATE_SESSION, sent
 * from an address that received NFSv4 calls: the NFSv4.1 backchannel on the
 * client's own connection (RFC 8881 2.10.3.1) and NFSv4.0 callbacks on a
 * connection the server opens (RFC 7530 3.3.6) alike.  A callback is a call of
 * the server's: it is never taken for a reply to a client's call.
 *
 * Nothing here is thread-safe: the reading thread has an instance (NULL,
 * RPCSEC_GSS and callbacks), the thread that fills records another (the
 * COMPOUNDs of records, decoded once there: tbbt__nfs4_count_decoded_call()
 * and _reply()); the summary merges them.
 */
#ifndef TBBT_EXTRACT_NFS4COUNT_H
#define TBBT_EXTRACT_NFS4COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

struct tbbt__nfs4_count;

/* What an NFSv4 call was, remembered by the pairer until its reply (never 0). */
enum {
    TBBT__NFS4_SIDE_NULL = 1,       /* NFSPROC4_NULL */
    TBBT__NFS4_SIDE_GSS = 2,        /* COMPOUND under RPCSEC_GSS, not decoded */
    TBBT__NFS4_SIDE_CB_NULL = 3,    /* CB_NULL */
    TBBT__NFS4_SIDE_CB = 4,         /* CB_COMPOUND */
    TBBT__NFS4_SIDE_OTHER = 5,      /* another procedure number: malformed */
    TBBT__NFS4_SIDE_RECORD = 6,     /* a COMPOUND for a trace record: counted where its
                                       record is filled, not paired as a side */
};

/* The call as the reader sees it: RPC header fields and the endpoints. */
struct tbbt__nfs4_call {
    uint32_t prog, vers, proc, flavor;
    uint8_t af;                     /* 4 or 6 */
    const uint8_t *src, *dst;       /* 16 bytes each (IPv4 in the first 4) */
    uint16_t sport, dport;
};

struct tbbt__nfs4_count *tbbt__nfs4_count_new(void);
void tbbt__nfs4_count_free(struct tbbt__nfs4_count *n);

/*
 * A call: if it is NFSv4 or a callback, counts it (a CB_COMPOUND decoded from
 * body[0..len), cut by the snap length when trunc) and returns its side (above);
 * TBBT__NFS4_SIDE_RECORD for a COMPOUND that goes into a record (decoded and
 * counted there, once); 0 if it is neither (the caller handles it as before).
 */
uint8_t tbbt__nfs4_count_call(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_call *c,
                              const uint8_t *body, size_t len, bool trunc);

/*
 * The reply to a call of that side (accepted and successful: body is its
 * results; NULL otherwise, counted as a reply without results).
 */
void tbbt__nfs4_count_reply(struct tbbt__nfs4_count *n, uint8_t side, const uint8_t *body,
                            size_t len, bool trunc);

struct tbbt__nfs4_compound;
/*
 * The call, and the reply, of a COMPOUND of minor version minor that went into a
 * trace record, already decoded (m, and rc as tbbt__nfs4_decode() returned it):
 * its operations and errors counted.  For the thread that fills records, with an
 * instance of its own (merged with tbbt__nfs4_count_merge()).
 */
void tbbt__nfs4_count_decoded_call(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_compound *m,
                                   int rc);
void tbbt__nfs4_count_decoded_reply(struct tbbt__nfs4_count *n, uint32_t minor,
                                    const struct tbbt__nfs4_compound *m, int rc);
/* Adds src's counts to dst's (the endpoint and callback-program sets are not merged). */
void tbbt__nfs4_count_merge(struct tbbt__nfs4_count *dst, const struct tbbt__nfs4_count *src);

/* Messages whose NFSv4 body did not decode (for malformed_nfs). */
uint64_t tbbt__nfs4_count_malformed(const struct tbbt__nfs4_count *n);

/* Writes the "nfs4" key and object into j (inside an object). */
void tbbt__nfs4_count_json(const struct tbbt__nfs4_count *n, struct tbbt_json *j);

#endif
