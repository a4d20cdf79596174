/* SPDX-License-Identifier: MIT */
/*
 * Pre-play correction (TBBT paper 3.1, Table 2) and the --check pass: see
 * correct.h.  The rules are the table `rules` below: an operation kind, the
 * status the trace recorded, the status the model predicts, and the repair,
 * one of a few primitives that insert corrective records:
 *
 *   MAKE_ABSENT   remove the name (a directory's contents first, deepest first)
 *   MAKE_PRESENT  create the name (file, directory or symlink as the record tells)
 *   EMPTY_DIR     remove every name in the directory the record names
 *   FILL_DIR      create a file in the directory the record names
 *   REPLACE       MAKE_ABSENT, then MAKE_PRESENT with the type the record needs
 *   MAKE_GONE     remove every name of the object the record names (STALE)
 *
 * docs/correction.md lists the table with the reasoning for each case.
 * Corrective records carry IDs and names but no handles (the player binds
 * IDs to handles), the endpoint and credentials of the record they repair,
 * TBBT_RF_CORRECTIVE, and a successful reply.
 */
#include "extract/correct.h"
#include "extract/correct4.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proto/nfs3.h"
#include "proto/nfs4.h"
#include "util/util.h"

/*
 * Statuses are rpcgen's nfsstat3 (NFS3_OK, NFS3ERR_*); NFSv2's nfsstat values
 * of the same names are equal (RFC 1094 2.3.1), so the rules serve both.
 */
enum {
    ST_ANY = -1,                /* in the rule table: any status but the recorded one */
};

enum repair {
    R_NONE, R_MAKE_ABSENT, R_MAKE_PRESENT, R_EMPTY_DIR, R_FILL_DIR, R_REPLACE, R_MAKE_GONE,
};

/* Which name of the record a repair works on. */
enum where { W_NAME, W_NAME2, W_NEW };   /* (fh, name), (fh2, name2), W_NEW: (fh, name) made */

struct rule {
    uint8_t op;                 /* enum tbbt_ns_op */
    int16_t recorded, predicted;
    uint8_t repair, where;
};

/*
 * The table.  The first match wins.  Operations the namespace does not decide
 * (permissions, space, verifiers) are never predicted, so they never reach it.
 */
