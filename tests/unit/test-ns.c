/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the namespace model (src/ns) and pass B of tbbt-convert
 * (src/extract/hier.c): TBBT-ID merging, hierarchy extraction (hard links,
 * renames over targets and of directories with children, symlinks, orphans,
 * unrooted subtrees, "..", hostile names, sizes at trace start, create and
 * delete times, NFSv2), the map reader's validation, prediction for pre-play
 * correction, determinism and error paths.
 *
 * Fixtures are text traces in tests/golden/ns/NAME.txt; the expected map and
 * the IDs each record gets are NAME.map and NAME.ids next to them.  Run with
 * TBBT_UPDATE_GOLDEN=1 to rewrite those two (then review the diff).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extract/hier.h"
#include "ns/manifest.h"
#include "ns/ns.h"
#include "trace/trace.h"
#include "trace-records.h"
#include "util/crc32.h"
#include "util/textsum.h"
#include "util/util.h"

#ifndef TBBT_NS_GOLDEN_DIR
#define TBBT_NS_GOLDEN_DIR "tests/golden/ns"
#endif

#define S(x) ((uint64_t)(x) * 1000000000ull)

/* ---- running a fixture ------------------------------------------------------------ */

struct run {
    char *raw, *final, *map;
    struct tbbt_ns *ns;
    struct tbbt_ns_stats st;
    GPtrArray *recs;            /* struct tbbt_trace_rec * of the final trace */
};

static char *tmp_path(const char *name, const char *ext)
{
    return g_strdup_printf("%s/tbbt-test-ns-%d-%s%s", g_get_tmp_dir(), (int)getpid(), name, ext);
}


static void run_file(struct run *x, const char *name, const char *text_path)
{
    char err[512] = "";
    uint64_t line = 0;
    int rc;

    memset(x, 0, sizeof(*x));
    x->raw = tmp_path(name, ".raw");
    x->final = tmp_path(name, ".tbbt");
    x->map = tmp_path(name, ".map");
    rc = tbbt_trace_from_text_why(text_path, x->raw, &line, err, sizeof(err));
    if (rc)
        fail_msg("%s line %llu: %s", text_path, (unsigned long long)line, err);
    rc = tbbt__hier_run(x->raw, x->final, x->map, NULL, &x->ns, err, sizeof(err));
    if (rc)
        fail_msg("hier: %s", err);
    tbbt_ns_stats(x->ns, &x->st);
    x->recs = read_all(x->final);
}

static void run_fixture(struct run *x, const char *name)
{
    char *path = g_strdup_printf("%s/%s.txt", TBBT_NS_GOLDEN_DIR, name);

    run_file(x, name, path);
    g_free(path);
}

static void run_free(struct run *x)
{
    unlink(x->raw);
    unlink(x->final);
    unlink(x->map);
    g_free(x->raw);
    g_free(x->final);
    g_free(x->map);
    tbbt_ns_free(x->ns);
    g_ptr_array_free(x->recs, TRUE);
}

static const struct tbbt_trace_rec *rec_at(const struct run *x, guint i)
{
    assert_true(i < x->recs->len);
    return g_ptr_array_index(x->recs, i);
}

/* The ID field f of record i, 0 if absent. */
static uint64_t idf(const struct run *x, guint i, int f)
{
    const struct tbbt_trace_rec *r = rec_at(x, i);

    if (!TBBT_HAS(r, f))
        return 0;
    return f == TBBT_F_ID ? r->id : f == TBBT_F_ID2 ? r->id2 : f == TBBT_F_ID_OBJ ? r->id_obj
                                                                                : r->id_old;
}

/* ---- golden files ------------------------------------------------------------------- */

static void put_id(GString *s, const char *k, const struct tbbt_trace_rec *r, int f, uint64_t v)
{
    if (TBBT_HAS(r, f))
        g_string_append_printf(s, " %s=%llu", k, (unsigned long long)v);
}

/* One line per record: index, procedure and the ID fields. */
static char *id_listing(const struct run *x)
{
    GString *s = g_string_new("# record proc id id2 id_obj id_old [entry ids]\n");

    for (guint i = 0; i < x->recs->len; i++) {
        const struct tbbt_trace_rec *r = rec_at(x, i);
        const char *p = tbbt_proc_name(r->prog, r->proc);
        g_string_append_printf(s, "%u %s %s", i + 1, tbbt_prog_name(r->prog), p ? p : "?");
        put_id(s, "id", r, TBBT_F_ID, r->id);
        put_id(s, "id2", r, TBBT_F_ID2, r->id2);
        put_id(s, "id_obj", r, TBBT_F_ID_OBJ, r->id_obj);
        put_id(s, "id_old", r, TBBT_F_ID_OLD, r->id_old);
        if (TBBT_HAS(r, TBBT_F_ENTRIES)) {
            g_string_append(s, " [");
            for (uint32_t e = 0; e < r->n_entries; e++) {
                if (r->entries[e].flags & TBBT_ENT_ID)
                    g_string_append_printf(s, "%s%llu", e ? "," : "",
                                           (unsigned long long)r->entries[e].id);
                else
                    g_string_append_printf(s, "%s-", e ? "," : "");
            }
            g_string_append_c(s, ']');
        }
        g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}

static void check_golden(const char *name, const char *ext, const char *got, size_t len)
{
    char *path = g_strdup_printf("%s/%s%s", TBBT_NS_GOLDEN_DIR, name, ext);
    gchar *want = NULL;
    gsize wlen = 0;

    if (getenv("TBBT_UPDATE_GOLDEN")) {
        assert_true(g_file_set_contents(path, got, (gssize)len, NULL));
    } else {
        if (!g_file_get_contents(path, &want, &wlen, NULL))
            fail_msg("missing golden file %s (TBBT_UPDATE_GOLDEN=1 writes it)", path);
        if (wlen != len || memcmp(want, got, len) != 0)
            fail_msg("%s differs from the output:\n%.*s", path, (int)len, got);
        g_free(want);
    }
    g_free(path);
}

/* The map and the IDs of a fixture match their golden files. */
static void check_goldens(const char *name, const struct run *x)
{
    gchar *map = NULL;
    gsize len = 0;
    char *ids = id_listing(x);

    assert_true(g_file_get_contents(x->map, &map, &len, NULL));
    check_golden(name, ".map", map, len);
    check_golden(name, ".ids", ids, strlen(ids));
    g_free(map);
    g_free(ids);
}

/* ---- map helpers ------------------------------------------------------------------------ */

struct ent {
    struct tbbt_ns_map_entry e;
    char *path, *final, *target;
};

static void free_ent(gpointer p)
{
    struct ent *e = p;

    g_free(e->path);
    g_free(e->final);
    g_free(e->target);
    g_free(e);
}

/*
 * Reads a whole map through the strict reader and checks the ordering rule:
 * the directory of every entry of the start image (create time 0; its path
 * without the last component) is the root or the path of an earlier such
 * directory entry.
 */
static GPtrArray *read_map(const char *path)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(free_ent);
    GHashTable *dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0, rc;

    r = tbbt_ns_map_reader_open(path, &err);
    assert_non_null(r);
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        struct ent *c = g_new0(struct ent, 1);
        const char *slash = strrchr(e.path, '/');
        char *parent = slash && e.create_ns == 0 ? g_strndup(e.path, (gsize)(slash - e.path))
                                                 : NULL;
        if (parent && !g_hash_table_contains(dirs, parent))
            fail_msg("map %s: '%s' comes before its directory", path, e.path);
        g_free(parent);
        if (e.type == TBBT_NS_DIR && e.create_ns == 0)
            g_hash_table_add(dirs, g_strdup(e.path));
        c->e = e;
        c->path = g_strdup(e.path);
        c->final = g_strdup(e.final_path);
        c->target = e.target ? g_strndup(e.target, e.target_len) : NULL;
        g_ptr_array_add(a, c);
    }
    if (rc != 0)
        fail_msg("map %s line %llu: %s", path,
                 (unsigned long long)tbbt_ns_map_reader_line(r), tbbt_ns_map_reader_error(r));
    tbbt_ns_map_reader_close(r);
    g_hash_table_destroy(dirs);
    return a;
}

static const struct ent *find_path(GPtrArray *m, const char *path)
{
    for (guint i = 0; i < m->len; i++) {
        const struct ent *e = g_ptr_array_index(m, i);
        if (strcmp(e->path, path) == 0)
            return e;
    }
    fail_msg("no map entry '%s'", path);
    return NULL;
}

static guint count_id(GPtrArray *m, uint64_t id)
{
    guint n = 0;

    for (guint i = 0; i < m->len; i++)
        n += ((const struct ent *)g_ptr_array_index(m, i))->e.id == id;
    return n;
}

/* ---- TBBT-IDs ---------------------------------------------------------------------------- */

