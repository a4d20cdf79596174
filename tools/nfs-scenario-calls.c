/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario's calls (nfs-scenario-int.h): one function per NFSv3 procedure (RFC 1813
 * section 3) that sends it with libnfs's rpc_nfs3_*_async() and counts it, the callbacks
 * that copy what the checks need from the reply (valid only during the callback) into a
 * struct res, and MOUNT v3 MNT/UMNT of the export (RFC 1813 section 5).
 */
#include <stdio.h>
#include <string.h>

#include "nfs-scenario-int.h"

const char *const sc_proc_names[NPROC3] = {
    "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE",
    "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK",
    "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
};

/* ------------------------------------------------------------------ callbacks */

static bool cb_begin(struct res *r, int rpc_status, void *data)
{
    r->rpc_status = rpc_status;
    r->have_attr = false;
    if (rpc_status == RPC_STATUS_SUCCESS)
        return true;
    g_strlcpy(r->err, rpc_status == RPC_STATUS_ERROR && data ? (const char *)data : "cancelled",
              sizeof(r->err));
    return false;
}

static void cb_end(struct res *r)
{
    sc_last_activity = g_get_monotonic_time();
    r->done = true;
    if (r->then)
        r->then(r);
}

static void copy_fh(struct fh *dst, const nfs_fh3 *src)
{
    dst->len = src->data.data_len <= FH_MAX ? src->data.data_len : 0;
    memcpy(dst->data, src->data.data_val, dst->len);
}

static void copy_post_fh(struct res *r, const post_op_fh3 *p)
{
    r->fh.len = 0;
    if (p->handle_follows)
        copy_fh(&r->fh, &p->post_op_fh3_u.handle);
}

static void copy_attr(struct res *r, const fattr3 *a)
{
    r->have_attr = true;
    r->type = a->type;
    r->nlink = a->nlink;
    r->mode = a->mode;
    r->size = a->size;
}

static void copy_post_attr(struct res *r, const post_op_attr *p)
{
    if (p->attributes_follow)
        copy_attr(r, &p->post_op_attr_u.attributes);
}

/* Every NFSv3 result begins with its nfsstat3 (RFC 1813: union switch (nfsstat3)). */
static void cb_status(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;

    (void)rpc;
    if (cb_begin(r, st, data))
        r->status = *(const nfsstat3 *)data;
    cb_end(r);
}

static void cb_null(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;

    (void)rpc;
    if (cb_begin(r, st, data))
        r->status = NFS3_OK;
    cb_end(r);
}

static void cb_getattr(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    GETATTR3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK)
            copy_attr(r, &res->GETATTR3res_u.resok.obj_attributes);
    }
    cb_end(r);
}

static void cb_lookup(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    LOOKUP3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK) {
            copy_fh(&r->fh, &res->LOOKUP3res_u.resok.object);
            copy_post_attr(r, &res->LOOKUP3res_u.resok.obj_attributes);
        }
    }
    cb_end(r);
}

static void cb_create(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    CREATE3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK)
            copy_post_fh(r, &res->CREATE3res_u.resok.obj);
    }
    cb_end(r);
}

static void cb_mkdir(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    MKDIR3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK)
            copy_post_fh(r, &res->MKDIR3res_u.resok.obj);
    }
    cb_end(r);
}

static void cb_symlink(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    SYMLINK3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK)
            copy_post_fh(r, &res->SYMLINK3res_u.resok.obj);
    }
    cb_end(r);
}

static void cb_mknod(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    MKNOD3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK)
            copy_post_fh(r, &res->MKNOD3res_u.resok.obj);
    }
    cb_end(r);
}

static void cb_read(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    READ3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK) {
            READ3resok *ok = &res->READ3res_u.resok;
            r->count = ok->count;
            r->eof = ok->eof;
            if (r->rbuf && ok->data.data_len <= r->rbuf_len)
                memcpy(r->rbuf, ok->data.data_val, ok->data.data_len);
            copy_post_attr(r, &ok->file_attributes);
        }
    }
    cb_end(r);
}

static void cb_write(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    WRITE3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        if (res->status == NFS3_OK)
            r->count = res->WRITE3res_u.resok.count;
    }
    cb_end(r);
}

