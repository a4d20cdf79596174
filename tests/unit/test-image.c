/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tbbt-init's planning (src/aging/image.c) through its backend seam
 * (src/aging/image-int.h): a recording fake backend takes the place of the local and
 * NFS ones, and the tests check the operations it is asked for and their order for
 * small maps (names before data, hard links after their file, the map root's mode and
 * owner on each clone directory at its end, the marker, --force removing newest first,
 * aging in appends), the manifest lines (the server and export lines of a build
 * through NFS; a failure the backend reported itself keeps its message), and that a
 * clone's plan is the same whichever MPI rank builds it (the module inactive: a rank's
 * own share of the build, docs/tbbt-init.md "Under MPI").  The real
 * backends are tested against real file systems and the lab server by
 * tests/integration/050-init.sh and 055-init-nfs.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "aging/image-int.h"
#include "aging/image.h"
#include "util/util.h"

/* ---- the fake backend -------------------------------------------------------------- */

struct fake {
    struct tbbt__image_be be;
    GString *log;               /* one line per operation */
    GHashTable *dirs;           /* paths made as directories */
    GHashTable *names;          /* every path made */
};

/* What the next build's fake does (set by each test). */
static struct {
    bool marker;                /* the root holds a marker at first */
    char *marker_text;          /* what read_marker returns */
    int barrier_rc;             /* barrier fails with this, its message in errbuf */
    const char *barrier_msg;
    GString *last_log;          /* the log of the last build (given to the test) */
} fk;

#define F(be) ((struct fake *)(be))