static void test_ids(void **state)
{
    struct run x;
    GPtrArray *m;

    (void)state;
    run_fixture(&x, "ids");
    check_goldens("ids", &x);
    /* handle 2 (seen first, no attributes) and handle 1 (lookup) are one object */
    assert_int_equal(idf(&x, 2, TBBT_F_ID_OBJ), idf(&x, 1, TBBT_F_ID));
    assert_int_equal(idf(&x, 3, TBBT_F_ID), idf(&x, 1, TBBT_F_ID));
    assert_int_equal(x.st.merged_handles, 1);
    /* handles without attributes: an ID each, the same one each time */
    assert_int_equal(idf(&x, 4, TBBT_F_ID), idf(&x, 6, TBBT_F_ID));
    assert_int_not_equal(idf(&x, 4, TBBT_F_ID), idf(&x, 5, TBBT_F_ID));
    /* same fileid, other fsid: another object */
    assert_int_not_equal(idf(&x, 7, TBBT_F_ID), idf(&x, 1, TBBT_F_ID));
    /* IDs are dense, in order of first appearance */
    assert_int_equal(idf(&x, 0, TBBT_F_ID_OBJ), 1);
    assert_int_equal(idf(&x, 1, TBBT_F_ID), 2);
    assert_int_equal(idf(&x, 4, TBBT_F_ID), 3);
    assert_int_equal(idf(&x, 5, TBBT_F_ID), 4);
    assert_int_equal(idf(&x, 7, TBBT_F_ID), 5);
    /* created without a handle; the lookup binds handle 6 to it */
    assert_int_equal(idf(&x, 8, TBBT_F_ID_OBJ), 6);
    assert_int_equal(idf(&x, 9, TBBT_F_ID_OBJ), 6);
    assert_int_equal(idf(&x, 12, TBBT_F_ID), 6);
    /* handle 7 has its own object: the name moves to it */
    assert_int_equal(idf(&x, 11, TBBT_F_ID_OBJ), 7);
    assert_int_equal(x.st.identity_mismatches, 1);
    assert_int_equal(x.st.objects, 7);
    m = read_map(x.map);
    assert_int_equal(find_path(m, "f")->e.id, 2);
    assert_int_equal(find_path(m, "tbbt-orphans/3")->e.id, 3);
    assert_int_equal(find_path(m, "tbbt-orphans/5")->e.size, 7);
    assert_int_equal(count_id(m, 6), 1);
    assert_int_equal(count_id(m, 7), 1);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

/* ---- hierarchy ------------------------------------------------------------------------- */

static void test_hard_links(void **state)
{
    struct run x;
    GPtrArray *m;
    const struct ent *e;
    struct tbbt_ns_obj_info info;

    (void)state;
    run_fixture(&x, "links");
    check_goldens("links", &x);
    m = read_map(x.map);
    /* one object, three names, one entry each */
    assert_int_equal(count_id(m, 3), 3);
    e = find_path(m, "a");
    assert_int_equal(e->e.create_ns, 0);
    assert_int_equal(e->e.delete_ns, S(6));
    assert_int_equal(e->e.links, 3);
    e = find_path(m, "d/b");
    assert_int_equal(e->e.id, 3);
    assert_int_equal(e->e.create_ns, S(4));
    assert_int_equal(e->e.delete_ns, S(8));
    e = find_path(m, "d/c");
    assert_int_equal(e->e.id, 3);
    assert_int_equal(e->e.create_ns, 0);
    assert_int_equal(e->e.delete_ns, S(9));
    /* the object lived until its last name went */
    assert_int_equal(tbbt_ns_obj_info(x.ns, 3, &info), 0);
    assert_true(info.deleted);
    assert_int_equal(info.delete_ns, S(9));
    /* "y" has nlink 1: found elsewhere, it moved */
    e = find_path(m, "y");
    assert_string_equal(e->final, "d/y2");
    assert_false(e->e.deleted);
    assert_int_equal(count_id(m, 4), 1);
    /* removes carry the removed object */
    assert_int_equal(idf(&x, 5, TBBT_F_ID_OBJ), 3);
    assert_int_equal(idf(&x, 8, TBBT_F_ID_OBJ), 3);
    /* readdirplus entries got IDs */
    assert_true(rec_at(&x, 4)->entries[3].flags & TBBT_ENT_ID);
    assert_int_equal(rec_at(&x, 4)->entries[3].id, 3);
    assert_int_equal(rec_at(&x, 4)->entries[1].id, 1);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_renames(void **state)
{
    struct run x;
    GPtrArray *m;
    const struct ent *e;

    (void)state;
    run_fixture(&x, "renames");
    check_goldens("renames", &x);
    /* over an existing target: the moved object and the replaced one */
    assert_int_equal(idf(&x, 7, TBBT_F_ID_OBJ), 3);
    assert_int_equal(idf(&x, 7, TBBT_F_ID_OLD), 4);
    /* the directory moved with its children */
    assert_int_equal(idf(&x, 8, TBBT_F_ID_OBJ), 2);
    assert_false(TBBT_HAS(rec_at(&x, 8), TBBT_F_ID_OLD));
    m = read_map(x.map);
    e = find_path(m, "d/y");
    assert_int_equal(e->e.id, 4);
    assert_int_equal(e->e.delete_ns, S(8));
    assert_string_equal(e->final, "d/y");       /* where it was when it went */
    assert_string_equal(find_path(m, "d/x")->final, "e/d2/y");
    assert_string_equal(find_path(m, "d")->final, "e/d2");
    e = find_path(m, "d/sub");
    assert_string_equal(e->final, "e/d2/sub");
    assert_int_equal(e->e.delete_ns, S(16));
    assert_string_equal(find_path(m, "d/sub/z")->final, "z2");
    assert_string_equal(find_path(m, "e/z3")->final, "e/z3");
    /* a name never seen: existed at trace start */
    e = find_path(m, "old");
    assert_int_equal(e->e.create_ns, 0);
    assert_string_equal(e->final, "e/new");
    /* the rename into its own subtree was refused */
    assert_int_equal(x.st.cycles_refused, 1);
    assert_string_equal(find_path(m, "e")->final, "e");
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

/*
 * The v4-export lines of a map are the pairs given (pseudo, path, ..., NULL), in order.
 */
static void check_v4_exports(const char *map, ...)
{
    GPtrArray *a = NULL;
    char err[300] = "";
    va_list ap;
    const char *p;
    guint i = 0;

    if (tbbt_map_v4_exports(map, &a, err, sizeof(err)) != 0)
        fail_msg("v4-export lines of %s: %s", map, err);
    va_start(ap, map);
    while ((p = va_arg(ap, const char *))) {
        const struct tbbt_map_v4export *e;
        if (i >= a->len)
            fail_msg("%s: v4-export %s missing", map, p);
        e = g_ptr_array_index(a, i++);
        assert_string_equal(e->pseudo, p);
        assert_string_equal(e->path, va_arg(ap, const char *));
    }
    va_end(ap);
    assert_int_equal(a->len, i);
    tbbt_map_v4_exports_free(a);
}

/* NFSv4 COMPOUNDs lowered into the model (tests/golden/ns/v4.txt says what each does). */
static void test_v4(void **state)
{
    struct run x;
    GPtrArray *m;
    const struct ent *e;

    (void)state;
    run_fixture(&x, "v4");
    check_goldens("v4", &x);
    m = read_map(x.map);
    assert_int_equal(find_path(m, ".")->e.type, TBBT_NS_DIR);
    e = find_path(m, "old");
    assert_int_equal(e->e.create_ns, 0);
    assert_int_equal(e->e.size, 100);
    e = find_path(m, "new");
    assert_int_equal(e->e.create_ns, S(4));
    assert_string_equal(e->final, "d/new2");
    e = find_path(m, "d");
    assert_int_equal(e->e.type, TBBT_NS_DIR);
    assert_int_equal(e->e.create_ns, S(6));
    e = find_path(m, "old2");
    assert_int_equal(e->e.create_ns, S(8));
    assert_int_equal(e->e.delete_ns, S(10));
    /* ".", "d", "deep", "deep/deeper", "new", "old", "old2": not "gone" nor "nohandle" */
    assert_int_equal(m->len, 7);
    assert_false(find_path(m, "d")->e.attrs_known);   /* its GETATTR had no GETFH before */
    /* the chains of LOOKUPs from the pseudo root: one MOUNT each, placed at its path */
    assert_int_equal(find_path(m, "deep")->e.type, TBBT_NS_DIR);
    assert_int_equal(find_path(m, "deep/deeper")->e.type, TBBT_NS_DIR);
    assert_int_equal(x.st.mounts, 3);
    assert_int_equal(x.st.mounts_placed, 2);
    assert_int_equal(x.st.subtrees, 0);
    g_ptr_array_free(m, TRUE);
    check_v4_exports(x.map, "/export", "", "/export/deep", "deep", "/export/deep/deeper",
                     "deep/deeper", NULL);
    run_free(&x);
}


static void test_symlinks(void **state)
{
    struct run x;
    GPtrArray *m;
    const struct ent *e;

    (void)state;
    run_fixture(&x, "symlinks");
    check_goldens("symlinks", &x);
    m = read_map(x.map);
    e = find_path(m, "s1");
    assert_int_equal(e->e.type, TBBT_NS_SYMLINK);
    assert_string_equal(e->target, "dir/file");
    assert_string_equal(e->final, "s1.new");
    e = find_path(m, "s2");
    assert_string_equal(e->target, "../out");
    assert_int_equal(e->e.create_ns, 0);
    assert_int_equal(e->e.size, 6);
    e = find_path(m, "s3");
    assert_string_equal(e->target, "/abs/path");
    assert_int_equal(e->e.create_ns, S(5));
    assert_int_equal(e->e.delete_ns, S(9));
    assert_int_equal(idf(&x, 5, TBBT_F_ID_OBJ), idf(&x, 4, TBBT_F_ID_OBJ));
    assert_null(find_path(m, ".")->target);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_orphans_and_subtrees(void **state)
{
    struct run x;
    GPtrArray *m;

    (void)state;
    run_fixture(&x, "orphans");
    check_goldens("orphans", &x);
    assert_int_equal(tbbt_ns_root(x.ns), 0);
    assert_int_equal(x.st.subtrees, 1);
    assert_int_equal(x.st.unnamed, 2);
    assert_int_equal(x.st.orphans, 1);
    assert_int_equal(x.st.cycles_refused, 1);
    assert_int_equal(x.st.dotdot_lookups, 4);
    m = read_map(x.map);
    assert_int_equal(find_path(m, "tbbt-subtree-3")->e.type, TBBT_NS_DIR);
    assert_int_equal(find_path(m, "tbbt-subtree-3/tbbt-unnamed-2/b")->e.id, 5);
    assert_int_equal(find_path(m, "tbbt-subtree-3/tbbt-unnamed-2/tbbt-unnamed-1/a")->e.id, 4);
    assert_int_equal(find_path(m, "tbbt-orphans/6")->e.id, 6);
    assert_int_equal(find_path(m, "tbbt-orphans")->e.id, 0);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_hostile_names(void **state)
{
    struct run x;
    GPtrArray *m, *m0;
    const struct ent *e;

    (void)state;
    run_fixture(&x, "hostile");
    check_goldens("hostile", &x);
    assert_int_equal(x.st.hostile_names, 7);
    assert_null(find_path(m0 = read_map(x.map), "nul")->target);
    g_ptr_array_free(m0, TRUE);
    m = read_map(x.map);     /* the strict reader accepts every line: no bad component */
    for (guint i = 0; i < m->len; i++) {
        e = g_ptr_array_index(m, i);
        assert_null(strstr(e->path, ".."));
        assert_null(strstr(e->final, "etc"));
    }
    /* the object created as "a/b" exists, but only as an orphan */
    e = find_path(m, "tbbt-orphans/2");
    assert_int_equal(e->e.create_ns, S(2));
    assert_int_equal(idf(&x, 1, TBBT_F_ID_OBJ), 2);
    /* odd but valid names survive escaping */
    assert_int_equal(find_path(m, "-")->e.id, 7);
    assert_int_equal(find_path(m, "t\tn\nb\\u\xc3\xa9")->e.id, 8);
    assert_string_equal(find_path(m, "up")->target, "../../../etc/passwd");
    /* "." and ".." of the root are the root */
    assert_int_equal(idf(&x, 4, TBBT_F_ID_OBJ), 1);
    assert_int_equal(idf(&x, 5, TBBT_F_ID_OBJ), 1);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_sizes(void **state)
{
    static const struct { const char *path; uint64_t size; int state; } want[] = {
        {"f1", 100, 1}, {"f2", 50, 1}, {"f3", 40, 1}, {"f4", 20, 2},
        {"f5", 999, 1}, {"f6", 30, 1}, {"f7", 70, 1}, {"f8", 0, 0},
    };
    struct run x;
    GPtrArray *m;

    (void)state;
    run_fixture(&x, "sizes");
    check_goldens("sizes", &x);
    m = read_map(x.map);
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        const struct ent *e = find_path(m, want[i].path);
        assert_int_equal(e->e.size_state, want[i].state);
        assert_int_equal(e->e.size, want[i].size);
    }
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_times(void **state)
{
    static const struct { const char *path; uint64_t c, d; } want[] = {
        {"old", 0, S(3)}, {"tmp", S(4), S(5)}, {"n", S(7), S(17)}, {"d", S(8), 0},
        {"d/k", S(9), 0}, {"gone", 0, S(11)}, {"full", 0, 0}, {"there", 0, 0},
        {"unseen", 0, S(15)}, {"unseen-dir", 0, S(16)},
    };
    struct run x;
    GPtrArray *m;

    (void)state;
    run_fixture(&x, "times");
    check_goldens("times", &x);
    m = read_map(x.map);
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        const struct ent *e = find_path(m, want[i].path);
        assert_int_equal(e->e.create_ns, want[i].c);
        assert_int_equal(e->e.deleted, want[i].d != 0);
        assert_int_equal(e->e.delete_ns, want[i].d);
    }
    assert_int_equal(find_path(m, "full")->e.type, TBBT_NS_DIR);
    assert_int_equal(find_path(m, "unseen-dir")->e.type, TBBT_NS_DIR);
    assert_int_equal(x.st.inferred_creates, 1);
    assert_int_equal(x.st.inferred_removes, 2);
    /* a remove without a reply gets the predicted object and changes nothing */
    assert_int_equal(idf(&x, 11, TBBT_F_ID_OBJ), find_path(m, "n")->e.id);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_nfsv2(void **state)
{
    struct run x;
    GPtrArray *m;
    const struct ent *e;

    (void)state;
    run_fixture(&x, "v2");
    check_goldens("v2", &x);
    m = read_map(x.map);
    assert_int_equal(tbbt_ns_root(x.ns), 1);
    /* readdir by fileid: the known object, and the one a later lookup joins */
    assert_int_equal(rec_at(&x, 4)->entries[2].id, idf(&x, 3, TBBT_F_ID_OBJ));
    assert_int_equal(rec_at(&x, 4)->entries[3].id, idf(&x, 5, TBBT_F_ID_OBJ));
    e = find_path(m, "fresh");
    assert_string_equal(e->final, "sub/fresh2");
    assert_int_equal(e->e.size, 20);
    e = find_path(m, "sub/ln");
    assert_string_equal(e->target, "../known");
    assert_int_equal(count_id(m, 2), 2);
    assert_int_equal(find_path(m, "sub/new")->e.delete_ns, S(16));
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_loops(void **state)
{
    struct run x;
    GPtrArray *m;

    (void)state;
    run_fixture(&x, "loops");
    check_goldens("loops", &x);
    assert_int_equal(x.st.cycles_refused, 6);
    m = read_map(x.map);     /* every entry after its directory: still a tree */
    assert_int_equal(m->len, 4);
    assert_string_equal(find_path(m, "d")->final, "d");
    assert_string_equal(find_path(m, "d/e")->final, "d/e");
    assert_string_equal(find_path(m, "f")->final, "f");
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

static void test_odd_evidence(void **state)
{
    struct run x;
    GPtrArray *m;
    const struct ent *e;

    (void)state;
    run_fixture(&x, "odd");
    check_goldens("odd", &x);
    m = read_map(x.map);
    assert_int_equal(find_path(m, ".")->e.type, TBBT_NS_DIR);
    e = find_path(m, "p");
    assert_int_equal(e->e.create_ns, S(3));
    assert_int_equal(e->e.links, 1);
    /* "p" started empty: the directory and the file in it were made by lost calls */
    e = find_path(m, "p/tbbt-unnamed-3");
    assert_int_equal(e->e.id, 3);
    assert_int_equal(e->e.create_ns, S(4));
    e = find_path(m, "p/tbbt-unnamed-3/f");
    assert_int_equal(e->e.create_ns, S(5));
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

/* ---- pass B as a whole -------------------------------------------------------------------- */

static gchar *slurp(const char *path, gsize *len)
{
    gchar *d = NULL;

    assert_true(g_file_get_contents(path, &d, len, NULL));
    return d;
}

/* Same input, same output, byte for byte; and the final trace keeps every record and handle. */
static void test_deterministic(void **state)
{
    struct run a, b;
    gchar *ma, *mb, *ta, *tb;
    gsize la, lb, lta, ltb;
    GPtrArray *raw;

    (void)state;
    run_fixture(&a, "renames");
    run_fixture(&b, "renames");
    ma = slurp(a.map, &la);
    mb = slurp(b.map, &lb);
    ta = slurp(a.final, &lta);
    tb = slurp(b.final, &ltb);
    assert_int_equal(la, lb);
    assert_memory_equal(ma, mb, la);
    assert_int_equal(lta, ltb);
    assert_memory_equal(ta, tb, lta);
    raw = read_all(a.raw);
    assert_int_equal(raw->len, a.recs->len);
    for (guint i = 0; i < raw->len; i++) {
        const struct tbbt_trace_rec *r = g_ptr_array_index(raw, i), *f = rec_at(&a, i);
        uint64_t ids = (UINT64_C(1) << TBBT_F_ID) | (UINT64_C(1) << TBBT_F_ID2) |
                       (UINT64_C(1) << TBBT_F_ID_OBJ) | (UINT64_C(1) << TBBT_F_ID_OLD);
        assert_int_equal(r->present, f->present & ~ids);
        assert_int_equal(r->xid, f->xid);
        assert_int_equal(r->fh, f->fh);
    }
    g_ptr_array_free(raw, TRUE);
    g_free(ma);
    g_free(mb);
    g_free(ta);
    g_free(tb);
    run_free(&a);
    run_free(&b);
}

static void test_hier_errors(void **state)
{
    char err[512] = "";
    struct tbbt_ns *ns = (struct tbbt_ns *)1;
    struct run x;
    int rc;

    (void)state;
    rc = tbbt__hier_run("/nonexistent/raw", "/tmp/x", NULL, NULL, &ns, err, sizeof(err));
    assert_true(rc < 0);
    assert_null(ns);
    assert_non_null(strstr(err, "/nonexistent/raw"));
    run_fixture(&x, "ids");
    rc = tbbt__hier_run(x.raw, "/nonexistent/dir/final", NULL, NULL, NULL, err, sizeof(err));
    assert_true(rc < 0);
    assert_non_null(strstr(err, "cannot write trace"));
    rc = tbbt__hier_run(x.raw, x.final, "/nonexistent/dir/map", NULL, NULL, err, sizeof(err));
    assert_true(rc < 0);
    assert_non_null(strstr(err, "hierarchy map"));
    /* a truncated raw trace is an error, not a short success */
    {
        gsize len;
        gchar *d = slurp(x.raw, &len);
        assert_true(g_file_set_contents(x.raw, d, (gssize)len - 10, NULL));
        g_free(d);
    }
    rc = tbbt__hier_run(x.raw, x.final, NULL, NULL, NULL, err, sizeof(err));
    assert_true(rc < 0);
    assert_non_null(strstr(err, "cannot read trace"));
    /* the map writer reports write errors */
    if (access("/dev/full", W_OK) == 0)
        assert_int_equal(tbbt_ns_write_map_file(x.ns, "/dev/full"), -ENOSPC);
    run_free(&x);
}

/* ---- map reader ----------------------------------------------------------------------------- */

static int parse_map_text(const char *text, char *why, size_t whylen)
{
    char *path = tmp_path("reader", ".map");
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0, rc;

    assert_true(g_file_set_contents(path, text, -1, NULL));
    r = tbbt_ns_map_reader_open(path, &err);
    if (!r) {
        unlink(path);
        g_free(path);
        return err;
    }
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1)
        ;
    g_strlcpy(why, tbbt_ns_map_reader_error(r), whylen);
    tbbt_ns_map_reader_close(r);
    unlink(path);
    g_free(path);
    return rc;
}

static void test_map_reader(void **state)
{
    static const struct { const char *body; int rc; } cases[] = {
        {"1\td\t-\t0\t-\t.\t.\t-\t1\n2\tf\t5\t0\t-\ta\ta\t-\t1\n", 0},
        {"2\tf\t5\t0\t-\ta/b\\x2dc/\\x2d\ta\t-\t1\n", 0},
        {"2\tf\t5+\t1.000000001\t2.5\ta\ta\t-\t1\n", TBBT_E_SYNTAX},   /* 1 digit nsec */
        {"2\tf\t5\t0\t-\ta\ta\t-\t1\textra\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta\ta\t-\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\t../a\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta/./b\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta//b\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\t/a\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta\\x2fb\ta\t-\t1\n", TBBT_E_SYNTAX},     /* '/' hidden in an escape */
        {"2\tf\t5\t0\t-\ta\\x00b\ta\t-\t1\n", TBBT_E_SYNTAX},     /* NUL */
        {"2\tf\t5\t0\t-\t\\x2e\\x2e\ta\t-\t1\n", TBBT_E_SYNTAX},  /* ".." escaped */
        {"2\tf\t5\t0\t-\ta\\q\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta\\x4\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\t-\ta\t-\t1\n", 0},          /* a file named "-" */
        {"2\tf\t5\t0\t-\t.\t.\t-\t1\n", TBBT_E_SYNTAX},           /* root must be a dir */
        {"1\td\t-\t0\t-\t.\t.\t-\t1\n1\td\t-\t0\t-\t.\t.\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t-\t0\t-\ta\ta\t-\t1\n1\td\t-\t0\t-\t.\t.\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tx\t5\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"02\tf\t5\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"18446744073709551616\tf\t5\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta\ta\t-\t0\n", TBBT_E_SYNTAX},
        {"2\tl\t5\t0\t-\ta\ta\tx\\x00y\t1\n", TBBT_E_SYNTAX},
        {"0\tf\t5\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t0\t-\ta\x01\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"# comment\n\n2\tf\t5\t0\t-\ta\ta\t\\x2d\t1\n", 0},
        {"2\tf\t5\t18446744073.709551615\t-\ta\ta\t-\t1\n", 0},   /* the largest time */
        {"2\tf\t5\t18446744073.709551616\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t1125899906842624\t0\t-\ta\ta\t-\t1\n", 0},    /* 2^50 */
        {"2\tf\t1125899906842625\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t1125899906842625+\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t-5\t0\t-\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"2\tf\t5\t2.000000000\t1.000000000\ta\ta\t-\t1\n", TBBT_E_SYNTAX},
        {"# crc32 00000000\n", TBBT_E_SYNTAX},     /* not in version 2 */
    };
    /* field 10, attributes at trace start (the lines above get "-") */
    static const struct { const char *attrs; int rc; } attrs[] = {
        {"0644:1000:100", 0}, {"7777:0:4294967295", 0}, {"0000:0:0", 0},
        {"644:1000:100", TBBT_E_SYNTAX}, {"0844:1:1", TBBT_E_SYNTAX},
        {"0644:1", TBBT_E_SYNTAX}, {"0644:1:4294967296", TBBT_E_SYNTAX},
        {"0644::1", TBBT_E_SYNTAX}, {"0644:1:1:1", TBBT_E_SYNTAX}, {"", TBBT_E_SYNTAX},
    };
    char why[200], *text;
    GString *body;
    int rc;

    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        body = g_string_new("# tbbt-map 2\n");
        for (const char *p = cases[i].body; *p; p++) {
            const char *nl = strchr(p, '\n');
            g_string_append_len(body, p, nl - p);
            if (*p != '#' && nl != p)
                g_string_append(body, "\t-");
            g_string_append_c(body, '\n');
            p = nl;
        }
        rc = parse_map_text(body->str, why, sizeof(why));
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, expected %d (%s)", i, rc, cases[i].rc, why);
        g_string_free(body, TRUE);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(attrs); i++) {
        text = g_strdup_printf("# tbbt-map 2\n2\tf\t5\t0\t-\ta\ta\t-\t1\t%s\n", attrs[i].attrs);
        rc = parse_map_text(text, why, sizeof(why));
        if (rc != attrs[i].rc)
            fail_msg("attrs '%s': rc %d, expected %d (%s)", attrs[i].attrs, rc, attrs[i].rc, why);
        g_free(text);
    }
    assert_int_equal(parse_map_text("# tbbt-map 1\n", why, sizeof(why)), TBBT_E_VERSION);
    assert_int_equal(parse_map_text("# tbbt-map 3\n", why, sizeof(why)), TBBT_E_TRUNC);
    assert_int_equal(parse_map_text("# tbbt-map 4\n", why, sizeof(why)), TBBT_E_VERSION);
    assert_int_equal(parse_map_text("# tbbt-map 30\n", why, sizeof(why)), TBBT_E_VERSION);
    assert_int_equal(parse_map_text("# tbbt-map 3 x\n", why, sizeof(why)), TBBT_E_SYNTAX);
    assert_int_equal(parse_map_text("# tbbt-trace 1.0\n", why, sizeof(why)), TBBT_E_MAGIC);
    assert_int_equal(parse_map_text("", why, sizeof(why)), TBBT_E_MAGIC);
}

/* A version 3 map: the header, then body, then its checksum line. */
static char *map3(const char *header_rest, const char *body)
{
    GString *s = g_string_new("# tbbt-map 3");
    char line[TBBT_TEXTSUM_LINE];

    g_string_append(s, header_rest);
    g_string_append_c(s, '\n');
    g_string_append(s, body);
    tbbt_textsum_line(line, tbbt_crc32(0, s->str, s->len));
    g_string_append(s, line);
    return g_string_free(s, FALSE);
}

static int check_map_text(const char *text, struct tbbt_ns_map_info *info, char *why,
                          size_t whylen)
{
    char *path = tmp_path("check", ".map");
    int rc;

    assert_true(g_file_set_contents(path, text, -1, NULL));
    rc = tbbt_ns_map_check(path, info, why, whylen);
    unlink(path);
    g_free(path);
    return rc;
}

#define ROOT_LINE "1\td\t4096\t0\t-\t.\t.\t-\t1\t0755:0:0\n"

/* Version 3: the checksum line is checked before any entry; the header names the trace. */
static void test_map_checksum(void **state)
{
    static const char body[] = ROOT_LINE "2\tf\t47270\t0\t-\ta\ta\t-\t1\t0644:1:2\n";
    struct tbbt_ns_map_info mi, mi2;
    char why[300], *good, *bad;
    size_t len;

    (void)state;
    good = map3(" trace-crc32=0a0b0c0d trace-ops=165", body);
    assert_int_equal(check_map_text(good, &mi, why, sizeof(why)), 0);
    assert_int_equal(mi.version, 3);
    assert_true(mi.summed);
    assert_true(mi.trace_known);
    assert_int_equal(mi.trace.crc, 0x0a0b0c0d);
    assert_int_equal(mi.trace.ops, 165);
    assert_int_equal(mi.entries, 2);
    assert_int_equal(mi.root_id, 1);
    /* the finding: a size corrupted to 0 built an image; now the checksum refuses it */
    char **parts = g_strsplit(good, "\t47270\t", 2);
    bad = g_strjoinv("\t0\t", parts);
    g_strfreev(parts);
    assert_int_equal(check_map_text(bad, &mi2, why, sizeof(why)), TBBT_E_CHECKSUM);
    assert_non_null(strstr(why, "checksum does not match"));
    g_free(bad);
    /* cut short: no checksum line */
    len = strlen(good);
    bad = g_strndup(good, len - 10);
    assert_int_equal(check_map_text(bad, &mi2, why, sizeof(why)), TBBT_E_TRUNC);
    g_free(bad);
    /* a version 2 header over a version 3 body */
    bad = g_strdup(good);
    bad[11] = '2';
    assert_int_equal(check_map_text(bad, &mi2, why, sizeof(why)), TBBT_E_VERSION);
    g_free(bad);
    g_free(good);
    /* no trace named; then its header made version 2: the checksum line gives it away */
    good = map3("", body);
    assert_int_equal(check_map_text(good, &mi, why, sizeof(why)), 0);
    assert_false(mi.trace_known);
    good[11] = '2';
    assert_int_equal(check_map_text(good, &mi, why, sizeof(why)), TBBT_E_SYNTAX);
    assert_non_null(strstr(why, "line 4: a checksum line in a version 2 map"));
    g_free(good);
    good = map3(" trace-crc32=0A0B0C0D trace-ops=1", body);
    assert_int_equal(check_map_text(good, &mi, why, sizeof(why)), TBBT_E_SYNTAX);
    g_free(good);
}

/* tbbt_ns_map_check(): the rules across lines, each refused with its line and field. */
static void test_map_check_rules(void **state)
{
    static const struct { const char *body; int rc; const char *why; } cases[] = {
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t1\t7777:0:0\n", 0, NULL},
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t2\t-\n", TBBT_E_SYNTAX,
         "line 3: links: 2 but the map has 1 entries"},
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t2\t-\n2\tf\t6\t0\t-\tb\tb\t-\t2\t-\n",
         TBBT_E_SYNTAX, "line 4: size differs"},
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t2\t-\n2\td\t5\t0\t-\tb\tb\t-\t2\t-\n",
         TBBT_E_SYNTAX, "line 4: type differs"},
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t2\t-\n2\tf\t5\t0\t-\tb\tb\t-\t2\t0644:0:0\n",
         TBBT_E_SYNTAX, "line 4: attributes differ"},
        {ROOT_LINE "2\tf\t5\t0\t-\ta/b\ta/b\t-\t1\t-\n", TBBT_E_SYNTAX,
         "line 3: path: its directory is no earlier directory"},
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t1\t-\n3\tf\t5\t0\t-\ta/b\ta/b\t-\t1\t-\n",
         TBBT_E_SYNTAX, "line 4: path: its directory"},
        {ROOT_LINE "2\td\t5\t0\t-\ta\ta\t-\t1\t-\n3\td\t5\t0\t-\ta\ta\t-\t1\t-\n",
         TBBT_E_SYNTAX, "line 4: path: a directory at trace start given twice"},
        {ROOT_LINE "2147483648\tf\t5\t0\t-\ta\ta\t-\t1\t-\n", TBBT_E_RANGE,
         "line 3: id: above 2^31"},
        {ROOT_LINE "2\tf\t5\t0\t-\ta\ta\t-\t1\t10000:0:0\n", TBBT_E_SYNTAX,
         "line 3: bad attributes"},
    };
    struct tbbt_ns_map_info mi;
    char why[300];

    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *text = map3("", cases[i].body);
        int rc = check_map_text(text, &mi, why, sizeof(why));
        if (rc != cases[i].rc || (cases[i].why && !strstr(why, cases[i].why)))
            fail_msg("case %zu: rc %d, expected %d (%s)", i, rc, cases[i].rc, why);
        g_free(text);
    }
}

/* Reader details: values, escapes, the "-" markers. */
static void test_map_reader_values(void **state)
{
    char *path = tmp_path("values", ".map");
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0;

    (void)state;
    assert_true(g_file_set_contents(path,
        "# tbbt-map 2\n"
        "9\tl\t12+\t1.000000002\t3.000000004\ta\\\\b/\\x2d\tc\t\\x2d\t2\t0750:1000:100\n"
        "8\to\t-\t0\t-\tq\tq\t\t1\t-\n", -1, NULL));
    r = tbbt_ns_map_reader_open(path, &err);
    assert_non_null(r);
    assert_int_equal(tbbt_ns_map_reader_next(r, &e), 1);
    assert_int_equal(e.id, 9);
    assert_int_equal(e.type, TBBT_NS_SYMLINK);
    assert_int_equal(e.size, 12);
    assert_int_equal(e.size_state, 2);
    assert_int_equal(e.create_ns, 1000000002);
    assert_true(e.deleted);
    assert_int_equal(e.delete_ns, 3000000004ull);
    assert_string_equal(e.path, "a\\b/-");
    assert_string_equal(e.final_path, "c");
    assert_int_equal(e.target_len, 1);
    assert_memory_equal(e.target, "-", 1);
    assert_int_equal(e.links, 2);
    assert_true(e.attrs_known);
    assert_int_equal(e.mode, 0750);
    assert_int_equal(e.uid, 1000);
    assert_int_equal(e.gid, 100);
    assert_int_equal(tbbt_ns_map_reader_next(r, &e), 1);
    assert_false(e.attrs_known);
    assert_int_equal(e.type, TBBT_NS_OTHER);
    assert_int_equal(e.size_state, 0);
    assert_false(e.deleted);
    assert_non_null(e.target);      /* an empty target is a target */
    assert_int_equal(e.target_len, 0);
    assert_int_equal(tbbt_ns_map_reader_next(r, &e), 0);
    assert_int_equal(tbbt_ns_map_reader_line(r), 3);
    tbbt_ns_map_reader_close(r);
    unlink(path);
    g_free(path);
}

/* ---- model API and prediction -------------------------------------------------------------- */

static void mkrec(struct tbbt_trace_rec *r, int prog, const char *proc, uint64_t t)
{
    tbbt_trace_rec_clear(r);
    r->prog = (uint8_t)prog;
    r->proc = (uint8_t)tbbt_proc_by_name(prog, proc);
    r->call_ns = t;
    r->reply_ns = t + 1;
    r->flags = TBBT_RF_REPLY | TBBT_RF_STATUS;
}

static void with_name(struct tbbt_trace_rec *r, int f, const char *name)
{
    tbbt_trace_rec_set_str(r, f == TBBT_F_NAME ? &r->name : &r->name2, name,
                           (uint32_t)strlen(name));
    TBBT_SET(r, f);
}

static void by_id(struct tbbt_trace_rec *r, int f, uint64_t id)
{
    TBBT_SET(r, f);
    if (f == TBBT_F_ID)
        r->id = id;
    else if (f == TBBT_F_ID2)
        r->id2 = id;
    else
        r->id_obj = id;
}

static int predict(struct tbbt_ns *ns, struct tbbt_trace_rec *r, int32_t *st)
{
    *st = -1;
    return tbbt_ns_predict(ns, r, st);
}

/* A v3 client MOUNTs the export's real path, a v4 client walks the pseudo path to it. */
static const char v4mixed_text[] =
    "# tbbt-trace 1.2\n"
    "ep 0 tcp 10.0.0.2:800 10.0.0.1:2049\n"
    "ep 1 tcp 10.0.0.3:800 10.0.0.1:2049\n"
    "fh 0 0100\n"
    "op 1.0 1.1 mnt3 mnt ep=0 flags=reply|status|tcp rpc=success status=OK "
    "dirpath=\"/srv/nfs/export/v3\" new_fh=0\n"
    "fh 1 0101\n"
    "op 2.0 2.1 v3 create ep=0 flags=reply|status|tcp rpc=success status=OK fh=0 name=\"f3\" "
    "createmode=0 new_fh=1 obj_attr={type=1,nlink=1,fsid=1,fileid=3}\n"
    "fh 2 0102\n"
    "op 3.0 3.1 v4 compound ep=1 flags=reply|status|tcp rpc=success status=OK minor=1 "
    "ops=[{op=SEQUENCE,status=OK},{op=PUTROOTFH,status=OK},{op=LOOKUP,status=OK,"
    "name=\"export\"},{op=LOOKUP,status=OK,name=\"v4 mix\"},{op=GETFH,status=OK,fh=2}]\n"
    "fh 3 0103\n"
    "op 4.0 4.1 v4 compound ep=1 flags=reply|status|tcp rpc=success status=OK minor=1 "
    "ops=[{op=SEQUENCE,status=OK},{op=PUTFH,status=OK,fh=2},{op=OPEN,status=OK,name=\"f4\","
    "how=1,sattr={mask=mode,mode=0600}},{op=GETFH,status=OK,fh=3}]\n"
    "end 4\n";

/* Pass B of v4mixed_text with the --v4-export specs given (NULL-terminated); its map. */
static GPtrArray *run_v4mixed(const char *const *specs, char **map_out)
{
    char *text = tmp_path("v4mixed", ".txt"), *raw = tmp_path("v4mixed", ".raw");
    char *final = tmp_path("v4mixed", ".tbbt"), *map = tmp_path("v4mixed", ".map");
    struct tbbt_ns *ns = tbbt_ns_new();
    char err[512] = "";
    uint64_t line = 0;
    GPtrArray *m;

    assert_true(g_file_set_contents(text, v4mixed_text, -1, NULL));
    if (tbbt_trace_from_text_why(text, raw, &line, err, sizeof(err)))
        fail_msg("v4mixed line %llu: %s", (unsigned long long)line, err);
    for (; specs && *specs; specs++)
        assert_int_equal(tbbt_ns_add_v4_export(ns, *specs, err, sizeof(err)), 0);
    if (tbbt__hier_scan(ns, raw, err, sizeof(err)) ||
        tbbt__hier_replay(ns, NULL, raw, final, map, err, sizeof(err)))
        fail_msg("hier: %s", err);
    m = read_map(map);
    tbbt_ns_free(ns);
    unlink(text);
    unlink(raw);
    unlink(final);
    g_free(text);
    g_free(raw);
    g_free(final);
    *map_out = map;
    return m;
}

/* --v4-export: the v4 client's tree joins the v3 client's under the export's real path. */
static void test_v4_export_rewrite(void **state)
{
    static const char *const one[] = {"/export=/srv/nfs/export", NULL};
    static const char *const root[] = {"/=/srv/nfs", NULL};
    static const char *const longest[] = {"/=/nowhere", "/export=/srv/nfs/export",
                                          "/exp=/no", NULL};
    const char *const *sets[] = {one, root, longest};
    static const char *const bad[] = {
        "", "=", "/a", "/a=", "=/b", "a=/b", "/a=b", "/a=/b=/c", "/a/=/b", "/a=/b/",
        "//a=/b", "/a//b=/b", "/a/./b=/c", "/a/..=/c", "/a=/b/../c", "/a=//",
    };
    char *map, err[256];
    GPtrArray *m;

    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
        m = run_v4mixed(sets[i], &map);
        assert_int_equal(m->len, 5);        /* ".", v3, v3/f3, "v4 mix", "v4 mix/f4" */
        assert_int_equal(find_path(m, "v3")->e.type, TBBT_NS_DIR);
        assert_int_equal(find_path(m, "v3/f3")->e.type, TBBT_NS_FILE);
        assert_int_equal(find_path(m, "v4 mix")->e.type, TBBT_NS_DIR);
        assert_int_equal(find_path(m, "v4 mix/f4")->e.create_ns, S(4));
        check_v4_exports(map, "/export/v4 mix", "v4 mix", NULL);
        {   /* the header line's fields are tab-separated, a space stands for itself */
            gchar *text = NULL;
            assert_true(g_file_get_contents(map, &text, NULL, NULL));
            assert_non_null(strstr(text, "\n# v4-export\t/export/v4 mix\tv4 mix\n"));
            g_free(text);
        }
        g_ptr_array_free(m, TRUE);
        unlink(map);
        g_free(map);
    }
    /* without: the pseudo path stays, and the root is what both paths share ("/") */
    m = run_v4mixed(NULL, &map);
    assert_int_equal(find_path(m, "srv/nfs/export/v3/f3")->e.type, TBBT_NS_FILE);
    assert_int_equal(find_path(m, "export/v4 mix/f4")->e.type, TBBT_NS_FILE);
    check_v4_exports(map, "/export/v4 mix", "export/v4 mix", NULL);
    g_ptr_array_free(m, TRUE);
    unlink(map);
    g_free(map);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        err[0] = '\0';
        if (tbbt_ns_v4_export_check(bad[i], err, sizeof(err)) != -1 || !err[0] ||
            strchr(err, '\n'))
            fail_msg("--v4-export '%s' accepted (%s)", bad[i], err);
    }
    assert_int_equal(tbbt_ns_v4_export_check("/=/", err, sizeof(err)), 0);
    assert_int_equal(tbbt_ns_v4_export_check("/a b/-=/x y", err, sizeof(err)), 0);
}

/* tbbt_map_v4_exports(): the header lines, and hostile ones refused with their line. */
static void test_map_v4_exports(void **state)
{
    static const struct { const char *head; const char *why; } bad[] = {
        {"# v4-export\t/export\n", "line 2: a v4-export line needs two tab-separated fields"},
        {"# v4-export\t/export\t\n", "line 2: a v4-export line needs two tab-separated"},
        {"# v4-export\t/a\tb\tc\n", "line 2: a v4-export line needs two tab-separated"},
        {"# v4-export\t/a b\n", "line 2: a v4-export line needs two tab-separated"},
        {"# v4-export\t\n", "line 2: a v4-export line needs two tab-separated"},
        {"# v4-export\t\t/a\tb\n", "line 2: a v4-export line needs two tab-separated"},
        {"# v4-export\t/ok\t.\n# v4-export\t/a\ta\\xZZ\n", "line 3: bad v4-export map path"},
        {"# v4-export\t/a\ta\\\n", "bad v4-export map path"},
        {"# v4-export\t/a\t../b\n", "bad v4-export map path"},
        {"# v4-export\t/a\t/b\n", "bad v4-export map path"},
        {"# v4-export\t/a\ta//b\n", "bad v4-export map path"},
        {"# v4-export\t/a\ta\\x2fb\n", "bad v4-export map path"},
        {"# v4-export\t/a\ta\\x00b\n", "bad v4-export map path"},
        {"# v4-export\t/a\ta\001b\n", "bad v4-export map path"},
        {"# v4-export\ta\t.\n", "bad v4-export pseudo path"},
        {"# v4-export\t/a/../b\t.\n", "bad v4-export pseudo path"},
        {"# v4-export\t/a\\q\t.\n", "bad v4-export pseudo path"},
        {"# v4-export\t//\t.\n", "bad v4-export pseudo path"},
        {"# v4-export\t/a/\t.\n", "bad v4-export pseudo path"},
    };
    char *path = tmp_path("v4exports", ".map"), *text, err[300];
    GPtrArray *a = NULL;

    (void)state;
    text = map3(" trace-crc32=0a0b0c0d trace-ops=1",
                "# v4-export\t/export/v4mix\tv4mix\n"
                "# v4-export\t/\t.\n"
                "# a comment the reader passes over\n"
                "# v4-export\t/a b/\\x2d\tc d/\\x2d\n" ROOT_LINE
                "# v4-export\t/after/the/entries\tnowhere\n");
    assert_true(g_file_set_contents(path, text, -1, NULL));
    check_v4_exports(path, "/export/v4mix", "v4mix", "/", "", "/a b/-", "c d/-", NULL);
    g_free(text);
    /* a map without the lines, and one of version 2 */
    text = map3("", ROOT_LINE);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    check_v4_exports(path, NULL);
    g_free(text);
    assert_true(g_file_set_contents(path, "# tbbt-map 2\n# v4-export\t/e\t.\n", -1, NULL));
    check_v4_exports(path, "/e", "", NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GString *body = g_string_new(bad[i].head);
        g_string_append(body, ROOT_LINE);
        text = map3("", body->str);
        assert_true(g_file_set_contents(path, text, -1, NULL));
        err[0] = '\0';
        a = (GPtrArray *)1;
        if (tbbt_map_v4_exports(path, &a, err, sizeof(err)) != -1 || a ||
            !strstr(err, bad[i].why) || strchr(err, '\n'))
            fail_msg("case %zu: '%s' gave '%s'", i, bad[i].head, err);
        g_free(text);
        g_string_free(body, TRUE);
    }
    /* a NUL byte in the line */
    {
        static const char nul[] = "# tbbt-map 2\n# v4-export\t/a\0b\t.\n";
        assert_true(g_file_set_contents(path, nul, sizeof(nul) - 1, NULL));
        assert_int_equal(tbbt_map_v4_exports(path, &a, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "line 2: NUL byte"));
    }
    /* the checksum is checked first; and a file that is not there */
    text = map3("", "# v4-export\t/a\t.\n" ROOT_LINE);
    text[strlen("# tbbt-map 3\n# v4-export\t/")] = 'b';
    assert_true(g_file_set_contents(path, text, -1, NULL));
    assert_int_equal(tbbt_map_v4_exports(path, &a, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "checksum does not match"));
    assert_null(a);
    g_free(text);
    unlink(path);
    assert_int_equal(tbbt_map_v4_exports(path, &a, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    tbbt_map_v4_exports_free(NULL);
    g_free(path);
}

static void test_predict(void **state)
{
    struct run x;
    struct tbbt_trace_rec r;
    int32_t st;
    uint64_t d = 2, e = 7, root = 1;

    (void)state;
    run_fixture(&x, "renames");      /* root 1: e(7)/{d2(2)/{y(3)}, z3(6), new(8)}, z2(6) */
    tbbt_trace_rec_init(&r);
    mkrec(&r, TBBT_PROG_NFS3, "lookup", S(20));
    by_id(&r, TBBT_F_ID, d);
    with_name(&r, TBBT_F_NAME, "y");
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 0);
    with_name(&r, TBBT_F_NAME, "x");            /* renamed away: proven absent */
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 2);
    with_name(&r, TBBT_F_NAME, "never");        /* d was made in the trace: it started empty */
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 2);
    by_id(&r, TBBT_F_ID, root);                 /* open world, at trace start: cannot tell */
    assert_int_equal(predict(x.ns, &r, &st), 0);
    mkrec(&r, TBBT_PROG_NFS3, "create", S(20));
    by_id(&r, TBBT_F_ID, d);
    with_name(&r, TBBT_F_NAME, "y");
    r.createmode = 1;
    TBBT_SET(&r, TBBT_F_CREATEMODE);
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 17);                   /* GUARDED over an existing file */
    r.createmode = 0;
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 0);                    /* UNCHECKED: fine */
    mkrec(&r, TBBT_PROG_NFS3, "rmdir", S(20));
    by_id(&r, TBBT_F_ID, root);
    with_name(&r, TBBT_F_NAME, "e");
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 66);                   /* not empty */
    mkrec(&r, TBBT_PROG_NFS3, "remove", S(20));
    by_id(&r, TBBT_F_ID, e);
    with_name(&r, TBBT_F_NAME, "d2");
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 21);                   /* a directory */
    mkrec(&r, TBBT_PROG_NFS3, "rename", S(20));
    by_id(&r, TBBT_F_ID, root);
    with_name(&r, TBBT_F_NAME, "e");
    by_id(&r, TBBT_F_ID2, d);
    with_name(&r, TBBT_F_NAME2, "loop");
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 22);                   /* into its own subtree */
    mkrec(&r, TBBT_PROG_NFS3, "getattr", S(20));
    by_id(&r, TBBT_F_ID, 4);                    /* y, replaced by the rename */
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 70);
    mkrec(&r, TBBT_PROG_NFS3, "readdir", S(20));
    by_id(&r, TBBT_F_ID, 6);                    /* a file */
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 20);
    /* closed world: what the model never heard of is absent */
    tbbt_ns_set_closed(x.ns, true);
    mkrec(&r, TBBT_PROG_NFS3, "lookup", S(20));
    by_id(&r, TBBT_F_ID, d);
    with_name(&r, TBBT_F_NAME, "never");
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 2);
    mkrec(&r, TBBT_PROG_NFS3, "rmdir", S(20));
    by_id(&r, TBBT_F_ID, d);
    with_name(&r, TBBT_F_NAME, "sub");          /* removed at 16 */
    assert_int_equal(predict(x.ns, &r, &st), 1);
    assert_int_equal(st, 2);
    tbbt_trace_rec_fini(&r);
    run_free(&x);
}

