/* SPDX-License-Identifier: MIT */
/*
 * Trace records -> namespace model (TBBT paper 3.1: TBBT-IDs, and the third
 * pass of section 4 that infers the IDs of removed and replaced objects;
 * 3.2: every successful or failed directory operation may tell a parent/child
 * relationship).  NFSv2 (RFC 1094) and NFSv3 (RFC 1813) procedures map to
 * one set of operation kinds; MOUNT MNT (RFC 1813 Appendix I) gives the
 * export root.
 *
 * This file holds the entry points (tbbt_ns_apply*(): resolve the record's
 * handles, dispatch on its kind), what attributes tell, and the placing of
 * names that the operations share.  The operations are apply-ops.c's, MOUNT
 * and the export root apply-mount.c's, the identity scan apply-scan.c's;
 * apply-int.h is what they share.
 *
 * What a reply proves: a success, its effect; NOENT, that (dir, name) is
 * absent; EXIST and NOTEMPTY, that it is present.  Records without a usable
 * reply only get IDs (and the IDs the model predicts for remove, rmdir and
 * rename).  Attributes, whatever the status, tell type, link count, identity
 * (fsid, fileid) and the size at trace start: the earliest size seen before
 * the first operation that may change it (pre-operation attributes of that
 * operation count; see docs/hierarchy-map.md).
 */
#include "ns/apply-int.h"

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

/* ---- replay context ------------------------------------------------------------------ */

/* The pool ref of a name that may be a component; 0 (counted) if it cannot be one. */
uint32_t tbbt__ns_comp(struct tbbt__ns_ctx *c, const struct tbbt_str *s)
{
    if (!tbbt_ns_name_ok(s->p, s->len)) {
        c->ns->st.hostile_names++;
        return 0;
    }
    return tbbt__ns_pool_intern(&c->ns->pool, s->p, s->len);
}

/* ---- what attributes tell ---------------------------------------------------------------- */

void tbbt__ns_size_evidence(struct ns_obj *o, uint64_t size, bool exact)
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
static void learn_perms(struct tbbt__ns_ctx *c, uint32_t id, struct ns_obj *o,
                        const struct tbbt_fattr *a)
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

void tbbt__ns_learn(struct tbbt__ns_ctx *c, uint32_t id, const struct tbbt_fattr *a)
{
    struct ns_obj *o;

    if (!id)
        return;
    tbbt__ns_set_type(c->ns, id, tbbt__ns_ftype(a->type), true);
    o = ns_obj(c->ns, id);
    if (a->nlink != TBBT_NLINK_UNKNOWN) {
        o->nlink = (uint16_t)MIN(a->nlink, 0xffffu);
        o->flags |= OF_NLINK;
    }
    tbbt__ns_size_evidence(o, a->size, true);
    learn_perms(c, id, o, a);
    if (o->key && ns_key(c->ns, o->key)->fsid == a->fsid &&
        ns_key(c->ns, o->key)->fileid == a->fileid && ns_key(c->ns, o->key)->obj == id)
        return;     /* the usual case: nothing new */
    tbbt__ns_obj_set_key(c->ns, id, a->fsid, a->fileid);
}

void tbbt__ns_learn_field(struct tbbt__ns_ctx *c, uint32_t id, int field,
                          const struct tbbt_fattr *a)
{
    if (TBBT_HAS(c->rec, field))
        tbbt__ns_learn(c, id, a);
}

/* An operation that may change the size of id happened (or may have: no reply). */
void tbbt__ns_size_change(struct tbbt__ns_ctx *c, uint32_t id, uint64_t write_end)
{
    struct ns_obj *o = ns_obj(c->ns, id);
    const struct tbbt_trace_rec *r = c->rec;

    if (o->flags & (OF_SIZE_KNOWN | OF_SIZE_FROZEN))
        return;
    if (TBBT_HAS(r, TBBT_F_OBJ_PRE))
        tbbt__ns_size_evidence(o, r->obj_pre.size, true);
    else if (write_end && TBBT_HAS(r, TBBT_F_OBJ_ATTR) && r->obj_attr.size > write_end)
        tbbt__ns_size_evidence(o, r->obj_attr.size, true);   /* the write did not extend the file */
    else
        o->flags |= OF_SIZE_FROZEN;
}

