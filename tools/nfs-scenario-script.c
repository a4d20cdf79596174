/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario's scripted scenario (nfs-scenario-int.h): a small tree under the export
 * root made, written, read back, listed, linked, renamed and removed again, with every
 * NFSv3 procedure and the expected failures (NOENT, EXIST, NOTEMPTY); each reply is
 * waited for and checked before the next call.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nfs-scenario-int.h"

static void need_fh(const struct res *r, const char *what)
{
    if (r->fh.len == 0)
        sc_die("%s: reply carries no file handle", what);
}

/* Fills BUF with a pattern that depends on the file offset, so reads can be checked. */
void sc_pattern(char *buf, uint64_t off, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (char)('a' + (off + i) % 26);
}

static void write_chunks(struct client *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                         stable_how stable, const char *what)
{
    char *buf = g_malloc(chunk);
    struct res r = { 0 };

    for (uint64_t off = 0; off < size; off += chunk) {
        uint32_t n = (uint32_t)MIN((uint64_t)chunk, size - off);
        sc_pattern(buf, off, n);
        sc_op_write(c, &r, fh, off, buf, n, stable);
        OK(c, &r, what);
        if (r.count != n)
            sc_die("%s: short write at %" PRIu64 ": %u of %u", what, off, r.count, n);
    }
    g_free(buf);
}

/* Reads the whole file in CHUNK pieces and checks size and content against sc_pattern(). */
static void read_check(struct client *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                       const char *what)
{
    char *buf = g_malloc(chunk), *want = g_malloc(chunk);
    struct res r = { .rbuf = buf, .rbuf_len = chunk };
    uint64_t off = 0;

    for (;;) {
        sc_op_read(c, &r, fh, off, chunk);
        OK(c, &r, what);
        sc_pattern(want, off, r.count);
        if (memcmp(buf, want, r.count) != 0)
            sc_die("%s: data differs at offset %" PRIu64, what, off);
        off += r.count;
        if (r.eof || r.count == 0)
            break;
    }
    if (off != size)
        sc_die("%s: read %" PRIu64 " bytes, expected %" PRIu64, what, off, size);
    g_free(buf);
    g_free(want);
}

/* Lists DIR in pages of COUNT bytes; returns the names as "/a/b/..." (caller frees). */
static char *list_dir(struct client *c, const struct fh *dir, bool plus, uint32_t count,
                      const char *what)
{
    GString *names = g_string_new("");
    struct res r = { .names = names };
    uint64_t cookie = 0;

    memset(r.verf, 0, sizeof(r.verf));
    for (int page = 0; page < 1000; page++) {
        sc_op_readdir(c, &r, dir, plus, cookie, count);
        OK(c, &r, what);
        if (r.eof)
            return g_string_free(names, FALSE);
        if (r.nent == 0)
            sc_die("%s: empty page without eof", what);
        cookie = r.cookie;
    }
    sc_die("%s: more than 1000 pages", what);
}

static void expect_listing(const char *listing, const char *const *want, const char *what)
{
    for (int i = 0; want[i]; i++) {
        gboolean found = FALSE;
        gchar **parts = g_strsplit(listing, "/", -1);
        for (int j = 0; parts[j]; j++)
            found |= strcmp(parts[j], want[i]) == 0;
        g_strfreev(parts);
        if (!found)
            sc_die("%s: '%s' missing from the listing %s", what, want[i], listing);
    }
}

static void getattr_check(struct client *c, const struct fh *fh, uint64_t size, uint32_t nlink,
                          const char *what)
{
    struct res r = { 0 };

    sc_op_getattr(c, &r, fh);
    OK(c, &r, what);
    if (r.size != size || (nlink && r.nlink != nlink))
        sc_die("%s: size %" PRIu64 " nlink %u, expected %" PRIu64 " nlink %u", what, r.size,
               r.nlink, size, nlink);
}

void sc_make_dir(struct client *c, const struct fh *parent, const char *name,
                 struct fh *out, const char *what)
{
    struct res r = { 0 };

    sc_op_mkdir(c, &r, parent, name);
    OK(c, &r, what);
    need_fh(&r, what);
    *out = r.fh;
}

static void make_file(struct client *c, const struct fh *dir, const char *name,
                      createmode3 mode, struct fh *out, const char *what)
{
    struct res r = { 0 };

    sc_op_create(c, &r, dir, name, mode);
    OK(c, &r, what);
    if (r.fh.len == 0) {       /* a CREATE reply may omit the handle: look it up */
        sc_op_lookup(c, &r, dir, name);
        OK(c, &r, what);
    }
    *out = r.fh;
}

