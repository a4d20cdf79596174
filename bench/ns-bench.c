/* SPDX-License-Identifier: MIT */
/*
 * ns-bench: measures hierarchy extraction (src/ns, src/extract/hier.c; TBBT
 * paper 3.2) on a synthetic raw trace, and runs the pass on any raw trace.
 * Not installed, not a test: a helper for the numbers in docs/hierarchy-map.md.
 *
 *   ns-bench gen N OUT [FILES_PER_DIR [EXTRA]]   synthetic raw trace: MNT, then
 *       N objects (directories of FILES_PER_DIR files, default 1000), each file
 *       created (handle and attributes), written, looked up and stat'ed, then
 *       EXTRA (default 0) more READ + GETATTR pairs;
 *   ns-bench read RAW                    the trace reader alone, for comparison;
 *   ns-bench hier RAW FINAL MAP          pass B, then one JSON line: records,
 *       objects, seconds, records per second, peak RSS and RSS per object.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "extract/hier.h"
#include "ns/ns.h"
#include "trace/trace.h"
#include "util/util.h"

struct gen {
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_trace_writer *w;
    struct tbbt_trace_rec rec;
    uint64_t t;
    uint32_t xid;
    uint64_t records;
};

static uint32_t handle(struct gen *g, uint64_t fileid)
{
    uint8_t b[32];

    memset(b, 0xa5, sizeof(b));
    for (int i = 0; i < 8; i++)
        b[8 + i] = (uint8_t)(fileid >> (8 * i));
    return tbbt_fhtab_intern(g->fh, b, sizeof(b));
}

static void attr(struct tbbt_fattr *a, uint32_t type, uint64_t fileid, uint64_t size)
{
    memset(a, 0, sizeof(*a));
    a->type = type;
    a->mode = type == 2 ? 0755 : 0644;
    a->nlink = type == 2 ? 2 : 1;
    a->size = size;
    a->fsid = 1;
    a->fileid = fileid;
    a->mtime_ns = a->ctime_ns = a->atime_ns = 1700000000000000000ull;
}

static struct tbbt_trace_rec *op(struct gen *g, int prog, int proc)
{
    struct tbbt_trace_rec *r = &g->rec;

    tbbt_trace_rec_clear(r);
    g->t += 1000;
    r->call_ns = g->t;
    r->reply_ns = g->t + 500;
    r->prog = (uint8_t)prog;
    r->proc = (uint8_t)proc;
    r->xid = ++g->xid;
    r->flags = TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_TCP;
    return r;
}

static void put(struct gen *g)
{
    int rc = tbbt_trace_writer_put(g->w, &g->rec);

    if (rc < 0) {
        fprintf(stderr, "ns-bench: write: %s\n", tbbt_strerror(rc));
        exit(1);
    }
    g->records++;
}

static void name(struct tbbt_trace_rec *r, struct tbbt_str *s, int field, const char *n)
{
    tbbt_trace_rec_set_str(r, s, n, (uint32_t)strlen(n));
    TBBT_SET(r, field);
}

/* READ and GETATTR of a file. */
static void gen_read(struct gen *g, uint32_t fh, uint64_t fileid)
{
    struct tbbt_trace_rec *r = op(g, TBBT_PROG_NFS3, 6);

    r->fh = fh;
    r->offset = 0;
    r->count = r->res_count = 4096;
    TBBT_SET(r, TBBT_F_FH);
    TBBT_SET(r, TBBT_F_OFFSET);
    TBBT_SET(r, TBBT_F_COUNT);
    TBBT_SET(r, TBBT_F_RES_COUNT);
    attr(&r->obj_attr, 1, fileid, 4096);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(g);
    r = op(g, TBBT_PROG_NFS3, 1);
    r->fh = fh;
    TBBT_SET(r, TBBT_F_FH);
    attr(&r->obj_attr, 1, fileid, 4096);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(g);
}

