/* SPDX-License-Identifier: MIT */
/*
 * onc: the ONC RPC layer shared by capture, conversion, player, proxy and benches.
 *
 * What it holds: record marking over TCP (RFC 5531 section 11: the 4-byte fragment
 * mark, a reassembler that joins fragments into records under a size limit, and a
 * scanner that finds whole marked records in a buffer), and the parser of RPC call and
 * reply headers (RFC 5531 section 9, AUTH_SYS of appendix A), with the truncation as
 * data that captures need.  The asynchronous client transport is in onc/rpcconn.h.
 *
 * What it does not: decode arguments or results (rpcgen's routines do), read sockets
 * (rpcconn.c and the tools do), or follow a captured TCP stream with holes and
 * snap-length cuts (src/capture/rpcrec.c does, on top of the mark codec and the header
 * test here).  Nothing here allocates but the reassembler's buffer, nothing prints,
 * and no function keeps a pointer it was given beyond the call unless it says so.
 * Thread safety: none needed; every object belongs to one caller.
 */
#ifndef TBBT_ONC_ONC_H
#define TBBT_ONC_ONC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ record marking */

#define TBBT_ONC_MARK_LEN 4u              /* bytes of a fragment mark */
#define TBBT_ONC_MARK_LAST 0x80000000u    /* last fragment of its record */
#define TBBT_ONC_FRAG_MAX 0x7fffffffu     /* largest length a mark can carry */

/* Writes the mark of a fragment of len bytes (len <= TBBT_ONC_FRAG_MAX) at p[0..3]. */
static inline void tbbt_onc_mark_put(uint8_t *p, uint32_t len, bool last)
{
    uint32_t v = (last ? TBBT_ONC_MARK_LAST : 0) | (len & TBBT_ONC_FRAG_MAX);

    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Reads the mark at p[0..3] (the caller checked that 4 bytes are there): the fragment
 * length, and in *last whether it ends its record. */
static inline uint32_t tbbt_onc_mark_get(const uint8_t *p, bool *last)
{
    uint32_t v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];

    *last = (v & TBBT_ONC_MARK_LAST) != 0;
    return v & TBBT_ONC_FRAG_MAX;
}

/*
 * Reassembly of a record-marked byte stream into records (a client's or a server's
 * input: every byte of the stream arrives, in order).  Caller storage: init, then
 * tbbt_onc_recasm_next() on each batch of new bytes, fini.  Records are delivered
 * without their marks.
 */
struct tbbt_onc_recasm {
    size_t max_record;       /* a fragment or record over this is malformed */
    uint8_t *buf;            /* the record being joined (owned) */
    size_t len, cap;
    uint32_t frag_left;      /* bytes of the current fragment still to come */
    bool in_record, last;    /* joining a record; its current fragment is the last */
    uint32_t bad_mark;       /* after TBBT_E_BADREC: the mark that was refused */
};

/* max_record: the largest record (and fragment) accepted, at most TBBT_ONC_FRAG_MAX. */
void tbbt_onc_recasm_init(struct tbbt_onc_recasm *a, size_t max_record);
/* Frees the buffer; the object may be initialized again. */
void tbbt_onc_recasm_fini(struct tbbt_onc_recasm *a);
/* Forgets a record in progress (a new connection); keeps the buffer. */
void tbbt_onc_recasm_reset(struct tbbt_onc_recasm *a);
/* True while a record has been started and not delivered. */
bool tbbt_onc_recasm_busy(const struct tbbt_onc_recasm *a);

/*
 * Takes bytes from p[0..n) until a whole record is there.  *used is set to the bytes
 * consumed (a mark is consumed only whole: fewer than 4 bytes of one stay unused, for
 * the next call with more bytes after them).  Returns:
 *   1  a record: *rec, *rec_len.  Borrowed: from p itself when the record was one
 *      fragment lying wholly in p (no copy), else from the reassembler's buffer; valid
 *      until the next call on a and while p's bytes are unchanged;
 *   0  every usable byte consumed, more are needed;
 *   TBBT_E_BADREC  a mark announces a fragment longer than max_record (a->bad_mark
 *      holds it; the stream is out of sync and a must be reset before further use);
 *   TBBT_E_RANGE   the record's fragments add up to more than max_record (likewise).
 */
