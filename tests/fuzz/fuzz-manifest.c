/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: tbbt-play's manifest reader (tbbt_manifest_load(),
 * src/player/resolve.c) over arbitrary bytes.  Oracle: a manifest that loads is
 * complete, and every clone directory and object path it holds is "." or names
 * that could be names (no "", ".", "..", '/' or NUL, docs/hierarchy-map.md).
 *
 * A version 2 manifest ends with its checksum line (util/textsum.h): when the
 * first input byte is odd the rest is written with a correct checksum line
 * appended, so that the line parser behind the checksum is fuzzed too; when
 * even, as it is.  Seeds: tests/fuzz/corpus/manifest/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "ns/ns.h"
#include "player/resolve.h"
#include "util/crc32.h"
#include "util/textsum.h"
#include "util/util.h"

static char path[64];

static void check_rel(const char *p)
{
    size_t len = strlen(p);

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
    struct tbbt_manifest *m = NULL;
    char err[512];
    GString *b;

    if (!path[0]) {
        snprintf(path, sizeof(path), "/tmp/fuzz-manifest-%d", (int)getpid());
        tbbt_log_init("fuzz-manifest", TBBT_LOG_ERROR);  /* not the version 1 warning */
    }
    if (size == 0)
        return 0;
    b = g_string_new_len((const char *)data + 1, (gssize)size - 1);
    if (data[0] & 1) {
        char line[TBBT_TEXTSUM_LINE];

        tbbt_textsum_line(line, tbbt_crc32(0, b->str, b->len));
        g_string_append(b, line);
    }
    if (!g_file_set_contents(path, b->str, (gssize)b->len, NULL))
        abort();
    g_string_free(b, TRUE);
    if (tbbt_manifest_load(path, &m, err, sizeof(err)) < 0)
        return 0;
    if (!m->complete || !m->clones || !m->objs)
        abort();
    for (guint i = 0; i < m->clones->len; i++)
        check_rel(g_ptr_array_index(m->clones, i));
    for (guint i = 0; i < m->objs->len; i++)
        check_rel(g_array_index(m->objs, struct tbbt_manifest_obj, i).path);
    tbbt_manifest_free(m);
    return 0;
}
