/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 of the gzip/zlib polynomial (ISO 3309, RFC 1952 8), the checksum
 * that ends a trace file: the same value as zlib's crc32_z(), computed with
 * carry-less multiplication (PCLMULQDQ) on x86-64 processors that have it,
 * folding 64 bytes per step, and with zlib for the rest (short tails, other
 * processors).  zlib's table-driven code ran at ~2.3 GB/s and was ~5% of
 * tbbt-convert's writer thread.
 *
 * Reference: Gopal et al., "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ Instruction" (Intel, 2009); the fold constants are those
 * of the bit-reflected polynomial 0x1DB710641 (x^n mod P for the fold
 * distances, and the Barrett constant), as in Linux's crc32-pclmul.
 */
#include "util/crc32.h"

#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define FOLD_TARGET __attribute__((target("pclmul,sse4.1")))

/* 128-bit fold: a's two halves times k's, xored into b. */
FOLD_TARGET static inline __m128i fold(__m128i a, __m128i k, __m128i b)
{
    __m128i lo = _mm_clmulepi64_si128(a, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(a, k, 0x11);

    return _mm_xor_si128(_mm_xor_si128(lo, hi), b);
}

/*
 * The CRC register (not inverted) after n bytes at p, n >= 64 and a multiple
 * of 16, from register value crc.
 */
FOLD_TARGET static uint32_t crc_fold(uint32_t crc, const uint8_t *p, size_t n)
{
    const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
    const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
    const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641);
    const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x0, x1, x2, x3, t;

    x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)p),
                       _mm_cvtsi32_si128((int)crc));
    x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
        x0 = fold(x0, k1k2, _mm_loadu_si128((const __m128i *)(const void *)p));
        x1 = fold(x1, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 16)));
        x2 = fold(x2, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 32)));
        x3 = fold(x3, k1k2, _mm_loadu_si128((const __m128i *)(const void *)(p + 48)));
    }
    x0 = fold(x0, k3k4, x1);
    x0 = fold(x0, k3k4, x2);
    x0 = fold(x0, k3k4, x3);
    for (; n >= 16; p += 16, n -= 16)
        x0 = fold(x0, k3k4, _mm_loadu_si128((const __m128i *)(const void *)p));
    /* 128 bits to 64, then to 32, then Barrett reduction to the 32-bit remainder. */
    t = _mm_clmulepi64_si128(x0, k3k4, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), poly, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return (uint32_t)_mm_extract_epi32(x0, 1);
}

/* __builtin_cpu_supports() reads what the compiler's runtime found at startup. */
static bool have_clmul(void)
{
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

uint32_t tbbt_crc32(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    size_t n = len & ~(size_t)15;

    if (n < 64 || !have_clmul())
        return (uint32_t)crc32_z(crc, p, len);
    crc = ~crc_fold(~crc, p, n);
    return (uint32_t)crc32_z(crc, p + n, len - n);
}

#else

uint32_t tbbt_crc32(uint32_t crc, const void *buf, size_t len)
{
    return (uint32_t)crc32_z(crc, buf, len);
}

#endif