static void logf_(struct tbbt__image_be *be, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void logf_(struct tbbt__image_be *be, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_string_append_vprintf(F(be)->log, fmt, ap);
    va_end(ap);
    g_string_append_c(F(be)->log, '\n');
}

static const char *attrs(const struct tbbt__image_attrs *a, char *buf, size_t len)
{
    if (!a || !a->known)
        return "-";
    snprintf(buf, len, "%04o:%u:%u", a->mode, a->uid, a->gid);
    return buf;
}

/* The parent of path must be a directory made before (or the clone directory). */
static int parent_ok(struct tbbt__image_be *be, const char *path)
{
    const char *slash = strrchr(path, '/');
    char *d;
    bool ok;

    if (!slash)
        return 0;
    d = g_strndup(path, (gsize)(slash - path));
    ok = g_hash_table_contains(F(be)->dirs, d);
    g_free(d);
    if (!ok) {
        be->stage = TBBT__IMAGE_AT_PARENT;
        return -ENOTDIR;
    }
    return 0;
}

static int made(struct tbbt__image_be *be, const char *path, bool dir)
{
    int rc = parent_ok(be, path);

    if (rc < 0)
        return rc;
    if (g_hash_table_contains(F(be)->names, path)) {
        be->stage = TBBT__IMAGE_AT_CREATE;
        return -EEXIST;
    }
    g_hash_table_add(F(be)->names, g_strdup(path));
    if (dir)
        g_hash_table_add(F(be)->dirs, g_strdup(path));
    return 0;
}

static struct tbbt__image_be *f_open(const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                                     char *errbuf, size_t errlen, int *rc)
{
    struct fake *f = g_new0(struct fake, 1);

    (void)rc;
    f->be = (struct tbbt__image_be){ .o = o, .st = st, .errbuf = errbuf, .errlen = errlen };
    f->log = g_string_new(NULL);
    f->dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    f->names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return &f->be;
}

static void f_close(struct tbbt__image_be *be)
{
    struct fake *f = F(be);

    if (fk.last_log)
        g_string_free(fk.last_log, TRUE);
    fk.last_log = f->log;
    g_hash_table_destroy(f->dirs);
    g_hash_table_destroy(f->names);
    g_free(f);
}

static int f_root_empty(struct tbbt__image_be *be, bool *has_marker)
{
    logf_(be, "root_empty");
    *has_marker = fk.marker;
    fk.marker = false;
    return 1;
}

static int f_read_marker(struct tbbt__image_be *be, char **text)
{
    logf_(be, "read_marker");
    *text = g_strdup(fk.marker_text);
    return 0;
}

static int f_write_marker(struct tbbt__image_be *be, const char *text)
{
    (void)text;
    logf_(be, "write_marker");
    return 0;
}

static int f_remove_marker(struct tbbt__image_be *be)
{
    logf_(be, "remove_marker");
    return 0;
}

static int f_remove_made(struct tbbt__image_be *be, const char *path, bool dir)
{
    logf_(be, "remove_made %s %s", dir ? "d" : "f", path);
    return 0;
}

static int f_begin_clone(struct tbbt__image_be *be, const char *dir, bool make)
{
    logf_(be, "begin_clone %s make=%d", dir, make);
    g_hash_table_remove_all(F(be)->dirs);
    g_hash_table_remove_all(F(be)->names);
    return 0;
}

static int f_end_clone(struct tbbt__image_be *be)
{
    logf_(be, "end_clone");
    return 0;
}

static int f_barrier(struct tbbt__image_be *be)
{
    logf_(be, "barrier");
    if (fk.barrier_rc) {
        snprintf(be->errbuf, be->errlen, "%s", fk.barrier_msg);
        return fk.barrier_rc;
    }
    return 0;
}

static int f_mkdir(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a)
{
    char b[32];
    int rc = made(be, path, true);

    if (rc == 0)
        logf_(be, "mkdir %s %s", path, attrs(a, b, sizeof(b)));
    return rc;
}

static int f_create(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a,
                    uint64_t len, unsigned flags)
{
    char b[32];
    int rc = made(be, path, false);

    if (rc < 0)
        return rc;
    logf_(be, "create %s %s len=%llu flags=%u", path, attrs(a, b, sizeof(b)),
          flags ? (unsigned long long)len : 0ull, flags);
    if (flags) {
        be->st->bytes += len;
        be->st->appends++;
    }
    return 0;
}

static int f_link(struct tbbt__image_be *be, const char *first, const char *path)
{
    int rc = made(be, path, false);

    if (rc == 0)
        logf_(be, "link %s %s", first, path);
    return rc;
}

static int f_symlink(struct tbbt__image_be *be, const char *path, const char *target,
                     const struct tbbt__image_attrs *a)
{
    char b[32];
    int rc = made(be, path, false);

    if (rc == 0)
        logf_(be, "symlink %s %s %s", path, target, attrs(a, b, sizeof(b)));
    return rc;
}

static int f_mkfifo(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a)
{
    char b[32];
    int rc = made(be, path, false);

    if (rc == 0)
        logf_(be, "mkfifo %s %s", path, attrs(a, b, sizeof(b)));
    return rc;
}

static int f_set_dir_attrs(struct tbbt__image_be *be, const char *path,
                           const struct tbbt__image_attrs *a)
{
    char b[32];

    logf_(be, "set_dir_attrs %s %s", path, attrs(a, b, sizeof(b)));
    return 0;
}

static int f_append(struct tbbt__image_be *be, const char *path, uint64_t len, bool sync)
{
    logf_(be, "append %s len=%llu sync=%d", path, (unsigned long long)len, sync);
    be->st->bytes += len;
    be->st->appends++;
    return 0;
}

static int f_trim(struct tbbt__image_be *be, const char *path, uint64_t size)
{
    logf_(be, "trim %s %llu", path, (unsigned long long)size);
    return 0;
}

static int f_unlink(struct tbbt__image_be *be, const char *path)
{
    logf_(be, "unlink %s", path);
    return 0;
}

static int f_usage(struct tbbt__image_be *be, uint64_t *capacity, uint64_t *used,
                   uint64_t *block)
{
    logf_(be, "usage");
    *capacity = 1ull << 30;
    *used = 1ull << 20;
    *block = 4096;
    return 0;
}

static int f_sync(struct tbbt__image_be *be)
{
    logf_(be, "sync");
    return 0;
}

static const struct tbbt__image_backend_ops fake_ops = {
    .name = "fake", .version = 1, .open = f_open, .close = f_close,
    .root_empty = f_root_empty, .read_marker = f_read_marker, .write_marker = f_write_marker,
    .remove_marker = f_remove_marker, .remove_made = f_remove_made,
    .begin_clone = f_begin_clone, .end_clone = f_end_clone, .barrier = f_barrier,
    .mkdir = f_mkdir, .create = f_create, .link = f_link, .symlink = f_symlink,
    .mkfifo = f_mkfifo, .set_dir_attrs = f_set_dir_attrs, .append = f_append, .trim = f_trim,
    .unlink = f_unlink, .usage = f_usage, .sync = f_sync,
};

/* ---- helpers ------------------------------------------------------------------------ */

static char tmpdir[] = "/tmp/test-image-XXXXXX";
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
    if (fk.last_log)
        g_string_free(fk.last_log, TRUE);
    g_free(fk.marker_text);
    return rc == 0 ? 0 : -1;
}

