/* SPDX-License-Identifier: MIT */
/*
 * udp-scenario's NFSv3 part (udp-scenario-int.h): one checked function per procedure of
 * RFC 1813 section 3 through the rpcgen stubs (results freed with xdr_free() in the
 * function that decoded them), the scripted scenario built from them, and --ops random
 * file calls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "udp-scenario-int.h"

/* ------------------------------------------------------------------ NFSv3 calls */

static nfs_fh3 fh3(const struct fh *fh)
{
    return (nfs_fh3){ .data = { .data_len = fh->len, .data_val = (char *)fh->data } };
}

static diropargs3 dirop3(const struct fh *dir, const char *name)
{
    return (diropargs3){ .dir = fh3(dir), .name = (char *)name };
}

static void keep_fh3(struct fh *out, const nfs_fh3 *in, const char *what)
{
    if (in->data.data_len == 0 || in->data.data_len > NFS3_FHSIZE)
        us_die("%s: bad file handle length %u", what, in->data.data_len);
    out->len = in->data.data_len;
    memcpy(out->data, in->data.data_val, out->len);
}

static void keep_post_fh3(struct fh *out, const post_op_fh3 *in, const char *what)
{
    if (!in->handle_follows)
        us_die("%s: reply carries no file handle", what);
    keep_fh3(out, &in->post_op_fh3_u.handle, what);
}

static void v3_null(struct conn *c)
{
    us_rpc_ok(c, NFSPROC3_NULL, nfsproc3_null_3(NULL, NULL, c->clnt), "NULL");
}

static fattr3 v3_getattr(struct conn *c, const struct fh *fh, const char *what)
{
    GETATTR3args a = { .object = fh3(fh) };
    GETATTR3res r = { 0 };
    fattr3 attr;

    us_rpc_ok(c, NFSPROC3_GETATTR, nfsproc3_getattr_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    attr = r.GETATTR3res_u.resok.obj_attributes;
    xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&r);
    return attr;
}

static void v3_setattr(struct conn *c, const struct fh *fh, const sattr3 *sa, const char *what)
{
    SETATTR3args a = { .object = fh3(fh), .new_attributes = *sa };
    SETATTR3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_SETATTR, nfsproc3_setattr_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_SETATTR3res, (char *)&r);
}

/* LOOKUP expecting WANT; on success stores the handle in OUT (may be NULL). */
static void v3_lookup(struct conn *c, const struct fh *dir, const char *name, int want,
                      struct fh *out, const char *what)
{
    LOOKUP3args a = { .what = dirop3(dir, name) };
    LOOKUP3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_LOOKUP, nfsproc3_lookup_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, want, what);
    if (r.status == NFS3_OK && out)
        keep_fh3(out, &r.LOOKUP3res_u.resok.object, what);
    xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
}

static void v3_access(struct conn *c, const struct fh *fh, const char *what)
{
    ACCESS3args a = { .object = fh3(fh), .access = ACCESS3_READ | ACCESS3_LOOKUP |
                      ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE | ACCESS3_EXECUTE };
    ACCESS3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_ACCESS, nfsproc3_access_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_ACCESS3res, (char *)&r);
}

static void v3_readlink(struct conn *c, const struct fh *fh, const char *target,
                        const char *what)
{
    READLINK3args a = { .symlink = fh3(fh) };
    READLINK3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_READLINK, nfsproc3_readlink_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    if (strcmp(r.READLINK3res_u.resok.data, target) != 0)
        us_die("%s: got '%s', expected '%s'", what, r.READLINK3res_u.resok.data, target);
    xdr_free((xdrproc_t)xdr_READLINK3res, (char *)&r);
}

