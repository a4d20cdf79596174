/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play --verify (see verify.h): the end state of the hierarchy map
 * (docs/hierarchy-map.md: final path, delete time, type) against a walk of the server's
 * tree, NFSv3 READDIRPLUS (RFC 1813 3.3.17) or NFSv2 READDIR + LOOKUP (RFC 1094 2.2.17,
 * 2.2.5), one synchronous call after another: correctness first, speed second.  Lost
 * replies and connections are handled by the connection's retransmission policy
 * (tbbt_rpcconn_set_retry(), the replay's --timeout-ms, --retrans, --retries and
 * --dead-after): a call is resent with the same XID and the connection reconnected;
 * without a policy a call waits CALL_TIMEOUT_MS and a lost connection ends the walk.
 *
 * The end state is a hash of final path -> what is expected there: an object (type,
 * TBBT-ID), a name to ignore (an unwanted object's, under spatial scale-down), or a
 * directory to walk through (unwanted, but wanted objects lie below).  The walk reads
 * the expected directories breadth first; each name found is compared and marked; what
 * stays unmarked is missing.  Memory: O(map entries) for the hash, O(widest level) for
 * the queue.
 */
#include "player/verify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ns/ns.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "util/util.h"

#define CALL_TIMEOUT_MS 30000
#define READDIR_DIRCOUNT 8192
#define READDIR_MAXCOUNT 65536
#define NFS2_READDIR_COUNT 8192
#define SIZES_PAGE_BITS 12          /* 4096 sizes, 32 KiB per page */
#define SIZES_PAGE (1u << SIZES_PAGE_BITS)

/* ---- sizes ----------------------------------------------------------------------------- */

struct tbbt_verify_sizes {
    uint64_t **pages;           /* pages[id >> 12][id & 4095] = size + 1, 0 = none */
    size_t npages;
};

struct tbbt_verify_sizes *tbbt_verify_sizes_new(void)
{
    return g_new0(struct tbbt_verify_sizes, 1);
}

void tbbt_verify_sizes_free(struct tbbt_verify_sizes *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->npages; i++)
        g_free(s->pages[i]);
    g_free(s->pages);
    g_free(s);
}

static void size_put(struct tbbt_verify_sizes *s, uint64_t id, const struct tbbt_fattr *a)
{
    size_t p = (size_t)(id >> SIZES_PAGE_BITS);

    if (a->type != 1 || id == 0 || id > UINT32_MAX || a->size == UINT64_MAX)
        return;
    if (p >= s->npages) {
        size_t n = MAX(p + 1, s->npages * 2);
        s->pages = g_renew(uint64_t *, s->pages, n);
        memset(s->pages + s->npages, 0, (n - s->npages) * sizeof(*s->pages));
        s->npages = n;
    }
    if (!s->pages[p])
        s->pages[p] = g_new0(uint64_t, SIZES_PAGE);
    s->pages[p][id & (SIZES_PAGE - 1)] = a->size + 1;
}

/* Forgets the size of id: a call that may change it has no known outcome. */
static void size_forget(struct tbbt_verify_sizes *s, uint64_t id)
{
    size_t p = (size_t)(id >> SIZES_PAGE_BITS);
    if (id <= UINT32_MAX && p < s->npages && s->pages[p])
        s->pages[p][id & (SIZES_PAGE - 1)] = 0;
}

bool tbbt_verify_sizes_get(const struct tbbt_verify_sizes *s, uint64_t id, uint64_t *size)
{
    size_t p = (size_t)(id >> SIZES_PAGE_BITS);
    uint64_t v;

    if (!s || id > UINT32_MAX || p >= s->npages || !s->pages[p])
        return false;
    if (!(v = s->pages[p][id & (SIZES_PAGE - 1)]))
        return false;
    *size = v - 1;
    return true;
}

