/* SPDX-License-Identifier: MIT */
/*
 * NFSv4 replay of one trace record: the traced COMPOUND (trace format 1.2, struct
 * tbbt_op4) rebuilt as a live COMPOUND4args (src/proto/nfs4.x; RFC 7530 16, RFC 8881
 * 18, RFC 7862 15) with the live handles, stateids, seqids, client ids and session of
 * nfs4state.h (nfs4build.c), and the live COMPOUND4res absorbed back into that state,
 * each operation's status compared with the traced one (nfs4absorb.c).
 *
 * What the trace does not carry is made up the same way every time (docs/nfsv4.md,
 * "Replay core"): WRITE data is a pattern of `count` bytes; SETCLIENTID's callback
 * names port 0 (the traced callback program is kept, format 1.3) and CREATE_SESSION
 * asks for no back channel (so no delegations and no callbacks); SECINFO_NO_NAME's
 * style is SECINFO_STYLE4_CURRENT_FH.  Values a 1.3 trace keeps are used, some of
 * them filtered, and made up only where a record lacks them (1.2 traces):
 *   - READDIR's dircount (else its maxcount);
 *   - EXCHANGE_ID's flags, of which only SUPP_MOVED_REFER, SUPP_MOVED_MIGR,
 *     SUPP_FENCE_OPS and USE_NON_PNFS are kept (EXCHANGE_FLAGS_KEPT; else
 *     SUPP_MOVED_REFER); state protection is always SP4_NONE;
 *   - CREATE_SESSION's flags, PERSIST only (else none), and its fore channel's sizes,
 *     operations and slots, the slots at most TBBT_NFS4_SLOTS_MAX (else fixed sizes,
 *     TBBT_NFS4_FORE_SLOTS slots; a session re-made after a loss asks the same);
 *   - VERIFY's and NVERIFY's attribute values (type, size, mode, owner, owner_group)
 *     as the traced call carried them (else the traced values of the last traced
 *     GETATTR of the object).
 * An operation this module cannot rebuild makes the record unsendable, with a
 * reason.  Not thread-safe; calls share a state.
 */
#ifndef TBBT_PLAYER_NFS4BUILD_H
#define TBBT_PLAYER_NFS4BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "player/nfs4state.h"
#include "proto/nfs4.h"
#include "trace/trace.h"

#define TBBT_NFS4_FORE_SLOTS 16       /* slots asked for in CREATE_SESSION */
#define TBBT_NFS4_NO_SLOT "no free slot"   /* call->why: every slot of the session busy
                                             (not a fault of the record: send it later) */

/* What build knows about one operation for absorbing its result. */
struct tbbt_nfs4_opaux {
    struct tbbt_nfs4_owner *owner;    /* 4.0: the owner whose seqid the op uses */
    struct tbbt_nfs4_owner *owner2;   /* 4.0 LOCK with a new lock owner: that owner */
    uint32_t cur;                     /* traced handle ref current at the op */
    bool cur_known;
};

/* One rebuilt COMPOUND.  Caller storage: tbbt_nfs4_call_fini() releases it. */
struct tbbt_nfs4_call {
    COMPOUND4args args;               /* args.argarray points into ops */
    nfs_argop4 *ops;
    struct tbbt_nfs4_opaux *aux;
    uint32_t n;
    GPtrArray *mem;                   /* what the arguments point to */
    struct tbbt_nfs4_session *sess;   /* with slotted: the slot taken by SEQUENCE */
    uint32_t slot;
    bool slotted;
    const char *why;                  /* unsendable: a static reason ("unknown handle") */
    char detail[160];                 /* and the details */
};

/*
 * Rebuilds rec (a TBBT_PROG_NFS4 COMPOUND record, borrowed for the call) into call.
 * 0, or -1 when the record cannot be sent (call->why, call->detail; nothing is held:
 * fini is still due).  A SEQUENCE takes a session slot, released by
 * tbbt_nfs4_absorb() or tbbt_nfs4_call_abort().
 */
int tbbt_nfs4_build(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                    struct tbbt_nfs4_call *call);
/* The call got no reply: frees its slot without advancing it. */
void tbbt_nfs4_call_abort(struct tbbt_nfs4_call *call);
void tbbt_nfs4_call_fini(struct tbbt_nfs4_call *call);

/*
 * A COMPOUND for the live session of s's client again (after BADSESSION or
 * DEADSESSION): CREATE_SESSION with the client's live clientid and sequence id.
 * -1 when the client is unknown.
 */
