/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario: a libnfs client that drives every NFSv3 procedure (RFC 1813 section 3,
 * procedures 0-21) plus MOUNT v3 (RFC 1813 section 5) against the lab server, so that
 * tcpdump around it yields a capture with known content.
 *
 * It runs one scripted scenario (a small tree: mkdirs, files written and read in
 * chunks, renames over a target and of a directory with children, hard and symbolic
 * links, a FIFO, readdir/readdirplus in several pages, setattr, commit, expected
 * failures NOENT/EXIST/NOTEMPTY, and removal of everything), then optionally --ops N
 * random operations.  The random ones run in --inflight independent slots, each the
 * only user of its own directory, so several calls are in flight on the one TCP
 * connection while every reply can still be checked against a model of that directory.
 * Any reply that differs from the expectation ends the run with exit code 1.
 *
 * It uses libnfs's raw asynchronous API (rpc_nfs3_*_async) with its own poll() loop;
 * libnfs speaks TCP only (tools/udp-scenario.c does UDP).  Not installed; used by
 * tools/make-captures.sh.  See docs/lab.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "util/exit-codes.h"

#define PROG "nfs-scenario"
#define FH_MAX 64              /* NFS3_FHSIZE */
#define NPROC3 22              /* NFSv3 procedures 0..21 */
#define STALL_MS 30000         /* no reply for this long: the server is gone */

/* NFSv3 procedure numbers (RFC 1813 section 3), used for the per-procedure counters. */
enum proc3 {
    P_NULL, P_GETATTR, P_SETATTR, P_LOOKUP, P_ACCESS, P_READLINK, P_READ, P_WRITE,
    P_CREATE, P_MKDIR, P_SYMLINK, P_MKNOD, P_REMOVE, P_RMDIR, P_RENAME, P_LINK,
    P_READDIR, P_READDIRPLUS, P_FSSTAT, P_FSINFO, P_PATHCONF, P_COMMIT,
};

static const char *const proc_names[NPROC3] = {
    "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE",
    "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK",
    "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
};

struct fh {
    uint32_t len;
    char data[FH_MAX];
};

/* One connection (MOUNT or NFS) with its poll loop and counters. */
struct client {
    struct rpc_context *rpc;
    const char *what;
    uint64_t calls[NPROC3];
};

/* Time of the last call sent or reply received, for the stall check. */
static gint64 last_activity;

struct res;
typedef void (*res_done_cb)(struct res *r);

/*
 * The outcome of one call, filled by the callback from data that is only valid during
 * the callback.  `then` (may be NULL) runs after it is filled; `arg` is for its owner.
 */
struct res {
    bool done;
    int rpc_status;          /* RPC_STATUS_* */
    int status;              /* nfsstat3 or mountstat3 */
    char err[160];           /* RPC-level error text */
    struct fh fh;            /* new object: LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, MNT */
    bool have_attr;
    uint32_t type, nlink, mode;
    uint64_t size;
    uint32_t count;          /* READ, WRITE */
    bool eof;                /* READ, READDIR(PLUS) */
    char *rbuf;              /* READ: where to copy the data (borrowed), or NULL */
    uint32_t rbuf_len;
    uint64_t cookie;         /* READDIR(PLUS): last cookie of the page */
    char verf[NFS3_COOKIEVERFSIZE];
    uint32_t nent;
    GString *names;          /* READDIR(PLUS): names appended "/name" (borrowed) or NULL */
    char path[1024];         /* READLINK */
    res_done_cb then;
    void *arg;
};

struct config {
    char *server;
    char *path;              /* exported directory to mount */
    int nfs_port;            /* 0: ask the portmapper */
    int mount_port;
    gint64 ops;
    gint64 seed;
    int inflight;
    int max_io;              /* largest random READ or WRITE */
    bool no_rename_over;     /* Ganesha's MEM FSAL cannot rename over a file it holds open */
    bool verbose;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(TBBT_EXIT_FAIL);
}

static const char *stat3_name(int st)
{
    return st == NFS3_OK ? "NFS3_OK" : nfsstat3_to_str(st);
}

/* ------------------------------------------------------------------ poll loop */

static void client_service(struct client *c, int timeout_ms)
{
    struct pollfd pfd = { .fd = rpc_get_fd(c->rpc), .events = rpc_which_events(c->rpc) };
    int n = poll(&pfd, 1, timeout_ms);

    if (n < 0 && errno != EINTR)
        die("poll: %s", strerror(errno));
    if (rpc_service(c->rpc, n > 0 ? pfd.revents : 0) < 0)
        die("%s connection failed: %s", c->what, rpc_get_error(c->rpc));
}

/* Runs the loop until *flag is true; dies when nothing happens for STALL_MS. */
static void client_wait(struct client *c, const bool *flag)
{
    last_activity = g_get_monotonic_time();
    while (!*flag) {
        client_service(c, 100);
        if (!*flag && g_get_monotonic_time() - last_activity > (gint64)STALL_MS * 1000)
            die("%s server stopped answering for %d s", c->what, STALL_MS / 1000);
    }
}

static void connect_cb(struct rpc_context *rpc, int status, void *data, void *arg)
{
    struct res *r = arg;

    (void)rpc;
    r->rpc_status = status;
    if (status != RPC_STATUS_SUCCESS && data)
        g_strlcpy(r->err, data, sizeof(r->err));
    r->done = true;
}

/* Connects to PROGRAM v3 at PORT, or through the portmapper when PORT is 0. */
static void client_connect(struct client *c, const struct config *cfg, int program, int port)
{
    struct res r = { 0 };
    int rc;

    c->rpc = rpc_init_context();
    if (!c->rpc)
        die("cannot create an RPC context");
    if (port)
        rc = rpc_connect_async(c->rpc, cfg->server, port, connect_cb, &r);
    else
        rc = rpc_connect_program_async(c->rpc, cfg->server, program, 3, connect_cb, &r);
    if (rc < 0)
        die("cannot connect to %s %s: %s", c->what, cfg->server, rpc_get_error(c->rpc));
    client_wait(c, &r.done);
    if (r.rpc_status != RPC_STATUS_SUCCESS)
        die("cannot connect to %s on %s: %s", c->what, cfg->server, r.err);
}

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
    last_activity = g_get_monotonic_time();
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
static void res_reset(struct res *r)
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
        die("cannot send %s: %s", proc_names[p], rpc_get_error(c->rpc));
    c->calls[p]++;
}