/* create + write + lookup + getattr of one file, then extra reads. */
static void gen_file(struct gen *g, uint32_t dirfh, uint64_t dirid, uint64_t fileid,
                     const char *nm, uint64_t extra)
{
    struct tbbt_trace_rec *r = op(g, TBBT_PROG_NFS3, 8);
    uint32_t fh = handle(g, fileid);

    r->fh = dirfh;
    TBBT_SET(r, TBBT_F_FH);
    name(r, &r->name, TBBT_F_NAME, nm);
    r->new_fh = fh;
    TBBT_SET(r, TBBT_F_NEW_FH);
    attr(&r->obj_attr, 1, fileid, 0);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    attr(&r->dir_attr, 2, dirid, 4096);
    TBBT_SET(r, TBBT_F_DIR_ATTR);
    put(g);
    r = op(g, TBBT_PROG_NFS3, 7);
    r->fh = fh;
    r->offset = 0;
    r->count = r->res_count = 4096;
    TBBT_SET(r, TBBT_F_FH);
    TBBT_SET(r, TBBT_F_OFFSET);
    TBBT_SET(r, TBBT_F_COUNT);
    TBBT_SET(r, TBBT_F_RES_COUNT);
    r->obj_pre.size = 0;
    TBBT_SET(r, TBBT_F_OBJ_PRE);
    attr(&r->obj_attr, 1, fileid, 4096);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(g);
    r = op(g, TBBT_PROG_NFS3, 3);
    r->fh = dirfh;
    TBBT_SET(r, TBBT_F_FH);
    name(r, &r->name, TBBT_F_NAME, nm);
    r->new_fh = fh;
    TBBT_SET(r, TBBT_F_NEW_FH);
    attr(&r->obj_attr, 1, fileid, 4096);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(g);
    r = op(g, TBBT_PROG_NFS3, 1);
    r->fh = fh;
    TBBT_SET(r, TBBT_F_FH);
    attr(&r->obj_attr, 1, fileid, 4096);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(g);
    for (uint64_t i = 0; i < extra; i++)
        gen_read(g, fh, fileid);
}

static uint32_t gen_dir(struct gen *g, uint32_t rootfh, uint64_t dirid, const char *nm)
{
    struct tbbt_trace_rec *r = op(g, TBBT_PROG_NFS3, 9);
    uint32_t fh = handle(g, dirid);

    r->fh = rootfh;
    TBBT_SET(r, TBBT_F_FH);
    name(r, &r->name, TBBT_F_NAME, nm);
    r->new_fh = fh;
    TBBT_SET(r, TBBT_F_NEW_FH);
    attr(&r->obj_attr, 2, dirid, 4096);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(g);
    return fh;
}

static int gen(uint64_t n, const char *out, uint64_t per_dir, uint64_t extra)
{
    struct gen g = { .t = 1700000000000000000ull };
    struct tbbt_endpoint ep = { .client = "10.0.0.2", .client_port = 800,
                                .server = "10.0.0.1", .server_port = 2049, .tcp = true };
    struct tbbt_trace_rec *r;
    uint32_t root, dirfh = 0;
    uint64_t fileid = 100, dirid = 0;
    char nm[64];
    int err = 0;

    g.fh = tbbt_fhtab_new();
    g.ep = tbbt_eptab_new();
    tbbt_eptab_intern(g.ep, &ep);
    tbbt_trace_rec_init(&g.rec);
    if (!(g.w = tbbt_trace_writer_open(out, g.fh, g.ep, &err))) {
        fprintf(stderr, "ns-bench: %s: %s\n", out, tbbt_strerror(err));
        return 1;
    }
    root = handle(&g, 2);
    r = op(&g, TBBT_PROG_MNT3, 1);
    name(r, &r->dirpath, TBBT_F_DIRPATH, "/export");
    r->new_fh = root;
    TBBT_SET(r, TBBT_F_NEW_FH);
    put(&g);
    for (uint64_t i = 0; i < n; i++) {
        if (i % per_dir == 0) {
            dirid = fileid++;
            g_snprintf(nm, sizeof(nm), "dir%" PRIu64, i / per_dir);
            dirfh = gen_dir(&g, root, dirid, nm);
            continue;
        }
        g_snprintf(nm, sizeof(nm), "file-%" PRIu64 ".dat", i % per_dir);
        gen_file(&g, dirfh, dirid, fileid++, nm, extra);
    }
    err = tbbt_trace_writer_close(g.w);
    printf("{\"records\": %" PRIu64 ", \"objects\": %" PRIu64 ", \"handles\": %u}\n", g.records,
           n + 1, tbbt_fhtab_count(g.fh));
    tbbt_trace_rec_fini(&g.rec);
    tbbt_fhtab_free(g.fh);
    tbbt_eptab_free(g.ep);
    return err < 0;
}

