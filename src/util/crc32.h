/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 of the gzip/zlib polynomial (crc32.c): same values as zlib's
 * crc32_z(), faster on x86-64.  Thread-safe.
 */
#ifndef TBBT_UTIL_CRC32_H
#define TBBT_UTIL_CRC32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The CRC of buf[0..len) continued from crc (0 to start), as crc32_z(crc, buf, len). */
uint32_t tbbt_crc32(uint32_t crc, const void *buf, size_t len);

#endif
