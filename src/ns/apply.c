/* SPDX-License-Identifier: MIT */
/*
 * Trace records -> namespace model (TBBT paper 3.1: TBBT-IDs, and the third
 * pass of section 4 that infers the IDs of removed and replaced objects;
 * 3.2: every successful or failed directory operation may tell a parent/child
 * relationship).  NFSv2 (RFC 1094) and NFSv3 (RFC 1813) procedures map to
 * one set of operation kinds; MOUNT MNT (RFC 1813 Appendix I) gives the
 * export root.
 *
 * What a reply proves: a success, its effect; NOENT, that (dir, name) is
 * absent; EXIST and NOTEMPTY, that it is present.  Records without a usable
 * reply only get IDs (and the IDs the model predicts for remove, rmdir and
 * rename).  Attributes, whatever the status, tell type, link count, identity
 * (fsid, fileid) and the size at trace start: the earliest size seen before
 * the first operation that may change it (pre-operation attributes of that
 * operation count; see docs/hierarchy-map.md).
 */
#include "ns/ns-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/*
 * Statuses and create modes are rpcgen's (nfs3.x); NFSv2's nfsstat values of
 * the same names are equal (RFC 1094 2.3.1), so they serve both versions.
 */
#include "proto/nfs3.h"

/* The operation kind: the catalogue's (trace/opkind.h). */
int tbbt__ns_op(const struct tbbt_trace_rec *rec)
{
    return (int)tbbt_ns_op(rec);
}

/* Operations whose obj_attr/new_fh describe the named object, not fh. */
static bool names_new_object(int op)
{
    return op == NS_OP_LOOKUP || op == NS_OP_CREATE || op == NS_OP_MKDIR ||
           op == NS_OP_SYMLINK || op == NS_OP_MKNOD;
}

int tbbt__ns_ftype(uint32_t ftype)
{
    switch (ftype) {
    case 1: return TBBT_NS_FILE;
    case 2: return TBBT_NS_DIR;
    case 5: return TBBT_NS_SYMLINK;
    case 3: case 4: case 6: case 7: return TBBT_NS_OTHER;
    default: return TBBT_NS_UNKNOWN;
    }
}

/* ---- identity scan ------------------------------------------------------------------ */

/* "." (n 1) or ".." (n 2). */
static bool is_dots(const struct tbbt_str *s, size_t n)
{
    return s->len == n && memcmp(s->p, "..", n) == 0;
}

/* The first (directory handle, name) that named handle ref, and its type. */
static void scan_hint(struct tbbt_ns *ns, uint32_t ref, uint32_t dir, const struct tbbt_str *name,
                      const struct tbbt_fattr *a)
{
    tbbt__ns_handle_reserve(ns, ref);
    tbbt__ns_handle_reserve(ns, dir);
    if (a && !ns->htype[ref])
        ns->htype[ref] = (uint8_t)tbbt__ns_ftype(a->type);
    if (ref == dir)
        return;
    if (name->len == 2 && name->p[0] == '.' && name->p[1] == '.') {
        /* "..": ref is dir's parent; no name (unless one came already) */
        if (!ns->hdir[dir])
            ns->hdir[dir] = ref + 1;
        return;
    }
    if ((ns->hdir[ref] && ns->hname[ref]) || !tbbt_ns_name_ok(name->p, name->len))
        return;
    ns->hdir[ref] = dir + 1;
    ns->hname[ref] = tbbt__ns_pool_intern(&ns->pool, name->p, name->len);
}

static void scan_pair(struct tbbt_ns *ns, uint32_t ref, const struct tbbt_fattr *a)
{
    const struct ns_key *e;

    tbbt__ns_handle_reserve(ns, ref);
    if (!ns->hkey[ref]) {
        ns->hkey[ref] = tbbt__ns_key_intern(ns, a->fsid, a->fileid);
        return;
    }
    e = ns_key(ns, ns->hkey[ref]);
    if (e->fsid != a->fsid || e->fileid != a->fileid)
        ns->st.key_conflicts++;
}

/*
 * Normalizes a MOUNT path into out: its components joined by '/', without empty and "."
 * ones.  False for a path with ".." or a component that cannot be a name.
 */
static bool mount_path(const struct tbbt_str *p, GString *out)
{
    g_string_truncate(out, 0);
    for (uint32_t i = 0; i < p->len;) {
        uint32_t j = i;
        while (j < p->len && p->p[j] != '/')
            j++;
        size_t n = j - i;
        if (n && !(n == 1 && p->p[i] == '.')) {
            if (!tbbt_ns_name_ok(p->p + i, n))
                return false;
            if (out->len)
                g_string_append_c(out, '/');
            g_string_append_len(out, p->p + i, (gssize)n);
        }
        i = j + 1;
    }
    return true;
}

/* A successful MNT: remembers (path, handle) once. */
static void scan_mount(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec)
{
    GString *path;
    struct ns_mount m;

    if (!(rec->flags & TBBT_RF_STATUS) || rec->status != 0 || !TBBT_HAS(rec, TBBT_F_NEW_FH) ||
        !TBBT_HAS(rec, TBBT_F_DIRPATH))
        return;
    path = g_string_new(NULL);
    if (!mount_path(&rec->dirpath, path) || path->len > 0xffff) {
        ns->st.hostile_names++;
        g_string_free(path, TRUE);
        return;
    }
    m.fh = rec->new_fh;
    m.path = tbbt__ns_pool_intern(&ns->pool, path->str, path->len);
    g_string_free(path, TRUE);
    if (!ns->mounts)
        ns->mounts = g_array_new(FALSE, FALSE, sizeof(struct ns_mount));
    for (guint i = 0; i < ns->mounts->len; i++) {
        const struct ns_mount *k = &g_array_index(ns->mounts, struct ns_mount, i);
        if (k->fh == m.fh && k->path == m.path)
            return;
    }
    g_array_append_val(ns->mounts, m);
    ns->st.mounts++;
}