int tbbt_onc_recasm_next(struct tbbt_onc_recasm *a, const uint8_t *p, size_t n, size_t *used,
                         const uint8_t **rec, size_t *rec_len);

/*
 * Finding whole records, marks included, at the front of a buffer that keeps them (a
 * proxy that forwards the sender's fragmentation byte for byte).  frag is the offset of
 * the next fragment mark not looked at yet: zero it when a record has been taken off
 * the front.  Each fragment is looked at once.
 */
struct tbbt_onc_recscan {
    size_t frag;
};

/*
 * Looks at p[0..n) (the front of the buffer).  Returns 1 and sets *rec_len (marks
 * included) when a whole record is there, 0 when more bytes are needed,
 * TBBT_E_BADREC for a fragment longer than max_frag, TBBT_E_RANGE for a record (marks
 * included) longer than max_record.
 */
int tbbt_onc_recscan_next(struct tbbt_onc_recscan *s, const uint8_t *p, size_t n,
                          uint32_t max_frag, size_t max_record, size_t *rec_len);

/* Copies the first payload bytes (marks skipped) of the whole marked record
 * rec[0..len) into out[0..max); returns how many (fewer if the record is shorter). */
size_t tbbt_onc_rec_payload(const uint8_t *rec, size_t len, uint8_t *out, size_t max);

/* ------------------------------------------------------------------ message headers */

#define TBBT_ONC_RPCVERS 2u               /* rpcvers of RFC 5531 */
#define TBBT_ONC_AUTH_MAX 400u            /* MAX_AUTH_BYTES: opaque_auth body bound */
#define TBBT_ONC_MACHINE_MAX 255u         /* AUTH_SYS machine name bound (appendix A) */
#define TBBT_ONC_GIDS_MAX 16u             /* AUTH_SYS gids bound (appendix A) */
#define TBBT_ONC_AUTH_SYS 1u              /* AUTH_SYS (AUTH_UNIX) flavor */

enum { TBBT_ONC_CALL = 0, TBBT_ONC_REPLY = 1 };   /* msg_type */

/*
 * The outcome of a reply in one number: accept_stat 0..5 (SUCCESS .. SYSTEM_ERR) when
 * accepted, TBBT_ONC_DENIED + reject_stat when denied (the trace format stores the
 * same numbers: trace.h enum tbbt_rpc_stat).
 */
enum {
    TBBT_ONC_SUCCESS = 0,
    TBBT_ONC_PROG_MISMATCH = 2,
    TBBT_ONC_SYSTEM_ERR = 5,
    TBBT_ONC_DENIED = 16,                 /* + reject_stat: 16 RPC_MISMATCH, 17 AUTH_ERROR */
};

/* What a call or reply header says.  Borrowed pointers point into the parsed message. */
struct tbbt_onc_hdr {
    uint32_t xid;
    int dir;            /* TBBT_ONC_CALL or TBBT_ONC_REPLY */
    /* call */
    uint32_t prog, vers, proc;
    uint32_t flavor;    /* credential flavor (AUTH_NONE 0, AUTH_SYS 1, ...); UINT32_MAX
                         * for an AUTH_SYS body that does not parse or a cut header */
    uint32_t uid, gid;  /* AUTH_SYS only */
    const uint8_t *sys; /* AUTH_SYS only: the credential body after its stamp, machine name
                         * through the last gid (borrowed from the message), or NULL */
    uint32_t sys_len;
    /* reply */
    uint8_t rpc_stat;   /* the outcome, as the enum above */
    uint32_t auth_stat; /* MSG_DENIED with AUTH_ERROR: the auth_stat */
    uint32_t low, high; /* PROG_MISMATCH and RPC_MISMATCH: the versions supported */
    size_t body_off;    /* offset of arguments/results in the message */
    bool partial;       /* the snap length cut the header: fields after proc (call) or
                         * after the reply status (reply) are unknown; body_off = len */
};

