/* SPDX-License-Identifier: MIT */
/*
 * The player's start-up (TBBT paper 3.4), given the manifest of tbbt-init (loaded by
 * ns/manifest-read.c): the export's root handle (MOUNT v3 MNT, RFC 1813 Appendix I; MOUNT v1
 * MNT, RFC 1094 Appendix A) and the pipelined LOOKUPs (RFC 1813 3.3.3, RFC 1094 2.2.5)
 * that bind every TBBT-ID of the initial image to the server's handle.
 *
 * The look-up is a tree walk driven by replies: every path of the manifest is a node
 * (with the directories on the way, which may have no obj line of their own), found
 * through a hash of path -> node; a node's children hang off it in a list and are
 * queued when its handle arrives.  Only nodes with children keep their handle here
 * (the rest go straight into the handle table), so memory is O(objects) with a small
 * constant.  Lost replies and connections: with the connection's retransmission policy
 * (tbbt_rpcconn_set_retry(), the same as the replay's) a LOOKUP without a reply within
 * the timeout is sent again with the same XID, and a connection that fails is
 * reconnected and its LOOKUPs sent again with the same XIDs (tbbt_rpcconn_revive()),
 * until the policy gives up; without one, UDP retransmits and anything else is fatal.
 * What it does not do: check types (the manifest has none), retry on NFS errors.
 */
#include "player/resolve.h"
#include "player/nfsreq.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns/manifest.h"
#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "util/util.h"

#define NONE UINT32_MAX
#define DEFAULT_OUTSTANDING 64
#define DEFAULT_TIMEOUT_MS 10000
#define MOUNT_TIMEOUT_MS 10000

/* ---- paths and mount ------------------------------------------------------------------ */

/* The components of p, without empty and "." ones; NULL if one is "..". */
static GPtrArray *components(const char *p)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    char **v = g_strsplit(p, "/", -1);

    for (char **s = v; *s; s++) {
        if (!**s || strcmp(*s, ".") == 0)
            continue;
        if (strcmp(*s, "..") == 0) {
            g_ptr_array_free(a, TRUE);
            g_strfreev(v);
            return NULL;
        }
        g_ptr_array_add(a, g_strdup(*s));
    }
    g_strfreev(v);
    return a;
}

int tbbt_resolve_relpath(const char *export_path, const char *root, char **rel, char *err,
                         size_t errlen)
{
    GPtrArray *e = components(export_path), *r = components(root);
    GString *s = g_string_new(NULL);
    int rc = 0;

    if (!e || !r || (export_path[0] == '/') != (root[0] == '/') || e->len > r->len) {
        rc = -EINVAL;
    } else {
        for (guint i = 0; i < e->len && rc == 0; i++) {
            if (strcmp(e->pdata[i], r->pdata[i]) != 0)
                rc = -EINVAL;
        }
        for (guint i = e->len; i < r->len && rc == 0; i++)
            g_string_append_printf(s, "%s%s", s->len ? "/" : "", (char *)r->pdata[i]);
    }
    if (rc < 0)
        tbbt_errbuf(err, errlen, "the image root '%s' is not under the export '%s'", root,
               export_path);
    else
        *rel = g_strdup(s->str);
    g_string_free(s, TRUE);
    if (e)
        g_ptr_array_free(e, TRUE);
    if (r)
        g_ptr_array_free(r, TRUE);
    return rc;
}

/* MOUNT statuses (mountstat3; v1 uses the same errno numbers): text and errno. */
static const struct {
    int stat, err;
    const char *text;
} mount_errs[] = {
    { 1, EPERM, "not owner" }, { 2, ENOENT, "no such file or directory" },
    { 5, EIO, "I/O error" }, { 13, EACCES, "permission denied" },
    { 20, ENOTDIR, "not a directory" }, { 22, EINVAL, "invalid argument" },
    { 63, ENAMETOOLONG, "name too long" }, { 10004, EOPNOTSUPP, "operation not supported" },
    { 10006, EIO, "server fault" }, { 0, 0, NULL },
};