/* A correction pass applies corrective records by ID: create, then the lookup succeeds. */
static void test_apply_by_id(void **state)
{
    struct tbbt_ns *ns = tbbt_ns_new();
    struct tbbt_trace_rec r;
    struct tbbt_ns_obj_info info;
    uint64_t dir, f, child;
    int32_t st;

    (void)state;
    tbbt_ns_set_closed(ns, true);
    tbbt_trace_rec_init(&r);
    dir = tbbt_ns_new_id(ns, TBBT_NS_DIR);
    f = tbbt_ns_new_id(ns, TBBT_NS_FILE);
    assert_int_equal(dir, 1);
    assert_int_equal(f, 2);
    assert_int_equal(tbbt_ns_count(ns), 2);
    mkrec(&r, TBBT_PROG_NFS3, "lookup", S(1));
    by_id(&r, TBBT_F_ID, dir);
    with_name(&r, TBBT_F_NAME, "a");
    assert_int_equal(predict(ns, &r, &st), 1);
    assert_int_equal(st, 2);
    mkrec(&r, TBBT_PROG_NFS3, "create", S(2));
    r.flags |= TBBT_RF_CORRECTIVE;
    by_id(&r, TBBT_F_ID, dir);
    by_id(&r, TBBT_F_ID_OBJ, f);
    with_name(&r, TBBT_F_NAME, "a");
    tbbt_ns_apply(ns, &r);
    assert_int_equal(tbbt_ns_lookup(ns, dir, "a", 1, &child), TBBT_NS_PRESENT);
    assert_int_equal(child, f);
    assert_int_equal(tbbt_ns_lookup(ns, dir, "..", 2, &child), TBBT_NS_UNSURE);
    assert_int_equal(tbbt_ns_lookup(ns, dir, ".", 1, &child), TBBT_NS_PRESENT);
    assert_int_equal(child, dir);
    mkrec(&r, TBBT_PROG_NFS3, "lookup", S(3));
    by_id(&r, TBBT_F_ID, dir);
    with_name(&r, TBBT_F_NAME, "a");
    assert_int_equal(predict(ns, &r, &st), 1);
    assert_int_equal(st, 0);
    mkrec(&r, TBBT_PROG_NFS3, "remove", S(4));
    by_id(&r, TBBT_F_ID, dir);
    with_name(&r, TBBT_F_NAME, "a");
    tbbt_ns_apply(ns, &r);
    assert_int_equal(r.id_obj, f);
    assert_int_equal(tbbt_ns_obj_info(ns, f, &info), 0);
    assert_true(info.deleted);
    assert_int_equal(info.delete_ns, S(4));
    assert_int_equal(tbbt_ns_obj_info(ns, dir, &info), 0);
    assert_int_equal(info.children, 0);
    assert_int_equal(tbbt_ns_obj_info(ns, 3, &info), TBBT_E_RANGE);
    assert_int_equal(tbbt_ns_obj_info(ns, 0, &info), TBBT_E_RANGE);
    tbbt_trace_rec_fini(&r);
    tbbt_ns_free(ns);
    tbbt_ns_free(NULL);
}

