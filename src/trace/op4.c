/* SPDX-License-Identifier: MIT */
/*
 * The operations of an NFSv4 COMPOUND record (struct tbbt_op4, field `ops`,
 * trace format 1.2) in the binary encoding that the trace file (writer.c,
 * reader.c) and the spill (spill.c) share.  No RFC covers our own format: the
 * layout is in docs/trace-format.md, "NFSv4 operations":
 *
 *   count (LEB128, at most TBBT_OP4_MAX), then per operation
 *   op (LEB128) | has (LEB128) | the members `has` names, in member order:
 *     U32, U64, REF   LEB128 (a REF is a handle reference below the table's count)
 *     NAME, PATH, BLOB  LEB128 length (at most 255, 1024, 1024) and the bytes
 *     ID16            16 bytes as they were on the wire
 *     VERF            8 bytes, little-endian
 *     SATTR, FATTR    their values as LEB128, in the order of trace-int.h's lists
 *
 * The member list is trace.h's TBBT__OP4_MEMBERS, so the two encodings, the
 * text form and the bound cannot disagree on which member comes when.
 */
#include "trace/trace-int.h"

#include <string.h>

#define MEMBER_BIT(m, member, kind, text) | 1u << TBBT_O4_##m
#define KNOWN_HAS (0u TBBT__OP4_MEMBERS(MEMBER_BIT) | 1u << TBBT_O4_TRUNC)
_Static_assert(TBBT_O4_NMEMBERS <= TBBT_O4_TRUNC, "op4 members reach the TRUNC bit");

/*
 * Bytes of one operation at most, strings' bytes aside: op and has, 18 integer
 * members, 4 string lengths, 7 sattr and 13 fattr values as LEB128 (each at
 * most TBBT__UV_MAX bytes), 3 IDs and 2 verifiers.
 */
#define OP_FIXED_BOUND ((2 + 18 + 4 + 7 + 13) * TBBT__UV_MAX + 3 * TBBT_OP4_ID_LEN + 2 * 8)

/* ---- bounds --------------------------------------------------------------------- */

size_t tbbt__op4s_bound(const struct tbbt_trace_rec *rec)
{
    size_t n = TBBT__UV_MAX + TBBT__UV_SLACK;

    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        n += OP_FIXED_BOUND + o->name.len + o->name2.len + o->target.len + o->owner.len;
    }
    return n;
}

static bool str_ok(const struct tbbt_str *s, uint32_t max)
{
    return s->len <= max && (s->len == 0 || s->p);
}

bool tbbt__op4s_check(const struct tbbt_trace_rec *rec, uint32_t nfh)
{
    if (rec->n_ops > TBBT_OP4_MAX || (rec->n_ops && !rec->ops))
        return false;
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];

        if ((o->has & ~KNOWN_HAS) || (TBBT_O4_HAS(o, FH) && o->fh >= nfh))
            return false;
        if ((TBBT_O4_HAS(o, NAME) && !str_ok(&o->name, TBBT_NAME_MAX)) ||
            (TBBT_O4_HAS(o, NAME2) && !str_ok(&o->name2, TBBT_NAME_MAX)) ||
            (TBBT_O4_HAS(o, TARGET) && !str_ok(&o->target, TBBT_PATH_MAX)) ||
            (TBBT_O4_HAS(o, OWNER) && !str_ok(&o->owner, TBBT_OP4_OWNER_MAX)))
            return false;
    }
    return true;
}

/* ---- encoding ------------------------------------------------------------------- */


static uint8_t *enc_str(uint8_t *p, const struct tbbt_str *s)
{
    p = tbbt__put_uv_wide(p, s->len);
    if (s->len)
        memcpy(p, s->p, s->len);
    return p + s->len;
}