/* Server-wide and root queries, and the first expected failures. */
void sc_scenario_start(struct client *c, struct tree *t)
{
    struct res r = { 0 };

    sc_op_null(c, &r);
    OK(c, &r, "NULL");
    sc_op_fsinfo(c, &r, &t->root);
    OK(c, &r, "FSINFO root");
    sc_op_pathconf(c, &r, &t->root);
    OK(c, &r, "PATHCONF root");
    sc_op_fsstat(c, &r, &t->root);
    OK(c, &r, "FSSTAT root");
    sc_op_getattr(c, &r, &t->root);
    OK(c, &r, "GETATTR root");
    sc_op_access(c, &r, &t->root);
    OK(c, &r, "ACCESS root");
    sc_op_lookup(c, &r, &t->root, t->topname);
    sc_expect(c, &r, NFS3ERR_NOENT, "LOOKUP of a missing name");
    sc_make_dir(c, &t->root, t->topname, &t->top, "MKDIR top");
    sc_op_mkdir(c, &r, &t->root, t->topname);
    sc_expect(c, &r, NFS3ERR_EXIST, "MKDIR of an existing name");
    sc_make_dir(c, &t->top, "a", &t->a, "MKDIR a");
    sc_make_dir(c, &t->top, "b", &t->b, "MKDIR b");
    sc_make_dir(c, &t->a, "sub", &t->sub, "MKDIR a/sub");
}

sattr3 sc_sattr_none(void)
{
    sattr3 s;

    memset(&s, 0, sizeof(s));
    return s;
}

/* Files: create three ways, write and read in chunks, truncate, chmod, commit. */
void sc_scenario_files(struct client *c, struct tree *t)
{
    struct res r = { 0 };
    sattr3 sa;

    make_file(c, &t->top, "file1", UNCHECKED, &t->f1, "CREATE file1 unchecked");
    make_file(c, &t->top, "file2", GUARDED, &t->f2, "CREATE file2 guarded");
    make_file(c, &t->top, "file3", EXCLUSIVE, &t->f3, "CREATE file3 exclusive");
    sc_op_create(c, &r, &t->top, "file2", GUARDED);
    sc_expect(c, &r, NFS3ERR_EXIST, "CREATE guarded of an existing name");
    write_chunks(c, &t->f1, 4 * 8192 + 1000, 8192, UNSTABLE, "WRITE file1 unstable");
    sc_op_commit(c, &r, &t->f1);
    OK(c, &r, "COMMIT file1");
    read_check(c, &t->f1, 4 * 8192 + 1000, 8192, "READ file1");
    write_chunks(c, &t->f2, 3000, 1024, DATA_SYNC, "WRITE file2 data_sync");
    write_chunks(c, &t->f3, 5000, 5000, FILE_SYNC, "WRITE file3 file_sync");
    read_check(c, &t->f2, 3000, 700, "READ file2");
    sc_op_lookup(c, &r, &t->top, "file1");
    OK(c, &r, "LOOKUP file1");
    getattr_check(c, &t->f1, 4 * 8192 + 1000, 1, "GETATTR file1");
    sa = sc_sattr_none();
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 10000;
    sc_op_setattr(c, &r, &t->f1, &sa);
    OK(c, &r, "SETATTR file1 truncate");
    getattr_check(c, &t->f1, 10000, 1, "GETATTR file1 after truncate");
    read_check(c, &t->f1, 10000, 4096, "READ file1 after truncate");
    sa = sc_sattr_none();
    sa.mode.set_it = 1;
    sa.mode.set_mode3_u.mode = 0600;
    sa.mtime.set_it = SET_TO_SERVER_TIME;
    sc_op_setattr(c, &r, &t->f3, &sa);
    OK(c, &r, "SETATTR file3 chmod");
    sc_op_access(c, &r, &t->f3);
    OK(c, &r, "ACCESS file3");
    sc_op_commit(c, &r, &t->f3);
    OK(c, &r, "COMMIT file3");
}