static void op_null(struct client *c, struct res *r)
{
    res_reset(r);
    issued(c, P_NULL, rpc_nfs3_null_async(c->rpc, cb_null, r));
}

static void op_getattr(struct client *c, struct res *r, const struct fh *fh)
{
    GETATTR3args a = { .object = as_fh3(fh) };

    res_reset(r);
    issued(c, P_GETATTR, rpc_nfs3_getattr_async(c->rpc, cb_getattr, &a, r));
}

static void op_setattr(struct client *c, struct res *r, const struct fh *fh, const sattr3 *sa)
{
    SETATTR3args a = { .object = as_fh3(fh), .new_attributes = *sa };

    res_reset(r);
    issued(c, P_SETATTR, rpc_nfs3_setattr_async(c->rpc, cb_status, &a, r));
}

static void op_lookup(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    LOOKUP3args a = { .what = dirop(dir, name) };

    res_reset(r);
    issued(c, P_LOOKUP, rpc_nfs3_lookup_async(c->rpc, cb_lookup, &a, r));
}

static void op_access(struct client *c, struct res *r, const struct fh *fh)
{
    ACCESS3args a = { .object = as_fh3(fh), .access = ACCESS3_READ | ACCESS3_LOOKUP |
                      ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE | ACCESS3_EXECUTE };

    res_reset(r);
    issued(c, P_ACCESS, rpc_nfs3_access_async(c->rpc, cb_status, &a, r));
}

static void op_readlink(struct client *c, struct res *r, const struct fh *fh)
{
    READLINK3args a = { .symlink = as_fh3(fh) };

    res_reset(r);
    issued(c, P_READLINK, rpc_nfs3_readlink_async(c->rpc, cb_readlink, &a, r));
}

static void op_read(struct client *c, struct res *r, const struct fh *fh, uint64_t off,
                    uint32_t count)
{
    READ3args a = { .file = as_fh3(fh), .offset = off, .count = count };

    res_reset(r);
    r->count = 0;
    issued(c, P_READ, rpc_nfs3_read_async(c->rpc, cb_read, &a, r));
}

static void op_write(struct client *c, struct res *r, const struct fh *fh, uint64_t off,
                     const char *buf, uint32_t count, stable_how stable)
{
    WRITE3args a = { .file = as_fh3(fh), .offset = off, .count = count, .stable = stable,
                     .data = { .data_len = count, .data_val = (char *)buf } };

    res_reset(r);
    r->count = 0;
    issued(c, P_WRITE, rpc_nfs3_write_async(c->rpc, cb_write, &a, r));
}

static void op_create(struct client *c, struct res *r, const struct fh *dir, const char *name,
                      createmode3 mode)
{
    CREATE3args a = { .where = dirop(dir, name), .how = { .mode = mode } };

    if (mode == EXCLUSIVE) {
        memcpy(a.how.createhow3_u.verf, "tbbtverf", NFS3_CREATEVERFSIZE);
    } else {
        a.how.createhow3_u.obj_attributes.mode.set_it = 1;
        a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
    }
    res_reset(r);
    issued(c, P_CREATE, rpc_nfs3_create_async(c->rpc, cb_create, &a, r));
}

static void op_mkdir(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    MKDIR3args a = { .where = dirop(dir, name) };

    a.attributes.mode.set_it = 1;
    a.attributes.mode.set_mode3_u.mode = 0755;
    res_reset(r);
    issued(c, P_MKDIR, rpc_nfs3_mkdir_async(c->rpc, cb_mkdir, &a, r));
}

static void op_symlink(struct client *c, struct res *r, const struct fh *dir, const char *name,
                       const char *target)
{
    SYMLINK3args a = { .where = dirop(dir, name) };

    a.symlink.symlink_data = (char *)target;
    a.symlink.symlink_attributes.mode.set_it = 1;
    a.symlink.symlink_attributes.mode.set_mode3_u.mode = 0777;
    res_reset(r);
    issued(c, P_SYMLINK, rpc_nfs3_symlink_async(c->rpc, cb_symlink, &a, r));
}

static void op_mknod_fifo(struct client *c, struct res *r, const struct fh *dir,
                          const char *name)
{
    MKNOD3args a = { .where = dirop(dir, name), .what = { .type = NF3FIFO } };

    a.what.mknoddata3_u.pipe_attributes.mode.set_it = 1;
    a.what.mknoddata3_u.pipe_attributes.mode.set_mode3_u.mode = 0600;
    res_reset(r);
    issued(c, P_MKNOD, rpc_nfs3_mknod_async(c->rpc, cb_mknod, &a, r));
}

static void op_remove(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    REMOVE3args a = { .object = dirop(dir, name) };

    res_reset(r);
    issued(c, P_REMOVE, rpc_nfs3_remove_async(c->rpc, cb_status, &a, r));
}

static void op_rmdir(struct client *c, struct res *r, const struct fh *dir, const char *name)
{
    RMDIR3args a = { .object = dirop(dir, name) };

    res_reset(r);
    issued(c, P_RMDIR, rpc_nfs3_rmdir_async(c->rpc, cb_status, &a, r));
}

static void op_rename(struct client *c, struct res *r, const struct fh *from_dir,
                      const char *from, const struct fh *to_dir, const char *to)
{
    RENAME3args a = { .from = dirop(from_dir, from), .to = dirop(to_dir, to) };

    res_reset(r);
    issued(c, P_RENAME, rpc_nfs3_rename_async(c->rpc, cb_status, &a, r));
}

static void op_link(struct client *c, struct res *r, const struct fh *file,
                    const struct fh *dir, const char *name)
{
    LINK3args a = { .file = as_fh3(file), .link = dirop(dir, name) };

    res_reset(r);
    issued(c, P_LINK, rpc_nfs3_link_async(c->rpc, cb_status, &a, r));
}