/* A directory renamed many times: paths at each time stay right, the history stays short. */
static void test_dir_history(void **state)
{
    static const char *const names[] = { "x", "y", "z" };
    struct tbbt_ns *ns = tbbt_ns_new();
    struct tbbt_trace_rec r;
    char *path = tmp_path("hist", ".map");
    uint64_t top, d, t = S(1);
    GPtrArray *m;

    (void)state;
    tbbt_trace_rec_init(&r);
    top = tbbt_ns_new_id(ns, TBBT_NS_DIR);
    d = tbbt_ns_new_id(ns, TBBT_NS_DIR);
    mkrec(&r, TBBT_PROG_NFS3, "mkdir", t);
    by_id(&r, TBBT_F_ID, top);
    by_id(&r, TBBT_F_ID_OBJ, d);
    with_name(&r, TBBT_F_NAME, "d");
    tbbt_ns_apply(ns, &r);
    mkrec(&r, TBBT_PROG_NFS3, "create", t += S(1));
    by_id(&r, TBBT_F_ID, d);
    with_name(&r, TBBT_F_NAME, "f");
    tbbt_ns_apply(ns, &r);
    for (int i = 0; i < 3000; i++) {       /* d -> x -> y -> z -> x ... */
        mkrec(&r, TBBT_PROG_NFS3, "rename", t += S(1));
        by_id(&r, TBBT_F_ID, top);
        with_name(&r, TBBT_F_NAME, i ? names[(i - 1) % 3] : "d");
        by_id(&r, TBBT_F_ID2, top);
        with_name(&r, TBBT_F_NAME2, names[i % 3]);
        tbbt_ns_apply(ns, &r);
        if (i == 1000) {                    /* in "y" */
            mkrec(&r, TBBT_PROG_NFS3, "create", t += S(1));
            by_id(&r, TBBT_F_ID, d);
            with_name(&r, TBBT_F_NAME, "g");
            tbbt_ns_apply(ns, &r);
        }
    }
    mkrec(&r, TBBT_PROG_NFS3, "remove", t += S(1));    /* now in "z" */
    by_id(&r, TBBT_F_ID, d);
    with_name(&r, TBBT_F_NAME, "f");
    tbbt_ns_apply(ns, &r);
    assert_int_equal(tbbt_ns_write_map_file(ns, path), 0);
    m = read_map(path);
    assert_string_equal(find_path(m, "tbbt-subtree-1/d/f")->final, "tbbt-subtree-1/z/f");
    assert_string_equal(find_path(m, "tbbt-subtree-1/y/g")->final, "tbbt-subtree-1/z/g");
    assert_string_equal(find_path(m, "tbbt-subtree-1/d")->final, "tbbt-subtree-1/z");
    g_ptr_array_free(m, TRUE);
    unlink(path);
    g_free(path);
    tbbt_trace_rec_fini(&r);
    tbbt_ns_free(ns);
}

