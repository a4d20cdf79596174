/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init's NFS backend (image-int.h): the image is made by the server itself,
 * through NFSv3 calls (RFC 1813) from this process, for servers whose disks the build
 * cannot write directly (NAS appliances).  docs/tbbt-init.md, "Building through NFS".
 *
 * Start: the portmapper's ports (RFC 1833 GETPORT; or given), MOUNT v3 MNT of the
 * export (RFC 1813 Appendix I), LOOKUP of every component of the root path under the
 * export (each must be a directory: a symbolic link is refused, never followed), FSINFO
 * for the server's preferred WRITE size.  Credentials: AUTH_SYS as root.
 *
 * Objects: CREATE (GUARDED: an existing name fails, as O_EXCL), MKDIR, SYMLINK and
 * MKNOD (FIFO) carry the mode and owner in their sattr3, so no SETATTR follows, except
 * for set-ID bits (a later chown would clear them).  Hard links: LINK.  File data:
 * WRITEs of the server's preferred size, UNSTABLE then one COMMIT per file when
 * the file is written at once (one FILE_SYNC WRITE when the data fits in one), FILE_SYNC
 * when aging (the server allocates at each append) and for spacers.  Everything is
 * pipelined by the request engine
 * (image-nfsq.c): a directory's entries leave as soon as its MKDIR reply gives the
 * handle.  The namespace is the backend's own: a map path through a symbolic link (or
 * a file) finds no directory and fails with the map line, as the local backend does.
 *
 * Usage: FSSTAT (tbytes, fbytes); the block size is taken to be 4096.  The marker and
 * --force: LOOKUP, READ, READDIR, REMOVE and RMDIR beneath the root.
 */
#include "aging/image-int.h"
#include "aging/image-nfsq.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "proto/mount.h"
#include "proto/proto.h"
#include "util/util.h"

#define NONE TBBT__NFSQ_NONE
#define MARKER TBBT__IMAGE_MARKER
#define DEF_OUTSTANDING 128
#define DEF_CONNECTIONS 2
#define DEF_TIMEOUT_MS 30000
#define SETUP_MS 10000          /* portmapper and MOUNT */
#define MAX_WSIZE (1u << 20)    /* NFS3_MAXDATA: what our XDR bounds allow */
#define BLOCK 4096

struct nfs {
    struct tbbt__image_be be;   /* first: what image.c sees */
    struct tbbt__nfsq q;
    struct tbbt_rpcconn_fh root_fh;
    uint32_t wsize;
    uint8_t *data;              /* wsize bytes of non-zero data */
    GString *tmp;
};

#define N(be) ((struct nfs *)(be))

static int fail_at(struct nfs *n, int stage, int rc)
{
    n->be.stage = stage;
    return rc;
}

/* ---- start ---------------------------------------------------------------------------- */

static struct tbbt_rpcconn *conn_to(const char *host, uint16_t port, char *err, size_t errlen)
{
    struct tbbt_rpcconn_opts o = { .transport = TBBT_RPCCONN_TCP,
                                   .flavor = TBBT_RPCCONN_AUTH_SYS, .uid = 0, .gid = 0,
                                   .sock_buf = 4 << 20 };
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(&o);

    if (tbbt_rpcconn_connect(c, host, port) < 0) {
        tbbt_errbuf(err, errlen, "%s", tbbt_rpcconn_error(c));    /* names host and port */
        tbbt_rpcconn_free(c);
        return NULL;
    }
    return c;
}

static int getport(const char *host, uint32_t prog, uint32_t vers, uint16_t *port, char *err,
                   size_t errlen)
{
    struct tbbt_rpcconn *c = conn_to(host, 111, err, errlen);
    int rc;

    if (!c)
        return -ECONNREFUSED;
    rc = tbbt_rpcconn_getport(c, prog, vers, IPPROTO_TCP, SETUP_MS, port);
    if (rc < 0 || *port == 0)
        tbbt_errbuf(err, errlen, "rpcbind on %s: program %" PRIu32 " version %" PRIu32 " over "
                    "tcp: %s (or give --nfs-port and --mount-port)", host, prog, vers,
                    rc < 0 ? tbbt_rpcconn_error(c) : "not registered");
    tbbt_rpcconn_free(c);
    return rc < 0 ? rc : *port == 0 ? -ENOENT : 0;
}

static int mount_export(const struct tbbt_image_opts *o, uint16_t port,
                        struct tbbt_rpcconn_fh *fh, char *err, size_t errlen)
{
    struct tbbt_rpcconn *c = conn_to(o->server, port, err, errlen);
    int rc, mstat = 0;