/* READDIR (plus == false) or READDIRPLUS of one page after COOKIE with R->verf. */
static void op_readdir(struct client *c, struct res *r, const struct fh *dir, bool plus,
                       uint64_t cookie, uint32_t count)
{
    char verf[NFS3_COOKIEVERFSIZE];

    memcpy(verf, r->verf, sizeof(verf));
    res_reset(r);
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

static void op_fsstat(struct client *c, struct res *r, const struct fh *fh)
{
    FSSTAT3args a = { .fsroot = as_fh3(fh) };

    res_reset(r);
    issued(c, P_FSSTAT, rpc_nfs3_fsstat_async(c->rpc, cb_status, &a, r));
}

static void op_fsinfo(struct client *c, struct res *r, const struct fh *fh)
{
    FSINFO3args a = { .fsroot = as_fh3(fh) };

    res_reset(r);
    issued(c, P_FSINFO, rpc_nfs3_fsinfo_async(c->rpc, cb_status, &a, r));
}

static void op_pathconf(struct client *c, struct res *r, const struct fh *fh)
{
    PATHCONF3args a = { .object = as_fh3(fh) };

    res_reset(r);
    issued(c, P_PATHCONF, rpc_nfs3_pathconf_async(c->rpc, cb_status, &a, r));
}

static void op_commit(struct client *c, struct res *r, const struct fh *fh)
{
    COMMIT3args a = { .file = as_fh3(fh), .offset = 0, .count = 0 };

    res_reset(r);
    issued(c, P_COMMIT, rpc_nfs3_commit_async(c->rpc, cb_status, &a, r));
}

/* ------------------------------------------------------------------ scripted scenario */

/* Waits for R and checks its status; WHAT names the call in the error message. */
static void expect(struct client *c, struct res *r, int want, const char *what)
{
    client_wait(c, &r->done);
    if (r->rpc_status != RPC_STATUS_SUCCESS)
        die("%s: RPC failed: %s", what, r->err);
    if (r->status != want)
        die("%s: expected %s, got %s", what, stat3_name(want), stat3_name(r->status));
}

#define OK(c, r, what) expect((c), (r), NFS3_OK, (what))

static void need_fh(const struct res *r, const char *what)
{
    if (r->fh.len == 0)
        die("%s: reply carries no file handle", what);
}

/* Fills BUF with a pattern that depends on the file offset, so reads can be checked. */
static void pattern(char *buf, uint64_t off, uint32_t len)
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
        pattern(buf, off, n);
        op_write(c, &r, fh, off, buf, n, stable);
        OK(c, &r, what);
        if (r.count != n)
            die("%s: short write at %" PRIu64 ": %u of %u", what, off, r.count, n);
    }
    g_free(buf);
}

/* Reads the whole file in CHUNK pieces and checks size and content against pattern(). */
static void read_check(struct client *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                       const char *what)
{
    char *buf = g_malloc(chunk), *want = g_malloc(chunk);
    struct res r = { .rbuf = buf, .rbuf_len = chunk };
    uint64_t off = 0;

    for (;;) {
        op_read(c, &r, fh, off, chunk);
        OK(c, &r, what);
        pattern(want, off, r.count);
        if (memcmp(buf, want, r.count) != 0)
            die("%s: data differs at offset %" PRIu64, what, off);
        off += r.count;
        if (r.eof || r.count == 0)
            break;
    }
    if (off != size)
        die("%s: read %" PRIu64 " bytes, expected %" PRIu64, what, off, size);
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
        op_readdir(c, &r, dir, plus, cookie, count);
        OK(c, &r, what);
        if (r.eof)
            return g_string_free(names, FALSE);
        if (r.nent == 0)
            die("%s: empty page without eof", what);
        cookie = r.cookie;
    }
    die("%s: more than 1000 pages", what);
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
            die("%s: '%s' missing from the listing %s", what, want[i], listing);
    }
}

static void getattr_check(struct client *c, const struct fh *fh, uint64_t size, uint32_t nlink,
                          const char *what)
{
    struct res r = { 0 };

    op_getattr(c, &r, fh);
    OK(c, &r, what);
    if (r.size != size || (nlink && r.nlink != nlink))
        die("%s: size %" PRIu64 " nlink %u, expected %" PRIu64 " nlink %u", what, r.size,
            r.nlink, size, nlink);
}

struct tree {
    struct fh root, top, a, b, sub, f1, f2, f3, sym;
    char topname[64];
    bool no_rename_over;
};

static void make_dir(struct client *c, const struct fh *parent, const char *name,
                     struct fh *out, const char *what)
{
    struct res r = { 0 };

    op_mkdir(c, &r, parent, name);
    OK(c, &r, what);
    need_fh(&r, what);
    *out = r.fh;
}

static void make_file(struct client *c, const struct fh *dir, const char *name,
                      createmode3 mode, struct fh *out, const char *what)
{
    struct res r = { 0 };

    op_create(c, &r, dir, name, mode);
    OK(c, &r, what);
    if (r.fh.len == 0) {       /* a CREATE reply may omit the handle: look it up */
        op_lookup(c, &r, dir, name);
        OK(c, &r, what);
    }
    *out = r.fh;
}

/* Server-wide and root queries, and the first expected failures. */
static void scenario_start(struct client *c, struct tree *t)
{
    struct res r = { 0 };

    op_null(c, &r);
    OK(c, &r, "NULL");
    op_fsinfo(c, &r, &t->root);
    OK(c, &r, "FSINFO root");
    op_pathconf(c, &r, &t->root);
    OK(c, &r, "PATHCONF root");
    op_fsstat(c, &r, &t->root);
    OK(c, &r, "FSSTAT root");
    op_getattr(c, &r, &t->root);
    OK(c, &r, "GETATTR root");
    op_access(c, &r, &t->root);
    OK(c, &r, "ACCESS root");
    op_lookup(c, &r, &t->root, t->topname);
    expect(c, &r, NFS3ERR_NOENT, "LOOKUP of a missing name");
    make_dir(c, &t->root, t->topname, &t->top, "MKDIR top");
    op_mkdir(c, &r, &t->root, t->topname);
    expect(c, &r, NFS3ERR_EXIST, "MKDIR of an existing name");
    make_dir(c, &t->top, "a", &t->a, "MKDIR a");
    make_dir(c, &t->top, "b", &t->b, "MKDIR b");
    make_dir(c, &t->a, "sub", &t->sub, "MKDIR a/sub");
}