int tbbt_nfs4_build_resession(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_session *s,
                              struct tbbt_nfs4_call *call);
/*
 * Absorbs its reply: the traced session now maps to the new live one. 0 or -1.  The
 * session is replaced: s is no longer valid after the call.
 */
int tbbt_nfs4_absorb_resession(struct tbbt_nfs4_state *st, struct tbbt_nfs4_session *s,
                               const COMPOUND4res *res);

/*
 * A lease renewal for client c (while a record waits out DELAY or GRACE, the other
 * clients' leases must not expire): RENEW for 4.0, a lone SEQUENCE on one of the
 * client's sessions (taking a slot) for 4.1+.  -1 when there is nothing to renew with
 * (4.0 not confirmed yet, no session yet, all slots busy).  Its reply goes to
 * tbbt_nfs4_absorb_renew(), which frees the slot.
 */
int tbbt_nfs4_build_renew(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_client *c,
                          struct tbbt_nfs4_call *call);
/* 0 if every result of the renewal (or DELEGRETURN) is NFS4_OK, else -1. */
int tbbt_nfs4_absorb_renew(struct tbbt_nfs4_call *call, const COMPOUND4res *res);

enum tbbt_nfs4_verdict {
    TBBT_NFS4_DONE = 0,       /* compared and absorbed */
    TBBT_NFS4_RETRY,          /* NFS4ERR_DELAY or NFS4ERR_GRACE where the trace had not */
    TBBT_NFS4_RESESSION,      /* SEQUENCE: BADSESSION or DEADSESSION */
};

#define TBBT_NFS4_NOSTATUS (-1)   /* no result for the operation */
#define TBBT_NFS4_MISMATCH_MAX 8
struct tbbt_nfs4_mismatch {
    uint32_t op;
    int32_t traced, live;     /* nfsstat4, or TBBT_NFS4_NOSTATUS */
};
#define TBBT_NFS4_DELEG_MAX 4
/* A delegation the live server granted (an OPEN's result): the player returns it at
 * once (tbbt_nfs4_build_delegreturn()). */
struct tbbt_nfs4_deleg {
    stateid4 stateid;
    struct tbbt_nfs4_fh fh;           /* the file's live handle: a GETFH after the OPEN */
    bool fh_known;                    /* false: the reply named no handle (not returnable) */
};

struct tbbt_nfs4_outcome {
    enum tbbt_nfs4_verdict verdict;
    uint32_t n_deleg;                 /* delegations granted, the first
                                         TBBT_NFS4_DELEG_MAX of them in deleg[] */
    struct tbbt_nfs4_deleg deleg[TBBT_NFS4_DELEG_MAX];
    /* 4.0 OPENs whose live reply asked for OPEN_CONFIRM where the traced one did not, or
     * the other way round: the trace's OPEN_CONFIRMs then no longer fit (not repaired). */
    uint32_t confirm_differs;
    uint32_t n_mismatch;      /* all of them; the first TBBT_NFS4_MISMATCH_MAX are kept */
    struct tbbt_nfs4_mismatch mismatch[TBBT_NFS4_MISMATCH_MAX];
};

/*
 * Absorbs the live reply res (borrowed) of call, built from rec: releases the slot,
 * moves the live owner seqids; with verdict DONE also learns handles, stateids, client
 * ids and sessions, moves the traced seqids and compares every status with the trace.
 * With RETRY or RESESSION nothing traced is learned: rebuild and send again.
 */
void tbbt_nfs4_absorb(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                      struct tbbt_nfs4_call *call, const COMPOUND4res *res,
                      struct tbbt_nfs4_outcome *out);

/*
 * DELEGRETURN of delegation d granted to a COMPOUND built as orig (its minor version;
 * 4.1+: a SEQUENCE on orig's session, taking a slot): [SEQUENCE,] PUTFH, DELEGRETURN.
 * -1 when d's handle is unknown or no slot is free.  The reply goes to
 * tbbt_nfs4_absorb_renew(), which frees the slot (0: returned).
 */
int tbbt_nfs4_build_delegreturn(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_call *orig,
                                const struct tbbt_nfs4_deleg *d, struct tbbt_nfs4_call *call);

/*
 * XDR routine of a COMPOUND4res decoded result by result with xdr_nfs_resop4 (for
 * clnt_call and xdr_free): on a result that does not decode the ones before it are
 * kept and the routine fails.  Free with xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, res).
 */
bool_t tbbt_nfs4_xdr_res(XDR *x, COMPOUND4res *res);

#endif