void tbbt_verify_sizes_note(struct tbbt_verify_sizes *s, const struct tbbt_trace_rec *rec)
{
    enum tbbt_ns_op op = tbbt_ns_op(rec);

    /* A WRITE or a size SETATTR whose reply the trace lacks: the end size is unknown
     * (until later attributes tell it again). */
    if (!(rec->flags & TBBT_RF_REPLY) && TBBT_HAS(rec, TBBT_F_ID) &&
        (op == TBBT_NS_OP_WRITE ||
         (op == TBBT_NS_OP_SETATTR && TBBT_HAS(rec, TBBT_F_SATTR) &&
          (rec->sattr.mask & TBBT_SA_SIZE)))) {
        size_forget(s, rec->id);
        return;
    }
    if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR) && rec->obj_attr.type == 1) {
        switch (op) {
        case TBBT_NS_OP_LOOKUP: case TBBT_NS_OP_CREATE: case TBBT_NS_OP_MKDIR:
        case TBBT_NS_OP_SYMLINK: case TBBT_NS_OP_MKNOD:
            if (TBBT_HAS(rec, TBBT_F_ID_OBJ))
                size_put(s, rec->id_obj, &rec->obj_attr);
            break;
        case TBBT_NS_OP_ATTR: case TBBT_NS_OP_SETATTR: case TBBT_NS_OP_READ:
        case TBBT_NS_OP_WRITE: case TBBT_NS_OP_READLINK: case TBBT_NS_OP_LINK:
            if (TBBT_HAS(rec, TBBT_F_ID))
                size_put(s, rec->id, &rec->obj_attr);
            break;
        default:
            break;
        }
    }
    if (op != TBBT_NS_OP_READDIRPLUS || !TBBT_HAS(rec, TBBT_F_ENTRIES))
        return;
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        const struct tbbt_entry *e = &rec->entries[i];
        if ((e->flags & (TBBT_ENT_ATTR | TBBT_ENT_ID)) == (TBBT_ENT_ATTR | TBBT_ENT_ID))
            size_put(s, e->id, &e->attr);
    }
}

void tbbt_verify_result_fini(struct tbbt_verify_result *r)
{
    if (r->details)
        g_ptr_array_free(r->details, TRUE);
    memset(r, 0, sizeof(*r));
}

/* ---- the end state ------------------------------------------------------------------- */

enum exp_kind {
    E_EXPECT,           /* an object of the end state */
    E_IGNORE,           /* an unwanted object's name: not compared */
    E_WALK,             /* an unwanted directory with wanted objects below: read, not compared */
};

struct exp {
    const char *path;   /* final path, in vrun.paths */
    uint64_t id;
    uint8_t type;       /* enum tbbt_ns_type */
    uint8_t kind;       /* enum exp_kind */
    bool seen;
};

/* A directory to read. */
struct dir {
    char *path;         /* relative to the clone dir, "." for it */
    struct tbbt_rpcconn_fh fh;
};

/* One name of a directory page, kept past the reply's xdr_free(). */
struct ent {
    char *name;
    bool attrs, has_fh;
    uint32_t ftype;
    uint64_t size;
    struct tbbt_rpcconn_fh fh;
};

struct vrun {
    struct tbbt_rpcconn *c;
    uint32_t vers;
    const struct tbbt_verify_sizes *sizes;
    bool (*want)(uint64_t id, void *arg);
    void *want_arg;
    struct tbbt_verify_result *res;
    char *err;
    size_t errlen;
    GHashTable *exp;            /* final path -> struct exp * (owned) */
    GPtrArray *order;           /* struct exp *: the E_EXPECT entries in map order */
    GStringChunk *paths;
    GQueue dirs;                /* struct dir * to read */
    GString *tmp;
};

static const char *type_name(int t)
{
    switch (t) {
    case TBBT_NS_FILE: return "file";
    case TBBT_NS_DIR: return "directory";
    case TBBT_NS_SYMLINK: return "symlink";
    default: return "other";
    }
}

/* enum tbbt_ns_type of an ftype3 (or v2 ftype, the same numbers for reg, dir, lnk). */
static int ns_type(uint32_t ftype)
{
    switch (ftype) {
    case 1: return TBBT_NS_FILE;
    case 2: return TBBT_NS_DIR;
    case 5: return TBBT_NS_SYMLINK;
    default: return TBBT_NS_OTHER;
    }
}