static sattr3 sattr_none(void)
{
    sattr3 s;

    memset(&s, 0, sizeof(s));
    return s;
}

/* Files: create three ways, write and read in chunks, truncate, chmod, commit. */
static void scenario_files(struct client *c, struct tree *t)
{
    struct res r = { 0 };
    sattr3 sa;

    make_file(c, &t->top, "file1", UNCHECKED, &t->f1, "CREATE file1 unchecked");
    make_file(c, &t->top, "file2", GUARDED, &t->f2, "CREATE file2 guarded");
    make_file(c, &t->top, "file3", EXCLUSIVE, &t->f3, "CREATE file3 exclusive");
    op_create(c, &r, &t->top, "file2", GUARDED);
    expect(c, &r, NFS3ERR_EXIST, "CREATE guarded of an existing name");
    write_chunks(c, &t->f1, 4 * 8192 + 1000, 8192, UNSTABLE, "WRITE file1 unstable");
    op_commit(c, &r, &t->f1);
    OK(c, &r, "COMMIT file1");
    read_check(c, &t->f1, 4 * 8192 + 1000, 8192, "READ file1");
    write_chunks(c, &t->f2, 3000, 1024, DATA_SYNC, "WRITE file2 data_sync");
    write_chunks(c, &t->f3, 5000, 5000, FILE_SYNC, "WRITE file3 file_sync");
    read_check(c, &t->f2, 3000, 700, "READ file2");
    op_lookup(c, &r, &t->top, "file1");
    OK(c, &r, "LOOKUP file1");
    getattr_check(c, &t->f1, 4 * 8192 + 1000, 1, "GETATTR file1");
    sa = sattr_none();
    sa.size.set_it = 1;
    sa.size.set_size3_u.size = 10000;
    op_setattr(c, &r, &t->f1, &sa);
    OK(c, &r, "SETATTR file1 truncate");
    getattr_check(c, &t->f1, 10000, 1, "GETATTR file1 after truncate");
    read_check(c, &t->f1, 10000, 4096, "READ file1 after truncate");
    sa = sattr_none();
    sa.mode.set_it = 1;
    sa.mode.set_mode3_u.mode = 0600;
    sa.mtime.set_it = SET_TO_SERVER_TIME;
    op_setattr(c, &r, &t->f3, &sa);
    OK(c, &r, "SETATTR file3 chmod");
    op_access(c, &r, &t->f3);
    OK(c, &r, "ACCESS file3");
    op_commit(c, &r, &t->f3);
    OK(c, &r, "COMMIT file3");
}

/* Links, symlinks, a FIFO, and listings of the tree in several pages. */
static void scenario_links(struct client *c, struct tree *t)
{
    static const char *const top_names[] = { "a", "b", "file1", "file2", "file3", "sym1",
                                             "fifo1", NULL };
    static const char *const a_names[] = { "sub", "file1.link", "up", NULL };
    struct res r = { 0 };
    char *listing;

    op_link(c, &r, &t->f1, &t->a, "file1.link");
    OK(c, &r, "LINK a/file1.link");
    getattr_check(c, &t->f1, 10000, 2, "GETATTR file1 after LINK");
    op_symlink(c, &r, &t->top, "sym1", "file1");
    OK(c, &r, "SYMLINK sym1");
    need_fh(&r, "SYMLINK sym1");
    t->sym = r.fh;
    op_readlink(c, &r, &t->sym);
    OK(c, &r, "READLINK sym1");
    if (strcmp(r.path, "file1") != 0)
        die("READLINK sym1: got '%s', expected 'file1'", r.path);
    op_symlink(c, &r, &t->a, "up", "../b");
    OK(c, &r, "SYMLINK a/up");
    op_mknod_fifo(c, &r, &t->top, "fifo1");
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
static void scenario_renames(struct client *c, struct tree *t)
{
    struct res r = { 0 };

    if (t->no_rename_over) {
        op_remove(c, &r, &t->top, "file3");
        OK(c, &r, "REMOVE file3 (no rename over a target)");
    }
    op_rename(c, &r, &t->top, "file2", &t->top, "file3");
    OK(c, &r, t->no_rename_over ? "RENAME file2 to file3" : "RENAME file2 over file3");
    op_lookup(c, &r, &t->top, "file2");
    expect(c, &r, NFS3ERR_NOENT, "LOOKUP file2 after RENAME");
    op_lookup(c, &r, &t->top, "file3");
    OK(c, &r, "LOOKUP file3 after RENAME");
    getattr_check(c, &r.fh, 3000, 1, "GETATTR renamed file3");
    op_rename(c, &r, &t->top, "a", &t->top, "a2");
    OK(c, &r, "RENAME directory a to a2");
    op_rename(c, &r, &t->a, "file1.link", &t->b, "moved.link");
    OK(c, &r, "RENAME a2/file1.link to b/moved.link");
    op_lookup(c, &r, &t->b, "moved.link");
    OK(c, &r, "LOOKUP b/moved.link");
    op_rmdir(c, &r, &t->top, "a2");
    expect(c, &r, NFS3ERR_NOTEMPTY, "RMDIR of a non-empty directory");
    op_getattr(c, &r, &t->a);
    OK(c, &r, "GETATTR a2");
}

/* Removes the whole tree, leaving the export as it was. */
static void scenario_cleanup(struct client *c, struct tree *t)
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
            op_rmdir(c, &r, dirs[steps[i].dir], steps[i].name);
        else
            op_remove(c, &r, dirs[steps[i].dir], steps[i].name);
        OK(c, &r, what);
        g_free(what);
    }
    op_readdir(c, &r, &t->top, true, 0, 4096);
    OK(c, &r, "READDIRPLUS empty top");
    op_rmdir(c, &r, &t->root, t->topname);
    OK(c, &r, "RMDIR top");
    op_fsstat(c, &r, &t->root);
    OK(c, &r, "FSSTAT root at the end");
}