/* READ of COUNT at OFF; checks the data against us_pattern(); returns the count read. */
static uint32_t v3_read(struct conn *c, const struct fh *fh, uint64_t off, uint32_t count,
                        bool *eof, const char *what)
{
    READ3args a = { .file = fh3(fh), .offset = off, .count = count };
    READ3res r = { 0 };
    char want[CHUNK];
    uint32_t n;

    us_rpc_ok(c, NFSPROC3_READ, nfsproc3_read_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    n = r.READ3res_u.resok.data.data_len;
    if (n > CHUNK || n != r.READ3res_u.resok.count)
        us_die("%s: inconsistent count %u", what, n);
    us_pattern(want, off, n);
    if (memcmp(r.READ3res_u.resok.data.data_val, want, n) != 0)
        us_die("%s: data differs at offset %" PRIu64, what, off);
    *eof = r.READ3res_u.resok.eof;
    xdr_free((xdrproc_t)xdr_READ3res, (char *)&r);
    return n;
}

static void v3_write(struct conn *c, const struct fh *fh, uint64_t off, uint32_t count,
                     stable_how stable, const char *what)
{
    char buf[CHUNK];
    WRITE3args a = { .file = fh3(fh), .offset = off, .count = count, .stable = stable,
                     .data = { .data_len = count, .data_val = buf } };
    WRITE3res r = { 0 };

    us_pattern(buf, off, count);
    us_rpc_ok(c, NFSPROC3_WRITE, nfsproc3_write_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    if (r.WRITE3res_u.resok.count != count)
        us_die("%s: short write %u of %u", what, r.WRITE3res_u.resok.count, count);
    xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&r);
}

static void v3_create(struct conn *c, const struct fh *dir, const char *name, createmode3 mode,
                      int want, struct fh *out, const char *what)
{
    CREATE3args a = { .where = dirop3(dir, name), .how = { .mode = mode } };
    CREATE3res r = { 0 };

    if (mode == EXCLUSIVE) {
        memcpy(a.how.createhow3_u.verf, "tbbtverf", NFS3_CREATEVERFSIZE);
    } else {
        a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
        a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
    }
    us_rpc_ok(c, NFSPROC3_CREATE, nfsproc3_create_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, want, what);
    if (r.status == NFS3_OK)
        keep_post_fh3(out, &r.CREATE3res_u.resok.obj, what);
    xdr_free((xdrproc_t)xdr_CREATE3res, (char *)&r);
}

static void v3_mkdir(struct conn *c, const struct fh *dir, const char *name, int want,
                     struct fh *out, const char *what)
{
    MKDIR3args a = { .where = dirop3(dir, name) };
    MKDIR3res r = { 0 };

    a.attributes.mode.set_it = TRUE;
    a.attributes.mode.set_mode3_u.mode = 0755;
    us_rpc_ok(c, NFSPROC3_MKDIR, nfsproc3_mkdir_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, want, what);
    if (r.status == NFS3_OK)
        keep_post_fh3(out, &r.MKDIR3res_u.resok.obj, what);
    xdr_free((xdrproc_t)xdr_MKDIR3res, (char *)&r);
}

static void v3_symlink(struct conn *c, const struct fh *dir, const char *name,
                       const char *target, struct fh *out, const char *what)
{
    SYMLINK3args a = { .where = dirop3(dir, name) };
    SYMLINK3res r = { 0 };

    a.symlink.symlink_data = (char *)target;
    a.symlink.symlink_attributes.mode.set_it = TRUE;
    a.symlink.symlink_attributes.mode.set_mode3_u.mode = 0777;
    us_rpc_ok(c, NFSPROC3_SYMLINK, nfsproc3_symlink_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    keep_post_fh3(out, &r.SYMLINK3res_u.resok.obj, what);
    xdr_free((xdrproc_t)xdr_SYMLINK3res, (char *)&r);
}

static void v3_mknod_fifo(struct conn *c, const struct fh *dir, const char *name,
                          const char *what)
{
    MKNOD3args a = { .where = dirop3(dir, name), .what = { .type = NF3FIFO } };
    MKNOD3res r = { 0 };

    a.what.mknoddata3_u.pipe_attributes.mode.set_it = TRUE;
    a.what.mknoddata3_u.pipe_attributes.mode.set_mode3_u.mode = 0600;
    us_rpc_ok(c, NFSPROC3_MKNOD, nfsproc3_mknod_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_MKNOD3res, (char *)&r);
}

/* REMOVE (rmdir false) or RMDIR expecting WANT. */
static void v3_remove(struct conn *c, const struct fh *dir, const char *name, bool rmdir,
                      int want, const char *what)
{
    if (rmdir) {
        RMDIR3args a = { .object = dirop3(dir, name) };
        RMDIR3res r = { 0 };
        us_rpc_ok(c, NFSPROC3_RMDIR, nfsproc3_rmdir_3(&a, &r, c->clnt), what);
        us_want_status(false, r.status, want, what);
        xdr_free((xdrproc_t)xdr_RMDIR3res, (char *)&r);
    } else {
        REMOVE3args a = { .object = dirop3(dir, name) };
        REMOVE3res r = { 0 };
        us_rpc_ok(c, NFSPROC3_REMOVE, nfsproc3_remove_3(&a, &r, c->clnt), what);
        us_want_status(false, r.status, want, what);
        xdr_free((xdrproc_t)xdr_REMOVE3res, (char *)&r);
    }
}

static void v3_rename(struct conn *c, const struct fh *from_dir, const char *from,
                      const struct fh *to_dir, const char *to, const char *what)
{
    RENAME3args a = { .from = dirop3(from_dir, from), .to = dirop3(to_dir, to) };
    RENAME3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_RENAME, nfsproc3_rename_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_RENAME3res, (char *)&r);
}

static void v3_link(struct conn *c, const struct fh *file, const struct fh *dir,
                    const char *name, const char *what)
{
    LINK3args a = { .file = fh3(file), .link = dirop3(dir, name) };
    LINK3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_LINK, nfsproc3_link_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_LINK3res, (char *)&r);
}