    if (!c)
        return -ECONNREFUSED;
    rc = tbbt_rpcconn_mnt3(c, o->export_path, SETUP_MS, &mstat, fh);
    if (rc < 0) {
        tbbt_errbuf(err, errlen, "MNT '%s' on %s: %s", o->export_path, o->server,
                    tbbt_rpcconn_error(c));
    } else if (mstat != MNT3_OK) {
        const char *name = tbbt_proto_status_name(TBBT_PROTO_MNT3, mstat);
        tbbt_errbuf(err, errlen, "MNT '%s' on %s: %s", o->export_path, o->server,
                    name ? name : "refused");
        rc = mstat == MNT3ERR_NOENT ? -ENOENT : mstat == MNT3ERR_ACCES ? -EACCES : -EIO;
    } else if (fh->len == 0) {
        tbbt_errbuf(err, errlen, "MNT '%s' on %s: an empty handle", o->export_path, o->server);
        rc = -EPROTO;
    }
    tbbt_rpcconn_free(c);
    return rc;
}

/* The components of the server path p, without empty and "." ones; NULL if one is "..". */
static char **components(const char *p)
{
    char **v = g_strsplit(p, "/", -1);
    guint k = 0;

    for (guint i = 0; v[i]; i++) {
        if (strcmp(v[i], "..") == 0) {
            g_strfreev(v);
            return NULL;
        }
        if (v[i][0] && strcmp(v[i], ".") != 0)
            v[k++] = v[i];
        else
            g_free(v[i]);
    }
    v[k] = NULL;
    return v;
}

/*
 * Runs r (given back: the caller frees it) and waits for it, with TBBT__NFSQ_QUIET: 0,
 * its NFS error as -errno, or the fatal error.
 */
static int run_quiet(struct nfs *n, struct tbbt__nfsq_req *r)
{
    int rc;

    r->flags |= TBBT__NFSQ_QUIET;
    if ((rc = tbbt__nfsq_run(&n->q, r)) == 0 && r->status != NFS3_OK)
        rc = tbbt__nfsq_errno(r->status);
    return rc;
}

/* The type of the object a LOOKUP found: its attributes, else a GETATTR. */
static int found_type(struct nfs *n, struct tbbt__nfsq_req *l, uint32_t obj, uint32_t *type)
{
    const post_op_attr *pa = &l->res.lookup.LOOKUP3res_u.resok.obj_attributes;
    struct tbbt__nfsq_req *g;
    int rc;

    if (pa->attributes_follow) {
        *type = pa->post_op_attr_u.attributes.type;
        return 0;
    }
    g = tbbt__nfsq_req(TBBT__NFSQ_GETATTR, obj, NONE, NULL);
    if ((rc = tbbt__nfsq_run(&n->q, g)) == 0)
        *type = g->res.getattr.GETATTR3res_u.resok.obj_attributes.type;
    tbbt__nfsq_req_free(g);
    return rc;
}

/*
 * LOOKUP of name in directory dir (quiet): 0 and the new object *obj (with its type)
 * when found, the NFS error as -errno (NOENT: -ENOENT), or the fatal error.
 */
static int lookup(struct nfs *n, uint32_t dir, const char *path, const char *name,
                  uint32_t *obj)
{
    struct tbbt__nfsq_req *l = tbbt__nfsq_req(TBBT__NFSQ_LOOKUP, NONE, dir, name);
    const LOOKUP3resok *ok = &l->res.lookup.LOOKUP3res_u.resok;
    uint32_t type = 0;
    int rc;

    rc = run_quiet(n, l);
    if (rc == 0 && (ok->object.data.data_len == 0 || ok->object.data.data_len > NFS3_FHSIZE))
        rc = -EPROTO;
    if (rc == 0) {
        *obj = tbbt__nfsq_obj_new(&n->q, path, 0);
        tbbt__nfsq_bind(&n->q, *obj, ok->object.data.data_val, ok->object.data.data_len, 0);
        if ((rc = found_type(n, l, *obj, &type)) == 0)
            tbbt__nfsq_obj(&n->q, *obj)->type = (uint8_t)type;
    }
    tbbt__nfsq_req_free(l);
    return rc;
}

