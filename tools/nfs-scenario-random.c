/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario's random operations (--ops; nfs-scenario-int.h): --inflight slots, each
 * the only user of its own directory and so with one call in flight at a time, draw
 * calls from a mix like a file server's; every reply is checked against the slot's
 * model of its directory, which the reply then updates.  The slots' calls overlap on
 * the one connection.  At the end each slot removes what it made, then its directory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nfs-scenario-int.h"

#define NFILE 8
#define NLINK 4
#define NDIR 4
#define NSYM 2
#define NNODE 2

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
    case R_GETATTR: sc_op_getattr(c, &s->r, &e->fh); break;
    case R_ACCESS: sc_op_access(c, &s->r, &e->fh); break;
    case R_COMMIT: sc_op_commit(c, &s->r, &e->fh); break;
    case R_READ:
        s->newsize = e->size ? (uint64_t)g_rand_int_range(s->rng, 0, (gint32)e->size) : 0;
        n = (uint32_t)g_rand_int_range(s->rng, 1, (gint32)s->run->max_io + 1);
        sc_op_read(c, &s->r, &e->fh, s->newsize, n);
        s->idx2 = (int)MIN((uint64_t)n, e->size - s->newsize);   /* expected count */
        break;
    case R_WRITE:
        n = (uint32_t)g_rand_int_range(s->rng, 1, (gint32)s->run->max_io + 1);
        s->newsize = (uint64_t)g_rand_int_range(s->rng, 0, FILE_SPAN - (gint32)n);
        sc_op_write(c, &s->r, &e->fh, s->newsize, s->run->buf + s->newsize, n, pick_stable(s));
        s->newsize = MAX(e->size, s->newsize + n);
        break;
    case R_SETATTR: {
        sattr3 sa = sc_sattr_none();
        s->newsize = e->size ? (uint64_t)g_rand_int_range(s->rng, 0, (gint32)e->size) : 0;
        sa.size.set_it = 1;
        sa.size.set_size3_u.size = s->newsize;
        sc_op_setattr(c, &s->r, &e->fh, &sa);
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
    case K_FILE: sc_op_create(c, &s->r, &s->dir, name, exist ? GUARDED : UNCHECKED); break;
    case K_DIR: sc_op_mkdir(c, &s->r, &s->dir, name); break;
    case K_NODE: sc_op_mknod_fifo(c, &s->r, &s->dir, name); break;
    case K_SYM: {
        char target[16];
        s->idx2 = g_rand_int_range(s->rng, 0, NFILE);
        entry_name(target, sizeof(target), K_FILE, s->idx2);
        sc_op_symlink(c, &s->r, &s->dir, name, target);
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
    sc_op_remove(c, &s->r, &s->dir, name);
    return true;
}

static bool issue_lookup(struct slot *s, struct client *c)
{
    char name[16];

    s->kind = (enum kind)g_rand_int_range(s->rng, 0, K_NKIND);
    s->idx = g_rand_int_range(s->rng, 0, kind_count[s->kind]);
    entry_name(name, sizeof(name), s->kind, s->idx);
    sc_op_lookup(c, &s->r, &s->dir, name);
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
    sc_op_rename(c, &s->r, &s->dir, from, &s->dir, to);
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
    sc_op_link(c, &s->r, &s->ent[K_FILE][s->idx2].fh, &s->dir, name);
    return true;
}

static bool issue_dir_op(struct slot *s, struct client *c, enum rop op)
{
    char name[16];

    switch (op) {
    case R_NULL: sc_op_null(c, &s->r); break;
    case R_READDIR: case R_READDIRPLUS:
        memset(s->r.verf, 0, sizeof(s->r.verf));
        sc_op_readdir(c, &s->r, &s->dir, op == R_READDIRPLUS, 0, 8192);
        break;
    case R_FSSTAT: sc_op_fsstat(c, &s->r, &s->dir); break;
    case R_FSINFO: sc_op_fsinfo(c, &s->r, &s->dir); break;
    case R_PATHCONF: sc_op_pathconf(c, &s->r, &s->dir); break;
    case R_READLINK:
        s->kind = K_SYM;
        s->idx = pick(s, K_SYM, true);
        if (s->idx < 0)
            return false;
        sc_op_readlink(c, &s->r, &s->ent[K_SYM][s->idx].fh);
        break;
    case R_RMDIR:
        s->kind = K_DIR;
        s->idx = pick(s, K_DIR, true);
        if (s->idx < 0)
            return false;
        entry_name(name, sizeof(name), K_DIR, s->idx);
        sc_op_rmdir(c, &s->r, &s->dir, name);
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
            sc_die("slot %d: %s reply carries no file handle", s->id, sc_proc_names[P_CREATE]);
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
        sc_die("slot %d: RPC failed: %s", s->id, r->err);
    if (r->status != s->want)
        sc_die("slot %d (%s): random op %d on %c%d: expected %s, got %s", s->id, s->dirname,
               (int)s->op, s->kind < K_NKIND ? kind_prefix[s->kind] : '-', s->idx,
               sc_stat3_name(s->want), sc_stat3_name(r->status));
    if (s->op == R_READ && r->count != (uint32_t)s->idx2)
        sc_die("slot %d: READ returned %u bytes, expected %d", s->id, r->count, s->idx2);
    if (s->op == R_READLINK) {
        char want[16];
        entry_name(want, sizeof(want), K_FILE, s->ent[K_SYM][s->idx].target);
        if (strcmp(r->path, want) != 0)
            sc_die("slot %d: READLINK returned '%s', expected '%s'", s->id, r->path, want);
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
            sc_op_rmdir(s->run->c, &s->r, &s->dir, name);
        else
            sc_op_remove(s->run->c, &s->r, &s->dir, name);
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
            sc_die("slot %d: RMDIR %s failed: %s", s->id, s->dirname, sc_stat3_name(r->status));
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
    sc_op_rmdir(s->run->c, &s->r, &s->run->parent, s->dirname);
}

void sc_run_random(struct client *c, const struct fh *root, const struct config *cfg)
{
    struct random_run run = { .c = c, .left = cfg->ops, .max_io = (uint32_t)cfg->max_io,
                              .no_rename_over = cfg->no_rename_over };
    struct slot *slots = g_new0(struct slot, cfg->inflight);
    char parent[64];
    struct res r = { 0 };

    g_snprintf(parent, sizeof(parent), "rnd.%d", (int)getpid());
    sc_make_dir(c, root, parent, &run.parent, "MKDIR random parent");
    run.buf = g_malloc(FILE_SPAN);
    sc_pattern(run.buf, 0, FILE_SPAN);
    for (int i = 0; i < cfg->inflight; i++) {
        struct slot *s = &slots[i];
        s->run = &run;
        s->id = i;
        s->rng = g_rand_new_with_seed((guint32)(cfg->seed * 7919 + i));
        g_snprintf(s->dirname, sizeof(s->dirname), "s%d", i);
        sc_make_dir(c, &run.parent, s->dirname, &s->dir, "MKDIR random slot");
    }
    run.active = cfg->inflight;
    for (int i = 0; i < cfg->inflight; i++) {
        slots[i].r.then = slot_next;
        slots[i].r.arg = &slots[i];
        slots[i].op = R_NOP;
        slot_next(&slots[i].r);
    }
    sc_last_activity = g_get_monotonic_time();
    while (run.active > 0) {    /* slots finish through their callbacks */
        sc_client_service(c, 100);
        if (g_get_monotonic_time() - sc_last_activity > (gint64)STALL_MS * 1000)
            sc_die("NFS server stopped answering for %d s", STALL_MS / 1000);
    }
    sc_op_rmdir(c, &r, root, parent);
    OK(c, &r, "RMDIR random parent");
    for (int i = 0; i < cfg->inflight; i++)
        g_rand_free(slots[i].rng);
    g_free(slots);
    g_free(run.buf);
}
