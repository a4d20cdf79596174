/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tbbt-compare (src/compare/): small original and replay traces written in
 * the text form (docs/trace-format.md) with their hierarchy maps, turned into binary
 * traces by tbbt_trace_from_text(), and compared.  The original has a directory d and a
 * file d/f at trace start (IDs 2 and 3 under the root 1); the replay's image root is img
 * (replay IDs: root 1, img 2, d 3, f 4) and its objects made during the trace get the
 * next IDs.  Covered: an identical replay with the player's start-up and verify traffic,
 * a missing operation, a JUKEBOX retry of a create (the retry maps the new object), a
 * retransmission, handle and cookie rewrites that are no differences, a continuation
 * page sent with cookie 0, status and argument differences, a reorder across objects,
 * objects made during the trace (a directory and a file in it), lag and turnaround, a
 * hole and a run of extras longer than the horizon, the image root found by votes
 * (clone 0 of two) and by the start-up LOOKUP chain, and a root with a second start path;
 * with AUTH_SYS credentials (format 1.1): two clients' same operations paired by
 * credential, and the extras classified by origin (the player's machine name); reply
 * differences of the image (a directory's link count) and of racy operations (a GETATTR
 * that overlapped a WRITE of its file in the original) counted apart; the player's rule
 * of which attributes are compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "compare/compare.h"
#include "player/attrcheck.h"
#include "trace/trace.h"
#include "util/util.h"

#define T0 1700000000ull
#define MS 1000000ull

static char *tmpdir;
static int nfiles;
static GPtrArray *made;                 /* the current test's trace paths (tb_finish) */
static struct tbbt_compare *last;       /* the current test's comparison (new_cmp) */

static int group_setup(void **state)
{
    (void)state;
    made = g_ptr_array_new_with_free_func(g_free);
    tmpdir = g_dir_make_tmp("test-compare-XXXXXX", NULL);
    return tmpdir ? 0 : -1;
}

/* After each test, passed or failed: its comparison and its traces' paths go. */
static int teardown(void **state)
{
    (void)state;
    tbbt_compare_free(last);
    last = NULL;
    g_ptr_array_set_size(made, 0);
    return 0;
}

static int group_teardown(void **state)
{
    char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
    int rc = system(cmd);

    (void)state;
    g_free(cmd);
    g_free(tmpdir);
    g_ptr_array_free(made, TRUE);
    return rc == 0 ? 0 : -1;
}

/* ---- building traces ---------------------------------------------------------------------- */

/* A trace being written: its text, and the time of the next call (ns after T0). */
struct tb {
    GString *s;
    uint64_t t;
    uint32_t xid;
    unsigned ops;
};

/* A new trace text with one endpoint and handles 0..31 (fh=N names handle N). */
static void tb_init(struct tb *b, uint32_t xid)
{
    b->s = g_string_new("# tbbt-trace 1.0\nep 0 tcp 10.0.0.2:812 10.0.0.1:2049\n");
    for (int i = 0; i < 32; i++)
        g_string_append_printf(b->s, "fh %d %08x%02x\n", i, xid, i);
    b->t = 0;
    b->xid = xid;
    b->ops = 0;
}

static void put_time(GString *s, uint64_t ns)
{
    g_string_append_printf(s, "%llu.%09llu", (unsigned long long)(T0 + ns / 1000000000ull),
                           (unsigned long long)(ns % 1000000000ull));
}

/*
 * One v3 call at b->t with its reply lat_us later (0: no reply), uid/gid 1000 unless
 * cred is given as "uid=.. gid=..", status (NULL: OK), and the fields; b->t then moves
 * on by 1 ms.
 */
static void opx(struct tb *b, const char *prog, const char *proc, unsigned lat_us,
                const char *cred, const char *status, const char *fields)
{
    g_string_append(b->s, "op ");
    put_time(b->s, b->t);
    g_string_append_c(b->s, ' ');
    put_time(b->s, lat_us ? b->t + lat_us * 1000ull : 0);
    if (lat_us)
        g_string_append_printf(b->s, " %s %s xid=0x%08x ep=0 %s flags=reply|status|tcp "
                                     "rpc=success status=%s %s\n",
                               prog, proc, b->xid++, cred ? cred : "uid=1000 gid=1000",
                               status ? status : "OK", fields);
    else
        g_string_append_printf(b->s, " %s %s xid=0x%08x ep=0 %s flags=tcp %s\n", prog, proc,
                               b->xid++, cred ? cred : "uid=1000 gid=1000", fields);
    b->t += MS;
    b->ops++;
}

static void op(struct tb *b, const char *proc, const char *fields)
{
    opx(b, "v3", proc, 100, NULL, NULL, fields);
}

/* tb_init() for a format 1.1 trace with the credential lines creds ("cred 0 ...\n"...). */
static void tb_init_creds(struct tb *b, uint32_t xid, const char *creds)
{
    tb_init(b, xid);
    g_string_overwrite(b->s, strlen("# tbbt-trace "), "1.1");
    g_string_append(b->s, creds);
}

/*
 * Writes the trace (binary) to tmpdir/name and the map text beside it; returns the path
 * (borrowed: freed by the test's teardown).
 */
static char *tb_finish(struct tb *b, const char *name, const char *map)
{
    char *txt = g_strdup_printf("%s/%s-%d.txt", tmpdir, name, ++nfiles);
    char *path = g_strdup_printf("%s/%s-%d.tbbt", tmpdir, name, nfiles);
    char *mpath = g_strdup_printf("%s.map", path);
    char why[256] = "";
    uint64_t line = 0;

    g_string_append_printf(b->s, "end %u\n", b->ops);
    assert_true(g_file_set_contents(txt, b->s->str, -1, NULL));
    int rc = tbbt_trace_from_text_why(txt, path, &line, why, sizeof(why));
    if (rc != 0)
        fail_msg("%s line %llu: %s", txt, (unsigned long long)line, why);
    assert_true(g_file_set_contents(mpath, map, -1, NULL));
    g_string_free(b->s, TRUE);
    g_free(txt);
    g_free(mpath);
    g_ptr_array_add(made, path);
    return path;
}

#define MAP_HDR "# tbbt-map 2\n"
#define ENTRY(id, type, path) id "\t" type "\t0\t0\t-\t" path "\t" path "\t-\t1\t0755:0:0\n"

static const char map_a[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "d")
    ENTRY("3", "f", "d/f");
static const char map_b[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "img")
    ENTRY("3", "d", "img/d") ENTRY("4", "f", "img/d/f");

/* The replay's start-up: MNT of the export and the LOOKUPs of img, img/d, img/d/f. */
static void startup(struct tb *b)
{
    opx(b, "mnt3", "mnt", 100, NULL, NULL, "dirpath=\"/export\" new_fh=1 id_obj=1");
    op(b, "lookup", "fh=1 name=\"img\" new_fh=2 obj_attr={type=2} id=1 id_obj=2");
    op(b, "lookup", "fh=2 name=\"d\" new_fh=3 obj_attr={type=2} id=2 id_obj=3");
    op(b, "lookup", "fh=3 name=\"f\" new_fh=4 obj_attr={type=1} id=3 id_obj=4");
}

/* The replay's --verify walk. */
static void verify(struct tb *b)
{
    op(b, "readdirplus", "fh=2 cookie=0 dircount=8192 maxcount=65536 res_count=1 eof=1 id=2");
    op(b, "getattr", "fh=3 id=3");
}

/* op() with printf-style fields. */
static void opf(struct tb *b, const char *proc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void opf(struct tb *b, const char *proc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *fields = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    op(b, proc, fields);
    g_free(fields);
}

/* The original's body (d is 2, f is 3, g made as 4), or the replay's (3, 4, 5). */
static void body(struct tb *b, bool replay)
{
    int d = replay ? 3 : 2, f = d + 1, g = f + 1;

    opf(b, "getattr", "fh=%d id=%d obj_attr={type=1,size=100}", f, f);
    opf(b, "lookup", "fh=%d id=%d name=\"f\" new_fh=%d obj_attr={type=1,size=100} id_obj=%d", d,
        d, f, f);
    opf(b, "read", "fh=%d id=%d offset=0 count=4096 res_count=100 eof=1", f, f);
    opf(b, "create", "fh=%d id=%d name=\"g\" sattr={mask=mode,mode=0644} createmode=0 "
        "new_fh=%d obj_attr={type=1,mode=0644} id_obj=%d", d, d, g, g);
    opf(b, "write", "fh=%d id=%d offset=0 count=10 stable=0 res_count=10 committed=0 "
        "writeverf=%d", g, g, replay ? 2 : 1);
    opf(b, "setattr", "fh=%d id=%d sattr={mask=mode,mode=0600}", g, g);
}

/*
 * A new comparison with options o, not run yet, in place of the test's previous one
 * (freed); borrowed: valid until the next comparison or the test's teardown.
 */
static struct tbbt_compare *new_cmp(const struct tbbt_compare_opts *o)
{
    tbbt_compare_free(last);
    return last = tbbt_compare_new(o);
}

/* Runs a comparison of a and b (maps beside them); borrowed, as new_cmp()'s. */
static struct tbbt_compare *compare_h(const char *a, const char *b, double speed,
                                      uint64_t horizon)
{
    struct tbbt_compare_opts o;
    char err[512] = "";

    tbbt_compare_opts_init(&o);
    o.trace_a = a;
    o.trace_b = b;
    o.speed = speed;
    if (horizon)
        o.horizon = horizon;
    struct tbbt_compare *c = new_cmp(&o);
    if (tbbt_compare_run(c, err, sizeof(err)) != 0)
        fail_msg("compare: %s", err);
    char *json = tbbt_compare_json(c);    /* the outputs must not crash either */
    assert_non_null(strstr(json, "\"identical_fraction\""));
    g_free(json);
    FILE *null = fopen("/dev/null", "w");
    tbbt_compare_print(c, null);
    fclose(null);
    return c;
}

static struct tbbt_compare *compare(const char *a, const char *b, double speed)
{
    return compare_h(a, b, speed, 0);
}

static char *original(void)
{
    struct tb b;

    tb_init(&b, 0x1000);
    opx(&b, "mnt3", "mnt", 100, NULL, NULL, "dirpath=\"/export\" new_fh=0 id_obj=1");
    body(&b, false);
    return tb_finish(&b, "orig", map_a);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_identical(void **state)
{
    (void)state;
    char *a = original();
    struct tb b;
    tb_init(&b, 0x2000);
    startup(&b);
    body(&b, true);
    verify(&b);
    char *p = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(a, p, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->ops_original, 7);
    assert_int_equal(n->original_not_nfs, 1);
    assert_int_equal(n->ops_replay, 12);
    assert_int_equal(n->matched, 6);
    assert_int_equal(n->identical, 6);
    assert_int_equal(n->missing, 0);
    assert_int_equal(n->extra[TBBT_COMPARE_STARTUP], 4);
    assert_int_equal(n->extra[TBBT_COMPARE_VERIFY], 2);
    assert_int_equal(n->extra[TBBT_COMPARE_RETRY], 0);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 0);
    assert_int_equal(n->pairs_reply_diff, 0);
    assert_int_equal(n->objects_by_path, 3);
    assert_int_equal(n->objects_mapped, 4);     /* + g, made in the trace */
    assert_int_equal(n->objects_unmapped, 0);
    assert_string_equal(tbbt_compare_root_b(c), "img");
}

static void test_missing(void **state)
{
    (void)state;
    char *a = original();
    struct tb b;
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=100}");
    op(&b, "lookup", "fh=3 id=3 name=\"f\" new_fh=4 obj_attr={type=1,size=100} id_obj=4");
    /* no READ */
    op(&b, "create", "fh=3 id=3 name=\"g\" sattr={mask=mode,mode=0644} createmode=0 new_fh=5 "
                     "obj_attr={type=1,mode=0644} id_obj=5");
    op(&b, "write", "fh=5 id=5 offset=0 count=10 stable=0 res_count=10 committed=0");
    op(&b, "setattr", "fh=5 id=5 sattr={mask=mode,mode=0600}");
    char *p = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(a, p, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 5);
    assert_int_equal(n->identical, 5);
    assert_int_equal(n->missing, 1);
    assert_int_equal(n->missing_unmapped, 0);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_MISSING, "read"), 1);
    assert_int_equal(n->extra[TBBT_COMPARE_STARTUP], 4);
}

