/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: NFSv4 COMPOUND and CB_COMPOUND messages of a
 * capture, decoded operation by operation (RFC 7530 16.2 and 15.2, RFC 5661
 * 16.2 and 20.2, RFC 7862; the XDR of src/proto/nfs4.x, RFC 7863).
 *
 * A message is walked one operation at a time with the rpcgen routine of that
 * operation's arguments or results, so a message cut short by the snap length
 * keeps every operation before the cut, and the operation at the cut is kept
 * with its number (marked truncated) when the bytes it has are a prefix of a
 * valid encoding.  File data (WRITE arguments, READ results) is skipped, never
 * copied; directory listings are walked entry by entry (rpcgen would recurse
 * once per entry).  An operation number outside nfs4.x ends the walk: the
 * length of its arguments is unknown.
 *
 * Hostile input: the operation count is checked against NFS4_MAXOPS before
 * anything is read, every length against its .x bound (libtirpc refuses a
 * longer one before it allocates), and what an operation's routine allocated
 * is freed before the next operation.  Nothing is read outside p[0..len).
 */
#ifndef TBBT_EXTRACT_DECODE_NFS4_H
#define TBBT_EXTRACT_DECODE_NFS4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TBBT__NFS4_MAXOPS 256     /* NFS4_MAXOPS of nfs4.x (checked in decode-nfs4.c) */

/* Which message: a COMPOUND call or reply, a CB_COMPOUND call or reply. */
enum tbbt__nfs4_msg {
    TBBT__NFS4_CALL,
    TBBT__NFS4_REPLY,
    TBBT__NFS4_CB_CALL,
    TBBT__NFS4_CB_REPLY,
};

/* One operation of a decoded message. */
struct tbbt__nfs4_op {
    uint32_t op;            /* nfs_opnum4 (nfs_cb_opnum4 in a CB_COMPOUND) */
    int32_t status;         /* replies: its nfsstat4; -1 when cut before it */
    bool trunc;             /* cut short by the snap length: only op (and status) is known */
};

/* A decoded COMPOUND or CB_COMPOUND (stack storage of the caller: ~3 KiB). */
struct tbbt__nfs4_compound {
    uint32_t minor;         /* calls: minorversion */
    uint32_t numops;        /* the operation count of the message */
    uint32_t nops;          /* operations whose number was read: ops[0..nops) */
    int32_t status;         /* replies: the COMPOUND's status; -1 when not read */
    bool unknown_op;        /* the walk stopped at an operation number nfs4.x lacks */
    struct tbbt__nfs4_op ops[TBBT__NFS4_MAXOPS];
};

/*
 * Decodes the message p[0..len) (the bytes after the RPC header) of kind into
 * *out (every field set).  trunc: the capture cut the message short.  Returns 0
 * when the whole message decoded, TBBT_E_TRUNC when trunc and the bytes ran out
 * (everything before the cut is in *out), TBBT_E_BADREC when the message is
 * malformed (a count or length over its bound, a bad discriminant, bytes left
 * over, an unknown operation number; what decoded before is in *out).
 * Thread-safe (a per-thread scratch buffer of up to ~1 MiB serves the check of
 * truncated messages).
 */
int tbbt__nfs4_decode(enum tbbt__nfs4_msg kind, const uint8_t *p, size_t len, bool trunc,
                      struct tbbt__nfs4_compound *out);

struct tbbt_trace_rec;
struct tbbt_fhtab;
/*
 * The same walk of a COMPOUND call or reply (kind TBBT__NFS4_CALL or _REPLY)
 * into a trace record (trace format 1.2): a call appends one entry per
 * operation to rec->ops with its arguments (nfs4rec.c) and sets `minor`; a
 * reply adds each result to the call's entry of the same index and operation
 * (an entry past the call's last is appended), and sets the COMPOUND's status.
 * Handles are interned in fht.  Flags the record (TBBT_RF_CALL_TRUNC or
 * _CALL_BAD, the REPLY ones) as tbbt__decode_call() does.  *out gets and it
 * returns what tbbt__nfs4_decode() gives.
 */
int tbbt__nfs4_decode_rec(enum tbbt__nfs4_msg kind, const uint8_t *p, size_t len, bool trunc,
                          struct tbbt_trace_rec *rec, struct tbbt_fhtab *fht,
                          struct tbbt__nfs4_compound *out);

#endif
