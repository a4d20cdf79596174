/* SPDX-License-Identifier: MIT */
/*
 * The effect of each operation kind on the namespace model (TBBT paper 3.1,
 * 3.2; NFSv3 RFC 1813 3.3, NFSv2 RFC 1094 2.2): ATTR, SETATTR, READ, WRITE,
 * READLINK, LOOKUP, the four creations, REMOVE/RMDIR, RENAME, LINK and the
 * READDIR listings.  apply.c resolves the record's handles and calls one of
 * these; the evidence helpers they use (place, bind, absent, present) are
 * apply.c's.  MOUNT is apply-mount.c's.
 *
 * A success proves the operation's effect; NOENT, that (dir, name) is
 * absent; EXIST and NOTEMPTY, that it is present.  Without a usable reply
 * a record only gets IDs (and those the model predicts for remove, rmdir
 * and rename).
 */
#include "ns/apply-int.h"

/*
 * Statuses and create modes are rpcgen's (nfs3.x); NFSv2's nfsstat values of
 * the same names are equal (RFC 1094 2.3.1), so they serve both versions.
 */
#include "proto/nfs3.h"

void tbbt__ns_op_attr(struct tbbt__ns_ctx *c)
{
    if (!c->dir)
        return;
    if (TBBT_HAS(c->rec, TBBT_F_OBJ_PRE))
        tbbt__ns_size_evidence(ns_obj(c->ns, c->dir), c->rec->obj_pre.size, true);
    tbbt__ns_learn_field(c, c->dir, TBBT_F_OBJ_ATTR, &c->rec->obj_attr);
}

void tbbt__ns_op_setattr(struct tbbt__ns_ctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    struct ns_obj *o;

    if (c->dir && TBBT_HAS(r, TBBT_F_SATTR) && (r->sattr.mask & TBBT_SA_SIZE) &&
        (!c->replied || c->ok))
        tbbt__ns_size_change(c, c->dir, 0);
    if (c->dir && c->ok && TBBT_HAS(r, TBBT_F_SATTR) && !TBBT_HAS(r, TBBT_F_OBJ_ATTR)) {
        o = ns_obj(c->ns, c->dir);      /* no attributes in the reply: what it set */
        if ((r->sattr.mask & TBBT_SA_MODE) && (o->mode & NS_MODE_KNOWN))
            o->mode = (uint16_t)((r->sattr.mode & NS_MODE_BITS) | NS_MODE_KNOWN);
        if (r->sattr.mask & TBBT_SA_UID)
            o->uid = r->sattr.uid;
        if (r->sattr.mask & TBBT_SA_GID)
            o->gid = r->sattr.gid;
    }
    tbbt__ns_op_attr(c);
}

void tbbt__ns_op_write(struct tbbt__ns_ctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    uint64_t end = 0;

    if (!c->dir)
        return;
    if (TBBT_HAS(r, TBBT_F_OFFSET) && TBBT_HAS(r, TBBT_F_COUNT))
        end = r->offset + (TBBT_HAS(r, TBBT_F_RES_COUNT) ? r->res_count : r->count);
    if (!c->replied || c->ok)
        tbbt__ns_size_change(c, c->dir, end);
    if (c->ok)
        tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_FILE, false);
    tbbt__ns_op_attr(c);
}

void tbbt__ns_op_read(struct tbbt__ns_ctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;

    tbbt__ns_op_attr(c);
    if (!c->ok || !c->dir)
        return;
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_FILE, false);
    if (TBBT_HAS(r, TBBT_F_OFFSET) && TBBT_HAS(r, TBBT_F_RES_COUNT))
        tbbt__ns_size_evidence(ns_obj(c->ns, c->dir), r->offset + r->res_count,
                               TBBT_HAS(r, TBBT_F_EOF) && r->eof && r->res_count > 0);
}

void tbbt__ns_op_readlink(struct tbbt__ns_ctx *c)
{
    tbbt__ns_op_attr(c);
    if (!c->ok || !c->dir)
        return;
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_SYMLINK, false);
    if (TBBT_HAS(c->rec, TBBT_F_TARGET))
        tbbt__ns_set_target(c, c->dir, &c->rec->target);
}

