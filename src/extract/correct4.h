/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: the NFSv4 side of pre-play correction (correct4.c):
 * state lost with the capture (stateids used without the OPEN that gave them, a lost
 * RECLAIM_COMPLETE or OPEN_CONFIRM) and the corrective COMPOUNDs that give it back, and
 * the COMPOUNDs that say the namespace repairs of correct.c (which builds and counts
 * the records).  One per pass, records in trace order.  Not thread-safe.
 */
#ifndef TBBT_EXTRACT_CORRECT4_H
#define TBBT_EXTRACT_CORRECT4_H

#include <glib.h>
#include <stdint.h>

#include "trace/trace.h"

#define TBBT__CORR4_FIX_MAX 16      /* repairs (and unrepaired uses) per record at most */

struct tbbt__corr4;

/* One corrective COMPOUND to insert before the record. */
enum tbbt__corr4_fix_kind {
    TBBT__C4_FIX_OPEN,              /* OPEN by handle giving a lost stateid */
    TBBT__C4_FIX_RECLAIM,           /* the client's lost RECLAIM_COMPLETE */
    TBBT__C4_FIX_CONFIRM,           /* 4.0: the lost OPEN_CONFIRM of an OPEN */
};

struct tbbt__corr4_fix {
    enum tbbt__corr4_fix_kind kind;
    uint32_t fh;                    /* the trace handle reference of the file */
    uint64_t clientid;              /* the traced client id (the owner's) */
    uint32_t share;                 /* OPEN4_SHARE_ACCESS_* */
    uint8_t stateid[TBBT_OP4_ID_LEN];   /* the traced stateid the OPEN gives */
    uint8_t session[TBBT_OP4_ID_LEN];   /* the record's SEQUENCE session, and slot */
    uint64_t slot;
    uint32_t seqid;                 /* CONFIRM: the open owner's seqid */
};

/* Adds to out (a record whose header the caller set) fix's COMPOUND of minor version
 * minor: SEQUENCE (its session), then RECLAIM_COMPLETE, or PUTFH of the file and OPEN by
 * handle (CLAIM_FH, no create, deny none, an owner of its own per stateid) whose result
 * is the lost stateid; 4.0: PUTFH of the file and OPEN_CONFIRM of the OPEN's stateid. */
void tbbt__corr4_fixup(const struct tbbt__corr4_fix *fix, uint32_t minor,
                       struct tbbt_trace_rec *out);

/* Given: free with tbbt__corr4_free() (NULL is a no-op). */
struct tbbt__corr4 *tbbt__corr4_new(void);
void tbbt__corr4_free(struct tbbt__corr4 *c);

/*
 * One record (any program: only NFSv4 COMPOUNDs with a reply are looked at): learns
 * the stateids and client ids it gives, and returns the corrective COMPOUNDs it needs
 * (at most max, in fix[]), and in unfixed[0 .. *n_unfixed) the reasons (static
 * strings) of the lost state it needs and no OPEN can give.
 */
unsigned tbbt__corr4_step(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                          struct tbbt__corr4_fix *fix, unsigned max,
                          const char **unfixed, unsigned *n_unfixed);

/* ---- namespace repairs (correct.c's model decides them; NFSv4 says them) ------------ */

#define TBBT__CORR4_DEPTH 32        /* names looked up from a handle at most */

/* A directory (or, for SETATTR, the object): a traced handle, then names from it. */
struct tbbt__corr4_at {
    uint32_t base;                  /* trace handle reference */
    unsigned n;
    struct tbbt_str comp[TBBT__CORR4_DEPTH];    /* borrowed */
};

enum tbbt__corr4_kind {
    TBBT__C4_CREATE,                /* a regular file: OPEN (create, GUARDED4), CLOSE
                                       (4.0: OPEN; then LOOKUP, OPEN_CONFIRM, CLOSE) */
    TBBT__C4_MKDIR,                 /* CREATE NF4DIR */
    TBBT__C4_SYMLINK,               /* CREATE NF4LNK */
    TBBT__C4_REMOVE,                /* REMOVE (a file or an empty directory) */
    TBBT__C4_RENAME,                /* at's name to at2's name2 */
    TBBT__C4_SETATTR,               /* at is the object; anonymous stateid */
};

struct tbbt__corr4_nsop {
    enum tbbt__corr4_kind kind;
    struct tbbt__corr4_at at, at2;
    struct tbbt_str name, name2, target;    /* borrowed */
    struct tbbt_sattr sattr;
};

/* How many records op takes in rec4's trace: 2 for a file made on NFSv4.0 (the OPEN of
 * a new owner; then its OPEN_CONFIRM and CLOSE), else 1. */
unsigned tbbt__corr4_records(const struct tbbt_trace_rec *rec4,
                             const struct tbbt__corr4_nsop *op);

/*
 * Adds to out (and to out2 when tbbt__corr4_records() says 2; records whose header the
 * caller set) the operations of op as COMPOUNDs of rec4's minor version (4.1+: rec4's
 * SEQUENCE first), every status OK.  False when the client id the OPEN of a file needs
 * is unknown.
 */
bool tbbt__corr4_compound(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec4,
                          const struct tbbt__corr4_nsop *op, struct tbbt_trace_rec *out,
                          struct tbbt_trace_rec *out2);

#endif