void tbbt_ns_ident_scan(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec)
{
    int op = tbbt__ns_op(rec);

    if (op == NS_OP_NONE)
        return;
    if (op == NS_OP_MNT)
        scan_mount(ns, rec);
    if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR)) {
        if (names_new_object(op) && TBBT_HAS(rec, TBBT_F_NEW_FH))
            scan_pair(ns, rec->new_fh, &rec->obj_attr);
        else if (!names_new_object(op) && TBBT_HAS(rec, TBBT_F_FH))
            scan_pair(ns, rec->fh, &rec->obj_attr);
    }
    if (names_new_object(op) && TBBT_HAS(rec, TBBT_F_NEW_FH) && TBBT_HAS(rec, TBBT_F_FH) &&
        TBBT_HAS(rec, TBBT_F_NAME))
        scan_hint(ns, rec->new_fh, rec->fh, &rec->name,
                  TBBT_HAS(rec, TBBT_F_OBJ_ATTR) ? &rec->obj_attr : NULL);
    if (TBBT_HAS(rec, TBBT_F_FH) && TBBT_HAS(rec, TBBT_F_DIR_ATTR))
        scan_pair(ns, rec->fh, &rec->dir_attr);
    if (TBBT_HAS(rec, TBBT_F_FH2) && TBBT_HAS(rec, TBBT_F_DIR2_ATTR))
        scan_pair(ns, rec->fh2, &rec->dir2_attr);
    if (!TBBT_HAS(rec, TBBT_F_ENTRIES))
        return;
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        const struct tbbt_entry *e = &rec->entries[i];
        if ((e->flags & TBBT_ENT_FH) && (e->flags & TBBT_ENT_ATTR))
            scan_pair(ns, e->fh, &e->attr);
        if ((e->flags & TBBT_ENT_FH) && TBBT_HAS(rec, TBBT_F_FH))
            scan_hint(ns, e->fh, rec->fh, &e->name, e->flags & TBBT_ENT_ATTR ? &e->attr : NULL);
        else if (TBBT_HAS(rec, TBBT_F_FH) && TBBT_HAS(rec, TBBT_F_DIR_ATTR) &&
                 is_dots(&e->name, 2)) {
            /* a READDIR's "..": the parent by fileid only (resolve_placed() finds it) */
            tbbt__ns_handle_reserve(ns, rec->fh);
            if (!ns->hpkey[rec->fh])
                ns->hpkey[rec->fh] = tbbt__ns_key_intern(ns, rec->dir_attr.fsid, e->fileid);
        }
    }
}

/* ---- replay context ------------------------------------------------------------------ */

struct ctx {
    struct tbbt_ns *ns;
    struct tbbt_trace_rec *rec;
    uint64_t t;         /* event time: call time, made monotonic, >= 1 */
    int op;
    bool replied;       /* an NFS/MOUNT status is known */
    bool ok;
    int32_t status;
    uint32_t dir, dir2; /* objects of fh and fh2, 0 if none */
};

static void set_id(struct tbbt_trace_rec *rec, int field, uint32_t id)
{
    if (!id)
        return;
    TBBT_SET(rec, field);
    switch (field) {
    case TBBT_F_ID: rec->id = id; break;
    case TBBT_F_ID2: rec->id2 = id; break;
    case TBBT_F_ID_OBJ: rec->id_obj = id; break;
    default: rec->id_old = id; break;
    }
}

/* The pool ref of a name that may be a component; 0 (counted) if it cannot be one. */
static uint32_t comp(struct ctx *c, const struct tbbt_str *s)
{
    if (!tbbt_ns_name_ok(s->p, s->len)) {
        c->ns->st.hostile_names++;
        return 0;
    }
    return tbbt__ns_pool_intern(&c->ns->pool, s->p, s->len);
}

/* Creation time of a name first seen now in dir over a record l (negative/deleted) or none. */
static uint64_t sighting_time(struct ctx *c, uint32_t dir, uint32_t l)
{
    return l || ns_obj(c->ns, dir)->create_ns ? c->t : 0;
}

/* ---- what attributes tell ---------------------------------------------------------------- */

static void size_evidence(struct ns_obj *o, uint64_t size, bool exact)
{
    if (o->flags & (OF_SIZE_KNOWN | OF_SIZE_FROZEN))
        return;
    if (exact) {
        o->size = size;
        o->flags |= OF_SIZE_KNOWN;
    } else if (size > o->size) {
        o->size = size;
    }
}

/*
 * Mode and owner: the first seen are those at trace start; a change that no
 * SETATTR of this record asked for was made by a lost call (or another
 * client), told to the inference hook so that the replay makes it too.
 */
static void learn_perms(struct ctx *c, uint32_t id, struct ns_obj *o, const struct tbbt_fattr *a)
{
    const struct tbbt_trace_rec *r = c->rec;
    uint16_t mode = (uint16_t)(a->mode & NS_MODE_BITS);

    if (!(o->mode & NS_MODE_KNOWN)) {
        o->mode = o->smode = (uint16_t)(mode | NS_MODE_KNOWN);
        o->uid = o->suid = a->uid;
        o->gid = o->sgid = a->gid;
        return;
    }
    if (((o->mode ^ mode) & NS_MODE_COMPARE) == 0 && o->uid == a->uid && o->gid == a->gid) {
        o->mode = (uint16_t)(mode | NS_MODE_KNOWN);
        return;
    }
    if (!(c->op == NS_OP_SETATTR && id == c->dir && TBBT_HAS(r, TBBT_F_SATTR) &&
          (r->sattr.mask & (TBBT_SA_MODE | TBBT_SA_UID | TBBT_SA_GID))))
        tbbt__ns_infer_attrs(c->ns, id, mode, a->uid, a->gid);
    o->mode = (uint16_t)(mode | NS_MODE_KNOWN);
    o->uid = a->uid;
    o->gid = a->gid;
}

static void learn(struct ctx *c, uint32_t id, const struct tbbt_fattr *a)
{
    struct ns_obj *o;

    if (!id)
        return;
    tbbt__ns_set_type(c->ns, id, tbbt__ns_ftype(a->type), true);
    o = ns_obj(c->ns, id);
    o->nlink = (uint16_t)MIN(a->nlink, 0xffffu);
    o->flags |= OF_NLINK;
    size_evidence(o, a->size, true);
    learn_perms(c, id, o, a);
    if (o->key && ns_key(c->ns, o->key)->fsid == a->fsid &&
        ns_key(c->ns, o->key)->fileid == a->fileid && ns_key(c->ns, o->key)->obj == id)
        return;     /* the usual case: nothing new */
    tbbt__ns_obj_set_key(c->ns, id, a->fsid, a->fileid);
}

static void learn_field(struct ctx *c, uint32_t id, int field, const struct tbbt_fattr *a)
{
    if (TBBT_HAS(c->rec, field))
        learn(c, id, a);
}

/* An operation that may change the size of id happened (or may have: no reply). */
static void size_change(struct ctx *c, uint32_t id, uint64_t write_end)
{
    struct ns_obj *o = ns_obj(c->ns, id);
    const struct tbbt_trace_rec *r = c->rec;

    if (o->flags & (OF_SIZE_KNOWN | OF_SIZE_FROZEN))
        return;
    if (TBBT_HAS(r, TBBT_F_OBJ_PRE))
        size_evidence(o, r->obj_pre.size, true);
    else if (write_end && TBBT_HAS(r, TBBT_F_OBJ_ATTR) && r->obj_attr.size > write_end)
        size_evidence(o, r->obj_attr.size, true);   /* the write did not extend the file */
    else
        o->flags |= OF_SIZE_FROZEN;
}