void tbbt__ns_op_lookup(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    const struct tbbt_fattr *a = TBBT_HAS(r, TBBT_F_OBJ_ATTR) ? &r->obj_attr : NULL;
    bool dot = ns_is_dots(&r->name, 1), dotdot = ns_is_dots(&r->name, 2);
    uint32_t x = 0, name = 0;

    if (!c->dir || !TBBT_HAS(r, TBBT_F_NAME))
        return;
    tbbt__ns_learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    tbbt__ns_set_type(c->ns, c->dir, TBBT_NS_DIR, false);
    if (!dot && !dotdot && !(name = tbbt__ns_comp(c, &r->name)) &&
        !(c->ok && TBBT_HAS(r, TBBT_F_NEW_FH)))
        return;
    if (c->ns->by_id && c->ok && name && TBBT_HAS(r, TBBT_F_ID_OBJ)) {
        tbbt__ns_bind_id(c, c->dir, name, (uint32_t)r->id_obj);
        return;
    }
    if (!c->ok || !TBBT_HAS(r, TBBT_F_NEW_FH)) {
        if (name && c->replied && c->status == NFS3ERR_NOENT)
            tbbt__ns_absent(c, c->dir, name);
        else if (name)
            ns_set_id(r, TBBT_F_ID_OBJ, tbbt__ns_dent_child(c->ns, c->dir, name));
        return;
    }
    if (name) {
        x = tbbt__ns_bind_handle(c, c->dir, name, r->new_fh, a);
    } else {
        x = tbbt__ns_fh_resolve(c->ns, r->new_fh);
        if (a)
            tbbt__ns_learn(c, x, a);
        if (dotdot) {
            c->ns->st.dotdot_lookups++;
            tbbt__ns_set_parent(c, c->dir, x);
        }
    }
    ns_set_id(r, TBBT_F_ID_OBJ, x);
}

static int created_type(const struct tbbt__ns_ctx *c)
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
static bool create_keeps(const struct tbbt__ns_ctx *c, uint32_t y)
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
static uint32_t created_object(struct tbbt__ns_ctx *c, uint32_t y, bool *made)
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

void tbbt__ns_op_create(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    uint32_t name, l, y, x;
    bool made;

    if (!c->dir || !TBBT_HAS(r, TBBT_F_NAME))
        return;
    tbbt__ns_learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    name = tbbt__ns_comp(c, &r->name);
    l = name ? tbbt__ns_dent_find(c->ns, c->dir, name) : 0;
    y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;
    if (!c->ok) {
        if (name && c->replied && c->status == NFS3ERR_EXIST)
            y = tbbt__ns_present(c, c->dir, name, TBBT_NS_UNKNOWN);
        ns_set_id(r, TBBT_F_ID_OBJ, y);
        return;
    }
    x = created_object(c, y, &made);
    if (x == y && TBBT_HAS(r, TBBT_F_SATTR) && (r->sattr.mask & TBBT_SA_SIZE))
        tbbt__ns_size_change(c, x, 0);
    tbbt__ns_learn_field(c, x, TBBT_F_OBJ_ATTR, &r->obj_attr);
    tbbt__ns_set_type(c->ns, x, created_type(c), false);
    if (c->op == NS_OP_SYMLINK && TBBT_HAS(r, TBBT_F_TARGET))
        tbbt__ns_set_target(c, x, &r->target);
    ns_set_id(r, TBBT_F_ID_OBJ, x);
    if (!name || x == y)
        return;
    if (y) {
        ns_set_id(r, TBBT_F_ID_OLD, y);
        tbbt__ns_rebind(c, l, c->dir, name, x);
    } else if (made) {
        tbbt__ns_link_add(c->ns, c->dir, name, x, c->t);
    } else {
        /* CREATE found an existing file under a new name */
        tbbt__ns_place(c, c->dir, name, x, l);
    }
}

