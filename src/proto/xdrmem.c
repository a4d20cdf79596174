/* SPDX-License-Identifier: MIT */
/*
 * The decode-only XDR memory stream of xdrmem.h: the operations table the
 * libtirpc routines call (xdr_bytes, xdr_string, xdr_array, xdr_pointer and
 * the primitives when they are not inlined).  Same contract as libtirpc's
 * xdrmem stream in XDR_DECODE (RFC 4506): x_private is the next byte,
 * x_base the first, x_public one past the last (x_handy is not kept, see
 * xdrmem.h); nothing is ever written.
 */
#include "proto/xdrmem.h"

#include <stdint.h>
#include <string.h>

static bool_t getlong(XDR *x, long *lp)
{
    uint32_t v;

    if (!tbbt__xdrmem_word(x, &v))
        return FALSE;
    *lp = (long)v;                 /* zero-extended, as libtirpc */
    return TRUE;
}

static bool_t putlong(XDR *x, const long *lp)
{
    (void)x;
    (void)lp;
    return FALSE;
}

static bool_t getbytes(XDR *x, char *addr, u_int len)
{
    if (tbbt__xdrmem_left(x) < len)
        return FALSE;
    memcpy(addr, x->x_private, len);
    x->x_private = (char *)x->x_private + len;
    return TRUE;
}

static bool_t putbytes(XDR *x, const char *addr, u_int len)
{
    (void)x;
    (void)addr;
    (void)len;
    return FALSE;
}

static u_int getpostn(XDR *x)
{
    return tbbt__xdrmem_pos(x);
}

static bool_t setpostn(XDR *x, u_int pos)
{
    if (pos > (u_int)(tbbt__xdrmem_end(x) - x->x_base))
        return FALSE;
    x->x_private = x->x_base + pos;
    return TRUE;
}

static int32_t *inline_(XDR *x, u_int len)
{
    int32_t *p;

    /* as libtirpc: only a word-aligned position gives direct access */
    if (tbbt__xdrmem_left(x) < len || ((uintptr_t)x->x_private & (sizeof(int32_t) - 1)) != 0)
        return NULL;
    p = x->x_private;
    x->x_private = (char *)x->x_private + len;
    return p;
}

static void destroy(XDR *x)
{
    (void)x;
}

static bool_t control(XDR *x, int request, void *info)
{
    (void)x;
    (void)request;
    (void)info;
    return FALSE;
}

const struct xdr_ops tbbt_xdrmem_ops = {
    .x_getlong = getlong,
    .x_putlong = putlong,
    .x_getbytes = getbytes,
    .x_putbytes = putbytes,
    .x_getpostn = getpostn,
    .x_setpostn = setpostn,
    .x_inline = inline_,
    .x_destroy = destroy,
    .x_control = control,
};

void tbbt_xdrmem_create(XDR *x, const void *p, u_int len)
{
    x->x_op = XDR_DECODE;
    x->x_ops = &tbbt_xdrmem_ops;
    x->x_private = (char *)(uintptr_t)p;
    x->x_base = (char *)(uintptr_t)p;
    x->x_public = (char *)(uintptr_t)p + len;
    x->x_handy = 0;                /* not kept: see xdrmem.h */
}