/* The create first gets JUKEBOX (no object), the player retries it; the WRITE to the new
 * file still matches (the retry maps it), and a retransmitted SETATTR is a retry too. */
static void test_retry(void **state)
{
    (void)state;
    char *a = original();
    struct tb b;
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=100}");
    op(&b, "lookup", "fh=3 id=3 name=\"f\" new_fh=4 obj_attr={type=1,size=100} id_obj=4");
    op(&b, "read", "fh=4 id=4 offset=0 count=4096 res_count=100 eof=1");
    opx(&b, "v3", "create", 100, NULL, "JUKEBOX",
        "fh=3 id=3 name=\"g\" sattr={mask=mode,mode=0644} createmode=0");
    op(&b, "create", "fh=3 id=3 name=\"g\" sattr={mask=mode,mode=0644} createmode=0 new_fh=5 "
                     "obj_attr={type=1,mode=0644} id_obj=5");
    op(&b, "write", "fh=5 id=5 offset=0 count=10 stable=0 res_count=10 committed=0");
    opx(&b, "v3", "setattr", 0, NULL, NULL, "fh=5 id=5 sattr={mask=mode,mode=0600}");
    op(&b, "setattr", "fh=5 id=5 sattr={mask=mode,mode=0600}");
    char *p = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(a, p, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 6);
    assert_int_equal(n->missing, 0);
    assert_int_equal(n->extra[TBBT_COMPARE_RETRY], 2);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_EXTRA_RETRY, "create"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_EXTRA_RETRY, "setattr"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_STATUS, "create:OK->JUKEBOX"), 1);
    /* the unanswered SETATTR came first: its status is a difference */
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_STATUS, "setattr:OK->noreply"), 1);
    assert_int_equal(n->identical, 4);
    assert_int_equal(n->objects_unmapped, 0);
}

