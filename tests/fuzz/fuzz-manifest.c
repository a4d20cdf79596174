/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: tbbt-play's manifest reader (tbbt_manifest_load(),
 * src/ns/manifest-read.c) over arbitrary bytes.  Oracle: a manifest that loads is
 * complete, and every clone directory and object path it holds is "." or names
 * that could be names (no "", ".", "..", '/' or NUL, docs/hierarchy-map.md).
 *
 * The first input byte chooses whether the rest gets a correct checksum line
 * (fuzz-text.h), so that the line parser behind the checksum is fuzzed too.  Seeds: tests/fuzz/corpus/manifest/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "fuzz-text.h"
#include "player/resolve.h"
#include "util/util.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tbbt_manifest *m = NULL;
    char err[512];

    if (!path[0]) {
        snprintf(path, sizeof(path), "/tmp/fuzz-manifest-%d", (int)getpid());
        tbbt_log_init("fuzz-manifest", TBBT_LOG_ERROR);  /* not the version 1 warning */
    }
    if (size == 0)
        return 0;
    fuzz_text_write(path, data, size);
    if (tbbt_manifest_load(path, &m, err, sizeof(err)) < 0)
        return 0;
    if (!m->complete || !m->clones || !m->objs)
        abort();
    for (guint i = 0; i < m->clones->len; i++) {
        const char *c = g_ptr_array_index(m->clones, i);

        fuzz_check_path(c, strlen(c));
    }
    for (guint i = 0; i < m->objs->len; i++) {
        const struct tbbt_manifest_obj *o = &g_array_index(m->objs, struct tbbt_manifest_obj, i);

        fuzz_check_path(o->path, o->len);
    }
    tbbt_manifest_free(m);
    return 0;
}
