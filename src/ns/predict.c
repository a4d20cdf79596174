/* SPDX-License-Identifier: MIT */
/*
 * "What would this operation return now?" against the namespace model: the
 * query of TBBT's pre-play correction (paper 3.1, Table 2: a create that
 * would find the file existing, a remove that would not find it, an rmdir of
 * a directory that is not empty).  Only outcomes the namespace decides are
 * predicted (NOENT, EXIST, NOTDIR, ISDIR, INVAL, NOTEMPTY, STALE, OK);
 * permissions, space and exclusive-create verifiers are not modelled.  Status
 * numbers are the same in NFSv2 (RFC 1094 2.3.1) and NFSv3 (RFC 1813 2.6).
 */
#include "ns/ns-int.h"


/*
 * Statuses and create modes are rpcgen's (nfs3.x); NFSv2's nfsstat values of
 * the same names are equal (RFC 1094 2.3.1), so they serve both versions.
 */
#include "proto/nfs3.h"

/* The object handle reference ref stands for (no new binding), 0 if unknown. */
static uint32_t handle_obj(const struct tbbt_ns *ns, uint32_t ref)
{
    uint32_t k, x;

    if (ns->by_id || ref >= ns->nh)
        return 0;
    if (ns->hid[ref])
        return ns->hid[ref];
    k = ns->hkey[ref];
    x = k ? ns_key(ns, k)->obj : 0;
    return x && !tbbt__ns_obj_gone(ns, x) ? x : 0;
}

/* The object a record field names: its ID field, else its handle's (no new binding). */
static uint32_t rec_obj(const struct tbbt_ns *ns, const struct tbbt_trace_rec *rec, int id_field,
                        uint64_t id, int fh_field, uint32_t ref)
{
    if (TBBT_HAS(rec, id_field))
        return id && id < ns->objs.n ? (uint32_t)id : 0;
    return TBBT_HAS(rec, fh_field) ? handle_obj(ns, ref) : 0;
}

uint64_t tbbt_ns_rec_dir(const struct tbbt_ns *ns, const struct tbbt_trace_rec *rec,
                         bool second)
{
    return second ? rec_obj(ns, rec, TBBT_F_ID2, rec->id2, TBBT_F_FH2, rec->fh2)
                  : rec_obj(ns, rec, TBBT_F_ID, rec->id, TBBT_F_FH, rec->fh);
}

uint64_t tbbt_ns_handle_obj(const struct tbbt_ns *ns, uint32_t ref)
{
    return handle_obj(ns, ref);
}

static int type_of(const struct tbbt_ns *ns, uint32_t id)
{
    return ns_obj(ns, id)->type;
}

/* 1 and *st when directory d alone decides the outcome (STALE, NOTDIR); -1 unknown d. */
static int dir_check(const struct tbbt_ns *ns, uint32_t d, int32_t *st)
{
    if (!d)
        return -1;
    if (tbbt__ns_obj_gone(ns, d)) {
        *st = NFS3ERR_STALE;
        return 1;
    }
    if (type_of(ns, d) != TBBT_NS_UNKNOWN && type_of(ns, d) != TBBT_NS_DIR) {
        *st = NFS3ERR_NOTDIR;
        return 1;
    }
    return 0;
}

/* Looks (d, name) up; -1 when the name cannot be a component (outcome server-specific). */
static int name_state(const struct tbbt_ns *ns, uint32_t d, const struct tbbt_str *name,
                      uint32_t *child)
{
    uint64_t x = 0;
    int res;

    if (!tbbt_ns_name_ok(name->p, name->len))
        return -1;
    res = tbbt_ns_lookup(ns, d, name->p, name->len, &x);
    *child = (uint32_t)x;
    return res;
}

