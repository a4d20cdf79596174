/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario's operations (nfs4-scenario-int.h): one helper per COMPOUND operation
 * that fills its arguments (RFC 7530 section 16, RFC 8881 section 18) and appends it to
 * a COMPOUND, copying names and data into the COMPOUND's memory; and the readers of the
 * GETFH and GETATTR results.  The 4.0 seqids come from the client (the caller bumps
 * them after the reply, nfs4-scenario-state.c); on 4.1+ they are 0, as RFC 8881
 * section 8.13 asks, and OPEN declines delegations (OPEN4_SHARE_ACCESS_WANT_NO_DELEG).
 */
#include <string.h>

#include "nfs4-scenario-int.h"

static void set_name(struct c4 *c, component4 *out, const char *name)
{
    out->utf8string_len = (u_int)strlen(name);
    out->utf8string_val = n4_c4_keep(c, name, strlen(name) + 1);
}

static void set_owner(struct c4 *c, state_owner4 *o, const char *name)
{
    o->clientid = c->cl->clientid;
    o->owner.owner_len = (u_int)strlen(name);
    o->owner.owner_val = n4_c4_keep(c, name, strlen(name) + 1);
}

static seqid4 seqid(const struct client *cl, seqid4 v)
{
    return cl->minor == 0 ? v : 0;
}

void n4_putrootfh(struct c4 *c)
{
    n4_c4_add(c, OP_PUTROOTFH);
}

void n4_putfh(struct c4 *c, const struct n4fh *fh)
{
    PUTFH4args *a = &n4_c4_add(c, OP_PUTFH)->nfs_argop4_u.opputfh;

    a->object.nfs_fh4_len = fh->len;
    a->object.nfs_fh4_val = n4_c4_keep(c, fh->data, fh->len);
}

void n4_getfh(struct c4 *c)
{
    n4_c4_add(c, OP_GETFH);
}

void n4_getattr(struct c4 *c)
{
    n4_attr_request(c, &n4_c4_add(c, OP_GETATTR)->nfs_argop4_u.opgetattr.attr_request);
}

void n4_lookup(struct c4 *c, const char *name)
{
    set_name(c, &n4_c4_add(c, OP_LOOKUP)->nfs_argop4_u.oplookup.objname, name);
}

void n4_lookupp(struct c4 *c)
{
    n4_c4_add(c, OP_LOOKUPP);
}

void n4_access(struct c4 *c, uint32_t bits)
{
    n4_c4_add(c, OP_ACCESS)->nfs_argop4_u.opaccess.access = bits;
}

void n4_savefh(struct c4 *c)
{
    n4_c4_add(c, OP_SAVEFH);
}

void n4_restorefh(struct c4 *c)
{
    n4_c4_add(c, OP_RESTOREFH);
}

void n4_create(struct c4 *c, nfs_ftype4 type, const char *name, const char *target)
{
    CREATE4args *a = &n4_c4_add(c, OP_CREATE)->nfs_argop4_u.opcreate;
    struct n4attr mode = { .mask = { 0, 1u << (FATTR4_MODE % 32) }, .mode = 0755 };

    a->objtype.type = type;
    if (type == NF4LNK) {
        a->objtype.createtype4_u.linkdata.linktext4_len = (u_int)strlen(target);
        a->objtype.createtype4_u.linkdata.linktext4_val =
            n4_c4_keep(c, target, strlen(target) + 1);
    }
    set_name(c, &a->objname, name);
    n4_attr_encode(c, &mode, &a->createattrs);
}

void n4_remove(struct c4 *c, const char *name)
{
    set_name(c, &n4_c4_add(c, OP_REMOVE)->nfs_argop4_u.opremove.target, name);
}

void n4_rename(struct c4 *c, const char *from, const char *to)
{
    RENAME4args *a = &n4_c4_add(c, OP_RENAME)->nfs_argop4_u.oprename;

    set_name(c, &a->oldname, from);
    set_name(c, &a->newname, to);
}

void n4_link(struct c4 *c, const char *name)
{
    set_name(c, &n4_c4_add(c, OP_LINK)->nfs_argop4_u.oplink.newname, name);
}

void n4_readlink(struct c4 *c)
{
    n4_c4_add(c, OP_READLINK);
}