/* ------------------------------------------------------------------ random operations */

#define NFILE 8
#define NLINK 4
#define NDIR 4
#define NSYM 2
#define NNODE 2
#define FILE_SPAN 65536        /* random writes stay below this offset */

enum kind { K_FILE, K_LINK, K_DIR, K_SYM, K_NODE, K_NKIND };

static const char kind_prefix[K_NKIND] = { 'f', 'h', 'd', 's', 'p' };
static const int kind_count[K_NKIND] = { NFILE, NLINK, NDIR, NSYM, NNODE };

struct entry {
    bool present;
    struct fh fh;
    uint64_t size;           /* files */
    int target;              /* symlinks: index of the file named by the link */
};

enum rop {
    R_NULL, R_GETATTR, R_SETATTR, R_LOOKUP, R_ACCESS, R_READLINK, R_READ, R_WRITE,
    R_CREATE, R_CREATE_EXIST, R_MKDIR, R_SYMLINK, R_MKNOD, R_REMOVE, R_RMDIR, R_RENAME,
    R_LINK, R_READDIR, R_READDIRPLUS, R_FSSTAT, R_FSINFO, R_PATHCONF, R_COMMIT,
    R_CLEANUP, R_RMSLOT, R_NOP,
};

/* Relative weights of the random mix, roughly that of a file-server trace. */
static const struct { enum rop op; int weight; } mix[] = {
    { R_GETATTR, 22 }, { R_LOOKUP, 16 }, { R_READ, 13 }, { R_WRITE, 12 }, { R_ACCESS, 7 },
    { R_CREATE, 5 }, { R_REMOVE, 4 }, { R_SETATTR, 3 }, { R_READDIR, 2 },
    { R_READDIRPLUS, 3 }, { R_COMMIT, 2 }, { R_RENAME, 2 }, { R_LINK, 1 }, { R_SYMLINK, 1 },
    { R_READLINK, 2 }, { R_MKDIR, 1 }, { R_RMDIR, 1 }, { R_MKNOD, 1 }, { R_FSSTAT, 1 },
    { R_FSINFO, 1 }, { R_PATHCONF, 1 }, { R_NULL, 1 }, { R_CREATE_EXIST, 1 },
};

struct random_run;

/* One independent chain of calls in its own directory; one call in flight at a time. */
struct slot {
    struct res r;
    struct random_run *run;
    int id;
    struct fh dir;
    char dirname[32];
    struct entry ent[K_NKIND][NFILE];
    enum rop op;
    enum kind kind;          /* entry the pending call is about */
    int idx, idx2;
    uint64_t newsize;
    int want;                /* expected nfsstat3 */
    bool finished;
    GRand *rng;
};

struct random_run {
    struct client *c;
    struct fh parent;
    gint64 left;             /* random calls still to issue */
    int active;              /* slots not finished */
    char *buf;               /* write data, FILE_SPAN bytes of pattern */
    uint32_t max_io;
    bool no_rename_over;
};

static void entry_name(char *out, size_t size, enum kind k, int i)
{
    g_snprintf(out, size, "%c%d", kind_prefix[k], i);
}

/* Picks a present (or, with PRESENT false, absent) entry of kind K; -1 if none. */
static int pick(struct slot *s, enum kind k, bool present)
{
    int n = kind_count[k], start = g_rand_int_range(s->rng, 0, n);

    for (int j = 0; j < n; j++) {
        int i = (start + j) % n;
        if (s->ent[k][i].present == present)
            return i;
    }
    return -1;
}

static enum rop pick_op(struct slot *s)
{
    int total = 0, x;

    for (size_t i = 0; i < G_N_ELEMENTS(mix); i++)
        total += mix[i].weight;
    x = g_rand_int_range(s->rng, 0, total);
    for (size_t i = 0; i < G_N_ELEMENTS(mix); i++) {
        if (x < mix[i].weight)
            return mix[i].op;
        x -= mix[i].weight;
    }
    return R_GETATTR;
}

static void slot_next(struct res *r);

/* Mostly UNSTABLE, as kernel clients write (then COMMIT); some DATA_SYNC, FILE_SYNC. */
static stable_how pick_stable(struct slot *s)
{
    int x = g_rand_int_range(s->rng, 0, 10);

    return x < 8 ? UNSTABLE : x == 8 ? DATA_SYNC : FILE_SYNC;
}

/* Issues a call on an existing file; returns false (nothing sent) when there is none. */
static bool issue_file_op(struct slot *s, struct client *c, enum rop op)
{
    struct entry *e;
    uint32_t n;

    s->kind = K_FILE;
    s->idx = pick(s, K_FILE, true);
    if (s->idx < 0)
        return false;
    e = &s->ent[K_FILE][s->idx];
    switch (op) {
    case R_GETATTR: op_getattr(c, &s->r, &e->fh); break;
    case R_ACCESS: op_access(c, &s->r, &e->fh); break;
    case R_COMMIT: op_commit(c, &s->r, &e->fh); break;
    case R_READ:
        s->newsize = e->size ? (uint64_t)g_rand_int_range(s->rng, 0, (gint32)e->size) : 0;
        n = (uint32_t)g_rand_int_range(s->rng, 1, (gint32)s->run->max_io + 1);
        op_read(c, &s->r, &e->fh, s->newsize, n);
        s->idx2 = (int)MIN((uint64_t)n, e->size - s->newsize);   /* expected count */
        break;
    case R_WRITE:
        n = (uint32_t)g_rand_int_range(s->rng, 1, (gint32)s->run->max_io + 1);
        s->newsize = (uint64_t)g_rand_int_range(s->rng, 0, FILE_SPAN - (gint32)n);
        op_write(c, &s->r, &e->fh, s->newsize, s->run->buf + s->newsize, n, pick_stable(s));
        s->newsize = MAX(e->size, s->newsize + n);
        break;
    case R_SETATTR: {
        sattr3 sa = sattr_none();
        s->newsize = e->size ? (uint64_t)g_rand_int_range(s->rng, 0, (gint32)e->size) : 0;
        sa.size.set_it = 1;
        sa.size.set_size3_u.size = s->newsize;
        op_setattr(c, &s->r, &e->fh, &sa);
        break;
    }
    default: return false;
    }
    return true;
}

