/* SPDX-License-Identifier: MIT */
/*
 * Benchmark of the trace module's binary writer and reader (src/trace,
 * docs/trace-format.md): writes N typical records, reads them back, and
 * prints records/s, MB/s and bytes per record for each.
 *
 *   trace-io [N [PATH [MIX]]]    N records (default 5000000) to PATH
 *                                (default /tmp/trace-io.tbbt, removed after);
 *                                MIX "read" (default): NFSv3 READ of 8 KiB
 *                                with obj_attr; "mixed": 50% read, 30%
 *                                getattr, 20% lookup with a name.
 *
 * Not a test: it checks only that the count read equals the count written.
 * The file is read back from the page cache, so this measures the format
 * code (encoding, decoding, CRC32), not the disk.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace.h"
#include "util/util.h"

#define NHANDLES 1000

static void make_read(struct tbbt_trace_rec *rec, uint64_t i, uint32_t fh)
{
    rec->prog = TBBT_PROG_NFS3;
    rec->proc = 6;
    TBBT_SET(rec, TBBT_F_FH);
    rec->fh = fh;
    TBBT_SET(rec, TBBT_F_OFFSET);
    rec->offset = (i % 4096) * 8192;
    TBBT_SET(rec, TBBT_F_COUNT);
    rec->count = 8192;
    TBBT_SET(rec, TBBT_F_RES_COUNT);
    rec->res_count = 8192;
    TBBT_SET(rec, TBBT_F_EOF);
    rec->eof = 0;
}

static void make_attr(struct tbbt_trace_rec *rec, uint64_t i, uint32_t fh)
{
    struct tbbt_fattr *a = &rec->obj_attr;

    TBBT_SET(rec, TBBT_F_OBJ_ATTR);
    a->type = 1;
    a->mode = 0644;
    a->nlink = 1;
    a->uid = 1000;
    a->gid = 1000;
    a->size = 33554432;
    a->used = 33554432;
    a->fsid = 0x2a;
    a->fileid = 1000 + fh;
    a->atime_ns = rec->call_ns - 1000000000ull * (i % 100);
    a->mtime_ns = a->atime_ns - 3600000000000ull;
    a->ctime_ns = a->mtime_ns;
}

static void make_rec(struct tbbt_trace_rec *rec, uint64_t i, bool mixed)
{
    static const char *const names[] = {"Makefile", "main.c", "README", "a-much-longer-name.txt"};
    uint32_t fh = (uint32_t)((i * 7919) % NHANDLES);
    unsigned kind = mixed ? (unsigned)(i % 10) : 0;

    tbbt_trace_rec_clear(rec);
    rec->call_ns = 1700000000000000000ull + i * 20000;
    rec->reply_ns = rec->call_ns + 150000 + (i % 50) * 1000;
    rec->flags = TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_TCP;
    rec->xid = (uint32_t)(0x10000000 + i);
    rec->endpoint = (uint32_t)(i % 4);
    rec->uid = rec->gid = 1000;
    if (kind < 5) {
        make_read(rec, i, fh);
    } else if (kind < 8) {
        rec->prog = TBBT_PROG_NFS3;
        rec->proc = 1;
        TBBT_SET(rec, TBBT_F_FH);
        rec->fh = fh;
    } else {
        const char *n = names[i % 4];
        rec->prog = TBBT_PROG_NFS3;
        rec->proc = 3;
        TBBT_SET(rec, TBBT_F_FH);
        rec->fh = fh;
        TBBT_SET(rec, TBBT_F_NAME);
        tbbt_trace_rec_set_str(rec, &rec->name, n, (uint32_t)strlen(n));
        TBBT_SET(rec, TBBT_F_NEW_FH);
        rec->new_fh = (fh + 1) % NHANDLES;
    }
    make_attr(rec, i, fh);
}

static double secs(uint64_t t0)
{
    return (double)(tbbt_now_ns() - t0) / 1e9;
}

/* NHANDLES 32-byte handles and 4 endpoints, as a converter would have interned them. */
static void fill_tables(struct tbbt_fhtab *fh, struct tbbt_eptab *ep)
{
    uint8_t h[32] = {0};

    for (uint32_t i = 0; i < NHANDLES; i++) {
        memcpy(h + 8, &i, sizeof(i));
        tbbt_fhtab_intern(fh, h, sizeof(h));
    }
    for (uint16_t i = 0; i < 4; i++) {
        struct tbbt_endpoint e = {"10.0.0.2", (uint16_t)(700 + i), "10.0.0.1", 2049, true};
        tbbt_eptab_intern(ep, &e);
    }
}