void tbbt__ns_op_remove(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    bool rmdir = c->op == NS_OP_RMDIR;
    uint32_t name, l, y;

    if (!c->dir || !TBBT_HAS(r, TBBT_F_NAME))
        return;
    tbbt__ns_learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    if (!(name = tbbt__ns_comp(c, &r->name)))
        return;
    l = tbbt__ns_dent_find(c->ns, c->dir, name);
    y = l && ns_link_live(ns_link(c->ns, l)) ? ns_link(c->ns, l)->child : 0;
    if (!c->ok) {
        if (c->replied && c->status == NFS3ERR_NOENT)
            tbbt__ns_absent(c, c->dir, name);
        else if (c->replied && c->status == NFS3ERR_NOTEMPTY && rmdir)
            y = tbbt__ns_present(c, c->dir, name, TBBT_NS_DIR);
        ns_set_id(r, TBBT_F_ID_OBJ, y);
        return;
    }
    if (!y) {
        y = tbbt__ns_new_named(c, c->dir, name, rmdir ? TBBT_NS_DIR : TBBT_NS_UNKNOWN);
        l = tbbt__ns_dent_find(c->ns, c->dir, name);
    }
    if (rmdir)
        tbbt__ns_set_type(c->ns, y, TBBT_NS_DIR, false);
    ns_set_id(r, TBBT_F_ID_OBJ, y);
    if (ns_link(c->ns, l)->child == y && ns_link_live(ns_link(c->ns, l)))
        tbbt__ns_link_end(c->ns, l, c->t);
}

/* A rename with a name that cannot be a component. */
static void rename_hostile(struct tbbt__ns_ctx *c, uint32_t from, uint32_t to)
{
    struct tbbt_ns *ns = c->ns;
    uint32_t l;

    if (from && (l = tbbt__ns_dent_find(ns, c->dir, from)) && ns_link_live(ns_link(ns, l))) {
        ns_set_id(c->rec, TBBT_F_ID_OBJ, ns_link(ns, l)->child);
        tbbt__ns_link_end(ns, l, c->t);     /* moved where no path can follow */
    } else if (to) {
        l = tbbt__ns_dent_find(ns, c->dir2, to);
        if (l && ns_link_live(ns_link(ns, l))) {
            ns_set_id(c->rec, TBBT_F_ID_OLD, ns_link(ns, l)->child);
            tbbt__ns_link_end(ns, l, c->t);
        }
        ns_set_id(c->rec, TBBT_F_ID_OBJ, tbbt__ns_new_named(c, c->dir2, to, TBBT_NS_UNKNOWN));
    }
}

void tbbt__ns_op_rename(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    struct tbbt_ns *ns = c->ns;
    uint32_t from, to, l1 = 0, l2 = 0, x = 0, y = 0;

    if (!c->dir || !c->dir2 || !TBBT_HAS(r, TBBT_F_NAME) || !TBBT_HAS(r, TBBT_F_NAME2))
        return;
    tbbt__ns_learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
    tbbt__ns_learn_field(c, c->dir2, TBBT_F_DIR2_ATTR, &r->dir2_attr);
    from = tbbt__ns_comp(c, &r->name);
    to = tbbt__ns_comp(c, &r->name2);
    if (from && (l1 = tbbt__ns_dent_find(ns, c->dir, from)) && ns_link_live(ns_link(ns, l1)))
        x = ns_link(ns, l1)->child;
    if (to && (l2 = tbbt__ns_dent_find(ns, c->dir2, to)) && ns_link_live(ns_link(ns, l2)))
        y = ns_link(ns, l2)->child;
    if (!c->ok) {
        if (from && c->replied && c->status == NFS3ERR_NOENT)
            tbbt__ns_absent(c, c->dir, from);
        else if (to && c->replied && (c->status == NFS3ERR_EXIST || c->status == NFS3ERR_NOTEMPTY))
            tbbt__ns_present(c, c->dir2, to, TBBT_NS_DIR);
        ns_set_id(r, TBBT_F_ID_OBJ, x);
        if (!c->replied && y != x)
            ns_set_id(r, TBBT_F_ID_OLD, y);
        return;
    }
    if (!from || !to) {
        rename_hostile(c, from, to);
        return;
    }
    if (!x) {
        x = tbbt__ns_new_named(c, c->dir, from, TBBT_NS_UNKNOWN);
        l1 = tbbt__ns_dent_find(ns, c->dir, from);
    }
    ns_set_id(r, TBBT_F_ID_OBJ, x);
    if (x == y || (c->dir == c->dir2 && from == to))
        return;     /* two names of one object: POSIX leaves both */
    if (tbbt__ns_would_loop(ns, c->dir2, x)) {
        ns->st.cycles_refused++;
        return;
    }
    if (y) {
        ns_set_id(r, TBBT_F_ID_OLD, y);
        tbbt__ns_link_end(ns, l2, c->t);
    }
    if (ns_link(ns, l1)->child == x && ns_link_live(ns_link(ns, l1)))
        tbbt__ns_link_move(ns, l1, c->dir2, to, c->t);
}

