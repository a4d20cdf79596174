/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the hierarchy map reader (src/ns/map-read.c) over
 * arbitrary bytes.  Oracle: every path it returns is "." or components that
 * could be names (docs/hierarchy-map.md: no "", ".", "..", '/' or NUL).
 *
 * A map of version 3 must end with its checksum line (util/textsum.h), which
 * random bytes almost never match: so the first input byte chooses, when odd,
 * that the rest is written with a correct checksum line appended, so that the
 * field and cross-line checks behind the checksum are fuzzed too; when even,
 * the rest is written as it is.  Seeds: tests/fuzz/corpus/ns-map/ (the golden
 * maps, each once in both forms).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "ns/ns.h"
#include "util/crc32.h"
#include "util/textsum.h"

static char path[64];

static void check_path(const char *p, size_t len)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0;

    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/fuzz-ns-map-%d.map", (int)getpid());
    if (size == 0)
        return 0;
    if (data[0] & 1) {
        char line[TBBT_TEXTSUM_LINE];
        GString *b = g_string_new_len((const char *)data + 1, (gssize)size - 1);

        tbbt_textsum_line(line, tbbt_crc32(0, b->str, b->len));
        g_string_append(b, line);
        if (!g_file_set_contents(path, b->str, (gssize)b->len, NULL))
            abort();
        g_string_free(b, TRUE);
    } else if (!g_file_set_contents(path, (const char *)data + 1, (gssize)size - 1, NULL)) {
        abort();
    }
    if (!(r = tbbt_ns_map_reader_open(path, &err)))
        return 0;
    while (tbbt_ns_map_reader_next(r, &e) == 1) {
        check_path(e.path, e.path_len);
        check_path(e.final_path, e.final_len);
        if (e.target && memchr(e.target, '\0', e.target_len))
            abort();
    }
    tbbt_ns_map_reader_close(r);
    {   /* and the rules across lines */
        struct tbbt_ns_map_info info;
        char msg[256];

        (void)tbbt_ns_map_check(path, &info, msg, sizeof(msg));
    }
    return 0;
}