static int mount_refused(const char *path, int stat, char *err, size_t errlen)
{
    const char *name = tbbt_proto_status_name(TBBT_PROTO_MNT3, stat);
    int i;

    for (i = 0; mount_errs[i].text && mount_errs[i].stat != stat; i++)
        ;
    if (name)
        tbbt_errbuf(err, errlen, "MNT '%s': %s (%s)", path,
               mount_errs[i].text ? mount_errs[i].text : "refused", name);
    else
        tbbt_errbuf(err, errlen, "MNT '%s': refused with status %d", path, stat);
    return mount_errs[i].text ? -mount_errs[i].err : -EIO;
}

int tbbt_resolve_mount(struct tbbt_rpcconn *c, uint32_t nfs_vers, const char *path,
                       int timeout_ms, struct tbbt_rpcconn_fh *root, char *err, size_t errlen)
{
    struct tbbt_rpcconn_fh fh;
    int rc, mstat = 0;

    if (timeout_ms <= 0)
        timeout_ms = MOUNT_TIMEOUT_MS;
    if (nfs_vers != 2 && nfs_vers != 3) {
        tbbt_errbuf(err, errlen, "MNT '%s': NFS version %" PRIu32 " is not 2 or 3", path, nfs_vers);
        return -EINVAL;
    }
    rc = nfs_vers == 2 ? tbbt_rpcconn_mnt1(c, path, timeout_ms, &mstat, &fh)
                       : tbbt_rpcconn_mnt3(c, path, timeout_ms, &mstat, &fh);
    if (rc < 0) {
        tbbt_errbuf(err, errlen, "MNT '%s': %s", path, tbbt_rpcconn_error(c));
        return rc;
    }
    if (mstat != MNT3_OK)
        return mount_refused(path, mstat, err, errlen);
    if (fh.len == 0) {
        tbbt_errbuf(err, errlen, "MNT '%s': the server returned an empty handle", path);
        return -EPROTO;
    }
    *root = fh;
    return 0;
}

/* ---- the look-up tree ------------------------------------------------------------------ */

enum node_state { N_NEW, N_QUEUED, N_SENT, N_DONE, N_MISSING, N_FAILED };

/* One path to look up: an object of the manifest, a directory on the way, or a part of
 * the clone directory's own path (then path is relative to the export root). */
struct node {
    const char *path;           /* borrowed from the manifest or held in run.own */
    const char *name;           /* the last component, inside path */
    uint32_t parent, first_child, next_sibling;
    uint32_t fh;                /* index in run.fhs while the handle is kept, else NONE */
    uint32_t order;             /* manifest index of the first object that needs it */
    uint64_t id;                /* TBBT-ID bound here, 0 if none */
    uint8_t state;              /* enum node_state */
    bool wanted;                /* an object the caller asked for */
};

/* One LOOKUP in flight; its result storage lives here until the reply. */
struct req {
    uint32_t node;
    uint32_t xid;
    uint64_t first_ns;          /* first send */
    unsigned sends;             /* sends so far, the first included */
    unsigned timeouts, losses;  /* of them, ended by a timeout, by a lost connection */
    union tbbt_nfsreq_res res;  /* lookup3 or dirop2 (nfsreq.h decodes it) */
};

struct run {
    struct tbbt_rpcconn *c;
    const struct tbbt_manifest *m;
    const struct tbbt_resolve_opts *o;
    struct tbbt_handles *h;
    struct tbbt_resolve_stats *st;
    uint32_t vers;
    GArray *nodes;              /* struct node; node 0 is the export root */
    GHashTable *by_path;        /* path relative to the clone dir -> node index + 1 */
    GStringChunk *own;          /* paths of nodes the manifest has no line for */
    GArray *fhs;                /* struct tbbt_rpcconn_fh of nodes with children */
    GArray *ready;              /* node indices whose directory handle is known */
    guint ready_head;
    struct req *reqs;
    uint32_t *free_reqs;
    unsigned nfree, nreqs;
    uint64_t timeout_ns, retrans_ns;
    bool has_retry;             /* the connection's policy (retry) applies */
    struct tbbt_rpcconn_retry retry;
    GArray *lost;               /* struct req * lost with the connection, to send again */
    uint32_t clone_node;
    uint32_t first_bad;         /* order of the first missing or failed node, NONE */
    int fatal;                  /* the error that stops the run */
    char *err;
    size_t errlen;
    char first_err[256];        /* why the first LOOKUP failed (errors) */
    uint32_t first_err_order;
};