/* The handle of the root path under the export (object 0 of a namespace at the export). */
static int find_root(struct nfs *n, const struct tbbt_image_opts *o)
{
    char **e = components(o->export_path), **r = components(o->root);
    GString *path = g_string_new(NULL);
    guint ne = e ? g_strv_length(e) : 0, nr = r ? g_strv_length(r) : 0, i;
    uint32_t cur = 0, next;
    int rc = 0;

    if (!e || !r || o->root[0] != '/' || nr < ne) {
        rc = -EINVAL;
    } else {
        for (i = 0; i < ne && rc == 0; i++)
            rc = strcmp(e[i], r[i]) ? -EINVAL : 0;
    }
    if (rc < 0)
        tbbt_errbuf(n->be.errbuf, n->be.errlen, "the root '%s' is not an absolute path under "
                    "the export '%s'", o->root, o->export_path);
    for (i = ne; rc == 0 && i < nr; i++) {
        g_string_append_printf(path, "%s%s", path->len ? "/" : "", r[i]);
        rc = lookup(n, cur, path->str, r[i], &next);
        uint32_t type = rc == 0 ? tbbt__nfsq_obj(&n->q, next)->type : 0;
        if (rc < 0 && !n->be.errbuf[0])
            tbbt_errbuf(n->be.errbuf, n->be.errlen, "cannot open the root '%s': LOOKUP '%s' "
                        "under the export: %s", o->root, path->str, strerror(-rc));
        else if (rc == 0 && type == NF3LNK)
            rc = -ELOOP;
        else if (rc == 0 && type != NF3DIR)
            rc = -ENOTDIR;
        if (rc == -ELOOP || rc == -ENOTDIR)
            tbbt_errbuf(n->be.errbuf, n->be.errlen, "the root '%s': '%s' under the export is %s "
                        "on the server: refusing to go through it", o->root, path->str,
                        rc == -ELOOP ? "a symbolic link" : "not a directory");
        cur = next;
    }
    if (rc == 0) {
        nfs_fh3 fh;
        tbbt__nfsq_fh(&n->q, cur, &fh);
        n->root_fh.len = fh.data.data_len;
        memcpy(n->root_fh.data, fh.data.data_val, fh.data.data_len);
    }
    g_string_free(path, TRUE);
    g_strfreev(e);
    g_strfreev(r);
    return rc;
}

/* FSINFO: the WRITE size (the server's preferred one, within its and our maximum). */
static int fsinfo(struct nfs *n)
{
    struct tbbt__nfsq_req *r = tbbt__nfsq_req(TBBT__NFSQ_FSINFO, 0, NONE, NULL);
    int rc = tbbt__nfsq_run(&n->q, r);

    if (rc == 0) {
        const FSINFO3resok *ok = &r->res.fsinfo.FSINFO3res_u.resok;
        uint32_t w = ok->wtpref ? ok->wtpref : ok->wtmax ? ok->wtmax : 65536;
        if (ok->wtmax)
            w = MIN(w, ok->wtmax);
        n->wsize = CLAMP(w, 4096u, MAX_WSIZE);
    }
    tbbt__nfsq_req_free(r);
    return rc;
}

static int connect_all(struct nfs *n, const struct tbbt_image_opts *o, uint16_t nfs_port)
{
    unsigned nc = o->connections ? o->connections : DEF_CONNECTIONS;
    struct tbbt_rpcconn **c = g_new0(struct tbbt_rpcconn *, nc);

    tbbt__nfsq_init(&n->q, c, nc, o->server, o->outstanding ? o->outstanding : DEF_OUTSTANDING,
                    o->timeout_ms > 0 ? o->timeout_ms : DEF_TIMEOUT_MS, n->be.errbuf,
                    n->be.errlen, n->be.st, &n->be.done_bytes);
    for (unsigned k = 0; k < nc; k++)
        if (!(c[k] = conn_to(o->server, nfs_port, n->be.errbuf, n->be.errlen)))
            return -ECONNREFUSED;
    return 0;
}

static void n_close(struct tbbt__image_be *be);

static struct tbbt__image_be *n_open(const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                                     char *errbuf, size_t errlen, int *rc)
{
    struct nfs *n = g_new0(struct nfs, 1);
    struct tbbt_rpcconn_fh export_fh;
    uint16_t nfs_port = o->nfs_port, mount_port = o->mount_port;