/* A symlink's target: the first one seen; one holding NUL cannot be (counted as hostile). */
static void set_target(struct ctx *c, uint32_t id, const struct tbbt_str *s)
{
    struct ns_obj *o = ns_obj(c->ns, id);

    if (s->len > TBBT_PATH_MAX || (s->len && memchr(s->p, '\0', s->len))) {
        c->ns->st.hostile_names++;
        return;
    }
    if (!o->target)
        o->target = tbbt__ns_pool_add(&c->ns->pool, s->p, s->len);
}

/* ---- placing names ------------------------------------------------------------------------ */

static void set_parent(struct ctx *c, uint32_t dir, uint32_t parent)
{
    struct ns_obj *o = ns_obj(c->ns, dir);

    if (dir == c->ns->root || dir == parent || tbbt__ns_live_link(c->ns, dir))
        return;
    if ((o->flags & OF_PARENTED) && o->parent == parent)
        return;
    if (tbbt__ns_is_under(c->ns, parent, dir)) {
        c->ns->st.cycles_refused++;
        return;
    }
    o->parent = parent;
    o->flags |= OF_PARENTED;
    ns_obj(c->ns, parent)->flags |= OF_ANCESTOR;
    tbbt__ns_set_type(c->ns, dir, TBBT_NS_DIR, false);
    tbbt__ns_set_type(c->ns, parent, TBBT_NS_DIR, false);
}

static uint32_t live_count(struct tbbt_ns *ns, uint32_t id)
{
    uint32_t n = 0;

    for (uint32_t l = ns_obj(ns, id)->links; l; l = ns_link(ns, l)->next)
        n++;
    return n;
}

/*
 * Object id is at (dir, name), where the model has no live link (l: what the
 * table holds there, or 0).  A directory, or a file whose link count says it
 * has no other name, moved (a lost rename); anything else gains a name.
 */
static void place(struct ctx *c, uint32_t dir, uint32_t name, uint32_t id, uint32_t l)
{
    struct tbbt_ns *ns = c->ns;
    struct ns_obj *o = ns_obj(ns, id);
    uint32_t old = tbbt__ns_live_link(ns, id);

    if (tbbt__ns_would_loop(ns, dir, id)) {
        ns->st.cycles_refused++;
        return;
    }
    if (old && (o->type == TBBT_NS_DIR ||
                ((o->flags & OF_NLINK) && o->nlink <= live_count(ns, id)))) {
        ns->st.inferred_creates++;
        tbbt__ns_infer(ns, TBBT_NS_INFER_RENAME, ns_link(ns, old)->parent,
                       ns_link(ns, old)->name, dir, name, id);
        tbbt__ns_link_move(ns, old, dir, name, c->t);
        return;
    }
    if (l)
        ns->st.inferred_creates++;
    tbbt__ns_link_add(ns, dir, name, id, sighting_time(c, dir, l));
    if (sighting_time(c, dir, l))       /* made by a lost call */
        tbbt__ns_infer(ns, TBBT_NS_INFER_CREATE, dir, name, 0, 0, id);
}

/* A new object named (dir, name) that the model did not know of. */
static uint32_t new_named(struct ctx *c, uint32_t dir, uint32_t name, int type)
{
    uint32_t l = tbbt__ns_dent_find(c->ns, dir, name);
    uint32_t id = tbbt__ns_obj_new(c->ns, type, sighting_time(c, dir, l));

    place(c, dir, name, id, l);
    return id;
}

/* (dir, name) is absent now. */
static void absent(struct ctx *c, uint32_t dir, uint32_t name)
{
    uint32_t l = tbbt__ns_dent_find(c->ns, dir, name);

    if (l && ns_link_live(ns_link(c->ns, l))) {
        c->ns->st.inferred_removes++;
        tbbt__ns_infer(c->ns, TBBT_NS_INFER_REMOVE, dir, name, 0, 0, ns_link(c->ns, l)->child);
        tbbt__ns_link_end(c->ns, l, c->t);
    } else if (!l) {
        tbbt__ns_neg_add(c->ns, dir, name);
    }
}

/* (dir, name) holds something now; returns it. */
static uint32_t present(struct ctx *c, uint32_t dir, uint32_t name, int type)
{
    uint32_t id = tbbt__ns_dent_child(c->ns, dir, name);

    if (!id)
        return new_named(c, dir, name, type);
    tbbt__ns_set_type(c->ns, id, type, false);
    return id;
}

/* The name's object was replaced by id (evidence the model had missed). */
static void rebind(struct ctx *c, uint32_t l, uint32_t dir, uint32_t name, uint32_t id)
{
    bool by_record = c->op != NS_OP_LOOKUP && c->op != NS_OP_READDIRPLUS &&
                     c->op != NS_OP_READDIR;   /* the record itself makes the new name */

    c->ns->st.identity_mismatches++;
    tbbt__ns_infer(c->ns, TBBT_NS_INFER_REMOVE, dir, name, 0, 0, ns_link(c->ns, l)->child);
    tbbt__ns_link_end(c->ns, l, c->t);
    if (tbbt__ns_would_loop(c->ns, dir, id)) {
        c->ns->st.cycles_refused++;
    } else {
        tbbt__ns_link_add(c->ns, dir, name, id, c->t);
        if (!by_record)
            tbbt__ns_infer(c->ns, TBBT_NS_INFER_CREATE, dir, name, 0, 0, id);
    }
}

/*
 * A reply says (dir, name) is handle ref (attributes a, may be NULL).  The
 * handle's own object wins; a handle that has none takes the name's.
 */
static uint32_t bind_handle(struct ctx *c, uint32_t dir, uint32_t name, uint32_t ref,
                            const struct tbbt_fattr *a)
{
    struct tbbt_ns *ns = c->ns;
    uint32_t l = tbbt__ns_dent_find(ns, dir, name);
    uint32_t y = l && ns_link_live(ns_link(ns, l)) ? ns_link(ns, l)->child : 0;
    uint32_t x = tbbt__ns_fh_known(ns, ref);

    if (!x && y)
        tbbt__ns_fh_bind(ns, ref, x = y);
    if (!x) {
        x = tbbt__ns_obj_new(ns, TBBT_NS_UNKNOWN, sighting_time(c, dir, l));
        tbbt__ns_fh_bind(ns, ref, x);
    }
    if (a)
        learn(c, x, a);
    if (y && x != y)
        rebind(c, l, dir, name, x);
    else if (!y)
        place(c, dir, name, x, l);
    return x;
}

/* By ID (a trace whose IDs are final): a reply says (dir, name) is object id. */
static void bind_id(struct ctx *c, uint32_t dir, uint32_t name, uint32_t id)
{
    uint32_t l = tbbt__ns_dent_find(c->ns, dir, name);
    uint32_t y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;

    if (y == id)
        return;
    if (y)
        rebind(c, l, dir, name, id);
    else if (tbbt__ns_would_loop(c->ns, dir, id))
        c->ns->st.cycles_refused++;
    else
        tbbt__ns_link_add(c->ns, dir, name, id, c->t);
}

