/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the player's start-up and --verify bookkeeping (src/player/resolve.h,
 * src/player/verify.h): manifest parsing (a good file, escapes, hostile path components,
 * a missing or failed status, malformed and unknown lines, the clone count), the path of
 * the image root under the export, and tbbt_verify_sizes_note() on hand-built records
 * of NFSv3 and NFSv2.  The LOOKUPs and the tree walk need a server: they are checked
 * against the lab NFS-Ganesha server by hand (see tests/integration).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "player/resolve.h"
#include "player/verify.h"
#include "proto/nfs3.h"
#include "util/crc32.h"
#include "util/textsum.h"
#include "util/util.h"

#define HEADER "# tbbt-manifest 1\n"
#define TAIL "stats\tdirs 1 files 2\nstatus\tcomplete\n"

static char tmpdir[] = "/tmp/test-resolve-XXXXXX";
static int seq;

static int group_setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
    int rc = system(cmd);

    (void)state;
    g_free(cmd);
    return rc == 0 ? 0 : -1;
}

/* Writes text to a new file in tmpdir; returns its path (g_free). */
static char *write_file(const char *text, size_t len)
{
    char *path = g_strdup_printf("%s/m%d", tmpdir, ++seq);
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* Loads text as a manifest; returns the rc, *m set on success, err the reason. */
static int load_text(const char *text, struct tbbt_manifest **m, char *err, size_t errlen)
{
    char *path = write_file(text, strlen(text));
    int rc;

    *m = NULL;
    err[0] = 0;
    rc = tbbt_manifest_load(path, m, err, errlen);
    g_free(path);
    return rc;
}

static void expect_error(const char *text, int want_rc, const char *want_msg)
{
    struct tbbt_manifest *m;
    char err[512];
    int rc = load_text(text, &m, err, sizeof(err));

    if (rc != want_rc || !strstr(err, want_msg))
        print_error("rc %d (want %d), err '%s' (want '%s')\n", rc, want_rc, err, want_msg);
    assert_int_equal(rc, want_rc);
    assert_null(m);
    assert_non_null(strstr(err, "manifest '"));
    assert_non_null(strstr(err, want_msg));
}

/* text (a version 2 manifest without its checksum line) with the line appended. */
static char *summed(const char *text)
{
    char line[TBBT_TEXTSUM_LINE];

    tbbt_textsum_line(line, tbbt_crc32(0, text, strlen(text)));
    return g_strconcat(text, line, NULL);
}

#define HEADER2 "# tbbt-manifest 2\nmap\tm.map\nmap-crc32\t0a0b0c0d\nclone\t.\nobj\t3\ta\n"

/* Version 2: the checksum line is checked before any other line; map-crc32. */
static void test_manifest_checksum(void **state)
{
    struct tbbt_manifest *m;
    char err[512], *text, *bad;

    (void)state;
    text = summed(HEADER2 TAIL);
    assert_int_equal(load_text(text, &m, err, sizeof(err)), 0);
    assert_int_equal(m->version, 2);
    assert_true(m->have_map_crc);
    assert_int_equal(m->map_crc, 0x0a0b0c0d);
    tbbt_manifest_free(m);
    /* one byte changed: the path of object 3 */
    bad = g_strdup(text);
    *strstr(bad, "obj\t3\ta") = 'O';
    expect_error(bad, TBBT_E_CHECKSUM, "line 8: the checksum does not match");
    g_free(bad);
    /* cut short, and a version 1 header over a version 2 body */
    bad = g_strndup(text, strlen(text) - 5);
    expect_error(bad, TBBT_E_TRUNC, "no checksum line at the end");
    g_free(bad);
    bad = g_strdup(text);
    bad[16] = '1';
    expect_error(bad, TBBT_E_SYNTAX, "line 8: line after the status line");
    g_free(bad);
    g_free(text);
    expect_error(HEADER2 TAIL, TBBT_E_TRUNC, "no checksum line");
    text = summed("# tbbt-manifest 3\nclone\t.\n" TAIL);
    expect_error(text, TBBT_E_VERSION, "line 1: not a tbbt manifest of a known version");
    g_free(text);
    /* map-crc32 itself: eight lowercase hex digits, once */
    text = summed("# tbbt-manifest 2\nmap-crc32\t0A0B0C0D\nclone\t.\n" TAIL);
    expect_error(text, TBBT_E_SYNTAX, "line 2: bad or second map-crc32 line");
    g_free(text);
    text = summed(HEADER2 "map-crc32\t0a0b0c0d\n" TAIL);
    expect_error(text, TBBT_E_SYNTAX, "line 6: bad or second map-crc32 line");
    g_free(text);
}

static void test_manifest_good(void **state)
{
    const char *text = HEADER
        "map\t/tmp/x.map\n"
        "root\t/srv/img\n"
        "seed\t1\nclones\t3\nscope\t0\nappends\t1\n"
        "classes\tsynthetic_appends 1 filler_appends 1 large_size 0 large_appends 1\n"
        "fill\tfill 0.0000 dir_ratio 0.1000\n"
        "made\td\ttbbt-clone-0\n"
        "clone\ttbbt-clone-0\n"
        "made\td\ttbbt-clone-0/a\n"
        "obj\t2\ta\n"
        "made\tf\ttbbt-clone-0/a/f\n"
        "obj\t3\ta/f\n"
        "obj\t4\ta/sp\\x20ace\\\\back\n"
        "obj\t5\t\\x2d\n"
        "obj\t1\t.\n"
        "made\td\ttbbt-clone-1\nclone\ttbbt-clone-1\n"
        "made\td\ttbbt-clone-2\nclone\ttbbt-clone-2\n"
        TAIL;
    struct tbbt_manifest *m;
    char err[256];

    (void)state;
    assert_int_equal(load_text(text, &m, err, sizeof(err)), 0);
    assert_string_equal(m->map, "/tmp/x.map");
    assert_string_equal(m->root, "/srv/img");
    assert_true(m->complete);
    assert_int_equal(m->clones->len, 3);
    assert_string_equal(m->clones->pdata[0], "tbbt-clone-0");
    assert_string_equal(m->clones->pdata[2], "tbbt-clone-2");
    assert_int_equal(m->objs->len, 5);
    struct tbbt_manifest_obj *o = &g_array_index(m->objs, struct tbbt_manifest_obj, 0);
    assert_int_equal(o[0].id, 2);
    assert_string_equal(o[0].path, "a");
    assert_int_equal(o[1].id, 3);
    assert_string_equal(o[1].path, "a/f");
    assert_int_equal(o[1].len, 3);
    assert_string_equal(o[2].path, "a/sp ace\\back");
    assert_string_equal(o[3].path, "-");
    assert_int_equal(o[4].id, 1);
    assert_string_equal(o[4].path, ".");
    tbbt_manifest_free(m);
    tbbt_manifest_free(NULL);
}

static void test_manifest_one_clone(void **state)
{
    struct tbbt_manifest *m;
    char err[256];

    (void)state;
    assert_int_equal(load_text(HEADER "clone\t.\nobj\t7\tx\\x01y\n" TAIL, &m, err, sizeof(err)),
                     0);
    assert_null(m->map);
    assert_null(m->root);
    assert_int_equal(m->clones->len, 1);
    assert_string_equal(m->clones->pdata[0], ".");
    assert_int_equal(m->objs->len, 1);
    assert_memory_equal(g_array_index(m->objs, struct tbbt_manifest_obj, 0).path, "x\x01y", 4);
    tbbt_manifest_free(m);
}

/* An image built through NFS (tbbt-init --server): server and export lines. */
static void test_manifest_nfs(void **state)
{
    struct tbbt_manifest *m;
    char err[256];

    (void)state;
    assert_int_equal(load_text(HEADER "map\t/tmp/x.map\nroot\t/srv/export/img\n"
                               "server\tnas1.example\nexport\t/srv/export\nseed\t1\n"
                               "clone\t.\nobj\t2\ta\n" TAIL, &m, err, sizeof(err)), 0);
    assert_string_equal(m->server, "nas1.example");
    assert_string_equal(m->export_path, "/srv/export");
    assert_string_equal(m->root, "/srv/export/img");
    char *rel = NULL;
    assert_int_equal(tbbt_resolve_relpath(m->export_path, m->root, &rel, err, sizeof(err)), 0);
    assert_string_equal(rel, "img");
    g_free(rel);
    tbbt_manifest_free(m);
    /* a local build has neither */
    assert_int_equal(load_text(HEADER "clone\t.\n" TAIL, &m, err, sizeof(err)), 0);
    assert_null(m->server);
    assert_null(m->export_path);
    tbbt_manifest_free(m);
    expect_error(HEADER "clone\t.\nserver\ta\nserver\tb\n" TAIL, TBBT_E_SYNTAX,
                 "line 4: second server line");
    expect_error(HEADER "clone\t.\nexport\t/a\texport\n" TAIL, TBBT_E_SYNTAX,
                 "export line has 3 fields");
    expect_error(HEADER "clone\t.\nexport\t\\x00\n" TAIL, TBBT_E_SYNTAX, "bad export path");
    expect_error(HEADER "clone\t.\nserver\t\n" TAIL, TBBT_E_SYNTAX, "bad server path");
}

static void test_manifest_hostile(void **state)
{
    static const char *const bad_paths[] = {
        "..", "a/..", "../a", "a/./b", "a//b", "/a", "a/", "a/\\x2fb", "a\\x00b", "\\x2e\\x2e",
        "", "a/b\\", "a\\xZZ", "a\\x2",
    };
    char text[1024];

    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(bad_paths); i++) {
        snprintf(text, sizeof(text), HEADER "clone\t.\nobj\t3\t%s\n" TAIL, bad_paths[i]);
        expect_error(text, TBBT_E_SYNTAX, "line 3: ");
    }
    /* a component of 256 bytes */
    GString *s = g_string_new(HEADER "clone\t.\nobj\t3\ta/");
    for (int i = 0; i < 256; i++)
        g_string_append_c(s, 'x');
    g_string_append(s, "\n" TAIL);
    expect_error(s->str, TBBT_E_SYNTAX, "component 2");
    g_string_free(s, TRUE);
    expect_error(HEADER "clone\t..\n" TAIL, TBBT_E_SYNTAX, "line 2: clone path");
    expect_error(HEADER "clone\t.\nmade\td\t.\n" TAIL, TBBT_E_SYNTAX, "'.' is not allowed");
    expect_error(HEADER "clone\t.\nmade\td\t../x\n" TAIL, TBBT_E_SYNTAX, "line 3: made path");
    /* a raw control byte in a path */
    expect_error(HEADER "clone\t.\nobj\t3\ta\x01" "b\n" TAIL, TBBT_E_SYNTAX, "bad escape");
}