static void cb_readlink(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    READLINK3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        r->path[0] = '\0';
        if (res->status == NFS3_OK && res->READLINK3res_u.resok.data)
            g_strlcpy(r->path, res->READLINK3res_u.resok.data, sizeof(r->path));
    }
    cb_end(r);
}

static void note_entry(struct res *r, const char *name, uint64_t cookie)
{
    r->nent++;
    r->cookie = cookie;
    if (r->names)
        g_string_append_printf(r->names, "/%s", name);
}

static void cb_readdir(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    READDIR3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        r->nent = 0;
        if (res->status == NFS3_OK) {
            READDIR3resok *ok = &res->READDIR3res_u.resok;
            /* libnfs places list entries only 4-byte aligned: copy each one out. */
            for (entry3 *p = ok->reply.entries, e; p; p = e.nextentry) {
                memcpy(&e, p, sizeof(e));
                note_entry(r, e.name, e.cookie);
            }
            r->eof = ok->reply.eof;
            memcpy(r->verf, ok->cookieverf, sizeof(r->verf));
        }
    }
    cb_end(r);
}

static void cb_readdirplus(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    READDIRPLUS3res *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->status;
        r->nent = 0;
        if (res->status == NFS3_OK) {
            READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;
            for (entryplus3 *p = ok->reply.entries, e; p; p = e.nextentry) {
                memcpy(&e, p, sizeof(e));
                note_entry(r, e.name, e.cookie);
            }
            r->eof = ok->reply.eof;
            memcpy(r->verf, ok->cookieverf, sizeof(r->verf));
        }
    }
    cb_end(r);
}

static void cb_mnt(struct rpc_context *rpc, int st, void *data, void *arg)
{
    struct res *r = arg;
    mountres3 *res = data;

    (void)rpc;
    if (cb_begin(r, st, data)) {
        r->status = res->fhs_status;
        if (res->fhs_status == MNT3_OK) {
            fhandle3 *h = &res->mountres3_u.mountinfo.fhandle;
            r->fh.len = h->fhandle3_len <= FH_MAX ? h->fhandle3_len : 0;
            memcpy(r->fh.data, h->fhandle3_val, r->fh.len);
        }
    }
    cb_end(r);
}

/* ------------------------------------------------------------------ issuing calls */

static nfs_fh3 as_fh3(const struct fh *fh)
{
    nfs_fh3 f = { .data = { .data_len = fh->len, .data_val = (char *)fh->data } };
    return f;
}

static diropargs3 dirop(const struct fh *dir, const char *name)
{
    diropargs3 d = { .dir = as_fh3(dir), .name = (char *)name };
    return d;
}

/* Prepares R for a new call; the rest of R (then, arg, rbuf, names) is kept. */
void sc_res_reset(struct res *r)
{
    r->done = false;
    r->rpc_status = RPC_STATUS_ERROR;
    r->status = -1;
    r->err[0] = '\0';
    r->have_attr = false;
}

static void issued(struct client *c, enum proc3 p, int rc)
{
    if (rc < 0)
        sc_die("cannot send %s: %s", sc_proc_names[p], rpc_get_error(c->rpc));
    c->calls[p]++;
}

void sc_op_null(struct client *c, struct res *r)
{
    sc_res_reset(r);
    issued(c, P_NULL, rpc_nfs3_null_async(c->rpc, cb_null, r));
}

void sc_op_getattr(struct client *c, struct res *r, const struct fh *fh)
{
    GETATTR3args a = { .object = as_fh3(fh) };

    sc_res_reset(r);
    issued(c, P_GETATTR, rpc_nfs3_getattr_async(c->rpc, cb_getattr, &a, r));
}

void sc_op_setattr(struct client *c, struct res *r, const struct fh *fh, const sattr3 *sa)
{
    SETATTR3args a = { .object = as_fh3(fh), .new_attributes = *sa };

    sc_res_reset(r);
    issued(c, P_SETATTR, rpc_nfs3_setattr_async(c->rpc, cb_status, &a, r));
}

void sc_op_lookup(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    LOOKUP3args a = { .what = dirop(dir, name) };

    sc_res_reset(r);
    issued(c, P_LOOKUP, rpc_nfs3_lookup_async(c->rpc, cb_lookup, &a, r));
}

