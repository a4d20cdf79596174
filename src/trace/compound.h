/* SPDX-License-Identifier: MIT */
/*
 * What a COMPOUND record's operations say beyond their members (struct tbbt_op4,
 * trace.h), for the modules that read them (the namespace model's lowering, pre-play
 * correction, the player's NFSv4 state):
 *   - the current filehandle (RFC 8881 16.2.3.1.2): which operations move it, and the
 *     handle a GETFH after an operation tells;
 *   - stateids as the trace keeps them (TBBT_OP4_ID_LEN bytes: the seqid, big-endian,
 *     then the 12-byte `other`): the seqid, the special ones, and hash-table functions
 *     for tables keyed by an `other`, a session id or a 4.0 owner held in the value (a
 *     lookup hashes the caller's bytes, nothing to allocate).
 */
#ifndef TBBT_TRACE_COMPOUND_H
#define TBBT_TRACE_COMPOUND_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "trace/trace.h"

#define TBBT_OP4_OTHER_LEN 12       /* a stateid's `other` (NFS4_OTHER_SIZE) */

/* True for operations that move the current filehandle elsewhere (PUTFH, PUTROOTFH,
 * PUTPUBFH, RESTOREFH, LOOKUP, LOOKUPP, OPEN, CREATE, OPENATTR), or leave none
 * (SECINFO, SECINFO_NO_NAME). */
bool tbbt_op4_moves_fh(uint32_t op);

/*
 * The handle of the object operation i of rec made current: the next GETFH before the
 * current filehandle moves again or an operation did not answer OK (as clients ask for
 * it).  Sets *ref and returns true if one tells it.  attr: if not NULL, also the first
 * GETATTR (with attributes) in that stretch, or NULL.
 */
bool tbbt_op4_fh_after(const struct tbbt_trace_rec *rec, uint32_t i, uint32_t *ref,
                       const struct tbbt_op4 **attr);

/* A traced stateid's seqid, and its `other`. */
static inline uint32_t tbbt_op4_sid_seqid(const uint8_t *sid)
{
    return (uint32_t)sid[0] << 24 | (uint32_t)sid[1] << 16 | (uint32_t)sid[2] << 8 | sid[3];
}

static inline const uint8_t *tbbt_op4_sid_other(const uint8_t *sid)
{
    return sid + 4;
}

void tbbt_op4_sid_set_seqid(uint8_t *sid, uint32_t seqid);

/* True if the stateid's `other` is all zeros (anonymous, and 4.1's current stateid) or
 * all ones (READ bypass): stateids no operation gives. */
bool tbbt_op4_sid_special(const uint8_t *sid);

/* GHashTable functions for keys that point to an `other`, or to a session id. */
guint tbbt_op4_other_hash(gconstpointer other);
gboolean tbbt_op4_other_equal(gconstpointer a, gconstpointer b);
guint tbbt_op4_session_hash(gconstpointer session);
gboolean tbbt_op4_session_equal(gconstpointer a, gconstpointer b);

/* A 4.0 open or lock owner as a table key: the traced client id and the owner's bytes
 * (borrowed: a stored key points into its value's own copy). */
struct tbbt_op4_owner_key {
    uint64_t clientid;
    struct tbbt_str owner;
};
guint tbbt_op4_owner_hash(gconstpointer key);
gboolean tbbt_op4_owner_equal(gconstpointer a, gconstpointer b);

#endif
