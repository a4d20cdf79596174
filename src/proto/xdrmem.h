/* SPDX-License-Identifier: MIT */
/*
 * A faster XDR memory stream for decoding, under the rpcgen-generated code.
 *
 * libtirpc decodes every 32-bit word of a message through three calls: the
 * generated routine calls xdr_u_int() (through the PLT), which calls the
 * stream's x_getlong through its operations table.  A conversion decodes
 * some forty words per call and reply, and those calls cost more than the
 * rest of decoding.  This module gives:
 *
 *  - tbbt_xdrmem_create(): a decode-only memory stream, the same contract
 *    as libtirpc's xdrmem_create(..., XDR_DECODE) (RFC 4506 big-endian
 *    words, positions in bytes from the start, a short buffer fails), whose
 *    operations table the libtirpc routines use as they use any stream;
 *  - inline versions of the primitives the generated code calls (xdr_u_int,
 *    xdr_int, xdr_enum, xdr_bool, xdr_u_quad_t, xdr_quad_t, xdr_opaque, and
 *    xdr_bytes and xdr_string into a buffer the caller gives): on a
 *    tbbt_xdrmem stream they read the bytes in place; on any other stream
 *    (the player's encoders, libtirpc's own streams) or when libtirpc must
 *    allocate, they call libtirpc's routine.  They keep libtirpc's results
 *    exactly, including a boolean that is any non-zero word.
 *
 * The generated *_xdr.c files are compiled with this header force-included
 * (src/proto/CMakeLists.txt): the rpcgen code is unchanged, only the
 * primitive calls in it resolve to the inline versions (function-like
 * macros: taking a primitive's address still gives libtirpc's function).
 * tests/unit/test-xdrmem.c checks both streams decode the same.
 */
#ifndef TBBT_PROTO_XDRMEM_H
#define TBBT_PROTO_XDRMEM_H

#include <rpc/rpc.h>
#include <stdint.h>
#include <string.h>

extern const struct xdr_ops tbbt_xdrmem_ops;

/* A decode stream over p[0..len); nothing to free. */
void tbbt_xdrmem_create(XDR *x, const void *p, u_int len);

/*
 * A tbbt_xdrmem stream keeps its end in x_public instead of counting the bytes
 * left in x_handy: a store through the u_int pointers the generated code
 * decodes into may alias x_handy, and the compiler would then reload it from
 * memory after every word; no stored value may alias a pointer.
 */
static inline char *tbbt__xdrmem_end(const XDR *x)
{
    return (char *)x->x_public;
}

/* Bytes left in a tbbt_xdrmem stream. */
static inline size_t tbbt__xdrmem_left(const XDR *x)
{
    return (size_t)(tbbt__xdrmem_end(x) - (char *)x->x_private);
}

/* Reads the next word of a tbbt_xdrmem stream; false if fewer than 4 bytes are left. */
static inline bool_t tbbt__xdrmem_word(XDR *x, uint32_t *v)
{
    uint32_t w;

    if (tbbt__xdrmem_left(x) < 4)
        return FALSE;
    memcpy(&w, x->x_private, 4);
    *v = __builtin_bswap32(w);
    x->x_private = (char *)x->x_private + 4;
    return TRUE;
}

/* x_op first: xdr_free() runs the generated code on a stream whose x_ops it never sets. */
#define TBBT__XDRMEM_FAST(x) ((x)->x_op == XDR_DECODE && (x)->x_ops == &tbbt_xdrmem_ops)

/* Reads the next two words (a hyper, high word first) of a tbbt_xdrmem stream. */
static inline bool_t tbbt__xdrmem_hyper(XDR *x, uint64_t *v)
{
    uint32_t hi, lo;

    if (!tbbt__xdrmem_word(x, &hi) || !tbbt__xdrmem_word(x, &lo))
        return FALSE;
    *v = (uint64_t)hi << 32 | lo;
    return TRUE;
}

/*
 * tbbt_<prim>(XDR *x, type *p), the inline version of libtirpc's <prim>: on
 * another stream, <prim> itself; else the next value read (uint32_t or
 * uint64_t v, by read) and stored as conv.
 */
#define TBBT__XDRMEM_PRIM(prim, type, vtype, read, conv)                                        \
    static inline bool_t tbbt_##prim(XDR *x, type *p)                                          \
    {                                                                                          \
        vtype v;                                                                               \
                                                                                               \
        if (!TBBT__XDRMEM_FAST(x))                                                             \
            return prim(x, p);                                                                 \
        if (!read(x, &v))                                                                      \
            return FALSE;                                                                      \
        *p = (conv);                                                                           \
        return TRUE;                                                                           \
    }