static bool issue_create(struct slot *s, struct client *c, enum kind k, bool exist)
{
    char name[16];

    s->kind = k;
    s->idx = pick(s, k, exist);
    if (s->idx < 0)
        return false;
    entry_name(name, sizeof(name), k, s->idx);
    switch (k) {
    case K_FILE: op_create(c, &s->r, &s->dir, name, exist ? GUARDED : UNCHECKED); break;
    case K_DIR: op_mkdir(c, &s->r, &s->dir, name); break;
    case K_NODE: op_mknod_fifo(c, &s->r, &s->dir, name); break;
    case K_SYM: {
        char target[16];
        s->idx2 = g_rand_int_range(s->rng, 0, NFILE);
        entry_name(target, sizeof(target), K_FILE, s->idx2);
        op_symlink(c, &s->r, &s->dir, name, target);
        break;
    }
    default: return false;
    }
    s->want = exist ? NFS3ERR_EXIST : NFS3_OK;
    return true;
}

/* REMOVE of a random present non-directory entry. */
static bool issue_remove(struct slot *s, struct client *c)
{
    static const enum kind kinds[] = { K_FILE, K_FILE, K_FILE, K_LINK, K_SYM, K_NODE };
    char name[16];

    s->kind = kinds[g_rand_int_range(s->rng, 0, G_N_ELEMENTS(kinds))];
    s->idx = pick(s, s->kind, true);
    if (s->idx < 0)
        return false;
    entry_name(name, sizeof(name), s->kind, s->idx);
    op_remove(c, &s->r, &s->dir, name);
    return true;
}

static bool issue_lookup(struct slot *s, struct client *c)
{
    char name[16];

    s->kind = (enum kind)g_rand_int_range(s->rng, 0, K_NKIND);
    s->idx = g_rand_int_range(s->rng, 0, kind_count[s->kind]);
    entry_name(name, sizeof(name), s->kind, s->idx);
    op_lookup(c, &s->r, &s->dir, name);
    s->want = s->ent[s->kind][s->idx].present ? NFS3_OK : NFS3ERR_NOENT;
    return true;
}

static bool issue_rename(struct slot *s, struct client *c)
{
    char from[16], to[16];

    s->kind = K_FILE;
    s->idx = pick(s, K_FILE, true);
    if (s->idx < 0)
        return false;
    s->idx2 = (s->idx + g_rand_int_range(s->rng, 1, NFILE)) % NFILE;
    if (s->run->no_rename_over && s->ent[K_FILE][s->idx2].present)
        return false;
    entry_name(from, sizeof(from), K_FILE, s->idx);
    entry_name(to, sizeof(to), K_FILE, s->idx2);
    op_rename(c, &s->r, &s->dir, from, &s->dir, to);
    return true;
}

static bool issue_link(struct slot *s, struct client *c)
{
    char name[16];

    s->idx2 = pick(s, K_FILE, true);
    s->kind = K_LINK;
    s->idx = pick(s, K_LINK, false);
    if (s->idx < 0 || s->idx2 < 0)
        return false;
    entry_name(name, sizeof(name), K_LINK, s->idx);
    op_link(c, &s->r, &s->ent[K_FILE][s->idx2].fh, &s->dir, name);
    return true;
}

static bool issue_dir_op(struct slot *s, struct client *c, enum rop op)
{
    char name[16];

    switch (op) {
    case R_NULL: op_null(c, &s->r); break;
    case R_READDIR: case R_READDIRPLUS:
        memset(s->r.verf, 0, sizeof(s->r.verf));
        op_readdir(c, &s->r, &s->dir, op == R_READDIRPLUS, 0, 8192);
        break;
    case R_FSSTAT: op_fsstat(c, &s->r, &s->dir); break;
    case R_FSINFO: op_fsinfo(c, &s->r, &s->dir); break;
    case R_PATHCONF: op_pathconf(c, &s->r, &s->dir); break;
    case R_READLINK:
        s->kind = K_SYM;
        s->idx = pick(s, K_SYM, true);
        if (s->idx < 0)
            return false;
        op_readlink(c, &s->r, &s->ent[K_SYM][s->idx].fh);
        break;
    case R_RMDIR:
        s->kind = K_DIR;
        s->idx = pick(s, K_DIR, true);
        if (s->idx < 0)
            return false;
        entry_name(name, sizeof(name), K_DIR, s->idx);
        op_rmdir(c, &s->r, &s->dir, name);
        break;
    default: return false;
    }
    return true;
}

/* Issues OP if its preconditions hold; returns false (nothing sent) otherwise. */
static bool issue(struct slot *s, enum rop op)
{
    struct client *c = s->run->c;

    s->op = op;
    s->want = NFS3_OK;
    s->kind = K_NKIND;
    s->idx = -1;
    switch (op) {
    case R_GETATTR: case R_ACCESS: case R_COMMIT: case R_READ: case R_WRITE: case R_SETATTR:
        return issue_file_op(s, c, op);
    case R_CREATE: return issue_create(s, c, K_FILE, false);
    case R_CREATE_EXIST: return issue_create(s, c, K_FILE, true);
    case R_MKDIR: return issue_create(s, c, K_DIR, false);
    case R_MKNOD: return issue_create(s, c, K_NODE, false);
    case R_SYMLINK: return issue_create(s, c, K_SYM, false);
    case R_REMOVE: return issue_remove(s, c);
    case R_LOOKUP: return issue_lookup(s, c);
    case R_RENAME: return issue_rename(s, c);
    case R_LINK: return issue_link(s, c);
    default: return issue_dir_op(s, c, op);
    }
}