#define ENC_U32(p, v) tbbt__put_uv_wide(p, v)
#define ENC_U64(p, v) tbbt__put_uv_wide(p, v)
#define ENC_REF(p, v) tbbt__put_uv_wide(p, v)
#define ENC_NAME(p, v) enc_str(p, &(v))
#define ENC_PATH(p, v) enc_str(p, &(v))
#define ENC_BLOB(p, v) enc_str(p, &(v))
#define ENC_ID16(p, v) (memcpy(p, v, TBBT_OP4_ID_LEN), (p) + TBBT_OP4_ID_LEN)
#define ENC_VERF(p, v) tbbt__put_le64(p, v)
#define ENC_SATTR(p, v) tbbt__enc_sattr(p, &(v))
#define ENC_FATTR(p, v) tbbt__enc_fattr(p, &(v))
#define ENC_MEMBER(m, member, kind, text)                                                     \
    if (TBBT_O4_HAS(o, m))                                                                    \
        p = ENC_##kind(p, o->member);

static uint8_t *enc_op(uint8_t *p, const struct tbbt_op4 *o)
{
    p = tbbt__put_uv_wide(p, o->op);
    p = tbbt__put_uv_wide(p, o->has);
    TBBT__OP4_MEMBERS(ENC_MEMBER)
    return p;
}

uint8_t *tbbt__op4s_enc(uint8_t *p, const struct tbbt_trace_rec *rec)
{
    p = tbbt__put_uv_wide(p, rec->n_ops);
    for (uint32_t i = 0; i < rec->n_ops; i++)
        p = enc_op(p, &rec->ops[i]);
    return p;
}

/* ---- decoding ------------------------------------------------------------------- */


static bool dec_str(struct tbbt_buf *b, struct tbbt_trace_rec *rec, struct tbbt_str *s,
                    uint32_t max)
{
    uint32_t len;
    const uint8_t *p;

    if (!tbbt__get_uv32(b, &len) || len > max || !(p = tbbt_buf_get(b, len)))
        return false;
    tbbt_trace_rec_set_str(rec, s, p, len);
    return true;
}

static bool dec_id16(struct tbbt_buf *b, uint8_t *dst)
{
    const uint8_t *p = tbbt_buf_get(b, TBBT_OP4_ID_LEN);

    if (!p)
        return false;
    memcpy(dst, p, TBBT_OP4_ID_LEN);
    return true;
}

static bool dec_verf(struct tbbt_buf *b, uint64_t *v)
{
    *v = tbbt__get_le64(b);
    return !b->trunc;
}

#define DEC_U32(v) tbbt__get_uv32(b, &(v))
#define DEC_U64(v) tbbt__get_uv(b, &(v))
#define DEC_REF(v) (tbbt__get_uv32(b, &(v)) && (v) < nfh)
#define DEC_NAME(v) dec_str(b, rec, &(v), TBBT_NAME_MAX)
#define DEC_PATH(v) dec_str(b, rec, &(v), TBBT_PATH_MAX)
#define DEC_BLOB(v) dec_str(b, rec, &(v), TBBT_OP4_OWNER_MAX)
#define DEC_ID16(v) dec_id16(b, v)
#define DEC_VERF(v) dec_verf(b, &(v))
#define DEC_SATTR(v) tbbt__dec_sattr(b, &(v))
#define DEC_FATTR(v) tbbt__dec_fattr(b, &(v))
#define DEC_MEMBER(m, member, kind, text)                                                     \
    if (TBBT_O4_HAS(o, m) && !DEC_##kind(o->member))                                          \
        return false;

static bool dec_op(struct tbbt_buf *b, struct tbbt_trace_rec *rec, struct tbbt_op4 *o,
                   uint32_t nfh)
{
    if (!tbbt__get_uv32(b, &o->op) || !tbbt__get_uv32(b, &o->has) || (o->has & ~KNOWN_HAS))
        return false;
    TBBT__OP4_MEMBERS(DEC_MEMBER)
    return true;
}

bool tbbt__op4s_dec(struct tbbt_buf *b, struct tbbt_trace_rec *rec, uint32_t nfh)
{
    uint32_t n;

    rec->n_ops = 0;
    if (!tbbt__get_uv32(b, &n) || n > TBBT_OP4_MAX)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        struct tbbt_op4 *o = tbbt_trace_rec_add_op4(rec);

        if (!dec_op(b, rec, o, nfh))
            return false;
    }
    return true;
}