static void test_name_ok(void **state)
{
    char big[TBBT_NAME_MAX + 1];

    (void)state;
    memset(big, 'a', sizeof(big));
    assert_true(tbbt_ns_name_ok("a", 1));
    assert_true(tbbt_ns_name_ok("...", 3));
    assert_true(tbbt_ns_name_ok(".a", 2));
    assert_true(tbbt_ns_name_ok(big, TBBT_NAME_MAX));
    assert_false(tbbt_ns_name_ok(big, TBBT_NAME_MAX + 1));
    assert_false(tbbt_ns_name_ok("", 0));
    assert_false(tbbt_ns_name_ok(".", 1));
    assert_false(tbbt_ns_name_ok("..", 2));
    assert_false(tbbt_ns_name_ok("a/b", 3));
    assert_false(tbbt_ns_name_ok("a\0b", 3));
    {
        char *p = tbbt_ns_map_path("/x/t.tbbt");
        assert_string_equal(p, "/x/t.tbbt.map");
        g_free(p);
    }
}

/* escape.c and the manifest module (ns/manifest.h): the formats tbbt-init and tbbt-play share. */
static void test_escape_and_manifest(void **state)
{
    GString *s = g_string_new(NULL), *out = g_string_new(NULL), *comp = g_string_new(NULL);
    size_t k = 0;

    (void)state;
    tbbt_ns_escape(s, "-", 1);
    assert_string_equal(s->str, "\\x2d");
    g_string_truncate(s, 0);
    tbbt_ns_escape(s, "a\\b\x01\xff", 5);
    assert_string_equal(s->str, "a\\\\b\\x01\\xff");
    assert_true(tbbt_ns_unescape(s->str, s->len, out));
    assert_int_equal(out->len, 5);
    assert_memory_equal(out->str, "a\\b\x01\xff", 5);
    assert_false(tbbt_ns_unescape("a\\q", 3, out));
    assert_false(tbbt_ns_unescape("a\tb", 3, out));
    assert_int_equal(tbbt_ns_unescape_relpath("d/e\\x41", 7, out, comp, &k), 0);
    assert_string_equal(out->str, "d/eA");
    assert_int_equal(tbbt_ns_unescape_relpath("d//e", 4, out, comp, &k), TBBT_NS_RELPATH_NAME);
    assert_int_equal(k, 2);
    assert_int_equal(tbbt_ns_unescape_relpath("d/e/\\x2f", 8, out, comp, &k),
                     TBBT_NS_RELPATH_NAME);
    assert_int_equal(k, 3);
    assert_int_equal(tbbt_ns_unescape_relpath("d/\\q", 4, out, comp, NULL),
                     TBBT_NS_RELPATH_ESCAPE);

    /* written by the writer, loaded back by the loader, made lines read for --force */
    char path[] = "/tmp/tbbt-test-manifest-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    struct tbbt_manifest_writer w;
    struct tbbt_manifest *m = NULL;
    char err[256] = "", kind = 0;
    const char *rawf = NULL;

    assert_non_null(f);
    tbbt_manifest_writer_init(&w, f);
    tbbt_manifest_write_path(&w, "map", NULL, "/m/t.map");
    tbbt_manifest_write_path(&w, "root", NULL, "/img");
    tbbt_manifest_write(&w, "clones", "%d", 1);
    tbbt_manifest_write_path(&w, "made", "d", "a\tb");
    tbbt_manifest_write_path(&w, "clone", NULL, ".");
    tbbt_manifest_write_path(&w, "obj", "7", "a\tb");
    tbbt_manifest_write(&w, "status", "complete");
    tbbt_manifest_write_sum(&w);
    tbbt_manifest_writer_fini(&w);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(tbbt_manifest_load(path, &m, err, sizeof(err)), 0);
    assert_int_equal(m->version, 2);
    assert_string_equal(m->root, "/img");
    assert_int_equal(m->objs->len, 1);
    assert_int_equal(g_array_index(m->objs, struct tbbt_manifest_obj, 0).id, 7);
    assert_string_equal(g_array_index(m->objs, struct tbbt_manifest_obj, 0).path, "a\tb");
    tbbt_manifest_free(m);
    assert_int_equal(tbbt_manifest_made("made\td\ta\\x09b", &kind, out, &rawf), 1);
    assert_int_equal(kind, 'd');
    assert_string_equal(out->str, "a\tb");
    assert_int_equal(tbbt_manifest_made("obj\t7\ta", &kind, out, &rawf), 0);
    assert_int_equal(tbbt_manifest_made("made\tf\ta\\q", &kind, out, &rawf), -1);
    assert_string_equal(rawf, "a\\q");
    unlink(path);
    g_string_free(s, TRUE);
    g_string_free(out, TRUE);
    g_string_free(comp, TRUE);
}

