/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tbbt-convert's nfsdump text-trace reader
 * (src/extract/source-nfsdump.c, docs/nfsdump-format.md).
 *
 * The fixtures in tests/golden/nfsdump/ are converted with
 * tbbt_convert_run() into a temporary trace, which is read back: its text
 * dump must equal the reviewed <fixture>.dump file (run with
 * TBBT_ND_REGEN=1, see regen.sh, to rewrite them), and selected records are
 * checked field by field.  test_consistency builds the operations of
 * consistency.txt as XDR messages (rpcgen types of nfs3.x), decodes them
 * with the capture decoder (decode.h) and requires the same record fields.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "extract/conv-int.h"
#include "extract/decode.h"
#include "extract/extract.h"
#include "proto/nfs3.h"
#include "trace/trace.h"
#include "util/util.h"

#ifndef TBBT_ND_DIR
#error "TBBT_ND_DIR must name tests/golden/nfsdump"
#endif

struct fx {
    char *dir;              /* temporary directory */
    char *trace, *summary;  /* paths inside it */
    char err[1024];
};

static int setup(void **state)
{
    struct fx *f = g_new0(struct fx, 1);
    GError *e = NULL;

    f->dir = g_dir_make_tmp("test-nfsdump-XXXXXX", &e);
    assert_non_null(f->dir);
    f->trace = g_build_filename(f->dir, "out.tbbt", NULL);
    f->summary = g_build_filename(f->dir, "summary.json", NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    GDir *d = g_dir_open(f->dir, 0, NULL);
    const char *name;

    while (d && (name = g_dir_read_name(d)) != NULL) {
        char *p = g_build_filename(f->dir, name, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(f->dir);
    g_free(f->dir);
    g_free(f->trace);
    g_free(f->summary);
    g_free(f);
    return 0;
}

/* ---- helpers ------------------------------------------------------------------ */

static char *fixture(const char *name)
{
    return g_build_filename(TBBT_ND_DIR, name, NULL);
}

static char *tmpfile_with(struct fx *f, const char *name, const void *data, size_t len)
{
    char *p = g_build_filename(f->dir, name, NULL);
    assert_true(g_file_set_contents(p, data, (gssize)len, NULL));
    return p;
}

/*
 * Converts inputs into f->trace (and the summary) with a reply timeout of
 * reply_timeout_ns (0: the default); returns tbbt_convert_run's result.
 */
static int convert_timeout(struct fx *f, const char *const *inputs, int n,
                           uint64_t reply_timeout_ns)
{
    struct tbbt_convert_opts o;

    tbbt_convert_opts_init(&o);
    if (reply_timeout_ns)
        o.reply_timeout_ns = reply_timeout_ns;
    o.inputs = inputs;
    o.n_inputs = n;
    o.output = f->trace;
    o.summary_json = f->summary;
    o.correct = false;          /* the reader's records, in their places (fixtures are not
                                 * consistent traces: they show every status) */
    f->err[0] = '\0';
    return tbbt_convert_run(&o, f->err, sizeof(f->err));
}

static int convert(struct fx *f, const char *const *inputs, int n)
{
    return convert_timeout(f, inputs, n, 0);
}

static int convert_fixture(struct fx *f, const char *name)
{
    char *p = fixture(name);
    const char *in[1] = {p};
    int rc = convert(f, in, 1);

    g_free(p);
    return rc;
}

static char *slurp(const char *path)
{
    char *text = NULL;

    assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static char *dump_text(const char *trace)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);

    assert_int_equal(tbbt_trace_dump(trace, m), 0);
    fclose(m);
    return buf;
}

/* The dump of f->trace equals <name>.dump (or becomes it, with TBBT_ND_REGEN set). */
static void check_golden(struct fx *f, const char *name)
{
    char *want_path = g_strdup_printf("%s/%s.dump", TBBT_ND_DIR, name);
    char *got = dump_text(f->trace);

    if (g_getenv("TBBT_ND_REGEN")) {
        assert_true(g_file_set_contents(want_path, got, -1, NULL));
    } else {
        char *want = slurp(want_path);
        assert_string_equal(got, want);
        g_free(want);
    }
    free(got);
    g_free(want_path);
}

/* The dump of f->trace is want. */
static void check_text(struct fx *f, const char *want)
{
    char *got = dump_text(f->trace);

    assert_string_equal(got, want);
    free(got);
}

/* The summary holds `needle` (compact JSON, e.g. "\"malformed_lines\":3"). */
static void summary_has(struct fx *f, const char *needle)
{
    char *s = slurp(f->summary);

    if (!strstr(s, needle))
        fail_msg("summary lacks %s: %s", needle, s);
    g_free(s);
}

/* The op records of a trace, with the reader kept open for its handle table. */
struct recs {
    struct tbbt_trace_reader *r;
    struct tbbt_trace_rec *v;
    size_t n;
};

static void read_recs(const char *trace, struct recs *rs)
{
    struct tbbt_trace_rec rec;
    int err = 0, rc;

    memset(rs, 0, sizeof(*rs));
    rs->r = tbbt_trace_reader_open(trace, &err);
    assert_non_null(rs->r);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(rs->r, &rec)) == 1) {
        rs->v = g_renew(struct tbbt_trace_rec, rs->v, rs->n + 1);
        tbbt_trace_rec_init(&rs->v[rs->n]);
        tbbt_trace_rec_copy(&rs->v[rs->n++], &rec);
    }
    assert_int_equal(rc, 0);
    tbbt_trace_rec_fini(&rec);
}

static void free_recs(struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        tbbt_trace_rec_fini(&rs->v[i]);
    g_free(rs->v);
    tbbt_trace_reader_close(rs->r);
}

/* The record of xid (fails if absent). */
static const struct tbbt_trace_rec *by_xid(const struct recs *rs, uint32_t xid)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].xid == xid)
            return &rs->v[i];
    fail_msg("no record with xid 0x%x", xid);
    return NULL;
}

static void chk_fh(const struct recs *rs, uint32_t ref, const char *hex)
{
    uint32_t len;
    const uint8_t *b = tbbt_fhtab_get(tbbt_trace_reader_fhtab(rs->r), ref, &len);
    char *got;

    assert_non_null(b);
    got = g_malloc(2 * len + 1);
    for (uint32_t i = 0; i < len; i++)
        sprintf(got + 2 * i, "%02x", b[i]);
    got[2 * len] = '\0';
    assert_string_equal(got, hex);
    g_free(got);
}

static void chk_str(const struct tbbt_str *s, const void *bytes, uint32_t len)
{
    assert_int_equal(s->len, len);
    assert_memory_equal(s->p, bytes, len);
}

#define B(f) ((uint64_t)1 << (f))
/* present without the TBBT-ID fields that pass B adds (this file tests the reader) */
#define NO_IDS(p) ((p) & ~(B(TBBT_F_ID) | B(TBBT_F_ID2) | B(TBBT_F_ID_OBJ) | B(TBBT_F_ID_OLD)))
#define FH_ROOT "01000001000000000000000000000001"
#define FH_A "0100000100000000000000000000000a"
#define FH_D "0100000100000000000000000000000d"

/* ---- probe -------------------------------------------------------------------- */

static bool probe(const char *text)
{
    return tbbt__source_nfsdump.probe((const uint8_t *)text, strlen(text));
}

