/* SPDX-License-Identifier: MIT */
/*
 * Bounds-checked read cursor over untrusted bytes (packets, trace files).
 * Reading past the end never touches memory: it sets `trunc` and yields 0,
 * so a parser can read a whole header and check the flag once.  All
 * multi-byte reads are big-endian (network/XDR order) unless named _le.
 * Inline and allocation-free: the hot path of tbbt-convert runs through it.
 */
#ifndef TBBT_UTIL_BUF_H
#define TBBT_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

struct tbbt_buf {
    const uint8_t *p;   /* borrowed: valid while the caller's bytes are */
    size_t len;         /* bytes remaining from p */
    bool trunc;         /* a read went past the end */
};

static inline void tbbt_buf_init(struct tbbt_buf *b, const void *p, size_t len)
{
    b->p = p;
    b->len = len;
    b->trunc = false;
}

static inline size_t tbbt_buf_left(const struct tbbt_buf *b)
{
    return b->len;
}

/* Reads-only helpers on raw bytes whose length the caller already checked. */
static inline uint16_t tbbt_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t tbbt_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint16_t tbbt_le16(const uint8_t *p)
{
    return (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t tbbt_le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Returns true and advances if n bytes remain; otherwise marks truncation. */
static inline bool tbbt_buf_skip(struct tbbt_buf *b, size_t n)
{
    if (n > b->len) {
        b->p += b->len;
        b->len = 0;
        b->trunc = true;
        return false;
    }
    b->p += n;
    b->len -= n;
    return true;
}

/* Returns a pointer to n bytes and advances, or NULL (and truncation) if short. */
static inline const uint8_t *tbbt_buf_get(struct tbbt_buf *b, size_t n)
{
    const uint8_t *p = b->p;
    return tbbt_buf_skip(b, n) ? p : NULL;
}

static inline uint8_t tbbt_buf_get_u8(struct tbbt_buf *b)
{
    const uint8_t *p = tbbt_buf_get(b, 1);
    return p ? p[0] : 0;
}

static inline uint16_t tbbt_buf_get_be16(struct tbbt_buf *b)
{
    const uint8_t *p = tbbt_buf_get(b, 2);
    return p ? tbbt_be16(p) : 0;
}

static inline uint32_t tbbt_buf_get_be32(struct tbbt_buf *b)
{
    const uint8_t *p = tbbt_buf_get(b, 4);
    return p ? tbbt_be32(p) : 0;
}

static inline uint64_t tbbt_buf_get_be64(struct tbbt_buf *b)
{
    uint64_t hi = tbbt_buf_get_be32(b);
    return hi << 32 | tbbt_buf_get_be32(b);
}

static inline uint16_t tbbt_buf_get_le16(struct tbbt_buf *b)
{
    const uint8_t *p = tbbt_buf_get(b, 2);
    return p ? tbbt_le16(p) : 0;
}

static inline uint32_t tbbt_buf_get_le32(struct tbbt_buf *b)
{
    const uint8_t *p = tbbt_buf_get(b, 4);
    return p ? tbbt_le32(p) : 0;
}


#endif