    n->be = (struct tbbt__image_be){ .ops = &tbbt__image_nfs_ops, .o = o, .st = st,
                                     .errbuf = errbuf, .errlen = errlen };
    n->tmp = g_string_new(NULL);
    *rc = 0;
    if (!nfs_port)
        *rc = getport(o->server, NFS3_PROGRAM, NFS_V3, &nfs_port, errbuf, errlen);
    if (*rc == 0 && !mount_port)
        *rc = getport(o->server, MOUNT_PROGRAM, MOUNT_V3, &mount_port, errbuf, errlen);
    if (*rc == 0)
        *rc = mount_export(o, mount_port, &export_fh, errbuf, errlen);
    if (*rc == 0 && (*rc = connect_all(n, o, nfs_port)) == 0) {
        tbbt__nfsq_ns_reset(&n->q, &export_fh, "");
        if ((*rc = find_root(n, o)) == 0) {
            tbbt__nfsq_ns_reset(&n->q, &n->root_fh, "");
            *rc = fsinfo(n);
        }
    }
    if (*rc < 0) {
        n_close(&n->be);
        return NULL;
    }
    n->data = g_malloc(n->wsize);
    for (size_t i = 0; i < n->wsize; i++)
        n->data[i] = (uint8_t)('a' + i % 26);
    return &n->be;
}

static void n_close(struct tbbt__image_be *be)
{
    struct nfs *n = N(be);

    if (!n)
        return;
    tbbt__nfsq_fini(&n->q);
    g_string_free(n->tmp, TRUE);
    g_free(n->data);
    g_free(n);
}

/* ---- paths ---------------------------------------------------------------------------- */

/*
 * The directory object of path's parent, and the leaf.  -ENOENT when the directory was
 * not made, -ENOTDIR when it is not a directory, -ELOOP when it is a symbolic link (the
 * local backend's openat2 says so too).
 */
static int parent(struct nfs *n, const char *path, uint32_t *dir, const char **leaf)
{
    const char *slash = strrchr(path, '/');
    uint32_t d;
    uint8_t type;

    g_string_truncate(n->tmp, 0);
    if (slash)
        g_string_append_len(n->tmp, path, (gssize)(slash - path));
    else
        g_string_append_c(n->tmp, '.');
    *leaf = slash ? slash + 1 : path;
    if ((d = tbbt__nfsq_find(&n->q, n->tmp->str)) == NONE)
        return fail_at(n, TBBT__IMAGE_AT_PARENT, -ENOENT);
    type = tbbt__nfsq_obj(&n->q, d)->type;
    if (type != NF3DIR)
        return fail_at(n, TBBT__IMAGE_AT_PARENT, type == NF3LNK ? -ELOOP : -ENOTDIR);
    *dir = d;
    return 0;
}

/* An entry request of kind in directory dir whose name (leaf) the request owns. */
static struct tbbt__nfsq_req *entry_req(enum tbbt__nfsq_kind kind, uint32_t obj, uint32_t dir,
                                        const char *leaf)
{
    struct tbbt__nfsq_req *r = tbbt__nfsq_req(kind, obj, dir, NULL);

    r->own = g_strdup(leaf);
    r->name = r->own;
    return r;
}

/* The directory and leaf of path and the existing object at obj_path (link, unlink). */
static int existing(struct nfs *n, const char *obj_path, const char *path, uint32_t *dir,
                    const char **leaf, uint32_t *obj)
{
    int rc;

    if (n->q.fatal)
        return n->q.fatal;
    if ((rc = parent(n, path, dir, leaf)) < 0)
        return rc;
    if ((*obj = tbbt__nfsq_find(&n->q, obj_path)) == NONE)
        return fail_at(n, TBBT__IMAGE_AT_CREATE, -ENOENT);
    return 0;
}

/* A new object at path (not there yet), the request that makes it (given), its leaf. */
static int make(struct nfs *n, const char *path, uint32_t type, enum tbbt__nfsq_kind kind,
                const struct tbbt__image_attrs *a, struct tbbt__nfsq_req **out)
{
    const char *leaf;
    uint32_t dir, obj;
    int rc;

    if (n->q.fatal)
        return n->q.fatal;
    if ((rc = parent(n, path, &dir, &leaf)) < 0)
        return rc;
    if (tbbt__nfsq_find(&n->q, path) != NONE)
        return fail_at(n, TBBT__IMAGE_AT_CREATE, -EEXIST);
    obj = tbbt__nfsq_obj_new(&n->q, path, type);
    *out = tbbt__nfsq_req(kind, obj, dir, tbbt__nfsq_obj(&n->q, obj)->path + (leaf - path));
    if (a)
        (*out)->a = *a;
    return 0;
}