static struct exp *exp_put(struct vrun *v, const char *path, size_t len, int kind, int type,
                           uint64_t id)
{
    struct exp *e = g_hash_table_lookup(v->exp, path);

    if (e) {
        if (kind == E_EXPECT && e->kind != E_EXPECT) {  /* an object wins over the rest */
            *e = (struct exp){ .path = e->path, .id = id, .type = (uint8_t)type,
                               .kind = E_EXPECT };
            g_ptr_array_add(v->order, e);
        }
        return e;
    }
    e = g_new0(struct exp, 1);
    *e = (struct exp){ .path = g_string_chunk_insert_len(v->paths, path, (gssize)len),
                       .id = id, .type = (uint8_t)type, .kind = (uint8_t)kind };
    g_hash_table_insert(v->exp, (gpointer)e->path, e);
    if (kind == E_EXPECT)
        g_ptr_array_add(v->order, e);
    return e;
}

/* The directories above every expected object are read: unwanted ones become E_WALK. */
static void add_walks(struct vrun *v)
{
    for (guint i = 0; i < v->order->len; i++) {
        const struct exp *o = v->order->pdata[i];
        char *p = g_strdup(o->path), *slash;

        while ((slash = strrchr(p, '/'))) {
            *slash = 0;
            struct exp *d = g_hash_table_lookup(v->exp, p);
            if (d && d->kind != E_IGNORE)
                break;      /* expected or walked: its own parents are done */
            if (d)
                d->kind = E_WALK, d->type = TBBT_NS_DIR;
            else
                exp_put(v, p, strlen(p), E_WALK, TBBT_NS_DIR, 0);
        }
        g_free(p);
    }
}

/* Reads the map's end state; 0 or a negative error with the reason. */
static int load_end_state(struct vrun *v, const char *map_path)
{
    struct tbbt_ns_map_entry e;
    int rc;
    struct tbbt_ns_map_reader *r = tbbt_ns_map_reader_open(map_path, &rc);

    if (!r) {
        tbbt_errbuf(v->err, v->errlen, "map '%s': %s", map_path, tbbt_strerror(rc));
        return rc;
    }
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        bool w = !v->want || v->want(e.id, v->want_arg);
        bool root = e.final_len == 1 && e.final_path[0] == '.';
        if (root)
            continue;       /* the clone directory itself */
        if (w && !e.deleted) {
            exp_put(v, e.final_path, e.final_len, E_EXPECT, e.type, e.id);
        } else if (!w) {
            exp_put(v, e.final_path, e.final_len, E_IGNORE, e.type, e.id);
            if (e.create_ns == 0 && !(e.path_len == 1 && e.path[0] == '.'))
                exp_put(v, e.path, e.path_len, E_IGNORE, e.type, e.id);
        }
    }
    if (rc < 0)
        tbbt_errbuf(v->err, v->errlen, "map '%s' line %" PRIu64 ": %s", map_path,
               tbbt_ns_map_reader_line(r), rc == TBBT_E_SYNTAX ? tbbt_ns_map_reader_error(r)
                                                               : tbbt_strerror(rc));
    tbbt_ns_map_reader_close(r);
    if (rc == 0)
        add_walks(v);
    return rc < 0 ? rc : 0;
}

/* ---- findings --------------------------------------------------------------------------- */

