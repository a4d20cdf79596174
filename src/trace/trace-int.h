/* SPDX-License-Identifier: MIT */
/*
 * Private to the trace module: constants of the binary layout, the
 * little-endian and LEB128 helpers, the field table that drives the writer,
 * the reader and the text form, and the name tables.  The byte layout is
 * specified in docs/trace-format.md (there is no RFC for our own format).
 *
 * File:   header (16 bytes) then records, the last one TBBT_REC_END.
 * Header: magic "\x89TBBT\r\n\x1a" | major u16 | minor u16 | header_len u32
 * Record: type u8 | body length u32 | body
 * All fixed-width integers are little-endian.
 */
#ifndef TBBT_TRACE_TRACE_INT_H
#define TBBT_TRACE_TRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "trace/trace.h"
#include "util/buf.h"
#include "util/util.h"

#define TBBT__TRACE_MAGIC "\x89TBBT\r\n\x1a"
#define TBBT__TRACE_MAGIC_LEN 8
#define TBBT__TRACE_HDR_LEN 16          /* header length written by this version */
#define TBBT__TRACE_HDR_MAX 65536       /* longest header a reader accepts */
#define TBBT__TRACE_PREFIX 5            /* type u8 + body length u32 */
#define TBBT__TRACE_OP_FIXED 41         /* fixed part of an op record body */
#define TBBT__TRACE_END_LEN 20          /* op count u64, handles u32, endpoints u32, crc u32 */
#define TBBT__TRACE_ADDR_MAX 47         /* longest endpoint address */
#define TBBT__TRACE_CRED_FIXED 14       /* CRED body: ref, name length, uid, gid, gid count */
#define TBBT__IPPROTO_TCP 6
#define TBBT__IPPROTO_UDP 17

/* How a field's value is encoded; see the TLV table in docs/trace-format.md. */
enum tbbt__kind {
    TBBT__K_REF,        /* uint32_t handle reference: varint */
    TBBT__K_U32,        /* uint32_t: varint */
    TBBT__K_U64,        /* uint64_t: varint */
    TBBT__K_TIME,       /* uint64_t nanoseconds: varint; text SEC.NSEC */
    TBBT__K_VERF,       /* uint64_t verifier: 8 bytes LE; text 0x + 16 hex digits */
    TBBT__K_NAME,       /* struct tbbt_str, <= TBBT_NAME_MAX */
    TBBT__K_PATH,       /* struct tbbt_str, <= TBBT_PATH_MAX */
    TBBT__K_SATTR,      /* struct tbbt_sattr */
    TBBT__K_FATTR,      /* struct tbbt_fattr */
    TBBT__K_WCC,        /* struct tbbt_wcc_pre */
    TBBT__K_ENTRIES,    /* entries + n_entries */
    TBBT__K_INFO,       /* info + n_info */
    TBBT__K_CRED,       /* uint32_t credential reference: varint */
    TBBT__K_OPS4,       /* ops + n_ops: NFSv4 operations (op4.c) */
    TBBT__K_OPS4X,      /* ops' members since 1.3 (op4.c); never in `present` */
};

struct tbbt__field {
    const char *name;   /* text key, as in the enum tbbt_field comments */
    uint8_t kind;       /* enum tbbt__kind */
    uint16_t off;       /* offsetof(struct tbbt_trace_rec, member) */
};

/* Indexed by enum tbbt_field. */
extern const struct tbbt__field tbbt__trace_fields[TBBT_F_NFIELDS];

#define TBBT__FIELD_PTR(rec, f) ((char *)(rec) + tbbt__trace_fields[f].off)
#define TBBT__FIELD_CPTR(rec, f) ((const char *)(rec) + tbbt__trace_fields[f].off)

/* Members of the structured values in the text form ({key=value,...}). */
enum tbbt__subkind {
    TBBT__S_U32,        /* decimal (or 0x hex on input) */
    TBBT__S_U64,
    TBBT__S_MODE,       /* uint32_t, octal with a leading 0 */
    TBBT__S_TIME,       /* uint64_t ns as SEC.NSEC */
    TBBT__S_MASK,       /* uint32_t TBBT_SA_* bits as name|name */
};

struct tbbt__sub {
    const char *name;
    uint8_t kind;       /* enum tbbt__subkind */
    uint16_t off;       /* offset in the struct */
    uint32_t sa_bit;    /* sattr: printed if this mask bit is set or the value is not 0 */
};

/* Tables ending { NULL }. */
extern const struct tbbt__sub tbbt__fattr_subs[];
extern const struct tbbt__sub tbbt__sattr_subs[];
extern const struct tbbt__sub tbbt__wcc_subs[];

/* { value, "name" } tables ending { 0, NULL }. */
struct tbbt__tok {
    int value;
    const char *name;
};

/* Returns the name of value or NULL. */
const char *tbbt__tok_name(const struct tbbt__tok *t, int value);
/* Looks up the len bytes at name; 0 and *value, or -1. */
int tbbt__tok_value(const struct tbbt__tok *t, const char *name, size_t len, int *value);