static void test_probe(void **state)
{
    char head[256];

    (void)state;
    assert_true(probe("1100000000.000120 5.0300 7.0801 T C3 0a1b2c3d 6 read fh 01 off 0\n"));
    assert_true(probe("\n# comment\nXX rh_len == 0\n1.0 30.03ef 32.0801 U R3 1 1 getattr OK\n"));
    assert_true(probe("1000000000.000100 40.0300\t42.0801  U C2 200       1 getattr  fh 00\n"));
    assert_true(probe("1.5 10.0.0.1.03ef 10.0.0.2.0801 T C3 1 0 null\n"));
    /* Cut by the end of the probe's 256 bytes, but matching so far. */
    assert_true(probe("1100000000.000120 5.03"));
    /* Comments longer than the probe's bytes. */
    memset(head, '#', sizeof(head));
    head[100] = '\n';
    head[sizeof(head) - 1] = '\0';
    assert_true(probe(head));
    assert_false(probe("hello world\n"));
    assert_false(probe("# tbbt-trace 1.0\nep 0 tcp 10.0.0.2:812 10.0.0.1:2049\n"));
    assert_false(probe("1100000000.000120 5.0300 7.0801 X C3 0a1b2c3d 6 read\n"));
    assert_false(probe("1100000000.000120 5.0300 7.0801 T C4 0a1b2c3d 6 read\n"));
    assert_false(probe("\xd4\xc3\xb2\xa1\x02\x00\x04\x00"));
    assert_false(probe("\x0a\x0d\x0d\x0a\x1c\x00\x00\x00\x4d\x3c"));
}

/* ---- golden dumps -------------------------------------------------------------- */

static void test_v3_all(void **state)
{
    struct fx *f = *state;

    assert_int_equal(convert_fixture(f, "v3-all.txt"), 0);
    check_golden(f, "v3-all");
    summary_has(f, "\"input_format\":\"nfsdump\"");
    summary_has(f, "\"packets\":106,\"bytes\":19663,\"truncated_packets\":0,"
                   "\"malformed_packets\":0");
    summary_has(f, "\"lines\":110,\"comment_lines\":4,\"malformed_lines\":0");
    summary_has(f, "\"pairs\":53");
    summary_has(f, "\"unknown_keys\":{}");
}

static void test_v2_all(void **state)
{
    struct fx *f = *state;

    assert_int_equal(convert_fixture(f, "v2-all.txt"), 0);
    check_golden(f, "v2-all");
    summary_has(f, "\"pairs\":34");
    summary_has(f, "\"malformed_lines\":0");
}

static void test_odd(void **state)
{
    struct fx *f = *state;

    assert_int_equal(convert_fixture(f, "odd.txt"), TBBT_E_DAMAGED);
    check_golden(f, "odd");
    summary_has(f, "\"packets\":45");
    summary_has(f, "\"malformed_packets\":15,\"skipped_lines\":15,\"damaged_files\":[{");
    summary_has(f, "\"lines\":51,\"comment_lines\":6,\"malformed_lines\":15,\"other_lines\":1,"
                   "\"short_lines\":1,\"cut_lines\":0,\"extra_attributes\":0,"
                   "\"reply_mismatches\":1");
    summary_has(f, "\"unknown_keys\":{\"(quoted)\":1,\"bogus\":2,\"verf2\":1,\"xtra-N\":1}");
    summary_has(f, "\"unknown_procedures\":1");
    summary_has(f, "\"duplicate_calls\":1");
    summary_has(f, "\"unmatched_replies\":1");
    summary_has(f, "\"records\":13");
}

/* ---- field by field ------------------------------------------------------------ */

static void chk_dir_attr(const struct tbbt_fattr *a, uint32_t nlink, uint64_t ns)
{
    assert_int_equal(a->type, 2);
    assert_int_equal(a->mode, 0755);
    assert_int_equal(a->nlink, nlink);
    assert_int_equal(a->uid, 1000);
    assert_int_equal(a->gid, 100);
    assert_int_equal(a->size, 4096);
    assert_int_equal(a->used, 4096);
    assert_int_equal(a->rdev, 0);
    assert_int_equal(a->fsid, 0x1234abcd);
    assert_int_equal(a->fileid, 1);
    assert_int_equal(a->atime_ns, ns);
    assert_int_equal(a->mtime_ns, ns);
    assert_int_equal(a->ctime_ns, ns);
}