static void test_manifest_status(void **state)
{
    (void)state;
    expect_error(HEADER "clone\t.\nobj\t3\ta\n", TBBT_E_TRUNC, "no status line");
    expect_error(HEADER "clone\t.\nobj\t3\ta\nstatus\tfailed\tcannot\\x20write 'x'\n", -EIO,
                 "line 4: tbbt-init failed: cannot write 'x'");
    expect_error(HEADER "clone\t.\nstatus\tcomplete\nobj\t3\ta\n", TBBT_E_SYNTAX,
                 "line 4: line after the status line");
    expect_error(HEADER "clone\t.\nstatus\tdone\n", TBBT_E_SYNTAX, "line 3: bad status line");
    expect_error(HEADER "clone\t.\nstatus\tcomplete", TBBT_E_TRUNC, "line 3: the last line");
    expect_error(HEADER "status\tcomplete\n", TBBT_E_SYNTAX, "no clone line");
    expect_error(HEADER "clones\t2\nclone\ttbbt-clone-0\n" TAIL, TBBT_E_SYNTAX,
                 "1 clone lines, but clones says 2");
}

static void test_manifest_malformed(void **state)
{
    struct tbbt_manifest *m;
    char err[256];

    (void)state;
    expect_error("", TBBT_E_MAGIC, "empty file");
    expect_error("# tbbt-map 2\n", TBBT_E_MAGIC, "line 1: not a tbbt manifest");
    expect_error(HEADER "clone\t.\nbogus\t1\n" TAIL, TBBT_E_SYNTAX, "line 3: unknown line 'bogus'");
    expect_error(HEADER "clone\t.\n\n" TAIL, TBBT_E_SYNTAX, "line 3: malformed line");
    expect_error(HEADER "clone\t.\n# comment\n" TAIL, TBBT_E_SYNTAX, "line 3: malformed");
    expect_error(HEADER "clone\t.\nobj\t3\n" TAIL, TBBT_E_SYNTAX, "obj line has 2 fields");
    expect_error(HEADER "clone\t.\nobj\t3\ta\tb\n" TAIL, TBBT_E_SYNTAX, "obj line has 4 fields");
    expect_error(HEADER "clone\t.\nobj\t03\ta\n" TAIL, TBBT_E_SYNTAX, "bad TBBT-ID '03'");
    expect_error(HEADER "clone\t.\nobj\t-3\ta\n" TAIL, TBBT_E_SYNTAX, "bad TBBT-ID");
    expect_error(HEADER "clone\t.\nobj\t99999999999999999999\ta\n" TAIL, TBBT_E_SYNTAX,
                 "bad TBBT-ID");
    expect_error(HEADER "clone\t.\nseed\tx\n" TAIL, TBBT_E_SYNTAX, "bad number 'x' in seed line");
    expect_error(HEADER "clone\t.\nmade\tq\ta\n" TAIL, TBBT_E_SYNTAX, "bad made kind 'q'");
    expect_error(HEADER "clone\t.\nroot\t/a\nroot\t/b\n" TAIL, TBBT_E_SYNTAX, "second root");
    expect_error(HEADER "clone\t.\nstats\t\n" TAIL, TBBT_E_SYNTAX, "empty stats line");
    expect_error(HEADER "clone\t.\nclones\t0\n" TAIL, TBBT_E_SYNTAX, "bad or second clones");
    /* a NUL byte inside a line */
    {
        static const char t[] = HEADER "clone\t.\nobj\t3\ta\0b\n" TAIL;
        char *path = write_file(t, sizeof(t) - 1);
        assert_int_equal(tbbt_manifest_load(path, &m, err, sizeof(err)), TBBT_E_SYNTAX);
        assert_non_null(strstr(err, "line 3: NUL byte"));
        g_free(path);
    }
    /* a missing file; errlen 0 is allowed */
    {
        char *path = g_strdup_printf("%s/absent", tmpdir);
        assert_int_equal(tbbt_manifest_load(path, &m, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "cannot open"));
        assert_int_equal(tbbt_manifest_load(path, &m, NULL, 0), -ENOENT);
        g_free(path);
    }
}