/* Handles, cookies (a continuation of the mapped page), cookie, write and create
 * verifiers differ; none is a difference. */
static void test_rewrites(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    op(&a, "readdirplus", "fh=2 id=2 cookie=0 cookieverf=0x11 dircount=512 maxcount=4096 "
                          "res_count=2 eof=0 entries=[{fileid=5,cookie=100,name=\"x\"},"
                          "{fileid=6,cookie=111,name=\"y\"}]");
    op(&a, "readdirplus", "fh=2 id=2 cookie=111 cookieverf=0x11 dircount=512 maxcount=4096 "
                          "res_count=1 eof=1 entries=[{fileid=7,cookie=222,name=\"z\"}]");
    op(&a, "create", "fh=2 id=2 name=\"e\" createmode=2 createverf=0x1234 new_fh=9 id_obj=9");
    op(&a, "write", "fh=9 id=9 offset=0 count=5 stable=2 res_count=5 committed=2 "
                    "writeverf=0xaaaa");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "readdirplus", "fh=3 id=3 cookie=0 cookieverf=0x99 dircount=512 maxcount=4096 "
                          "res_count=2 eof=0 entries=[{fileid=8,cookie=500,name=\"x\"},"
                          "{fileid=9,cookie=999,name=\"y\"}]");
    op(&b, "readdirplus", "fh=3 id=3 cookie=999 cookieverf=0x99 dircount=512 maxcount=4096 "
                          "res_count=1 eof=1 entries=[{fileid=10,cookie=1999,name=\"z\"}]");
    op(&b, "create", "fh=3 id=3 name=\"e\" createmode=2 createverf=0x5678 new_fh=20 id_obj=7");
    op(&b, "write", "fh=20 id=7 offset=0 count=5 stable=2 res_count=5 committed=2 "
                    "writeverf=0xbbbb");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 4);
    assert_int_equal(n->identical, 4);
    assert_int_equal(n->pairs_arg_diff, 0);
    assert_int_equal(n->pairs_reply_diff, 0);
}

/* The player sends the continuation page before the first one came back, with cookie 0
 * (fsdep): an argument difference, and the pages' replies differ. */
static void test_early_continuation(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    op(&a, "readdirplus", "fh=2 id=2 cookie=0 dircount=512 maxcount=4096 res_count=2 eof=0 "
                          "entries=[{fileid=5,cookie=100,name=\"x\"},{fileid=6,cookie=111,"
                          "name=\"y\"}]");
    op(&a, "readdirplus", "fh=2 id=2 cookie=111 dircount=512 maxcount=4096 res_count=1 eof=1 "
                          "entries=[{fileid=7,cookie=222,name=\"z\"}]");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    for (int i = 0; i < 2; i++)
        op(&b, "readdirplus", "fh=3 id=3 cookie=0 dircount=512 maxcount=4096 res_count=2 "
                              "eof=0 entries=[{fileid=8,cookie=500,name=\"x\"},{fileid=9,"
                              "cookie=999,name=\"y\"}]");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 2);
    assert_int_equal(n->identical, 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_ARG, "readdirplus.cookie"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "readdirplus.entries"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "readdirplus.eof"), 1);
}

/* The replay's server splits the same listing elsewhere (its directory order): the
 * pages' counts are the image's differences, not the replay's. */
static void test_page_split(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    op(&a, "readdirplus", "fh=2 id=2 cookie=0 dircount=512 maxcount=4096 res_count=2 eof=0 "
                          "entries=[{fileid=5,cookie=100,name=\"x\"},{fileid=6,cookie=111,"
                          "name=\"y\"}]");
    op(&a, "readdirplus", "fh=2 id=2 cookie=111 dircount=512 maxcount=4096 res_count=1 eof=1 "
                          "entries=[{fileid=7,cookie=222,name=\"z\"}]");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "readdirplus", "fh=3 id=3 cookie=0 dircount=512 maxcount=4096 res_count=1 eof=0 "
                          "entries=[{fileid=8,cookie=500,name=\"y\"}]");
    op(&b, "readdirplus", "fh=3 id=3 cookie=500 dircount=512 maxcount=4096 res_count=2 eof=1 "
                          "entries=[{fileid=9,cookie=600,name=\"x\"},{fileid=10,cookie=700,"
                          "name=\"z\"}]");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 2);
    assert_int_equal(n->identical, 2);
    assert_int_equal(n->pairs_reply_diff, 0);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY_IMAGE, "readdirplus.entries"), 2);
}