static inline struct node *N(struct run *r, uint32_t i)
{
    return &g_array_index(r->nodes, struct node, i);
}

static uint32_t node_add(struct run *r, uint32_t parent, const char *path, const char *name,
                         uint32_t order)
{
    struct node n = { .path = path, .name = name, .parent = parent, .first_child = NONE,
                      .next_sibling = NONE, .fh = NONE, .order = order };
    uint32_t i = r->nodes->len;
    struct node *p;

    g_array_append_val(r->nodes, n);
    p = N(r, parent);
    N(r, i)->next_sibling = p->first_child;
    p->first_child = i;
    return i;
}

/* The node of the directory path[0..len) relative to the clone dir, made if needed. */
static uint32_t dir_node(struct run *r, const char *path, size_t len, uint32_t order)
{
    char *key = g_strndup(path, len);
    gpointer v = g_hash_table_lookup(r->by_path, key);
    const char *slash, *own;
    uint32_t parent, i;

    if (v) {
        g_free(key);
        return (uint32_t)GPOINTER_TO_SIZE(v) - 1;
    }
    slash = g_strrstr_len(path, (gssize)len, "/");
    parent = slash ? dir_node(r, path, (size_t)(slash - path), order) : r->clone_node;
    own = g_string_chunk_insert(r->own, key);
    g_free(key);
    i = node_add(r, parent, own, slash ? own + (slash - path) + 1 : own, order);
    g_hash_table_insert(r->by_path, (gpointer)own, GSIZE_TO_POINTER((gsize)i + 1));
    return i;
}

/* The node of a manifest object (made with its directories if make). */
static uint32_t obj_node(struct run *r, const struct tbbt_manifest_obj *ob, uint32_t order,
                         bool make)
{
    gpointer v = g_hash_table_lookup(r->by_path, ob->path);
    const char *slash;
    uint32_t parent, i;

    if (v || !make)
        return v ? (uint32_t)GPOINTER_TO_SIZE(v) - 1 : NONE;
    slash = strrchr(ob->path, '/');
    parent = slash ? dir_node(r, ob->path, (size_t)(slash - ob->path), order) : r->clone_node;
    i = node_add(r, parent, ob->path, slash ? slash + 1 : ob->path, order);
    g_hash_table_insert(r->by_path, ob->path, GSIZE_TO_POINTER((gsize)i + 1));
    return i;
}

/* The chain export root -> root_path -> clone dir: returns the clone dir's node. */
static uint32_t chain(struct run *r, const char *clone_dir)
{
    char *full = g_strdup_printf("%s%s%s", r->o->root_path ? r->o->root_path : "",
                                 r->o->root_path && *r->o->root_path ? "/" : "", clone_dir);
    GPtrArray *comps = components(full);
    GString *p = g_string_new(NULL);
    uint32_t cur = 0;

    for (guint i = 0; comps && i < comps->len; i++) {
        g_string_append_printf(p, "%s%s", p->len ? "/" : "", (char *)comps->pdata[i]);
        const char *own = g_string_chunk_insert(r->own, p->str);
        cur = node_add(r, cur, own, own + p->len - strlen(comps->pdata[i]), 0);
    }
    g_string_free(p, TRUE);
    if (comps)
        g_ptr_array_free(comps, TRUE);
    g_free(full);
    return cur;
}

static bool wanted(const struct run *r, uint64_t id)
{
    return !r->o->want || r->o->want(id, r->o->want_arg);
}

