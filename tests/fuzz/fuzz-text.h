/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets of the checksummed text files (the hierarchy map, the
 * manifest: util/textsum.h) share: the input written to a file, with a correct
 * checksum line appended when its first byte is odd (random bytes almost never
 * match a checksum, so without it the parsers behind the check are never
 * reached), and the oracle for the paths the readers return.
 */
#ifndef TBBT_FUZZ_TEXT_H
#define TBBT_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "ns/ns.h"
#include "util/crc32.h"
#include "util/textsum.h"

/* Writes data[1..size) to path (size >= 1), with its checksum line if data[0] is odd. */
static inline void fuzz_text_write(const char *path, const uint8_t *data, size_t size)
{
    GString *b = g_string_new_len((const char *)data + 1, (gssize)size - 1);

    if (data[0] & 1) {
        char line[TBBT_TEXTSUM_LINE];

        tbbt_textsum_line(line, tbbt_crc32(0, b->str, b->len));
        g_string_append(b, line);
    }
    if (!g_file_set_contents(path, b->str, (gssize)b->len, NULL))
        abort();
    g_string_free(b, TRUE);
}

/* Aborts unless p[0..len) is NUL-free and "." or '/'-joined valid names. */
static inline void fuzz_check_path(const char *p, size_t len)
{
    if (strlen(p) != len)
        abort();
    if (len == 1 && p[0] == '.')
        return;
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i < len && p[i] != '/')
            continue;
        if (!tbbt_ns_name_ok(p + start, i - start))
            abort();
        start = i + 1;
    }
}

#endif
