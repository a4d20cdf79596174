/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the hierarchy map reader (src/ns/map-read.c) over
 * arbitrary bytes.  Oracle: every path it returns is "." or components that
 * could be names (docs/hierarchy-map.md: no "", ".", "..", '/' or NUL).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "ns/ns.h"

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
    if (!g_file_set_contents(path, (const char *)data, (gssize)size, NULL))
        abort();
    if (!(r = tbbt_ns_map_reader_open(path, &err)))
        return 0;
    while (tbbt_ns_map_reader_next(r, &e) == 1) {
        check_path(e.path, e.path_len);
        check_path(e.final_path, e.final_len);
        if (e.target && memchr(e.target, '\0', e.target_len))
            abort();
    }
    tbbt_ns_map_reader_close(r);
    return 0;
}