static int predict_object(const struct tbbt_ns *ns, int op, uint32_t x, int32_t *st)
{
    if (!x)
        return 0;
    if (tbbt__ns_obj_gone(ns, x))
        *st = NFS3ERR_STALE;
    else if ((op == NS_OP_READ || op == NS_OP_WRITE) && type_of(ns, x) == TBBT_NS_DIR)
        *st = NFS3ERR_ISDIR;
    else if (op == NS_OP_READLINK && type_of(ns, x) == TBBT_NS_UNKNOWN)
        return 0;
    else if (op == NS_OP_READLINK && type_of(ns, x) != TBBT_NS_SYMLINK)
        *st = NFS3ERR_INVAL;
    else
        *st = NFS3_OK;
    return 1;
}

static int predict_lookup(const struct tbbt_ns *ns, const struct tbbt_trace_rec *r, uint32_t d,
                          int32_t *st)
{
    uint64_t x;
    int res, rc = dir_check(ns, d, st);

    if (rc)
        return rc > 0;
    if (!TBBT_HAS(r, TBBT_F_NAME) || r->name.len == 0 || memchr(r->name.p, '/', r->name.len) ||
        memchr(r->name.p, '\0', r->name.len))
        return 0;
    res = tbbt_ns_lookup(ns, d, r->name.p, r->name.len, &x);
    if (res == TBBT_NS_UNSURE)
        return 0;
    *st = res == TBBT_NS_PRESENT ? NFS3_OK : NFS3ERR_NOENT;
    return 1;
}

/* A create (or mkdir, symlink, mknod) that finds x under its name. */
static int create_over(const struct tbbt_ns *ns, const struct tbbt_trace_rec *r, int op,
                       uint32_t x, int32_t *st)
{
    if (op == NS_OP_CREATE && TBBT_HAS(r, TBBT_F_CREATEMODE) &&
        r->createmode == EXCLUSIVE)
        return 0;       /* OK again when the verifier matches */
    *st = op == NS_OP_CREATE && type_of(ns, x) != TBBT_NS_DIR &&
                  !(TBBT_HAS(r, TBBT_F_CREATEMODE) && r->createmode == GUARDED)
              ? NFS3_OK : NFS3ERR_EXIST;
    return 1;
}

/*
 * An rmdir of x or a rename over x: NOTEMPTY when it holds names, else OK (a
 * name nobody has seen is not in the image built from the model).
 */
static int dir_empty(const struct tbbt_ns *ns, uint32_t x, int32_t *st)
{
    *st = ns_obj(ns, x)->nchild ? NFS3ERR_NOTEMPTY : NFS3_OK;
    return 1;
}

/* A remove or rmdir of x. */
static int remove_of(const struct tbbt_ns *ns, int op, uint32_t x, int32_t *st)
{
    if (op == NS_OP_REMOVE) {
        *st = type_of(ns, x) == TBBT_NS_DIR ? NFS3ERR_ISDIR : NFS3_OK;
        return 1;
    }
    if (type_of(ns, x) != TBBT_NS_UNKNOWN && type_of(ns, x) != TBBT_NS_DIR) {
        *st = NFS3ERR_NOTDIR;
        return 1;
    }
    return dir_empty(ns, x, st);
}

/*
 * A create or remove of (d, r->name): d's check, then the name's state; an
 * absent name is OK to create and NOENT to remove.
 */
static int predict_named(const struct tbbt_ns *ns, const struct tbbt_trace_rec *r, int op,
                         uint32_t d, int32_t *st)
{
    bool remove = op == NS_OP_REMOVE || op == NS_OP_RMDIR;
    uint32_t x;
    int res, rc = dir_check(ns, d, st);

    if (rc)
        return rc > 0;
    if (!TBBT_HAS(r, TBBT_F_NAME) || (res = name_state(ns, d, &r->name, &x)) < 0 ||
        res == TBBT_NS_UNSURE)
        return 0;
    if (res == TBBT_NS_ABSENT) {
        *st = remove ? NFS3ERR_NOENT : NFS3_OK;
        return 1;
    }
    return remove ? remove_of(ns, op, x, st) : create_over(ns, r, op, x, st);
}