/* A readdir entry without a handle: (dir, name) has fileid in dir's file system. */
static uint32_t bind_fileid(struct ctx *c, uint32_t dir, uint32_t name, bool have_fsid,
                            uint64_t fsid, uint64_t fileid)
{
    struct tbbt_ns *ns = c->ns;
    uint32_t l = tbbt__ns_dent_find(ns, dir, name);
    uint32_t y = l && ns_link_live(ns_link(ns, l)) ? ns_link(ns, l)->child : 0;
    uint32_t k = have_fsid ? tbbt__ns_key_find(ns, fsid, fileid) : 0;
    uint32_t x = k ? ns_key(ns, k)->obj : 0;

    if (x && tbbt__ns_obj_gone(ns, x))
        x = 0;
    if (y && (!have_fsid || !ns_obj(ns, y)->key || ns_obj(ns, y)->key == k)) {
        if (have_fsid)
            tbbt__ns_obj_set_key(ns, y, fsid, fileid);
        return y;
    }
    if (!x) {
        x = tbbt__ns_obj_new(ns, TBBT_NS_UNKNOWN, sighting_time(c, dir, l));
        if (have_fsid)
            tbbt__ns_obj_set_key(ns, x, fsid, fileid);
    }
    if (y)
        rebind(c, l, dir, name, x);
    else
        place(c, dir, name, x, l);
    return x;
}

/* ---- operations ------------------------------------------------------------------------------ */

static void op_attr(struct ctx *c)
{
    if (!c->dir)
        return;
    if (TBBT_HAS(c->rec, TBBT_F_OBJ_PRE))
        size_evidence(ns_obj(c->ns, c->dir), c->rec->obj_pre.size, true);
    learn_field(c, c->dir, TBBT_F_OBJ_ATTR, &c->rec->obj_attr);
}

static void op_setattr(struct ctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    struct ns_obj *o;

    if (c->dir && TBBT_HAS(r, TBBT_F_SATTR) && (r->sattr.mask & TBBT_SA_SIZE) &&
        (!c->replied || c->ok))
        size_change(c, c->dir, 0);
    if (c->dir && c->ok && TBBT_HAS(r, TBBT_F_SATTR) && !TBBT_HAS(r, TBBT_F_OBJ_ATTR)) {
        o = ns_obj(c->ns, c->dir);      /* no attributes in the reply: what it set */
        if ((r->sattr.mask & TBBT_SA_MODE) && (o->mode & NS_MODE_KNOWN))
            o->mode = (uint16_t)((r->sattr.mode & NS_MODE_BITS) | NS_MODE_KNOWN);
        if (r->sattr.mask & TBBT_SA_UID)
            o->uid = r->sattr.uid;
        if (r->sattr.mask & TBBT_SA_GID)
            o->gid = r->sattr.gid;
    }
    op_attr(c);
}

static void op_write(struct ctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    uint64_t end = 0;

    if (!c->dir)
        return;
    if (TBBT_HAS(r, TBBT_F_OFFSET) && TBBT_HAS(r, TBBT_F_COUNT))
        end = r->offset + (TBBT_HAS(r, TBBT_F_RES_COUNT) ? r->res_count : r->count);
    if (!c->replied || c->ok)
        size_change(c, c->dir, end);
    if (c->ok)
        tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_FILE, false);
    op_attr(c);
}

static void op_read(struct ctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;

    op_attr(c);
    if (!c->ok || !c->dir)
        return;
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_FILE, false);
    if (TBBT_HAS(r, TBBT_F_OFFSET) && TBBT_HAS(r, TBBT_F_RES_COUNT))
        size_evidence(ns_obj(c->ns, c->dir), r->offset + r->res_count,
                      TBBT_HAS(r, TBBT_F_EOF) && r->eof && r->res_count > 0);
}

static void op_readlink(struct ctx *c)
{
    op_attr(c);
    if (!c->ok || !c->dir)
        return;
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_SYMLINK, false);
    if (TBBT_HAS(c->rec, TBBT_F_TARGET))
        set_target(c, c->dir, &c->rec->target);
}

static void op_lookup(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    const struct tbbt_fattr *a = TBBT_HAS(r, TBBT_F_OBJ_ATTR) ? &r->obj_attr : NULL;
    bool dot = is_dots(&r->name, 1), dotdot = is_dots(&r->name, 2);
    uint32_t x = 0, name = 0;

    if (!c->dir || !TBBT_HAS(r, TBBT_F_NAME))
        return;
    learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_DIR, false);
    if (!dot && !dotdot && !(name = comp(c, &r->name)) && !(c->ok && TBBT_HAS(r, TBBT_F_NEW_FH)))
        return;
    if (c->ns->by_id && c->ok && name && TBBT_HAS(r, TBBT_F_ID_OBJ)) {
        bind_id(c, c->dir, name, (uint32_t)r->id_obj);
        return;
    }
    if (!c->ok || !TBBT_HAS(r, TBBT_F_NEW_FH)) {
        if (name && c->replied && c->status == NFS3ERR_NOENT)
            absent(c, c->dir, name);
        else if (name)
            set_id(r, TBBT_F_ID_OBJ, tbbt__ns_dent_child(c->ns, c->dir, name));
        return;
    }
    if (name) {
        x = bind_handle(c, c->dir, name, r->new_fh, a);
    } else {
        x = tbbt__ns_fh_resolve(c->ns, r->new_fh);
        if (a)
            learn(c, x, a);
        if (dotdot) {
            c->ns->st.dotdot_lookups++;
            set_parent(c, c->dir, x);
        }
    }
    set_id(r, TBBT_F_ID_OBJ, x);
}

static int created_type(const struct ctx *c)
{
    switch (c->op) {
    case NS_OP_CREATE: return TBBT_NS_FILE;
    case NS_OP_MKDIR: return TBBT_NS_DIR;
    case NS_OP_SYMLINK: return TBBT_NS_SYMLINK;
    default:
        return TBBT_HAS(c->rec, TBBT_F_FTYPE) && tbbt__ns_ftype(c->rec->ftype) != TBBT_NS_UNKNOWN
                   ? tbbt__ns_ftype(c->rec->ftype) : TBBT_NS_OTHER;
    }
}

/* CREATE that may have found the existing object y (UNCHECKED mode). */
static bool create_keeps(const struct ctx *c, uint32_t y)
{
    const struct tbbt_trace_rec *r = c->rec;
    const struct ns_obj *o = ns_obj(c->ns, y);

    if (c->op != NS_OP_CREATE || o->type == TBBT_NS_DIR)
        return false;
    if (TBBT_HAS(r, TBBT_F_CREATEMODE) && r->createmode != UNCHECKED)
        return false;
    if (TBBT_HAS(r, TBBT_F_OBJ_ATTR) && o->key)
        return o->key == tbbt__ns_key_find(c->ns, r->obj_attr.fsid, r->obj_attr.fileid);
    return true;
}