static void test_relpath(void **state)
{
    char *rel = NULL, err[256];

    (void)state;
    assert_int_equal(tbbt_resolve_relpath("/var/export", "/var/export/a/b", &rel, err,
                                          sizeof(err)), 0);
    assert_string_equal(rel, "a/b");
    g_free(rel);
    assert_int_equal(tbbt_resolve_relpath("/var/export/", "//var/./export", &rel, err,
                                          sizeof(err)), 0);
    assert_string_equal(rel, "");
    g_free(rel);
    assert_int_equal(tbbt_resolve_relpath("/", "/x", &rel, err, sizeof(err)), 0);
    assert_string_equal(rel, "x");
    g_free(rel);
    assert_int_equal(tbbt_resolve_relpath("/var/export", "/var/exportx/a", &rel, err,
                                          sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "not under the export"));
    assert_int_equal(tbbt_resolve_relpath("/var/export", "/var/export/../etc", &rel, err,
                                          sizeof(err)), -EINVAL);
    assert_int_equal(tbbt_resolve_relpath("/var/export/a", "/var/export", &rel, err,
                                          sizeof(err)), -EINVAL);
    assert_int_equal(tbbt_resolve_relpath("/var/export", "var/export/a", &rel, err,
                                          sizeof(err)), -EINVAL);
}

