/* SPDX-License-Identifier: MIT */
/*
 * Hashing of short keys (flow keys, file handles) for the in-memory tables:
 * xxHash's XXH3 (libxxhash, https://github.com/Cyan4973/xxHash), compiled
 * inline (XXH_INLINE_ALL) so that a key of a fixed size becomes a few
 * independent multiplications instead of a call.  XXH3 hashes 17 to 128
 * bytes with 128-bit products that run side by side; the chained
 * multiply-xorshift rounds it replaced made every look-up wait some forty
 * cycles for its slot.  Values only place keys in tables: they never reach
 * a file, so nothing on disk depends on them.
 */
#ifndef TBBT_UTIL_HASH_H
#define TBBT_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The 64-bit hash of len bytes at p under seed. */
static inline uint64_t tbbt_hash(const void *p, size_t len, uint64_t seed)
{
    return XXH3_64bits_withSeed(p, len, seed);
}

#endif