/*
 * The object a successful create-type operation made (*made set) or found
 * at (dir, name), where the model has y (0: nothing).
 */
static uint32_t created_object(struct ctx *c, uint32_t y, bool *made)
{
    struct tbbt_ns *ns = c->ns;
    struct tbbt_trace_rec *r = c->rec;
    uint32_t x = 0, k;

    *made = false;
    if (TBBT_HAS(r, TBBT_F_NEW_FH)) {
        tbbt__ns_handle_reserve(ns, r->new_fh);
        x = ns->hid[r->new_fh];
        k = ns->hkey[r->new_fh];
        /* a known handle: the same object only for CREATE of an existing file */
        if (x && (tbbt__ns_obj_gone(ns, x) || c->op != NS_OP_CREATE))
            x = 0;
        if (!x && y && ((k && ns_key(ns, k)->obj == y) || (!k && create_keeps(c, y))))
            x = y;
        if (!x) {
            x = tbbt__ns_obj_new(ns, created_type(c), c->t);
            *made = true;
            if (k)      /* the file system gave the new object this (fsid, fileid) */
                ns_key(ns, k)->obj = x;
        }
        tbbt__ns_fh_bind(ns, r->new_fh, x);
        return x;
    }
    if (TBBT_HAS(r, TBBT_F_ID_OBJ) && r->id_obj && r->id_obj < ns->objs.n) {
        *made = true;                   /* a corrective record names the object it makes */
        return (uint32_t)r->id_obj;
    }
    if (y && create_keeps(c, y))
        return y;
    *made = true;
    return tbbt__ns_obj_new(ns, created_type(c), c->t);
}

static void op_create(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    uint32_t name, l, y, x;
    bool made;

    if (!c->dir || !TBBT_HAS(r, TBBT_F_NAME))
        return;
    learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    name = comp(c, &r->name);
    l = name ? tbbt__ns_dent_find(c->ns, c->dir, name) : 0;
    y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;
    if (!c->ok) {
        if (name && c->replied && c->status == NFS3ERR_EXIST)
            y = present(c, c->dir, name, TBBT_NS_UNKNOWN);
        set_id(r, TBBT_F_ID_OBJ, y);
        return;
    }
    x = created_object(c, y, &made);
    if (x == y && TBBT_HAS(r, TBBT_F_SATTR) && (r->sattr.mask & TBBT_SA_SIZE))
        size_change(c, x, 0);
    learn_field(c, x, TBBT_F_OBJ_ATTR, &r->obj_attr);
    tbbt__ns_set_type(c->ns, x, created_type(c), false);
    if (c->op == NS_OP_SYMLINK && TBBT_HAS(r, TBBT_F_TARGET))
        set_target(c, x, &r->target);
    set_id(r, TBBT_F_ID_OBJ, x);
    if (!name || x == y)
        return;
    if (y) {
        set_id(r, TBBT_F_ID_OLD, y);
        rebind(c, l, c->dir, name, x);
    } else if (made) {
        tbbt__ns_link_add(c->ns, c->dir, name, x, c->t);
    } else {
        place(c, c->dir, name, x, l);   /* CREATE found an existing file under a new name */
    }
}

static void op_remove(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    bool rmdir = c->op == NS_OP_RMDIR;
    uint32_t name, l, y;

    if (!c->dir || !TBBT_HAS(r, TBBT_F_NAME))
        return;
    learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    if (!(name = comp(c, &r->name)))
        return;
    l = tbbt__ns_dent_find(c->ns, c->dir, name);
    y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;
    if (!c->ok) {
        if (c->replied && c->status == NFS3ERR_NOENT)
            absent(c, c->dir, name);
        else if (c->replied && c->status == NFS3ERR_NOTEMPTY && rmdir)
            y = present(c, c->dir, name, TBBT_NS_DIR);
        set_id(r, TBBT_F_ID_OBJ, y);
        return;
    }
    if (!y) {
        y = new_named(c, c->dir, name, rmdir ? TBBT_NS_DIR : TBBT_NS_UNKNOWN);
        l = tbbt__ns_dent_find(c->ns, c->dir, name);
    }
    if (rmdir)
        tbbt__ns_set_type(c->ns, y, TBBT_NS_DIR, false);
    set_id(r, TBBT_F_ID_OBJ, y);
    if (ns_link(c->ns, l)->child == y && ns_link_live(ns_link(c->ns, l)))
        tbbt__ns_link_end(c->ns, l, c->t);
}

/* A rename with a name that cannot be a component. */
static void rename_hostile(struct ctx *c, uint32_t from, uint32_t to)
{
    struct tbbt_ns *ns = c->ns;
    uint32_t l;

    if (from && (l = tbbt__ns_dent_find(ns, c->dir, from)) && ns_link_live(ns_link(ns, l))) {
        set_id(c->rec, TBBT_F_ID_OBJ, ns_link(ns, l)->child);
        tbbt__ns_link_end(ns, l, c->t);     /* moved where no path can follow */
    } else if (to) {
        l = tbbt__ns_dent_find(ns, c->dir2, to);
        if (l && ns_link_live(ns_link(ns, l))) {
            set_id(c->rec, TBBT_F_ID_OLD, ns_link(ns, l)->child);
            tbbt__ns_link_end(ns, l, c->t);
        }
        set_id(c->rec, TBBT_F_ID_OBJ, new_named(c, c->dir2, to, TBBT_NS_UNKNOWN));
    }
}

static void op_rename(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    struct tbbt_ns *ns = c->ns;
    uint32_t from, to, l1 = 0, l2 = 0, x = 0, y = 0;

    if (!c->dir || !c->dir2 || !TBBT_HAS(r, TBBT_F_NAME) || !TBBT_HAS(r, TBBT_F_NAME2))
        return;
    learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    learn_field(c, c->dir2, TBBT_F_DIR2_ATTR, &r->dir2_attr);
    from = comp(c, &r->name);
    to = comp(c, &r->name2);
    if (from && (l1 = tbbt__ns_dent_find(ns, c->dir, from)) && ns_link_live(ns_link(ns, l1)))
        x = ns_link(ns, l1)->child;
    if (to && (l2 = tbbt__ns_dent_find(ns, c->dir2, to)) && ns_link_live(ns_link(ns, l2)))
        y = ns_link(ns, l2)->child;
    if (!c->ok) {
        if (from && c->replied && c->status == NFS3ERR_NOENT)
            absent(c, c->dir, from);
        else if (to && c->replied && (c->status == NFS3ERR_EXIST || c->status == NFS3ERR_NOTEMPTY))
            present(c, c->dir2, to, TBBT_NS_DIR);
        set_id(r, TBBT_F_ID_OBJ, x);
        if (!c->replied && y != x)
            set_id(r, TBBT_F_ID_OLD, y);
        return;
    }
    if (!from || !to) {
        rename_hostile(c, from, to);
        return;
    }
    if (!x) {
        x = new_named(c, c->dir, from, TBBT_NS_UNKNOWN);
        l1 = tbbt__ns_dent_find(ns, c->dir, from);
    }
    set_id(r, TBBT_F_ID_OBJ, x);
    if (x == y || (c->dir == c->dir2 && from == to))
        return;     /* two names of one object: POSIX leaves both */
    if (tbbt__ns_would_loop(ns, c->dir2, x)) {
        ns->st.cycles_refused++;
        return;
    }
    if (y) {
        set_id(r, TBBT_F_ID_OLD, y);
        tbbt__ns_link_end(ns, l2, c->t);
    }
    if (ns_link(ns, l1)->child == x && ns_link_live(ns_link(ns, l1)))
        tbbt__ns_link_move(ns, l1, c->dir2, to, c->t);
}

