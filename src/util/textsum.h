/* SPDX-License-Identifier: MIT */
/*
 * Checksummed text files: the hierarchy map (docs/hierarchy-map.md) and tbbt-init's
 * manifest (docs/tbbt-init.md) end with one line
 *
 *     # crc32 1a2b3c4d
 *
 * eight lowercase hex digits and a newline: the CRC-32 (crc32.h, the trace file's) of
 * every byte of the file before that line, header included.  A writer appends it last;
 * a reader checks it before it believes any other line, so that a file cut short or
 * changed by one byte is refused instead of building a wrong image.  Like the trace's
 * END record (docs/trace-format.md), it detects accidents, not forgeries.  Thread-safe.
 */
#ifndef TBBT_UTIL_TEXTSUM_H
#define TBBT_UTIL_TEXTSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TBBT_TEXTSUM_PREFIX "# crc32 "
#define TBBT_TEXTSUM_LINE 18        /* bytes of the line, newline and NUL included */

/* Formats the trailer line of crc, newline included, into out. */
void tbbt_textsum_line(char out[TBBT_TEXTSUM_LINE], uint32_t crc);

/*
 * Parses line[0..len) (without its newline) as a trailer line; true and *crc if it is
 * exactly "# crc32 " and eight lowercase hex digits.
 */
bool tbbt_textsum_parse(const char *line, size_t len, uint32_t *crc);

/*
 * Reads f from its current position to its end; crc0 is the CRC of the bytes before
 * that position (0 at the start of the file).  The last line must be the trailer and
 * hold the CRC of every byte before it.  Returns 0 and *crc (the file's checksum: the
 * trailer's value), or TBBT_E_TRUNC (no trailer: the file was cut short, or its last
 * line lacks the newline), TBBT_E_CHECKSUM (the bytes do not match), -errno; *lines
 * (may be NULL) gets the number of lines read, for messages.  f is left at its end.
 */
int tbbt_textsum_verify(FILE *f, uint32_t crc0, uint32_t *crc, uint64_t *lines);

#endif