static void test_v3_fields(void **state)
{
    struct fx *f = *state;
    const struct tbbt_trace_rec *r;
    const struct tbbt_endpoint *ep;
    struct recs rs;

    assert_int_equal(convert_fixture(f, "v3-all.txt"), 0);
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 53);
    ep = tbbt_eptab_get(tbbt_trace_reader_eptab(rs.r), rs.v[0].endpoint);
    assert_string_equal(ep->client, "0.0.0.48");
    assert_int_equal(ep->client_port, 0x3ef);
    assert_string_equal(ep->server, "0.0.0.50");
    assert_int_equal(ep->server_port, 2049);
    assert_false(ep->tcp);

    r = by_xid(&rs, 0x101);         /* getattr OK */
    assert_int_equal(r->call_ns, 1100000000000300000ull);
    assert_int_equal(r->reply_ns, 1100000000000400000ull);
    assert_int_equal(r->prog, TBBT_PROG_NFS3);
    assert_int_equal(r->proc, NFSPROC3_GETATTR);
    assert_int_equal(r->flags, TBBT_RF_REPLY | TBBT_RF_STATUS);
    assert_int_equal(r->rpc_stat, TBBT_RPC_SUCCESS);
    assert_int_equal(r->status, 0);
    assert_int_equal(NO_IDS(r->present), B(TBBT_F_FH) | B(TBBT_F_OBJ_ATTR));
    chk_fh(&rs, r->fh, FH_ROOT);
    chk_dir_attr(&r->obj_attr, 4, 1099990000000000000ull);

    r = by_xid(&rs, 0x103);         /* setattr: sattr, SERVER time, guard, wcc */
    assert_int_equal(r->sattr.mask, TBBT_SA_MODE | TBBT_SA_SIZE | TBBT_SA_ATIME |
                                        TBBT_SA_MTIME_SERVER);
    assert_int_equal(r->sattr.mode, 0600);
    assert_int_equal(r->sattr.size, 0x2000);
    assert_int_equal(r->sattr.atime_ns, 1100000000000000000ull);
    assert_int_equal(r->guard_ns, 1100000000000900000ull);
    assert_true(TBBT_HAS(r, TBBT_F_OBJ_PRE) && TBBT_HAS(r, TBBT_F_OBJ_ATTR));
    assert_int_equal(r->obj_pre.size, 0x9000);
    assert_int_equal(r->obj_attr.size, 0x2000);

    r = by_xid(&rs, 0x107);         /* lookup OK with both attribute sets */
    assert_int_equal(NO_IDS(r->present), B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_NEW_FH) |
                                     B(TBBT_F_OBJ_ATTR) | B(TBBT_F_DIR_ATTR));
    chk_str(&r->name, "b", 1);
    chk_fh(&rs, r->new_fh, "0100000100000000000000000000000b");
    assert_int_equal(r->obj_attr.fileid, 0xb);
    chk_dir_attr(&r->dir_attr, 4, 1099990000000000000ull);
    r = by_xid(&rs, 0x108);         /* lookup NOENT: the one set is the directory's */
    assert_int_equal(r->status, NFS3ERR_NOENT);
    assert_int_equal(NO_IDS(r->present), B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_DIR_ATTR));

    r = by_xid(&rs, 0x10d);         /* read */
    assert_int_equal(r->offset, 0x4000);
    assert_int_equal(r->count, 0x2000);
    assert_int_equal(r->res_count, 0x2000);
    assert_int_equal(r->eof, 0);
    assert_int_equal(r->obj_attr.used, 0xa000);
    assert_int_equal(r->obj_attr.atime_ns, 1100000000000900000ull);

    r = by_xid(&rs, 0x10f);         /* write: stable letters */
    assert_int_equal(r->stable, UNSTABLE);
    assert_int_equal(r->committed, FILE_SYNC);
    assert_int_equal(r->res_count, 0x1000);

    r = by_xid(&rs, 0x113);         /* create EXCLUSIVE: no sattr; dir wcc */
    assert_int_equal(r->createmode, EXCLUSIVE);
    assert_false(TBBT_HAS(r, TBBT_F_SATTR));
    assert_true(TBBT_HAS(r, TBBT_F_DIR_PRE) && TBBT_HAS(r, TBBT_F_DIR_ATTR));
    assert_int_equal(r->dir_attr.nlink, 5);

    r = by_xid(&rs, 0x11b);         /* mknod CHR; reply "fh" without a handle */
    assert_int_equal(r->ftype, NF3CHR);
    assert_int_equal(r->rdev, (4ull << 32) | 1);
    assert_int_equal(r->sattr.mask, TBBT_SA_MODE);
    assert_false(TBBT_HAS(r, TBBT_F_NEW_FH));

    r = by_xid(&rs, 0x122);         /* rename with both directories' wcc */
    assert_int_equal(r->present & (B(TBBT_F_DIR_ATTR) | B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR2_ATTR) |
                                   B(TBBT_F_DIR2_PRE)),
                     B(TBBT_F_DIR_ATTR) | B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR2_ATTR) |
                         B(TBBT_F_DIR2_PRE));
    assert_int_equal(r->dir2_attr.fileid, 0xd);
    chk_str(&r->name2, "y", 1);

    r = by_xid(&rs, 0x123);         /* link: "name" after fh2 is the new link's */
    chk_fh(&rs, r->fh, FH_A);
    chk_fh(&rs, r->fh2, FH_D);
    chk_str(&r->name2, "hard", 4);
    assert_false(TBBT_HAS(r, TBBT_F_NAME));

    r = by_xid(&rs, 0x128);         /* readdirplus: entries with attributes and a handle */
    assert_int_equal(r->dircount, 0x400);
    assert_int_equal(r->maxcount, 0x1000);
    assert_int_equal(r->n_entries, 2);
    assert_int_equal(r->res_count, 2);
    assert_int_equal(r->eof, 1);
    chk_str(&r->entries[0].name, ".", 1);
    assert_int_equal(r->entries[0].flags & ~(uint32_t)TBBT_ENT_ID, TBBT_ENT_ATTR);
    assert_int_equal(r->entries[0].attr.fileid, 0xd);
    assert_int_equal(r->entries[1].fileid, 0xa);
    assert_int_equal(r->entries[1].cookie, 2);
    assert_int_equal(r->entries[1].flags & ~(uint32_t)TBBT_ENT_ID, TBBT_ENT_ATTR | TBBT_ENT_FH);
    chk_fh(&rs, r->entries[1].fh, FH_A);
    assert_int_equal(r->entries[1].attr.used, 0xa000);

    r = by_xid(&rs, 0x12c);         /* fsstat values */
    assert_int_equal(r->n_info, 7);
    assert_int_equal(r->info[0], 0x100000);
    assert_int_equal(r->info[5], 0x800);

    r = by_xid(&rs, 0x133);         /* MOUNT v3 mnt */
    assert_int_equal(r->prog, TBBT_PROG_MNT3);
    assert_int_equal(r->proc, 1);
    chk_str(&r->dirpath, "/export", 7);
    chk_fh(&rs, r->new_fh, FH_ROOT);
    r = by_xid(&rs, 0x134);
    assert_int_equal(r->status, 13);
    free_recs(&rs);
}

static void test_v2_fields(void **state)
{
    struct fx *f = *state;
    const struct tbbt_trace_rec *r;
    struct recs rs;

    assert_int_equal(convert_fixture(f, "v2-all.txt"), 0);
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 34);

    r = by_xid(&rs, 0x201);         /* fattr: used = blocks * blksize, usec times */
    assert_int_equal(r->prog, TBBT_PROG_NFS2);
    assert_int_equal(r->obj_attr.used, 2 * 4096);
    assert_int_equal(r->obj_attr.mode, 040755);
    assert_int_equal(r->obj_attr.fsid, 0x801);

    r = by_xid(&rs, 0x203);         /* sattr: usec 1000000 = server time; "%-6ld" usec */
    assert_int_equal(r->sattr.mask, TBBT_SA_MODE | TBBT_SA_SIZE | TBBT_SA_ATIME_SERVER |
                                        TBBT_SA_MTIME);
    assert_int_equal(r->sattr.mtime_ns, 1000000000000005000ull);
    assert_int_equal(r->obj_attr.ctime_ns, 1000000000000005000ull);

    r = by_xid(&rs, 0x20a);         /* read: tcount ignored, reply count */
    assert_int_equal(NO_IDS(r->present), B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT) |
                                     B(TBBT_F_OBJ_ATTR) | B(TBBT_F_RES_COUNT));
    assert_int_equal(r->res_count, 0x2000);

    r = by_xid(&rs, 0x20c);         /* writecache under nfsdump's short name */
    assert_int_equal(r->proc, 7);

    r = by_xid(&rs, 0x20d);         /* write: offset, tcount = count, begoff ignored */
    assert_int_equal(r->offset, 0x2000);
    assert_int_equal(r->count, 0x1000);

    r = by_xid(&rs, 0x215);         /* link: fn after fh2 is the new name */
    chk_str(&r->name2, "hard", 4);
    r = by_xid(&rs, 0x217);         /* symlink: fn2 is the target */
    chk_str(&r->target, "../t", 4);
    chk_str(&r->name, "l", 1);
    r = by_xid(&rs, 0x213);         /* rename: fn2 is the new name */
    chk_str(&r->name2, "b", 1);

    r = by_xid(&rs, 0x21f);         /* readdir entries without -N */
    assert_int_equal(r->n_entries, 3);
    chk_str(&r->entries[2].name, "b", 1);
    assert_int_equal(r->entries[2].fileid, 0xa);
    assert_int_equal(r->entries[2].cookie, 3);

    r = by_xid(&rs, 0x220);         /* statfs */
    assert_int_equal(r->n_info, 5);
    assert_int_equal(r->info[0], 0x2000);
    assert_int_equal(r->info[4], 0x7000);
    free_recs(&rs);
}