/* Many names in one directory: the tables grow (and entries are sorted) correctly. */
static void test_many_names(void **state)
{
    struct tbbt_ns *ns = tbbt_ns_new();
    struct tbbt_trace_rec r;
    char name[32];
    uint64_t dir, child;

    (void)state;
    tbbt_trace_rec_init(&r);
    dir = tbbt_ns_new_id(ns, TBBT_NS_DIR);
    for (int i = 0; i < 20000; i++) {
        mkrec(&r, TBBT_PROG_NFS3, "create", S(1) + (uint64_t)i);
        by_id(&r, TBBT_F_ID, dir);
        g_snprintf(name, sizeof(name), "n%d", i);
        with_name(&r, TBBT_F_NAME, name);
        tbbt_ns_apply(ns, &r);
        if (i % 3 == 0) {       /* remove and rename some, to exercise deletion in the table */
            mkrec(&r, TBBT_PROG_NFS3, "rename", S(2) + (uint64_t)i);
            by_id(&r, TBBT_F_ID, dir);
            with_name(&r, TBBT_F_NAME, name);
            by_id(&r, TBBT_F_ID2, dir);
            g_snprintf(name, sizeof(name), "m%d", i);
            with_name(&r, TBBT_F_NAME2, name);
            tbbt_ns_apply(ns, &r);
        }
    }
    for (int i = 0; i < 20000; i++) {
        g_snprintf(name, sizeof(name), "%c%d", i % 3 == 0 ? 'm' : 'n', i);
        assert_int_equal(tbbt_ns_lookup(ns, dir, name, strlen(name), &child), TBBT_NS_PRESENT);
        assert_int_equal(child, (uint64_t)i + 2);
        if (i % 3 == 0) {
            g_snprintf(name, sizeof(name), "n%d", i);
            assert_int_equal(tbbt_ns_lookup(ns, dir, name, strlen(name), &child),
                             TBBT_NS_ABSENT);
        }
    }
    {
        char *path = tmp_path("many", ".map");
        GPtrArray *m;
        assert_int_equal(tbbt_ns_write_map_file(ns, path), 0);
        m = read_map(path);
        assert_int_equal(m->len, 20000 + 1);    /* tbbt-subtree-1 and the 20000 names */
        unlink(path);
        g_free(path);
        g_ptr_array_free(m, TRUE);
    }
    tbbt_trace_rec_fini(&r);
    tbbt_ns_free(ns);
}

