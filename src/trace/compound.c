/* SPDX-License-Identifier: MIT */
/*
 * COMPOUND records' current filehandle and stateids (compound.h; RFC 8881 16.2.3.1.2
 * for the filehandle, RFC 7530 9.1.3 and RFC 8881 8.2.3 for the special stateids).
 */
#include "trace/compound.h"

#include <string.h>

#include "proto/nfs4.h"
#include "util/hash.h"

bool tbbt_op4_moves_fh(uint32_t op)
{
    switch (op) {
    case OP_PUTFH: case OP_PUTROOTFH: case OP_PUTPUBFH: case OP_RESTOREFH: case OP_LOOKUP:
    case OP_LOOKUPP: case OP_OPEN: case OP_CREATE: case OP_OPENATTR: case OP_SECINFO:
    case OP_SECINFO_NO_NAME:
        return true;
    default:
        return false;
    }
}

bool tbbt_op4_fh_after(const struct tbbt_trace_rec *rec, uint32_t i, uint32_t *ref,
                       const struct tbbt_op4 **attr)
{
    bool have = false;

    if (attr)
        *attr = NULL;
    for (uint32_t j = i + 1; j < rec->n_ops; j++) {
        const struct tbbt_op4 *o = &rec->ops[j];

        if (tbbt_op4_moves_fh(o->op) || !TBBT_O4_HAS(o, STATUS) || o->status != NFS4_OK)
            break;
        if (o->op == OP_GETFH && TBBT_O4_HAS(o, FH) && !have) {
            *ref = o->fh;
            have = true;
            if (!attr)
                break;
        }
        if (attr && o->op == OP_GETATTR && TBBT_O4_HAS(o, ATTR) && !*attr)
            *attr = o;
    }
    return have;
}

void tbbt_op4_sid_set_seqid(uint8_t *sid, uint32_t seqid)
{
    sid[0] = (uint8_t)(seqid >> 24);
    sid[1] = (uint8_t)(seqid >> 16);
    sid[2] = (uint8_t)(seqid >> 8);
    sid[3] = (uint8_t)seqid;
}

bool tbbt_op4_sid_special(const uint8_t *sid)
{
    const uint8_t *o = tbbt_op4_sid_other(sid);
    bool zero = true, ones = true;

    for (int i = 0; i < TBBT_OP4_OTHER_LEN; i++) {
        zero &= o[i] == 0;
        ones &= o[i] == 0xff;
    }
    return zero || ones;
}

guint tbbt_op4_other_hash(gconstpointer other)
{
    return (guint)tbbt_hash(other, TBBT_OP4_OTHER_LEN, 0);
}

gboolean tbbt_op4_other_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, TBBT_OP4_OTHER_LEN) == 0;
}

guint tbbt_op4_session_hash(gconstpointer session)
{
    return (guint)tbbt_hash(session, TBBT_OP4_ID_LEN, 0);
}

gboolean tbbt_op4_session_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, TBBT_OP4_ID_LEN) == 0;
}

guint tbbt_op4_owner_hash(gconstpointer key)
{
    const struct tbbt_op4_owner_key *k = key;
    return (guint)tbbt_hash(k->owner.p, k->owner.len, k->clientid);
}

gboolean tbbt_op4_owner_equal(gconstpointer a, gconstpointer b)
{
    const struct tbbt_op4_owner_key *x = a, *y = b;
    return x->clientid == y->clientid && x->owner.len == y->owner.len &&
           memcmp(x->owner.p, y->owner.p, x->owner.len) == 0;
}