static void test_hostile_names(void **state)
{
    static const char weird[] = "we ird\"q\\/..\n\xff end";
    static const char quoted[] = "\"quoted\" \\ tab\there";
    struct fx *f = *state;
    const struct tbbt_trace_rec *r;
    const struct tbbt_endpoint *ep;
    struct recs rs;

    assert_int_equal(convert_fixture(f, "odd.txt"), TBBT_E_DAMAGED);
    read_recs(f->trace, &rs);
    r = by_xid(&rs, 0x300);
    chk_str(&r->name, weird, sizeof(weird) - 1);
    assert_int_equal(r->createmode, GUARDED);
    r = by_xid(&rs, 0x301);
    chk_str(&r->name, "..", 2);
    r = by_xid(&rs, 0x302);
    chk_str(&r->name, "a/b", 3);
    chk_str(&r->name2, quoted, sizeof(quoted) - 1);
    r = by_xid(&rs, 0x303);
    chk_str(&r->name, "plain", 5);
    r = by_xid(&rs, 0x304);
    chk_str(&r->name, "", 0);
    chk_str(&r->target, "/etc/../../x", 12);

    r = by_xid(&rs, 0x305);         /* euid/egid; unknown keys skipped */
    assert_int_equal(r->uid, 1000);
    assert_int_equal(r->gid, 100);
    assert_true(TBBT_HAS(r, TBBT_F_OBJ_ATTR));
    r = by_xid(&rs, 0x306);         /* "0x" prefix */
    assert_int_equal(r->offset, 0x100);

    r = by_xid(&rs, 0x307);         /* tabs, blanks, CRLF, dotted quads over TCP */
    ep = tbbt_eptab_get(tbbt_trace_reader_eptab(rs.r), r->endpoint);
    assert_string_equal(ep->client, "10.1.2.3");
    assert_int_equal(ep->client_port, 0x3f0);
    assert_string_equal(ep->server, "10.1.2.4");
    assert_true(ep->tcp);
    assert_true(r->flags & TBBT_RF_TCP);
    assert_int_equal(r->status, NFS3ERR_STALE);

    r = by_xid(&rs, 0x308);         /* SHORT PACKET: what came before is kept */
    assert_true(r->flags & TBBT_RF_CALL_TRUNC);
    assert_int_equal(r->present & (B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT)),
                     B(TBBT_F_FH) | B(TBBT_F_OFFSET));
    r = by_xid(&rs, 0x30c);         /* reply of another procedure */
    assert_true(r->flags & TBBT_RF_REPLY_BAD);
    assert_false(r->flags & TBBT_RF_STATUS);
    free_recs(&rs);
}

/* ---- inputs ------------------------------------------------------------------- */

static void test_cut_last_line(void **state)
{
    struct fx *f = *state;
    const struct tbbt_trace_rec *r;
    struct recs rs;

    assert_int_equal(convert_fixture(f, "cut.txt"), TBBT_E_TRUNC);
    assert_non_null(strstr(f->err, "ends in the middle of a line"));
    check_golden(f, "cut");
    summary_has(f, "\"cut_lines\":1");
    summary_has(f, "\"truncated_calls\":1");
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 2);
    r = by_xid(&rs, 0x401);         /* "off 2000 cou": count dropped, offset kept */
    assert_int_equal(r->flags, TBBT_RF_CALL_TRUNC);
    assert_int_equal(NO_IDS(r->present), B(TBBT_F_FH) | B(TBBT_F_OFFSET));
    assert_int_equal(r->offset, 0x2000);
    free_recs(&rs);
}

static void test_last_line_whole(void **state)
{
    static const char text[] =
        "1.000001 1.0300 2.0801 U C3 1 1 getattr fh 00ff con = 1 len = 2\n"
        "1.000002 2.0801 1.0300 U R3 1 1 getattr 2 status=0 pl = 4 con = 1 len = 2";
    struct fx *f = *state;
    char *p = tmpfile_with(f, "whole.txt", text, sizeof(text) - 1);
    const char *in[1] = {p};
    struct recs rs;

    assert_int_equal(convert(f, in, 1), 0);     /* ends with the trailer: not cut */
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.v[0].flags, TBBT_RF_REPLY | TBBT_RF_STATUS);
    assert_int_equal(rs.v[0].status, 2);
    free_recs(&rs);
    g_free(p);
}

static void test_gzip(void **state)
{
    struct fx *f = *state;
    char *gz = fixture("v3-all.txt.gz"), *data, *cut;
    const char *in[1] = {gz};
    gsize len;

    assert_int_equal(convert(f, in, 1), 0);
    check_golden(f, "v3-all");
    /* The same file cut short: what was read is kept, the run says so. */
    assert_true(g_file_get_contents(gz, &data, &len, NULL));
    cut = tmpfile_with(f, "cut.gz", data, len / 2);
    in[0] = cut;
    assert_int_equal(convert(f, in, 1), TBBT_E_TRUNC);
    assert_non_null(strstr(f->err, "compressed data ends early"));
    g_free(data);
    g_free(cut);
    g_free(gz);
}

static void test_several_files(void **state)
{
    struct fx *f = *state;
    char *a = fixture("split-1.txt"), *b = fixture("split-2.txt");
    static const char text_form[] = "# tbbt-trace 1.0\nep 0 tcp 10.0.0.2:812 10.0.0.1:2049\n";
    char *other = tmpfile_with(f, "other.txt", text_form, sizeof(text_form) - 1);
    char *missing = g_build_filename(f->dir, "missing.txt", NULL);
    const char *in[2] = {a, b};
    struct recs rs;

    assert_int_equal(convert(f, in, 2), 0);     /* calls in one file, replies in the next */
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.v[0].flags, TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_TCP);
    assert_int_equal(rs.v[1].status, NFS3ERR_NOENT);
    free_recs(&rs);
    summary_has(f, "\"files\":2");
    in[1] = other;
    assert_int_equal(convert(f, in, 2), TBBT_E_MAGIC);
    assert_non_null(strstr(f->err, "is not an nfsdump text trace"));
    in[1] = missing;
    assert_int_equal(convert(f, in, 2), -ENOENT);
    assert_non_null(strstr(f->err, "cannot open"));
    g_free(a);
    g_free(b);
    g_free(other);
    g_free(missing);
}

/* ---- clock steps ------------------------------------------------------------- */

#define SEC 1000000000ull
#define NS(s, us) ((uint64_t)(s) * SEC + (uint64_t)(us) * 1000u)

/* Call and reply times never go back in file order, and a reply never comes before its call. */
static void chk_monotone(const struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++) {
        const struct tbbt_trace_rec *r = &rs->v[i];
        if (i > 0)
            assert_true(r->call_ns >= rs->v[i - 1].call_ns);
        if (r->flags & TBBT_RF_REPLY)
            assert_true(r->reply_ns >= r->call_ns);
    }
}

/*
 * Two files appended, the second starting an hour before the first ended: a
 * call at the end of the first is answered at the start of the second; the
 * second's calls are answered in it; a call of the first that the second
 * answers after more than the reply timeout of its lines is not paired.
 */
