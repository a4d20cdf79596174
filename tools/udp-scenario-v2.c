/* SPDX-License-Identifier: MIT */
/*
 * udp-scenario's NFSv2 part (--v2; udp-scenario-int.h): the scenario over the RFC 1094
 * procedures (section 2.2; all but the obsolete ROOT and WRITECACHE) through the rpcgen
 * stubs, with the calls it needs, each checked.
 */
#include <stdio.h>
#include <string.h>

#include "udp-scenario-int.h"

static nfs2_diropargs dirop2(struct fh *dir, const char *name)
{
    nfs2_diropargs d;

    memcpy(d.dir, dir->data, NFS2_FHSIZE);
    d.name = (char *)name;
    return d;
}

static nfs2_sattr sattr2(u_int mode, u_int size)
{
    nfs2_sattr s;

    memset(&s, 0xff, sizeof(s));      /* -1: leave unchanged (RFC 1094 2.3.6) */
    s.mode = mode;
    s.size = size;
    return s;
}

static void v2_dirop(struct conn *c, int proc, struct fh *dir, const char *name, u_int mode,
                     int want, struct fh *out, const char *what)
{
    nfs2_diropres r = { 0 };
    enum clnt_stat st;

    if (proc == NFSPROC_LOOKUP) {
        nfs2_diropargs a = dirop2(dir, name);
        st = nfsproc_lookup_2(&a, &r, c->clnt);
    } else {
        nfs2_createargs a = { .where = dirop2(dir, name), .attributes = sattr2(mode, ~0u) };
        st = proc == NFSPROC_MKDIR ? nfsproc_mkdir_2(&a, &r, c->clnt)
                                   : nfsproc_create_2(&a, &r, c->clnt);
    }
    us_rpc_ok(c, proc, st, what);
    us_want_status(true, r.status, want, what);
    if (r.status == NFS_OK && out) {
        out->len = NFS2_FHSIZE;
        memcpy(out->data, r.nfs2_diropres_u.diropok.file, NFS2_FHSIZE);
    }
    xdr_free((xdrproc_t)xdr_nfs2_diropres, (char *)&r);
}

/* REMOVE, RMDIR, RENAME, LINK and SYMLINK all reply with a bare nfs2_stat. */
static void v2_stat_call(struct conn *c, int proc, void *args, int want, const char *what)
{
    nfs2_stat r = NFS_OK;
    enum clnt_stat st;

    switch (proc) {
    case NFSPROC_REMOVE: st = nfsproc_remove_2(args, &r, c->clnt); break;
    case NFSPROC_RMDIR: st = nfsproc_rmdir_2(args, &r, c->clnt); break;
    case NFSPROC_RENAME: st = nfsproc_rename_2(args, &r, c->clnt); break;
    case NFSPROC_LINK: st = nfsproc_link_2(args, &r, c->clnt); break;
    default: st = nfsproc_symlink_2(args, &r, c->clnt); break;
    }
    us_rpc_ok(c, proc, st, what);
    us_want_status(true, r, want, what);
}

static void v2_remove(struct conn *c, struct fh *dir, const char *name, bool rmdir, int want,
                      const char *what)
{
    nfs2_diropargs a = dirop2(dir, name);

    v2_stat_call(c, rmdir ? NFSPROC_RMDIR : NFSPROC_REMOVE, &a, want, what);
}

static nfs2_fattr v2_attrcall(struct conn *c, int proc, struct fh *fh, u_int size,
                              const char *what)
{
    nfs2_attrstat r = { 0 };
    nfs2_fattr attr;

    if (proc == NFSPROC_GETATTR) {
        us_rpc_ok(c, proc, nfsproc_getattr_2(fh->data, &r, c->clnt), what);
    } else {
        nfs2_sattrargs a = { .attributes = sattr2(~0u, size) };
        memcpy(a.file, fh->data, NFS2_FHSIZE);
        us_rpc_ok(c, proc, nfsproc_setattr_2(&a, &r, c->clnt), what);
    }
    us_want_status(true, r.status, NFS_OK, what);
    attr = r.nfs2_attrstat_u.attributes;
    xdr_free((xdrproc_t)xdr_nfs2_attrstat, (char *)&r);
    return attr;
}