/* ---- sizes ------------------------------------------------------------------------------ */

/* A record of prog/proc whose reply carries obj_attr of type and size. */
static void rec_attr(struct tbbt_trace_rec *r, int prog, int proc, uint32_t type, uint64_t size)
{
    tbbt_trace_rec_clear(r);
    r->prog = (uint8_t)prog;
    r->proc = (uint8_t)proc;
    r->flags = TBBT_RF_REPLY | TBBT_RF_STATUS;
    r->obj_attr.type = type;
    r->obj_attr.size = size;
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
}

static void set_ids(struct tbbt_trace_rec *r, uint64_t id, uint64_t id_obj)
{
    if (id) {
        r->id = id;
        TBBT_SET(r, TBBT_F_ID);
    }
    if (id_obj) {
        r->id_obj = id_obj;
        TBBT_SET(r, TBBT_F_ID_OBJ);
    }
}

static uint64_t size_of(const struct tbbt_verify_sizes *s, uint64_t id)
{
    uint64_t v = 0;

    return tbbt_verify_sizes_get(s, id, &v) ? v : UINT64_MAX;
}

static void test_sizes_v3(void **state)
{
    struct tbbt_verify_sizes *s = tbbt_verify_sizes_new();
    struct tbbt_trace_rec r;

    (void)state;
    tbbt_trace_rec_init(&r);
    assert_false(tbbt_verify_sizes_get(s, 5, &(uint64_t){ 0 }));
    /* GETATTR (1): obj_attr is rec->id's */
    rec_attr(&r, TBBT_PROG_NFS3, 1, 1, 100);
    set_ids(&r, 5, 9);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 5), 100);
    assert_int_equal(size_of(s, 9), UINT64_MAX);
    /* WRITE (7) later: last wins */
    rec_attr(&r, TBBT_PROG_NFS3, 7, 1, 4096);
    set_ids(&r, 5, 0);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 5), 4096);
    /* SETATTR (2) truncating to 0: a size of 0 is a size */
    rec_attr(&r, TBBT_PROG_NFS3, 2, 1, 0);
    set_ids(&r, 5, 0);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 5), 0);
    /* LOOKUP (3) and CREATE (8): obj_attr is rec->id_obj's, not the directory's */
    rec_attr(&r, TBBT_PROG_NFS3, 3, 1, 33);
    set_ids(&r, 2, 6);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 6), 33);
    assert_int_equal(size_of(s, 2), UINT64_MAX);
    rec_attr(&r, TBBT_PROG_NFS3, 8, 1, 0);
    set_ids(&r, 2, 7);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 7), 0);
    /* READ (6), COMMIT (21), ACCESS (4), LINK (15): rec->id */
    static const int procs[] = { 6, 21, 4, 15 };
    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        rec_attr(&r, TBBT_PROG_NFS3, procs[i], 1, 1000 + i);
        set_ids(&r, 10 + i, 20 + i);
        tbbt_verify_sizes_note(s, &r);
        assert_int_equal(size_of(s, 10 + i), 1000 + i);
        assert_int_equal(size_of(s, 20 + i), UINT64_MAX);
    }
    /* a directory's or a symlink's attributes are not noted */
    rec_attr(&r, TBBT_PROG_NFS3, 1, 2, 4096);
    set_ids(&r, 30, 0);
    tbbt_verify_sizes_note(s, &r);
    rec_attr(&r, TBBT_PROG_NFS3, 10, 5, 7);      /* SYMLINK */
    set_ids(&r, 2, 31);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 30), UINT64_MAX);
    assert_int_equal(size_of(s, 31), UINT64_MAX);
    /* no attributes, or no ID: nothing */
    rec_attr(&r, TBBT_PROG_NFS3, 1, 1, 5);
    r.present = 0;
    set_ids(&r, 40, 0);
    tbbt_verify_sizes_note(s, &r);
    rec_attr(&r, TBBT_PROG_NFS3, 1, 1, 5);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 40), UINT64_MAX);
    /* REMOVE (12) carries no obj_attr meaning: ignored even if present */
    rec_attr(&r, TBBT_PROG_NFS3, 12, 1, 77);
    set_ids(&r, 2, 41);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 41), UINT64_MAX);
    assert_int_equal(size_of(s, 2), UINT64_MAX);
    /* a large ID makes its page; IDs >= 2^32 are ignored */
    rec_attr(&r, TBBT_PROG_NFS3, 1, 1, 12);
    set_ids(&r, 3000000, 0);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 3000000), 12);
    set_ids(&r, (uint64_t)1 << 33, 0);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, (uint64_t)1 << 33), UINT64_MAX);
    assert_int_equal(size_of(s, 5), 0);
    tbbt_trace_rec_fini(&r);
    tbbt_verify_sizes_free(s);
    tbbt_verify_sizes_free(NULL);
}