static void op_link(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    struct ns_obj *o;
    uint32_t to, l, y;

    if (!c->dir)
        return;
    learn_field(c, c->dir, TBBT_F_OBJ_ATTR, &r->obj_attr);
    set_id(r, TBBT_F_ID_OBJ, c->dir);
    if (!c->dir2 || !TBBT_HAS(r, TBBT_F_NAME2))
        return;
    learn_field(c, c->dir2, TBBT_F_DIR2_ATTR, &r->dir2_attr);
    if (!(to = comp(c, &r->name2)))
        return;
    if (!c->ok) {
        if (c->replied && c->status == NFS3ERR_EXIST)
            present(c, c->dir2, to, TBBT_NS_UNKNOWN);
        return;
    }
    l = tbbt__ns_dent_find(c->ns, c->dir2, to);
    y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;
    if (y == c->dir)
        return;
    o = ns_obj(c->ns, c->dir);
    if (o->type == TBBT_NS_UNKNOWN)
        tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_FILE, false);
    if (!TBBT_HAS(r, TBBT_F_OBJ_ATTR) && (o->flags & OF_NLINK) && o->nlink < 0xffff)
        o->nlink++;
    if (y) {
        set_id(r, TBBT_F_ID_OLD, y);
        rebind(c, l, c->dir2, to, c->dir);
    } else if (tbbt__ns_would_loop(c->ns, c->dir2, c->dir)) {
        c->ns->st.cycles_refused++;
    } else {
        tbbt__ns_link_add(c->ns, c->dir2, to, c->dir, c->t);
    }
}

/* The ".." entry of a readdir: the directory's parent. */
static uint32_t entry_dotdot(struct ctx *c, const struct tbbt_entry *e, bool have_fsid,
                             uint64_t fsid)
{
    uint32_t k, p = 0;

    if (e->flags & TBBT_ENT_FH) {
        p = tbbt__ns_fh_resolve(c->ns, e->fh);
        if (e->flags & TBBT_ENT_ATTR)
            learn(c, p, &e->attr);
    } else if (have_fsid && (k = tbbt__ns_key_find(c->ns, fsid, e->fileid))) {
        p = ns_key(c->ns, k)->obj;
        if (p && tbbt__ns_obj_gone(c->ns, p))
            p = 0;
    }
    if (p)
        set_parent(c, c->dir, p);
    return p;
}

static uint32_t entry_object(struct ctx *c, const struct tbbt_entry *e, bool have_fsid,
                             uint64_t fsid)
{
    uint32_t name;

    if (is_dots(&e->name, 1))
        return c->dir;
    if (is_dots(&e->name, 2))
        return entry_dotdot(c, e, have_fsid, fsid);
    if (!(name = comp(c, &e->name)))
        return e->flags & TBBT_ENT_FH ? tbbt__ns_fh_resolve(c->ns, e->fh) : 0;
    if (e->flags & TBBT_ENT_FH)
        return bind_handle(c, c->dir, name, e->fh, e->flags & TBBT_ENT_ATTR ? &e->attr : NULL);
    return bind_fileid(c, c->dir, name, have_fsid, fsid, e->fileid);
}

static void op_readdir(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    const struct ns_obj *d;
    bool have_fsid;
    uint64_t fsid;

    if (!c->dir)
        return;
    learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    if (!c->ok || !TBBT_HAS(r, TBBT_F_ENTRIES) || c->ns->by_id)
        return;
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_DIR, false);
    d = ns_obj(c->ns, c->dir);
    have_fsid = d->key != 0;
    fsid = have_fsid ? ns_key(c->ns, d->key)->fsid : 0;
    for (uint32_t i = 0; i < r->n_entries; i++) {
        struct tbbt_entry *e = &r->entries[i];
        uint32_t x = entry_object(c, e, have_fsid, fsid);
        if (x) {
            e->flags |= TBBT_ENT_ID;
            e->id = x;
        }
    }
}

/* ---- MOUNT: the export root and the places of mounted directories ------------------------- */

/* The i-th '/'-separated component of the pool string ref: *p, *n. */
static bool path_comp(const struct tbbt_ns *ns, uint32_t ref, uint32_t i, const char **p,
                      size_t *n)
{
    uint32_t len;
    const char *s = (const char *)tbbt__ns_pool_get(&ns->pool, ref, &len);
    uint32_t k = 0, a = 0;

    for (uint32_t j = 0; j <= len; j++) {
        if (j < len && s[j] != '/')
            continue;
        if (j > a || len == 0) {
            if (k == i && j > a) {
                *p = s + a;
                *n = j - a;
                return true;
            }
            k++;
        }
        a = j + 1;
    }
    return false;
}

static uint32_t path_ncomp(const struct tbbt_ns *ns, uint32_t ref)
{
    const char *p;
    size_t n;
    uint32_t k = 0;

    while (path_comp(ns, ref, k, &p, &n))
        k++;
    return k;
}

/*
 * A trace without MOUNT traffic (a capture of the NFS port only): the root is the
 * handle the identity scan's hints put at the top of the most handles (the parent a
 * LOOKUP or a ".." names, up to one that nothing names).  Ties go to the handle seen
 * first.
 */
static void infer_root(struct tbbt_ns *ns)
{
    uint32_t *count, best = 0, best_n = 0;

    if (ns->nh == 0)
        return;
    count = g_new0(uint32_t, ns->nh);
    for (uint32_t h = 0; h < ns->nh; h++) {
        uint32_t t = h, steps = 0;
        if (!ns->hdir[h])
            continue;
        while (ns->hdir[t] && ns->hdir[t] - 1 != t && steps++ < 4096)
            t = ns->hdir[t] - 1;
        if (steps < 4096 && t < ns->nh)
            count[t]++;
    }
    for (uint32_t h = 0; h < ns->nh; h++)
        if (count[h] > best_n) {
            best_n = count[h];
            best = h;
        }
    g_free(count);
    if (!best_n)
        return;
    ns->root = tbbt__ns_fh_resolve(ns, best);
    tbbt__ns_set_type(ns, ns->root, TBBT_NS_DIR, false);
    ns->st.root_inferred = 1;
}