/* Applies the successful reply of the pending call to the slot's model. */
static void slot_apply(struct slot *s)
{
    struct entry *e = s->kind < K_NKIND && s->idx >= 0 ? &s->ent[s->kind][s->idx] : NULL;

    switch (s->op) {
    case R_WRITE: case R_SETATTR: e->size = s->newsize; break;
    case R_CREATE: case R_MKDIR: case R_MKNOD: case R_SYMLINK:
        e->present = true;
        e->fh = s->r.fh;
        e->size = 0;
        e->target = s->idx2;
        if (e->fh.len == 0)
            die("slot %d: %s reply carries no file handle", s->id, proc_names[P_CREATE]);
        break;
    case R_REMOVE: case R_RMDIR: case R_CLEANUP: e->present = false; break;
    case R_LINK:
        e->present = true;
        e->fh = s->ent[K_FILE][s->idx2].fh;
        break;
    case R_RENAME:
        s->ent[K_FILE][s->idx2] = *e;
        e->present = false;
        break;
    default: break;
    }
}

/* Checks the reply against the model; dies on any difference. */
static void slot_check(struct slot *s)
{
    struct res *r = &s->r;

    if (r->rpc_status != RPC_STATUS_SUCCESS)
        die("slot %d: RPC failed: %s", s->id, r->err);
    if (r->status != s->want)
        die("slot %d (%s): random op %d on %c%d: expected %s, got %s", s->id, s->dirname,
            (int)s->op, s->kind < K_NKIND ? kind_prefix[s->kind] : '-', s->idx,
            stat3_name(s->want), stat3_name(r->status));
    if (s->op == R_READ && r->count != (uint32_t)s->idx2)
        die("slot %d: READ returned %u bytes, expected %d", s->id, r->count, s->idx2);
    if (s->op == R_READLINK) {
        char want[16];
        entry_name(want, sizeof(want), K_FILE, s->ent[K_SYM][s->idx].target);
        if (strcmp(r->path, want) != 0)
            die("slot %d: READLINK returned '%s', expected '%s'", s->id, r->path, want);
    }
}

/* Issues the removal of one remaining entry; false when the directory is empty. */
static bool slot_cleanup_one(struct slot *s)
{
    char name[16];

    for (int k = 0; k < K_NKIND; k++) {
        int i = pick(s, (enum kind)k, true);
        if (i < 0)
            continue;
        s->op = R_CLEANUP;
        s->kind = (enum kind)k;
        s->idx = i;
        s->want = NFS3_OK;
        entry_name(name, sizeof(name), (enum kind)k, i);
        if (k == K_DIR)
            op_rmdir(s->run->c, &s->r, &s->dir, name);
        else
            op_remove(s->run->c, &s->r, &s->dir, name);
        return true;
    }
    return false;
}

/* Completion of a slot's call: check, update the model, issue the next call. */
static void slot_next(struct res *r)
{
    struct slot *s = r->arg;

    if (s->op == R_RMSLOT) {
        if (r->rpc_status != RPC_STATUS_SUCCESS || r->status != NFS3_OK)
            die("slot %d: RMDIR %s failed: %s", s->id, s->dirname, stat3_name(r->status));
        s->finished = true;
        s->run->active--;
        return;
    }
    if (s->op != R_NOP) {
        slot_check(s);
        if (r->status == NFS3_OK)
            slot_apply(s);
    }
    while (s->run->left > 0) {
        enum rop op = pick_op(s);
        if (issue(s, op) || issue(s, R_CREATE) || issue(s, R_GETATTR) || issue(s, R_NULL)) {
            s->run->left--;
            return;
        }
    }
    if (slot_cleanup_one(s))
        return;
    s->op = R_RMSLOT;
    op_rmdir(s->run->c, &s->r, &s->run->parent, s->dirname);
}

static void run_random(struct client *c, const struct fh *root, const struct config *cfg)
{
    struct random_run run = { .c = c, .left = cfg->ops, .max_io = (uint32_t)cfg->max_io,
                              .no_rename_over = cfg->no_rename_over };
    struct slot *slots = g_new0(struct slot, cfg->inflight);
    char parent[64];
    struct res r = { 0 };

    g_snprintf(parent, sizeof(parent), "rnd.%d", (int)getpid());
    make_dir(c, root, parent, &run.parent, "MKDIR random parent");
    run.buf = g_malloc(FILE_SPAN);
    pattern(run.buf, 0, FILE_SPAN);
    for (int i = 0; i < cfg->inflight; i++) {
        struct slot *s = &slots[i];
        s->run = &run;
        s->id = i;
        s->rng = g_rand_new_with_seed((guint32)(cfg->seed * 7919 + i));
        g_snprintf(s->dirname, sizeof(s->dirname), "s%d", i);
        make_dir(c, &run.parent, s->dirname, &s->dir, "MKDIR random slot");
    }
    run.active = cfg->inflight;
    for (int i = 0; i < cfg->inflight; i++) {
        slots[i].r.then = slot_next;
        slots[i].r.arg = &slots[i];
        slots[i].op = R_NOP;
        slot_next(&slots[i].r);
    }
    last_activity = g_get_monotonic_time();
    while (run.active > 0) {    /* slots finish through their callbacks */
        client_service(c, 100);
        if (g_get_monotonic_time() - last_activity > (gint64)STALL_MS * 1000)
            die("NFS server stopped answering for %d s", STALL_MS / 1000);
    }
    op_rmdir(c, &r, root, parent);
    OK(c, &r, "RMDIR random parent");
    for (int i = 0; i < cfg->inflight; i++)
        g_rand_free(slots[i].rng);
    g_free(slots);
    g_free(run.buf);
}

/* ------------------------------------------------------------------ mount and main */