static void test_sizes_readdirplus_and_v2(void **state)
{
    struct tbbt_verify_sizes *s = tbbt_verify_sizes_new();
    struct tbbt_trace_rec r;
    struct tbbt_entry *e;

    (void)state;
    tbbt_trace_rec_init(&r);
    /* READDIRPLUS (17): the directory's own attributes are not an entry's */
    rec_attr(&r, TBBT_PROG_NFS3, 17, 2, 4096);
    set_ids(&r, 1, 0);
    e = tbbt_trace_rec_add_entry(&r);
    e->flags = TBBT_ENT_ATTR | TBBT_ENT_ID | TBBT_ENT_FH;
    e->attr.type = 1;
    e->attr.size = 512;
    e->id = 50;
    e = tbbt_trace_rec_add_entry(&r);
    e->flags = TBBT_ENT_ATTR;           /* no ID: the model could not name it */
    e->attr.type = 1;
    e->attr.size = 1;
    e = tbbt_trace_rec_add_entry(&r);
    e->flags = TBBT_ENT_ID;             /* no attributes */
    e->id = 51;
    e = tbbt_trace_rec_add_entry(&r);
    e->flags = TBBT_ENT_ATTR | TBBT_ENT_ID;
    e->attr.type = 2;                   /* a directory */
    e->id = 52;
    TBBT_SET(&r, TBBT_F_ENTRIES);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 50), 512);
    assert_int_equal(size_of(s, 51), UINT64_MAX);
    assert_int_equal(size_of(s, 52), UINT64_MAX);
    assert_int_equal(size_of(s, 1), UINT64_MAX);
    /* NFSv2: GETATTR 1, LOOKUP 4, WRITE 8, CREATE 9 */
    rec_attr(&r, TBBT_PROG_NFS2, 8, 1, 8192);
    set_ids(&r, 60, 0);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 60), 8192);
    rec_attr(&r, TBBT_PROG_NFS2, 4, 1, 10);
    set_ids(&r, 2, 61);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 61), 10);
    rec_attr(&r, TBBT_PROG_NFS2, 9, 1, 0);
    set_ids(&r, 2, 62);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 62), 0);
    assert_int_equal(size_of(s, 2), UINT64_MAX);
    /* MOUNT records are ignored */
    rec_attr(&r, TBBT_PROG_MNT3, 1, 1, 3);
    set_ids(&r, 63, 63);
    tbbt_verify_sizes_note(s, &r);
    assert_int_equal(size_of(s, 63), UINT64_MAX);
    tbbt_trace_rec_fini(&r);
    tbbt_verify_sizes_free(s);
}