/* Appends "/name" of each entry to NAMES; returns false at eof, else the next cookie. */
static bool v3_readdir_page(struct conn *c, const struct fh *dir, bool plus, uint32_t count,
                            uint64_t *cookie, char *verf, GString *names, const char *what)
{
    bool more;

    if (plus) {
        READDIRPLUS3args a = { .dir = fh3(dir), .cookie = *cookie, .dircount = count,
                               .maxcount = count * 4 };
        READDIRPLUS3res r = { 0 };
        memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
        us_rpc_ok(c, NFSPROC3_READDIRPLUS, nfsproc3_readdirplus_3(&a, &r, c->clnt), what);
        us_want_status(false, r.status, NFS3_OK, what);
        for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
            g_string_append_printf(names, "/%s", e->name);
            *cookie = e->cookie;
        }
        memcpy(verf, r.READDIRPLUS3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
        more = !r.READDIRPLUS3res_u.resok.reply.eof;
        xdr_free((xdrproc_t)xdr_READDIRPLUS3res, (char *)&r);
    } else {
        READDIR3args a = { .dir = fh3(dir), .cookie = *cookie, .count = count };
        READDIR3res r = { 0 };
        memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
        us_rpc_ok(c, NFSPROC3_READDIR, nfsproc3_readdir_3(&a, &r, c->clnt), what);
        us_want_status(false, r.status, NFS3_OK, what);
        for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
            g_string_append_printf(names, "/%s", e->name);
            *cookie = e->cookie;
        }
        memcpy(verf, r.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
        more = !r.READDIR3res_u.resok.reply.eof;
        xdr_free((xdrproc_t)xdr_READDIR3res, (char *)&r);
    }
    return more;
}

static void v3_fs_queries(struct conn *c, const struct fh *fh)
{
    FSSTAT3args sa = { .fsroot = fh3(fh) };
    FSSTAT3res sr = { 0 };
    FSINFO3args ia = { .fsroot = fh3(fh) };
    FSINFO3res ir = { 0 };
    PATHCONF3args pa = { .object = fh3(fh) };
    PATHCONF3res pr = { 0 };

    us_rpc_ok(c, NFSPROC3_FSINFO, nfsproc3_fsinfo_3(&ia, &ir, c->clnt), "FSINFO");
    us_want_status(false, ir.status, NFS3_OK, "FSINFO");
    xdr_free((xdrproc_t)xdr_FSINFO3res, (char *)&ir);
    us_rpc_ok(c, NFSPROC3_PATHCONF, nfsproc3_pathconf_3(&pa, &pr, c->clnt), "PATHCONF");
    us_want_status(false, pr.status, NFS3_OK, "PATHCONF");
    xdr_free((xdrproc_t)xdr_PATHCONF3res, (char *)&pr);
    us_rpc_ok(c, NFSPROC3_FSSTAT, nfsproc3_fsstat_3(&sa, &sr, c->clnt), "FSSTAT");
    us_want_status(false, sr.status, NFS3_OK, "FSSTAT");
    xdr_free((xdrproc_t)xdr_FSSTAT3res, (char *)&sr);
}

static void v3_commit(struct conn *c, const struct fh *fh, const char *what)
{
    COMMIT3args a = { .file = fh3(fh) };
    COMMIT3res r = { 0 };

    us_rpc_ok(c, NFSPROC3_COMMIT, nfsproc3_commit_3(&a, &r, c->clnt), what);
    us_want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_COMMIT3res, (char *)&r);
}

/* ------------------------------------------------------------------ NFSv3 scenario */

static void v3_write_file(struct conn *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                          stable_how stable, const char *what)
{
    for (uint64_t off = 0; off < size; off += chunk)
        v3_write(c, fh, off, (uint32_t)MIN((uint64_t)chunk, size - off), stable, what);
}