static void mount_export(struct client *m, const struct config *cfg, struct fh *root)
{
    struct res r = { 0 };

    if (rpc_mount3_null_async(m->rpc, cb_null, &r) < 0)
        die("cannot send MOUNT NULL: %s", rpc_get_error(m->rpc));
    expect(m, &r, 0, "MOUNT NULL");
    res_reset(&r);
    if (rpc_mount3_mnt_async(m->rpc, cb_mnt, cfg->path, &r) < 0)
        die("cannot send MNT: %s", rpc_get_error(m->rpc));
    client_wait(m, &r.done);
    if (r.rpc_status != RPC_STATUS_SUCCESS)
        die("MNT %s: RPC failed: %s", cfg->path, r.err);
    if (r.status == MNT3ERR_ACCES)
        die("MNT %s: MNT3ERR_ACCES (not exported? mount the export's real path)", cfg->path);
    if (r.status != MNT3_OK || r.fh.len == 0)
        die("MNT %s: refused with mountstat3 %d", cfg->path, r.status);
    *root = r.fh;
}

static void unmount_export(struct client *m, const struct config *cfg)
{
    struct res r = { 0 };

    res_reset(&r);
    if (rpc_mount3_umnt_async(m->rpc, cb_null, cfg->path, &r) < 0)
        die("cannot send UMNT: %s", rpc_get_error(m->rpc));
    expect(m, &r, 0, "UMNT");
}

/* Parses nfs://server[:port]/path[?version=3&nfsport=N&mountport=N]. */
static bool parse_url(const char *url, struct config *cfg)
{
    const char *p = url, *slash, *q;

    if (!g_str_has_prefix(p, "nfs://"))
        return false;
    p += 6;
    slash = strchr(p, '/');
    if (!slash || slash == p)
        return false;
    cfg->server = g_strndup(p, (gsize)(slash - p));
    q = strchr(slash, '?');
    cfg->path = q ? g_strndup(slash, (gsize)(q - slash)) : g_strdup(slash);
    if (!q)
        return true;
    gchar **kv = g_strsplit(q + 1, "&", -1);
    bool ok = true;
    for (int i = 0; kv[i] && ok; i++) {
        if (g_str_has_prefix(kv[i], "version="))
            ok = strcmp(kv[i] + 8, "3") == 0;
        else if (g_str_has_prefix(kv[i], "nfsport="))
            cfg->nfs_port = atoi(kv[i] + 8);
        else if (g_str_has_prefix(kv[i], "mountport="))
            cfg->mount_port = atoi(kv[i] + 10);
    }
    g_strfreev(kv);
    return ok;
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
    GOptionEntry entries[] = {
        { "ops", 'n', 0, G_OPTION_ARG_INT64, &cfg->ops,
          "extra random operations after the scripted scenario (default 0)", "N" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg->seed,
          "seed of the random operations (default 1)", "S" },
        { "inflight", 'j', 0, G_OPTION_ARG_INT, &cfg->inflight,
          "random operations in flight at once, one per directory (default 8)", "K" },
        { "max-io", 'm', 0, G_OPTION_ARG_INT, &cfg->max_io,
          "largest random READ or WRITE in bytes, 1..32768 (default 4096)", "BYTES" },
        { "no-rename-over", 0, 0, G_OPTION_ARG_NONE, &cfg->no_rename_over,
          "never RENAME onto an existing file (Ganesha's MEM FSAL fails those)", NULL },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &cfg->verbose,
          "print per-procedure call counts", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("URL");
    GError *err = NULL;

    g_option_context_set_summary(ctx,
        "Runs a scripted NFSv3 scenario that uses every procedure, then --ops random\n"
        "operations, against URL nfs://SERVER/EXPORT?version=3 (libnfs, TCP).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, PROG ": %s (try --help)\n", err->message);
        exit(TBBT_EXIT_USAGE);
    }
    g_option_context_free(ctx);
    if (argc != 2 || !parse_url(argv[1], cfg)) {
        fprintf(stderr, PROG ": need one URL nfs://SERVER/PATH[?version=3] (try --help)\n");
        exit(TBBT_EXIT_USAGE);
    }
    if (cfg->ops < 0 || cfg->inflight < 1 || cfg->inflight > 256 || cfg->max_io < 1 ||
        cfg->max_io > FILE_SPAN / 2) {
        fprintf(stderr, PROG ": --ops must be >= 0, --inflight 1..256, --max-io 1..%d\n",
                FILE_SPAN / 2);
        exit(TBBT_EXIT_USAGE);
    }
}

static void print_counts(const struct client *c, double secs)
{
    uint64_t total = 0;

    for (int p = 0; p < NPROC3; p++)
        total += c->calls[p];
    fprintf(stderr, PROG ": %" PRIu64 " NFSv3 calls in %.2f s (%.0f calls/s)\n", total, secs,
            secs > 0 ? (double)total / secs : 0.0);
    for (int p = 0; p < NPROC3; p++)
        fprintf(stderr, PROG ":   %-12s %" PRIu64 "\n", proc_names[p], c->calls[p]);
}

int main(int argc, char **argv)
{
    struct config cfg = { .seed = 1, .inflight = 8, .max_io = 4096 };
    struct client mnt = { .what = "MOUNT" }, nfs = { .what = "NFS" };
    struct tree t = { 0 };
    gint64 t0;

    parse_args(argc, argv, &cfg);
    client_connect(&mnt, &cfg, MOUNT_PROGRAM, cfg.mount_port);
    mount_export(&mnt, &cfg, &t.root);
    client_connect(&nfs, &cfg, NFS_PROGRAM, cfg.nfs_port);
    t0 = g_get_monotonic_time();
    g_snprintf(t.topname, sizeof(t.topname), "scn.%d", (int)getpid());
    t.no_rename_over = cfg.no_rename_over;
    scenario_start(&nfs, &t);
    scenario_files(&nfs, &t);
    scenario_links(&nfs, &t);
    scenario_renames(&nfs, &t);
    scenario_cleanup(&nfs, &t);
    if (cfg.ops > 0)
        run_random(&nfs, &t.root, &cfg);
    if (cfg.verbose)
        print_counts(&nfs, (double)(g_get_monotonic_time() - t0) / 1e6);
    unmount_export(&mnt, &cfg);
    rpc_destroy_context(nfs.rpc);
    rpc_destroy_context(mnt.rpc);
    g_free(cfg.server);
    g_free(cfg.path);
    return TBBT_EXIT_OK;
}