/* A symlink's target: the first one seen; one holding NUL cannot be (counted as hostile). */
void tbbt__ns_set_target(struct tbbt__ns_ctx *c, uint32_t id, const struct tbbt_str *s)
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

void tbbt__ns_set_parent(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t parent)
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
void tbbt__ns_place(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, uint32_t id, uint32_t l)
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
    tbbt__ns_link_add(ns, dir, name, id, ns_sighting_time(c, dir, l));
    if (ns_sighting_time(c, dir, l))       /* made by a lost call */
        tbbt__ns_infer(ns, TBBT_NS_INFER_CREATE, dir, name, 0, 0, id);
}

/* A new object named (dir, name) that the model did not know of. */
uint32_t tbbt__ns_new_named(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, int type)
{
    uint32_t l = tbbt__ns_dent_find(c->ns, dir, name);
    uint32_t id = tbbt__ns_obj_new(c->ns, type, ns_sighting_time(c, dir, l));

    tbbt__ns_place(c, dir, name, id, l);
    return id;
}

/* (dir, name) is absent now. */
void tbbt__ns_absent(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name)
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
uint32_t tbbt__ns_present(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, int type)
{
    uint32_t id = tbbt__ns_dent_child(c->ns, dir, name);

    if (!id)
        return tbbt__ns_new_named(c, dir, name, type);
    tbbt__ns_set_type(c->ns, id, type, false);
    return id;
}

/* The name's object was replaced by id (evidence the model had missed). */
void tbbt__ns_rebind(struct tbbt__ns_ctx *c, uint32_t l, uint32_t dir, uint32_t name, uint32_t id)
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
uint32_t tbbt__ns_bind_handle(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, uint32_t ref,
                              const struct tbbt_fattr *a)
{
    struct tbbt_ns *ns = c->ns;
    uint32_t l = tbbt__ns_dent_find(ns, dir, name);
    uint32_t y = l && ns_link_live(ns_link(ns, l)) ? ns_link(ns, l)->child : 0;
    uint32_t x = tbbt__ns_fh_known(ns, ref);

    if (!x && y)
        tbbt__ns_fh_bind(ns, ref, x = y);
    if (!x) {
        x = tbbt__ns_obj_new(ns, TBBT_NS_UNKNOWN, ns_sighting_time(c, dir, l));
        tbbt__ns_fh_bind(ns, ref, x);
    }
    if (a)
        tbbt__ns_learn(c, x, a);
    if (y && x != y)
        tbbt__ns_rebind(c, l, dir, name, x);
    else if (!y)
        tbbt__ns_place(c, dir, name, x, l);
    return x;
}

/* By ID (a trace whose IDs are final): a reply says (dir, name) is object id. */
void tbbt__ns_bind_id(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, uint32_t id)
{
    uint32_t l = tbbt__ns_dent_find(c->ns, dir, name);
    uint32_t y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;

    if (y == id)
        return;
    if (y)
        tbbt__ns_rebind(c, l, dir, name, id);
    else if (tbbt__ns_would_loop(c->ns, dir, id))
        c->ns->st.cycles_refused++;
    else
        tbbt__ns_link_add(c->ns, dir, name, id, c->t);
}

/* A readdir entry without a handle: (dir, name) has fileid in dir's file system. */
uint32_t tbbt__ns_bind_fileid(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, bool have_fsid,
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
        x = tbbt__ns_obj_new(ns, TBBT_NS_UNKNOWN, ns_sighting_time(c, dir, l));
        if (have_fsid)
            tbbt__ns_obj_set_key(ns, x, fsid, fileid);
    }
    if (y)
        tbbt__ns_rebind(c, l, dir, name, x);
    else
        tbbt__ns_place(c, dir, name, x, l);
    return x;
}