static void v3_read_file(struct conn *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                         const char *what)
{
    uint64_t off = 0;
    bool eof = false;

    while (!eof) {
        uint32_t n = v3_read(c, fh, off, chunk, &eof, what);
        off += n;
        if (n == 0)
            break;
    }
    if (off != size)
        us_die("%s: read %" PRIu64 " bytes, expected %" PRIu64, what, off, size);
}

static void v3_list(struct conn *c, const struct fh *dir, bool plus, uint32_t count,
                    const char *must, const char *what)
{
    GString *names = g_string_new("");
    char verf[NFS3_COOKIEVERFSIZE] = { 0 };
    uint64_t cookie = 0;
    int pages = 0;

    while (v3_readdir_page(c, dir, plus, count, &cookie, verf, names, what))
        if (++pages > 1000)
            us_die("%s: more than 1000 pages", what);
    if (must) {
        gchar **want = g_strsplit(must, "/", -1);
        for (int i = 0; want[i]; i++) {
            char *needle = g_strdup_printf("/%s/", want[i]);
            char *hay = g_strdup_printf("%s/", names->str);
            if (!strstr(hay, needle))
                us_die("%s: '%s' missing from %s", what, want[i], names->str);
            g_free(needle);
            g_free(hay);
        }
        g_strfreev(want);
    }
    g_string_free(names, TRUE);
}

static sattr3 sattr3_none(void)
{
    sattr3 s;

    memset(&s, 0, sizeof(s));
    return s;
}

static void v3_scenario_build(struct conn *c, struct tree *t)
{
    struct fh scratch;
    sattr3 sa;

    v3_null(c);
    v3_fs_queries(c, &t->root);
    v3_getattr(c, &t->root, "GETATTR root");
    v3_access(c, &t->root, "ACCESS root");
    v3_lookup(c, &t->root, t->topname, NFS3ERR_NOENT, NULL, "LOOKUP of a missing name");
    v3_mkdir(c, &t->root, t->topname, NFS3_OK, &t->top, "MKDIR top");
    v3_mkdir(c, &t->root, t->topname, NFS3ERR_EXIST, &scratch, "MKDIR of an existing name");
    v3_mkdir(c, &t->top, "a", NFS3_OK, &t->a, "MKDIR a");
    v3_mkdir(c, &t->top, "b", NFS3_OK, &t->b, "MKDIR b");
    v3_mkdir(c, &t->a, "sub", NFS3_OK, &scratch, "MKDIR a/sub");
    v3_create(c, &t->top, "file1", UNCHECKED, NFS3_OK, &t->f1, "CREATE file1");
    v3_create(c, &t->top, "file2", GUARDED, NFS3_OK, &t->f2, "CREATE file2");
    v3_create(c, &t->top, "file3", EXCLUSIVE, NFS3_OK, &t->f3, "CREATE file3 exclusive");
    v3_create(c, &t->top, "file2", GUARDED, NFS3ERR_EXIST, &scratch, "CREATE existing");
    v3_write_file(c, &t->f1, 3 * CHUNK + 1000, CHUNK, UNSTABLE, "WRITE file1");
    v3_commit(c, &t->f1, "COMMIT file1");
    v3_read_file(c, &t->f1, 3 * CHUNK + 1000, CHUNK, "READ file1");
    v3_write_file(c, &t->f2, 3000, 1024, DATA_SYNC, "WRITE file2");
    v3_write_file(c, &t->f3, 5000, 5000, FILE_SYNC, "WRITE file3");
    v3_read_file(c, &t->f2, 3000, 700, "READ file2");
    sa = sattr3_none();
    sa.size.set_it = TRUE;
    sa.size.set_size3_u.size = 10000;
    v3_setattr(c, &t->f1, &sa, "SETATTR file1 truncate");
    if (v3_getattr(c, &t->f1, "GETATTR file1").size != 10000)
        us_die("GETATTR file1: size is not 10000 after the truncate");
    sa = sattr3_none();
    sa.mode.set_it = TRUE;
    sa.mode.set_mode3_u.mode = 0600;
    v3_setattr(c, &t->f3, &sa, "SETATTR file3 chmod");
    v3_access(c, &t->f3, "ACCESS file3");
}