void tbbt__ns_op_link(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    struct ns_obj *o;
    uint32_t to, l, y;

    if (!c->dir)
        return;
    tbbt__ns_learn_field(c, c->dir, TBBT_F_OBJ_ATTR, &r->obj_attr);
    ns_set_id(r, TBBT_F_ID_OBJ, c->dir);
    if (!c->dir2 || !TBBT_HAS(r, TBBT_F_NAME2))
        return;
    tbbt__ns_learn_field(c, c->dir2, TBBT_F_DIR2_ATTR, &r->dir2_attr);
    if (!(to = tbbt__ns_comp(c, &r->name2)))
        return;
    if (!c->ok) {
        if (c->replied && c->status == NFS3ERR_EXIST)
            tbbt__ns_present(c, c->dir2, to, TBBT_NS_UNKNOWN);
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
        ns_set_id(r, TBBT_F_ID_OLD, y);
        tbbt__ns_rebind(c, l, c->dir2, to, c->dir);
    } else if (tbbt__ns_would_loop(c->ns, c->dir2, c->dir)) {
        c->ns->st.cycles_refused++;
    } else {
        tbbt__ns_link_add(c->ns, c->dir2, to, c->dir, c->t);
    }
}

/* The ".." entry of a readdir: the directory's parent. */
static uint32_t entry_dotdot(struct tbbt__ns_ctx *c, const struct tbbt_entry *e, bool have_fsid,
                             uint64_t fsid)
{
    uint32_t k, p = 0;

    if (e->flags & TBBT_ENT_FH) {
        p = tbbt__ns_fh_resolve(c->ns, e->fh);
        if (e->flags & TBBT_ENT_ATTR)
            tbbt__ns_learn(c, p, &e->attr);
    } else if (have_fsid && (k = tbbt__ns_key_find(c->ns, fsid, e->fileid))) {
        p = ns_key(c->ns, k)->obj;
        if (p && tbbt__ns_obj_gone(c->ns, p))
            p = 0;
    }
    if (p)
        tbbt__ns_set_parent(c, c->dir, p);
    return p;
}

static uint32_t entry_object(struct tbbt__ns_ctx *c, const struct tbbt_entry *e, bool have_fsid,
                             uint64_t fsid)
{
    uint32_t name;

    if (ns_is_dots(&e->name, 1))
        return c->dir;
    if (ns_is_dots(&e->name, 2))
        return entry_dotdot(c, e, have_fsid, fsid);
    if (!(name = tbbt__ns_comp(c, &e->name)))
        return e->flags & TBBT_ENT_FH ? tbbt__ns_fh_resolve(c->ns, e->fh) : 0;
    if (e->flags & TBBT_ENT_FH)
        return tbbt__ns_bind_handle(c, c->dir, name, e->fh,
                                    e->flags & TBBT_ENT_ATTR ? &e->attr : NULL);
    return tbbt__ns_bind_fileid(c, c->dir, name, have_fsid, fsid, e->fileid);
}

void tbbt__ns_op_readdir(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    const struct ns_obj *d;
    bool have_fsid;
    uint64_t fsid;

    if (!c->dir)
        return;
    tbbt__ns_learn_field(c, c->dir, TBBT_F_DIR_ATTR, &r->dir_attr);
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