void sc_op_access(struct client *c, struct res *r, const struct fh *fh)
{
    ACCESS3args a = { .object = as_fh3(fh), .access = ACCESS3_READ | ACCESS3_LOOKUP |
                      ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE | ACCESS3_EXECUTE };

    sc_res_reset(r);
    issued(c, P_ACCESS, rpc_nfs3_access_async(c->rpc, cb_status, &a, r));
}

void sc_op_readlink(struct client *c, struct res *r, const struct fh *fh)
{
    READLINK3args a = { .symlink = as_fh3(fh) };

    sc_res_reset(r);
    issued(c, P_READLINK, rpc_nfs3_readlink_async(c->rpc, cb_readlink, &a, r));
}

void sc_op_read(struct client *c, struct res *r, const struct fh *fh, uint64_t off,
                uint32_t count)
{
    READ3args a = { .file = as_fh3(fh), .offset = off, .count = count };

    sc_res_reset(r);
    r->count = 0;
    issued(c, P_READ, rpc_nfs3_read_async(c->rpc, cb_read, &a, r));
}

void sc_op_write(struct client *c, struct res *r, const struct fh *fh, uint64_t off,
                 const char *buf, uint32_t count, stable_how stable)
{
    WRITE3args a = { .file = as_fh3(fh), .offset = off, .count = count, .stable = stable,
                     .data = { .data_len = count, .data_val = (char *)buf } };

    sc_res_reset(r);
    r->count = 0;
    issued(c, P_WRITE, rpc_nfs3_write_async(c->rpc, cb_write, &a, r));
}

void sc_op_create(struct client *c, struct res *r, const struct fh *dir, const char *name,
                  createmode3 mode)
{
    CREATE3args a = { .where = dirop(dir, name), .how = { .mode = mode } };

    if (mode == EXCLUSIVE) {
        memcpy(a.how.createhow3_u.verf, "tbbtverf", NFS3_CREATEVERFSIZE);
    } else {
        a.how.createhow3_u.obj_attributes.mode.set_it = 1;
        a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
    }
    sc_res_reset(r);
    issued(c, P_CREATE, rpc_nfs3_create_async(c->rpc, cb_create, &a, r));
}

void sc_op_mkdir(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    MKDIR3args a = { .where = dirop(dir, name) };

    a.attributes.mode.set_it = 1;
    a.attributes.mode.set_mode3_u.mode = 0755;
    sc_res_reset(r);
    issued(c, P_MKDIR, rpc_nfs3_mkdir_async(c->rpc, cb_mkdir, &a, r));
}

void sc_op_symlink(struct client *c, struct res *r, const struct fh *dir, const char *name,
                   const char *target)
{
    SYMLINK3args a = { .where = dirop(dir, name) };

    a.symlink.symlink_data = (char *)target;
    a.symlink.symlink_attributes.mode.set_it = 1;
    a.symlink.symlink_attributes.mode.set_mode3_u.mode = 0777;
    sc_res_reset(r);
    issued(c, P_SYMLINK, rpc_nfs3_symlink_async(c->rpc, cb_symlink, &a, r));
}

void sc_op_mknod_fifo(struct client *c, struct res *r, const struct fh *dir,
                      const char *name)
{
    MKNOD3args a = { .where = dirop(dir, name), .what = { .type = NF3FIFO } };

    a.what.mknoddata3_u.pipe_attributes.mode.set_it = 1;
    a.what.mknoddata3_u.pipe_attributes.mode.set_mode3_u.mode = 0600;
    sc_res_reset(r);
    issued(c, P_MKNOD, rpc_nfs3_mknod_async(c->rpc, cb_mknod, &a, r));
}

void sc_op_remove(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    REMOVE3args a = { .object = dirop(dir, name) };

    sc_res_reset(r);
    issued(c, P_REMOVE, rpc_nfs3_remove_async(c->rpc, cb_status, &a, r));
}

void sc_op_rmdir(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    RMDIR3args a = { .object = dirop(dir, name) };

    sc_res_reset(r);
    issued(c, P_RMDIR, rpc_nfs3_rmdir_async(c->rpc, cb_status, &a, r));
}

void sc_op_rename(struct client *c, struct res *r, const struct fh *from_dir,
                  const char *from, const struct fh *to_dir, const char *to)
{
    RENAME3args a = { .from = dirop(from_dir, from), .to = dirop(to_dir, to) };

    sc_res_reset(r);
    issued(c, P_RENAME, rpc_nfs3_rename_async(c->rpc, cb_status, &a, r));
}

