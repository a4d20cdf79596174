/* SPDX-License-Identifier: MIT */
/*
 * NFSv4 COMPOUND records in the namespace model: each COMPOUND is lowered to
 * the NFSv3-shaped records of what its operations did to the namespace, which
 * the identity scan and the replay of the model then take like any other
 * (RFC 7530 16 and RFC 8881 18: the current and saved filehandles, 16.2.3.1.2).
 *
 * The walk keeps the current and saved filehandle of the COMPOUND as trace
 * handle references: PUTFH sets the current one, SAVEFH and RESTOREFH copy,
 * and an operation that moves the current filehandle to another object
 * (LOOKUP, LOOKUPP, OPEN by name, CREATE) takes that object's handle from the
 * next GETFH before the current filehandle moves again (and its attributes
 * from the next GETATTR), as clients ask for it.  An operation whose current
 * object's handle is not known (a LOOKUP without a GETFH after it) is left
 * out.  Only operations with a result are lowered: a COMPOUND stops at its
 * first error, and that error is the lowered record's status (NFSv4's error
 * numbers of the Unix errors are NFSv3's).
 *
 * The pseudo file system: PUTROOTFH's object is the server's pseudo root,
 * whose handle a GETFH after it tells (and a later PUTFH of that handle is the
 * pseudo root again).  A walk of LOOKUPs from the pseudo root reaches an export:
 * "LOOKUP a; GETFH" is lowered as a MOUNT of "/a", and so is a chain without a
 * GETFH between its LOOKUPs, "LOOKUP a; LOOKUP b; GETFH" as one MOUNT of "/a/b"
 * (the pseudo directories on the way are the server's, not the export's), its
 * root the handle that the GETFH after the last LOOKUP gives (found as for every
 * LOOKUP, before the current filehandle moves again); a walk that never tells
 * its handle is left out.  The model places the exports as it places MOUNT
 * v3's mounted directories (apply-mount.c); tbbt-convert --v4-export rewrites
 * a pseudo path into the export's real path first, and the model keeps each
 * pseudo path with the object it reached for the map's "# v4-export" lines
 * (v4export.c).
 *
 * Attributes: a GETATTR's count (as the lowered record's obj_attr) only when it
 * asked for type, size, fileid, mode, owner and owner_group, which the model takes
 * as exact; the entries of the COMPOUND's first READDIR (the record's `entries`) go
 * to its lowered READDIR, and their attributes follow as GETATTRs by ID.
 *
 * Lowered records borrow the v4 record's strings; the IDs the model assigns
 * them are not copied back (NFSv4 operations carry no ID members yet).
 */
#include "ns/apply-int.h"

#include "proto/mount.h"
#include "proto/nfs3.h"
#include "proto/nfs4.h"
#include "trace/compound.h"

/*
 * A filehandle of the walk: a trace handle reference, the pseudo root, a directory of
 * the pseudo file system whose handle no GETFH told (ref: the pool ref of its pseudo
 * path, "/a/b"), or unknown.
 */
struct cfh {
    enum { FH_NONE, FH_REF, FH_ROOT, FH_PSEUDO } kind;
    uint32_t ref;
};

/* One COMPOUND's walk. */
struct lower {
    struct tbbt_ns *ns;
    const struct tbbt_trace_rec *v4;
    struct tbbt_trace_rec *low;     /* the lowered record being filled (owned by ns) */
    tbbt_ns_lowered_fn emit;
    void *arg;
    struct cfh cur, saved;
    bool entries_used;              /* the record's entries went to its first READDIR */
};

static bool is_pseudo(const struct lower *w, struct cfh f)
{
    return f.kind == FH_ROOT ||
           (f.kind == FH_REF && w->ns->v4_pseudo &&
            g_hash_table_contains(w->ns->v4_pseudo, GUINT_TO_POINTER(f.ref + 1)));
}