static void kv_double(struct tbbt_json *j, const char *k, double v)
{
    tbbt_json_key(j, k);
    tbbt_json_double(j, v);
}

/* CPU time of this process in ns: the machine may be shared, wall time is noisy. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Pass B in its three steps, timed (CPU time). */
static int hier(const char *raw, const char *final, const char *map)
{
    struct tbbt_ns *ns = tbbt_ns_new();
    struct tbbt_ns_stats st;
    struct tbbt_json j;
    char err[512] = "", *text;
    uint64_t t0 = cpu_ns(), t1, t2, t3, rss;
    int rc = tbbt__hier_scan(ns, raw, err, sizeof(err));

    t1 = cpu_ns();
    if (rc == 0)
        rc = tbbt__hier_replay(ns, NULL, raw, final, NULL, err, sizeof(err));
    t2 = cpu_ns();
    if (rc == 0 && (rc = tbbt_ns_write_map_file(ns, map)) < 0)
        snprintf(err, sizeof(err), "%s: %s", map, tbbt_strerror(rc));
    t3 = cpu_ns();
    if (rc < 0) {
        fprintf(stderr, "ns-bench: %s\n", err);
        tbbt_ns_free(ns);
        return 1;
    }
    rss = tbbt_peak_rss();
    tbbt_ns_stats(ns, &st);
    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt_json_key(&j, "records");
    tbbt_json_uint(&j, st.records);
    kv_double(&j, "cpu_seconds", (double)(t3 - t0) / 1e9);
    kv_double(&j, "scan_cpu_seconds", (double)(t1 - t0) / 1e9);
    kv_double(&j, "replay_cpu_seconds", (double)(t2 - t1) / 1e9);
    kv_double(&j, "map_cpu_seconds", (double)(t3 - t2) / 1e9);
    kv_double(&j, "records_per_second", (double)st.records * 1e9 / (double)(t3 - t0));
    kv_double(&j, "records_per_second_without_scan",
              (double)st.records * 1e9 / (double)(t3 - t1));
    tbbt_json_key(&j, "peak_rss_bytes");
    tbbt_json_uint(&j, rss);
    kv_double(&j, "rss_bytes_per_object", st.objects ? (double)rss / (double)st.objects : 0);
    tbbt_ns_summary(ns, &j);
    tbbt_json_end_object(&j);
    text = tbbt_json_finish(&j);
    puts(text);
    g_free(text);
    tbbt_ns_free(ns);
    return 0;
}

/* Reading alone, for comparison. */
static int readonly(const char *raw)
{
    struct tbbt_trace_rec rec;
    int err = 0, rc;
    uint64_t n = 0, t0 = cpu_ns();
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(raw, &err);

    if (!r)
        return 1;
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1)
        n++;
    printf("{\"records\": %" PRIu64 ", \"read_cpu_seconds\": %.3f}\n", n,
           (double)(cpu_ns() - t0) / 1e9);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    return rc < 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return readonly(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "gen") == 0)
        return gen(strtoull(argv[2], NULL, 10), argv[3],
                   argc > 4 ? MAX(2, strtoull(argv[4], NULL, 10)) : 1000,
                   argc > 5 ? strtoull(argv[5], NULL, 10) : 0);
    if (argc == 5 && strcmp(argv[1], "hier") == 0)
        return hier(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: ns-bench gen N OUT [FILES_PER_DIR [EXTRA]] | read RAW | "
                    "hier RAW FINAL MAP\n");
    return 2;
}
