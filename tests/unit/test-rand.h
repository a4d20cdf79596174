/* SPDX-License-Identifier: MIT */
/*
 * The unit tests' deterministic random numbers: xorshift64* (Vigna), one state per test
 * file, seeded by the file.  Not for anything but test data.
 */
#ifndef TBBT_TESTS_TEST_RAND_H
#define TBBT_TESTS_TEST_RAND_H

#include <stdint.h>

static inline uint64_t test_rand_next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(2685821657736338717);
}

#endif
