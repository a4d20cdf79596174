/* SPDX-License-Identifier: MIT */
/*
 * cookies: READDIR(PLUS) continuations in a replay.  A traced page that continues a
 * listing carries the traced server's cookie; the replay sends instead the cookie and
 * verifier the live server gave where the page before it ended, kept per (clone,
 * directory ID, traced cookie of that page's last entry) until the continuation takes
 * it.  An unknown continuation starts over at cookie 0.  Both engines use it
 * (engine-cookie.c under its mutex, engine4-v3.c).  Not thread-safe.
 */
#ifndef TBBT_PLAYER_COOKIES_H
#define TBBT_PLAYER_COOKIES_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

struct tbbt_play_cookies;

/* Given: tbbt_play_cookies_free() (NULL is a no-op). */
struct tbbt_play_cookies *tbbt_play_cookies_new(void);
void tbbt_play_cookies_free(struct tbbt_play_cookies *c);

/* The live page of traced READDIR(PLUS) record rec (clone) ended at the server's cookie
 * and verifier: kept for the page that continues from rec's last traced entry.  No-op
 * when rec has no entries or no directory ID. */
void tbbt_play_cookies_put(struct tbbt_play_cookies *c, uint32_t clone,
                           const struct tbbt_trace_rec *rec, uint64_t cookie, uint64_t verf);
/* The server's cookie and verifier for continuation rec (its traced cookie, its
 * directory ID; clone), taken: true and *cookie, *verf, or false (0, 0). */
bool tbbt_play_cookies_take(struct tbbt_play_cookies *c, uint32_t clone,
                            const struct tbbt_trace_rec *rec, uint64_t *cookie, uint64_t *verf);

#endif