static bool want_pick(uint64_t id, void *arg)
{
    const uint64_t *pick = arg;

    return id == pick[0] || id == pick[1];
}

/* ---- tbbt_resolve_run() against a fake UDP NFSv3 server ------------------------------- */

/*
 * The fake server answers LOOKUP only.  A handle is the path from the export root ("R",
 * then "R/a/b"); names tell it what to do: "missing*" -> NOENT, "deny*" -> ACCES, "drop*"
 * -> the first datagram of each XID is dropped (the client must retransmit), "silent*"
 * -> never answered.
 */
struct fake {
    int fd;
    uint16_t port;
    pthread_t thread;
    atomic_bool stop;
    atomic_int lookups, dropped;
    GHashTable *seen_xids;      /* server thread only */
};

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The offset of the arguments after the call header at p[0..n), or 0. */
static size_t call_args(const uint8_t *p, size_t n)
{
    size_t off = 24;                    /* xid, CALL, rpcvers, prog, vers, proc */
    for (int k = 0; k < 2; k++) {       /* cred, verf */
        if (off + 8 > n)
            return 0;
        off += 8 + ((get32(p + off + 4) + 3) & ~3u);
    }
    return off <= n ? off : 0;
}

static void fake_answer(struct fake *f, const uint8_t *p, size_t n, struct sockaddr_in *from)
{
    size_t off = call_args(p, n);
    LOOKUP3args a;
    LOOKUP3res res;
    uint8_t out[1024], fh[64];
    XDR x;

    if (!off || get32(p + 20) != 3)
        return;
    memset(&a, 0, sizeof(a));
    xdrmem_create(&x, (char *)p + off, (u_int)(n - off), XDR_DECODE);
    if (!xdr_LOOKUP3args(&x, &a))
        return;
    atomic_fetch_add(&f->lookups, 1);
    const char *name = a.what.name;
    gpointer key = GUINT_TO_POINTER(get32(p));
    bool again = g_hash_table_contains(f->seen_xids, key);
    g_hash_table_add(f->seen_xids, key);
    if (g_str_has_prefix(name, "silent") || (g_str_has_prefix(name, "drop") && !again)) {
        atomic_fetch_add(&f->dropped, 1);
        xdr_free((xdrproc_t)xdr_LOOKUP3args, &a);
        return;
    }
    memset(&res, 0, sizeof(res));
    if (g_str_has_prefix(name, "missing")) {
        res.status = NFS3ERR_NOENT;
    } else if (g_str_has_prefix(name, "deny")) {
        res.status = NFS3ERR_ACCES;
    } else {
        int len = snprintf((char *)fh, sizeof(fh), "%.*s/%s", (int)a.what.dir.data.data_len,
                           a.what.dir.data.data_val, name);
        res.status = NFS3_OK;
        res.LOOKUP3res_u.resok.object.data.data_len = (u_int)MIN(len, 64);
        res.LOOKUP3res_u.resok.object.data.data_val = (char *)fh;
    }
    xdr_free((xdrproc_t)xdr_LOOKUP3args, &a);
    static const uint32_t head[] = { 1, 0, 0, 0, 0 };  /* REPLY, ACCEPTED, AUTH_NONE 0, SUCCESS */
    memcpy(out, p, 4);
    for (size_t k = 0; k < G_N_ELEMENTS(head); k++) {
        uint32_t v = htonl(head[k]);
        memcpy(out + 4 + 4 * k, &v, 4);
    }
    xdrmem_create(&x, (char *)out + 24, sizeof(out) - 24, XDR_ENCODE);
    assert_true(xdr_LOOKUP3res(&x, &res));
    sendto(f->fd, out, 24 + xdr_getpos(&x), 0, (struct sockaddr *)from, sizeof(*from));
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    uint8_t buf[65536];

    while (!atomic_load(&f->stop)) {
        struct pollfd pfd = { .fd = f->fd, .events = POLLIN };
        if (poll(&pfd, 1, 20) <= 0)
            continue;
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(f->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (n > 0)
            fake_answer(f, buf, (size_t)n, &from);
    }
    return NULL;
}

static void fake_start(struct fake *f)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);

    memset(f, 0, sizeof(*f));
    f->seen_xids = g_hash_table_new(g_direct_hash, g_direct_equal);
    f->fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(f->fd >= 0);
    assert_int_equal(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(f->fd, (struct sockaddr *)&sa, &len), 0);
    f->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