/*
 * A new object at path made by kind with mode and the server's owner, waited for: 0 and
 * *out (given: free it with tbbt__nfsq_req_free()), or an error, *out then set only when
 * the request was made (and failed).
 */
static int make_now(struct nfs *n, const char *path, uint32_t type, enum tbbt__nfsq_kind kind,
                    uint32_t mode, struct tbbt__nfsq_req **out)
{
    struct tbbt__image_attrs none = { .known = false };
    int rc = make(n, path, type, kind, &none, out);

    if (rc < 0)
        return rc;
    (*out)->dflt_mode = mode;
    return run_quiet(n, *out);
}

/* A SETATTR of the mode after the object's other calls: set-ID bits survive the chown. */
static int setid_after(struct nfs *n, uint32_t obj, const struct tbbt__image_attrs *a)
{
    struct tbbt__nfsq_req *s;

    if (!a || !a->known || !(a->mode & 07000))
        return 0;
    s = tbbt__nfsq_req(TBBT__NFSQ_SETATTR, obj, NONE, NULL);
    s->a = (struct tbbt__image_attrs){ .known = false };
    s->dflt_mode = a->mode & 07777;
    return tbbt__nfsq_submit(&n->q, s);
}

static int submitted(struct nfs *n, int rc)
{
    return rc < 0 ? fail_at(n, TBBT__IMAGE_AT_CREATE, rc) : 0;
}

/* ---- objects -------------------------------------------------------------------------- */

/*
 * A directory, file or FIFO made at path with mode by default (a's if known), then the
 * file's data (flags, len), then the set-ID bits.
 */
static int make_node(struct nfs *n, const char *path, uint32_t type, enum tbbt__nfsq_kind kind,
                     const struct tbbt__image_attrs *a, uint32_t mode, uint64_t len,
                     unsigned flags)
{
    struct tbbt__nfsq_req *r;
    uint32_t obj;
    int rc = make(n, path, type, kind, a, &r);

    if (rc < 0)
        return rc;
    r->type = type;         /* MKNOD's */
    r->dflt_mode = mode;
    obj = r->obj;           /* r is the engine's once submitted */
    if ((rc = tbbt__nfsq_submit(&n->q, r)) == 0 && flags)
        rc = tbbt__nfsq_write(&n->q, obj, len,
                              (flags & TBBT__IMAGE_DATA_SYNC) ? FILE_SYNC : UNSTABLE, n->data,
                              n->wsize);
    return submitted(n, rc == 0 ? setid_after(n, obj, a) : rc);
}

static int n_mkdir(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a)
{
    return make_node(N(be), path, NF3DIR, TBBT__NFSQ_MKDIR, a, 0755, 0, 0);
}

static int n_create(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a,
                    uint64_t len, unsigned flags)
{
    return make_node(N(be), path, NF3REG, TBBT__NFSQ_CREATE, a, 0644, len, flags);
}

static int n_link(struct tbbt__image_be *be, const char *first, const char *path)
{
    struct nfs *n = N(be);
    const char *leaf;
    uint32_t dir, obj;
    int rc;

    if ((rc = existing(n, first, path, &dir, &leaf, &obj)) < 0)
        return rc;
    if (tbbt__nfsq_find(&n->q, path) != NONE)
        return fail_at(n, TBBT__IMAGE_AT_CREATE, -EEXIST);
    tbbt__nfsq_alias(&n->q, path, obj);
    return submitted(n, tbbt__nfsq_submit(&n->q, entry_req(TBBT__NFSQ_LINK, obj, dir, leaf)));
}

static int n_symlink(struct tbbt__image_be *be, const char *path, const char *target,
                     const struct tbbt__image_attrs *a)
{
    struct nfs *n = N(be);
    struct tbbt__nfsq_req *r;
    int rc;

    if (strlen(target) > NFS3_MAXPATHLEN)
        return fail_at(n, TBBT__IMAGE_AT_CREATE, -ENAMETOOLONG);
    if ((rc = make(n, path, NF3LNK, TBBT__NFSQ_SYMLINK, a, &r)) < 0)
        return rc;
    r->own = g_strdup(target);
    return submitted(n, tbbt__nfsq_submit(&n->q, r));
}

static int n_mkfifo(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a)
{
    return make_node(N(be), path, NF3FIFO, TBBT__NFSQ_MKNOD, a, 0644, 0, 0);
}