static void test_clock_concatenated(void **state)
{
    static const char one[] =
        "1100003600.000100 30.03ef 32.0801 U C3 900 1 getattr fh 00ff\n"
        "1100003600.000200 32.0801 30.03ef U R3 900 1 getattr 2\n"
        "1100003600.000300 30.03ef 32.0801 U C3 901 1 getattr fh 00ff\n"
        "1100003600.000400 30.03ef 32.0801 U C3 902 1 getattr fh 00ff\n";
    static const char two[] =
        "1100000000.000100 32.0801 30.03ef U R3 901 1 getattr 2\n"
        "1100000000.000200 30.03ef 32.0801 U C3 903 1 getattr fh 00ff\n"
        "1100000000.000300 32.0801 30.03ef U R3 903 1 getattr 2\n"
        "1100000020.000000 30.03ef 32.0801 U C3 904 1 getattr fh 00ff\n"
        "1100000020.000100 32.0801 30.03ef U R3 904 1 getattr 2\n"
        "1100000040.000000 30.03ef 32.0801 U C3 905 1 getattr fh 00ff\n"
        "1100000040.000100 32.0801 30.03ef U R3 905 1 getattr 2\n"
        "1100000040.000200 32.0801 30.03ef U R3 902 1 getattr 2\n";
    struct fx *f = *state;
    char *a = tmpfile_with(f, "one.txt", one, sizeof(one) - 1);
    char *b = tmpfile_with(f, "two.txt", two, sizeof(two) - 1);
    GString *both = g_string_new(one);
    char *ab, *dump;
    const char *in[2] = {a, b};
    const uint64_t step = NS(3600, 300);    /* 1100003600.000400 back to 1100000000.000100 */
    struct recs rs;

    assert_int_equal(convert(f, in, 2), 0);
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 6);
    assert_true(by_xid(&rs, 0x901)->flags & TBBT_RF_REPLY);
    for (uint32_t x = 0x903; x <= 0x905; x++)
        assert_true(by_xid(&rs, x)->flags & TBBT_RF_REPLY);
    /* 902 waited 40 s of the second file's lines: its late reply is not its pair */
    assert_false(by_xid(&rs, 0x902)->flags & TBBT_RF_REPLY);
    assert_int_equal(by_xid(&rs, 0x901)->reply_ns, NS(1100003600, 400));
    /* the second file's intervals are kept, its times shifted by the step */
    assert_int_equal(by_xid(&rs, 0x903)->call_ns, NS(1100000000, 200) + step);
    assert_int_equal(by_xid(&rs, 0x905)->reply_ns, NS(1100000040, 100) + step);
    assert_int_equal(by_xid(&rs, 0x904)->call_ns - by_xid(&rs, 0x903)->call_ns,
                     NS(20, 0) - NS(0, 200));
    chk_monotone(&rs);
    free_recs(&rs);
    summary_has(f, "\"pairs\":5,\"unmatched_calls\":1");
    summary_has(f, "\"clock_steps_back\":1,\"clock_step_back_max_ns\":3600000300000,"
                   "\"clock_shift_ns\":3600000300000,\"clock_shifted_lines\":8,"
                   "\"clock_jumps_forward\":0");
    /* The same lines in one file give the same trace. */
    dump = dump_text(f->trace);
    g_string_append(both, two);
    ab = tmpfile_with(f, "both.txt", both->str, both->len);
    in[0] = ab;
    assert_int_equal(convert(f, in, 1), 0);
    check_text(f, dump);
    free(dump);
    g_string_free(both, TRUE);
    g_free(a);
    g_free(b);
    g_free(ab);
}

/*
 * The tracing host's clock set back by 250 ms inside a file, with a reply
 * timeout of 100 ms: the calls after the step still pair, and keep their
 * intervals.
 */
static void test_clock_small_step(void **state)
{
    static const char text[] =
        "1100000000.500000 30.03ef 32.0801 U C3 910 1 getattr fh 00ff\n"
        "1100000000.501000 32.0801 30.03ef U R3 910 1 getattr 2\n"
        "1100000000.502000 30.03ef 32.0801 U C3 911 1 getattr fh 00ff\n"
        "1100000000.252000 32.0801 30.03ef U R3 911 1 getattr 2\n"
        "1100000000.253000 30.03ef 32.0801 U C3 912 1 getattr fh 00ff\n"
        "1100000000.254000 32.0801 30.03ef U R3 912 1 getattr 2\n";
    struct fx *f = *state;
    char *p = tmpfile_with(f, "step.txt", text, sizeof(text) - 1);
    const char *in[1] = {p};
    const struct tbbt_trace_rec *r;
    struct recs rs;

    assert_int_equal(convert_timeout(f, in, 1, 100000000u), 0);
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 3);
    assert_true(by_xid(&rs, 0x911)->flags & TBBT_RF_REPLY);
    r = by_xid(&rs, 0x912);
    assert_true(r->flags & TBBT_RF_REPLY);
    assert_int_equal(r->call_ns, NS(1100000000, 503000));
    assert_int_equal(r->reply_ns, NS(1100000000, 504000));
    r = by_xid(&rs, 0x911);
    assert_int_equal(r->reply_ns, r->call_ns);       /* the step counts as no time */
    chk_monotone(&rs);
    free_recs(&rs);
    summary_has(f, "\"pairs\":3,\"unmatched_calls\":0");
    summary_has(f, "\"clock_steps_back\":1,\"clock_step_back_max_ns\":250000000,"
                   "\"clock_shift_ns\":250000000,\"clock_shifted_lines\":3");
    g_free(p);
}

/*
 * An hour without lines (or a clock set forward): a call before it is
 * answered after it although another line came first; the times keep the
 * gap; calls still time out on the lines' time after it.
 */
static void test_clock_forward_jump(void **state)
{
    static const char text[] =
        "1100000000.000100 30.03ef 32.0801 U C3 920 1 getattr fh 00ff\n"
        "1100000000.000200 30.03ef 32.0801 U C3 921 1 getattr fh 00ff\n"
        "1100003600.000000 34.03f0 32.0801 U C3 922 1 getattr fh 00ff\n"
        "1100003600.000100 32.0801 30.03ef U R3 920 1 getattr 2\n"
        "1100003600.000200 32.0801 34.03f0 U R3 922 1 getattr 2\n"
        "1100003620.000000 34.03f0 32.0801 U C3 923 1 getattr fh 00ff\n"
        "1100003640.000000 34.03f0 32.0801 U C3 924 1 getattr fh 00ff\n"
        "1100003640.000100 32.0801 30.03ef U R3 921 1 getattr 2\n";
    struct fx *f = *state;
    char *p = tmpfile_with(f, "jump.txt", text, sizeof(text) - 1);
    const char *in[1] = {p};
    const struct tbbt_trace_rec *r;
    struct recs rs;

    assert_int_equal(convert(f, in, 1), 0);
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 5);
    chk_monotone(&rs);
    r = by_xid(&rs, 0x920);
    assert_true(r->flags & TBBT_RF_REPLY);
    assert_int_equal(r->reply_ns, NS(1100003600, 100));
    assert_int_equal(by_xid(&rs, 0x922)->call_ns, NS(1100003600, 0));
    /* 921 waited 40 s of lines after the gap: its late reply is not its pair */
    assert_false(by_xid(&rs, 0x921)->flags & TBBT_RF_REPLY);
    free_recs(&rs);
    summary_has(f, "\"pairs\":2,\"unmatched_calls\":3");
    summary_has(f, "\"clock_steps_back\":0,\"clock_step_back_max_ns\":0,\"clock_shift_ns\":0,"
                   "\"clock_shifted_lines\":0,\"clock_jumps_forward\":1,"
                   "\"clock_jump_forward_max_ns\":3599999800000");
    g_free(p);
}

/* The fixture of every kind of step. */
static void test_clock_golden(void **state)
{
    struct fx *f = *state;
    struct recs rs;

    assert_int_equal(convert_fixture(f, "clock.txt"), 0);
    check_golden(f, "clock");
    read_recs(f->trace, &rs);
    chk_monotone(&rs);
    free_recs(&rs);
    summary_has(f, "\"pairs\":6,\"unmatched_calls\":0,\"unmatched_replies\":0");
    summary_has(f, "\"clock_steps_back\":2,\"clock_step_back_max_ns\":7200000200000,"
                   "\"clock_shift_ns\":7200250100000,\"clock_shifted_lines\":9,"
                   "\"clock_jumps_forward\":1,\"clock_jump_forward_max_ns\":3600249400000");
}