static void test_status_and_args(void **state)
{
    (void)state;
    char *a = original();
    struct tb b;
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=100}");
    op(&b, "lookup", "fh=3 id=3 name=\"f\" new_fh=4 obj_attr={type=1,size=100} id_obj=4");
    op(&b, "read", "fh=4 id=4 offset=0 count=4096 res_count=50 eof=0");   /* short read */
    op(&b, "create", "fh=3 id=3 name=\"g\" sattr={mask=mode,mode=0640} createmode=0 new_fh=5 "
                     "obj_attr={type=1,mode=0640} id_obj=5");
    opx(&b, "v3", "write", 100, "uid=0 gid=0", NULL,
        "fh=5 id=5 offset=0 count=20 stable=0 res_count=20 committed=0");
    opx(&b, "v3", "setattr", 100, NULL, "JUKEBOX", "fh=5 id=5 sattr={mask=mode,mode=0600}");
    char *p = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(a, p, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 6);
    assert_int_equal(n->identical, 3);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_STATUS, "setattr:OK->JUKEBOX"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_ARG, "write.count"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_ARG, "uid"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_ARG, "gid"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_ARG, "create.sattr.mode"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "read.res_count"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "read.eof"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "create.attr.mode"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "write.res_count"), 1);
    assert_int_equal(n->pairs_status_diff, 1);
    assert_int_equal(n->pairs_arg_diff, 2);
}

/* FS-dependency order: operations on different objects swap places, two READs of one
 * file swap too (their offsets tell them apart); a SETATTR to client time is counted
 * apart, not as a difference. */
static void test_reorder(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    op(&a, "getattr", "fh=2 id=2");
    op(&a, "read", "fh=3 id=3 offset=0 count=10 res_count=10 eof=0");
    op(&a, "read", "fh=3 id=3 offset=10 count=10 res_count=10 eof=0");
    op(&a, "access", "fh=2 id=2 access=1 access_res=1");
    op(&a, "setattr", "fh=3 id=3 sattr={mask=mtime,mtime=1600000000.000000000}");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "read", "fh=4 id=4 offset=10 count=10 res_count=10 eof=0");
    op(&b, "access", "fh=3 id=3 access=1 access_res=1");
    op(&b, "read", "fh=4 id=4 offset=0 count=10 res_count=10 eof=0");
    op(&b, "getattr", "fh=3 id=3");
    op(&b, "setattr", "fh=4 id=4 sattr={mask=mtime,mtime=1700000000.000000000}");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 5);
    assert_int_equal(n->identical, 5);
    assert_int_equal(n->missing, 0);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 0);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_CLIENT_TIME, "setattr.sattr.mtime"), 1);
}

/* A directory and a file in it made during the trace, then used; a REMOVE of a name
 * the replay spells differently is missing, its replay extra (other). */
static void test_created_objects(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    op(&a, "mkdir", "fh=2 id=2 name=\"n\" sattr={mask=mode,mode=0755} new_fh=4 id_obj=4");
    op(&a, "create", "fh=4 id=4 name=\"m\" createmode=0 new_fh=5 id_obj=5");
    op(&a, "write", "fh=5 id=5 offset=0 count=3 stable=2 res_count=3");
    op(&a, "rename", "fh=4 id=4 name=\"m\" fh2=2 id2=2 name2=\"m2\" id_obj=5");
    op(&a, "getattr", "fh=5 id=5");
    op(&a, "remove", "fh=2 id=2 name=\"m2\" id_obj=5");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "mkdir", "fh=3 id=3 name=\"n\" sattr={mask=mode,mode=0755} new_fh=10 id_obj=8");
    op(&b, "create", "fh=10 id=8 name=\"m\" createmode=0 new_fh=11 id_obj=9");
    op(&b, "write", "fh=11 id=9 offset=0 count=3 stable=2 res_count=3");
    op(&b, "rename", "fh=10 id=8 name=\"m\" fh2=3 id2=3 name2=\"m2\" id_obj=9");
    op(&b, "getattr", "fh=11 id=9");
    op(&b, "remove", "fh=3 id=3 name=\"m3\" id_obj=9");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 5);
    assert_int_equal(n->identical, 5);
    assert_int_equal(n->missing, 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_MISSING, "remove"), 1);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_EXTRA_OTHER, "remove"), 1);
    assert_int_equal(n->objects_mapped, 5);
}

/*
 * Lag: original calls at 0, 10, 20 ms (each answered after 1 ms), replay calls at 0,
 * 15, 40 ms after its start-up: lags 0, 5, 20 ms.  Turnaround: 9 ms in the original
 * (reply at 1 ms, next call at 10), 5.9 (after the start-up), 14 and 24 ms in the
 * replay.  At --speed 2 the same replay lags 0, 10 and 30 ms.
 */
static void test_lag(void **state)
{
    (void)state;
    struct tb a, b;
    const uint64_t ta[3] = {0, 10, 20}, tb[3] = {0, 15, 40};

    tb_init(&a, 0x1000);
    for (int i = 0; i < 3; i++) {
        a.t = ta[i] * MS;
        opx(&a, "v3", "getattr", 1000, NULL, NULL, "fh=3 id=3");
    }
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    uint64_t base = b.t + 5 * MS;
    for (int i = 0; i < 3; i++) {
        b.t = base + tb[i] * MS;
        opx(&b, "v3", "getattr", 1000, NULL, NULL, "fh=4 id=4");
    }
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    struct tbbt_compare_timing t;

    tbbt_compare_get_timing(c, &t);
    assert_int_equal(t.lag_count, 3);
    assert_true(t.lag_p50 > 4900000 && t.lag_p50 < 5100000);
    assert_int_equal(t.lag_max, 20 * MS);
    assert_int_equal(t.turn_count[0], 2);
    assert_true(t.turn_p50[0] > 8900000 && t.turn_p50[0] < 9100000);
    assert_int_equal(t.turn_count[1], 3);   /* the first follows the last start-up LOOKUP */
    assert_true(t.turn_p99[1] > 23000000 && t.turn_p99[1] < 24500000);
    assert_true(t.rate[0] > 149 && t.rate[0] < 151);      /* 3 ops over 20 ms */
    assert_true(t.rate[1] > 74 && t.rate[1] < 76);        /* 3 ops over 40 ms */
    /* every call's dependencies were ready before it was due: the lag is the player's */
    assert_int_equal(t.held_count, 0);
    assert_int_equal(t.own_max, 20 * MS);

    c = compare(pa, pb, 2);
    tbbt_compare_get_timing(c, &t);
    assert_int_equal(t.lag_max, 30 * MS);
    assert_true(t.lag_p50 > 9800000 && t.lag_p50 < 10200000);
}