static int n_set_dir_attrs(struct tbbt__image_be *be, const char *path,
                           const struct tbbt__image_attrs *a)
{
    struct nfs *n = N(be);
    uint32_t obj = tbbt__nfsq_find(&n->q, path);
    struct tbbt__nfsq_req *r;

    if (obj == NONE || tbbt__nfsq_obj(&n->q, obj)->type != NF3DIR)
        return fail_at(n, TBBT__IMAGE_AT_PARENT, -ENOTDIR);
    r = tbbt__nfsq_req(TBBT__NFSQ_SETATTR, obj, NONE, NULL);
    r->a = *a;
    return tbbt__nfsq_submit(&n->q, r) < 0 ? fail_at(n, TBBT__IMAGE_AT_ATTRS, n->q.fatal) : 0;
}

/* The regular file at path, or a negative error. */
static int file_at(struct nfs *n, const char *path, uint32_t *obj)
{
    if (n->q.fatal)
        return n->q.fatal;
    *obj = tbbt__nfsq_find(&n->q, path);
    if (*obj == NONE)
        return -ENOENT;
    return tbbt__nfsq_obj(&n->q, *obj)->type == NF3REG ? 0 : -EINVAL;
}

static int n_append(struct tbbt__image_be *be, const char *path, uint64_t len, bool sync)
{
    struct nfs *n = N(be);
    uint32_t obj;
    int rc = file_at(n, path, &obj);

    return rc < 0 ? rc : tbbt__nfsq_write(&n->q, obj, len, sync ? FILE_SYNC : UNSTABLE, n->data,
                                          n->wsize);
}

static int n_trim(struct tbbt__image_be *be, const char *path, uint64_t size)
{
    struct nfs *n = N(be);
    struct tbbt__nfsq_req *r;
    uint32_t obj;
    int rc = file_at(n, path, &obj);

    if (rc < 0)
        return rc;
    r = tbbt__nfsq_req(TBBT__NFSQ_SETATTR, obj, NONE, NULL);
    r->set_size = true;
    r->offset = size;
    return tbbt__nfsq_submit(&n->q, r);
}

static int n_unlink(struct tbbt__image_be *be, const char *path)
{
    struct nfs *n = N(be);
    const char *leaf;
    uint32_t dir, obj;
    struct tbbt__nfsq_req *r;
    int rc;

    if ((rc = existing(n, path, path, &dir, &leaf, &obj)) < 0)
        return rc;
    if ((rc = tbbt__nfsq_idle(&n->q, obj)) < 0)     /* its data calls first */
        return rc;
    r = entry_req(TBBT__NFSQ_REMOVE, NONE, dir, leaf);
    tbbt__nfsq_forget(&n->q, path);
    return tbbt__nfsq_submit(&n->q, r);
}

static int n_usage(struct tbbt__image_be *be, uint64_t *capacity, uint64_t *used,
                   uint64_t *block)
{
    struct nfs *n = N(be);
    struct tbbt__nfsq_req *r;
    int rc = tbbt__nfsq_barrier(&n->q);

    if (rc < 0)
        return rc;
    r = tbbt__nfsq_req(TBBT__NFSQ_FSSTAT, 0, NONE, NULL);
    if ((rc = tbbt__nfsq_run(&n->q, r)) == 0) {
        const FSSTAT3resok *ok = &r->res.fsstat.FSSTAT3res_u.resok;
        *capacity = ok->tbytes;
        *used = ok->tbytes - MIN(ok->fbytes, ok->tbytes);
        *block = BLOCK;
    }
    tbbt__nfsq_req_free(r);
    return rc;
}

/* Every file's UNSTABLE WRITEs are followed by its COMMIT: when nothing is left, all is
 * on the server's stable storage. */
static int n_sync(struct tbbt__image_be *be)
{
    return tbbt__nfsq_barrier(&N(be)->q);
}

static int n_barrier(struct tbbt__image_be *be)
{
    return tbbt__nfsq_barrier(&N(be)->q);
}

/* ---- the root and the clones ------------------------------------------------------- */