extern const struct tbbt__tok tbbt__rf_names[];     /* TBBT_RF_* bits */
extern const struct tbbt__tok tbbt__sa_names[];     /* TBBT_SA_* bits */
extern const struct tbbt__tok tbbt__rpc_names[];    /* enum tbbt_rpc_stat */
extern const struct tbbt__tok tbbt__prog_names[];   /* enum tbbt_prog */
/* Status table for prog, or NULL. */
const struct tbbt__tok *tbbt__status_tok(int prog);
/* Procedure table for prog, or NULL. */
const struct tbbt__tok *tbbt__proc_tok(int prog);

/*
 * NFSv4 operations (fields `ops` and `ops_more`, op4.c): the binary encoding the
 * trace file and the spill share (docs/trace-format.md, "NFSv4 operations").
 *   _bound:     bytes the encoding of rec's ops (both fields) may take
 *               (TBBT__UV_SLACK included)
 *   _check:     true if every op keeps the bounds a reader enforces (strings,
 *               members, handle references below nfh, at most TBBT_OP4_MAX)
 *   _enc:       writes count and ops with their 1.2 members at p, returns the end
 *               (within _bound)
 *   _dec:       reads them into rec (strings into its arena); false if malformed,
 *               over a bound, or a handle reference is not below nfh
 *   _more:      true if an op has a member since 1.3 (the writer then writes
 *               `ops_more`)
 *   _more_enc:  writes count and each op's members since 1.3 at p
 *   _more_dec:  reads them into rec's ops (read by _dec before); false if malformed
 *               or the count is not rec's
 */
size_t tbbt__op4s_bound(const struct tbbt_trace_rec *rec);
bool tbbt__op4s_check(const struct tbbt_trace_rec *rec, uint32_t nfh);
uint8_t *tbbt__op4s_enc(uint8_t *p, const struct tbbt_trace_rec *rec);
bool tbbt__op4s_dec(struct tbbt_buf *b, struct tbbt_trace_rec *rec, uint32_t nfh);
bool tbbt__op4s_more(const struct tbbt_trace_rec *rec);
uint8_t *tbbt__op4s_more_enc(uint8_t *p, const struct tbbt_trace_rec *rec);
bool tbbt__op4s_more_dec(struct tbbt_buf *b, struct tbbt_trace_rec *rec);

/* Makes room for n entries in rec->entries (n_entries unchanged). */
void tbbt__trace_rec_reserve(struct tbbt_trace_rec *rec, uint32_t n);

/* True if s[0..len) is a valid endpoint address (1..47 bytes of [0-9A-Za-z.:%_-]). */
bool tbbt__addr_valid(const char *s, size_t len);

/* ---- little-endian and LEB128 --------------------------------------------- */