/*
 * Before the first record: the export root's depth, the components every mounted path
 * shares; without MOUNT traffic, the root from the hints (infer_root()).
 */
static void mounts_prepare(struct tbbt_ns *ns)
{
    uint32_t common = UINT32_MAX;
    const struct ns_mount *first;

    ns->mounts_ready = true;
    if (!ns->mounts || ns->mounts->len == 0) {
        if (!ns->root && !ns->by_id && ns->hdir)
            infer_root(ns);
        return;
    }
    first = &g_array_index(ns->mounts, struct ns_mount, 0);
    for (guint i = 0; i < ns->mounts->len; i++) {
        const struct ns_mount *m = &g_array_index(ns->mounts, struct ns_mount, i);
        uint32_t k = 0;
        const char *a, *b;
        size_t na, nb;
        while (k < common && path_comp(ns, first->path, k, &a, &na) &&
               path_comp(ns, m->path, k, &b, &nb) && na == nb && memcmp(a, b, na) == 0)
            k++;
        common = MIN(common, k);
    }
    ns->root_ncomp = common;
}

/* The export root: the object of a mount at the root's path, else a directory of its own. */
static uint32_t mount_root(struct tbbt_ns *ns)
{
    for (guint i = 0; ns->mounts && i < ns->mounts->len; i++) {
        const struct ns_mount *m = &g_array_index(ns->mounts, struct ns_mount, i);
        if (path_ncomp(ns, m->path) == ns->root_ncomp)
            return tbbt__ns_fh_resolve(ns, m->fh);
    }
    return tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
}

/*
 * The handles (+ 1, 0 unknown) of the directories on a mounted path, bottom up from the
 * mounted handle fh, as the identity scan's hints tell them: the ".." of a LOOKUP or
 * READDIRPLUS names a directory's parent, a LOOKUP names a handle in its directory
 * (that name must be the path's).  hs[k] is the directory named by component k.
 */
static void mount_hints(const struct tbbt_ns *ns, uint32_t path, uint32_t fh, uint32_t n,
                        uint32_t *hs)
{
    const char *p;
    size_t len;

    hs[n - 1] = fh + 1;
    for (uint32_t k = n - 1; k > ns->root_ncomp; k--) {
        uint32_t h = hs[k] - 1, name;
        if (h >= ns->nh || !ns->hdir[h])
            return;
        if (ns->hname[h]) {
            path_comp(ns, path, k, &p, &len);
            name = tbbt__ns_pool_find(&ns->pool, p, len);
            if (name != ns->hname[h])
                return;
        }
        hs[k - 1] = ns->hdir[h];
    }
}

/*
 * Places mounted object x at its path under the root: a client that mounted
 * export/home/u1 works in home/u1.  Directories on the way that the model does not know
 * yet are made (they existed when the mount succeeded).  Nothing changes when x has a
 * name already (LOOKUPs placed it) or the path holds another object (counted).
 */
static void place_mount(struct ctx *c, uint32_t fh, uint32_t x)
{
    struct tbbt_ns *ns = c->ns;
    const struct ns_mount *m = NULL;
    uint32_t d = ns->root, n;
    const char *p;
    size_t len;

    for (guint i = 0; ns->mounts && i < ns->mounts->len && !m; i++)
        if (g_array_index(ns->mounts, struct ns_mount, i).fh == fh)
            m = &g_array_index(ns->mounts, struct ns_mount, i);
    if (!m || x == ns->root || tbbt__ns_live_link(ns, x))
        return;
    n = path_ncomp(ns, m->path);
    if (n <= ns->root_ncomp) {
        ns->st.mount_conflicts++;       /* another handle for the root's path */
        return;
    }
    uint32_t *hs = g_new0(uint32_t, n);
    mount_hints(ns, m->path, fh, n, hs);
    for (uint32_t k = ns->root_ncomp; k < n; k++) {
        uint32_t name, child, l;
        path_comp(ns, m->path, k, &p, &len);
        name = tbbt__ns_pool_intern(&ns->pool, p, len);
        child = tbbt__ns_dent_child(ns, d, name);
        l = tbbt__ns_dent_find(ns, d, name);
        if (k + 1 == n) {
            if (child || tbbt__ns_would_loop(ns, d, x)) {
                ns->st.mount_conflicts += child != x;
                break;
            }
            tbbt__ns_link_add(ns, d, name, x, sighting_time(c, d, l));
            ns->st.mounts_placed++;
            break;
        }
        if (!child) {
            /* the directory the hints name, if it has no place yet; else a new one */
            child = hs[k] ? tbbt__ns_fh_resolve(ns, hs[k] - 1) : 0;
            if (!child || child == ns->root || tbbt__ns_live_link(ns, child) ||
                tbbt__ns_would_loop(ns, d, child))
                child = tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
            tbbt__ns_link_add(ns, d, name, child, sighting_time(c, d, l));
        }
        tbbt__ns_set_type(ns, child, TBBT_NS_DIR, false);
        d = child;
    }
    g_free(hs);
}

static void op_mnt(struct ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    uint32_t x;

    if (!c->ok || !TBBT_HAS(r, TBBT_F_NEW_FH) || c->ns->by_id)
        return;
    if (!c->ns->root)
        c->ns->root = mount_root(c->ns);
    x = tbbt__ns_fh_resolve(c->ns, r->new_fh);
    tbbt__ns_set_type(c->ns, x, TBBT_NS_DIR, false);
    tbbt__ns_set_type(c->ns, c->ns->root, TBBT_NS_DIR, false);
    place_mount(c, r->new_fh, x);
    set_id(r, TBBT_F_ID_OBJ, x);
}

/* ---- entry point ----------------------------------------------------------------------------- */

/*
 * The object of handle ref; one the model meets for the first time is placed
 * where the identity scan saw it named first (a LOOKUP, CREATE or READDIRPLUS
 * reply, maybe later in the trace), so that an object whose creating call was
 * lost gets its name, and its creation (a lost call, if its directory was made
 * in the trace), before its first use.
 */