static void detail(struct vrun *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void detail(struct vrun *v, const char *fmt, ...)
{
    va_list ap;

    v->res->mismatches++;
    if (v->res->details->len >= TBBT_VERIFY_DETAILS)
        return;
    va_start(ap, fmt);
    g_ptr_array_add(v->res->details, g_strdup_vprintf(fmt, ap));
    va_end(ap);
}

/* path escaped as in the map, for a detail line (valid until the next call). */
static const char *esc(struct vrun *v, const char *path)
{
    g_string_truncate(v->tmp, 0);
    tbbt_ns_escape(v->tmp, path, strlen(path));
    return v->tmp->str;
}

/* tbbt-init's own names, never unexpected. */
static bool init_name(const char *dir, const char *name)
{
    if (g_str_has_prefix(name, "tbbt-syn-"))
        return true;
    return strcmp(dir, ".") == 0 &&
           (strcmp(name, ".tbbt-init") == 0 || strcmp(name, "lost+found") == 0 ||
            g_str_has_prefix(name, "tbbt-clone-"));
}

static void queue_dir(struct vrun *v, const char *path, const struct tbbt_rpcconn_fh *fh)
{
    struct dir *d = g_new(struct dir, 1);

    d->path = g_strdup(path);
    d->fh = *fh;
    g_queue_push_tail(&v->dirs, d);
}

/* One name found in directory dir with its type, size and handle: compares and queues. */
static void found(struct vrun *v, const char *dir, const struct ent *en)
{
    char *path = strcmp(dir, ".") == 0 ? g_strdup(en->name)
                                       : g_strconcat(dir, "/", en->name, NULL);
    struct exp *e = g_hash_table_lookup(v->exp, path);
    int type = ns_type(en->ftype);
    uint64_t want_size;

    if (!e) {
        if (!init_name(dir, en->name)) {
            v->res->unexpected++;
            detail(v, "unexpected: %s", esc(v, path));
        }
    } else if (e->kind == E_WALK) {
        if (type == TBBT_NS_DIR)
            queue_dir(v, path, &en->fh);
    } else if (e->kind == E_EXPECT && !e->seen) {
        e->seen = true;
        v->res->checked++;
        if (type != e->type) {
            v->res->wrong_type++;
            detail(v, "type: %s is %s, trace says %s", esc(v, path), type_name(type),
                   type_name(e->type));
        } else if (type == TBBT_NS_FILE && tbbt_verify_sizes_get(v->sizes, e->id, &want_size) &&
                   want_size != en->size) {
            v->res->wrong_size++;
            detail(v, "size: %s is %" PRIu64 ", trace says %" PRIu64, esc(v, path), en->size,
                   want_size);
        }
        if (type == TBBT_NS_DIR && e->type == TBBT_NS_DIR)
            queue_dir(v, path, &en->fh);
    }
    g_free(path);
}

/* ---- RPCs --------------------------------------------------------------------------------- */

static int nfs_failed(struct vrun *v, const char *what, const char *path, int status)
{
    const char *name = tbbt_proto_status_name(v->vers == 3 ? TBBT_PROTO_NFS3 : TBBT_PROTO_NFS2,
                                              status);

    if (name)
        tbbt_errbuf(v->err, v->errlen, "%s '%s': %s", what, path, name);
    else
        tbbt_errbuf(v->err, v->errlen, "%s '%s': status %d", what, path, status);
    return -EIO;
}

/* Statuses a look-up takes as "the entry is gone" (call()). */
enum { GONE_NOENT = 1, GONE_STALE = 2 };
_Static_assert((int)NFS3_OK == (int)NFS_OK && (int)NFS3ERR_NOENT == (int)NFSERR_NOENT &&
                   (int)NFS3ERR_STALE == (int)NFSERR_STALE,
               "NFSv2 and NFSv3 number these statuses alike");
/*
 * Every NFS result (RFC 1094 2.2, RFC 1813 3.3) is a union switched on its status:
 * rpcgen makes that enum its first member.
 */
_Static_assert(sizeof(nfsstat3) == sizeof(int) && sizeof(nfs2_stat) == sizeof(int) &&
                   offsetof(LOOKUP3res, status) == 0 && offsetof(GETATTR3res, status) == 0 &&
                   offsetof(READDIRPLUS3res, status) == 0 &&
                   offsetof(nfs2_diropres, status) == 0 && offsetof(nfs2_readdirres, status) == 0,
               "an NFS result does not start with its status");

/*
 * Calls procedure proc (arguments a, result into res, of res_size bytes, for what on
 * path).  0 with res decoded and its NFS status OK: the caller frees it with xr.  Else
 * res needs no freeing, and the result is 1 if the entry is gone (one of the GONE_*
 * statuses in gone), or a negative error with v->err set.
 */
static int call(struct vrun *v, uint32_t proc, xdrproc_t xa, const void *a, xdrproc_t xr,
                void *res, size_t res_size, const char *what, const char *path, int gone)
{
    struct tbbt_rpcconn_call c = { .prog = NFS3_PROGRAM, .vers = v->vers, .proc = proc,
                                   .xargs = xa, .args = a, .xres = xr, .res = res,
                                   .res_size = res_size };
    struct tbbt_rpcconn_reply rep;
    int rc = tbbt_rpcconn_call_sync(v->c, &c, CALL_TIMEOUT_MS, &rep);
    int status;

    v->res->calls++;
    if (rc < 0) {
        tbbt_errbuf(v->err, v->errlen, "%s '%s': %s", what, path, tbbt_rpcconn_error(v->c));
        return rc;
    }
    if (rep.status != TBBT_RPCCONN_OK) {
        char why[96];
        tbbt_errbuf(v->err, v->errlen, "%s '%s': %s", what, path,
                    tbbt_rpcconn_reply_why(&rep, why, sizeof(why)));
        return -EPROTO;
    }
    memcpy(&status, res, sizeof(status));
    if (status == NFS3_OK)
        return 0;
    xdr_free(xr, res);
    if ((status == NFS3ERR_NOENT && (gone & GONE_NOENT)) ||
        (status == NFS3ERR_STALE && (gone & GONE_STALE)))
        return 1;
    return nfs_failed(v, what, path, status);
}

static void fh_set(struct tbbt_rpcconn_fh *fh, const void *p, uint32_t len)
{
    fh->len = MIN(len, (uint32_t)sizeof(fh->data));
    memcpy(fh->data, p, fh->len);
}

/* v3: LOOKUP (then GETATTR if the reply had no attributes).  0, 1 if gone, or error. */
static int lookup3(struct vrun *v, const struct dir *d, struct ent *en)
{
    LOOKUP3args a = { .what = { .dir = { .data = { d->fh.len, (char *)d->fh.data } },
                                .name = en->name } };
    LOOKUP3res r;
    int rc = call(v, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, &a, (xdrproc_t)xdr_LOOKUP3res,
                  &r, sizeof(r), "LOOKUP", en->name, GONE_NOENT);

    if (rc != 0)
        return rc;
    LOOKUP3resok *ok = &r.LOOKUP3res_u.resok;
    fh_set(&en->fh, ok->object.data.data_val, ok->object.data.data_len);
    en->has_fh = true;
    if (ok->obj_attributes.attributes_follow) {
        en->attrs = true;
        en->ftype = ok->obj_attributes.post_op_attr_u.attributes.type;
        en->size = ok->obj_attributes.post_op_attr_u.attributes.size;
    }
    xdr_free((xdrproc_t)xdr_LOOKUP3res, &r);
    if (en->attrs)
        return 0;
    GETATTR3args ga = { .object = { .data = { en->fh.len, (char *)en->fh.data } } };
    GETATTR3res gr;
    if ((rc = call(v, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &ga,
                   (xdrproc_t)xdr_GETATTR3res, &gr, sizeof(gr), "GETATTR", en->name,
                   GONE_NOENT | GONE_STALE)) != 0)
        return rc;
    en->attrs = true;
    en->ftype = gr.GETATTR3res_u.resok.obj_attributes.type;
    en->size = gr.GETATTR3res_u.resok.obj_attributes.size;
    xdr_free((xdrproc_t)xdr_GETATTR3res, &gr);
    return 0;
}

/* v2: LOOKUP (diropres: handle and attributes).  0, 1 if gone, or error. */
static int lookup2(struct vrun *v, const struct dir *d, struct ent *en)
{
    nfs2_diropargs a = { .name = en->name };
    nfs2_diropres r;
    int rc;

    if (d->fh.len != NFS2_FHSIZE) {
        tbbt_errbuf(v->err, v->errlen, "LOOKUP in '%s': the handle is not 32 bytes", d->path);
        return -EINVAL;
    }
    memcpy(a.dir, d->fh.data, NFS2_FHSIZE);
    if ((rc = call(v, NFSPROC_LOOKUP, (xdrproc_t)xdr_nfs2_diropargs, &a,
                   (xdrproc_t)xdr_nfs2_diropres, &r, sizeof(r), "LOOKUP", en->name,
                   GONE_NOENT)) != 0)
        return rc;
    fh_set(&en->fh, r.nfs2_diropres_u.diropok.file, NFS2_FHSIZE);
    en->has_fh = en->attrs = true;
    en->ftype = r.nfs2_diropres_u.diropok.attributes.type;
    en->size = r.nfs2_diropres_u.diropok.attributes.size;
    xdr_free((xdrproc_t)xdr_nfs2_diropres, &r);
    return 0;
}

static bool dot_name(const char *n)
{
    return strcmp(n, ".") == 0 || strcmp(n, "..") == 0;
}

/* One READDIRPLUS page of d into ents; *cookie and verf advance; *eof at the end. */
static int readdirplus_page(struct vrun *v, const struct dir *d, uint64_t *cookie,
                            char verf[NFS3_COOKIEVERFSIZE], bool *eof, GArray *ents)
{
    READDIRPLUS3args a = { .dir = { .data = { d->fh.len, (char *)d->fh.data } },
                           .cookie = *cookie, .dircount = READDIR_DIRCOUNT,
                           .maxcount = READDIR_MAXCOUNT };
    READDIRPLUS3res r;
    int rc;

    memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    if ((rc = call(v, NFSPROC3_READDIRPLUS, (xdrproc_t)xdr_READDIRPLUS3args, &a,
                   (xdrproc_t)xdr_READDIRPLUS3res, &r, sizeof(r), "READDIRPLUS", d->path, 0)) < 0)
        return rc;
    READDIRPLUS3resok *ok = &r.READDIRPLUS3res_u.resok;
    memcpy(verf, ok->cookieverf, NFS3_COOKIEVERFSIZE);
    *eof = ok->reply.eof;
    for (entryplus3 *p = ok->reply.entries; p; p = p->nextentry) {
        *cookie = p->cookie;
        if (dot_name(p->name))
            continue;
        struct ent en = { .name = g_strdup(p->name) };
        if (p->name_attributes.attributes_follow) {
            en.attrs = true;
            en.ftype = p->name_attributes.post_op_attr_u.attributes.type;
            en.size = p->name_attributes.post_op_attr_u.attributes.size;
        }
        if (p->name_handle.handle_follows && p->name_handle.post_op_fh3_u.handle.data.data_len) {
            en.has_fh = true;
            fh_set(&en.fh, p->name_handle.post_op_fh3_u.handle.data.data_val,
                   p->name_handle.post_op_fh3_u.handle.data.data_len);
        }
        g_array_append_val(ents, en);
    }
    xdr_free((xdrproc_t)xdr_READDIRPLUS3res, &r);
    return 0;
}

/* One v2 READDIR page of d into ents (names only). */
static int readdir2_page(struct vrun *v, const struct dir *d, uint64_t *cookie, bool *eof,
                         GArray *ents)
{
    nfs2_readdirargs a = { .count = NFS2_READDIR_COUNT };
    nfs2_readdirres r;
    uint32_t ck = (uint32_t)*cookie;
    int rc;

    if (d->fh.len != NFS2_FHSIZE) {
        tbbt_errbuf(v->err, v->errlen, "READDIR '%s': the handle is not 32 bytes", d->path);
        return -EINVAL;
    }
    memcpy(a.dir, d->fh.data, NFS2_FHSIZE);
    memcpy(a.cookie, &ck, sizeof(ck));      /* opaque: the server's bytes as they came */
    if ((rc = call(v, NFSPROC_READDIR, (xdrproc_t)xdr_nfs2_readdirargs, &a,
                   (xdrproc_t)xdr_nfs2_readdirres, &r, sizeof(r), "READDIR", d->path, 0)) < 0)
        return rc;
    *eof = r.nfs2_readdirres_u.readdirok.eof;
    for (nfs2_entry *p = r.nfs2_readdirres_u.readdirok.entries; p; p = p->nextentry) {
        memcpy(&ck, p->cookie, sizeof(ck));
        *cookie = ck;
        if (dot_name(p->name))
            continue;
        struct ent en = { .name = g_strdup(p->name) };
        g_array_append_val(ents, en);
    }
    xdr_free((xdrproc_t)xdr_nfs2_readdirres, &r);
    return 0;
}

static void ents_clear(GArray *ents)
{
    for (guint i = 0; i < ents->len; i++)
        g_free(g_array_index(ents, struct ent, i).name);
    g_array_set_size(ents, 0);
}

/* Reads directory d to its end, comparing each name. */
static int read_dir(struct vrun *v, const struct dir *d)
{
    GArray *ents = g_array_new(FALSE, TRUE, sizeof(struct ent));
    char verf[NFS3_COOKIEVERFSIZE] = { 0 };
    uint64_t cookie = 0;
    bool eof = false;
    int rc = 0;

    v->res->dirs++;
    while (rc == 0 && !eof) {
        uint64_t before = cookie;
        rc = v->vers == 3 ? readdirplus_page(v, d, &cookie, verf, &eof, ents)
                          : readdir2_page(v, d, &cookie, &eof, ents);
        if (rc == 0 && !eof && cookie == before) {
            tbbt_errbuf(v->err, v->errlen, "READDIR '%s': no progress (cookie %" PRIu64 ")",
                   d->path, cookie);
            rc = -EPROTO;
        }
        for (guint i = 0; rc == 0 && i < ents->len; i++) {
            struct ent *en = &g_array_index(ents, struct ent, i);
            int lr = 0;
            if (!en->attrs || !en->has_fh)
                lr = v->vers == 3 ? lookup3(v, d, en) : lookup2(v, d, en);
            if (lr < 0)
                rc = lr;
            else if (lr == 0)
                found(v, d->path, en);
        }
        ents_clear(ents);
    }
    g_array_free(ents, TRUE);
    return rc;
}

static void dir_free(gpointer p)
{
    struct dir *d = p;

    g_free(d->path);
    g_free(d);
}

int tbbt_verify_run(struct tbbt_rpcconn *c, uint32_t vers,
                    const struct tbbt_rpcconn_fh *clone_root, const char *map_path,
                    const struct tbbt_verify_sizes *s, bool (*want)(uint64_t id, void *arg),
                    void *want_arg, struct tbbt_verify_result *res, char *err, size_t errlen)
{
    struct vrun v = { .c = c, .vers = vers, .sizes = s, .want = want, .want_arg = want_arg,
                      .res = res, .err = err, .errlen = errlen };
    int rc;

    memset(res, 0, sizeof(*res));
    res->details = g_ptr_array_new_with_free_func(g_free);
    if (vers != 2 && vers != 3) {
        tbbt_errbuf(err, errlen, "verify: NFS version %" PRIu32 " is not 2 or 3", vers);
        return -EINVAL;
    }
    v.exp = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    v.order = g_ptr_array_new();
    v.paths = g_string_chunk_new(64 * 1024);
    v.tmp = g_string_new(NULL);
    g_queue_init(&v.dirs);
    if ((rc = load_end_state(&v, map_path)) == 0) {
        queue_dir(&v, ".", clone_root);
        struct dir *d;
        while (rc == 0 && (d = g_queue_pop_head(&v.dirs))) {
            rc = read_dir(&v, d);
            dir_free(d);
        }
    }
    if (rc == 0) {
        for (guint i = 0; i < v.order->len; i++) {
            const struct exp *e = v.order->pdata[i];
            if (e->kind == E_EXPECT && !e->seen) {
                res->missing++;
                detail(&v, "missing: %s", esc(&v, e->path));
            }
        }
        res->ok = res->mismatches == 0;
    }
    g_queue_clear_full(&v.dirs, dir_free);
    g_hash_table_destroy(v.exp);
    g_ptr_array_free(v.order, TRUE);
    g_string_chunk_free(v.paths);
    g_string_free(v.tmp, TRUE);
    return rc;
}