/* The real capture of tools/nfs-scenario, when present (traces/; pass A output made by
 * the test run is not available here, so this reads a raw trace if one is given). */
static void test_real_capture(void **state)
{
    const char *raw = getenv("TBBT_NS_RAW_TRACE");
    struct run x;
    GPtrArray *m;

    (void)state;
    if (!raw || access(raw, R_OK) != 0) {
        skip();
        return;
    }
    memset(&x, 0, sizeof(x));
    {
        char err[512];
        x.final = tmp_path("real", ".tbbt");
        x.map = tmp_path("real", ".map");
        x.raw = g_strdup("/nonexistent");
        assert_int_equal(tbbt__hier_run(raw, x.final, x.map, NULL, &x.ns, err, sizeof(err)), 0);
        x.recs = read_all(x.final);
    }
    m = read_map(x.map);
    assert_true(m->len > 0);
    g_ptr_array_free(m, TRUE);
    run_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_hard_links),
        cmocka_unit_test(test_renames),
        cmocka_unit_test(test_symlinks),
        cmocka_unit_test(test_v4),
        cmocka_unit_test(test_v4_export_rewrite),
        cmocka_unit_test(test_map_v4_exports),
        cmocka_unit_test(test_orphans_and_subtrees),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_nfsv2),
        cmocka_unit_test(test_loops),
        cmocka_unit_test(test_odd_evidence),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_hier_errors),
        cmocka_unit_test(test_map_reader),
        cmocka_unit_test(test_map_checksum),
        cmocka_unit_test(test_map_check_rules),
        cmocka_unit_test(test_map_reader_values),
        cmocka_unit_test(test_predict),
        cmocka_unit_test(test_apply_by_id),
        cmocka_unit_test(test_dir_history),
        cmocka_unit_test(test_name_ok),
        cmocka_unit_test(test_escape_and_manifest),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_real_capture),
    };

    tbbt_log_init("test-ns", TBBT_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