/* Builds the tree of clone `clone`; 0 or a negative error. */
static int build(struct run *r, uint32_t clone, uint64_t root_id)
{
    const struct tbbt_manifest *m = r->m;
    struct node root = { .path = ".", .name = ".", .parent = NONE, .first_child = NONE,
                         .next_sibling = NONE, .fh = NONE, .state = N_DONE };

    g_array_append_val(r->nodes, root);
    r->clone_node = chain(r, m->clones->pdata[clone]);
    g_hash_table_insert(r->by_path, (gpointer) ".", GSIZE_TO_POINTER((gsize)r->clone_node + 1));
    N(r, r->clone_node)->id = root_id;
    N(r, r->clone_node)->wanted = root_id != 0;
    for (int pass = 0; pass < 2; pass++) {  /* wanted objects, then unwanted on the way */
        for (guint i = 0; i < m->objs->len; i++) {
            const struct tbbt_manifest_obj *ob =
                &g_array_index(m->objs, struct tbbt_manifest_obj, i);
            bool is_root = strcmp(ob->path, ".") == 0, want = is_root || wanted(r, ob->id);
            if (want != (pass == 0))
                continue;
            if (ob->id >= TBBT_HANDLES_MAX_ID) {
                tbbt_errbuf(r->err, r->errlen, "manifest object %" PRIu64 " at '%s': TBBT-ID out of "
                       "range", ob->id, ob->path);
                return TBBT_E_RANGE;
            }
            uint32_t n = obj_node(r, ob, i, pass == 0);
            if (n == NONE)
                continue;
            struct node *nd = N(r, n);
            if (!is_root && nd->id && nd->id != ob->id) {
                tbbt_errbuf(r->err, r->errlen, "manifest: objects %" PRIu64 " and %" PRIu64
                       " at one path '%s'", nd->id, ob->id, ob->path);
                return TBBT_E_SYNTAX;
            }
            nd->id = ob->id;    /* the "." line wins over root_id */
            nd->wanted |= pass == 0;
        }
    }
    return 0;
}

/* Marks object slot id failed (missing or not found) unless it is known. */
static void slot_failed(struct run *r, uint64_t id)
{
    struct tbbt_handle *s = id ? tbbt_handles_slot(r->h, id) : NULL;

    if (s && s->state != TBBT_HANDLE_KNOWN)
        s->state = TBBT_HANDLE_FAILED;
}

/* Node i has its handle: bind its ID, keep the handle for its children and queue them. */
static void node_done(struct run *r, uint32_t i, const void *fh, uint32_t len)
{
    struct node *nd = N(r, i);

    nd->state = N_DONE;
    if (nd->id && tbbt_handles_set(r->h, nd->id, fh, len))
        r->st->resolved++;
    if (nd->first_child == NONE)
        return;
    struct tbbt_rpcconn_fh f = { .len = len };
    memcpy(f.data, fh, len);
    nd->fh = r->fhs->len;
    g_array_append_val(r->fhs, f);
    for (uint32_t c = nd->first_child; c != NONE; c = N(r, c)->next_sibling) {
        N(r, c)->state = N_QUEUED;
        g_array_append_val(r->ready, c);
    }
}

/*
 * Node i was not found (failed false: NOENT) or its LOOKUP failed (why set): it and
 * everything under it is gone for this run.
 */
static void node_gone(struct run *r, uint32_t i, bool failed, const char *why)
{
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    struct node *nd = N(r, i);

    if (failed) {
        r->st->errors++;
        if (r->first_err[0] == 0 || nd->order < r->first_err_order) {
            snprintf(r->first_err, sizeof(r->first_err), "LOOKUP '%s': %s", nd->path, why);
            r->first_err_order = nd->order;
        }
    } else if (r->first_bad == NONE || nd->order < N(r, r->first_bad)->order) {
        r->first_bad = i;
    }
    nd->state = failed ? N_FAILED : N_MISSING;
    if (nd->wanted) {
        r->st->missing += !failed;
        slot_failed(r, nd->id);
    }
    for (uint32_t c = nd->first_child; c != NONE; c = N(r, c)->next_sibling)
        g_array_append_val(stack, c);
    while (stack->len) {
        uint32_t k = g_array_index(stack, uint32_t, stack->len - 1);
        g_array_set_size(stack, stack->len - 1);
        struct node *kn = N(r, k);
        kn->state = N_MISSING;
        if (kn->wanted) {
            r->st->missing++;
            slot_failed(r, kn->id);
        }
        for (uint32_t c = kn->first_child; c != NONE; c = N(r, c)->next_sibling)
            g_array_append_val(stack, c);
    }
    g_array_free(stack, TRUE);
}