/* A fresh lowered record: the v4 record's header, NFSv3 procedure proc, status st. */
static struct tbbt_trace_rec *start(struct lower *w, int prog, int proc, uint32_t st)
{
    struct tbbt_trace_rec *r = w->low;
    const struct tbbt_trace_rec *v = w->v4;

    tbbt_trace_rec_clear(r);
    r->call_ns = v->call_ns;
    r->reply_ns = v->reply_ns;
    r->prog = (uint8_t)prog;
    r->proc = (uint8_t)proc;
    r->flags = (uint16_t)(v->flags & (TBBT_RF_REPLY | TBBT_RF_TCP | TBBT_RF_NO_CALL)) |
               TBBT_RF_STATUS;
    r->xid = v->xid;
    r->endpoint = v->endpoint;
    r->uid = v->uid;
    r->gid = v->gid;
    r->rpc_stat = v->rpc_stat;
    r->status = (int32_t)st;
    if (TBBT_HAS(v, TBBT_F_CRED)) {
        r->cred = v->cred;
        TBBT_SET(r, TBBT_F_CRED);
    }
    return r;
}

static void set_fh(struct tbbt_trace_rec *r, int field, uint32_t ref)
{
    if (field == TBBT_F_FH)
        r->fh = ref;
    else if (field == TBBT_F_FH2)
        r->fh2 = ref;
    else
        r->new_fh = ref;
    TBBT_SET(r, field);
}

/* Makes the object of handle ref current (have), or an object whose handle is unknown. */
static void made_current(struct lower *w, bool have, uint32_t ref)
{
    w->cur = have ? (struct cfh){FH_REF, ref} : (struct cfh){FH_NONE, 0};
}

/*
 * A GETATTR's attributes as the lowered record's obj_attr, which the model takes
 * as exact (apply.c, tbbt__ns_learn()): only when the GETATTR asked for the type,
 * size, fileid, mode, owner and owner_group; without numlinks the link count is
 * TBBT_NLINK_UNKNOWN, which the model leaves aside.
 */
static void emit_attr(struct tbbt_trace_rec *r, const struct tbbt_op4 *g)
{
    const uint64_t need = UINT64_C(1) << FATTR4_TYPE | UINT64_C(1) << FATTR4_SIZE |
                          UINT64_C(1) << FATTR4_FILEID | UINT64_C(1) << FATTR4_MODE |
                          UINT64_C(1) << FATTR4_OWNER | UINT64_C(1) << FATTR4_OWNER_GROUP;

    if (!g || !TBBT_O4_HAS(g, BITMAP) || (g->bitmap & need) != need)
        return;
    r->obj_attr = g->attr;
    if (!(g->bitmap & UINT64_C(1) << FATTR4_NUMLINKS))
        r->obj_attr.nlink = TBBT_NLINK_UNKNOWN;
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
}

/*
 * The pool ref of the pseudo path of entry name in dir (the pseudo root or a pseudo
 * directory): "/NAME" or "DIRPATH/NAME"; 0 if it would be longer than TBBT_PATH_MAX.
 */
static uint32_t pseudo_path(struct lower *w, struct cfh dir, const struct tbbt_str *name)
{
    char path[TBBT_PATH_MAX];
    uint32_t n = 0;
    const uint8_t *p;

    if (dir.kind == FH_PSEUDO) {
        p = tbbt__ns_pool_get(&w->ns->pool, dir.ref, &n);
        if (n >= sizeof(path))
            return 0;
        memcpy(path, p, n);
    }
    if (name->len > sizeof(path) - n - 1)
        return 0;
    path[n] = '/';
    memcpy(path + n + 1, name->p, name->len);
    return tbbt__ns_pool_intern(&w->ns->pool, path, n + 1 + name->len);
}

/*
 * The MOUNT of pseudo path (pool ref) whose root is handle ref: its path rewritten by
 * --v4-export (v4export.c).  Once applied (not in the identity scan, which gives no
 * IDs), the object it placed is kept for the map's "# v4-export" line.
 */