static void fake_stop(struct fake *f)
{
    atomic_store(&f->stop, true);
    pthread_join(f->thread, NULL);
    close(f->fd);
    g_hash_table_destroy(f->seen_xids);
}

static struct tbbt_rpcconn *fake_conn(const struct fake *f)
{
    struct tbbt_rpcconn_opts o = { .transport = TBBT_RPCCONN_UDP };
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(&o);

    assert_int_equal(tbbt_rpcconn_connect(c, "127.0.0.1", f->port), 0);
    return c;
}

static const struct tbbt_rpcconn_fh fake_root = { .len = 1, .data = "R" };

/* The handle bound to id as a string ("" if none) and its state. */
static const char *bound(const struct tbbt_handles *h, uint64_t id, int *state)
{
    static char s[TBBT_HANDLE_MAX + 1];
    const struct tbbt_handle *x = tbbt_handles_peek(h, id);

    *state = x ? x->state : TBBT_HANDLE_NONE;
    s[0] = 0;
    if (x && x->state == TBBT_HANDLE_KNOWN)
        snprintf(s, sizeof(s), "%.*s", (int)x->len, (const char *)x->data);
    return s;
}

#define FAKE_MANIFEST HEADER "clones\t2\nclone\ttbbt-clone-0\nclone\ttbbt-clone-1\n" \
    "obj\t2\ta\nobj\t3\ta/b\nobj\t4\ta/b/f\nobj\t5\tc/d/g\nobj\t6\tdrop1\nobj\t7\ta/drop2\n" \
    "obj\t8\tmissing1\nobj\t9\tmissing2/x\nobj\t10\tmissing2/y/z\nobj\t11\ta/deny\n" \
    "obj\t12\ta/deny/q\n" TAIL

static void test_resolve_fake(void **state)
{
    struct fake f;
    struct tbbt_manifest *m;
    struct tbbt_resolve_stats st;
    struct tbbt_handles *h = tbbt_handles_new();
    struct tbbt_rpcconn *c;
    char err[512];
    int s;

    (void)state;
    fake_start(&f);
    c = fake_conn(&f);
    assert_int_equal(load_text(FAKE_MANIFEST, &m, err, sizeof(err)), 0);
    struct tbbt_resolve_opts o = { .max_outstanding = 2, .timeout_ms = 2000,
                                   .root_path = "img" };
    int rc = tbbt_resolve_run(c, m, 1, &fake_root, 1, &o, h, &st, err, sizeof(err));
    assert_int_equal(rc, -EIO);         /* the ACCES wins over the missing ones */
    assert_non_null(strstr(err, "LOOKUP 'a/deny': NFS3ERR_ACCES"));
    assert_int_equal(st.objects, 12);   /* 11 objects and the clone directory (root ID 1) */
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.missing, 4);    /* missing1, missing2/x, missing2/y/z, a/deny/q */
    assert_int_equal(st.resolved, 7);   /* 1 2 3 4 5 6 7 */
    assert_true(st.retransmits >= 2);
    assert_string_equal(bound(h, 1, &s), "R/img/tbbt-clone-1");
    assert_string_equal(bound(h, 4, &s), "R/img/tbbt-clone-1/a/b/f");
    assert_string_equal(bound(h, 5, &s), "R/img/tbbt-clone-1/c/d/g");
    assert_string_equal(bound(h, 6, &s), "R/img/tbbt-clone-1/drop1");
    assert_string_equal(bound(h, 7, &s), "R/img/tbbt-clone-1/a/drop2");
    for (uint64_t id = 8; id <= 12; id++) {
        bound(h, id, &s);
        assert_int_equal(s, TBBT_HANDLE_FAILED);
    }
    /* want: only 4 and 8 (and the directories on the way): the missing one is reported */
    tbbt_handles_free(h);
    h = tbbt_handles_new();
    uint64_t pick[] = { 4, 8 };
    o.want = want_pick;
    o.want_arg = pick;
    o.max_outstanding = 0;
    rc = tbbt_resolve_run(c, m, 0, &fake_root, 1, &o, h, &st, err, sizeof(err));
    assert_int_equal(rc, -ENOENT);
    assert_non_null(strstr(err, "'missing1' is missing"));
    assert_non_null(strstr(err, "1 of 3 objects missing"));
    assert_int_equal(st.resolved, 4);   /* 1, 2 and 3 on the way, 4 */
    assert_string_equal(bound(h, 3, &s), "R/img/tbbt-clone-0/a/b");
    assert_string_equal(bound(h, 5, &s), "");
    /* a server that never answers: -ETIMEDOUT after retransmissions, c idle again */
    tbbt_manifest_free(m);
    assert_int_equal(load_text(HEADER "clone\t.\nobj\t2\tok\nobj\t3\tsilent\n" TAIL, &m, err,
                               sizeof(err)), 0);
    o = (struct tbbt_resolve_opts){ .timeout_ms = 400 };
    rc = tbbt_resolve_run(c, m, 0, &fake_root, 1, &o, h, &st, err, sizeof(err));
    assert_int_equal(rc, -ETIMEDOUT);
    assert_non_null(strstr(err, "LOOKUP 'silent': no reply"));
    assert_true(st.retransmits >= 3);
    assert_int_equal(tbbt_rpcconn_outstanding(c), 0);
    /* out of range */
    assert_int_equal(tbbt_resolve_run(c, m, 1, &fake_root, 1, NULL, h, NULL, err, sizeof(err)),
                     TBBT_E_RANGE);
    tbbt_manifest_free(m);
    tbbt_handles_free(h);
    tbbt_rpcconn_free(c);
    fake_stop(&f);
}