/* The error that stops the run: the first one, with its reason. */
#define fatal(r, rc, ...) tbbt_errbuf_first(&(r)->fatal, (rc), (r)->err, (r)->errlen, __VA_ARGS__)

static void req_release(struct run *r, struct req *q)
{
    r->free_reqs[r->nfree++] = (uint32_t)(q - r->reqs);
}

/* Queues the LOOKUP of node i in q (again: a retransmission with q->xid). */
static int issue(struct run *r, struct req *q, bool again)
{
    struct node *nd = N(r, q->node);
    const struct tbbt_rpcconn_fh *pf = &g_array_index(r->fhs, struct tbbt_rpcconn_fh,
                                                      N(r, nd->parent)->fh);
    LOOKUP3args a3 = { .what = { .dir = { .data = { .data_len = pf->len,
                                                    .data_val = (char *)pf->data } },
                                 .name = (char *)nd->name } };
    nfs2_diropargs a2 = { .name = (char *)nd->name };
    struct tbbt_rpcconn_call call = {
        .prog = NFS3_PROGRAM, .vers = r->vers, .arg = q,
        .flags = again ? TBBT_RPCCONN_CALL_XID : 0, .xid = q->xid,
    };

    if (r->vers == 3) {
        call.proc = NFSPROC3_LOOKUP;
        call.xargs = (xdrproc_t)xdr_LOOKUP3args;
        call.args = &a3;
    } else {
        if (pf->len != NFS2_FHSIZE)
            return -EINVAL;
        memcpy(a2.dir, pf->data, NFS2_FHSIZE);
        call.proc = NFSPROC_LOOKUP;
        call.xargs = (xdrproc_t)xdr_nfs2_diropargs;
        call.args = &a2;
    }
    call.xres = tbbt_nfsreq_lookup_xres(r->vers, &call.res_size);
    call.res = &q->res;
    int rc = tbbt_rpcconn_call(r->c, &call, &q->xid);
    if (rc == 0) {
        r->st->lookups++;
        q->sends++;
        nd->state = N_SENT;
    }
    return rc;
}

/* Queues LOOKUPs while there are ready nodes and free request slots. */
static void issue_ready(struct run *r)
{
    while (!r->fatal && r->nfree && r->ready_head < r->ready->len) {
        uint32_t i = g_array_index(r->ready, uint32_t, r->ready_head++);
        struct req *q = &r->reqs[r->free_reqs[--r->nfree]];
        int rc;

        q->node = i;
        q->first_ns = tbbt_now_ns();
        q->sends = q->timeouts = q->losses = 0;
        if ((rc = issue(r, q, false)) == 0)
            continue;
        req_release(r, q);
        if (rc == -EINVAL)
            node_gone(r, i, true, r->vers == 2 ? "the directory handle is not 32 bytes"
                                               : "the call did not encode");
        else
            fatal(r, rc, "LOOKUP '%s': %s", N(r, i)->path, tbbt_rpcconn_error(r->c));
    }
}

/* The result of a LOOKUP that the server answered. */
static void on_result(struct run *r, struct req *q)
{
    uint32_t i = q->node;
    int32_t st = r->vers == 3 ? (int32_t)q->res.lookup3.status : (int32_t)q->res.dirop2.status;
    size_t size;
    xdrproc_t xres = tbbt_nfsreq_lookup_xres(r->vers, &size);

    if (st == 0) {
        uint8_t fh[TBBT_HANDLE_MAX];
        uint32_t len = tbbt_nfsreq_new_fh(r->vers, r->vers == 3 ? NFSPROC3_LOOKUP : NFSPROC_LOOKUP,
                                          &q->res, fh);
        if (len == 0)
            node_gone(r, i, true, "the server returned an empty or over-long handle");
        else
            node_done(r, i, fh, len);
    }
    xdr_free(xres, (char *)&q->res);
    if (st == 2) {      /* NFS3ERR_NOENT, NFSERR_NOENT */
        node_gone(r, i, false, NULL);
    } else if (st != 0) {
        const char *name = tbbt_proto_status_name(r->vers == 3 ? TBBT_PROTO_NFS3
                                                               : TBBT_PROTO_NFS2, st);
        char why[64];
        snprintf(why, sizeof(why), "%s", name ? name : "unknown status");
        if (!name)
            snprintf(why, sizeof(why), "status %" PRId32, st);
        node_gone(r, i, true, why);
    }
}

