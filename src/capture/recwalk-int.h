/* SPDX-License-Identifier: MIT */
/*
 * The record walker of capfile.c: the packets of one classic pcap or pcapng
 * file, plain (a classic pcap file from a read-only mapping) or
 * gzip-compressed (inflated into a sliding window), with the damage it met
 * counted instead of ending the file.  Private to src/capture/.
 *
 * libpcap still opens and checks each file (capfile.c); this walker reads
 * the records because libpcap stops a file at its first bad record header
 * and cannot go on after it, and its gzip path (a stdio cookie over gzread())
 * loses the bytes inflated before a corrupt spot.  Salvage rules (a bad
 * record is skipped and the walk resynchronizes on the next plausible one,
 * or the file ends with what came before) are in recwalk.c and
 * docs/tbbt-convert.md "Damaged input".
 */
#ifndef TBBT_CAPTURE_RECWALK_INT_H
#define TBBT_CAPTURE_RECWALK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

struct tbbt__rw;

/* One packet; data is borrowed until the next tbbt__rw_next() or tbbt__rw_free(). */
struct tbbt__rw_pkt {
    uint64_t ts_ns;
    uint32_t caplen, len;
    const uint8_t *data;
    int dlt;                 /* the packet's interface link type (DLT_*) */
};

/*
 * Opens path for walking (a file of unknown format walks as empty: see
 * tbbt__rw_known()).  Returns NULL with a one-line reason naming the file in
 * errbuf if it cannot be opened.  Given: free with tbbt__rw_free().
 */
struct tbbt__rw *tbbt__rw_open(const char *path, char *errbuf, size_t errlen);
/*
 * The file's first bytes (inflated), at most max, before the first
 * tbbt__rw_next(): *p is borrowed until then.  Returns how many: fewer than
 * max if the file (or its undamaged part) is shorter.
 */
size_t tbbt__rw_head(struct tbbt__rw *w, const uint8_t **p, size_t max);
/* True if the file starts like classic pcap or pcapng. */
bool tbbt__rw_known(const struct tbbt__rw *w);
/* The DLT_* link type libpcap found, given to the packets (pcapng: the first interface's). */
void tbbt__rw_set_dlt(struct tbbt__rw *w, int dlt);
void tbbt__rw_free(struct tbbt__rw *w);
/* The next packet: 1, or 0 at the end of the file (damage or not: see _damage()). */
int tbbt__rw_next(struct tbbt__rw *w, struct tbbt__rw_pkt *pk);
/* What was skipped so far (borrowed, valid until tbbt__rw_free()). */
const struct tbbt_cap_damage *tbbt__rw_damage(const struct tbbt__rw *w);
/* Bytes of the file read so far (compressed bytes of a gzip file), for progress. */
uint64_t tbbt__rw_pos(const struct tbbt__rw *w);
/* Bytes of the file (compressed size of a gzip file). */
uint64_t tbbt__rw_size(const struct tbbt__rw *w);

#endif