static void v3_scenario_links(struct conn *c, struct tree *t)
{
    struct fh up;

    v3_link(c, &t->f1, &t->a, "file1.link", "LINK a/file1.link");
    if (v3_getattr(c, &t->f1, "GETATTR file1 after LINK").nlink != 2)
        us_die("GETATTR file1: nlink is not 2 after LINK");
    v3_symlink(c, &t->top, "sym1", "file1", &t->sym, "SYMLINK sym1");
    v3_readlink(c, &t->sym, "file1", "READLINK sym1");
    v3_symlink(c, &t->a, "up", "../b", &up, "SYMLINK a/up");
    v3_mknod_fifo(c, &t->top, "fifo1", "MKNOD fifo1");
    v3_list(c, &t->top, false, 256, "a/b/file1/file2/file3/sym1/fifo1", "READDIR top");
    v3_list(c, &t->top, true, 256, "a/b/file1/file2/file3/sym1/fifo1", "READDIRPLUS top");
    v3_list(c, &t->a, false, 4096, "sub/file1.link/up", "READDIR a");
    v3_list(c, &t->a, true, 4096, NULL, "READDIRPLUS a");
}

static void v3_scenario_finish(struct conn *c, struct tree *t)
{
    struct fh f;

    v3_rename(c, &t->top, "file2", &t->top, "file3", "RENAME file2 over file3");
    v3_lookup(c, &t->top, "file2", NFS3ERR_NOENT, NULL, "LOOKUP file2 after RENAME");
    v3_lookup(c, &t->top, "file3", NFS3_OK, &f, "LOOKUP file3 after RENAME");
    v3_read_file(c, &f, 3000, CHUNK, "READ renamed file3");
    v3_rename(c, &t->top, "a", &t->top, "a2", "RENAME directory a to a2");
    v3_rename(c, &t->a, "file1.link", &t->b, "moved.link", "RENAME across directories");
    v3_remove(c, &t->top, "a2", true, NFS3ERR_NOTEMPTY, "RMDIR of a non-empty directory");
    v3_remove(c, &t->b, "moved.link", false, NFS3_OK, "REMOVE b/moved.link");
    v3_remove(c, &t->a, "sub", true, NFS3_OK, "RMDIR a2/sub");
    v3_remove(c, &t->a, "up", false, NFS3_OK, "REMOVE a2/up");
    v3_remove(c, &t->top, "a2", true, NFS3_OK, "RMDIR a2");
    v3_remove(c, &t->top, "b", true, NFS3_OK, "RMDIR b");
    v3_remove(c, &t->top, "sym1", false, NFS3_OK, "REMOVE sym1");
    v3_remove(c, &t->top, "fifo1", false, NFS3_OK, "REMOVE fifo1");
    v3_remove(c, &t->top, "file3", false, NFS3_OK, "REMOVE file3");
}

/* Random GETATTR/LOOKUP/ACCESS/READ/WRITE calls on file1 (10000 bytes at the start). */
static void v3_random(struct conn *c, struct tree *t, const struct config *cfg)
{
    GRand *rng = g_rand_new_with_seed((guint32)cfg->seed);
    uint64_t size = 10000;
    bool eof;

    for (gint64 i = 0; i < cfg->ops; i++) {
        uint32_t n = (uint32_t)g_rand_int_range(rng, 1, CHUNK + 1);
        /* At most at the end of the file: no holes, so reads match us_pattern(). */
        uint64_t off = (uint64_t)g_rand_int_range(rng, 0, (gint32)MIN(size, 32 * CHUNK) + 1);
        switch (g_rand_int_range(rng, 0, 5)) {
        case 0: v3_getattr(c, &t->f1, "random GETATTR"); break;
        case 1: v3_lookup(c, &t->top, "file1", NFS3_OK, NULL, "random LOOKUP"); break;
        case 2: v3_access(c, &t->f1, "random ACCESS"); break;
        case 3:
            off = MIN(off, size - 1);
            if (v3_read(c, &t->f1, off, n, &eof, "random READ") != MIN(n, size - off))
                us_die("random READ: wrong count at %" PRIu64, off);
            break;
        default:
            v3_write(c, &t->f1, off, n, UNSTABLE, "random WRITE");
            size = MAX(size, off + n);
            break;
        }
    }
    g_rand_free(rng);
}

void us_v3_run(struct conn *c, struct tree *t, const struct config *cfg)
{
    v3_scenario_build(c, t);
    v3_scenario_links(c, t);
    v3_scenario_finish(c, t);
    v3_random(c, t, cfg);
    v3_remove(c, &t->top, "file1", false, NFS3_OK, "REMOVE file1");
    v3_list(c, &t->top, true, 4096, NULL, "READDIRPLUS empty top");
    v3_remove(c, &t->root, t->topname, true, NFS3_OK, "RMDIR top");
    v3_fs_queries(c, &t->root);
}