static void emit_mount(struct lower *w, uint32_t path, uint32_t ref)
{
    struct tbbt_trace_rec *r = start(w, TBBT_PROG_MNT3, MOUNTPROC3_MNT, MNT3_OK);
    GString *mnt = g_string_new(NULL);
    uint32_t len;
    const char *p = (const char *)tbbt__ns_pool_get(&w->ns->pool, path, &len);

    tbbt__ns_v4_rewrite(w->ns, p, len, mnt);
    tbbt_trace_rec_set_str(r, &r->dirpath, mnt->str, (uint32_t)mnt->len);
    g_string_free(mnt, TRUE);
    TBBT_SET(r, TBBT_F_DIRPATH);
    set_fh(r, TBBT_F_NEW_FH, ref);
    w->emit(w->arg, w->ns, r);
    if (TBBT_HAS(r, TBBT_F_ID_OBJ))
        tbbt__ns_v4_export_note(w->ns, path, (uint32_t)r->id_obj);
}

/*
 * A LOOKUP in the pseudo file system: in the pseudo root, or in a directory of it that
 * earlier LOOKUPs of the COMPOUND reached without a GETFH.  When the next GETFH tells
 * the handle it leads to, the whole walk ("/NAME", "/a/b") is one MOUNT of that path
 * whose root is that handle; else the walk goes on from the pseudo directory it names,
 * and ends with nothing lowered if no GETFH ever tells where it led.
 */
static void lower_export(struct lower *w, uint32_t i, const struct tbbt_op4 *o)
{
    const struct tbbt_op4 *a;
    uint32_t ref, path = 0;
    struct cfh dir = w->cur;
    bool have = tbbt_op4_fh_after(w->v4, i, &ref, &a);

    made_current(w, have, ref);
    if (o->status != NFS4_OK || !TBBT_O4_HAS(o, NAME) ||
        !tbbt_ns_name_ok(o->name.p, o->name.len) || !(path = pseudo_path(w, dir, &o->name)))
        return;
    if (have)
        emit_mount(w, path, ref);
    else
        w->cur = (struct cfh){FH_PSEUDO, path};
}

/*
 * An operation that names an entry of the current directory and makes the entry's
 * object current: the lowered record of NFSv3 procedure proc with the directory's
 * handle, name, and when it succeeded the object's handle and attributes (GETFH and
 * GETATTR after it); NULL when the directory's handle or the name is unknown.
 */
static struct tbbt_trace_rec *dirop(struct lower *w, uint32_t i, const struct tbbt_op4 *o,
                                    int proc, const struct tbbt_str *name)
{
    const struct tbbt_op4 *a;
    uint32_t ref;
    struct cfh dir = w->cur;
    bool have = tbbt_op4_fh_after(w->v4, i, &ref, &a);
    struct tbbt_trace_rec *r;

    made_current(w, have, ref);
    if (dir.kind != FH_REF || !name)
        return NULL;
    r = start(w, TBBT_PROG_NFS3, proc, o->status);
    set_fh(r, TBBT_F_FH, dir.ref);
    r->name = *name;
    TBBT_SET(r, TBBT_F_NAME);
    if (o->status == NFS4_OK && have)
        set_fh(r, TBBT_F_NEW_FH, ref);
    if (o->status == NFS4_OK)
        emit_attr(r, a);
    return r;
}

/* LOOKUP, LOOKUPP (name ".."), OPEN without create: an NFSv3 LOOKUP. */
static void lower_lookup(struct lower *w, uint32_t i, const struct tbbt_op4 *o,
                         const struct tbbt_str *name)
{
    struct tbbt_trace_rec *r = dirop(w, i, o, NFSPROC3_LOOKUP, name);

    if (r)
        w->emit(w->arg, w->ns, r);
}