void sc_op_link(struct client *c, struct res *r, const struct fh *file,
                const struct fh *dir, const char *name)
{
    LINK3args a = { .file = as_fh3(file), .link = dirop(dir, name) };

    sc_res_reset(r);
    issued(c, P_LINK, rpc_nfs3_link_async(c->rpc, cb_status, &a, r));
}

/* READDIR (plus == false) or READDIRPLUS of one page after COOKIE with R->verf. */
void sc_op_readdir(struct client *c, struct res *r, const struct fh *dir, bool plus,
                   uint64_t cookie, uint32_t count)
{
    char verf[NFS3_COOKIEVERFSIZE];

    memcpy(verf, r->verf, sizeof(verf));
    sc_res_reset(r);
    if (plus) {
        READDIRPLUS3args a = { .dir = as_fh3(dir), .cookie = cookie, .dircount = count,
                               .maxcount = count * 4 };
        memcpy(a.cookieverf, verf, sizeof(verf));
        issued(c, P_READDIRPLUS, rpc_nfs3_readdirplus_async(c->rpc, cb_readdirplus, &a, r));
    } else {
        READDIR3args a = { .dir = as_fh3(dir), .cookie = cookie, .count = count };
        memcpy(a.cookieverf, verf, sizeof(verf));
        issued(c, P_READDIR, rpc_nfs3_readdir_async(c->rpc, cb_readdir, &a, r));
    }
}

void sc_op_fsstat(struct client *c, struct res *r, const struct fh *fh)
{
    FSSTAT3args a = { .fsroot = as_fh3(fh) };

    sc_res_reset(r);
    issued(c, P_FSSTAT, rpc_nfs3_fsstat_async(c->rpc, cb_status, &a, r));
}

void sc_op_fsinfo(struct client *c, struct res *r, const struct fh *fh)
{
    FSINFO3args a = { .fsroot = as_fh3(fh) };

    sc_res_reset(r);
    issued(c, P_FSINFO, rpc_nfs3_fsinfo_async(c->rpc, cb_status, &a, r));
}

void sc_op_pathconf(struct client *c, struct res *r, const struct fh *fh)
{
    PATHCONF3args a = { .object = as_fh3(fh) };

    sc_res_reset(r);
    issued(c, P_PATHCONF, rpc_nfs3_pathconf_async(c->rpc, cb_status, &a, r));
}

void sc_op_commit(struct client *c, struct res *r, const struct fh *fh)
{
    COMMIT3args a = { .file = as_fh3(fh), .offset = 0, .count = 0 };

    sc_res_reset(r);
    issued(c, P_COMMIT, rpc_nfs3_commit_async(c->rpc, cb_status, &a, r));
}

/* ------------------------------------------------------------------ MOUNT */

void sc_mount_export(struct client *m, const struct config *cfg, struct fh *root)
{
    struct res r = { 0 };

    if (rpc_mount3_null_async(m->rpc, cb_null, &r) < 0)
        sc_die("cannot send MOUNT NULL: %s", rpc_get_error(m->rpc));
    sc_expect(m, &r, 0, "MOUNT NULL");
    sc_res_reset(&r);
    if (rpc_mount3_mnt_async(m->rpc, cb_mnt, cfg->path, &r) < 0)
        sc_die("cannot send MNT: %s", rpc_get_error(m->rpc));
    sc_client_wait(m, &r.done);
    if (r.rpc_status != RPC_STATUS_SUCCESS)
        sc_die("MNT %s: RPC failed: %s", cfg->path, r.err);
    if (r.status == MNT3ERR_ACCES)
        sc_die("MNT %s: MNT3ERR_ACCES (not exported? mount the export's real path)", cfg->path);
    if (r.status != MNT3_OK || r.fh.len == 0)
        sc_die("MNT %s: refused with mountstat3 %d", cfg->path, r.status);
    *root = r.fh;
}

void sc_unmount_export(struct client *m, const struct config *cfg)
{
    struct res r = { 0 };

    sc_res_reset(&r);
    if (rpc_mount3_umnt_async(m->rpc, cb_null, cfg->path, &r) < 0)
        sc_die("cannot send UMNT: %s", rpc_get_error(m->rpc));
    sc_expect(m, &r, 0, "UMNT");
}