/*
 * A corrupt first line does not make the file "not an nfsdump text trace":
 * the format is recognized from several lines, the bad one is skipped and
 * counted, and the conversion says the input was damaged.
 */
static void test_corrupt_first_line(void **state)
{
    static const char text[] = "\x00\xff\x13garbage 1.0 ?? C3 zz\n"
                               "1.000001 1.0300 2.0801 U C3 1 1 getattr fh 00ff\n"
                               "1.000002 1.0300 2.0801 U C3 2 1 getattr fh 00ff\n";
    struct fx *f = *state;
    char *p = tmpfile_with(f, "first.txt", text, sizeof(text) - 1);
    const char *in[1] = {p};
    struct recs rs;

    assert_int_equal(convert(f, in, 1), TBBT_E_DAMAGED);
    summary_has(f, "\"skipped_lines\":1,\"damaged_files\":[{\"file\":");
    summary_has(f, "\"skipped_lines\":1,\"first_skipped_line\":1}]");
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 2);
    free_recs(&rs);
    g_free(p);
}

/*
 * Values outside the protocol's range are malformed lines, as in the capture
 * decoders: a stable_how of 5 (and a committed of 9), a createmode of 3, an
 * MKNOD type of 9, an attribute ftype of 99, an NFSv3 status of 0x3039, an
 * eof of 2; the good lines around them stay.
 */
static void test_out_of_range(void **state)
{
    static const char text[] =
        "1.000001 1.0300 2.0801 U C3 1 7 write fh 00ff off 0 count 4 stable 5\n"
        "1.000002 1.0300 2.0801 U C3 2 8 create fh 00ff name \"a\" how 3\n"
        "1.000003 1.0300 2.0801 U C3 3 b mknod fh 00ff name \"b\" type 9\n"
        "1.000004 1.0300 2.0801 U C3 4 1 getattr fh 00ff\n"
        "1.000005 2.0801 1.0300 U R3 4 1 getattr OK ftype 63 mode 1ed\n"
        "1.000006 1.0300 2.0801 U C3 5 1 getattr fh 00ff\n"
        "1.000007 2.0801 1.0300 U R3 5 1 getattr 3039\n"
        "1.000008 1.0300 2.0801 U C3 6 7 write fh 00ff off 0 count 4 stable 2\n"
        "1.000009 2.0801 1.0300 U R3 6 7 write OK count 4 stable 9\n"
        "1.000010 1.0300 2.0801 U C3 7 6 read fh 00ff off 0 count 4\n"
        "1.000011 2.0801 1.0300 U R3 7 6 read OK count 4 eof 2\n";
    struct fx *f = *state;
    char *p = tmpfile_with(f, "range.txt", text, sizeof(text) - 1);
    const char *in[1] = {p};
    struct recs rs;

    assert_int_equal(convert(f, in, 1), TBBT_E_DAMAGED);
    summary_has(f, "\"malformed_packets\":7,\"skipped_lines\":7");
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 4);
    assert_int_equal(rs.v[2].xid, 6);
    assert_int_equal(rs.v[2].stable, 2);
    free_recs(&rs);
    g_free(p);
}

static void test_long_line(void **state)
{
    static const char good[] = "1.000001 1.0300 2.0801 U C3 1 1 getattr fh 00ff\n";
    static const char good2[] = "1.000003 1.0300 2.0801 U C3 2 1 getattr fh 00ff\n";
    struct fx *f = *state;
    GString *s = g_string_new(good);
    char *p;
    const char *in[1];
    struct recs rs;

    g_string_append(s, "1.000002 1.0300 2.0801 U C3 9 3 lookup fh 00ff name \"");
    for (int i = 0; i < (1 << 20) + 10; i++)
        g_string_append_c(s, 'x');
    g_string_append(s, "\"\n");
    g_string_append(s, good2);
    p = tmpfile_with(f, "long.txt", s->str, s->len);
    in[0] = p;
    assert_int_equal(convert(f, in, 1), TBBT_E_DAMAGED);
    summary_has(f, "\"lines\":3,\"comment_lines\":0,\"malformed_lines\":1");
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.v[1].xid, 2);
    free_recs(&rs);
    g_string_free(s, TRUE);
    g_free(p);
}

/* Entries as repeated plain keys, in either order, with eof last. */
static void test_entries_plain(void **state)
{
    static const char text[] =
        "1.000001 1.0300 2.0801 U C3 1 10 readdir fh 00ff cookie 0 count 1000\n"
        "1.000002 2.0801 1.0300 U R3 1 10 readdir OK ftype 2 mode 1ed nlink 2 uid 0 gid 0 "
        "size 200 used 200 rdev 0 rdev2 0 fsid 1 fileid 7 atime 1.0 mtime 1.0 ctime 1.0 "
        "name \"a\" fileid 8 cookie 1 name \"b b\" fileid 9 cookie 2 eof 1\n"
        "1.000003 1.0300 2.0801 U C3 2 11 readdirp fh 00ff cookie 0 count 400 maxcnt 1000\n"
        "1.000004 2.0801 1.0300 U R3 2 11 readdirp OK fileid 8 name \"a\" cookie 1 fh 0a0a "
        "ftype 1 fileid 8 size 10 fileid 9 name \"c\" cookie 2 eof 0\n";
    struct fx *f = *state;
    char *p = tmpfile_with(f, "entries.txt", text, sizeof(text) - 1);
    const char *in[1] = {p};
    const struct tbbt_trace_rec *r;
    struct recs rs;

    assert_int_equal(convert(f, in, 1), 0);
    summary_has(f, "\"unknown_keys\":{}");
    read_recs(f->trace, &rs);
    r = by_xid(&rs, 1);
    assert_int_equal(r->dir_attr.fileid, 7);
    assert_int_equal(r->n_entries, 2);
    assert_int_equal(r->res_count, 2);
    assert_int_equal(r->eof, 1);
    chk_str(&r->entries[1].name, "b b", 3);
    assert_int_equal(r->entries[1].fileid, 9);
    assert_int_equal(r->entries[1].cookie, 2);
    assert_int_equal(r->entries[1].flags & ~(uint32_t)TBBT_ENT_ID, 0);
    r = by_xid(&rs, 2);
    assert_false(TBBT_HAS(r, TBBT_F_DIR_ATTR));
    assert_int_equal(r->n_entries, 2);
    assert_int_equal(r->eof, 0);
    assert_int_equal(r->entries[0].flags & ~(uint32_t)TBBT_ENT_ID, TBBT_ENT_FH | TBBT_ENT_ATTR);
    assert_int_equal(r->entries[0].attr.fileid, 8);
    assert_int_equal(r->entries[0].attr.size, 0x10);
    chk_fh(&rs, r->entries[0].fh, "0a0a");
    assert_int_equal(r->entries[1].fileid, 9);
    chk_str(&r->entries[1].name, "c", 1);
    free_recs(&rs);
    g_free(p);
}

static void test_filter_refused(void **state)
{
    struct fx *f = *state;
    char *p = fixture("split-1.txt");
    const char *in[1] = {p};
    struct tbbt_convert_opts o;

    tbbt_convert_opts_init(&o);
    o.inputs = in;
    o.n_inputs = 1;
    o.output = f->trace;
    o.filter = "port 2049";
    assert_int_equal(tbbt_convert_run(&o, f->err, sizeof(f->err)), -EINVAL);
    assert_non_null(strstr(f->err, "--filter"));
    assert_false(g_file_test(f->trace, G_FILE_TEST_EXISTS));
    g_free(p);
}