/* OPEN with create and CREATE: NFSv3 CREATE, MKDIR, SYMLINK or MKNOD. */
static void lower_create(struct lower *w, uint32_t i, const struct tbbt_op4 *o, int proc)
{
    struct tbbt_trace_rec *r = dirop(w, i, o, proc, TBBT_O4_HAS(o, NAME) ? &o->name : NULL);

    if (!r)
        return;
    if (TBBT_O4_HAS(o, SATTR)) {
        r->sattr = o->sattr;
        TBBT_SET(r, TBBT_F_SATTR);
    }
    if (o->op == OP_OPEN) {      /* createmode4 as NFSv3's createmode3 */
        uint32_t mode = (o->how >> 4) & 0xf;
        r->createmode = mode == UNCHECKED4 ? UNCHECKED : mode == GUARDED4 ? GUARDED : EXCLUSIVE;
        TBBT_SET(r, TBBT_F_CREATEMODE);
        if (r->createmode == EXCLUSIVE && TBBT_O4_HAS(o, VERF)) {
            r->createverf = o->verf;
            TBBT_SET(r, TBBT_F_CREATEVERF);
        }
    }
    if (proc == NFSPROC3_SYMLINK && TBBT_O4_HAS(o, TARGET)) {
        r->target = o->target;
        TBBT_SET(r, TBBT_F_TARGET);
    }
    w->emit(w->arg, w->ns, r);
}

/*
 * The v4 record's entries (those of its first READDIR, decode-nfs4.c) into the
 * lowered READDIR; their names stay borrowed.
 */
static void copy_entries(struct tbbt_trace_rec *r, const struct tbbt_trace_rec *v4)
{
    for (uint32_t i = 0; i < v4->n_entries; i++)
        *tbbt_trace_rec_add_entry(r) = v4->entries[i];
    TBBT_SET(r, TBBT_F_ENTRIES);
}

/*
 * The attributes of the entries the model named (TBBT_ENT_ID) in the lowered READDIR
 * just applied, as GETATTRs by ID: NFSv3's READDIR entries have none, so the model
 * takes only an entry's handle's attributes; NFSv4's come without handles.
 */
static void entry_attrs(struct lower *w)
{
    const struct tbbt_trace_rec *v4 = w->v4;
    uint64_t *ids = g_new0(uint64_t, v4->n_entries + 1);
    uint32_t n = w->low->n_entries;

    for (uint32_t i = 0; i < n && i < v4->n_entries; i++)
        if ((w->low->entries[i].flags & TBBT_ENT_ID) && (v4->entries[i].flags & TBBT_ENT_ATTR) &&
            !(v4->entries[i].flags & TBBT_ENT_FH))
            ids[i] = w->low->entries[i].id;
    for (uint32_t i = 0; i < n && i < v4->n_entries; i++) {
        struct tbbt_trace_rec *r;

        if (!ids[i])
            continue;
        r = start(w, TBBT_PROG_NFS3, NFSPROC3_GETATTR, NFS3_OK);
        r->id = ids[i];
        TBBT_SET(r, TBBT_F_ID);
        r->obj_attr = v4->entries[i].attr;
        TBBT_SET(r, TBBT_F_OBJ_ATTR);
        w->emit(w->arg, w->ns, r);
    }
    g_free(ids);
}

/* An operation on the current object: GETATTR, SETATTR, READ, WRITE, READLINK, READDIR. */
static void lower_on_cur(struct lower *w, const struct tbbt_op4 *o, int proc)
{
    struct tbbt_trace_rec *r;

    if (w->cur.kind != FH_REF)
        return;
    r = start(w, TBBT_PROG_NFS3, proc, o->status);
    set_fh(r, TBBT_F_FH, w->cur.ref);
    if (o->status != NFS4_OK) {
        w->emit(w->arg, w->ns, r);
        return;
    }
    if (TBBT_O4_HAS(o, ATTR))
        emit_attr(r, o);
    if (TBBT_O4_HAS(o, SATTR)) {
        r->sattr = o->sattr;
        TBBT_SET(r, TBBT_F_SATTR);
    }
    if (TBBT_O4_HAS(o, OFFSET)) {
        r->offset = o->offset;
        TBBT_SET(r, TBBT_F_OFFSET);
    }
    if (TBBT_O4_HAS(o, COUNT)) {
        r->count = o->count;
        TBBT_SET(r, TBBT_F_COUNT);
    }
    if (TBBT_O4_HAS(o, RES_COUNT) && proc != NFSPROC3_READDIR) {
        r->res_count = o->res_count;
        TBBT_SET(r, TBBT_F_RES_COUNT);
    }
    if (TBBT_O4_HAS(o, TARGET)) {
        r->target = o->target;
        TBBT_SET(r, TBBT_F_TARGET);
    }
    if (proc == NFSPROC3_READDIR && !w->entries_used && TBBT_HAS(w->v4, TBBT_F_ENTRIES)) {
        copy_entries(r, w->v4);
        w->entries_used = true;
        w->emit(w->arg, w->ns, r);
        entry_attrs(w);
        return;
    }
    w->emit(w->arg, w->ns, r);
}