void n4_readdir(struct c4 *c, nfs_cookie4 cookie, const verifier4 verf, count4 dircount,
                count4 maxcount)
{
    READDIR4args *a = &n4_c4_add(c, OP_READDIR)->nfs_argop4_u.opreaddir;
    uint32_t m[1] = { (1u << FATTR4_TYPE) | (1u << FATTR4_FILEID) };

    a->cookie = cookie;
    memcpy(a->cookieverf, verf, sizeof(a->cookieverf));
    a->dircount = dircount;
    a->maxcount = maxcount;
    a->attr_request.bitmap4_len = 1;
    a->attr_request.bitmap4_val = n4_c4_keep(c, m, sizeof(m));
}

/* The common part of every OPEN: seqid, share modes and the open owner. */
static OPEN4args *open_args(struct c4 *c, uint32_t access)
{
    OPEN4args *a = &n4_c4_add(c, OP_OPEN)->nfs_argop4_u.opopen;
    struct client *cl = c->cl;

    a->seqid = seqid(cl, cl->oo_seqid);
    a->share_access = access | (cl->minor > 0 ? OPEN4_SHARE_ACCESS_WANT_NO_DELEG : 0);
    a->share_deny = OPEN4_SHARE_DENY_NONE;
    set_owner(c, &a->owner, cl->oowner);
    return a;
}

void n4_open_create(struct c4 *c, const char *name, createmode4 how)
{
    OPEN4args *a = open_args(c, OPEN4_SHARE_ACCESS_BOTH);
    createhow4 *h = &a->openhow.openflag4_u.how;
    struct n4attr mode = { .mask = { 0, 1u << (FATTR4_MODE % 32) }, .mode = 0644 };
    verifier4 v;

    a->openhow.opentype = OPEN4_CREATE;
    h->mode = how;
    memcpy(v, c->cl->verf, sizeof(v));
    v[0] ^= (char)strlen(name);
    v[7] ^= name[0];
    if (how == UNCHECKED4 || how == GUARDED4) {
        n4_attr_encode(c, &mode, &h->createhow4_u.createattrs);
    } else if (how == EXCLUSIVE4) {
        memcpy(h->createhow4_u.createverf, v, sizeof(v));
    } else {
        memcpy(h->createhow4_u.ch_createboth.cva_verf, v, sizeof(v));
        n4_attr_encode(c, &mode, &h->createhow4_u.ch_createboth.cva_attrs);
    }
    a->claim.claim = CLAIM_NULL;
    set_name(c, &a->claim.open_claim4_u.file, name);
}

void n4_open_nocreate(struct c4 *c, const char *name, uint32_t access)
{
    OPEN4args *a = open_args(c, access);

    a->openhow.opentype = OPEN4_NOCREATE;
    a->claim.claim = CLAIM_NULL;
    set_name(c, &a->claim.open_claim4_u.file, name);
}

void n4_open_fh(struct c4 *c, uint32_t access)
{
    OPEN4args *a = open_args(c, access);

    a->openhow.opentype = OPEN4_NOCREATE;
    a->claim.claim = CLAIM_FH;
}

void n4_open_confirm(struct c4 *c, const stateid4 *sid)
{
    OPEN_CONFIRM4args *a = &n4_c4_add(c, OP_OPEN_CONFIRM)->nfs_argop4_u.opopen_confirm;

    a->open_stateid = *sid;
    a->seqid = c->cl->oo_seqid;
}

void n4_close(struct c4 *c, const stateid4 *sid)
{
    CLOSE4args *a = &n4_c4_add(c, OP_CLOSE)->nfs_argop4_u.opclose;

    a->seqid = seqid(c->cl, c->cl->oo_seqid);
    a->open_stateid = *sid;
}

void n4_write(struct c4 *c, const stateid4 *sid, uint64_t off, uint32_t len, stable_how4 how)
{
    WRITE4args *a = &n4_c4_add(c, OP_WRITE)->nfs_argop4_u.opwrite;

    a->stateid = *sid;
    a->offset = off;
    a->stable = how;
    a->data.data_len = len;
    a->data.data_val = n4_c4_keep(c, NULL, len);
    n4_pattern(a->data.data_val, off, len);
}