/*
 * The lag by cause: the replay's first GETATTR is answered after 12 ms (1 ms in the
 * original), so the second, due at 10 ms, is held until 12 ms (held 2 ms) and sent at
 * 15 ms (reaction and own error 3 ms).
 */
static void test_lag_held(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    a.t = 0;
    opx(&a, "v3", "getattr", 1000, NULL, NULL, "fh=3 id=3");
    a.t = 10 * MS;
    opx(&a, "v3", "getattr", 1000, NULL, NULL, "fh=3 id=3");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    uint64_t base = b.t + 5 * MS;
    b.t = base;
    opx(&b, "v3", "getattr", 12000, NULL, NULL, "fh=4 id=4");
    b.t = base + 15 * MS;
    opx(&b, "v3", "getattr", 1000, NULL, NULL, "fh=4 id=4");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    struct tbbt_compare_timing t;

    tbbt_compare_get_timing(c, &t);
    assert_int_equal(t.lag_count, 2);
    assert_int_equal(t.held_count, 1);
    assert_true(t.held_max > 1900000 && t.held_max < 2100000);
    assert_int_equal(t.react_count, 1);
    assert_true(t.react_max > 2900000 && t.react_max < 3100000);
    assert_true(t.own_max > 2900000 && t.own_max < 3100000);
}

/*
 * With a horizon of 8: a hole of 30 operations in the replay (READs at offsets 10..39
 * never sent) costs nothing more; in a second replay, a run of 30 extra WRITEs is
 * crossed and the traces find each other again after it.
 */
static void test_hole_and_extras_run(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    for (int i = 0; i < 60; i++)
        opf(&a, "read", "fh=3 id=3 offset=%d count=10 res_count=10 eof=0", i * 10);
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    for (int i = 0; i < 60; i++)
        if (i < 10 || i >= 40)
            opf(&b, "read", "fh=4 id=4 offset=%d count=10 res_count=10 eof=0", i * 10);
    char *hole = tb_finish(&b, "replay", map_b);
    tb_init(&b, 0x3000);
    startup(&b);
    for (int i = 0; i < 60; i++) {
        opf(&b, "read", "fh=4 id=4 offset=%d count=10 res_count=10 eof=0", i * 10);
        for (int j = 0; i == 20 && j < 30; j++)
            opf(&b, "write", "fh=4 id=4 offset=%d count=1 stable=2 res_count=1", 1000 + j);
    }
    char *run = tb_finish(&b, "replay", map_b);

    struct tbbt_compare *c = compare_h(pa, hole, 1, 8);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);
    assert_int_equal(n->matched, 30);
    assert_int_equal(n->missing, 30);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 0);

    /* The run is crossed at 2 replay operations per missing original one: after the
     * 21 READs before it, the next 23 go missing while the window reaches past the
     * WRITEs (F 24 + horizon 8 + 2 x 23 = 78, the replay index of READ 44), then the
     * last 16 match again; the 23 READs passed over are extra. */
    c = compare_h(pa, run, 1, 8);
    n = tbbt_compare_counts(c);
    assert_int_equal(n->matched, 21 + 16);
    assert_int_equal(n->missing, 23);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 30 + 23);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_EXTRA_OTHER, "write"), 30);

    /* A horizon larger than the run takes it in its stride. */
    c = compare_h(pa, run, 1, 64);
    n = tbbt_compare_counts(c);
    assert_int_equal(n->matched, 60);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 30);
}

/*
 * The original's root also has a start path elsewhere (another client's mount reaches it
 * by name): tbbt-init makes two directories, and this player used the second; the first
 * operation found in the replay decides, and every operation on the root matches.
 */
static void test_ambiguous_root(void **state)
{
    (void)state;
    static const char map_two[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "d")
        ENTRY("3", "f", "d/f") ENTRY("5", "d", "top") ENTRY("1", "d", "top/home");
    static const char map_img[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "img")
        ENTRY("3", "d", "img/d") ENTRY("4", "f", "img/d/f") ENTRY("6", "d", "img/top")
        ENTRY("7", "d", "img/top/home");
    struct tb a, b;
    tb_init(&a, 0x1000);
    for (int i = 0; i < 3; i++)
        op(&a, "lookup", "fh=1 id=1 name=\"d\" new_fh=2 obj_attr={type=2} id_obj=2");
    char *pa = tb_finish(&a, "orig", map_two);
    tb_init(&b, 0x2000);
    for (int i = 0; i < 3; i++)
        opx(&b, "v3", "lookup", 100, NULL, "NOENT", "fh=7 id=7 name=\"d\"");
    char *pb = tb_finish(&b, "replay", map_img);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_string_equal(tbbt_compare_root_b(c), "img");
    assert_int_equal(n->objects_ambiguous, 1);
    assert_int_equal(n->matched, 3);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_STATUS, "lookup:OK->NOENT"), 3);
}