static bool is_udp(struct tbbt_rpcconn *c)
{
    int type = 0;
    socklen_t len = sizeof(type);

    return getsockopt(tbbt_rpcconn_fd(c), SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
           type == SOCK_DGRAM;
}

static void on_reply(struct run *r, const struct tbbt_rpcconn_reply *rep, bool udp)
{
    struct req *q = rep->arg;
    uint64_t now = tbbt_now_ns();
    char why[96];

    switch (rep->status) {
    case TBBT_RPCCONN_OK:
        on_result(r, q);
        break;
    case TBBT_RPCCONN_LOST:
        if (r->has_retry && !r->fatal &&
            tbbt_rpcconn_retry_step(&r->retry, q->timeouts, ++q->losses) ==
                TBBT_RPCCONN_RESEND) {
            g_array_append_val(r->lost, q);     /* sent again once reconnected */
            return;
        }
        fatal(r, rep->detail < 0 ? rep->detail : -ECONNRESET, "LOOKUP '%s': %s",
              N(r, q->node)->path, tbbt_rpcconn_error(r->c));
        break;
    case TBBT_RPCCONN_TIMEDOUT:
        if (r->has_retry && !r->fatal &&
            tbbt_rpcconn_retry_step(&r->retry, ++q->timeouts, q->losses) ==
                TBBT_RPCCONN_RESEND) {
            r->st->retransmits++;
            int rc = issue(r, q, true);
            if (rc == 0)
                return;
            if (rc == -EPIPE || rc == -ENOTCONN) {
                g_array_append_val(r->lost, q);
                return;
            }
            fatal(r, rc, "LOOKUP '%s': %s", N(r, q->node)->path, tbbt_rpcconn_error(r->c));
        } else if (r->has_retry) {
            fatal(r, -ETIMEDOUT, "LOOKUP '%s': no reply from the server after %u sends, "
                  "%" PRIu64 " ms each", N(r, q->node)->path, q->sends, r->timeout_ns / 1000000);
        } else if (udp && !r->fatal && now - q->first_ns < r->timeout_ns) {
            r->st->retransmits++;
            int rc = issue(r, q, true);
            if (rc == 0)
                return;         /* still ours, in flight again */
            fatal(r, rc, "LOOKUP '%s': %s", N(r, q->node)->path, tbbt_rpcconn_error(r->c));
        } else {
            fatal(r, -ETIMEDOUT, "LOOKUP '%s': no reply from the server within %" PRIu64 " ms",
                  N(r, q->node)->path, r->timeout_ns / 1000000);
        }
        break;
    default:
        node_gone(r, q->node, true, tbbt_rpcconn_reply_why(rep, why, sizeof(why)));
        break;
    }
    req_release(r, q);
}

/* Hands back everything still outstanding (after a fatal error); c is idle after it. */
static void drain(struct run *r)
{
    struct tbbt_rpcconn_reply rep[64];
    int n;

    while ((n = tbbt_rpcconn_expire(r->c, UINT64_MAX, rep, 64)) > 0) {
        for (int k = 0; k < n; k++)
            req_release(r, rep[k].arg);
    }
    while (r->nfree < r->nreqs && (n = tbbt_rpcconn_recv(r->c, rep, 64)) > 0) {
        for (int k = 0; k < n; k++) {
            struct req *q = rep[k].arg;
            if (rep[k].status == TBBT_RPCCONN_OK)
                xdr_free(r->vers == 3 ? (xdrproc_t)xdr_LOOKUP3res
                                      : (xdrproc_t)xdr_nfs2_diropres, &q->res);
            req_release(r, q);
        }
    }
}

/*
 * The connection went down (every call it held came back LOST): reconnects it under the
 * policy and sends the lost LOOKUPs again with their XIDs.  Without a policy: fatal.
 */
static void revive(struct run *r, int err)
{
    if (!r->has_retry || r->fatal) {
        if (!r->fatal)
            fatal(r, err, "NFS connection: %s", tbbt_rpcconn_error(r->c));
        return;
    }
    uint64_t since = tbbt_now_ns();
    int rc;
    while ((rc = tbbt_rpcconn_revive(r->c, &r->retry, since)) == -EAGAIN)
        g_usleep(200000);
    if (rc < 0) {
        fatal(r, rc, "NFS connection lost and not back within %d ms: %s", r->retry.dead_ms,
              tbbt_rpcconn_error(r->c));
        return;
    }
    r->st->reconnects++;
    for (guint k = 0; k < r->lost->len && !r->fatal; k++) {
        struct req *q = g_array_index(r->lost, struct req *, k);
        r->st->retransmits++;
        if ((rc = issue(r, q, true)) < 0)
            fatal(r, rc, "LOOKUP '%s': %s", N(r, q->node)->path, tbbt_rpcconn_error(r->c));
    }
    g_array_set_size(r->lost, 0);
}

/* The event loop: issue, flush, poll, receive, expire, until nothing is left. */
static void pump(struct run *r)
{
    struct tbbt_rpcconn_reply rep[64];
    bool udp = is_udp(r->c);
    uint64_t next_expire = tbbt_now_ns() + r->retrans_ns / 4;

    for (;;) {
        issue_ready(r);
        if (r->fatal || (r->nfree == r->nreqs && r->ready_head >= r->ready->len))
            break;
        int frc = tbbt_rpcconn_flush(r->c);
        struct pollfd p = { .fd = tbbt_rpcconn_fd(r->c),
                            .events = POLLIN | (frc == -EAGAIN ? POLLOUT : 0) };
        uint64_t now = tbbt_now_ns();
        int wait = next_expire > now ? (int)((next_expire - now) / 1000000) + 1 : 0;
        if (poll(&p, 1, wait) < 0 && errno != EINTR) {
            fatal(r, -errno, "poll: %s", strerror(errno));
            break;
        }
        int n;
        do {
            n = tbbt_rpcconn_recv(r->c, rep, 64);
            for (int k = 0; k < n; k++)
                on_reply(r, &rep[k], udp);
        } while (n == 64);
        if ((n < 0 || r->lost->len) && !r->fatal)
            revive(r, n < 0 ? n : -ECONNRESET);
        if ((now = tbbt_now_ns()) >= next_expire && !r->fatal) {
            uint64_t age = udp && !r->has_retry ? r->retrans_ns : r->timeout_ns;
            while (now > age && (n = tbbt_rpcconn_expire(r->c, now - age, rep, 64)) > 0) {
                for (int k = 0; k < n; k++)
                    on_reply(r, &rep[k], udp);
            }
            next_expire = now + r->retrans_ns / 4;
        }
    }
    if (r->fatal) {
        for (guint k = 0; k < r->lost->len; k++)   /* no longer the connection's */
            req_release(r, g_array_index(r->lost, struct req *, k));
        g_array_set_size(r->lost, 0);
        drain(r);
    } else {
        tbbt_rpcconn_flush(r->c);
    }
}

/* The final verdict: 0, or the error and its reason. */
static int verdict(struct run *r)
{
    const struct tbbt_resolve_stats *st = r->st;

    if (r->fatal)
        return r->fatal;
    if (st->errors) {
        tbbt_errbuf(r->err, r->errlen, "%s (%" PRIu64 " LOOKUPs failed, %" PRIu64 " of %" PRIu64
               " objects missing)", r->first_err, st->errors, st->missing, st->objects);
        return -EIO;
    }
    if (st->missing) {
        const struct node *nd = N(r, r->first_bad);
        tbbt_errbuf(r->err, r->errlen, "'%s' is missing on the server (NOENT); %" PRIu64 " of %"
               PRIu64 " objects missing", nd->path, st->missing, st->objects);
        return -ENOENT;
    }
    return 0;
}

static void run_free(struct run *r)
{
    g_array_free(r->nodes, TRUE);
    g_hash_table_destroy(r->by_path);
    g_string_chunk_free(r->own);
    g_array_free(r->fhs, TRUE);
    g_array_free(r->ready, TRUE);
    g_array_free(r->lost, TRUE);
    g_free(r->reqs);
    g_free(r->free_reqs);
}

int tbbt_resolve_run(struct tbbt_rpcconn *c, const struct tbbt_manifest *m, uint32_t clone,
                     const struct tbbt_rpcconn_fh *export_root, uint64_t root_id,
                     const struct tbbt_resolve_opts *o, struct tbbt_handles *h,
                     struct tbbt_resolve_stats *st, char *err, size_t errlen)
{
    static const struct tbbt_resolve_opts defaults;
    struct tbbt_resolve_stats local;
    struct run r = { .c = c, .m = m, .o = o ? o : &defaults, .h = h, .st = st ? st : &local,
                     .err = err, .errlen = errlen, .first_bad = NONE };
    uint64_t t0 = tbbt_now_ns(), timeout_ms, retrans_ms;
    int rc;

    memset(r.st, 0, sizeof(*r.st));
    r.vers = r.o->vers ? r.o->vers : 3;
    if (clone >= m->clones->len || (r.vers != 2 && r.vers != 3) || root_id >= TBBT_HANDLES_MAX_ID) {
        tbbt_errbuf(err, errlen, "resolve: clone %" PRIu32 " of %u, NFS version %" PRIu32
               ", root ID %" PRIu64 ": out of range", clone, m->clones->len, r.vers, root_id);
        return TBBT_E_RANGE;
    }
    r.has_retry = tbbt_rpcconn_get_retry(c, &r.retry);
    if (!tbbt_rpcconn_is_up(c) &&
        (!r.has_retry || tbbt_rpcconn_revive(c, &r.retry, 0) < 0)) {
        tbbt_errbuf(err, errlen, "resolve: the NFS connection is not up");
        return -ENOTCONN;
    }
    timeout_ms = r.has_retry ? (uint64_t)r.retry.timeout_ms
                 : r.o->timeout_ms > 0 ? (uint64_t)r.o->timeout_ms : DEFAULT_TIMEOUT_MS;
    retrans_ms = r.has_retry ? MIN(timeout_ms, 1000) : CLAMP(timeout_ms / 8, 50, 1000);
    r.timeout_ns = timeout_ms * 1000000;
    r.retrans_ns = retrans_ms * 1000000;
    r.nreqs = r.nfree = r.o->max_outstanding ? r.o->max_outstanding : DEFAULT_OUTSTANDING;
    r.reqs = g_new0(struct req, r.nreqs);
    r.free_reqs = g_new(uint32_t, r.nreqs);
    for (unsigned k = 0; k < r.nreqs; k++)
        r.free_reqs[k] = r.nreqs - 1 - k;
    r.nodes = g_array_sized_new(FALSE, FALSE, sizeof(struct node), m->objs->len + 16);
    r.by_path = g_hash_table_new(g_str_hash, g_str_equal);
    r.own = g_string_chunk_new(4096);
    r.fhs = g_array_new(FALSE, FALSE, sizeof(struct tbbt_rpcconn_fh));
    r.ready = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r.lost = g_array_new(FALSE, FALSE, sizeof(struct req *));
    if ((rc = build(&r, clone, root_id)) == 0) {
        for (guint k = 0; k < r.nodes->len; k++)
            r.st->objects += N(&r, k)->wanted;
        if (export_root->len == 0 || export_root->len > TBBT_HANDLE_MAX) {
            tbbt_errbuf(err, errlen, "resolve: the export root handle has %" PRIu32 " bytes",
                   export_root->len);
            rc = -EINVAL;
        } else {
            node_done(&r, 0, export_root->data, export_root->len);
            pump(&r);
            rc = verdict(&r);
        }
    }
    r.st->ns = tbbt_now_ns() - t0;
    run_free(&r);
    return rc;
}
