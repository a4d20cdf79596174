/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the hierarchy map reader (src/ns/map-read.c) over
 * arbitrary bytes.  Oracle: every path it returns is "." or components that
 * could be names (docs/hierarchy-map.md: no "", ".", "..", '/' or NUL).
 *
 * The first input byte chooses whether the rest gets a correct checksum line
 * (fuzz-text.h), so that the field and cross-line checks behind the checksum
 * are fuzzed too; the "# v4-export" header lines go through
 * tbbt_map_v4_exports().  Seeds: tests/fuzz/corpus/ns-map/ (the golden maps,
 * each once in both forms).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "fuzz-text.h"
#include "ns/ns.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0;

    if (!path[0])
        snprintf(path, sizeof(path), "/tmp/fuzz-ns-map-%d.map", (int)getpid());
    if (size == 0)
        return 0;
    fuzz_text_write(path, data, size);
    if (!(r = tbbt_ns_map_reader_open(path, &err)))
        return 0;
    while (tbbt_ns_map_reader_next(r, &e) == 1) {
        fuzz_check_path(e.path, e.path_len);
        fuzz_check_path(e.final_path, e.final_len);
        if (e.target && memchr(e.target, '\0', e.target_len))
            abort();
    }
    tbbt_ns_map_reader_close(r);
    {   /* and the rules across lines */
        struct tbbt_ns_map_info info;
        char msg[256];

        (void)tbbt_ns_map_check(path, &info, msg, sizeof(msg));
    }
    {   /* and the v4-export header lines: an absolute pseudo path, a map path or "" */
        GPtrArray *v4 = NULL;
        char msg[256];

        if (tbbt_map_v4_exports(path, &v4, msg, sizeof(msg)) == 0) {
            for (guint i = 0; i < v4->len; i++) {
                const struct tbbt_map_v4export *x = g_ptr_array_index(v4, i);
                if (x->pseudo[0] != '/')
                    abort();
                if (x->pseudo[1])
                    fuzz_check_path(x->pseudo + 1, strlen(x->pseudo + 1));
                if (x->path[0])
                    fuzz_check_path(x->path, strlen(x->path));
            }
            tbbt_map_v4_exports_free(v4);
        } else if (v4) {
            abort();
        }
    }
    return 0;
}
