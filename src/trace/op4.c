/* SPDX-License-Identifier: MIT */
/*
 * The operations of an NFSv4 COMPOUND record (struct tbbt_op4, field `ops`,
 * trace format 1.2, and `ops_more`, 1.3) in the binary encoding that the trace
 * file (writer.c, reader.c) and the spill (spill.c) share.  No RFC covers our
 * own format: the layout is in docs/trace-format.md, "NFSv4 operations":
 *
 *   ops:       count (LEB128, at most TBBT_OP4_MAX), then per operation
 *              op (LEB128) | has (LEB128, bits 0..31) | the members `has` names,
 *              in member order (TBBT__OP4_MEMBERS_12)
 *   ops_more:  count (LEB128, the same as ops'), then per operation
 *              has (LEB128, bit i: member TBBT_O4_EXT + i) | those members, in
 *              member order (TBBT__OP4_MEMBERS_13)
 *
 *     U32, U64, REF   LEB128 (a REF is a handle reference below the table's count)
 *     NAME, PATH, BLOB  LEB128 length (at most 255, 1024, 1024) and the bytes
 *     ID16            16 bytes as they were on the wire
 *     VERF            8 bytes, little-endian
 *     SATTR, FATTR    their values as LEB128, in the order of trace-int.h's lists
 *
 * A 1.2 reader refuses bits of `has` it does not know, so members added after 1.2
 * go to `ops_more`, a field it skips.  The member lists are trace.h's, so the
 * encodings, the text form and the bound cannot disagree on which member comes when.
 */
#include "trace/trace-int.h"

#include <string.h>

#define MEMBER_BIT(m, member, kind, text) | (uint64_t)1 << TBBT_O4_##m
#define KNOWN_HAS_12 (UINT64_C(0) TBBT__OP4_MEMBERS_12(MEMBER_BIT) | 1u << TBBT_O4_TRUNC)
#define KNOWN_HAS_13 (UINT64_C(0) TBBT__OP4_MEMBERS_13(MEMBER_BIT))
#define KNOWN_HAS (KNOWN_HAS_12 | KNOWN_HAS_13)
_Static_assert(TBBT_O4_NMEMBERS_12 <= TBBT_O4_TRUNC, "op4 members reach the TRUNC bit");
_Static_assert(TBBT_O4_END <= 64, "op4 members past the 64 bits of has");

/*
 * Bytes of one operation at most, strings' bytes aside: op, has and the second
 * has, 26 integer members, 4 string lengths, 7 sattr and 13 fattr values as
 * LEB128 (each at most TBBT__UV_MAX bytes), 3 IDs and 2 verifiers.
 */
#define OP_FIXED_BOUND ((3 + 26 + 4 + 7 + 13) * TBBT__UV_MAX + 3 * TBBT_OP4_ID_LEN + 2 * 8)

/* ---- bounds --------------------------------------------------------------------- */

size_t tbbt__op4s_bound(const struct tbbt_trace_rec *rec)
{
    size_t n = 2 * TBBT__UV_MAX + TBBT__UV_SLACK;

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
    p = tbbt__put_uv_wide(p, o->has & KNOWN_HAS_12);
    TBBT__OP4_MEMBERS_12(ENC_MEMBER)
    return p;
}

uint8_t *tbbt__op4s_enc(uint8_t *p, const struct tbbt_trace_rec *rec)
{
    p = tbbt__put_uv_wide(p, rec->n_ops);
    for (uint32_t i = 0; i < rec->n_ops; i++)
        p = enc_op(p, &rec->ops[i]);
    return p;
}

bool tbbt__op4s_more(const struct tbbt_trace_rec *rec)
{
    for (uint32_t i = 0; i < rec->n_ops; i++)
        if (rec->ops[i].has & KNOWN_HAS_13)
            return true;
    return false;
}

static uint8_t *enc_op_more(uint8_t *p, const struct tbbt_op4 *o)
{
    p = tbbt__put_uv_wide(p, (o->has & KNOWN_HAS_13) >> TBBT_O4_EXT);
    TBBT__OP4_MEMBERS_13(ENC_MEMBER)
    return p;
}

uint8_t *tbbt__op4s_more_enc(uint8_t *p, const struct tbbt_trace_rec *rec)
{
    p = tbbt__put_uv_wide(p, rec->n_ops);
    for (uint32_t i = 0; i < rec->n_ops; i++)
        p = enc_op_more(p, &rec->ops[i]);
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
    uint32_t has;

    if (!tbbt__get_uv32(b, &o->op) || !tbbt__get_uv32(b, &has) || (has & ~KNOWN_HAS_12))
        return false;
    o->has = has;
    TBBT__OP4_MEMBERS_12(DEC_MEMBER)
    return true;
}

/* (ops_more has no handle reference: nfh is not needed) */
static bool dec_op_more(struct tbbt_buf *b, struct tbbt_trace_rec *rec, struct tbbt_op4 *o)
{
    uint64_t has;

    (void)rec;
    if (!tbbt__get_uv(b, &has) || has > KNOWN_HAS_13 >> TBBT_O4_EXT ||
        ((has << TBBT_O4_EXT) & ~KNOWN_HAS_13))
        return false;
    o->has |= has << TBBT_O4_EXT;
    TBBT__OP4_MEMBERS_13(DEC_MEMBER)
    return true;
}

bool tbbt__op4s_more_dec(struct tbbt_buf *b, struct tbbt_trace_rec *rec)
{
    uint32_t n;

    if (!tbbt__get_uv32(b, &n) || n != rec->n_ops)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!dec_op_more(b, rec, &rec->ops[i]))
            return false;
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