TBBT__XDRMEM_PRIM(xdr_u_int, u_int, uint32_t, tbbt__xdrmem_word, v)
TBBT__XDRMEM_PRIM(xdr_int, int, uint32_t, tbbt__xdrmem_word, (int)v)
TBBT__XDRMEM_PRIM(xdr_enum, enum_t, uint32_t, tbbt__xdrmem_word, (enum_t)v)
/* As libtirpc: any non-zero word is TRUE. */
TBBT__XDRMEM_PRIM(xdr_bool, bool_t, uint32_t, tbbt__xdrmem_word, v != 0)
TBBT__XDRMEM_PRIM(xdr_u_quad_t, u_quad_t, uint64_t, tbbt__xdrmem_hyper, v)
TBBT__XDRMEM_PRIM(xdr_quad_t, quad_t, uint64_t, tbbt__xdrmem_hyper, (quad_t)v)

#undef TBBT__XDRMEM_PRIM

/* The position of a tbbt_xdrmem stream: bytes from the start. */
static inline u_int tbbt__xdrmem_pos(const XDR *x)
{
    return (u_int)((char *)x->x_private - x->x_base);
}

/* xdr_getpos() without the call through the operations table on a tbbt_xdrmem stream. */
static inline u_int tbbt_xdr_getpos(XDR *x)
{
    return x->x_ops == &tbbt_xdrmem_ops ? tbbt__xdrmem_pos(x) : xdr_getpos(x);
}

/* Fixed-length opaque data and its padding to a multiple of 4 (RFC 4506 4.9). */
static inline bool_t tbbt_xdr_opaque(XDR *x, char *cp, u_int cnt)
{
    u_int pad = (4 - (cnt & 3)) & 3;

    if (!TBBT__XDRMEM_FAST(x))
        return xdr_opaque(x, cp, cnt);
    if (cnt == 0)
        return TRUE;
    if (tbbt__xdrmem_left(x) < cnt)
        return FALSE;
    memcpy(cp, x->x_private, cnt);
    x->x_private = (char *)x->x_private + cnt;
    if (tbbt__xdrmem_left(x) < pad)
        return FALSE;
    x->x_private = (char *)x->x_private + pad;
    return TRUE;
}

/*
 * Counted opaque data into the caller's buffer (*cpp not NULL; with NULL,
 * libtirpc's routine allocates, as always).  As libtirpc, *sizep is set
 * before the bound is checked.
 */
static inline bool_t tbbt_xdr_bytes(XDR *x, char **cpp, u_int *sizep, u_int maxsize)
{
    uint32_t n;

    if (!TBBT__XDRMEM_FAST(x) || *cpp == NULL)
        return xdr_bytes(x, cpp, sizep, maxsize);
    if (!tbbt__xdrmem_word(x, &n))
        return FALSE;
    *sizep = n;
    if (n > maxsize)
        return FALSE;
    return tbbt_xdr_opaque(x, *cpp, n);
}

/* A string into the caller's buffer of maxsize + 1 bytes (*cpp not NULL; else libtirpc's). */
static inline bool_t tbbt_xdr_string(XDR *x, char **cpp, u_int maxsize)
{
    uint32_t n;

    if (!TBBT__XDRMEM_FAST(x) || *cpp == NULL)
        return xdr_string(x, cpp, maxsize);
    if (!tbbt__xdrmem_word(x, &n) || n > maxsize || n == UINT32_MAX)
        return FALSE;
    (*cpp)[n] = 0;
    return tbbt_xdr_opaque(x, *cpp, n);
}

/* In the generated code (force-included there), calls go to the versions above. */
#ifdef TBBT_XDRMEM_GENERATED
#define xdr_u_int(x, p) tbbt_xdr_u_int(x, p)
#define xdr_int(x, p) tbbt_xdr_int(x, p)
#define xdr_enum(x, p) tbbt_xdr_enum(x, p)
#define xdr_bool(x, p) tbbt_xdr_bool(x, p)
#define xdr_u_quad_t(x, p) tbbt_xdr_u_quad_t(x, p)
#define xdr_quad_t(x, p) tbbt_xdr_quad_t(x, p)
#define xdr_opaque(x, p, n) tbbt_xdr_opaque(x, p, n)
#define xdr_bytes(x, p, s, m) tbbt_xdr_bytes(x, p, s, m)
#define xdr_string(x, p, m) tbbt_xdr_string(x, p, m)

/*
 * The attribute routines of nfs3.x run for nearly every reply, and their
 * members' routines (times, device numbers, the typedefs of uint32) are
 * separate functions of a few words each: inlined into them (flatten), the
 * stream position stays in a register from the first word to the last.
 * (rpcgen's types are typedefs of structs of the same names.)
 */
struct fattr3;
struct post_op_attr;
struct wcc_data;
bool_t xdr_fattr3(XDR *, struct fattr3 *) __attribute__((flatten));
bool_t xdr_post_op_attr(XDR *, struct post_op_attr *) __attribute__((flatten));
bool_t xdr_wcc_data(XDR *, struct wcc_data *) __attribute__((flatten));
#endif

#endif