/* ---- consistency with the capture decoder -------------------------------------- */

#define ENC_MAX 16384

struct msg {
    uint8_t b[ENC_MAX];
    u_int len;
};

static void enc(struct msg *m, xdrproc_t proc, void *obj)
{
    XDR x;

    xdrmem_create(&x, (char *)m->b, ENC_MAX, XDR_ENCODE);
    assert_true(proc(&x, obj));
    m->len = xdr_getpos(&x);
    xdr_destroy(&x);
}

static char *unhex(const char *hex, u_int *len)
{
    size_t n = strlen(hex) / 2;
    char *b = g_malloc(n);

    for (size_t i = 0; i < n; i++)
        sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&b[i]);
    *len = (u_int)n;
    return b;
}

/* Handles used by consistency.txt (freed at the end of the test). */
static nfs_fh3 fh_root, fh_a, fh_d, fh_n;

static nfs_fh3 mkfh(const char *hex)
{
    nfs_fh3 h;
    h.data.data_val = unhex(hex, &h.data.data_len);
    return h;
}

static nfstime3 t3(uint32_t s, uint32_t us)
{
    nfstime3 t = {s, us * 1000};
    return t;
}

static fattr3 dir_fattr(void)
{
    fattr3 a = {NF3DIR, 0755, 4, 1000, 100, 4096, 4096, {0, 0}, 0x1234abcd, 1,
                t3(1099990000, 0), t3(1099990000, 0), t3(1099990000, 0)};
    return a;
}

static fattr3 file_fattr(void)
{
    fattr3 a = {NF3REG, 0644, 1, 1000, 100, 0x9000, 0xa000, {1, 2}, 0x1234abcd, 0xa,
                t3(1100000000, 900), t3(1099990000, 250000), t3(1099990000, 500000)};
    return a;
}

static post_op_attr post(fattr3 a)
{
    post_op_attr p = {.attributes_follow = TRUE};
    p.post_op_attr_u.attributes = a;
    return p;
}

static wcc_data wcc(uint64_t size, nfstime3 m, nfstime3 c, fattr3 after)
{
    wcc_data w;

    w.before.attributes_follow = TRUE;
    w.before.pre_op_attr_u.attributes.size = size;
    w.before.pre_op_attr_u.attributes.mtime = m;
    w.before.pre_op_attr_u.attributes.ctime = c;
    w.after = post(after);
    return w;
}

static wcc_data dir_wcc(void)
{
    return wcc(0x1000, t3(1099990000, 0), t3(1099990000, 0), dir_fattr());
}

static post_op_fh3 pfh(nfs_fh3 h)
{
    post_op_fh3 p = {.handle_follows = TRUE};
    p.post_op_fh3_u.handle = h;
    return p;
}

/* Builds call and reply of consistency.txt's operation i; returns its procedure. */
static int build_getattr_lookup_read(int i, struct msg *c, struct msg *r)
{
    static char data[0x2000];

    if (i == 0) {
        GETATTR3args a = {fh_root};
        GETATTR3res res = {.status = NFS3_OK};
        res.GETATTR3res_u.resok.obj_attributes = dir_fattr();
        enc(c, (xdrproc_t)xdr_GETATTR3args, &a);
        enc(r, (xdrproc_t)xdr_GETATTR3res, &res);
        return NFSPROC3_GETATTR;
    }
    if (i == 1) {
        LOOKUP3args a = {{fh_root, "a"}};
        LOOKUP3res res = {.status = NFS3_OK};
        res.LOOKUP3res_u.resok.object = fh_a;
        res.LOOKUP3res_u.resok.obj_attributes = post(file_fattr());
        res.LOOKUP3res_u.resok.dir_attributes = post(dir_fattr());
        enc(c, (xdrproc_t)xdr_LOOKUP3args, &a);
        enc(r, (xdrproc_t)xdr_LOOKUP3res, &res);
        return NFSPROC3_LOOKUP;
    }
    READ3args a = {fh_a, 0x4000, 0x2000};
    READ3res res = {.status = NFS3_OK};
    res.READ3res_u.resok.file_attributes = post(file_fattr());
    res.READ3res_u.resok.count = 0x2000;
    res.READ3res_u.resok.eof = TRUE;
    res.READ3res_u.resok.data.data_len = sizeof(data);
    res.READ3res_u.resok.data.data_val = data;
    enc(c, (xdrproc_t)xdr_READ3args, &a);
    enc(r, (xdrproc_t)xdr_READ3res, &res);
    return NFSPROC3_READ;
}

static int build_write_create(int i, struct msg *c, struct msg *r)
{
    static char data[0x1000];

    if (i == 3) {
        WRITE3args a = {fh_a, 0x9000, 0x1000, FILE_SYNC, {sizeof(data), data}};
        WRITE3res res = {.status = NFS3_OK};
        res.WRITE3res_u.resok.file_wcc =
            wcc(0x9000, t3(1099990000, 250000), t3(1099990000, 500000), file_fattr());
        res.WRITE3res_u.resok.count = 0x1000;
        res.WRITE3res_u.resok.committed = FILE_SYNC;
        memcpy(res.WRITE3res_u.resok.verf, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
        enc(c, (xdrproc_t)xdr_WRITE3args, &a);
        enc(r, (xdrproc_t)xdr_WRITE3res, &res);
        return NFSPROC3_WRITE;
    }
    CREATE3args a = {{fh_root, "n"}, {.mode = GUARDED}};
    sattr3 *s = &a.how.createhow3_u.obj_attributes;
    CREATE3res res = {.status = NFS3_OK};
    memset(s, 0, sizeof(*s));
    s->mode.set_it = TRUE;
    s->mode.set_mode3_u.mode = 0644;
    s->uid.set_it = TRUE;
    s->uid.set_uid3_u.uid = 1000;
    s->mtime.set_it = SET_TO_SERVER_TIME;
    res.CREATE3res_u.resok.obj = pfh(fh_n);
    res.CREATE3res_u.resok.obj_attributes = post(file_fattr());
    res.CREATE3res_u.resok.dir_wcc = dir_wcc();
    enc(c, (xdrproc_t)xdr_CREATE3args, &a);
    enc(r, (xdrproc_t)xdr_CREATE3res, &res);
    return NFSPROC3_CREATE;
}

static int build_remove_rename(int i, struct msg *c, struct msg *r)
{
    if (i == 5) {
        REMOVE3args a = {{fh_root, "a"}};
        REMOVE3res res = {.status = NFS3_OK};
        res.REMOVE3res_u.resok.dir_wcc = dir_wcc();
        enc(c, (xdrproc_t)xdr_REMOVE3args, &a);
        enc(r, (xdrproc_t)xdr_REMOVE3res, &res);
        return NFSPROC3_REMOVE;
    }
    RENAME3args a = {{fh_root, "a"}, {fh_d, "b"}};
    RENAME3res res = {.status = NFS3_OK};
    res.RENAME3res_u.resok.fromdir_wcc = dir_wcc();
    res.RENAME3res_u.resok.todir_wcc = dir_wcc();
    enc(c, (xdrproc_t)xdr_RENAME3args, &a);
    enc(r, (xdrproc_t)xdr_RENAME3res, &res);
    return NFSPROC3_RENAME;
}

static int build_readdirplus(struct msg *c, struct msg *r)
{
    READDIRPLUS3args a = {fh_d, 0, {0}, 0x400, 0x1000};
    READDIRPLUS3res res = {.status = NFS3_OK};
    entryplus3 e1 = {0xd, ".", 2, {.attributes_follow = FALSE}, {.handle_follows = FALSE}, NULL};
    entryplus3 e0 = {0xa, "a", 1, post(file_fattr()), pfh(fh_a), &e1};

    res.READDIRPLUS3res_u.resok.dir_attributes = post(dir_fattr());
    res.READDIRPLUS3res_u.resok.reply.entries = &e0;
    res.READDIRPLUS3res_u.resok.reply.eof = TRUE;
    enc(c, (xdrproc_t)xdr_READDIRPLUS3args, &a);
    enc(r, (xdrproc_t)xdr_READDIRPLUS3res, &res);
    return NFSPROC3_READDIRPLUS;
}

static int build_op(int i, struct msg *c, struct msg *r)
{
    if (i <= 2)
        return build_getattr_lookup_read(i, c, r);
    if (i <= 4)
        return build_write_create(i, c, r);
    if (i <= 6)
        return build_remove_rename(i, c, r);
    return build_readdirplus(c, r);
}

static void same_fh(struct tbbt_fhtab *ta, uint32_t a, struct tbbt_fhtab *tb, uint32_t b)
{
    uint32_t la, lb;
    const uint8_t *pa = tbbt_fhtab_get(ta, a, &la), *pb = tbbt_fhtab_get(tb, b, &lb);

    assert_non_null(pa);
    assert_non_null(pb);
    assert_int_equal(la, lb);
    assert_memory_equal(pa, pb, la);
}

static void same_fattr(const struct tbbt_fattr *a, const struct tbbt_fattr *b)
{
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->nlink, b->nlink);
    assert_int_equal(a->uid, b->uid);
    assert_int_equal(a->gid, b->gid);
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->used, b->used);
    assert_int_equal(a->rdev, b->rdev);
    assert_int_equal(a->fsid, b->fsid);
    assert_int_equal(a->fileid, b->fileid);
    assert_int_equal(a->atime_ns, b->atime_ns);
    assert_int_equal(a->mtime_ns, b->mtime_ns);
    assert_int_equal(a->ctime_ns, b->ctime_ns);
}

