/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for tbbt-convert's nfsdump text-trace reader
 * (src/extract/source-nfsdump.c, docs/nfsdump-format.md).
 *
 * Each input runs the content probe on its first 4096 bytes, then is written
 * after one fixed, valid nfsdump line (so the probe always picks this reader)
 * to a file in a private temporary directory and converted with
 * tbbt_convert_run() into a trace and a summary in the same directory.  Text
 * input never fails a run: bad lines are skipped and counted (TBBT_E_DAMAGED),
 * a last line cut short is kept (TBBT_E_TRUNC); any other result aborts; the trace is then read
 * back whole, so every record the reader produced must be one the trace
 * writer and reader accept.
 *
 * Seeds: tests/fuzz/corpus/nfsdump/ (where tools/test.sh starts; a trace
 * whose time steps back and jumps forward) and the .txt fixtures in
 * tests/golden/nfsdump, e.g.
 *   fuzz-nfsdump -max_len=4096 corpus/ tests/fuzz/corpus/nfsdump/ tests/golden/nfsdump/
 * The reader's warnings (clock steps) are not printed.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "extract/conv-int.h"
#include "extract/extract.h"
#include "trace/trace.h"
#include "util/util.h"

static const char first_line[] =
    "1100000000.000100 30.03ef 32.0801 U C3 00000001 01 getattr fh 0001 con = 82 len = 118\n";

static char *dir, *in_path, *out_path, *sum_path;

static void cleanup(void)
{
    g_unlink(in_path);
    g_unlink(out_path);
    g_unlink(sum_path);
    g_rmdir(dir);
}

static void init_paths(void)
{
    dir = g_dir_make_tmp("fuzz-nfsdump-XXXXXX", NULL);
    if (!dir)
        abort();
    in_path = g_build_filename(dir, "in.txt", NULL);
    out_path = g_build_filename(dir, "out.tbbt", NULL);
    sum_path = g_build_filename(dir, "summary.json", NULL);
    atexit(cleanup);
    tbbt_log_init("fuzz-nfsdump", TBBT_LOG_ERROR);
}

/* Reads the trace back: it must be a valid trace (the conversion succeeded). */
static void read_back(void)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    int err = 0, rc;

    r = tbbt_trace_reader_open(out_path, &err);
    if (!r)
        abort();
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1)
        ;
    if (rc != 0)
        abort();
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *inputs[1];
    struct tbbt_convert_opts o;
    char err[512];
    FILE *f;
    int rc;

    if (!dir)
        init_paths();
    (void)tbbt__source_nfsdump.probe(data, size < 4096 ? size : 4096);
    f = fopen(in_path, "wb");
    if (!f)
        abort();
    fputs(first_line, f);
    if (size > 0 && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    inputs[0] = in_path;
    tbbt_convert_opts_init(&o);
    o.inputs = inputs;
    o.n_inputs = 1;
    o.output = out_path;
    o.summary_json = sum_path;
    o.max_pending = 64;
    rc = tbbt_convert_run(&o, err, sizeof(err));
    if (rc != 0 && rc != TBBT_E_TRUNC && rc != TBBT_E_DAMAGED)
        abort();                    /* text input never fails the run otherwise */
    read_back();
    return 0;
}