/* REMOVE (of a directory: RMDIR, when the model knows it is one), RENAME, LINK. */
static void lower_remove(struct lower *w, const struct tbbt_op4 *o)
{
    struct tbbt_trace_rec *r;
    uint64_t child = 0;
    int proc = NFSPROC3_REMOVE;
    uint32_t dir;

    if (w->cur.kind != FH_REF || !TBBT_O4_HAS(o, NAME))
        return;
    dir = w->ns->by_id || w->cur.ref >= w->ns->nh ? 0 : w->ns->hid[w->cur.ref];
    if ((dir && tbbt_ns_lookup(w->ns, dir, o->name.p, o->name.len, &child) == TBBT_NS_PRESENT &&
         ns_obj(w->ns, (uint32_t)child)->type == TBBT_NS_DIR) ||
        (TBBT_O4_HAS(o, STATUS) && o->status == NFS4ERR_NOTEMPTY))  /* only a directory */
        proc = NFSPROC3_RMDIR;
    r = start(w, TBBT_PROG_NFS3, proc, o->status);
    set_fh(r, TBBT_F_FH, w->cur.ref);
    r->name = o->name;
    TBBT_SET(r, TBBT_F_NAME);
    w->emit(w->arg, w->ns, r);
}

/* RENAME: the saved filehandle's directory and name to the current one's; LINK likewise. */
static void lower_two(struct lower *w, const struct tbbt_op4 *o, int proc)
{
    struct tbbt_trace_rec *r;

    if (w->cur.kind != FH_REF || w->saved.kind != FH_REF)
        return;
    r = start(w, TBBT_PROG_NFS3, proc, o->status);
    if (proc == NFSPROC3_RENAME) {
        if (!TBBT_O4_HAS(o, NAME) || !TBBT_O4_HAS(o, NAME2))
            return;
        set_fh(r, TBBT_F_FH, w->saved.ref);
        r->name = o->name;
        set_fh(r, TBBT_F_FH2, w->cur.ref);
        r->name2 = o->name2;
        TBBT_SET(r, TBBT_F_NAME);
        TBBT_SET(r, TBBT_F_NAME2);
    } else {
        if (!TBBT_O4_HAS(o, NAME))
            return;
        set_fh(r, TBBT_F_FH, w->saved.ref);         /* the object */
        set_fh(r, TBBT_F_FH2, w->cur.ref);          /* the directory */
        r->name2 = o->name;
        TBBT_SET(r, TBBT_F_NAME2);
    }
    w->emit(w->arg, w->ns, r);
}

static int create_proc(const struct tbbt_op4 *o)
{
    switch (o->ftype) {
    case NF4DIR: return NFSPROC3_MKDIR;
    case NF4LNK: return NFSPROC3_SYMLINK;
    default: return NFSPROC3_MKNOD;
    }
}