static int reset(void **state)
{
    (void)state;
    g_free(fk.marker_text);
    fk.marker = false;
    fk.marker_text = NULL;
    fk.barrier_rc = 0;
    fk.barrier_msg = NULL;
    return 0;
}

/* Writes text to a new file in tmpdir; returns its path (g_free). */
static char *write_file(const char *text)
{
    char *path = g_strdup_printf("%s/f%d", tmpdir, ++seq);

    assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static char *read_text(const char *path)
{
    char *text = NULL;

    assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

/* A map with every kind of object, the root's attributes, an unknown size and a name
 * made during the trace. */
static const char map_text[] =
    "# tbbt-map 2\n"
    "1\td\t4096\t0\t-\t.\t.\t-\t1\t1777:1000:100\n"
    "2\td\t4096\t0\t-\ta\ta\t-\t1\t0755:1000:100\n"
    "3\tf\t10\t0\t-\ta/f\ta/f\t-\t2\t0644:1000:100\n"
    "3\tf\t10\t0\t-\ta/h\ta/h\t-\t2\t0644:1000:100\n"
    "4\tl\t0\t0\t-\ta/l\ta/l\tf\t1\t0777:0:0\n"
    "6\tf\t5\t1.000000000\t-\ta/late\ta/late\t-\t1\t0644:0:0\n"
    "5\to\t0\t0\t-\ta/p\ta/p\t-\t1\t0600:0:0\n"
    "7\tf\t-\t0\t-\tu\tu\t-\t1\t-\n";

struct run {
    char *map, *manifest;
    struct tbbt_image_opts o;
    struct tbbt_image_stats st;
    char err[512];
};

static void run_init(struct run *r, const char *map)
{
    memset(r, 0, sizeof(*r));
    r->map = write_file(map);
    r->manifest = g_strdup_printf("%s/m%d", tmpdir, ++seq);
    tbbt_image_opts_init(&r->o);
    r->o.map = r->map;
    r->o.root = "/img";
    r->o.manifest = r->manifest;
}

static int run(struct run *r)
{
    return tbbt__image_build_with(&fake_ops, &r->o, &r->st, r->err, sizeof(r->err));
}

static void run_fini(struct run *r)
{
    g_free(r->map);
    g_free(r->manifest);
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_order(void **state)
{
    struct run r;

    (void)state;
    run_init(&r, map_text);
    assert_int_equal(run(&r), 0);
    assert_string_equal(fk.last_log->str,
                        "root_empty\n"
                        "write_marker\n"
                        "begin_clone . make=0\n"
                        "mkdir a 0755:1000:100\n"
                        "create a/f 0644:1000:100 len=10 flags=1\n"
                        "link a/f a/h\n"
                        "symlink a/l f 0777:0:0\n"
                        "mkfifo a/p 0600:0:0\n"
                        "create u - len=0 flags=0\n"
                        "barrier\n"
                        "append u len=10 sync=0\n"    /* its size drawn from the map's */
                        "set_dir_attrs . 1777:1000:100\n"
                        "end_clone\n"
                        "sync\n"
                        "usage\n");
    assert_int_equal(r.st.dirs, 1);
    assert_int_equal(r.st.files, 2);
    assert_int_equal(r.st.links, 1);
    assert_int_equal(r.st.symlinks, 1);
    assert_int_equal(r.st.others, 1);
    assert_int_equal(r.st.bytes, 20);
    assert_int_equal(r.st.unknown_sizes, 1);
    char *m = read_text(r.manifest);
    assert_non_null(strstr(m, "# tbbt-manifest 2\nmap\t"));
    assert_non_null(strstr(m, "\nroot\t/img\nseed\t1\n"));
    assert_null(strstr(m, "\nserver\t"));
    assert_null(strstr(m, "\nexport\t"));
    assert_non_null(strstr(m, "\nclone\t.\nmade\td\ta\nobj\t2\ta\nmade\tf\ta/f\nobj\t3\ta/f\n"
                              "made\tf\ta/h\nmade\tf\ta/l\nobj\t4\ta/l\nmade\tf\ta/p\n"
                              "obj\t5\ta/p\nmade\tf\tu\nobj\t7\tu\nstats\t"));
    assert_non_null(strstr(m, "\nstatus\tcomplete\n"));
    g_free(m);
    run_fini(&r);
}

/* A map whose unknown sizes are drawn from several known ones (the random stream shows). */
static const char map_sizes[] =
    "# tbbt-map 2\n"
    "1\td\t4096\t0\t-\t.\t.\t-\t1\t0755:0:0\n"
    "2\td\t4096\t0\t-\ta\ta\t-\t1\t0755:0:0\n"
    "3\tf\t10\t0\t-\ta/k1\ta/k1\t-\t1\t0644:0:0\n"
    "4\tf\t200\t0\t-\ta/k2\ta/k2\t-\t1\t0644:0:0\n"
    "5\tf\t3000\t0\t-\tk3\tk3\t-\t1\t0644:0:0\n"
    "6\tf\t40000\t0\t-\tk4\tk4\t-\t1\t0644:0:0\n"
    "7\tf\t-\t0\t-\ta/u1\ta/u1\t-\t1\t-\n"
    "8\tf\t-\t0\t-\ta/u2\ta/u2\t-\t1\t-\n"
    "9\tf\t-\t0\t-\tu3\tu3\t-\t1\t-\n"
    "10\tf\t-\t0\t-\tu4\tu4\t-\t1\t-\n";

/* Clone k's operations in a build's log: its begin_clone to its end_clone (given). */
static char *clone_ops(const char *log, uint32_t k)
{
    char *begin = g_strdup_printf("begin_clone tbbt-clone-%u make=1\n", k);
    const char *from = strstr(log, begin), *to;

    g_free(begin);
    assert_non_null(from);
    to = strstr(from, "end_clone\n");
    assert_non_null(to);
    return g_strndup(from, (gsize)(to - from));
}

/* Clone k's manifest lines: its made line to the next clone's or the stats (given). */
static char *clone_lines(const char *m, uint32_t k)
{
    char *begin = g_strdup_printf("made\td\ttbbt-clone-%u\nclone\t", k);
    const char *from = strstr(m, begin), *next, *to;

    assert_non_null(from);
    next = strstr(from + strlen(begin), "\nclone\t");     /* the next clone's made line */
    to = next ? g_strrstr_len(from, next - from, "\n") + 1 : strstr(from, "stats\t");
    assert_non_null(to);
    g_free(begin);
    return g_strndup(from, (gsize)(to - from));
}

/*
 * Under MPI rank r of R builds clones r, r + R, ...: each clone gets the same operations
 * (unknown sizes, --spread order, aging order) and manifest lines as in a build of all
 * of them by one process; rank 0 alone prepares the root and writes the manifest.
 */
static void test_ranks(void **state)
{
    struct run one, r0, r1;
    char *log_one, *log_r0, *log_r1, *m_one, *m_r0;

    (void)state;
    run_init(&one, map_sizes);
    one.o.clones = 4;
    one.o.scope = 1 << 20;
    one.o.appends = 3;
    one.o.spread = true;
    assert_int_equal(run(&one), 0);
    log_one = g_strdup(fk.last_log->str);
    r0 = one;
    r0.manifest = g_strdup_printf("%s/m%d", tmpdir, ++seq);
    r0.o.manifest = r0.manifest;
    r0.o.ranks = 2;
    assert_int_equal(run(&r0), 0);
    log_r0 = g_strdup(fk.last_log->str);
    r1 = r0;
    r1.manifest = g_strdup_printf("%s/m%d", tmpdir, ++seq);
    r1.o.manifest = r1.manifest;
    r1.o.rank = 1;
    assert_int_equal(run(&r1), 0);
    log_r1 = g_strdup(fk.last_log->str);

    for (uint32_t k = 0; k < 4; k++) {
        char *a = clone_ops(log_one, k), *b = clone_ops(k % 2 ? log_r1 : log_r0, k);
        assert_string_equal(a, b);
        g_free(a);
        g_free(b);
    }
    assert_null(strstr(log_r0, "tbbt-clone-1"));
    assert_null(strstr(log_r1, "tbbt-clone-0"));
    assert_non_null(strstr(log_r0, "root_empty\nwrite_marker\n"));
    assert_null(strstr(log_r1, "root_empty"));         /* the root is rank 0's */
    assert_null(strstr(log_r1, "marker"));
    assert_false(g_file_test(r1.manifest, G_FILE_TEST_EXISTS));
    m_one = read_text(one.manifest);
    m_r0 = read_text(r0.manifest);
    for (uint32_t k = 0; k < 4; k += 2) {
        char *a = clone_lines(m_one, k), *b = clone_lines(m_r0, k);
        assert_string_equal(a, b);
        g_free(a);
        g_free(b);
    }
    assert_non_null(strstr(m_r0, "\nstatus\tcomplete\n"));
    assert_int_equal(r0.st.files, 2 * 8);          /* its own two clones (no other rank) */
    assert_int_equal(r0.st.unknown_sizes, 2 * 4);
    g_free(m_one);
    g_free(m_r0);
    g_free(log_one);
    g_free(log_r0);
    g_free(log_r1);
    g_free(r0.manifest);
    g_free(r1.manifest);
    run_fini(&one);
}

/* Through NFS: the manifest says so; clones each get the root's attributes at their end. */
static void test_nfs_clones(void **state)
{
    struct run r;

    (void)state;
    run_init(&r, map_text);
    r.o.server = "nas1";
    r.o.export_path = "/exp";
    r.o.root = "/exp/img";
    r.o.clones = 2;
    assert_int_equal(run(&r), 0);
    const char *log = fk.last_log->str;
    const char *c0 = strstr(log, "begin_clone tbbt-clone-0 make=1\n");
    const char *a0 = strstr(log, "set_dir_attrs . 1777:1000:100\nend_clone\n");
    const char *c1 = strstr(log, "begin_clone tbbt-clone-1 make=1\n");
    assert_non_null(c0);
    assert_non_null(a0);
    assert_non_null(c1);
    assert_true(c0 < a0 && a0 < c1);
    assert_non_null(strstr(c1, "set_dir_attrs . 1777:1000:100\nend_clone\nsync\n"));
    char *m = read_text(r.manifest);
    assert_non_null(strstr(m, "\nroot\t/exp/img\nserver\tnas1\nexport\t/exp\nseed\t1\n"));
    assert_non_null(strstr(m, "\nmade\td\ttbbt-clone-0\nclone\ttbbt-clone-0\n"));
    assert_non_null(strstr(m, "\nmade\tf\ttbbt-clone-1/a/h\n"));
    assert_null(strstr(m, "obj\t3\ttbbt-clone"));        /* obj lines: once, per clone dir */
    g_free(m);
    run_fini(&r);
}

/* Aging: every file in appends of size / appends, each allocated at once (sync). */
static void test_aging(void **state)
{
    struct run r;
    guint64 per_file[2] = { 0, 0 }, n = 0;

    (void)state;
    run_init(&r, map_text);
    r.o.scope = 1 << 20;
    r.o.appends = 2;
    assert_int_equal(run(&r), 0);
    assert_non_null(strstr(fk.last_log->str, "create a/f 0644:1000:100 len=0 flags=0\n"));
    char **lines = g_strsplit(fk.last_log->str, "\n", -1);
    for (char **l = lines; *l; l++) {
        unsigned long long len;
        char path[16];
        int sync;
        if (sscanf(*l, "append %15s len=%llu sync=%d", path, &len, &sync) != 3)
            continue;
        assert_int_equal(sync, 1);
        assert_int_equal(len, 5);
        per_file[strcmp(path, "u") == 0] += len;
        n++;
    }
    g_strfreev(lines);
    assert_int_equal(n, 4);
    assert_int_equal(per_file[0], 10);
    assert_int_equal(per_file[1], 10);
    assert_int_equal(r.st.appends, 4);
    run_fini(&r);
}

/* --force: the previous manifest's made lines go, newest first, then the marker. */
static void test_force(void **state)
{
    struct run r;
    char *old = write_file("# tbbt-manifest 1\nclone\t.\nmade\td\tx\nmade\tf\tx/y\n"
                           "made\tf\tsp\\x20ace\nstatus\tcomplete\n");

    (void)state;
    run_init(&r, map_text);
    fk.marker = true;
    fk.marker_text = g_strdup_printf("%s\n", old);
    r.o.force = true;
    assert_int_equal(run(&r), 0);
    assert_true(g_str_has_prefix(fk.last_log->str,
                                 "root_empty\nread_marker\nremove_made f sp ace\n"
                                 "remove_made f x/y\nremove_made d x\nremove_marker\n"
                                 "root_empty\nwrite_marker\nbegin_clone"));
    run_fini(&r);
    /* without --force a marker is refused, and nothing is asked of the backend */
    run_init(&r, map_text);
    fk.marker = true;
    assert_int_equal(run(&r), -EEXIST);
    assert_non_null(strstr(r.err, "holds a tbbt-init image: --force removes it"));
    assert_string_equal(fk.last_log->str, "root_empty\n");
    g_free(old);
    run_fini(&r);
}

/* A failure the backend found later keeps the backend's own message. */
static void test_deferred_failure(void **state)
{
    struct run r;

    (void)state;
    run_init(&r, map_text);
    fk.barrier_rc = -ENOSPC;
    fk.barrier_msg = "CREATE 'a/f': NFS3ERR_NOSPC";
    assert_int_equal(run(&r), -ENOSPC);
    assert_string_equal(r.err, "CREATE 'a/f': NFS3ERR_NOSPC");
    char *m = read_text(r.manifest);
    assert_non_null(strstr(m, "\nstatus\tfailed\tCREATE 'a/f': NFS3ERR_NOSPC\n"));
    assert_null(strstr(fk.last_log->str, "set_dir_attrs"));
    g_free(m);
    run_fini(&r);
}

/* A map path whose directory is not one (a symlink the map made) is refused with its line. */
static void test_parent_not_dir(void **state)
{
    struct run r;

    (void)state;
    run_init(&r, "# tbbt-map 2\n1\td\t-\t0\t-\t.\t.\t-\t1\t-\n"
                 "2\tl\t0\t0\t-\tesc\tesc\t../outside\t1\t-\n"
                 "3\td\t-\t0\t-\tesc/x\tesc/x\t-\t1\t-\n");
    /* refused before anything is made: esc is no directory of the map */
    assert_int_equal(run(&r), TBBT_E_SYNTAX);
    assert_non_null(strstr(r.err, "' line 4: path: its directory is no earlier directory "
                                  "entry at trace start"));
    assert_null(strstr(fk.last_log->str, "set_dir_attrs"));   /* root attributes unknown */
    run_fini(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_order, reset),
        cmocka_unit_test_setup(test_nfs_clones, reset),
        cmocka_unit_test_setup(test_ranks, reset),
        cmocka_unit_test_setup(test_aging, reset),
        cmocka_unit_test_setup(test_force, reset),
        cmocka_unit_test_setup(test_deferred_failure, reset),
        cmocka_unit_test_setup(test_parent_not_dir, reset),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
