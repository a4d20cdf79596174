/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of util/outfile.h: a new file appears only at commit, an abort leaves
 * the existing file byte for byte, a symbolic link (also a dangling one, also a
 * relative one) stays a link and its target is written, a replaced file keeps its
 * mode, a writer that opens tbbt_outfile_path() itself works, /dev/null is written in
 * place (spooled when asked), /dev/full gives -ENOSPC naming it, a symlink loop is
 * ELOOP, a name of 255 bytes is written (its temporary's name cut to fit), and no
 * temporary file is ever left behind.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "util/outfile.h"

static int setup(void **state)
{
    char *dir = g_dir_make_tmp("test-outfile-XXXXXX", NULL);

    assert_non_null(dir);
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    char *dir = *state;
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *n;

    while (d && (n = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, n, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(dir);
    g_free(dir);
    return 0;
}

static char *in(void **state, const char *name)
{
    return g_build_filename((const char *)*state, name, NULL);
}

static void put(const char *path, const char *text)
{
    assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void assert_text(const char *path, const char *want)
{
    char *got = NULL;

    assert_true(g_file_get_contents(path, &got, NULL, NULL));
    assert_string_equal(got, want);
    g_free(got);
}

/* Number of entries in the test directory. */
static int entries(void **state)
{
    GDir *d = g_dir_open((const char *)*state, 0, NULL);
    int n = 0;

    assert_non_null(d);
    while (g_dir_read_name(d))
        n++;
    g_dir_close(d);
    return n;
}

/* Writes text to path through an outfile's stream; commits or aborts. */
static int write_through(const char *path, const char *text, bool commit, char *err,
                         size_t errlen)
{
    int rc = 0;
    struct tbbt_outfile *o = tbbt_outfile_new(path, 0, &rc, err, errlen);
    FILE *f;

    if (!o)
        return rc;
    f = tbbt_outfile_stream(o, &rc, err, errlen);
    assert_non_null(f);
    fputs(text, f);
    if (!commit) {
        tbbt_outfile_abort(o);
        return 0;
    }
    return tbbt_outfile_commit(o, err, errlen);
}

static void new_file_appears_at_commit(void **state)
{
    char *p = in(state, "a"), err[256];
    int rc = 0;
    struct tbbt_outfile *o = tbbt_outfile_new(p, 0, &rc, err, sizeof(err));

    assert_non_null(o);
    assert_false(tbbt_outfile_in_place(o));
    assert_string_not_equal(tbbt_outfile_path(o), p);
    fputs("new", tbbt_outfile_stream(o, &rc, err, sizeof(err)));
    assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
    assert_int_equal(tbbt_outfile_commit(o, err, sizeof(err)), 0);
    assert_text(p, "new");
    assert_int_equal(entries(state), 1);
    g_free(p);
}

static void abort_keeps_existing(void **state)
{
    char *p = in(state, "a"), err[256];

    put(p, "old");
    assert_int_equal(write_through(p, "new", false, err, sizeof(err)), 0);
    assert_text(p, "old");
    assert_int_equal(entries(state), 1);
    g_free(p);
}

static void symlink_stays_link(void **state)
{
    char *real = in(state, "real"), *link = in(state, "link"), *dang = in(state, "dang"),
         *made = in(state, "made"), err[256];
    struct stat st;

    put(real, "old");
    assert_int_equal(symlink("real", link), 0);
    assert_int_equal(write_through(link, "new", true, err, sizeof(err)), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_text(real, "new");
    assert_int_equal(symlink("made", dang), 0);     /* dangling: its target is created */
    assert_int_equal(write_through(dang, "x", true, err, sizeof(err)), 0);
    assert_int_equal(lstat(dang, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_text(made, "x");
    assert_int_equal(entries(state), 4);
    g_free(real), g_free(link), g_free(dang), g_free(made);
}

static void mode_is_kept(void **state)
{
    char *p = in(state, "a"), err[256];
    struct stat st;

    put(p, "old");
    assert_int_equal(chmod(p, 0604), 0);
    assert_int_equal(write_through(p, "new", true, err, sizeof(err)), 0);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0604);
    assert_text(p, "new");
    g_free(p);
}

static void writer_opens_path(void **state)
{
    char *p = in(state, "a"), err[256];
    int rc = 0;
    struct tbbt_outfile *o;
    FILE *f;

    put(p, "old");
    o = tbbt_outfile_new(p, 0, &rc, err, sizeof(err));
    assert_non_null(o);
    f = fopen(tbbt_outfile_path(o), "w");
    assert_non_null(f);
    fputs("new", f);
    assert_int_equal(fclose(f), 0);
    assert_text(p, "old");
    assert_int_equal(tbbt_outfile_commit(o, err, sizeof(err)), 0);
    assert_text(p, "new");
    assert_int_equal(entries(state), 1);
    g_free(p);
}

static void dev_null_in_place(void **state)
{
    char err[256];
    int rc = 0;
    struct tbbt_outfile *o = tbbt_outfile_new("/dev/null", 0, &rc, err, sizeof(err));
    char *spool;

    (void)state;
    assert_non_null(o);
    assert_true(tbbt_outfile_in_place(o));
    assert_string_equal(tbbt_outfile_path(o), "/dev/null");
    tbbt_outfile_abort(o);
    o = tbbt_outfile_new("/dev/null", TBBT_OUTFILE_SPOOL, &rc, err, sizeof(err));
    assert_non_null(o);
    spool = g_strdup(tbbt_outfile_path(o));
    assert_string_not_equal(spool, "/dev/null");
    fputs("spooled", tbbt_outfile_stream(o, &rc, err, sizeof(err)));
    assert_int_equal(tbbt_outfile_commit(o, err, sizeof(err)), 0);
    assert_false(g_file_test(spool, G_FILE_TEST_EXISTS));
    g_free(spool);
}

static void dev_full_fails(void **state)
{
    char err[256] = "", *big = g_malloc(1 << 17);
    int rc;

    (void)state;
    if (access("/dev/full", W_OK) != 0) {
        g_free(big);
        skip();
    }
    memset(big, 'x', (1 << 17) - 1);
    big[(1 << 17) - 1] = '\0';
    rc = write_through("/dev/full", big, true, err, sizeof(err));
    assert_int_equal(rc, -ENOSPC);
    assert_non_null(strstr(err, "'/dev/full'"));
    assert_null(strchr(err, '\n'));
    g_free(big);
}

static void link_loop_is_eloop(void **state)
{
    char *a = in(state, "a"), *b = in(state, "b"), *r, err[256] = "";
    int rc = 0;

    assert_int_equal(symlink("b", a), 0);
    assert_int_equal(symlink("a", b), 0);
    assert_null(tbbt_outfile_new(a, 0, &rc, err, sizeof(err)));
    assert_int_equal(rc, -ELOOP);
    assert_non_null(strstr(err, a));
    assert_null(tbbt_outfile_resolve(a, &rc));
    g_unlink(b);
    assert_int_equal(symlink("c", b), 0);
    r = tbbt_outfile_resolve(a, &rc);
    assert_non_null(r);
    assert_true(g_str_has_suffix(r, "/c"));
    assert_int_equal(entries(state), 2);
    g_free(r), g_free(a), g_free(b);
}

static void missing_directory_fails_early(void **state)
{
    char *p = in(state, "no/such/file"), err[256] = "";
    int rc = 0;

    assert_null(tbbt_outfile_new(p, 0, &rc, err, sizeof(err)));
    assert_int_equal(rc, -ENOENT);
    assert_non_null(strstr(err, p));
    g_free(p);
}

/* A name of NAME_MAX (255) bytes: its temporary's name is cut to fit. */
static void long_name_is_written(void **state)
{
    char *name = g_strnfill(255, 'n'), *p = in(state, name), *text = NULL, err[512] = "";
    GDir *d;
    int n = 0;

    assert_int_equal(tbbt_outfile_write_all(p, "x\n", 2, err, sizeof(err)), 0);
    assert_true(g_file_get_contents(p, &text, NULL, NULL));
    assert_string_equal(text, "x\n");
    d = g_dir_open((const char *)*state, 0, NULL);
    while (g_dir_read_name(d))
        n++;
    g_dir_close(d);
    assert_int_equal(n, 1);         /* no temporary left */
    g_free(text);
    g_free(p);
    g_free(name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_file_appears_at_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(abort_keeps_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(symlink_stays_link, setup, teardown),
        cmocka_unit_test_setup_teardown(mode_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(writer_opens_path, setup, teardown),
        cmocka_unit_test_setup_teardown(dev_null_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(dev_full_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(link_loop_is_eloop, setup, teardown),
        cmocka_unit_test_setup_teardown(missing_directory_fails_early, setup, teardown),
        cmocka_unit_test_setup_teardown(long_name_is_written, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