/* The NFSv3 procedure of an operation on the current object, -1 for the others. */
static int on_cur_proc(uint32_t op)
{
    switch (op) {
    case OP_GETATTR: return NFSPROC3_GETATTR;
    case OP_SETATTR: return NFSPROC3_SETATTR;
    case OP_READ: return NFSPROC3_READ;
    case OP_WRITE: return NFSPROC3_WRITE;
    case OP_READLINK: return NFSPROC3_READLINK;
    case OP_READDIR: return NFSPROC3_READDIR;
    default: return -1;
    }
}

/* Operation i, which has a result. */
static void lower_op(struct lower *w, uint32_t i)
{
    const struct tbbt_op4 *o = &w->v4->ops[i];
    static const struct tbbt_str dotdot = {"..", 2};
    uint32_t ref;
    const struct tbbt_op4 *a;

    switch (o->op) {
    case OP_PUTFH:
        w->cur = TBBT_O4_HAS(o, FH) ? (struct cfh){FH_REF, o->fh} : (struct cfh){FH_NONE, 0};
        break;
    case OP_PUTROOTFH:
        w->cur = (struct cfh){FH_ROOT, 0};
        if (tbbt_op4_fh_after(w->v4, i, &ref, &a)) {      /* the pseudo root's handle */
            if (!w->ns->v4_pseudo)
                w->ns->v4_pseudo = g_hash_table_new(g_direct_hash, g_direct_equal);
            g_hash_table_add(w->ns->v4_pseudo, GUINT_TO_POINTER(ref + 1));
            w->cur = (struct cfh){FH_REF, ref};
        }
        break;
    case OP_PUTPUBFH:
        w->cur = (struct cfh){FH_NONE, 0};
        break;
    case OP_SAVEFH:
        w->saved = w->cur;
        break;
    case OP_RESTOREFH:
        w->cur = w->saved;
        break;
    case OP_LOOKUP:
        if (is_pseudo(w, w->cur) || w->cur.kind == FH_PSEUDO)
            lower_export(w, i, o);
        else if (TBBT_O4_HAS(o, NAME))
            lower_lookup(w, i, o, &o->name);
        else
            made_current(w, false, 0);
        break;
    case OP_LOOKUPP:
        if (is_pseudo(w, w->cur) || w->cur.kind == FH_PSEUDO)
            made_current(w, false, 0);
        else
            lower_lookup(w, i, o, &dotdot);
        break;
    case OP_OPEN:
        if (!TBBT_O4_HAS(o, NAME))          /* by handle: the current object stays */
            break;
        if ((o->how & 0xf) == OPEN4_CREATE)
            lower_create(w, i, o, NFSPROC3_CREATE);
        else
            lower_lookup(w, i, o, &o->name);
        break;
    case OP_CREATE:
        lower_create(w, i, o, create_proc(o));
        break;
    case OP_REMOVE:
        lower_remove(w, o);
        break;
    case OP_RENAME:
        lower_two(w, o, NFSPROC3_RENAME);
        break;
    case OP_LINK:
        lower_two(w, o, NFSPROC3_LINK);
        break;
    default:
        if (on_cur_proc(o->op) >= 0)
            lower_on_cur(w, o, on_cur_proc(o->op));
        break;
    }
}

void tbbt_ns_v4_lower(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec,
                      tbbt_ns_lowered_fn emit, void *arg)
{
    struct lower w = {.ns = ns, .v4 = rec, .emit = emit, .arg = arg};

    if (rec->prog != TBBT_PROG_NFS4 || !TBBT_HAS(rec, TBBT_F_OPS) ||
        !(rec->flags & TBBT_RF_REPLY) || rec->rpc_stat != TBBT_RPC_SUCCESS)
        return;
    if (!ns->v4_low) {
        ns->v4_low = g_new(struct tbbt_trace_rec, 1);
        tbbt_trace_rec_init(ns->v4_low);
    }
    w.low = ns->v4_low;
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        if (!TBBT_O4_HAS(&rec->ops[i], STATUS))
            break;                          /* the COMPOUND stopped before it */
        lower_op(&w, i);
        if (rec->ops[i].status != NFS4_OK)
            break;
    }
}