static inline uint8_t *tbbt__put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static inline uint8_t *tbbt__put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static inline uint8_t *tbbt__put_le64(uint8_t *p, uint64_t v)
{
    tbbt__put_le32(p, (uint32_t)v);
    return tbbt__put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t tbbt__get_le64(struct tbbt_buf *b)
{
    uint64_t lo = tbbt_buf_get_le32(b);
    return lo | (uint64_t)tbbt_buf_get_le32(b) << 32;
}

#define TBBT__UV_MAX 10     /* longest LEB128 encoding of a uint64_t */

/* Writes v as unsigned LEB128 (minimal length); returns the end. */
static inline uint8_t *tbbt__put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/*
 * LEB128 like tbbt__put_uv(), but values of 2..9 bytes are spread into one
 * 64-bit word and stored at once (nanosecond times take 9 bytes): it may
 * write up to TBBT__UV_SLACK bytes past the value's end, so it is used only inside
 * a record's reserved space, whose bound has that slack.
 */
#define TBBT__UV_SLACK 8u
static inline uint8_t *tbbt__put_uv_wide(uint8_t *p, uint64_t v)
{
    uint64_t w, cont;
    unsigned n;

    if (v < 0x80) {
        *p = (uint8_t)v;
        return p + 1;
    }
    if (v >> 63)
        return tbbt__put_uv(p, v);                  /* 10 bytes */
    n = (64u - (unsigned)__builtin_clzll(v) + 6u) / 7u;   /* 2..9 */
    w = (v & 0x7f) | (v << 1 & UINT64_C(0x7f00)) | (v << 2 & UINT64_C(0x7f0000)) |
        (v << 3 & UINT64_C(0x7f000000)) | (v << 4 & UINT64_C(0x7f00000000)) |
        (v << 5 & UINT64_C(0x7f0000000000)) | (v << 6 & UINT64_C(0x7f000000000000)) |
        (v << 7 & UINT64_C(0x7f00000000000000));
    cont = UINT64_C(0x8080808080808080);
    if (n < 9)
        cont &= (UINT64_C(1) << (8 * (n - 1))) - 1;  /* every byte but the last */
    w = GUINT64_TO_LE(w | cont);
    memcpy(p, &w, 8);
    if (n == 9)
        p[8] = (uint8_t)(v >> 56);
    return p + n;
}

static inline unsigned tbbt__uv_len(uint64_t v)
{
    unsigned n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/*
 * Reads an unsigned LEB128 value.  False (cursor unchanged unless short) if
 * the bytes run out, the encoding is longer than needed, or the value does
 * not fit 64 bits.  One-byte values take the inline path.
 */
bool tbbt__get_uv_slow(struct tbbt_buf *b, uint64_t *out);

static inline bool tbbt__get_uv(struct tbbt_buf *b, uint64_t *out)
{
    if (b->len > 0 && b->p[0] < 0x80) {
        *out = b->p[0];
        b->p++;
        b->len--;
        return true;
    }
    return tbbt__get_uv_slow(b, out);
}

static inline bool tbbt__get_uv32(struct tbbt_buf *b, uint32_t *out)
{
    uint64_t v;

    if (!tbbt__get_uv(b, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/*
 * The values of struct tbbt_fattr, tbbt_sattr and tbbt_wcc_pre in the order
 * every encoding of them keeps (the trace's LEB128 in writer.c and reader.c,
 * the spill's packing in spill.c, the text form's {key=value,...} through
 * names.c's tables), as X(member, index, bits, text key, enum tbbt__subkind
 * without its prefix, sattr mask bit that makes text-out print it or 0): one
 * list per struct, so that no two encodings can disagree.
 */
#define TBBT__FATTR_VALUES(X) \
    X(type, 0, 32, "type", U32, 0) X(mode, 1, 32, "mode", MODE, 0) \
    X(nlink, 2, 32, "nlink", U32, 0) X(uid, 3, 32, "uid", U32, 0) X(gid, 4, 32, "gid", U32, 0) \
    X(size, 5, 64, "size", U64, 0) X(used, 6, 64, "used", U64, 0) \
    X(rdev, 7, 64, "rdev", U64, 0) X(fsid, 8, 64, "fsid", U64, 0) \
    X(fileid, 9, 64, "fileid", U64, 0) X(atime_ns, 10, 64, "atime", TIME, 0) \
    X(mtime_ns, 11, 64, "mtime", TIME, 0) X(ctime_ns, 12, 64, "ctime", TIME, 0)
#define TBBT__FATTR_NVALUES 13
#define TBBT__SATTR_VALUES(X) \
    X(mask, 0, 32, "mask", MASK, 0) X(mode, 1, 32, "mode", MODE, TBBT_SA_MODE) \
    X(uid, 2, 32, "uid", U32, TBBT_SA_UID) X(gid, 3, 32, "gid", U32, TBBT_SA_GID) \
    X(size, 4, 64, "size", U64, TBBT_SA_SIZE) X(atime_ns, 5, 64, "atime", TIME, TBBT_SA_ATIME) \
    X(mtime_ns, 6, 64, "mtime", TIME, TBBT_SA_MTIME)
#define TBBT__WCC_VALUES(X) \
    X(size, 0, 64, "size", U64, 0) X(mtime_ns, 1, 64, "mtime", TIME, 0) \
    X(ctime_ns, 2, 64, "ctime", TIME, 0)

/*
 * struct tbbt_fattr, tbbt_sattr and tbbt_wcc_pre as LEB128 values in the lists' order
 * (the trace file's composite values; writer.c, reader.c, op4.c).  The encoders use
 * tbbt__put_uv_wide(): TBBT__UV_SLACK bytes past the end may be written.  The decoders
 * return false if a value does not decode.
 */
#define TBBT__ENC_VALUE(m, i, bits, ...) p = tbbt__put_uv_wide(p, a->m);
static inline uint8_t *tbbt__enc_fattr(uint8_t *p, const struct tbbt_fattr *a)
{
    TBBT__FATTR_VALUES(TBBT__ENC_VALUE)
    return p;
}

static inline uint8_t *tbbt__enc_sattr(uint8_t *p, const struct tbbt_sattr *a)
{
    TBBT__SATTR_VALUES(TBBT__ENC_VALUE)
    return p;
}

static inline uint8_t *tbbt__enc_wcc(uint8_t *p, const struct tbbt_wcc_pre *a)
{
    TBBT__WCC_VALUES(TBBT__ENC_VALUE)
    return p;
}
#undef TBBT__ENC_VALUE

#define TBBT__DEC_32(p) tbbt__get_uv32(b, p)
#define TBBT__DEC_64(p) tbbt__get_uv(b, p)
#define TBBT__DEC_VALUE(m, i, bits, ...) && TBBT__DEC_##bits(&a->m)
static inline bool tbbt__dec_fattr(struct tbbt_buf *b, struct tbbt_fattr *a)
{
    return true TBBT__FATTR_VALUES(TBBT__DEC_VALUE);
}

static inline bool tbbt__dec_sattr(struct tbbt_buf *b, struct tbbt_sattr *a)
{
    return true TBBT__SATTR_VALUES(TBBT__DEC_VALUE);
}

static inline bool tbbt__dec_wcc(struct tbbt_buf *b, struct tbbt_wcc_pre *a)
{
    return true TBBT__WCC_VALUES(TBBT__DEC_VALUE);
}
#undef TBBT__DEC_VALUE
#undef TBBT__DEC_64
#undef TBBT__DEC_32

#endif