/* Rename of x over y (0: nothing there, -1: unknown). */
static int predict_replace(const struct tbbt_ns *ns, uint32_t x, int ystate, uint32_t y,
                           int32_t *st)
{
    bool xdir = type_of(ns, x) == TBBT_NS_DIR;

    if (ystate == TBBT_NS_UNSURE)
        return 0;
    *st = NFS3_OK;
    if (ystate == TBBT_NS_ABSENT || x == y)
        return 1;
    if (type_of(ns, x) == TBBT_NS_UNKNOWN || type_of(ns, y) == TBBT_NS_UNKNOWN)
        return 0;
    if (xdir && type_of(ns, y) != TBBT_NS_DIR)
        *st = NFS3ERR_NOTDIR;
    else if (!xdir && type_of(ns, y) == TBBT_NS_DIR)
        *st = NFS3ERR_ISDIR;
    else if (xdir)
        return dir_empty(ns, y, st);
    return 1;
}

static int predict_rename(const struct tbbt_ns *ns, const struct tbbt_trace_rec *r, uint32_t d,
                          uint32_t d2, int32_t *st)
{
    uint32_t x, y;
    int res, res2, rc = dir_check(ns, d, st);

    if (rc || (rc = dir_check(ns, d2, st)))
        return rc > 0;
    if (!TBBT_HAS(r, TBBT_F_NAME) || !TBBT_HAS(r, TBBT_F_NAME2) ||
        (res = name_state(ns, d, &r->name, &x)) < 0 ||
        (res2 = name_state(ns, d2, &r->name2, &y)) < 0 || res == TBBT_NS_UNSURE)
        return 0;
    if (res == TBBT_NS_ABSENT) {
        *st = NFS3ERR_NOENT;
        return 1;
    }
    if (type_of(ns, x) == TBBT_NS_DIR && tbbt__ns_is_under(ns, d2, x)) {
        *st = NFS3ERR_INVAL;
        return 1;
    }
    return predict_replace(ns, x, res2, y, st);
}

static int predict_link(const struct tbbt_ns *ns, const struct tbbt_trace_rec *r, uint32_t x,
                        uint32_t d2, int32_t *st)
{
    uint32_t y;
    int res, rc;

    if (!x)
        return 0;
    if (tbbt__ns_obj_gone(ns, x)) {
        *st = NFS3ERR_STALE;
        return 1;
    }
    if ((rc = dir_check(ns, d2, st)))
        return rc > 0;
    if (!TBBT_HAS(r, TBBT_F_NAME2) || (res = name_state(ns, d2, &r->name2, &y)) < 0 ||
        res == TBBT_NS_UNSURE || type_of(ns, x) == TBBT_NS_DIR)
        return 0;
    *st = res == TBBT_NS_PRESENT ? NFS3ERR_EXIST : NFS3_OK;
    return 1;
}

int tbbt_ns_predict(const struct tbbt_ns *ns, const struct tbbt_trace_rec *rec,
                    int32_t *status)
{
    int op = tbbt__ns_op(rec), rc;
    uint32_t d = rec_obj(ns, rec, TBBT_F_ID, rec->id, TBBT_F_FH, rec->fh);
    uint32_t d2 = rec_obj(ns, rec, TBBT_F_ID2, rec->id2, TBBT_F_FH2, rec->fh2);

    switch (op) {
    case NS_OP_ATTR: case NS_OP_SETATTR: case NS_OP_READ: case NS_OP_WRITE:
    case NS_OP_READLINK:
        return predict_object(ns, op, d, status);
    case NS_OP_LOOKUP:
        return predict_lookup(ns, rec, d, status);
    case NS_OP_CREATE: case NS_OP_MKDIR: case NS_OP_SYMLINK: case NS_OP_MKNOD:
    case NS_OP_REMOVE: case NS_OP_RMDIR:
        return predict_named(ns, rec, op, d, status);
    case NS_OP_RENAME:
        return predict_rename(ns, rec, d, d2, status);
    case NS_OP_LINK:
        return predict_link(ns, rec, d, d2, status);
    case NS_OP_READDIR: case NS_OP_READDIRPLUS:
        rc = dir_check(ns, d, status);
        if (rc == 0)
            *status = NFS3_OK;
        return rc >= 0;
    default:
        return 0;
    }
}
