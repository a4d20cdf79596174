/* SPDX-License-Identifier: MIT */
/*
 * Big-endian appends to a growing byte array (glib's GByteArray): the writing side of
 * buf.h's cursor, for the bytes tbbt makes itself to read back with it (the MPI ranks'
 * completion notices, end messages and report blobs).  Inline; the array grows as needed.
 */
#ifndef TBBT_UTIL_BYTES_H
#define TBBT_UTIL_BYTES_H

#include <stdint.h>

#include <glib.h>

static inline void tbbt_bytes_put_u8(GByteArray *o, uint8_t v)
{
    g_byte_array_append(o, &v, 1);
}

static inline void tbbt_bytes_put_be16(GByteArray *o, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(o, b, sizeof(b));
}

static inline void tbbt_bytes_put_be32(GByteArray *o, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    g_byte_array_append(o, b, sizeof(b));
}

static inline void tbbt_bytes_put_be64(GByteArray *o, uint64_t v)
{
    tbbt_bytes_put_be32(o, (uint32_t)(v >> 32));
    tbbt_bytes_put_be32(o, (uint32_t)v);
}

/* Overwrites the 4 bytes at offset at (< o->len - 3) with v: a count known only later. */
static inline void tbbt_bytes_set_be32(GByteArray *o, guint at, uint32_t v)
{
    g_assert(at + 4 <= o->len);
    o->data[at] = (uint8_t)(v >> 24);
    o->data[at + 1] = (uint8_t)(v >> 16);
    o->data[at + 2] = (uint8_t)(v >> 8);
    o->data[at + 3] = (uint8_t)v;
}

#endif