/*
 * With the connection's retransmission policy (tbbt_rpcconn_set_retry(), as tbbt-play
 * sets it): a lost reply is resent with the same XID after the policy's timeout, not the
 * options', and a LOOKUP never answered gives up after retrans resends.
 */
static void test_resolve_policy(void **state)
{
    struct fake f;
    struct tbbt_manifest *m;
    struct tbbt_resolve_stats st;
    struct tbbt_handles *h = tbbt_handles_new();
    char err[512];
    int s;

    (void)state;
    fake_start(&f);
    struct tbbt_rpcconn *c = fake_conn(&f);
    struct tbbt_rpcconn_retry p = { .timeout_ms = 100, .retrans = 2, .relost = 2,
                                    .dead_ms = 1000 };
    tbbt_rpcconn_set_retry(c, &p);
    assert_int_equal(load_text(HEADER "clone\t.\nobj\t2\tdrop1\nobj\t3\tdrop1/drop2\n" TAIL,
                               &m, err, sizeof(err)), 0);
    struct tbbt_resolve_opts o = { .timeout_ms = 60000 };   /* ignored: the policy's */
    uint64_t t0 = tbbt_now_ns();
    assert_int_equal(tbbt_resolve_run(c, m, 0, &fake_root, 1, &o, h, &st, err, sizeof(err)), 0);
    assert_int_equal(st.retransmits, 2);        /* drop1, then drop1/drop2 */
    assert_int_equal(atomic_load(&f.dropped), 2);
    assert_true(tbbt_now_ns() - t0 < 2000000000ull);
    assert_string_equal(bound(h, 3, &s), "R/drop1/drop2");
    tbbt_manifest_free(m);
    assert_int_equal(load_text(HEADER "clone\t.\nobj\t2\tsilent\n" TAIL, &m, err,
                               sizeof(err)), 0);
    assert_int_equal(tbbt_resolve_run(c, m, 0, &fake_root, 1, &o, h, &st, err, sizeof(err)),
                     -ETIMEDOUT);
    assert_non_null(strstr(err, "LOOKUP 'silent': no reply from the server after 3 sends"));
    assert_int_equal(st.retransmits, 2);
    assert_int_equal(tbbt_rpcconn_outstanding(c), 0);
    tbbt_manifest_free(m);
    tbbt_handles_free(h);
    tbbt_rpcconn_free(c);
    fake_stop(&f);
}

static void test_verify_result_fini(void **state)
{
    struct tbbt_verify_result r = { 0 };

    (void)state;
    tbbt_verify_result_fini(&r);
    r.details = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(r.details, g_strdup("missing: a"));
    r.missing = 1;
    tbbt_verify_result_fini(&r);
    assert_null(r.details);
    assert_int_equal(r.missing, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_good),
        cmocka_unit_test(test_manifest_one_clone),
        cmocka_unit_test(test_manifest_nfs),
        cmocka_unit_test(test_manifest_hostile),
        cmocka_unit_test(test_manifest_status),
        cmocka_unit_test(test_manifest_malformed),
        cmocka_unit_test(test_manifest_checksum),
        cmocka_unit_test(test_relpath),
        cmocka_unit_test(test_sizes_v3),
        cmocka_unit_test(test_sizes_readdirplus_and_v2),
        cmocka_unit_test(test_verify_result_fini),
        cmocka_unit_test(test_resolve_fake),
        cmocka_unit_test(test_resolve_policy),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