/*
 * Parses the RPC header at p[0..len) (untrusted).  Returns 0 on success, TBBT_E_BADREC
 * if it is not an RPC message, or TBBT_E_TRUNC instead when `trunc` (the message was
 * cut short by the snap length) and not even the fixed part of the header (a call's
 * xid..proc, a reply's xid and reply_stat) is there.  A cut header whose fixed part is
 * there is returned with `partial` set.  Accepts and refuses what libtirpc's
 * xdr_callmsg()/xdr_replymsg() do: rpcvers 2, opaque_auth bodies of at most 400 bytes
 * with their padding, known reply, accept and reject stats.  A call with an unusable
 * AUTH_SYS body is still returned (uid/gid 0) with flavor UINT32_MAX.
 */
int tbbt_onc_hdr_parse(const uint8_t *p, size_t len, bool trunc, struct tbbt_onc_hdr *h);

/* An AUTH_SYS credential after its stamp; machine is borrowed from the parsed bytes. */
struct tbbt_onc_authsys {
    uint32_t uid, gid, ngids;
    uint32_t gids[TBBT_ONC_GIDS_MAX];
    uint32_t machine_len;
    const uint8_t *machine;
};

/*
 * Decodes the AUTH_SYS bytes tbbt_onc_hdr_parse() found (h->sys, h->sys_len) into *a
 * (gids past ngids zeroed).  False if they do not parse (never for what
 * tbbt_onc_hdr_parse() returned).
 */
bool tbbt_onc_authsys(const uint8_t *sys, uint32_t len, struct tbbt_onc_authsys *a);

/* The first two words of the message at p[0..len): *xid, *type (msg_type, unchecked).
 * False, and nothing set, if fewer than 8 bytes are there. */
static inline bool tbbt_onc_peek(const uint8_t *p, size_t len, uint32_t *xid, uint32_t *type)
{
    if (len < 8)
        return false;
    *xid = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    *type = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    return true;
}

/* True if p[0..11] (xid, msg_type, rpcvers or reply_stat) look like an RPC header:
 * a cheap test for finding records in a stream picked up in the middle. */
static inline bool tbbt_onc_plausible(const uint8_t *p)
{
    uint32_t type = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    uint32_t v = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
    return (type == TBBT_ONC_CALL && v == TBBT_ONC_RPCVERS) || (type == TBBT_ONC_REPLY && v <= 1);
}

/* ------------------------------------------------------------------ XID tables */

/*
 * A table of outstanding calls by XID, intrusive: the caller embeds a struct
 * tbbt_onc_xident in its call (as the first member, to get the call back by a cast)
 * and owns it; the table only links it.  While an entry is out of the table its next
 * link is the caller's (a queue, a stack).  Several entries may have the same XID:
 * remove takes the last inserted.  Caller storage: init, fini.  Not thread-safe.
 */
struct tbbt_onc_xident {
    struct tbbt_onc_xident *next;
    uint32_t xid;
};

struct tbbt_onc_xidtab {
    struct tbbt_onc_xident **b;   /* buckets by xid & mask */
    size_t mask, n;
};

/* buckets: the initial bucket count, rounded up to a power of two (the table grows). */
void tbbt_onc_xidtab_init(struct tbbt_onc_xidtab *t, size_t buckets);
/* Frees the buckets; the entries are the caller's (take them out first). */
void tbbt_onc_xidtab_fini(struct tbbt_onc_xidtab *t);
/* Links e (borrowed until it is taken out) under e->xid. */
void tbbt_onc_xidtab_insert(struct tbbt_onc_xidtab *t, struct tbbt_onc_xident *e);
/* Unlinks and returns the entry with this XID, or NULL. */
struct tbbt_onc_xident *tbbt_onc_xidtab_remove(struct tbbt_onc_xidtab *t, uint32_t xid);
/* Unlinks every entry; returns them as a list linked by next (bucket order), or NULL. */
struct tbbt_onc_xident *tbbt_onc_xidtab_take_all(struct tbbt_onc_xidtab *t);
/*
 * Unlinks up to max entries for which pick(e, arg) is true and returns them as a list
 * linked by next, in bucket order (NULL if none).  pick must not change the table.
 */
struct tbbt_onc_xident *tbbt_onc_xidtab_take_if(struct tbbt_onc_xidtab *t,
                                                bool (*pick)(const struct tbbt_onc_xident *e,
                                                             void *arg),
                                                void *arg, size_t max);
/* How many entries are linked. */
static inline size_t tbbt_onc_xidtab_count(const struct tbbt_onc_xidtab *t)
{
    return t->n;
}

#endif