/* ---- entry point ----------------------------------------------------------------------------- */

/*
 * The object of handle ref; one the model meets for the first time is placed
 * where the identity scan saw it named first (a LOOKUP, CREATE or READDIRPLUS
 * reply, maybe later in the trace), so that an object whose creating call was
 * lost gets its name, and its creation (a lost call, if its directory was made
 * in the trace), before its first use.
 */
static uint32_t resolve_placed(struct tbbt__ns_ctx *c, uint32_t ref, int depth)
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
    if ((t = ns_sighting_time(c, p, l))) {      /* made in the trace: it started empty */
        ns_obj(ns, x)->create_ns = t;
        ns_obj(ns, x)->flags |= OF_SIZE_KNOWN;
    }
    tbbt__ns_place(c, p, name, x, l);
    return x;
}

/* The object of a handle field, or by ID when the record has no handle. */
static uint32_t rec_object(struct tbbt__ns_ctx *c, int fh_field, uint32_t ref, int id_field,
                           uint64_t id)
{
    uint32_t x = 0;

    if (TBBT_HAS(c->rec, fh_field))
        x = resolve_placed(c, ref, 0);
    else if (TBBT_HAS(c->rec, id_field) && id && id < c->ns->objs.n)
        x = (uint32_t)id;
    ns_set_id(c->rec, id_field, x);
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

static void apply_lowered(void *arg, struct tbbt_ns *ns, struct tbbt_trace_rec *low)
{
    (void)arg;
    tbbt_ns_apply(ns, low);
}

void tbbt_ns_apply(struct tbbt_ns *ns, struct tbbt_trace_rec *rec)
{
    if (rec->prog == TBBT_PROG_NFS4) {
        tbbt_ns_v4_lower(ns, rec, apply_lowered, NULL);
        return;
    }
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
    struct tbbt__ns_ctx c = { .ns = ns, .rec = rec };
    uint64_t t = rec->call_ns ? rec->call_ns : rec->reply_ns;

    if (!ns->mounts_ready)
        tbbt__ns_mounts_prepare(ns);
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
    case NS_OP_ATTR: tbbt__ns_op_attr(&c); break;
    case NS_OP_SETATTR: tbbt__ns_op_setattr(&c); break;
    case NS_OP_WRITE: tbbt__ns_op_write(&c); break;
    case NS_OP_READ: tbbt__ns_op_read(&c); break;
    case NS_OP_READLINK: tbbt__ns_op_readlink(&c); break;
    case NS_OP_LOOKUP: tbbt__ns_op_lookup(&c); break;
    case NS_OP_CREATE: case NS_OP_MKDIR: case NS_OP_SYMLINK: case NS_OP_MKNOD:
        tbbt__ns_op_create(&c);
        break;
    case NS_OP_REMOVE: case NS_OP_RMDIR: tbbt__ns_op_remove(&c); break;
    case NS_OP_RENAME: tbbt__ns_op_rename(&c); break;
    case NS_OP_LINK: tbbt__ns_op_link(&c); break;
    case NS_OP_READDIR: case NS_OP_READDIRPLUS: tbbt__ns_op_readdir(&c); break;
    case NS_OP_MNT: tbbt__ns_op_mnt(&c); break;
    default: break;
    }
    /* STALE: the server does not know fh's object; if it has no name, it is gone */
    if (c.replied && c.status == NFS3ERR_STALE && c.dir && c.op != NS_OP_RENAME &&
        c.op != NS_OP_LINK && c.op != NS_OP_NONE && c.op != NS_OP_MNT)
        tbbt_ns_forget(ns, c.dir, c.t);
    else if (c.ok && c.dir && !tbbt__ns_live_link(ns, c.dir) && !ns->by_id)
        tbbt__ns_mark_used(ns, c.dir);
}