static uint32_t resolve_placed(struct ctx *c, uint32_t ref, int depth)
{
    struct tbbt_ns *ns = c->ns;
    uint32_t x = tbbt__ns_fh_known(ns, ref), p, name, l;
    uint64_t t;

    if (x)
        return x;
    x = tbbt__ns_fh_resolve(ns, ref);
    if (ns->htype[ref])
        tbbt__ns_set_type(ns, x, ns->htype[ref], true);
    if (depth >= 64)
        return x;
    if (ns->hdir[ref])
        p = resolve_placed(c, ns->hdir[ref] - 1, depth + 1);
    else if (ns->hpkey[ref] && !ns->hname[ref])   /* only a READDIR's ".." told the parent */
        p = ns_key(ns, ns->hpkey[ref])->obj;
    else
        return x;
    if (!p || p == x || tbbt__ns_live_link(ns, x) || (!ns->hdir[ref] && tbbt__ns_obj_gone(ns, p)))
        return x;
    if (!(name = ns->hname[ref])) {
        /* only its parent is known (".."): a directory made in the trace held nothing
         * before, so x was made there by a lost call, under a name the map makes up */
        char made[32];
        int n = snprintf(made, sizeof(made), "tbbt-unnamed-%" PRIu32, x);
        if (!ns_obj(ns, p)->create_ns)
            return x;
        name = tbbt__ns_pool_intern(&ns->pool, made, (size_t)n);
        tbbt__ns_set_type(ns, x, TBBT_NS_DIR, false);
    }
    if (tbbt__ns_dent_child(ns, p, name))
        return x;
    l = tbbt__ns_dent_find(ns, p, name);
    if ((t = sighting_time(c, p, l))) {      /* made in the trace: it started empty */
        ns_obj(ns, x)->create_ns = t;
        ns_obj(ns, x)->flags |= OF_SIZE_KNOWN;
    }
    place(c, p, name, x, l);
    return x;
}

/* The object of a handle field, or by ID when the record has no handle. */
static uint32_t rec_object(struct ctx *c, int fh_field, uint32_t ref, int id_field, uint64_t id)
{
    uint32_t x = 0;

    if (TBBT_HAS(c->rec, fh_field))
        x = resolve_placed(c, ref, 0);
    else if (TBBT_HAS(c->rec, id_field) && id && id < c->ns->objs.n)
        x = (uint32_t)id;
    set_id(c->rec, id_field, x);
    return x;
}

/* ID fields that name no object (0, or beyond the last ID) are dropped. */
static void drop_bad_ids(const struct tbbt_ns *ns, struct tbbt_trace_rec *rec)
{
    static const int fields[] = { TBBT_F_ID, TBBT_F_ID2, TBBT_F_ID_OBJ, TBBT_F_ID_OLD };
    const uint64_t vals[] = { rec->id, rec->id2, rec->id_obj, rec->id_old };

    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        if (TBBT_HAS(rec, fields[i]) && (vals[i] == 0 || vals[i] >= ns->objs.n))
            rec->present &= ~((uint64_t)1 << fields[i]);
    for (uint32_t i = 0; i < rec->n_entries; i++)
        if ((rec->entries[i].flags & TBBT_ENT_ID) &&
            (rec->entries[i].id == 0 || rec->entries[i].id >= ns->objs.n))
            rec->entries[i].flags &= ~(uint32_t)TBBT_ENT_ID;
}

/* Handle fields a by-ID model ignores. */
#define HANDLE_FIELDS ((UINT64_C(1) << TBBT_F_FH) | (UINT64_C(1) << TBBT_F_FH2) | \
                       (UINT64_C(1) << TBBT_F_NEW_FH))

static void apply_rec(struct tbbt_ns *ns, struct tbbt_trace_rec *rec, bool replied,
                      int32_t status);

/* The record's outcome and an application that ignores handles in the by-ID mode. */
static void apply_as(struct tbbt_ns *ns, struct tbbt_trace_rec *rec, bool replied,
                     int32_t status)
{
    uint64_t handles = rec->present & HANDLE_FIELDS;

    if (!ns->by_id || !handles) {
        apply_rec(ns, rec, replied, status);
        return;
    }
    rec->present &= ~HANDLE_FIELDS;
    apply_rec(ns, rec, replied, status);
    rec->present |= handles;
}

void tbbt_ns_apply(struct tbbt_ns *ns, struct tbbt_trace_rec *rec)
{
    apply_as(ns, rec, (rec->flags & TBBT_RF_REPLY) && rec->rpc_stat == TBBT_RPC_SUCCESS &&
                          (rec->flags & TBBT_RF_STATUS),
             rec->status);
}

void tbbt_ns_apply_outcome(struct tbbt_ns *ns, struct tbbt_trace_rec *rec, int32_t status)
{
    apply_as(ns, rec, true, status);
}

static void apply_rec(struct tbbt_ns *ns, struct tbbt_trace_rec *rec, bool replied,
                      int32_t status)
{
    struct ctx c = { .ns = ns, .rec = rec };
    uint64_t t = rec->call_ns ? rec->call_ns : rec->reply_ns;

    if (!ns->mounts_ready)
        mounts_prepare(ns);
    ns->last_t = t = MIN(MAX(t, ns->last_t), NS_LIVE - 1);  /* NS_LIVE means "not gone" */
    c.t = t ? t : 1;
    c.op = tbbt__ns_op(rec);
    c.replied = replied;
    c.status = status;
    c.ok = replied && status == 0;
    ns->st.records++;
    drop_bad_ids(ns, rec);
    c.dir = rec_object(&c, TBBT_F_FH, rec->fh, TBBT_F_ID, rec->id);
    c.dir2 = rec_object(&c, TBBT_F_FH2, rec->fh2, TBBT_F_ID2, rec->id2);
    switch (c.op) {
    case NS_OP_ATTR: op_attr(&c); break;
    case NS_OP_SETATTR: op_setattr(&c); break;
    case NS_OP_WRITE: op_write(&c); break;
    case NS_OP_READ: op_read(&c); break;
    case NS_OP_READLINK: op_readlink(&c); break;
    case NS_OP_LOOKUP: op_lookup(&c); break;
    case NS_OP_CREATE: case NS_OP_MKDIR: case NS_OP_SYMLINK: case NS_OP_MKNOD:
        op_create(&c);
        break;
    case NS_OP_REMOVE: case NS_OP_RMDIR: op_remove(&c); break;
    case NS_OP_RENAME: op_rename(&c); break;
    case NS_OP_LINK: op_link(&c); break;
    case NS_OP_READDIR: case NS_OP_READDIRPLUS: op_readdir(&c); break;
    case NS_OP_MNT: op_mnt(&c); break;
    default: break;
    }
    /* STALE: the server does not know fh's object; if it has no name, it is gone */
    if (c.replied && c.status == NFS3ERR_STALE && c.dir && c.op != NS_OP_RENAME &&
        c.op != NS_OP_LINK && c.op != NS_OP_NONE && c.op != NS_OP_MNT)
        tbbt_ns_forget(ns, c.dir, c.t);
    else if (c.ok && c.dir && !tbbt__ns_live_link(ns, c.dir) && !ns->by_id)
        tbbt__ns_mark_used(ns, c.dir);
}