/* Times building and writing n records (as tbbt-convert does), including the close. */
static int bench_write(const char *path, uint64_t n, bool mixed, uint64_t *bytes)
{
    struct tbbt_fhtab *fh = tbbt_fhtab_new();
    struct tbbt_eptab *ep = tbbt_eptab_new();
    struct tbbt_trace_rec rec;
    struct tbbt_trace_writer *w;
    int err = 0;
    uint64_t t0;
    struct stat st;
    double s;

    fill_tables(fh, ep);
    if (!(w = tbbt_trace_writer_open(path, fh, ep, &err))) {
        fprintf(stderr, "trace-io: cannot open '%s': %s\n", path, tbbt_strerror(err));
        return 1;
    }
    tbbt_trace_rec_init(&rec);
    t0 = tbbt_now_ns();
    for (uint64_t i = 0; i < n && err == 0; i++) {
        make_rec(&rec, i, mixed);
        err = tbbt_trace_writer_put(w, &rec);
    }
    if (err == 0)
        err = tbbt_trace_writer_close(w);
    else
        tbbt_trace_writer_abort(w);
    s = secs(t0);
    tbbt_trace_rec_fini(&rec);
    tbbt_fhtab_free(fh);
    tbbt_eptab_free(ep);
    if (err) {
        fprintf(stderr, "trace-io: write failed: %s\n", tbbt_strerror(err));
        return 1;
    }
    if (stat(path, &st) != 0)
        return 1;
    *bytes = (uint64_t)st.st_size;
    printf("write: %" PRIu64 " records in %.2f s: %.0f records/s, %.0f MB/s, %.1f bytes/record\n",
           n, s, (double)n / s, (double)*bytes / s / 1e6, (double)*bytes / (double)n);
    return 0;
}

/* Times reading the file back (from the page cache: it was just written). */
static int bench_read(const char *path, uint64_t n, uint64_t bytes)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    uint64_t got = 0, sum = 0, t0;
    int err = 0, rc;
    double s;

    if (!(r = tbbt_trace_reader_open(path, &err))) {
        fprintf(stderr, "trace-io: cannot read '%s': %s\n", path, tbbt_strerror(err));
        return 1;
    }
    tbbt_trace_rec_init(&rec);
    t0 = tbbt_now_ns();
    while ((rc = tbbt_trace_reader_next(r, &rec)) > 0) {
        got++;
        sum += rec.obj_attr.fileid + rec.name.len;
    }
    s = secs(t0);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    if (rc < 0 || got != n) {
        fprintf(stderr, "trace-io: read %" PRIu64 " of %" PRIu64 ": %s\n", got, n,
                tbbt_strerror(rc));
        return 1;
    }
    printf("read:  %" PRIu64 " records in %.2f s: %.0f records/s, %.0f MB/s (checksum %" PRIu64
           ")\n",
           got, s, (double)got / s, (double)bytes / s / 1e6, sum);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    const char *path = argc > 2 ? argv[2] : "/tmp/trace-io.tbbt";
    bool mixed = argc > 3 && strcmp(argv[3], "mixed") == 0;
    uint64_t bytes = 0;
    int rc;

    printf("trace-io: %s mix, peak RSS is reported at the end\n", mixed ? "mixed" : "read");
    rc = bench_write(path, n, mixed, &bytes);
    if (rc == 0)
        rc = bench_read(path, n, bytes);
    unlink(path);
    printf("peak RSS: %.1f MB\n", (double)tbbt_peak_rss() / 1e6);
    return rc;
}