/* Two clones in the image: the votes tie, the first clone wins; --root-b picks another. */
static void test_root_votes(void **state)
{
    (void)state;
    static const char map_clones[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "img")
        ENTRY("3", "d", "img/tbbt-clone-0") ENTRY("4", "d", "img/tbbt-clone-0/d")
        ENTRY("5", "f", "img/tbbt-clone-0/d/f") ENTRY("6", "d", "img/tbbt-clone-1")
        ENTRY("7", "d", "img/tbbt-clone-1/d") ENTRY("8", "f", "img/tbbt-clone-1/d/f");
    struct tb a, b;
    tb_init(&a, 0x1000);
    op(&a, "getattr", "fh=3 id=3");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    op(&b, "getattr", "fh=8 id=8");
    op(&b, "getattr", "fh=5 id=5");
    char *pb = tb_finish(&b, "replay", map_clones);
    struct tbbt_compare *c = compare(pa, pb, 1);

    assert_string_equal(tbbt_compare_root_b(c), "img/tbbt-clone-0");
    assert_int_equal(tbbt_compare_counts(c)->matched, 1);
    assert_int_equal(tbbt_compare_counts(c)->extra[TBBT_COMPARE_STARTUP], 1);

    struct tbbt_compare_opts o;
    char err[256] = "";
    tbbt_compare_opts_init(&o);
    o.trace_a = pa;
    o.trace_b = pb;
    o.root_b = "./img/tbbt-clone-1/";
    c = new_cmp(&o);
    assert_int_equal(tbbt_compare_run(c, err, sizeof(err)), 0);
    assert_string_equal(tbbt_compare_root_b(c), "img/tbbt-clone-1");
    assert_int_equal(tbbt_compare_counts(c)->matched, 1);

    o.root_b = "img/nowhere";
    c = new_cmp(&o);
    assert_true(tbbt_compare_run(c, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "img/nowhere"));
}

/* An original with nothing at trace start but its root: the image root is the end of the
 * replay's opening LOOKUP chain. */
static void test_root_chain(void **state)
{
    (void)state;
    static const char map_root[] = MAP_HDR ENTRY("1", "d", ".");
    static const char map_img[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "img")
        ENTRY("3", "d", "img/x");
    struct tb a, b;
    tb_init(&a, 0x1000);
    op(&a, "mkdir", "fh=1 id=1 name=\"new\" new_fh=2 id_obj=2");
    op(&a, "getattr", "fh=2 id=2");
    char *pa = tb_finish(&a, "orig", map_root);
    tb_init(&b, 0x2000);
    opx(&b, "mnt3", "mnt", 100, NULL, NULL, "dirpath=\"/export\" new_fh=1 id_obj=1");
    op(&b, "lookup", "fh=1 id=1 name=\"img\" new_fh=2 obj_attr={type=2} id_obj=2");
    op(&b, "mkdir", "fh=2 id=2 name=\"new\" new_fh=4 id_obj=4");
    op(&b, "getattr", "fh=4 id=4");
    op(&b, "lookup", "fh=2 id=2 name=\"x\" new_fh=3 obj_attr={type=2} id_obj=3");
    char *pb = tb_finish(&b, "replay", map_img);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_string_equal(tbbt_compare_root_b(c), "img");
    assert_int_equal(n->matched, 2);
    assert_int_equal(n->identical, 2);
    assert_int_equal(n->extra[TBBT_COMPARE_STARTUP], 2);
    assert_int_equal(n->extra[TBBT_COMPARE_VERIFY], 1);
}

/* ---- credentials, origin, image and racy replies ------------------------------------------- */

#define PLAYER_CRED "uid=0 gid=0"
#define CRED_A "uid=1001 gid=100"
#define CRED_B "uid=1001 gid=100"      /* same uid and gid as A, other machine and gids */

/*
 * Two clients, A ("ws01", gids 100,2001) and B ("ws02", gids 100), the same uid and gid,
 * each LOOKUP the same name and WRITE at the same offset; A may (OK), B may not (ACCES:
 * a supplementary group).  The replay sends B's first.  Without credentials in the key
 * the pairs would cross (two status differences, other counts); with them every pair is
 * identical.
 */
static void test_pairs_by_credential(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init_creds(&a, 0x1000, "cred 0 \"ws01\" 1001 100 100,2001\n"
                              "cred 1 \"ws02\" 1001 100 100\n");
    opx(&a, "v3", "lookup", 100, CRED_A, NULL,
        "fh=2 name=\"f\" new_fh=3 obj_attr={type=1,size=100} id=2 id_obj=3 cred=0");
    opx(&a, "v3", "lookup", 100, CRED_B, "ACCES", "fh=2 name=\"f\" id=2 cred=1");
    opx(&a, "v3", "write", 100, CRED_A, NULL,
        "fh=3 offset=0 count=10 stable=2 res_count=10 id=3 cred=0");
    opx(&a, "v3", "write", 100, CRED_B, "ACCES", "fh=3 offset=0 count=20 stable=2 id=3 cred=1");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init_creds(&b, 0x2000, "cred 0 \"tbbt-play\" 0 0 -\n"
                              "cred 1 \"ws02\" 1001 100 100\n"
                              "cred 2 \"ws01\" 1001 100 100,2001\n");
    opx(&b, "mnt3", "mnt", 100, PLAYER_CRED, NULL, "dirpath=\"/export\" new_fh=1 id_obj=1 cred=0");
    opx(&b, "v3", "lookup", 100, PLAYER_CRED, NULL,
        "fh=1 name=\"img\" new_fh=2 obj_attr={type=2} id=1 id_obj=2 cred=0");
    opx(&b, "v3", "lookup", 100, CRED_B, "ACCES", "fh=3 name=\"f\" id=3 cred=1");
    opx(&b, "v3", "write", 100, CRED_B, "ACCES", "fh=4 offset=0 count=20 stable=2 id=4 cred=1");
    opx(&b, "v3", "lookup", 100, CRED_A, NULL,
        "fh=3 name=\"f\" new_fh=4 obj_attr={type=1,size=100} id=3 id_obj=4 cred=2");
    opx(&b, "v3", "write", 100, CRED_A, NULL,
        "fh=4 offset=0 count=10 stable=2 res_count=10 id=4 cred=2");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_true(n->credentials);
    assert_int_equal(n->matched, 4);
    assert_int_equal(n->identical, 4);
    assert_int_equal(n->pairs_status_diff, 0);
    assert_int_equal(n->pairs_arg_diff, 0);
    assert_int_equal(n->extra[TBBT_COMPARE_STARTUP], 2);
}