static const struct rule rules[] = {
    /* lookups: the name came or went without the capture seeing it */
    { TBBT_NS_OP_LOOKUP, NFS3_OK, NFS3ERR_NOENT, R_MAKE_PRESENT, W_NAME },
    { TBBT_NS_OP_LOOKUP, NFS3ERR_NOENT, NFS3_OK, R_MAKE_ABSENT, W_NAME },
    /* creates: Table 2 "create, file already exists -> remove" */
    { TBBT_NS_OP_CREATE, NFS3_OK, NFS3ERR_EXIST, R_MAKE_ABSENT, W_NAME },
    { TBBT_NS_OP_MKDIR, NFS3_OK, NFS3ERR_EXIST, R_MAKE_ABSENT, W_NAME },
    { TBBT_NS_OP_SYMLINK, NFS3_OK, NFS3ERR_EXIST, R_MAKE_ABSENT, W_NAME },
    { TBBT_NS_OP_MKNOD, NFS3_OK, NFS3ERR_EXIST, R_MAKE_ABSENT, W_NAME },
    { TBBT_NS_OP_CREATE, NFS3ERR_EXIST, NFS3_OK, R_MAKE_PRESENT, W_NEW },
    { TBBT_NS_OP_MKDIR, NFS3ERR_EXIST, NFS3_OK, R_MAKE_PRESENT, W_NEW },
    { TBBT_NS_OP_SYMLINK, NFS3ERR_EXIST, NFS3_OK, R_MAKE_PRESENT, W_NEW },
    { TBBT_NS_OP_MKNOD, NFS3ERR_EXIST, NFS3_OK, R_MAKE_PRESENT, W_NEW },
    /* removes: Table 2 "remove, file does not exist -> create" */
    { TBBT_NS_OP_REMOVE, NFS3_OK, NFS3ERR_NOENT, R_MAKE_PRESENT, W_NAME },
    { TBBT_NS_OP_REMOVE, NFS3_OK, NFS3ERR_ISDIR, R_REPLACE, W_NAME },
    { TBBT_NS_OP_REMOVE, NFS3ERR_NOENT, ST_ANY, R_MAKE_ABSENT, W_NAME },
    /* rmdir: Table 2 "rmdir, directory not empty -> remove / rmdir" */
    { TBBT_NS_OP_RMDIR, NFS3_OK, NFS3ERR_NOTEMPTY, R_EMPTY_DIR, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3_OK, NFS3ERR_NOENT, R_MAKE_PRESENT, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3_OK, NFS3ERR_NOTDIR, R_REPLACE, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3ERR_NOENT, ST_ANY, R_MAKE_ABSENT, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3ERR_NOTEMPTY, NFS3_OK, R_FILL_DIR, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3ERR_NOTEMPTY, NFS3ERR_NOENT, R_FILL_DIR, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3ERR_NOTEMPTY, NFS3ERR_NOTDIR, R_FILL_DIR, W_NAME },
    { TBBT_NS_OP_RMDIR, NFS3ERR_NOTDIR, ST_ANY, R_REPLACE, W_NAME },
    /* renames: a lost create of the source, or a target in the way */
    { TBBT_NS_OP_RENAME, NFS3_OK, NFS3ERR_NOENT, R_MAKE_PRESENT, W_NAME },
    { TBBT_NS_OP_RENAME, NFS3_OK, NFS3ERR_NOTEMPTY, R_EMPTY_DIR, W_NAME2 },
    { TBBT_NS_OP_RENAME, NFS3_OK, NFS3ERR_ISDIR, R_MAKE_ABSENT, W_NAME2 },
    { TBBT_NS_OP_RENAME, NFS3_OK, NFS3ERR_NOTDIR, R_MAKE_ABSENT, W_NAME2 },
    { TBBT_NS_OP_RENAME, NFS3_OK, NFS3ERR_EXIST, R_MAKE_ABSENT, W_NAME2 },
    { TBBT_NS_OP_RENAME, NFS3ERR_NOENT, ST_ANY, R_MAKE_ABSENT, W_NAME },
    { TBBT_NS_OP_RENAME, NFS3ERR_NOTEMPTY, NFS3_OK, R_FILL_DIR, W_NAME2 },
    /* links: the new name is in the way, or was made by a lost call */
    { TBBT_NS_OP_LINK, NFS3_OK, NFS3ERR_EXIST, R_MAKE_ABSENT, W_NAME2 },
    { TBBT_NS_OP_LINK, NFS3ERR_EXIST, NFS3_OK, R_MAKE_PRESENT, W_NAME2 },
    /* an object the server no longer knows: its names went in lost calls */
    { TBBT_NS_OP_ATTR, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
    { TBBT_NS_OP_SETATTR, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
    { TBBT_NS_OP_READ, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
    { TBBT_NS_OP_WRITE, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
    { TBBT_NS_OP_READLINK, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
    { TBBT_NS_OP_READDIR, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
    { TBBT_NS_OP_READDIRPLUS, NFS3ERR_STALE, NFS3_OK, R_MAKE_GONE, W_NAME },
};

/*
 * Statuses the namespace decides (the only ones tbbt_ns_predict() gives): a
 * recorded ACCES, IO, NOSPC, ROFS, XDEV, JUKEBOX ... says nothing the model
 * can check, so such records are not compared.
 */
static bool decidable(int32_t st)
{
    return st == NFS3_OK || st == NFS3ERR_NOENT || st == NFS3ERR_EXIST ||
           st == NFS3ERR_NOTDIR || st == NFS3ERR_ISDIR || st == NFS3ERR_INVAL ||
           st == NFS3ERR_NOTEMPTY || st == NFS3ERR_STALE;
}

#define MAX_DEPTH 256           /* deepest directory tree a repair empties */

struct tbbt__corr {
    bool repair;
    uint64_t seed;
    GPtrArray *pool;            /* struct tbbt_trace_rec *, reused */
    size_t n_out;
    GHashTable *fail_kinds, *rem_kinds, *corr_kinds;   /* char * -> uint64_t * */
    struct tbbt__corr_stats st;
    /* the record being repaired */
    struct tbbt_ns *ns;
    const struct tbbt_trace_rec *rec;
    uint64_t t, lo, hi;         /* next corrective call time, and its bounds */
    bool t_set;                 /* t chosen for this record */
    uint64_t fills;             /* names made by FILL_DIR */
    bool hooked;                /* on_infer is the model's inference hook */
    bool applying;              /* emit() is applying a corrective record */
    bool repairing;             /* repair() is running */
    struct tbbt__corr4 *c4;     /* NFSv4 state lost with the capture (correct4.c) */
    const struct tbbt_trace_rec *rec4;  /* the NFSv4 record being lowered, or NULL */
    GHashTable *at4;            /* corrective record made for rec4 -> struct at4 */
};

/* Where NFSv4 finds the directory (or object) of a corrective record made by ID, found
 * when it was made, before the model moved on (correct4.h). */
struct at4 {
    bool ok;
    struct tbbt__corr4_at at;
    char *names[TBBT__CORR4_DEPTH];
};

static void free_names(char **names, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        g_free(names[i]);
}

static void at4_free(gpointer p)
{
    struct at4 *a = p;
    free_names(a->names, a->at.n);
    g_free(a);
}

static bool locate(struct tbbt__corr *k, const struct tbbt_trace_rec *low, uint64_t id,
                   struct tbbt__corr4_at *at, char **names);

/* An NFSv4 record is being lowered: where NFSv4 finds the directory (or object) id of
 * corrective record c, now. */
static void note_at4(struct tbbt__corr *k, const struct tbbt_trace_rec *c, uint64_t id)
{
    struct at4 *a = g_new0(struct at4, 1);
    a->ok = locate(k, k->rec, id, &a->at, a->names);
    g_hash_table_replace(k->at4, (gpointer)c, a);
}

struct tbbt__corr *tbbt__corr_new(bool repair, uint64_t seed)
{
    struct tbbt__corr *k = g_new0(struct tbbt__corr, 1);

    k->repair = repair;
    k->seed = seed;
    k->pool = g_ptr_array_new();
    k->fail_kinds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->rem_kinds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->corr_kinds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->c4 = tbbt__corr4_new();
    k->at4 = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, at4_free);
    return k;
}

void tbbt__corr_free(struct tbbt__corr *k)
{
    if (!k)
        return;
    for (guint i = 0; i < k->pool->len; i++) {
        tbbt_trace_rec_fini(k->pool->pdata[i]);
        g_free(k->pool->pdata[i]);
    }
    g_ptr_array_free(k->pool, TRUE);
    tbbt__corr4_free(k->c4);
    g_hash_table_destroy(k->at4);
    g_hash_table_destroy(k->fail_kinds);
    g_hash_table_destroy(k->rem_kinds);
    g_hash_table_destroy(k->corr_kinds);
    g_free(k);
}

static void count(GHashTable *h, char *key)
{
    uint64_t *v = g_hash_table_lookup(h, key);

    if (v) {
        (*v)++;
        g_free(key);
    } else {
        v = g_new(uint64_t, 1);
        *v = 1;
        g_hash_table_insert(h, key, v);
    }
}

/* "create OK->EXIST" */
static char *kind_name(const struct tbbt_trace_rec *rec, int32_t recorded, int32_t predicted)
{
    const char *p = tbbt_proc_name(rec->prog, rec->proc);
    const char *a = tbbt_status_name(rec->prog, recorded);
    const char *b = tbbt_status_name(rec->prog, predicted);
    char na[16], nb[16];

    if (!a)
        snprintf(na, sizeof(na), "%" PRId32, recorded);
    if (!b)
        snprintf(nb, sizeof(nb), "%" PRId32, predicted);
    return g_strdup_printf("%s %s->%s", p ? p : "?", a ? a : na, b ? b : nb);
}

/* splitmix64: the seeded, reproducible choice of corrective times */
static uint64_t mix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* ---- corrective records ------------------------------------------------------------ */

/* Procedure numbers of the corrective operations (RFC 1813, RFC 1094). */
static int corr_proc(int prog, enum tbbt_ns_op op)
{
    static const int v3[] = { [TBBT_NS_OP_CREATE] = 8, [TBBT_NS_OP_MKDIR] = 9,
                              [TBBT_NS_OP_SYMLINK] = 10, [TBBT_NS_OP_REMOVE] = 12,
                              [TBBT_NS_OP_RMDIR] = 13, [TBBT_NS_OP_RENAME] = 14,
                              [TBBT_NS_OP_SETATTR] = 2 };
    static const int v2[] = { [TBBT_NS_OP_CREATE] = 9, [TBBT_NS_OP_MKDIR] = 14,
                              [TBBT_NS_OP_SYMLINK] = 13, [TBBT_NS_OP_REMOVE] = 10,
                              [TBBT_NS_OP_RMDIR] = 15, [TBBT_NS_OP_RENAME] = 11,
                              [TBBT_NS_OP_SETATTR] = 2 };

    return prog == TBBT_PROG_NFS3 ? v3[op] : v2[op];
}

/* A corrective record's header: the next call time, the endpoint and credentials of the
 * record repaired, TBBT_RF_CORRECTIVE and a successful reply.  In k's pool. */
static struct tbbt_trace_rec *new_rec(struct tbbt__corr *k)
{
    const struct tbbt_trace_rec *src = k->rec;
    struct tbbt_trace_rec *c;

    if (!k->t_set) {    /* one seeded time in [prev, now] for the group, then 1 ns apart */
        uint64_t span = k->hi - k->lo;
        k->t = k->lo + (span ? mix64(k->seed ^ mix64(k->st.records)) % (span + 1) : 0);
        k->t_set = true;
    }
    if (k->n_out == k->pool->len) {
        c = g_new(struct tbbt_trace_rec, 1);
        tbbt_trace_rec_init(c);
        g_ptr_array_add(k->pool, c);
    }
    c = k->pool->pdata[k->n_out++];
    tbbt_trace_rec_clear(c);
    c->call_ns = c->reply_ns = k->t;
    if (k->t < k->hi)
        k->t++;
    c->prog = src->prog;
    c->flags = TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_CORRECTIVE | (src->flags & TBBT_RF_TCP);
    c->endpoint = src->endpoint;
    c->uid = src->uid;
    c->gid = src->gid;
    if (TBBT_HAS(src, TBBT_F_CRED)) {   /* the same credential as the record repaired */
        TBBT_SET(c, TBBT_F_CRED);
        c->cred = src->cred;
    }
    c->rpc_stat = TBBT_RPC_SUCCESS;
    c->status = NFS3_OK;
    return c;
}

/*
 * A corrective op on (dir, name), queued for writing; the caller applies it
 * (or not, when the model has already inferred it).
 */
static struct tbbt_trace_rec *build(struct tbbt__corr *k, enum tbbt_ns_op op, uint64_t dir,
                                    const void *name, size_t len)
{
    const struct tbbt_trace_rec *src = k->rec;
    struct tbbt_trace_rec *c = new_rec(k);

    c->proc = (uint8_t)corr_proc(src->prog, op);
    TBBT_SET(c, TBBT_F_ID);
    c->id = dir;
    if (k->rec4)
        note_at4(k, c, dir);
    if (name) {
        TBBT_SET(c, TBBT_F_NAME);
        tbbt_trace_rec_set_str(c, &c->name, name, (uint32_t)len);
    }
    if (op == TBBT_NS_OP_CREATE || op == TBBT_NS_OP_MKDIR || op == TBBT_NS_OP_SYMLINK) {
        TBBT_SET(c, TBBT_F_SATTR);
        c->sattr.mask = TBBT_SA_MODE;
        c->sattr.mode = op == TBBT_NS_OP_CREATE ? 0644 : op == TBBT_NS_OP_MKDIR ? 0755 : 0777;
    }
    if (op == TBBT_NS_OP_CREATE && src->prog == TBBT_PROG_NFS3) {
        TBBT_SET(c, TBBT_F_CREATEMODE);
        c->createmode = 1;      /* GUARDED: the replay must find the name free */
    }
    if (op == TBBT_NS_OP_SYMLINK) {
        TBBT_SET(c, TBBT_F_TARGET);
        tbbt_trace_rec_set_str(c, &c->target, "tbbt-corrective", 15);
    }
    k->st.corrective++;
    count(k->corr_kinds, g_strdup(tbbt_proc_name(c->prog, c->proc)));
    return c;
}

/* A corrective op on (dir, name), applied to the model and queued for writing. */
static uint64_t emit(struct tbbt__corr *k, enum tbbt_ns_op op, uint64_t dir, const void *name,
                     size_t len)
{
    struct tbbt_trace_rec *c = build(k, op, dir, name, len);

    k->applying = true;     /* what the model infers from it is this record's doing */
    tbbt_ns_apply(k->ns, c);
    k->applying = false;
    return TBBT_HAS(c, TBBT_F_ID_OBJ) ? c->id_obj : 0;
}

/*
 * The model inferred a lost call while applying the record (a name seen in a
 * directory made in the trace, a name proven absent, a directory found
 * elsewhere): the same call, as a corrective record, so that the replay
 * does what the model did.  The model has applied it already.
 */
static void on_infer(void *arg, const struct tbbt_ns_inferred *e)
{
    static const char *const what[] = { "inferred-create", "inferred-remove",
                                        "inferred-rename", "inferred-setattr" };
    struct tbbt__corr *k = arg;
    const struct tbbt_trace_rec *rec = k->rec;
    struct tbbt_trace_rec *c;
    enum tbbt_ns_op op;

    /* the --check pass (by ID, closed world) counts only attributes that differ: its
     * names are the map's, and what differs there is a status mismatch */
    if (k->applying || (tbbt_ns_by_id(k->ns) && e->kind != TBBT_NS_INFER_SETATTR))
        return;
    if (!k->repairing) {        /* else it is the repair of a failure counted already */
        k->st.failures++;
        count(k->fail_kinds, g_strdup_printf("%s %s", tbbt_proc_name(rec->prog, rec->proc),
                                             what[e->kind]));
    }
    if (!k->repair || (rec->prog != TBBT_PROG_NFS2 && rec->prog != TBBT_PROG_NFS3) ||
        (e->kind != TBBT_NS_INFER_SETATTR && !tbbt_ns_name_ok(e->name, e->len))) {
        k->st.remaining++;
        count(k->rem_kinds, g_strdup_printf("%s %s", tbbt_proc_name(rec->prog, rec->proc),
                                            what[e->kind]));
        return;
    }
    if (e->kind == TBBT_NS_INFER_SETATTR) {
        c = build(k, TBBT_NS_OP_SETATTR, e->obj, NULL, 0);
        TBBT_SET(c, TBBT_F_SATTR);
        c->sattr.mask = TBBT_SA_MODE | TBBT_SA_UID | TBBT_SA_GID;
        c->sattr.mode = e->mode;
        c->sattr.uid = e->uid;
        c->sattr.gid = e->gid;
        return;
    }
    switch (e->kind) {
    case TBBT_NS_INFER_CREATE:
        op = e->type == TBBT_NS_DIR ? TBBT_NS_OP_MKDIR
             : e->type == TBBT_NS_SYMLINK ? TBBT_NS_OP_SYMLINK : TBBT_NS_OP_CREATE;
        break;
    case TBBT_NS_INFER_REMOVE:
        op = e->type == TBBT_NS_DIR ? TBBT_NS_OP_RMDIR : TBBT_NS_OP_REMOVE;
        break;
    default:
        op = TBBT_NS_OP_RENAME;
        break;
    }
    c = build(k, op, e->dir, e->name, e->len);
    TBBT_SET(c, TBBT_F_ID_OBJ);
    c->id_obj = e->obj;
    if (op == TBBT_NS_OP_RENAME) {
        TBBT_SET(c, TBBT_F_ID2);
        c->id2 = e->dir2;
        TBBT_SET(c, TBBT_F_NAME2);
        tbbt_trace_rec_set_str(c, &c->name2, e->name2, (uint32_t)e->len2);
    }
}

static bool make_absent(struct tbbt__corr *k, uint64_t dir, const void *name, size_t len,
                        int depth);

struct kid {
    char *name;
    size_t len;
};

static void collect_kid(const void *name, size_t len, uint64_t child, void *arg)
{
    struct kid kd = { g_memdup2(name, len), len };

    (void)child;
    g_array_append_val((GArray *)arg, kd);
}

/* Removes every name in directory dir, deepest first. */
static bool empty_dir(struct tbbt__corr *k, uint64_t dir, int depth)
{
    GArray *kids = g_array_new(FALSE, FALSE, sizeof(struct kid));
    bool ok = depth < MAX_DEPTH;

    if (ok)
        tbbt_ns_each_child(k->ns, dir, collect_kid, kids);
    for (guint i = 0; i < kids->len; i++) {
        struct kid *kd = &g_array_index(kids, struct kid, i);
        if (ok)
            ok = make_absent(k, dir, kd->name, kd->len, depth + 1);
        g_free(kd->name);
    }
    g_array_free(kids, TRUE);
    return ok;
}

static bool make_absent(struct tbbt__corr *k, uint64_t dir, const void *name, size_t len,
                        int depth)
{
    struct tbbt_ns_obj_info info;
    uint64_t x;

    if (tbbt_ns_lookup(k->ns, dir, name, len, &x) != TBBT_NS_PRESENT || x == dir ||
        tbbt_ns_obj_info(k->ns, x, &info) < 0)
        return false;
    if (info.type == TBBT_NS_DIR) {
        if (info.children && !empty_dir(k, x, depth))
            return false;
        emit(k, TBBT_NS_OP_RMDIR, dir, name, len);
    } else {
        emit(k, TBBT_NS_OP_REMOVE, dir, name, len);
    }
    return true;
}

struct unnamed {
    uint64_t obj;
    int n;                      /* candidates seen */
    char name[40];
    size_t len;
};

static void find_unnamed(const void *name, size_t len, uint64_t child, void *arg)
{
    struct unnamed *u = arg;

    if (len >= sizeof(u->name) || len < 13 || memcmp(name, "tbbt-unnamed-", 13) != 0)
        return;
    u->n++;
    u->obj = child;
    memcpy(u->name, name, len);
    u->len = len;
}

static bool make_present(struct tbbt__corr *k, uint64_t dir, const void *name, size_t len,
                         enum tbbt_ns_type type);

/*
 * The one directory the model placed under a made-up name in dir (its
 * creating call was lost, only its parent was known) is the one the trace
 * now names: a corrective rename gives it that name, instead of a second
 * directory.
 */
static bool name_unnamed(struct tbbt__corr *k, uint64_t dir, const void *name, size_t len)
{
    struct unnamed u = { 0 };
    struct tbbt_ns_obj_info info;
    struct tbbt_trace_rec *c;

    tbbt_ns_each_child(k->ns, dir, find_unnamed, &u);
    if (u.n != 1 ||     /* several: no telling which one it is */ tbbt_ns_obj_info(k->ns, u.obj, &info) < 0 || info.type != TBBT_NS_DIR)
        return false;
    c = build(k, TBBT_NS_OP_RENAME, dir, u.name, u.len);
    TBBT_SET(c, TBBT_F_ID2);
    c->id2 = dir;
    TBBT_SET(c, TBBT_F_NAME2);
    tbbt_trace_rec_set_str(c, &c->name2, name, (uint32_t)len);
    k->applying = true;
    tbbt_ns_apply(k->ns, c);
    k->applying = false;
    return true;
}

static bool make_present(struct tbbt__corr *k, uint64_t dir, const void *name, size_t len,
                         enum tbbt_ns_type type)
{
    enum tbbt_ns_op op = type == TBBT_NS_DIR ? TBBT_NS_OP_MKDIR
                         : type == TBBT_NS_SYMLINK ? TBBT_NS_OP_SYMLINK : TBBT_NS_OP_CREATE;
    uint64_t x;

    if (!tbbt_ns_name_ok(name, len) ||
        tbbt_ns_lookup(k->ns, dir, name, len, &x) == TBBT_NS_PRESENT)
        return false;
    if (type == TBBT_NS_DIR && name_unnamed(k, dir, name, len))
        return true;
    return emit(k, op, dir, name, len) != 0;
}

static bool fill_dir(struct tbbt__corr *k, uint64_t dir)
{
    uint64_t x;

    for (int tries = 0; tries < 64; tries++) {
        char name[40];
        int n = snprintf(name, sizeof(name), "tbbt-fill-%" PRIu64, ++k->fills);
        if (tbbt_ns_lookup(k->ns, dir, name, (size_t)n, &x) == TBBT_NS_PRESENT)
            continue;
        return make_present(k, dir, name, (size_t)n, TBBT_NS_FILE);
    }
    return false;
}

struct obj_name {
    uint64_t dir;
    char *name;
    size_t len;
};

static void collect_name(uint64_t dir, const void *name, size_t len, void *arg)
{
    struct obj_name on = { dir, g_memdup2(name, len), len };

    g_array_append_val((GArray *)arg, on);
}

/* Removes every name of object x (a directory's contents first). */
static bool make_gone(struct tbbt__corr *k, uint64_t x)
{
    GArray *names = g_array_new(FALSE, FALSE, sizeof(struct obj_name));
    bool ok;

    tbbt_ns_each_name(k->ns, x, collect_name, names);
    /* never named: left out of the map, or removed from tbbt-gone (tbbt_ns_forget()) */
    ok = names->len > 0 || tbbt_ns_forget(k->ns, x, k->t);
    for (guint i = 0; i < names->len; i++) {
        struct obj_name *on = &g_array_index(names, struct obj_name, i);
        if (ok)
            ok = make_absent(k, on->dir, on->name, on->len, 0);
        g_free(on->name);
    }
    g_array_free(names, TRUE);
    return ok;
}

/* The type a record needs the name it works on to have. */
static enum tbbt_ns_type wanted_type(const struct tbbt_trace_rec *rec, int op)
{
    switch (op) {
    case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_RMDIR: return TBBT_NS_DIR;
    case TBBT_NS_OP_SYMLINK: return TBBT_NS_SYMLINK;
    case TBBT_NS_OP_LOOKUP:
        if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR))
            return rec->obj_attr.type == 2 ? TBBT_NS_DIR
                   : rec->obj_attr.type == 5 ? TBBT_NS_SYMLINK : TBBT_NS_FILE;
        return TBBT_NS_FILE;
    default: return TBBT_NS_FILE;
    }
}

/* Applies rule r to the record; true if the repair could be made. */
static bool repair(struct tbbt__corr *k, const struct rule *r)
{
    const struct tbbt_trace_rec *rec = k->rec;
    bool second = r->where == W_NAME2;
    const struct tbbt_str *nm = second ? &rec->name2 : &rec->name;
    uint64_t dir = tbbt_ns_rec_dir(k->ns, rec, second), x;
    enum tbbt_ns_type type = wanted_type(rec, r->op);
    struct tbbt_ns_obj_info info;
    bool present;

    if (r->repair == R_MAKE_GONE)
        return dir && make_gone(k, dir);
    if (!dir || !TBBT_HAS(rec, second ? TBBT_F_NAME2 : TBBT_F_NAME))
        return false;
    switch (r->repair) {
    case R_MAKE_ABSENT:
        return make_absent(k, dir, nm->p, nm->len, 0);
    case R_MAKE_PRESENT:
        return make_present(k, dir, nm->p, nm->len, r->op == TBBT_NS_OP_RMDIR ? TBBT_NS_DIR
                                                         : type);
    case R_REPLACE:
        /* NOTDIR recorded: a non-directory is there; else what the operation needs */
        if (rec->status == NFS3ERR_NOTDIR)
            type = TBBT_NS_FILE;
        if (tbbt_ns_lookup(k->ns, dir, nm->p, nm->len, &x) == TBBT_NS_PRESENT &&
            !make_absent(k, dir, nm->p, nm->len, 0))
            return false;
        return make_present(k, dir, nm->p, nm->len, type);
    case R_EMPTY_DIR:
        return tbbt_ns_lookup(k->ns, dir, nm->p, nm->len, &x) == TBBT_NS_PRESENT &&
               empty_dir(k, x, 0);
    case R_FILL_DIR:
        present = tbbt_ns_lookup(k->ns, dir, nm->p, nm->len, &x) == TBBT_NS_PRESENT;
        /* a non-directory under the name (made for a record that did not say) goes first */
        if (present && tbbt_ns_obj_info(k->ns, x, &info) == 0 && info.type != TBBT_NS_DIR) {
            if (!make_absent(k, dir, nm->p, nm->len, 0))
                return false;
            present = false;
        }
        if (!present && (!make_present(k, dir, nm->p, nm->len, TBBT_NS_DIR) ||
                         tbbt_ns_lookup(k->ns, dir, nm->p, nm->len, &x) != TBBT_NS_PRESENT))
            return false;
        return fill_dir(k, x);
    default:
        return false;
    }
}

static const struct rule *find_rule(int op, int32_t recorded, int32_t predicted)
{
    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++) {
        const struct rule *r = &rules[i];
        if (r->op == op && r->recorded == recorded &&
            (r->predicted == predicted || r->predicted == ST_ANY))
            return r;
    }
    return NULL;
}

/* ---- stepping ---------------------------------------------------------------------- */

/* -v: each mismatch with its record, in the text form of the trace. */
static void log_mismatch(const struct tbbt_trace_rec *rec, int32_t predicted)
{
    GString *s = g_string_new(NULL);
    const char *name = tbbt_status_name(rec->prog, predicted);

    tbbt_trace_format_rec(s, rec);
    tbbt_log(TBBT_LOG_DEBUG, "replay would give %s: %s", name ? name : "?", s->str);
    g_string_free(s, TRUE);
}

static bool changes_names(int op)
{
    return op == TBBT_NS_OP_CREATE || op == TBBT_NS_OP_MKDIR || op == TBBT_NS_OP_SYMLINK ||
           op == TBBT_NS_OP_MKNOD || op == TBBT_NS_OP_REMOVE || op == TBBT_NS_OP_RMDIR ||
           op == TBBT_NS_OP_RENAME || op == TBBT_NS_OP_LINK;
}

/*
 * A record without a recorded outcome: the replay will send it to a server in
 * the model's state, so the model takes the outcome it predicts (success when
 * it cannot tell); the record itself keeps saying "no reply".
 */
static void apply_unrecorded(struct tbbt__corr *k, struct tbbt_ns *ns,
                             struct tbbt_trace_rec *rec, int op)
{
    int32_t st = NFS3_OK;

    k->st.unchecked++;
    if (!changes_names(op) || (rec->flags & TBBT_RF_NO_CALL)) {
        tbbt_ns_apply(ns, rec);
        return;
    }
    if (!tbbt_ns_predict(ns, rec, &st))
        st = NFS3_OK;
    tbbt_ns_apply_outcome(ns, rec, st);
}

/*
 * Compares rec's recorded outcome with the prediction and repairs; rec not
 * applied yet.  Returns true if it counted a failure that is still there.
 */
static bool compare(struct tbbt__corr *k, struct tbbt_ns *ns, struct tbbt_trace_rec *rec, int op)
{
    int32_t st = 0;
    const struct rule *r;

    if (!decidable(rec->status)) {
        k->st.undecided++;
        return false;
    }
    k->st.checked++;
    if (!tbbt_ns_predict(ns, rec, &st) || st == rec->status)
        return false;
    k->st.failures++;
    count(k->fail_kinds, kind_name(rec, rec->status, st));
    if (TBBT_LOG_DEBUG <= tbbt__log_level)
        log_mismatch(rec, st);
    r = k->repair && (rec->prog == TBBT_PROG_NFS2 || rec->prog == TBBT_PROG_NFS3)
            ? find_rule(op, rec->status, st) : NULL;
    if (r) {
        k->repairing = true;
        repair(k, r);
        k->repairing = false;
    }
    if (!r || (tbbt_ns_predict(ns, rec, &st) && st != rec->status)) {
        k->st.remaining++;
        count(k->rem_kinds, kind_name(rec, rec->status, st));
        return true;
    }
    return false;
}

/*
 * A NOTEMPTY the model could not predict (a name it had never heard of) made
 * it learn that the directory exists, but not what is in it: a replay
 * against an image built from the model would find it empty.  A filler file
 * in it, written before the record, keeps the recorded outcome.
 */
static void keep_nonempty(struct tbbt__corr *k, const struct tbbt_trace_rec *rec, int op)
{
    bool second = op == TBBT_NS_OP_RENAME;
    const struct tbbt_str *nm = second ? &rec->name2 : &rec->name;
    uint64_t dir, x;
    struct tbbt_ns_obj_info info;

    if ((op != TBBT_NS_OP_RMDIR && op != TBBT_NS_OP_RENAME) ||
        !TBBT_HAS(rec, second ? TBBT_F_NAME2 : TBBT_F_NAME) ||
        !(dir = tbbt_ns_rec_dir(k->ns, rec, second)) ||
        tbbt_ns_lookup(k->ns, dir, nm->p, nm->len, &x) != TBBT_NS_PRESENT ||
        tbbt_ns_obj_info(k->ns, x, &info) < 0 || info.type != TBBT_NS_DIR || info.children)
        return;
    fill_dir(k, x);
}

/* A corrective COMPOUND for NFSv4 state lost with the capture (correct4.c). */
static void build_fix4(struct tbbt__corr *k, const struct tbbt__corr4_fix *f)
{
    struct tbbt_trace_rec *c = new_rec(k);

    c->proc = NFSPROC4_COMPOUND;
    c->status = NFS4_OK;
    tbbt__corr4_fixup(f, k->rec->minor, c);
    k->st.corrective++;
    count(k->corr_kinds, g_strdup(f->kind == TBBT__C4_FIX_OPEN      ? "v4.open"
                                  : f->kind == TBBT__C4_FIX_CONFIRM ? "v4.open_confirm"
                                                                    : "v4.reclaim_complete"));
}

/* NFSv4: stateids the record uses that the capture lost with their OPEN (correct4.c). */
static void step4(struct tbbt__corr *k, const struct tbbt_trace_rec *rec)
{
    struct tbbt__corr4_fix fix[TBBT__CORR4_FIX_MAX];
    const char *unfixed[TBBT__CORR4_FIX_MAX];
    unsigned n_unfixed;
    unsigned n = tbbt__corr4_step(k->c4, rec, fix, TBBT__CORR4_FIX_MAX, unfixed, &n_unfixed);

    for (unsigned i = 0; i < n; i++) {
        const char *kind = fix[i].kind == TBBT__C4_FIX_OPEN      ? "compound lost-open"
                           : fix[i].kind == TBBT__C4_FIX_CONFIRM ? "compound lost-open-confirm"
                                                                 : "compound lost-reclaim-complete";
        k->st.failures++;
        count(k->fail_kinds, g_strdup(kind));
        if (k->repair) {
            build_fix4(k, &fix[i]);
        } else {
            k->st.remaining++;
            count(k->rem_kinds, g_strdup(kind));
        }
    }
    for (unsigned i = 0; i < n_unfixed; i++) {
        k->st.failures++;
        k->st.remaining++;
        count(k->fail_kinds, g_strdup_printf("compound %s", unfixed[i]));
        count(k->rem_kinds, g_strdup_printf("compound %s", unfixed[i]));
    }
}

/* One NFSv2/v3/MOUNT record, or one an NFSv4 record was lowered to: predicted,
 * compared, repaired, applied. */
static void step_one(struct tbbt__corr *k, struct tbbt_ns *ns, struct tbbt_trace_rec *rec, int op)
{
    if (op == TBBT_NS_OP_NONE) {        /* NULL, MOUNT UMNT ...: nothing to compare */
        tbbt_ns_apply(ns, rec);
    } else if (!((rec->flags & TBBT_RF_REPLY) && rec->rpc_stat == TBBT_RPC_SUCCESS &&
                 (rec->flags & TBBT_RF_STATUS))) {
        apply_unrecorded(k, ns, rec, op);
    } else {
        /* may infer lost calls: on_infer() adds records, unless they are this failure */
        k->applying = compare(k, ns, rec, op);
        tbbt_ns_apply(ns, rec);
        k->applying = false;
        if (k->repair && rec->status == NFS3ERR_NOTEMPTY)
            keep_nonempty(k, rec, op);
    }
}

struct path_step {
    uint64_t dir;
    char *name;
    size_t len;
};

static void first_name(uint64_t dir, const void *name, size_t len, void *arg)
{
    struct path_step *p = arg;
    if (!p->name) {
        p->dir = dir;
        p->name = g_strndup(name, len);
        p->len = len;
    }
}

/* Where NFSv4 finds directory (or object) id: handle ref, whose object is base, then the
 * names from it down to id (allocated into names[], freed by the caller).  False if id
 * is not base or under it within TBBT__CORR4_DEPTH names. */
static bool path_from(struct tbbt__corr *k, uint64_t id, uint32_t ref, uint64_t base,
                      struct tbbt__corr4_at *at, char **names)
{
    struct path_step up[TBBT__CORR4_DEPTH];
    unsigned n = 0;
    bool ok = base != 0;

    for (uint64_t x = id; ok && x != base;) {
        struct path_step p = {0};
        if (n == TBBT__CORR4_DEPTH)
            ok = false;
        else if (tbbt_ns_each_name(k->ns, x, first_name, &p), !p.name)
            ok = false;
        else
            x = (up[n++] = p).dir;
    }
    at->base = ref;
    at->n = 0;
    for (unsigned i = n; i-- > 0;) {
        if (ok) {
            at->comp[at->n] = (struct tbbt_str){up[i].name, (uint32_t)up[i].len};
            names[at->n++] = up[i].name;
        } else {
            g_free(up[i].name);
        }
    }
    return ok;
}

/* path_from() the lowered record's directory, else its second one. */
static bool locate(struct tbbt__corr *k, const struct tbbt_trace_rec *low, uint64_t id,
                   struct tbbt__corr4_at *at, char **names)
{
    if (TBBT_HAS(low, TBBT_F_FH) &&
        path_from(k, id, low->fh, tbbt_ns_handle_obj(k->ns, low->fh), at, names))
        return true;
    return TBBT_HAS(low, TBBT_F_FH2) &&
           path_from(k, id, low->fh2, tbbt_ns_handle_obj(k->ns, low->fh2), at, names);
}

/*
 * The record at i of the records to write gives way to the n records made last (at the
 * end of them, after it), in their order; it stays in the pool, past those to write.
 */
static void splice(struct tbbt__corr *k, size_t i, size_t n)
{
    gpointer *p = k->pool->pdata, c = p[i], made[2];
    size_t end = k->n_out;

    memcpy(made, &p[end - n], n * sizeof(gpointer));
    memmove(&p[i + n], &p[i + 1], (end - n - i - 1) * sizeof(gpointer));
    memcpy(&p[i], made, n * sizeof(gpointer));
    p[end - 1] = c;
    k->n_out = end - 1;
}

/*
 * Corrective record c, the i-th to write (made by ID for the model, NFSv3-shaped; a its
 * place, found when it was made), as the NFSv4 COMPOUNDs that do the same from the
 * handles of the lowered record low (correct4.c), in its place.  Returns how many
 * records it became (2: a file made on NFSv4.0), 0 when NFSv4 cannot say it from there.
 */
static unsigned to_compound(struct tbbt__corr *k, const struct tbbt_trace_rec *low, size_t i,
                            const struct at4 *a)
{
    struct tbbt_trace_rec *c = k->pool->pdata[i];
    struct tbbt__corr4_nsop op = {0};
    char *names[TBBT__CORR4_DEPTH] = {0};

    switch (c->proc) {
    case NFSPROC3_CREATE: op.kind = TBBT__C4_CREATE; break;
    case NFSPROC3_MKDIR: op.kind = TBBT__C4_MKDIR; break;
    case NFSPROC3_SYMLINK: op.kind = TBBT__C4_SYMLINK; break;
    case NFSPROC3_REMOVE: case NFSPROC3_RMDIR: op.kind = TBBT__C4_REMOVE; break;
    case NFSPROC3_RENAME: op.kind = TBBT__C4_RENAME; break;
    case NFSPROC3_SETATTR: op.kind = TBBT__C4_SETATTR; break;
    default: return 0;
    }
    op.name = c->name;
    op.name2 = c->name2;
    op.target = c->target;
    op.sattr = c->sattr;
    op.at = a->at;
    if (op.kind == TBBT__C4_RENAME &&       /* the target directory stays: found now */
        !(TBBT_HAS(c, TBBT_F_ID2) && locate(k, low, c->id2, &op.at2, names)))
        return 0;
    unsigned n = tbbt__corr4_records(k->rec4, &op);
    struct tbbt_trace_rec *out[2] = {new_rec(k), n == 2 ? new_rec(k) : NULL};
    for (unsigned j = 0; j < n; j++) {      /* at c's time, still in call order */
        out[j]->proc = NFSPROC4_COMPOUND;
        out[j]->call_ns = out[j]->reply_ns = c->call_ns;
    }
    bool ok = tbbt__corr4_compound(k->c4, k->rec4, &op, out[0], out[1]);
    free_names(names, op.at2.n);
    if (!ok) {
        k->n_out -= n;
        return 0;
    }
    splice(k, i, n);
    if (n == 2) {
        k->st.corrective++;                 /* the second record of the same repair */
        count(k->corr_kinds, g_strdup("create"));
    }
    return n;
}

/*
 * A record an NFSv4 COMPOUND was lowered to (tbbt_ns_v4_lower()): as any other, and the
 * corrective records its repair made become NFSv4 COMPOUNDs; one NFSv4 cannot say is
 * left out, and its failure counted as remaining.
 */
static void step_lowered(void *arg, struct tbbt_ns *ns, struct tbbt_trace_rec *low)
{
    struct tbbt__corr *k = arg;
    size_t from = k->n_out;

    k->rec = low;
    step_one(k, ns, low, tbbt_ns_op(low));
    k->rec = k->rec4;       /* the COMPOUNDs' header: its endpoint and credentials */
    for (size_t i = from; i < k->n_out;) {
        struct tbbt_trace_rec *c = k->pool->pdata[i];
        const struct at4 *a = g_hash_table_lookup(k->at4, c);
        unsigned n = a && a->ok ? to_compound(k, low, i, a) : 0;
        if (n) {
            i += n;
            continue;
        }
        k->st.remaining++;
        count(k->rem_kinds, g_strdup_printf("compound %s not said in NFSv4",
                                            tbbt_proc_name(c->prog, c->proc)));
        splice(k, i, 0);
    }
    g_hash_table_remove_all(k->at4);
}

size_t tbbt__corr_step(struct tbbt__corr *k, struct tbbt_ns *ns, struct tbbt_trace_rec *rec,
                       uint64_t prev_ns, struct tbbt_trace_rec *const **out)
{
    int op = tbbt_ns_op(rec);
    uint64_t now = rec->call_ns ? rec->call_ns : rec->reply_ns;

    k->n_out = 0;
    k->st.records++;
    k->ns = ns;
    k->rec = rec;
    k->hi = now;
    k->lo = MIN(prev_ns, now);
    k->t_set = false;
    if (!k->hooked) {
        tbbt_ns_set_infer(ns, on_infer, k);
        k->hooked = true;
    }
    if (rec->prog == TBBT_PROG_NFS4) {
        step4(k, rec);
        k->rec4 = rec;
        tbbt_ns_v4_lower(ns, rec, step_lowered, k);
        k->rec4 = NULL;
    } else {
        step_one(k, ns, rec, op);
    }
    *out = (struct tbbt_trace_rec *const *)k->pool->pdata;    /* build() may have moved it */
    return k->n_out;
}

void tbbt__corr_stats(const struct tbbt__corr *k, struct tbbt__corr_stats *st)
{
    *st = k->st;
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* {kind: count} in byte order of the kinds. */
static void json_kinds(struct tbbt_json *j, const char *key, GHashTable *h)
{
    GPtrArray *keys = g_ptr_array_new();
    GHashTableIter it;
    gpointer kk, v;

    g_hash_table_iter_init(&it, h);
    while (g_hash_table_iter_next(&it, &kk, &v))
        g_ptr_array_add(keys, kk);
    g_ptr_array_sort(keys, cmp_str);
    tbbt_json_key(j, key);
    tbbt_json_begin_object(j);
    for (guint i = 0; i < keys->len; i++)
        tbbt_json_kv_uint(j, keys->pdata[i], *(uint64_t *)g_hash_table_lookup(h, keys->pdata[i]));
    tbbt_json_end_object(j);
    g_ptr_array_free(keys, TRUE);
}

void tbbt__corr_summary(const struct tbbt__corr *k, const struct tbbt__corr *check,
                        struct tbbt_json *j)
{
    uint64_t all = k->st.records + k->st.corrective;

    tbbt_json_kv_uint(j, "replay_failures", k->st.failures);
    tbbt_json_kv_uint(j, "remaining_mismatches",
                      check ? check->st.failures : k->st.remaining);
    json_kinds(j, "corrective_ops", k->corr_kinds);
    tbbt_json_key(j, "corrective_share");
    tbbt_json_double(j, all ? (double)k->st.corrective / (double)all : 0.0);
    tbbt_json_kv_uint(j, "checked_records", k->st.checked);
    tbbt_json_kv_uint(j, "unchecked_records", k->st.unchecked);
    tbbt_json_kv_uint(j, "undecided_records", k->st.undecided);
    json_kinds(j, "replay_failure_kinds", k->fail_kinds);
    json_kinds(j, "remaining_mismatch_kinds", check ? check->fail_kinds : k->rem_kinds);
}

/* ---- the --check pass -------------------------------------------------------------- */

/* The largest TBBT-ID the records of a trace carry (objects the map may leave out). */
static int trace_max_id(const char *path, uint64_t *max_id, char *errbuf, size_t errlen)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    int err = 0, rc;

    if (!(r = tbbt_trace_reader_open(path, &err))) {
        snprintf(errbuf, errlen, "cannot read trace '%s': %s", path, tbbt_strerror(err));
        return err;
    }
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1) {
        const uint64_t v[] = { rec.id, rec.id2, rec.id_obj, rec.id_old };
        static const int f[] = { TBBT_F_ID, TBBT_F_ID2, TBBT_F_ID_OBJ, TBBT_F_ID_OLD };
        for (size_t i = 0; i < G_N_ELEMENTS(f); i++)
            if (TBBT_HAS(&rec, f[i]) && v[i] > *max_id)
                *max_id = v[i];
        for (uint32_t i = 0; i < rec.n_entries; i++)
            if ((rec.entries[i].flags & TBBT_ENT_ID) && rec.entries[i].id > *max_id)
                *max_id = rec.entries[i].id;
    }
    if (rc < 0)
        snprintf(errbuf, errlen, "cannot read trace '%s': %s (at byte %" PRIu64 ")", path,
                 tbbt_strerror(rc), tbbt_trace_reader_offset(r));
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    return rc < 0 ? rc : 0;
}

int tbbt__check_run(const char *trace_path, const char *map_path, struct tbbt__corr **out,
                    char *errbuf, size_t errlen)
{
    struct tbbt_ns *ns = tbbt_ns_new();
    struct tbbt__corr *k = tbbt__corr_new(false, 0);
    struct tbbt_trace_reader *r = NULL;
    struct tbbt_trace_rec rec;
    struct tbbt_trace_rec *const *extra;
    uint64_t max_id = 0;
    int err = 0, rc;

    *out = NULL;
    tbbt_trace_rec_init(&rec);
    if ((rc = trace_max_id(trace_path, &max_id, errbuf, errlen)) < 0 ||
        (rc = tbbt_ns_load_start(ns, map_path, max_id, errbuf, errlen)) < 0)
        goto done;
    if (!(r = tbbt_trace_reader_open(trace_path, &err))) {
        snprintf(errbuf, errlen, "cannot read trace '%s': %s", trace_path, tbbt_strerror(err));
        rc = err;
        goto done;
    }
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1)
        tbbt__corr_step(k, ns, &rec, 0, &extra);
    if (rc < 0)
        snprintf(errbuf, errlen, "cannot read trace '%s': %s (at byte %" PRIu64 ")", trace_path,
                 tbbt_strerror(rc), tbbt_trace_reader_offset(r));
done:
    if (r)
        tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    tbbt_ns_free(ns);
    if (rc == 0)
        *out = k;
    else
        tbbt__corr_free(k);
    return rc;
}