/* Nothing may be outstanding when the namespace changes to dir (made when make). */
static int n_begin_clone(struct tbbt__image_be *be, const char *dir, bool make_it)
{
    struct nfs *n = N(be);
    struct tbbt_rpcconn_fh fh = n->root_fh;
    char *prefix;
    int rc = tbbt__nfsq_barrier(&n->q);

    if (rc < 0)
        return fail_at(n, TBBT__IMAGE_AT_PARENT, rc);
    tbbt__nfsq_ns_reset(&n->q, &n->root_fh, "");
    if (make_it) {
        struct tbbt__nfsq_req *r = NULL;
        rc = make_now(n, dir, NF3DIR, TBBT__NFSQ_MKDIR, 0755, &r);
        if (rc == 0 && !tbbt__nfsq_obj(&n->q, r->obj)->known)
            rc = tbbt__nfsq_barrier(&n->q);     /* the LOOKUP of a reply without a handle */
        if (rc == 0) {
            nfs_fh3 f;
            tbbt__nfsq_fh(&n->q, r->obj, &f);
            fh.len = f.data.data_len;
            memcpy(fh.data, f.data.data_val, f.data.data_len);
        }
        tbbt__nfsq_req_free(r);
        if (rc < 0)
            return fail_at(n, TBBT__IMAGE_AT_CREATE, rc);
    }
    prefix = strcmp(dir, ".") ? g_strconcat(dir, "/", NULL) : g_strdup("");
    tbbt__nfsq_ns_reset(&n->q, &fh, prefix);
    g_free(prefix);
    return 0;
}

static int n_end_clone(struct tbbt__image_be *be)
{
    struct nfs *n = N(be);
    int rc = tbbt__nfsq_barrier(&n->q);

    if (rc == 0)
        tbbt__nfsq_ns_reset(&n->q, &n->root_fh, "");
    return rc;
}

/* Every name in the root (READDIR): 1 if none but the marker and lost+found. */
static int n_root_empty(struct tbbt__image_be *be, bool *has_marker)
{
    struct nfs *n = N(be);
    uint64_t cookie = 0;
    uint8_t verf[NFS3_COOKIEVERFSIZE] = { 0 };
    int rc = tbbt__nfsq_barrier(&n->q), empty = 1;
    bool eof = false;

    *has_marker = false;
    while (rc == 0 && !eof) {
        struct tbbt__nfsq_req *r = tbbt__nfsq_req(TBBT__NFSQ_READDIR, 0, NONE, NULL);
        r->offset = cookie;
        memcpy(r->cookieverf, verf, sizeof(verf));
        if ((rc = run_quiet(n, r)) == 0) {
            const READDIR3resok *ok = &r->res.readdir.READDIR3res_u.resok;
            const entry3 *e = ok->reply.entries;
            eof = ok->reply.eof || !e;
            memcpy(verf, ok->cookieverf, sizeof(verf));
            for (; e; e = e->nextentry) {
                enum tbbt__image_root_name k = tbbt__image_root_name(e->name);
                cookie = e->cookie;
                *has_marker |= k == TBBT__IMAGE_ROOT_MARKER;
                if (k == TBBT__IMAGE_ROOT_OTHER)
                    empty = 0;
            }
        }
        tbbt__nfsq_req_free(r);
    }
    return rc < 0 ? rc : empty;
}

/* The marker's object: found with LOOKUP, a regular file (not followed if a symlink). */
static int marker_obj(struct nfs *n, uint32_t *obj)
{
    uint32_t type;
    int rc;

    if ((*obj = tbbt__nfsq_find(&n->q, MARKER)) == NONE &&
        (rc = lookup(n, 0, MARKER, MARKER, obj)) < 0)
        return rc;
    type = tbbt__nfsq_obj(&n->q, *obj)->type;
    return type == NF3REG ? 0 : type == NF3LNK ? -ELOOP : -EINVAL;
}

static int n_read_marker(struct tbbt__image_be *be, char **text)
{
    struct nfs *n = N(be);
    struct tbbt__nfsq_req *r;
    uint32_t obj;
    int rc = marker_obj(n, &obj);

    if (rc < 0)
        return rc;
    r = tbbt__nfsq_req(TBBT__NFSQ_READ, obj, NONE, NULL);
    r->count = 4095;
    if ((rc = run_quiet(n, r)) == 0) {
        const READ3resok *ok = &r->res.read.READ3res_u.resok;
        *text = g_strndup(ok->data.data_val, MIN(ok->data.data_len, 4095u));
    }
    tbbt__nfsq_req_free(r);
    return rc;
}

