/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the text-form parser (src/trace/text-in.c).  Any input
 * must parse or fail cleanly; a text that parses must give the same binary
 * trace again after binary -> text -> binary (docs/trace-format.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"
#include "util/util.h"

static char in_path[64], bin1[64], txt2[64], bin2[64];

static void set_paths(void)
{
    int pid = (int)getpid();

    snprintf(in_path, sizeof(in_path), "/tmp/fuzz-text-%d.in", pid);
    snprintf(bin1, sizeof(bin1), "/tmp/fuzz-text-%d.1.tbbt", pid);
    snprintf(txt2, sizeof(txt2), "/tmp/fuzz-text-%d.2.txt", pid);
    snprintf(bin2, sizeof(bin2), "/tmp/fuzz-text-%d.2.tbbt", pid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gchar *a = NULL, *b = NULL;
    gsize alen = 0, blen = 0;
    uint64_t line;
    char why[256];
    FILE *f;
    int rc;

    if (!in_path[0])
        set_paths();
    if (!g_file_set_contents(in_path, (const gchar *)data, (gssize)size, NULL))
        abort();
    if (tbbt_trace_from_text_why(in_path, bin1, &line, why, sizeof(why)) != 0)
        return 0;
    if (!(f = fopen(txt2, "w")) || tbbt_trace_dump(bin1, f) != 0)
        abort();
    fclose(f);
    rc = tbbt_trace_from_text_why(txt2, bin2, &line, why, sizeof(why));
    if (rc != 0) {
        fprintf(stderr, "dump does not parse: %s at line %llu: %s\n", tbbt_strerror(rc),
                (unsigned long long)line, why);
        abort();
    }
    if (!g_file_get_contents(bin1, &a, &alen, NULL) || !g_file_get_contents(bin2, &b, &blen, NULL))
        abort();
    if (alen != blen || memcmp(a, b, alen) != 0)
        abort();
    g_free(a);
    g_free(b);
    return 0;
}
