/* SPDX-License-Identifier: MIT */
/*
 * The request engine of tbbt-init's NFS backend (see image-nfsq.h): NFSv3 calls
 * (RFC 1813 3.3) encoded with the rpcgen routines, on rpcconn connections
 * (docs/tbbt-play.md, "Transport"), sent as soon as the handles they need are known,
 * many in flight.
 *
 * A request is in exactly one place at a time: waiting on an object (its wait list),
 * the ready list, the delayed list (JUKEBOX), in flight (the connection holds it, its
 * cookie is the request), or with the caller (WAIT, once answered).  Everything is
 * driven from the caller's thread: submitting queues and sends, and a wait round
 * flushes, polls, reads replies and handles them, which may make more requests ready.
 */
#include "aging/image-nfsq.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "proto/proto.h"
#include "util/util.h"

#define NONE TBBT__NFSQ_NONE
#define MAX_QUEUED 16384            /* requests not answered before the caller waits */
#define MAX_WBYTES (16u << 20)      /* WRITE data in flight */
#define FLUSH_EVERY 16              /* calls queued per send() when the server is busy */
#define RECV_EVERY 32               /* submissions between two looks at the replies */
#define JUKEBOX_NS 100000000ull     /* retry after NFS3ERR_JUKEBOX */
#define POLL_MS 500

/* ---- kinds ------------------------------------------------------------------------- */

static const struct kind {
    uint32_t proc;
    const char *name;
    xdrproc_t xres;             /* NULL: only the status word is needed */
    bool needs_obj;             /* the object's handle goes into the call */
} kinds[TBBT__NFSQ_KINDS] = {
    [TBBT__NFSQ_MKDIR] = { NFSPROC3_MKDIR, "MKDIR", (xdrproc_t)xdr_MKDIR3res, false },
    [TBBT__NFSQ_CREATE] = { NFSPROC3_CREATE, "CREATE", (xdrproc_t)xdr_CREATE3res, false },
    [TBBT__NFSQ_SYMLINK] = { NFSPROC3_SYMLINK, "SYMLINK", (xdrproc_t)xdr_SYMLINK3res, false },
    [TBBT__NFSQ_MKNOD] = { NFSPROC3_MKNOD, "MKNOD", (xdrproc_t)xdr_MKNOD3res, false },
    [TBBT__NFSQ_LINK] = { NFSPROC3_LINK, "LINK", NULL, true },
    [TBBT__NFSQ_WRITE] = { NFSPROC3_WRITE, "WRITE", (xdrproc_t)xdr_WRITE3res, true },
    [TBBT__NFSQ_COMMIT] = { NFSPROC3_COMMIT, "COMMIT", (xdrproc_t)xdr_COMMIT3res, true },
    [TBBT__NFSQ_SETATTR] = { NFSPROC3_SETATTR, "SETATTR", NULL, true },
    [TBBT__NFSQ_REMOVE] = { NFSPROC3_REMOVE, "REMOVE", NULL, false },
    [TBBT__NFSQ_RMDIR] = { NFSPROC3_RMDIR, "RMDIR", NULL, false },
    [TBBT__NFSQ_LOOKUP] = { NFSPROC3_LOOKUP, "LOOKUP", (xdrproc_t)xdr_LOOKUP3res, false },
    [TBBT__NFSQ_GETATTR] = { NFSPROC3_GETATTR, "GETATTR", (xdrproc_t)xdr_GETATTR3res, true },
    [TBBT__NFSQ_FSSTAT] = { NFSPROC3_FSSTAT, "FSSTAT", (xdrproc_t)xdr_FSSTAT3res, true },
    [TBBT__NFSQ_FSINFO] = { NFSPROC3_FSINFO, "FSINFO", (xdrproc_t)xdr_FSINFO3res, true },
    [TBBT__NFSQ_READ] = { NFSPROC3_READ, "READ", (xdrproc_t)xdr_READ3res, true },
    [TBBT__NFSQ_READDIR] = { NFSPROC3_READDIR, "READDIR", (xdrproc_t)xdr_READDIR3res, true },
};

/* Where the reply of a kind that makes an object keeps the new object's handle and
 * attributes: offsets in union tbbt__nfsq_res of its resok's (m the member, T its type). */
