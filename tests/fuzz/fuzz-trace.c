/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the binary trace reader (src/trace/reader.c) over
 * arbitrary bytes, the text output of every record it accepts, and an
 * oracle: a trace that reads to a valid end with nothing skipped must come
 * back byte for byte from dump -> from-text (docs/trace-format.md).  An
 * input failing only its CRC is retried with the CRC fixed, so mutated
 * traces reach the trailer checks and the oracle.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/trace.h"
#include "util/util.h"

static char text_path[64], bin_path[64];

static void roundtrip(const uint8_t *data, size_t size)
{
    struct tbbt_trace_reader *r;
    gchar *back = NULL;
    gsize back_len = 0;
    uint64_t line;
    char why[256];
    int err = 0, rc;
    FILE *f = fopen(text_path, "w");

    if (!f)
        abort();
    r = tbbt_trace_reader_open_mem(data, size, &err);
    if (!r || tbbt_trace_dump_reader(r, f) != 0)
        abort();
    tbbt_trace_reader_close(r);
    fclose(f);
    rc = tbbt_trace_from_text_why(text_path, bin_path, &line, why, sizeof(why));
    if (rc != 0) {
        fprintf(stderr, "from-text failed: %s at line %llu: %s\n", tbbt_strerror(rc),
                (unsigned long long)line, why);
        abort();
    }
    if (!g_file_get_contents(bin_path, &back, &back_len, NULL))
        abort();
    if (back_len != size || memcmp(back, data, size) != 0) {
        fprintf(stderr, "round trip differs (%zu -> %zu bytes)\n", size, (size_t)back_len);
        abort();
    }
    g_free(back);
}

/* Reads the whole input; returns the final status and runs the oracle when it applies. */
static int run(const uint8_t *data, size_t size)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    GString *s;
    uint32_t ref;
    int err = 0, rc, major, minor;
    bool canonical;

    r = tbbt_trace_reader_open_mem(data, size, &err);
    if (!r)
        return err;
    s = g_string_new(NULL);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next_any(r, &rec, &ref)) > 0) {
        if (rc == TBBT_REC_OP) {
            g_string_truncate(s, 0);
            tbbt_trace_format_rec(s, &rec);
        }
    }
    tbbt_trace_reader_version(r, &major, &minor);
    canonical = rc == 0 && tbbt_trace_reader_skipped(r) == 0 && minor == TBBT_TRACE_MINOR;
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    g_string_free(s, TRUE);
    if (canonical)
        roundtrip(data, size);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy;
    uint32_t crc;

    if (!text_path[0]) {
        snprintf(text_path, sizeof(text_path), "/tmp/fuzz-trace-%d.txt", (int)getpid());
        snprintf(bin_path, sizeof(bin_path), "/tmp/fuzz-trace-%d.tbbt", (int)getpid());
    }
    if (run(data, size) != TBBT_E_CHECKSUM || size < 25)
        return 0;
    /* Mutations rarely keep the CRC right: fix it so the rest of the trailer path and the
     * round-trip oracle see mutated traces too. */
    copy = g_memdup2(data, size);
    crc = (uint32_t)crc32(0, copy, (uInt)(size - 25));
    for (int i = 0; i < 4; i++)
        copy[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    run(copy, size);
    g_free(copy);
    return 0;
}