/*
 * The player's own calls (machine name "tbbt-play") are start-up before the replay and
 * verify after it whatever their procedure (the grace probe's SETATTR, an FSSTAT); a
 * replayed call (a traced credential) is neither, even a LOOKUP after the last match.
 */
static void test_origin(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init_creds(&a, 0x1000, "cred 0 \"ws01\" 1001 100 100\n");
    opx(&a, "v3", "getattr", 100, CRED_A, NULL, "fh=3 obj_attr={type=1,size=100} id=3 cred=0");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init_creds(&b, 0x2000, "cred 0 \"tbbt-play\" 0 0 -\n"
                              "cred 1 \"ws01\" 1001 100 100\n");
    opx(&b, "mnt3", "mnt", 100, PLAYER_CRED, NULL, "dirpath=\"/export\" new_fh=1 id_obj=1 cred=0");
    opx(&b, "v3", "lookup", 100, PLAYER_CRED, NULL,
        "fh=1 name=\"img\" new_fh=2 obj_attr={type=2} id=1 id_obj=2 cred=0");
    opx(&b, "v3", "getattr", 100, PLAYER_CRED, NULL, "fh=2 obj_attr={type=2} id=2 cred=0");
    opx(&b, "v3", "setattr", 100, PLAYER_CRED, NULL,
        "fh=2 sattr={mask=mode,mode=0777} obj_attr={type=2} id=2 cred=0");
    opx(&b, "v3", "getattr", 100, CRED_A, NULL, "fh=4 obj_attr={type=1,size=100} id=4 cred=1");
    opx(&b, "v3", "lookup", 100, CRED_A, "NOENT", "fh=2 name=\"x\" id=2 cred=1");
    opx(&b, "v3", "readdirplus", 100, PLAYER_CRED, NULL,
        "fh=2 cookie=0 dircount=8192 maxcount=65536 res_count=1 eof=1 id=2 cred=0");
    opx(&b, "v3", "fsstat", 100, PLAYER_CRED, NULL, "fh=2 id=2 cred=0");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_true(n->credentials);
    assert_int_equal(n->matched, 1);
    assert_int_equal(n->extra[TBBT_COMPARE_STARTUP], 4);
    assert_int_equal(n->extra[TBBT_COMPARE_VERIFY], 2);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_EXTRA_OTHER, "lookup"), 1);

    /* The same traces without credentials (format 1.0): by phase and procedure, the
     * SETATTR and FSSTAT are other, the LOOKUP verify. */
    char *a10 = original();
    struct tb b10;
    tb_init(&b10, 0x3000);
    startup(&b10);
    op(&b10, "setattr", "fh=2 sattr={mask=mode,mode=0777} obj_attr={type=2} id=2");
    body(&b10, true);
    op(&b10, "lookup", "fh=2 name=\"x\" id=2");
    op(&b10, "fsstat", "fh=2 id=2");
    char *p10 = tb_finish(&b10, "replay", map_b);
    c = compare(a10, p10, 1);
    n = tbbt_compare_counts(c);
    assert_false(n->credentials);
    assert_int_equal(n->matched, 6);
    assert_int_equal(n->extra[TBBT_COMPARE_STARTUP], 4);
    assert_int_equal(n->extra[TBBT_COMPARE_VERIFY], 1);
    assert_int_equal(n->extra[TBBT_COMPARE_OTHER], 2);
}

/*
 * A directory's link count and size depend on entries the trace never saw: image
 * differences, not counted; its mode, and a file's link count, are real ones.
 */
static void test_image_diffs(void **state)
{
    (void)state;
    struct tb a, b;

    tb_init(&a, 0x1000);
    op(&a, "getattr", "fh=2 id=2 obj_attr={type=2,mode=0755,nlink=7,size=4096}");
    op(&a, "lookup", "fh=1 id=1 name=\"d\" new_fh=2 obj_attr={type=2,mode=0755,nlink=7,"
                     "size=4096} id_obj=2");
    op(&a, "getattr", "fh=3 id=3 obj_attr={type=1,mode=0644,nlink=2,size=10}");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "getattr", "fh=3 id=3 obj_attr={type=2,mode=0755,nlink=2,size=60}");
    op(&b, "lookup", "fh=2 id=2 name=\"d\" new_fh=3 obj_attr={type=2,mode=0700,nlink=2,"
                     "size=4096} id_obj=3");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,mode=0644,nlink=1,size=10}");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 3);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY_IMAGE, "getattr.attr.nlink"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY_IMAGE, "getattr.attr.size"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY_IMAGE, "lookup.attr.nlink"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "lookup.attr.nlink"), 0);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "lookup.attr.mode"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "getattr.attr.nlink"), 1);
    assert_int_equal(n->pairs_reply_image, 2);
    assert_int_equal(n->pairs_reply_diff, 2);
    assert_int_equal(n->pairs_reply_racy, 0);
}

/*
 * The player's attribute rule (tbbt_attrcheck_diff()): a reply showing another type is
 * one difference (attr.type), not also its size and link count; the size of a FIFO
 * means nothing; a file's size and link count are compared when the types agree.
 */
static void test_attr_rule(void **state)
{
    (void)state;
    struct tb a, b;
    struct tbbt_fattr t = {.type = 1, .mode = 0100644, .nlink = 1, .size = 10};
    struct tbbt_fattr g = t;

    g.mode = 0644;              /* the file type bits are not compared */
    assert_int_equal(tbbt_attrcheck_diff(&t, &g), 0);
    g.type = 2;
    g.size = 4096;
    g.nlink = 2;
    assert_int_equal(tbbt_attrcheck_diff(&t, &g), TBBT_ATTRCHECK_TYPE);
    t = g;
    g.size = 60;
    g.nlink = 3;
    assert_int_equal(tbbt_attrcheck_diff(&t, &g),
                     TBBT_ATTRCHECK_DIR_SIZE | TBBT_ATTRCHECK_DIR_NLINK);

    tb_init(&a, 0x1000);
    op(&a, "getattr", "fh=3 id=3 obj_attr={type=1,mode=0644,nlink=1,size=10}");
    op(&a, "getattr", "fh=3 id=3 obj_attr={type=7,mode=0644,nlink=1,size=0}");
    op(&a, "getattr", "fh=3 id=3 obj_attr={type=1,mode=0644,nlink=1,size=10}");
    char *pa = tb_finish(&a, "orig", map_a);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=2,mode=0644,nlink=2,size=4096}");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=7,mode=0644,nlink=1,size=5}");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,mode=0644,nlink=2,size=11}");
    char *pb = tb_finish(&b, "replay", map_b);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 3);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "getattr.attr.type"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "getattr.attr.size"), 1);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "getattr.attr.nlink"), 1);
    assert_int_equal(n->pairs_reply_diff, 2);
    assert_int_equal(n->pairs_reply_image, 0);
}