/* Links, symlinks, a FIFO, and listings of the tree in several pages. */
void sc_scenario_links(struct client *c, struct tree *t)
{
    static const char *const top_names[] = { "a", "b", "file1", "file2", "file3", "sym1",
                                             "fifo1", NULL };
    static const char *const a_names[] = { "sub", "file1.link", "up", NULL };
    struct res r = { 0 };
    char *listing;

    sc_op_link(c, &r, &t->f1, &t->a, "file1.link");
    OK(c, &r, "LINK a/file1.link");
    getattr_check(c, &t->f1, 10000, 2, "GETATTR file1 after LINK");
    sc_op_symlink(c, &r, &t->top, "sym1", "file1");
    OK(c, &r, "SYMLINK sym1");
    need_fh(&r, "SYMLINK sym1");
    t->sym = r.fh;
    sc_op_readlink(c, &r, &t->sym);
    OK(c, &r, "READLINK sym1");
    if (strcmp(r.path, "file1") != 0)
        sc_die("READLINK sym1: got '%s', expected 'file1'", r.path);
    sc_op_symlink(c, &r, &t->a, "up", "../b");
    OK(c, &r, "SYMLINK a/up");
    sc_op_mknod_fifo(c, &r, &t->top, "fifo1");
    OK(c, &r, "MKNOD fifo1");
    listing = list_dir(c, &t->top, false, 256, "READDIR top");
    expect_listing(listing, top_names, "READDIR top");
    g_free(listing);
    listing = list_dir(c, &t->top, true, 256, "READDIRPLUS top");
    expect_listing(listing, top_names, "READDIRPLUS top");
    g_free(listing);
    listing = list_dir(c, &t->a, false, 4096, "READDIR a");
    expect_listing(listing, a_names, "READDIR a");
    g_free(listing);
    listing = list_dir(c, &t->a, true, 4096, "READDIRPLUS a");
    g_free(listing);
}

/* Renames (over an existing target, of a directory with children, across dirs). */
void sc_scenario_renames(struct client *c, struct tree *t)
{
    struct res r = { 0 };

    if (t->no_rename_over) {
        sc_op_remove(c, &r, &t->top, "file3");
        OK(c, &r, "REMOVE file3 (no rename over a target)");
    }
    sc_op_rename(c, &r, &t->top, "file2", &t->top, "file3");
    OK(c, &r, t->no_rename_over ? "RENAME file2 to file3" : "RENAME file2 over file3");
    sc_op_lookup(c, &r, &t->top, "file2");
    sc_expect(c, &r, NFS3ERR_NOENT, "LOOKUP file2 after RENAME");
    sc_op_lookup(c, &r, &t->top, "file3");
    OK(c, &r, "LOOKUP file3 after RENAME");
    getattr_check(c, &r.fh, 3000, 1, "GETATTR renamed file3");
    sc_op_rename(c, &r, &t->top, "a", &t->top, "a2");
    OK(c, &r, "RENAME directory a to a2");
    sc_op_rename(c, &r, &t->a, "file1.link", &t->b, "moved.link");
    OK(c, &r, "RENAME a2/file1.link to b/moved.link");
    sc_op_lookup(c, &r, &t->b, "moved.link");
    OK(c, &r, "LOOKUP b/moved.link");
    sc_op_rmdir(c, &r, &t->top, "a2");
    sc_expect(c, &r, NFS3ERR_NOTEMPTY, "RMDIR of a non-empty directory");
    sc_op_getattr(c, &r, &t->a);
    OK(c, &r, "GETATTR a2");
}

/* Removes the whole tree, leaving the export as it was. */
void sc_scenario_cleanup(struct client *c, struct tree *t)
{
    static const struct { int dir; bool rmdir; const char *name; } steps[] = {
        { 2, false, "moved.link" }, { 1, true, "sub" }, { 1, false, "up" },
        { 0, true, "a2" }, { 0, true, "b" }, { 0, false, "file1" }, { 0, false, "file3" },
        { 0, false, "sym1" }, { 0, false, "fifo1" },
    };
    const struct fh *dirs[] = { &t->top, &t->a, &t->b };
    struct res r = { 0 };

    for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
        char *what = g_strdup_printf("%s %s", steps[i].rmdir ? "RMDIR" : "REMOVE",
                                     steps[i].name);
        if (steps[i].rmdir)
            sc_op_rmdir(c, &r, dirs[steps[i].dir], steps[i].name);
        else
            sc_op_remove(c, &r, dirs[steps[i].dir], steps[i].name);
        OK(c, &r, what);
        g_free(what);
    }
    sc_op_readdir(c, &r, &t->top, true, 0, 4096);
    OK(c, &r, "READDIRPLUS empty top");
    sc_op_rmdir(c, &r, &t->root, t->topname);
    OK(c, &r, "RMDIR top");
    sc_op_fsstat(c, &r, &t->root);
    OK(c, &r, "FSSTAT root at the end");
}