static int n_write_marker(struct tbbt__image_be *be, const char *text)
{
    struct nfs *n = N(be);
    struct tbbt__nfsq_req *r = NULL;
    int rc = make_now(n, MARKER, NF3REG, TBBT__NFSQ_CREATE, 0644, &r);

    if (rc < 0) {
        if (r)      /* made in the namespace, not on the server */
            tbbt__nfsq_forget(&n->q, MARKER);
        tbbt__nfsq_req_free(r);
        return fail_at(n, TBBT__IMAGE_AT_CREATE, rc);
    }
    /* the data: the write engine's pattern is not the text, so one WRITE of its own */
    struct tbbt__nfsq_req *w = tbbt__nfsq_req(TBBT__NFSQ_WRITE, r->obj, NONE, NULL);
    tbbt__nfsq_req_free(r);
    w->stable = FILE_SYNC;
    w->flags = TBBT__NFSQ_NOCOUNT;
    w->count = (uint32_t)strlen(text);
    w->data = text;
    if ((rc = tbbt__nfsq_run(&n->q, w)) == 0)
        rc = tbbt__nfsq_barrier(&n->q);
    tbbt__nfsq_req_free(w);
    return rc < 0 ? fail_at(n, TBBT__IMAGE_AT_WRITE, rc) : 0;
}

static int n_remove_marker(struct tbbt__image_be *be)
{
    struct nfs *n = N(be);
    struct tbbt__nfsq_req *r;
    int rc = tbbt__nfsq_barrier(&n->q);

    if (rc < 0)
        return rc;
    r = tbbt__nfsq_req(TBBT__NFSQ_REMOVE, NONE, 0, MARKER);
    rc = run_quiet(n, r);
    tbbt__nfsq_req_free(r);
    tbbt__nfsq_forget(&n->q, MARKER);
    return rc;
}

/*
 * The directory dir (relative to the root) found by LOOKUPs from the root, component
 * by component (remembered): its object, NONE when it is not there or one of its
 * components is not a directory (a symbolic link is not followed), or the fatal error.
 */
static int find_dir(struct nfs *n, const char *dir, uint32_t *out)
{
    char **v = g_strsplit(dir, "/", -1);
    GString *path = g_string_new(NULL);
    uint32_t cur = 0, next;
    int rc = 0;

    *out = NONE;
    for (guint i = 0; v[i] && rc == 0 && strcmp(dir, ".") != 0; i++) {
        g_string_append_printf(path, "%s%s", path->len ? "/" : "", v[i]);
        if ((next = tbbt__nfsq_find(&n->q, path->str)) == NONE &&
            (rc = lookup(n, cur, path->str, v[i], &next)) < 0)
            break;
        if (tbbt__nfsq_obj(&n->q, next)->type != NF3DIR)
            rc = -ENOTDIR;
        cur = next;
    }
    if (rc == 0)
        *out = cur;
    g_string_free(path, TRUE);
    g_strfreev(v);
    return n->q.fatal ? n->q.fatal : 0;
}

static int n_remove_made(struct tbbt__image_be *be, const char *path, bool dir)
{
    struct nfs *n = N(be);
    const char *slash = strrchr(path, '/');
    char *d = slash ? g_strndup(path, (gsize)(slash - path)) : g_strdup(".");
    uint32_t pdir, self;
    struct tbbt__nfsq_req *r;
    int rc = find_dir(n, d, &pdir);

    g_free(d);
    if (rc < 0 || pdir == NONE)
        return rc;          /* not reachable beneath the root: not ours to remove */
    if (dir && (self = tbbt__nfsq_find(&n->q, path)) != NONE &&
        (rc = tbbt__nfsq_idle(&n->q, self)) < 0)     /* the removals in it first */
        return rc;
    r = entry_req(dir ? TBBT__NFSQ_RMDIR : TBBT__NFSQ_REMOVE, NONE, pdir, slash ? slash + 1 : path);
    r->flags = TBBT__NFSQ_FORCE;
    tbbt__nfsq_forget(&n->q, path);
    return tbbt__nfsq_submit(&n->q, r);
}

const struct tbbt__image_backend_ops tbbt__image_nfs_ops = {
    .name = "nfs",
    .version = 1,
    .open = n_open,
    .close = n_close,
    .root_empty = n_root_empty,
    .read_marker = n_read_marker,
    .write_marker = n_write_marker,
    .remove_marker = n_remove_marker,
    .remove_made = n_remove_made,
    .begin_clone = n_begin_clone,
    .end_clone = n_end_clone,
    .barrier = n_barrier,
    .mkdir = n_mkdir,
    .create = n_create,
    .link = n_link,
    .symlink = n_symlink,
    .mkfifo = n_mkfifo,
    .set_dir_attrs = n_set_dir_attrs,
    .append = n_append,
    .trim = n_trim,
    .unlink = n_unlink,
    .usage = n_usage,
    .sync = n_sync,
};