/*
 * In the original a GETATTR of f overlapped a WRITE of f twice: called while the WRITE
 * was in progress (an earlier writer), and with the WRITE called before its reply (a
 * later one); both replies showed the size from before the write, the replay's from
 * after: racy differences, not counted.  A third GETATTR after the writes, with another
 * size, is a real difference; so is one that overlapped only a WRITE of another file.
 */
static void test_racy(void **state)
{
    (void)state;
    static const char map_g[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "d")
        ENTRY("3", "f", "d/f") ENTRY("4", "f", "d/g");
    static const char map_gb[] = MAP_HDR ENTRY("1", "d", ".") ENTRY("2", "d", "img")
        ENTRY("3", "d", "img/d") ENTRY("4", "f", "img/d/f") ENTRY("5", "f", "img/d/g");
    struct tb a, b;

    tb_init(&a, 0x1000);
    a.t = 0;
    opx(&a, "v3", "write", 5000, NULL, NULL, "fh=3 id=3 offset=100 count=10 stable=2 "
        "res_count=10 obj_attr={type=1,size=110}");
    a.t = 1 * MS;
    opx(&a, "v3", "getattr", 1000, NULL, NULL, "fh=3 id=3 obj_attr={type=1,size=100}");
    a.t = 10 * MS;
    opx(&a, "v3", "getattr", 5000, NULL, NULL, "fh=3 id=3 obj_attr={type=1,size=110}");
    a.t = 11 * MS;
    opx(&a, "v3", "write", 100, NULL, NULL, "fh=3 id=3 offset=110 count=10 stable=2 "
        "res_count=10 obj_attr={type=1,size=120}");
    a.t = 20 * MS;
    opx(&a, "v3", "getattr", 100, NULL, NULL, "fh=3 id=3 obj_attr={type=1,size=120}");
    a.t = 30 * MS;
    opx(&a, "v3", "write", 5000, NULL, NULL, "fh=4 id=4 offset=0 count=10 stable=2 "
        "res_count=10 obj_attr={type=1,size=10}");
    a.t = 31 * MS;
    opx(&a, "v3", "getattr", 100, NULL, NULL, "fh=3 id=3 obj_attr={type=1,size=120}");
    char *pa = tb_finish(&a, "orig", map_g);
    tb_init(&b, 0x2000);
    startup(&b);
    op(&b, "write", "fh=4 id=4 offset=100 count=10 stable=2 res_count=10 "
                    "obj_attr={type=1,size=110}");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=110}");
    op(&b, "write", "fh=4 id=4 offset=110 count=10 stable=2 res_count=10 "
                    "obj_attr={type=1,size=120}");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=120}");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=130}");
    op(&b, "write", "fh=5 id=5 offset=0 count=10 stable=2 res_count=10 "
                    "obj_attr={type=1,size=10}");
    op(&b, "getattr", "fh=4 id=4 obj_attr={type=1,size=130}");
    char *pb = tb_finish(&b, "replay", map_gb);
    struct tbbt_compare *c = compare(pa, pb, 1);
    const struct tbbt_compare_counts *n = tbbt_compare_counts(c);

    assert_int_equal(n->matched, 7);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY_RACY, "getattr.attr.size"), 2);
    assert_int_equal(tbbt_compare_diff(c, TBBT_COMPARE_REPLY, "getattr.attr.size"), 2);
    assert_int_equal(n->pairs_reply_racy, 2);
    assert_int_equal(n->pairs_reply_diff, 2);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct tbbt_compare_opts o;
    char err[256] = "";
    char *junk = g_strdup_printf("%s/junk.tbbt", tmpdir);

    assert_true(g_file_set_contents(junk, "not a trace", -1, NULL));
    tbbt_compare_opts_init(&o);
    o.trace_a = junk;
    o.trace_b = junk;
    o.map_a = o.map_b = "/nonexistent/map";
    struct tbbt_compare *c = tbbt_compare_new(&o);
    assert_true(tbbt_compare_run(c, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "original map"));
    tbbt_compare_free(c);
    g_free(junk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_identical, teardown),
        cmocka_unit_test_teardown(test_missing, teardown),
        cmocka_unit_test_teardown(test_retry, teardown),
        cmocka_unit_test_teardown(test_rewrites, teardown),
        cmocka_unit_test_teardown(test_early_continuation, teardown),
        cmocka_unit_test_teardown(test_page_split, teardown),
        cmocka_unit_test_teardown(test_status_and_args, teardown),
        cmocka_unit_test_teardown(test_reorder, teardown),
        cmocka_unit_test_teardown(test_created_objects, teardown),
        cmocka_unit_test_teardown(test_lag, teardown),
        cmocka_unit_test_teardown(test_lag_held, teardown),
        cmocka_unit_test_teardown(test_hole_and_extras_run, teardown),
        cmocka_unit_test_teardown(test_root_votes, teardown),
        cmocka_unit_test_teardown(test_ambiguous_root, teardown),
        cmocka_unit_test_teardown(test_root_chain, teardown),
        cmocka_unit_test_teardown(test_pairs_by_credential, teardown),
        cmocka_unit_test_teardown(test_origin, teardown),
        cmocka_unit_test_teardown(test_image_diffs, teardown),
        cmocka_unit_test_teardown(test_attr_rule, teardown),
        cmocka_unit_test_teardown(test_racy, teardown),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