static void v2_write_file(struct conn *c, struct fh *fh, u_int size, const char *what)
{
    char buf[NFS2_MAXDATA];

    for (u_int off = 0; off < size; off += NFS2_MAXDATA) {
        u_int n = MIN((u_int)NFS2_MAXDATA, size - off);
        nfs2_writeargs a = { .offset = off, .data = { .data_len = n, .data_val = buf } };
        nfs2_attrstat r = { 0 };
        memcpy(a.file, fh->data, NFS2_FHSIZE);
        us_pattern(buf, off, n);
        us_rpc_ok(c, NFSPROC_WRITE, nfsproc_write_2(&a, &r, c->clnt), what);
        us_want_status(true, r.status, NFS_OK, what);
        xdr_free((xdrproc_t)xdr_nfs2_attrstat, (char *)&r);
    }
}

static void v2_read_file(struct conn *c, struct fh *fh, u_int size, const char *what)
{
    char want[NFS2_MAXDATA];
    u_int off = 0, n;

    do {
        nfs2_readargs a = { .offset = off, .count = NFS2_MAXDATA };
        nfs2_readres r = { 0 };
        memcpy(a.file, fh->data, NFS2_FHSIZE);
        us_rpc_ok(c, NFSPROC_READ, nfsproc_read_2(&a, &r, c->clnt), what);
        us_want_status(true, r.status, NFS_OK, what);
        n = r.nfs2_readres_u.reply.data.data_len;
        us_pattern(want, off, MIN(n, (u_int)NFS2_MAXDATA));
        if (n > NFS2_MAXDATA || memcmp(r.nfs2_readres_u.reply.data.data_val, want, n) != 0)
            us_die("%s: data differs at offset %u", what, off);
        off += n;
        xdr_free((xdrproc_t)xdr_nfs2_readres, (char *)&r);
    } while (n == NFS2_MAXDATA);
    if (off != size)
        us_die("%s: read %u bytes, expected %u", what, off, size);
}

static void v2_list(struct conn *c, struct fh *dir, const char *what)
{
    nfs2_cookie cookie = { 0 };
    bool eof = false;

    for (int page = 0; !eof; page++) {
        nfs2_readdirargs a = { .count = 256 };
        nfs2_readdirres r = { 0 };
        memcpy(a.dir, dir->data, NFS2_FHSIZE);
        memcpy(a.cookie, cookie, NFS2_COOKIESIZE);
        us_rpc_ok(c, NFSPROC_READDIR, nfsproc_readdir_2(&a, &r, c->clnt), what);
        us_want_status(true, r.status, NFS_OK, what);
        for (nfs2_entry *e = r.nfs2_readdirres_u.readdirok.entries; e; e = e->nextentry)
            memcpy(cookie, e->cookie, NFS2_COOKIESIZE);
        eof = r.nfs2_readdirres_u.readdirok.eof || page > 1000;
        xdr_free((xdrproc_t)xdr_nfs2_readdirres, (char *)&r);
    }
}

static void v2_links(struct conn *c, struct tree *t)
{
    nfs2_linkargs la = { .to = dirop2(&t->a, "file1.link") };
    nfs2_symlinkargs sa = { .from = dirop2(&t->top, "sym1"), .to = "file1",
                            .attributes = sattr2(0777, ~0u) };
    nfs2_readlinkres rr = { 0 };

    memcpy(la.from, t->f1.data, NFS2_FHSIZE);
    v2_stat_call(c, NFSPROC_LINK, &la, NFS_OK, "LINK a/file1.link");
    v2_stat_call(c, NFSPROC_SYMLINK, &sa, NFS_OK, "SYMLINK sym1");
    v2_dirop(c, NFSPROC_LOOKUP, &t->top, "sym1", 0, NFS_OK, &t->sym, "LOOKUP sym1");
    us_rpc_ok(c, NFSPROC_READLINK, nfsproc_readlink_2(t->sym.data, &rr, c->clnt), "READLINK");
    us_want_status(true, rr.status, NFS_OK, "READLINK sym1");
    if (strcmp(rr.nfs2_readlinkres_u.data, "file1") != 0)
        us_die("READLINK sym1: got '%s'", rr.nfs2_readlinkres_u.data);
    xdr_free((xdrproc_t)xdr_nfs2_readlinkres, (char *)&rr);
}