void n4_read(struct c4 *c, const stateid4 *sid, uint64_t off, uint32_t len)
{
    READ4args *a = &n4_c4_add(c, OP_READ)->nfs_argop4_u.opread;

    a->stateid = *sid;
    a->offset = off;
    a->count = len;
}

void n4_commit(struct c4 *c)
{
    n4_c4_add(c, OP_COMMIT);    /* offset 0, count 0: the whole file */
}

void n4_setattr(struct c4 *c, const stateid4 *sid, const struct n4attr *a)
{
    SETATTR4args *s = &n4_c4_add(c, OP_SETATTR)->nfs_argop4_u.opsetattr;

    s->stateid = *sid;
    n4_attr_encode(c, a, &s->obj_attributes);
}

void n4_verify(struct c4 *c, bool negate, const struct n4attr *a)
{
    nfs_argop4 *op = n4_c4_add(c, negate ? OP_NVERIFY : OP_VERIFY);

    if (negate)
        n4_attr_encode(c, a, &op->nfs_argop4_u.opnverify.obj_attributes);
    else
        n4_attr_encode(c, a, &op->nfs_argop4_u.opverify.obj_attributes);
}

static LOCK4args *lock_args(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len)
{
    LOCK4args *a = &n4_c4_add(c, OP_LOCK)->nfs_argop4_u.oplock;

    a->locktype = type;
    a->reclaim = FALSE;
    a->offset = off;
    a->length = len;
    return a;
}

void n4_lock_new(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len,
                 const stateid4 *open)
{
    LOCK4args *a = lock_args(c, type, off, len);
    open_to_lock_owner4 *o = &a->locker.locker4_u.open_owner;

    a->locker.new_lock_owner = TRUE;
    o->open_seqid = seqid(c->cl, c->cl->oo_seqid);
    o->open_stateid = *open;
    o->lock_seqid = seqid(c->cl, c->cl->lo_seqid);
    set_owner(c, &o->lock_owner, c->cl->lowner);
}

void n4_lock_existing(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len,
                      const stateid4 *lock)
{
    LOCK4args *a = lock_args(c, type, off, len);

    a->locker.new_lock_owner = FALSE;
    a->locker.locker4_u.lock_owner.lock_stateid = *lock;
    a->locker.locker4_u.lock_owner.lock_seqid = seqid(c->cl, c->cl->lo_seqid);
}

void n4_lockt(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len)
{
    LOCKT4args *a = &n4_c4_add(c, OP_LOCKT)->nfs_argop4_u.oplockt;

    a->locktype = type;
    a->offset = off;
    a->length = len;
    set_owner(c, &a->owner, c->cl->towner);
}

void n4_locku(struct c4 *c, uint64_t off, uint64_t len, const stateid4 *lock)
{
    LOCKU4args *a = &n4_c4_add(c, OP_LOCKU)->nfs_argop4_u.oplocku;

    a->locktype = WRITE_LT;
    a->seqid = seqid(c->cl, c->cl->lo_seqid);
    a->lock_stateid = *lock;
    a->offset = off;
    a->length = len;
}

void n4_secinfo_no_name(struct c4 *c)
{
    n4_c4_add(c, OP_SECINFO_NO_NAME)->nfs_argop4_u.opsecinfo_no_name = SECINFO_STYLE4_CURRENT_FH;
}

/* ------------------------------------------------------------------ results */

void n4_res_fh(struct c4 *c, u_int i, struct n4fh *fh)
{
    nfs_resop4 *r = n4_c4_res(c, i);
    const nfs_fh4 *h = &r->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;

    g_assert(r->resop == OP_GETFH);
    if (h->nfs_fh4_len == 0 || h->nfs_fh4_len > N4_FHMAX)
        n4_die("client %d: %s: GETFH returned a handle of %u bytes", c->cl->index, c->what,
               h->nfs_fh4_len);
    fh->len = h->nfs_fh4_len;
    memcpy(fh->data, h->nfs_fh4_val, fh->len);
}

void n4_res_attr(struct c4 *c, u_int i, struct n4attr *a)
{
    nfs_resop4 *r = n4_c4_res(c, i);

    g_assert(r->resop == OP_GETATTR);
    if (!n4_attr_decode(&r->nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes, a))
        n4_die("client %d: %s: malformed GETATTR attributes", c->cl->index, c->what);
}