static void same_str(const struct tbbt_str *a, const struct tbbt_str *b)
{
    chk_str(b, a->p, a->len);
}

static void same_pre(const struct tbbt_wcc_pre *a, const struct tbbt_wcc_pre *b)
{
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->mtime_ns, b->mtime_ns);
    assert_int_equal(a->ctime_ns, b->ctime_ns);
}

static void same_entries(const struct tbbt_trace_rec *a, struct tbbt_fhtab *ta,
                         const struct tbbt_trace_rec *b, struct tbbt_fhtab *tb)
{
    assert_int_equal(a->n_entries, b->n_entries);
    for (uint32_t i = 0; i < a->n_entries; i++) {
        const struct tbbt_entry *x = &a->entries[i], *y = &b->entries[i];
        assert_int_equal(x->fileid, y->fileid);
        assert_int_equal(x->cookie, y->cookie);
        same_str(&x->name, &y->name);
        assert_int_equal(x->flags & ~(uint32_t)TBBT_ENT_ID, y->flags & ~(uint32_t)TBBT_ENT_ID);
        if (x->flags & TBBT_ENT_FH)
            same_fh(ta, x->fh, tb, y->fh);
        if (x->flags & TBBT_ENT_ATTR)
            same_fattr(&x->attr, &y->attr);
    }
}

/* Every field of the decoder's record a equals the nfsdump record b's, and no more. */
static void same_fields(const struct tbbt_trace_rec *a, struct tbbt_fhtab *ta,
                        const struct tbbt_trace_rec *b, struct tbbt_fhtab *tb)
{
    assert_int_equal(NO_IDS(a->present), NO_IDS(b->present));
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->flags & TBBT_RF_STATUS, b->flags & TBBT_RF_STATUS);
    if (TBBT_HAS(a, TBBT_F_FH))
        same_fh(ta, a->fh, tb, b->fh);
    if (TBBT_HAS(a, TBBT_F_FH2))
        same_fh(ta, a->fh2, tb, b->fh2);
    if (TBBT_HAS(a, TBBT_F_NEW_FH))
        same_fh(ta, a->new_fh, tb, b->new_fh);
    same_str(&a->name, &b->name);
    same_str(&a->name2, &b->name2);
    assert_int_equal(a->offset, b->offset);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->stable, b->stable);
    assert_int_equal(a->sattr.mask, b->sattr.mask);
    assert_int_equal(a->sattr.mode, b->sattr.mode);
    assert_int_equal(a->sattr.uid, b->sattr.uid);
    assert_int_equal(a->createmode, b->createmode);
    assert_int_equal(a->cookie, b->cookie);
    assert_int_equal(a->cookieverf, b->cookieverf);
    assert_int_equal(a->dircount, b->dircount);
    assert_int_equal(a->maxcount, b->maxcount);
    same_fattr(&a->obj_attr, &b->obj_attr);
    same_fattr(&a->dir_attr, &b->dir_attr);
    same_fattr(&a->dir2_attr, &b->dir2_attr);
    same_pre(&a->obj_pre, &b->obj_pre);
    same_pre(&a->dir_pre, &b->dir_pre);
    same_pre(&a->dir2_pre, &b->dir2_pre);
    assert_int_equal(a->res_count, b->res_count);
    assert_int_equal(a->eof, b->eof);
    assert_int_equal(a->committed, b->committed);
    assert_int_equal(a->writeverf, b->writeverf);
    same_entries(a, ta, b, tb);
}

static void test_consistency(void **state)
{
    struct fx *f = *state;
    struct tbbt_fhtab *fht = tbbt_fhtab_new();
    struct tbbt_trace_rec a;
    struct msg *c = g_new(struct msg, 1), *r = g_new(struct msg, 1);
    struct recs rs;

    fh_root = mkfh(FH_ROOT);
    fh_a = mkfh(FH_A);
    fh_d = mkfh(FH_D);
    fh_n = mkfh("01000001000000000000000000000020");
    assert_int_equal(convert_fixture(f, "consistency.txt"), 0);
    read_recs(f->trace, &rs);
    assert_int_equal(rs.n, 8);
    tbbt_trace_rec_init(&a);
    for (int i = 0; i < 8; i++) {
        tbbt_trace_rec_clear(&a);
        a.prog = TBBT_PROG_NFS3;
        a.proc = (uint8_t)build_op(i, c, r);
        assert_int_equal(tbbt__decode_call(&a, c->b, c->len, false, fht), 0);
        assert_int_equal(tbbt__decode_reply(&a, r->b, r->len, false, fht), 0);
        assert_int_equal(rs.v[i].proc, a.proc);
        same_fields(&a, fht, &rs.v[i], tbbt_trace_reader_fhtab(rs.r));
    }
    tbbt_trace_rec_fini(&a);
    free_recs(&rs);
    tbbt_fhtab_free(fht);
    g_free(fh_root.data.data_val);
    g_free(fh_a.data.data_val);
    g_free(fh_d.data.data_val);
    g_free(fh_n.data.data_val);
    g_free(c);
    g_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe),
        cmocka_unit_test_setup_teardown(test_v3_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_last_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_last_line_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gzip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_several_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_concatenated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_small_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_forward_jump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_first_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entries_plain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_filter_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_consistency, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