static void v2_renames(struct conn *c, struct tree *t)
{
    nfs2_renameargs over = { .from = dirop2(&t->top, "file2"), .to = dirop2(&t->top, "file3") };
    nfs2_renameargs dir = { .from = dirop2(&t->top, "a"), .to = dirop2(&t->top, "a2") };

    v2_stat_call(c, NFSPROC_RENAME, &over, NFS_OK, "RENAME file2 over file3");
    v2_stat_call(c, NFSPROC_RENAME, &dir, NFS_OK, "RENAME directory a to a2");
    v2_remove(c, &t->top, "a2", true, NFSERR_NOTEMPTY, "RMDIR of a non-empty directory");
    v2_remove(c, &t->a, "file1.link", false, NFS_OK, "REMOVE a2/file1.link");
    v2_remove(c, &t->top, "a2", true, NFS_OK, "RMDIR a2");
    v2_remove(c, &t->top, "b", true, NFS_OK, "RMDIR b");
    v2_remove(c, &t->top, "sym1", false, NFS_OK, "REMOVE sym1");
    v2_remove(c, &t->top, "file3", false, NFS_OK, "REMOVE file3");
    v2_remove(c, &t->top, "file1", false, NFS_OK, "REMOVE file1");
}

void us_v2_run(struct conn *c, struct tree *t)
{
    nfs2_statfsres sr = { 0 };

    us_rpc_ok(c, NFSPROC_NULL, nfsproc_null_2(NULL, NULL, c->clnt), "NULL");
    us_rpc_ok(c, NFSPROC_STATFS, nfsproc_statfs_2(t->root.data, &sr, c->clnt), "STATFS");
    us_want_status(true, sr.status, NFS_OK, "STATFS");
    v2_attrcall(c, NFSPROC_GETATTR, &t->root, 0, "GETATTR root");
    v2_dirop(c, NFSPROC_LOOKUP, &t->root, t->topname, 0, NFSERR_NOENT, NULL, "LOOKUP missing");
    v2_dirop(c, NFSPROC_MKDIR, &t->root, t->topname, 0755, NFS_OK, &t->top, "MKDIR top");
    v2_dirop(c, NFSPROC_MKDIR, &t->root, t->topname, 0755, NFSERR_EXIST, NULL, "MKDIR again");
    v2_dirop(c, NFSPROC_MKDIR, &t->top, "a", 0755, NFS_OK, &t->a, "MKDIR a");
    v2_dirop(c, NFSPROC_MKDIR, &t->top, "b", 0755, NFS_OK, &t->b, "MKDIR b");
    v2_dirop(c, NFSPROC_CREATE, &t->top, "file1", 0644, NFS_OK, &t->f1, "CREATE file1");
    v2_dirop(c, NFSPROC_CREATE, &t->top, "file2", 0644, NFS_OK, &t->f2, "CREATE file2");
    v2_dirop(c, NFSPROC_CREATE, &t->top, "file3", 0644, NFS_OK, &t->f3, "CREATE file3");
    v2_write_file(c, &t->f1, 3 * NFS2_MAXDATA + 1000, "WRITE file1");
    v2_read_file(c, &t->f1, 3 * NFS2_MAXDATA + 1000, "READ file1");
    v2_write_file(c, &t->f2, 3000, "WRITE file2");
    if (v2_attrcall(c, NFSPROC_SETATTR, &t->f1, 10000, "SETATTR truncate").size != 10000)
        us_die("SETATTR file1: size is not 10000 after the truncate");
    v2_links(c, t);
    v2_list(c, &t->top, "READDIR top");
    v2_renames(c, t);
    v2_remove(c, &t->root, t->topname, true, NFS_OK, "RMDIR top");
    us_rpc_ok(c, NFSPROC_STATFS, nfsproc_statfs_2(t->root.data, &sr, c->clnt), "STATFS");
}
