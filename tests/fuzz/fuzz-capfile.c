/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the capture files' record walker (src/capture/recwalk.c
 * through tbbt_cap_open()/tbbt_cap_run(): classic pcap, pcapng, gzip, and the
 * salvage of damaged records, docs/tbbt-convert.md "Damaged input").
 *
 * Byte 0 of an input picks what is written to a file in a private temporary
 * directory: 0, the rest as it is (a whole capture file, e.g. the seeds); 1, a
 * classic little-endian Ethernet pcap file header then the rest (records);
 * 2, a pcapng section header and Ethernet interface block then the rest
 * (blocks); 3, the gzip compression of case 1's file cut at the last 1/8 of
 * the rest (a cut compressed stream).  The file is read with every packet's
 * bytes touched (ASan checks their bounds).  A file libpcap refuses is fine;
 * one it accepts must read to the end with 0, TBBT_E_TRUNC or TBBT_E_DAMAGED,
 * and its damage counters must agree with the result.
 *
 * Seeds: tests/fuzz/corpus/capfile/ (damaged copies of committed captures, as
 * tests/integration/025-salvage.sh makes them, with a leading 0 byte), e.g.
 *   fuzz-capfile -max_len=65536 corpus/ tests/fuzz/corpus/capfile/
 */
#include "capture/capture.h"
#include "util/util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static char *dir, *path;
static volatile uint8_t sink;

static const uint8_t pcap_hdr[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0,
                                     0,    0,    0,    0,    0, 0, 4, 0, 1, 0, 0, 0};
static const uint8_t ng_hdr[48] = {
    0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0,       /* SHB */
    1,    0,    0,    0,    20, 0, 0, 0, 1,    0,    0,    0,    0, 0, 4, 0,
    20,   0,    0,    0,                                               /* IDB */
};

static void cleanup(void)
{
    g_unlink(path);
    g_rmdir(dir);
}

static void on_msg(const struct tbbt_cap_msg *m, void *arg)
{
    uint8_t x = 0;

    (void)arg;
    for (uint32_t i = 0; i < m->len; i++)
        x ^= m->data[i];
    sink = x;
}

static void write_file(const uint8_t *data, size_t size)
{
    uint8_t kind = size ? data[0] % 4 : 0;
    FILE *f;

    data += size ? 1 : 0;
    size -= size ? 1 : 0;
    if (kind == 3) {
        gzFile gz = gzopen(path, "wb");
        size_t keep = size - size / 8;
        gzwrite(gz, pcap_hdr, sizeof pcap_hdr);
        if (keep)
            gzwrite(gz, data, (unsigned)keep);
        gzclose(gz);
        return;
    }
    f = fopen(path, "wb");
    if (!f)
        abort();
    if (kind == 1)
        fwrite(pcap_hdr, 1, sizeof pcap_hdr, f);
    else if (kind == 2)
        fwrite(ng_hdr, 1, sizeof ng_hdr, f);
    if (size)
        fwrite(data, 1, size, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *paths[1];
    const struct tbbt_cap_stats *st;
    struct tbbt_cap *c;
    char err[512];
    int rc;

    if (!dir) {
        dir = g_dir_make_tmp("fuzz-capfile-XXXXXX", NULL);
        if (!dir)
            abort();
        path = g_build_filename(dir, "in.cap", NULL);
        atexit(cleanup);
    }
    write_file(data, size);
    paths[0] = path;
    c = tbbt_cap_open(paths, 1, NULL, err, sizeof err);
    if (!c)
        return 0;
    rc = tbbt_cap_run(c, on_msg, NULL, NULL, err, sizeof err);
    st = tbbt_cap_stats(c);
    if (rc != 0 && rc != TBBT_E_TRUNC && rc != TBBT_E_DAMAGED)
        abort();
    /* a clean result has no damage, a damaged one some */
    if ((rc == 0) != (st->skipped_records == 0 && !tbbt_cap_damage(c, 0)->ends_early))
        abort();
    if (st->resyncs > st->skipped_records)
        abort();
    tbbt_cap_close(c);
    return 0;
}