#define MADE(m, T) { .fh = offsetof(union tbbt__nfsq_res, m.T##_u.resok.obj), \
                     .attrs = offsetof(union tbbt__nfsq_res, m.T##_u.resok.obj_attributes) }

static const struct made_at {
    size_t fh, attrs;
} made_at[TBBT__NFSQ_KINDS] = {
    [TBBT__NFSQ_MKDIR] = MADE(mkdir, MKDIR3res),
    [TBBT__NFSQ_CREATE] = MADE(create, CREATE3res),
    [TBBT__NFSQ_SYMLINK] = MADE(symlink, SYMLINK3res),
    [TBBT__NFSQ_MKNOD] = MADE(mknod, MKNOD3res),
};

const char *tbbt__nfsq_status_name(int status)
{
    const char *s = tbbt_proto_status_name(TBBT_PROTO_NFS3, status);

    return s ? s : "an unknown NFS status";
}

int tbbt__nfsq_errno(int status)
{
    static const int map[][2] = {
        { NFS3ERR_PERM, EPERM }, { NFS3ERR_NOENT, ENOENT }, { NFS3ERR_IO, EIO },
        { NFS3ERR_NXIO, ENXIO }, { NFS3ERR_ACCES, EACCES }, { NFS3ERR_EXIST, EEXIST },
        { NFS3ERR_XDEV, EXDEV }, { NFS3ERR_NODEV, ENODEV }, { NFS3ERR_NOTDIR, ENOTDIR },
        { NFS3ERR_ISDIR, EISDIR }, { NFS3ERR_INVAL, EINVAL }, { NFS3ERR_FBIG, EFBIG },
        { NFS3ERR_NOSPC, ENOSPC }, { NFS3ERR_ROFS, EROFS }, { NFS3ERR_MLINK, EMLINK },
        { NFS3ERR_NAMETOOLONG, ENAMETOOLONG }, { NFS3ERR_NOTEMPTY, ENOTEMPTY },
        { NFS3ERR_DQUOT, EDQUOT }, { NFS3ERR_STALE, ESTALE },
        { NFS3ERR_NOTSUPP, EOPNOTSUPP },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(map); i++)
        if (map[i][0] == status)
            return -map[i][1];
    return -EIO;
}

/* ---- lists, objects, the namespace --------------------------------------------------- */

/* Queues r, which is in no queue, at the end of l. */
static void push(struct tbbt_dlist *l, struct tbbt__nfsq_req *r)
{
    tbbt_dlist_push(l, &r->link);
}

/* The first request of l, still queued; NULL when l is empty. */
static struct tbbt__nfsq_req *head(const struct tbbt_dlist *l)
{
    return TBBT_DLIST_ENTRY(l->first, struct tbbt__nfsq_req, link);
}

/* Takes the first request out of l; NULL when l is empty. */
static struct tbbt__nfsq_req *pop(struct tbbt_dlist *l)
{
    struct tbbt__nfsq_req *r = head(l);

    if (r)
        tbbt_dlist_unlink(l, &r->link);
    return r;
}

#define OBJ tbbt__nfsq_obj

uint32_t tbbt__nfsq_find(struct tbbt__nfsq *q, const char *path)
{
    gpointer v = g_hash_table_lookup(q->by_path, path);

    return v ? GPOINTER_TO_UINT(v) - 1 : NONE;
}

uint32_t tbbt__nfsq_obj_new(struct tbbt__nfsq *q, const char *path, uint32_t type)
{
    struct tbbt__nfsq_obj o = { .path = g_string_chunk_insert(q->strings, path),
                                .type = (uint8_t)type };
    uint32_t i = q->objs->len;

    g_array_append_val(q->objs, o);
    g_hash_table_replace(q->by_path, (gpointer)o.path, GUINT_TO_POINTER(i + 1));
    return i;
}

void tbbt__nfsq_alias(struct tbbt__nfsq *q, const char *path, uint32_t i)
{
    g_hash_table_replace(q->by_path, g_string_chunk_insert(q->strings, path),
                         GUINT_TO_POINTER(i + 1));
}

void tbbt__nfsq_forget(struct tbbt__nfsq *q, const char *path)
{
    g_hash_table_remove(q->by_path, path);
}

void tbbt__nfsq_fh(struct tbbt__nfsq *q, uint32_t i, nfs_fh3 *fh)
{
    const struct tbbt__nfsq_obj *o = OBJ(q, i);

    fh->data.data_len = o->fh_len;
    fh->data.data_val = (char *)q->fhs->data + o->fh;
}

static void route(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r);

void tbbt__nfsq_bind(struct tbbt__nfsq *q, uint32_t i, const void *fh, uint32_t len,
                     uint32_t type)
{
    struct tbbt__nfsq_obj *o = OBJ(q, i);
    struct tbbt_dlist waiting = o->wait;
    struct tbbt__nfsq_req *r;

    o->fh = q->fhs->len;
    o->fh_len = (uint8_t)len;
    o->known = true;
    if (type)
        o->type = (uint8_t)type;
    g_byte_array_append(q->fhs, fh, len);
    o->wait = (struct tbbt_dlist){ NULL, NULL };
    while ((r = pop(&waiting)))
        route(q, r);
}

/* Frees r, unless its caller waits for it (and frees it). */
static void release(struct tbbt__nfsq_req *r)
{
    if (!(r->flags & TBBT__NFSQ_WAIT))
        tbbt__nfsq_req_free(r);
}

/* Empties l, releasing its requests. */
static void release_all(struct tbbt_dlist *l)
{
    struct tbbt__nfsq_req *r;

    while ((r = pop(l)))
        release(r);
}

/* The namespace and the requests waiting in it go (none made yet: nothing happens). */
static void ns_free(struct tbbt__nfsq *q)
{
    if (!q->objs)
        return;
    for (guint i = 0; i < q->objs->len; i++)
        release_all(&OBJ(q, i)->wait);
    g_array_free(q->objs, TRUE);
    g_hash_table_destroy(q->by_path);
    g_string_chunk_free(q->strings);
    g_byte_array_free(q->fhs, TRUE);
}

void tbbt__nfsq_ns_reset(struct tbbt__nfsq *q, const struct tbbt_rpcconn_fh *fh,
                         const char *prefix)
{
    ns_free(q);
    q->objs = g_array_new(FALSE, FALSE, sizeof(struct tbbt__nfsq_obj));
    q->by_path = g_hash_table_new(g_str_hash, g_str_equal);
    q->strings = g_string_chunk_new(64 * 1024);
    q->fhs = g_byte_array_new();
    g_free(q->prefix);
    q->prefix = g_strdup(prefix);
    tbbt__nfsq_obj_new(q, ".", NF3DIR);
    tbbt__nfsq_bind(q, 0, fh->data, fh->len, NF3DIR);
}

void tbbt__nfsq_init(struct tbbt__nfsq *q, struct tbbt_rpcconn **c, unsigned nc,
                     const char *server, unsigned max_out, int timeout_ms, char *errbuf,
                     size_t errlen, struct tbbt_image_stats *st, uint64_t *done_bytes)
{
    *q = (struct tbbt__nfsq){ .c = c, .nc = nc, .server = server, .max_out = max_out,
                              .timeout_ns = (uint64_t)timeout_ms * 1000000, .errbuf = errbuf,
                              .errlen = errlen, .st = st, .done_bytes = done_bytes };
}

/* ---- requests ----------------------------------------------------------------------- */

struct tbbt__nfsq_req *tbbt__nfsq_req(enum tbbt__nfsq_kind kind, uint32_t obj, uint32_t dir,
                                      const char *name)
{
    struct tbbt__nfsq_req *r = g_new0(struct tbbt__nfsq_req, 1);

    r->kind = (uint8_t)kind;
    r->obj = obj;
    r->dir = dir;
    r->name = name;
    return r;
}

void tbbt__nfsq_req_free(struct tbbt__nfsq_req *r)
{
    if (!r)
        return;
    if ((r->flags & TBBT__NFSQ_DONE) && r->status == 0 && kinds[r->kind].xres)
        xdr_free(kinds[r->kind].xres, (char *)&r->res);
    g_free(r->own);
    g_free(r);
}

/* The path a request is about, for a message (valid until the next call). */
static const char *req_path(struct tbbt__nfsq *q, const struct tbbt__nfsq_req *r)
{
    static char buf[1200];
    const char *p;
    char *s;

    if (r->obj != NONE && r->kind != TBBT__NFSQ_LINK && r->kind != TBBT__NFSQ_LOOKUP) {
        p = OBJ(q, r->obj)->path;
        s = tbbt__image_shown(p);
    } else if (r->dir != NONE) {
        const char *d = OBJ(q, r->dir)->path;
        char *full = strcmp(d, ".") ? g_strconcat(d, "/", r->name, NULL) : g_strdup(r->name);
        s = tbbt__image_shown(full);
        g_free(full);
    } else {
        s = g_strdup(".");
    }
    snprintf(buf, sizeof(buf), "%s%s", strcmp(s, ".") ? q->prefix : "", s);
    g_free(s);
    return buf;
}

/* The error that stops everything (image-nfsq.h, "Errors"): the first one only, and its
 * reason only while the build's error buffer is empty (a reason the build gave first stays). */
#define fatal(q, rc, ...) \
    tbbt_errbuf_first(&(q)->fatal, (rc), (q)->errbuf[0] ? NULL : (q)->errbuf, (q)->errlen, \
                      __VA_ARGS__)

/* The object whose handle r still waits for, or NONE. */
static uint32_t blocker(struct tbbt__nfsq *q, const struct tbbt__nfsq_req *r)
{
    if (r->dir != NONE && !OBJ(q, r->dir)->known)
        return r->dir;
    if (kinds[r->kind].needs_obj && !OBJ(q, r->obj)->known)
        return r->obj;
    return NONE;
}

static void route(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    uint32_t b = blocker(q, r);

    push(b == NONE ? &q->ready : &OBJ(q, b)->wait, r);
}

/* r is answered (or dropped): counters down; kept for its waiter, or freed. */
static void finish(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r, int status)
{
    r->status = status;
    r->flags |= TBBT__NFSQ_DONE;
    q->queued--;
    if (r->obj != NONE)
        OBJ(q, r->obj)->busy--;
    if (r->dir != NONE && (r->kind == TBBT__NFSQ_REMOVE || r->kind == TBBT__NFSQ_RMDIR))
        OBJ(q, r->dir)->busy--;
    release(r);
}

/* Queues r without waiting (replies' follow-ups use this too). */
static void enqueue(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    q->queued++;
    if (r->obj != NONE)
        OBJ(q, r->obj)->busy++;
    if (r->dir != NONE && (r->kind == TBBT__NFSQ_REMOVE || r->kind == TBBT__NFSQ_RMDIR))
        OBJ(q, r->dir)->busy++;
    route(q, r);
}

/* ---- encoding ----------------------------------------------------------------------- */

static sattr3 sattr(const struct tbbt__nfsq_req *r, bool mode)
{
    sattr3 s;

    memset(&s, 0, sizeof(s));
    if (mode) {
        s.mode.set_it = TRUE;
        s.mode.set_mode3_u.mode = r->a.known ? r->a.mode & 07777 : r->dflt_mode;
    }
    if (r->a.known) {
        s.uid.set_it = TRUE;
        s.uid.set_uid3_u.uid = r->a.uid;
        s.gid.set_it = TRUE;
        s.gid.set_gid3_u.gid = r->a.gid;
    }
    return s;
}

/* Arguments of every kind, filled by args(). */
union args {
    MKDIR3args mkdir;
    CREATE3args create;
    SYMLINK3args symlink;
    MKNOD3args mknod;
    LINK3args link;
    WRITE3args write;
    COMMIT3args commit;
    SETATTR3args setattr;
    diropargs3 dirop;       /* REMOVE, RMDIR, LOOKUP (the same bytes) */
    nfs_fh3 fh;             /* GETATTR, FSSTAT, FSINFO */
    READ3args read;
    READDIR3args readdir;
};

static void where(struct tbbt__nfsq *q, const struct tbbt__nfsq_req *r, diropargs3 *d)
{
    tbbt__nfsq_fh(q, r->dir, &d->dir);
    d->name = (char *)r->name;
}

/* The arguments of r into a; returns the XDR routine. */
static xdrproc_t args(struct tbbt__nfsq *q, const struct tbbt__nfsq_req *r, union args *a)
{
    memset(a, 0, sizeof(*a));
    switch (r->kind) {
    case TBBT__NFSQ_MKDIR:
        where(q, r, &a->mkdir.where);
        a->mkdir.attributes = sattr(r, true);
        return (xdrproc_t)xdr_MKDIR3args;
    case TBBT__NFSQ_CREATE:
        where(q, r, &a->create.where);
        a->create.how.mode = GUARDED;
        a->create.how.createhow3_u.obj_attributes = sattr(r, true);
        return (xdrproc_t)xdr_CREATE3args;
    case TBBT__NFSQ_SYMLINK:
        where(q, r, &a->symlink.where);
        a->symlink.symlink.symlink_attributes = sattr(r, false);
        a->symlink.symlink.symlink_data = r->own;
        return (xdrproc_t)xdr_SYMLINK3args;
    case TBBT__NFSQ_MKNOD:
        where(q, r, &a->mknod.where);
        a->mknod.what.type = (ftype3)r->type;
        a->mknod.what.mknoddata3_u.pipe_attributes = sattr(r, true);
        return (xdrproc_t)xdr_MKNOD3args;
    case TBBT__NFSQ_LINK:
        tbbt__nfsq_fh(q, r->obj, &a->link.file);
        where(q, r, &a->link.link);
        return (xdrproc_t)xdr_LINK3args;
    case TBBT__NFSQ_WRITE:
        tbbt__nfsq_fh(q, r->obj, &a->write.file);
        a->write.offset = r->offset;
        a->write.count = r->count;
        a->write.stable = (stable_how)r->stable;
        a->write.data.data_len = r->count;
        a->write.data.data_val = (char *)r->data;
        return (xdrproc_t)xdr_WRITE3args;
    case TBBT__NFSQ_COMMIT:
        tbbt__nfsq_fh(q, r->obj, &a->commit.file);
        return (xdrproc_t)xdr_COMMIT3args;
    case TBBT__NFSQ_SETATTR:
        tbbt__nfsq_fh(q, r->obj, &a->setattr.object);
        if (r->set_size) {
            a->setattr.new_attributes.size.set_it = TRUE;
            a->setattr.new_attributes.size.set_size3_u.size = r->offset;
        } else {
            a->setattr.new_attributes = sattr(r, true);
        }
        return (xdrproc_t)xdr_SETATTR3args;
    case TBBT__NFSQ_REMOVE:
    case TBBT__NFSQ_RMDIR:
    case TBBT__NFSQ_LOOKUP:
        where(q, r, &a->dirop);
        return (xdrproc_t)xdr_diropargs3;
    case TBBT__NFSQ_READ:
        tbbt__nfsq_fh(q, r->obj, &a->read.file);
        a->read.offset = r->offset;
        a->read.count = r->count;
        return (xdrproc_t)xdr_READ3args;
    case TBBT__NFSQ_READDIR:
        tbbt__nfsq_fh(q, r->obj, &a->readdir.dir);
        a->readdir.cookie = r->offset;
        memcpy(a->readdir.cookieverf, r->cookieverf, NFS3_COOKIEVERFSIZE);
        a->readdir.count = 32768;
        return (xdrproc_t)xdr_READDIR3args;
    default:        /* GETATTR, FSSTAT, FSINFO: the handle alone */
        tbbt__nfsq_fh(q, r->obj, &a->fh);
        return (xdrproc_t)xdr_nfs_fh3;
    }
}

/* The connection of r: a file's data calls all on one (their order), names by directory. */
static unsigned conn_of(const struct tbbt__nfsq *q, const struct tbbt__nfsq_req *r)
{
    uint32_t key = kinds[r->kind].needs_obj || r->dir == NONE ? r->obj : r->dir;

    return q->nc > 1 ? key % q->nc : 0;
}

static int send_one(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    union args a;
    struct tbbt_rpcconn_call call = {
        .prog = NFS3_PROGRAM, .vers = NFS_V3, .proc = kinds[r->kind].proc,
        .xres = kinds[r->kind].xres, .res = &r->res, .res_size = sizeof(r->res), .arg = r,
    };

    call.xargs = args(q, r, &a);
    call.args = &a;
    return tbbt_rpcconn_call(q->c[conn_of(q, r)], &call, NULL);
}

/* Hands ready requests to the connections while there is room. */
static void issue_ready(struct tbbt__nfsq *q)
{
    struct tbbt__nfsq_req *r;

    while (!q->fatal && (r = head(&q->ready)) && q->inflight < q->max_out) {
        if (r->kind == TBBT__NFSQ_WRITE && q->wbytes && q->wbytes + r->count > MAX_WBYTES)
            break;
        pop(&q->ready);
        int rc = send_one(q, r);
        if (rc < 0) {
            fatal(q, rc, "%s '%s': %s", kinds[r->kind].name, req_path(q, r),
                  rc == -EINVAL ? "the call does not encode"
                                : tbbt_rpcconn_error(q->c[conn_of(q, r)]));
            finish(q, r, rc);
            return;
        }
        q->inflight++;
        q->unflushed++;
        if (r->kind == TBBT__NFSQ_WRITE)
            q->wbytes += r->count;
    }
}

/* Sends what the connections hold; *blocked: some could not send it all. */
static void flush_all(struct tbbt__nfsq *q, bool *blocked)
{
    *blocked = false;
    for (unsigned k = 0; k < q->nc; k++) {
        int rc = tbbt_rpcconn_flush(q->c[k]);
        if (rc == -EAGAIN)
            *blocked = true;
        /* other errors: the connection goes down, its calls come back LOST */
    }
    q->unflushed = 0;
}

/* ---- replies ------------------------------------------------------------------------ */

static void write_follow_up(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r, uint32_t done);

static void check_verf(struct tbbt__nfsq *q, const struct tbbt__nfsq_req *r, const char *verf)
{
    if (!q->have_verf) {
        memcpy(q->verf, verf, NFS3_WRITEVERFSIZE);
        q->have_verf = true;
    } else if (memcmp(q->verf, verf, NFS3_WRITEVERFSIZE) != 0) {
        fatal(q, -EIO, "%s '%s': the server's write verifier changed (did it restart?): data "
              "written UNSTABLE may be lost; build again", kinds[r->kind].name, req_path(q, r));
    }
}

/* A create-type reply's handle (where made_at[] says), or a LOOKUP to get it. */
static void made(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    const char *res = (const char *)&r->res;
    const post_op_fh3 *fh = (const post_op_fh3 *)(res + made_at[r->kind].fh);
    const post_op_attr *attr = (const post_op_attr *)(res + made_at[r->kind].attrs);
    uint32_t type = attr->attributes_follow ? attr->post_op_attr_u.attributes.type : 0;

    if (fh->handle_follows && fh->post_op_fh3_u.handle.data.data_len > 0 &&
        fh->post_op_fh3_u.handle.data.data_len <= NFS3_FHSIZE) {
        tbbt__nfsq_bind(q, r->obj, fh->post_op_fh3_u.handle.data.data_val,
                        fh->post_op_fh3_u.handle.data.data_len, type);
    } else {
        struct tbbt__nfsq_req *l = tbbt__nfsq_req(TBBT__NFSQ_LOOKUP, r->obj, r->dir, r->name);
        enqueue(q, l);
    }
}

static void on_write(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    const WRITE3resok *ok = &r->res.write.WRITE3res_u.resok;
    struct tbbt__nfsq_obj *o = OBJ(q, r->obj);
    uint32_t done = MIN(ok->count, r->count);

    if (!(r->flags & TBBT__NFSQ_NOCOUNT)) {
        __atomic_fetch_add(&q->st->bytes, (uint64_t)done, __ATOMIC_RELAXED);
        __atomic_fetch_add(q->done_bytes, (uint64_t)done, __ATOMIC_RELAXED);
    }
    if (r->stable == UNSTABLE && ok->committed == UNSTABLE)
        check_verf(q, r, ok->verf);
    if (done < r->count)
        write_follow_up(q, r, done);
    if (r->stable != UNSTABLE || --o->writes > 0 || !o->dirty)
        return;
    o->dirty = false;       /* every UNSTABLE WRITE answered: COMMIT the file */
    enqueue(q, tbbt__nfsq_req(TBBT__NFSQ_COMMIT, r->obj, NONE, NULL));
}

/* The rest of a short WRITE. */
static void write_follow_up(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r, uint32_t done)
{
    struct tbbt__nfsq_req *w;

    if (done == 0) {
        fatal(q, -EIO, "WRITE '%s' at offset %" PRIu64 ": the server wrote nothing",
              req_path(q, r), r->offset);
        return;
    }
    w = tbbt__nfsq_req(TBBT__NFSQ_WRITE, r->obj, NONE, NULL);
    w->stable = r->stable;
    w->offset = r->offset + done;
    w->count = r->count - done;
    w->data = (const uint8_t *)r->data + done;
    w->flags = r->flags & TBBT__NFSQ_NOCOUNT;
    if (w->stable == UNSTABLE)
        OBJ(q, r->obj)->writes++;
    enqueue(q, w);
}

/* An NFS error: the caller's (QUIET), fine (FORCE and NOENT), or the end of the build. */
static void nfs_error(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r, int st)
{
    if (r->flags & TBBT__NFSQ_QUIET)
        return;
    if (r->flags & TBBT__NFSQ_FORCE) {
        if (st != NFS3ERR_NOENT)
            fatal(q, tbbt__nfsq_errno(st), "--force: %s '%s' (made by the previous run): %s; "
                  "nothing else removed", kinds[r->kind].name, req_path(q, r),
                  tbbt__nfsq_status_name(st));
        return;
    }
    if (r->kind == TBBT__NFSQ_WRITE)
        fatal(q, tbbt__nfsq_errno(st), "WRITE '%s' at offset %" PRIu64 ": %s", req_path(q, r),
              r->offset, tbbt__nfsq_status_name(st));
    else
        fatal(q, tbbt__nfsq_errno(st), "%s '%s': %s", kinds[r->kind].name, req_path(q, r),
              tbbt__nfsq_status_name(st));
}

static void on_result(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r, int st)
{
    if (st != NFS3_OK) {
        nfs_error(q, r, st);
        return;
    }
    switch (r->kind) {
    case TBBT__NFSQ_MKDIR:
    case TBBT__NFSQ_CREATE:
    case TBBT__NFSQ_SYMLINK:
    case TBBT__NFSQ_MKNOD:
        made(q, r);
        break;
    case TBBT__NFSQ_LOOKUP:
        if (r->obj != NONE && !(r->flags & TBBT__NFSQ_WAIT)) {  /* a create's handle */
            const LOOKUP3resok *ok = &r->res.lookup.LOOKUP3res_u.resok;
            if (ok->object.data.data_len == 0 || ok->object.data.data_len > NFS3_FHSIZE)
                fatal(q, -EPROTO, "LOOKUP '%s': the server returned a bad handle",
                      req_path(q, r));
            else
                tbbt__nfsq_bind(q, r->obj, ok->object.data.data_val, ok->object.data.data_len,
                                0);
        }
        break;
    case TBBT__NFSQ_WRITE:
        on_write(q, r);
        break;
    case TBBT__NFSQ_COMMIT:
        check_verf(q, r, r->res.commit.COMMIT3res_u.resok.verf);
        break;
    default:
        break;
    }
}

static void on_reply(struct tbbt__nfsq *q, unsigned k, const struct tbbt_rpcconn_reply *rep)
{
    struct tbbt__nfsq_req *r = rep->arg;
    char why[128];
    int st;

    q->inflight--;
    if (r->kind == TBBT__NFSQ_WRITE)
        q->wbytes -= r->count;
    switch (rep->status) {
    case TBBT_RPCCONN_OK:
        break;
    case TBBT_RPCCONN_LOST:
        fatal(q, rep->detail < 0 ? rep->detail : -ECONNRESET, "NFS connection to %s: %s (%s "
              "'%s' unanswered)", q->server, tbbt_rpcconn_error(q->c[k]), kinds[r->kind].name,
              req_path(q, r));
        finish(q, r, -ECONNRESET);
        return;
    case TBBT_RPCCONN_TIMEDOUT:
        fatal(q, -ETIMEDOUT, "%s '%s': no reply from %s within %" PRIu64 " s",
              kinds[r->kind].name, req_path(q, r), q->server, q->timeout_ns / 1000000000);
        finish(q, r, -ETIMEDOUT);
        return;
    default:
        fatal(q, -EPROTO, "%s '%s': %s", kinds[r->kind].name, req_path(q, r),
              tbbt_rpcconn_reply_why(rep, why, sizeof(why)));
        finish(q, r, -EPROTO);
        return;
    }
    st = rep->res_status;
    if (st == NFS3ERR_JUKEBOX && !q->fatal) {       /* the server asks to try later */
        if (kinds[r->kind].xres)
            xdr_free(kinds[r->kind].xres, (char *)&r->res);
        memset(&r->res, 0, sizeof(r->res));
        r->due_ns = tbbt_now_ns() + JUKEBOX_NS;
        push(&q->delayed, r);
        return;
    }
    on_result(q, r, st);
    finish(q, r, st);
}

/* ---- the loop ----------------------------------------------------------------------- */

/* Reads every reply the connections hold (without waiting). */
static void recv_all(struct tbbt__nfsq *q)
{
    struct tbbt_rpcconn_reply rep[64];

    for (unsigned k = 0; k < q->nc; k++) {
        int n;
        do {
            n = tbbt_rpcconn_recv(q->c[k], rep, 64);
            for (int i = 0; i < n; i++)
                on_reply(q, k, &rep[i]);
        } while (n == 64);
        if (n < 0 && !q->fatal)
            fatal(q, n, "NFS connection to %s: %s", q->server, tbbt_rpcconn_error(q->c[k]));
    }
}

/* Calls overdue by the timeout fail; delayed requests whose time came are ready. */
static void timers(struct tbbt__nfsq *q, uint64_t now)
{
    struct tbbt_rpcconn_reply rep[64];
    struct tbbt_dlist keep = { NULL, NULL };
    struct tbbt__nfsq_req *r;
    int n;

    while ((r = pop(&q->delayed)))
        if (r->due_ns <= now)
            route(q, r);
        else
            push(&keep, r);
    q->delayed = keep;
    if (now < q->next_expire_ns)
        return;
    q->next_expire_ns = now + 1000000000ull;
    for (unsigned k = 0; k < q->nc && now > q->timeout_ns; k++)
        while ((n = tbbt_rpcconn_expire(q->c[k], now - q->timeout_ns, rep, 64)) > 0)
            for (int i = 0; i < n; i++)
                on_reply(q, k, &rep[i]);
}

/* One round: send, wait for a reply (or room to send, or a timer), handle replies. */
static void wait_round(struct tbbt__nfsq *q)
{
    struct pollfd p[16];
    unsigned np = MIN(q->nc, 16u);
    bool blocked;
    uint64_t now;

    issue_ready(q);
    flush_all(q, &blocked);
    for (unsigned k = 0; k < np; k++)
        p[k] = (struct pollfd){ .fd = tbbt_rpcconn_fd(q->c[k]),
                                .events = POLLIN | (blocked ? POLLOUT : 0) };
    if (q->inflight || blocked)
        poll(p, np, q->delayed.first ? (int)(JUKEBOX_NS / 2000000) : POLL_MS);
    else if (q->delayed.first)
        g_usleep(JUKEBOX_NS / 2000);
    else if (q->queued && !q->ready.first)    /* waiting for handles nothing will bring */
        fatal(q, -EDEADLK, "internal error: %u NFS calls wait for handles no call will "
              "bring", q->queued);
    recv_all(q);
    now = tbbt_now_ns();
    timers(q, now);
    issue_ready(q);
}

int tbbt__nfsq_submit(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    bool blocked;

    if (q->fatal) {
        release(r);
        return q->fatal;
    }
    enqueue(q, r);
    issue_ready(q);
    if (++q->since_recv >= RECV_EVERY && q->inflight) {
        q->since_recv = 0;
        recv_all(q);
        issue_ready(q);
    }
    /* send now when the server has little to do, else in batches */
    if (q->unflushed && (q->unflushed >= FLUSH_EVERY || q->inflight < 2 * FLUSH_EVERY))
        flush_all(q, &blocked);
    while (!q->fatal && q->queued > MAX_QUEUED)
        wait_round(q);
    return q->fatal;
}

int tbbt__nfsq_run(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r)
{
    int rc;

    r->flags |= TBBT__NFSQ_WAIT;
    if ((rc = tbbt__nfsq_submit(q, r)) < 0)
        return rc;
    while (!q->fatal && !(r->flags & TBBT__NFSQ_DONE))
        wait_round(q);
    if (q->fatal)
        return q->fatal;
    return r->status < 0 ? r->status : 0;
}

int tbbt__nfsq_barrier(struct tbbt__nfsq *q)
{
    while (!q->fatal && q->queued > 0)
        wait_round(q);
    return q->fatal;
}

int tbbt__nfsq_idle(struct tbbt__nfsq *q, uint32_t i)
{
    while (!q->fatal && OBJ(q, i)->busy > 0)
        wait_round(q);
    return q->fatal;
}

int tbbt__nfsq_write(struct tbbt__nfsq *q, uint32_t i, uint64_t len, stable_how stable,
                     const uint8_t *data, uint32_t wsize)
{
    int rc = 0;

    q->st->appends++;
    /* data that fits in one WRITE: FILE_SYNC, the COMMIT would follow at once */
    if (stable == UNSTABLE && len <= wsize && !OBJ(q, i)->dirty)
        stable = FILE_SYNC;
    while (len > 0 && rc == 0) {
        struct tbbt__nfsq_req *w = tbbt__nfsq_req(TBBT__NFSQ_WRITE, i, NONE, NULL);
        struct tbbt__nfsq_obj *o = OBJ(q, i);
        w->stable = (uint8_t)stable;
        w->count = (uint32_t)MIN(len, (uint64_t)wsize);
        w->offset = o->size;
        w->data = data;
        o->size += w->count;
        len -= w->count;
        if (stable == UNSTABLE) {
            o->writes++;
            o->dirty = true;
        }
        rc = tbbt__nfsq_submit(q, w);
    }
    return rc;
}

/* ---- the end ------------------------------------------------------------------------ */

void tbbt__nfsq_fini(struct tbbt__nfsq *q)
{
    struct tbbt_rpcconn_reply rep[64];
    int n;

    for (unsigned k = 0; k < q->nc; k++) {
        if (!q->c[k])
            continue;
        while ((n = tbbt_rpcconn_expire(q->c[k], UINT64_MAX, rep, 64)) > 0)
            for (int i = 0; i < n; i++)
                release(rep[i].arg);
        tbbt_rpcconn_free(q->c[k]);
    }
    g_free(q->c);
    release_all(&q->ready);
    release_all(&q->delayed);
    ns_free(q);
    g_free(q->prefix);
}
