/* SPDX-License-Identifier: MIT */
/*
 * What an NFSv4 operation's arguments and results give its trace entry
 * (struct tbbt_op4, trace.h; which operation sets which member:
 * docs/trace-format.md, "NFSv4 operations"), from the rpcgen-decoded arm of
 * nfs_argop4 or nfs_resop4 (RFC 7530 16, RFC 5661 18, RFC 7863).  The walk in
 * decode-nfs4.c calls these with each arm it decoded; WRITE's arguments and
 * READ's and READDIR's results, which it reads field by field, it stores
 * itself.  Handles are interned in the conversion's handle table.
 */
#include "extract/nfs4rec.h"

#include <string.h>

#include "extract/nfs4attr.h"

#define SET(o, m) TBBT_O4_SET(o, m)

/* A component (name) into member dst with bit m; over the trace's bound: marked cut. */
static void set_name(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, struct tbbt_str *dst,
                     int m, const utf8string *s)
{
    if (s->utf8string_len > TBBT_NAME_MAX) {
        o->has |= 1u << TBBT_O4_TRUNC;
        return;
    }
    tbbt_trace_rec_set_str(rec, dst, s->utf8string_val, s->utf8string_len);
    o->has |= (uint64_t)1 << m;
}

static void set_target(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const linktext4 *t)
{
    if (t->linktext4_len > TBBT_PATH_MAX) {
        o->has |= 1u << TBBT_O4_TRUNC;
        return;
    }
    tbbt_trace_rec_set_str(rec, &o->target, t->linktext4_val, t->linktext4_len);
    SET(o, TARGET);
}

/* 16 bytes: the seqid (big-endian, as on the wire) and the 12 bytes of other. */
void tbbt__nfs4rec_stateid(uint8_t *dst, const stateid4 *s)
{
    dst[0] = (uint8_t)(s->seqid >> 24);
    dst[1] = (uint8_t)(s->seqid >> 16);
    dst[2] = (uint8_t)(s->seqid >> 8);
    dst[3] = (uint8_t)s->seqid;
    memcpy(dst + 4, s->other, NFS4_OTHER_SIZE);
}

static void set_stateid(struct tbbt_op4 *o, const stateid4 *s)
{
    tbbt__nfs4rec_stateid(o->stateid, s);
    SET(o, STATEID);
}

static void set_new_stateid(struct tbbt_op4 *o, const stateid4 *s)
{
    tbbt__nfs4rec_stateid(o->new_stateid, s);
    SET(o, NEW_STATEID);
}

/* A handle's reference (an empty handle has no buffer: "" stands for it). */
static uint32_t intern_fh(struct tbbt_fhtab *fht, const nfs_fh4 *fh)
{
    return tbbt_fhtab_intern(fht, fh->nfs_fh4_val ? fh->nfs_fh4_val : "",
                             fh->nfs_fh4_val ? fh->nfs_fh4_len : 0);
}

static uint64_t verf64(const char *v)
{
    uint64_t x;

    memcpy(&x, v, 8);
    return x;
}

/* An open or lock owner: clientid and owner bytes. */
/* Owner bytes p[0..len) (an owner's, or a client id string); over the bound: marked cut. */
static void set_owner_bytes(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const char *p,
                            u_int len)
{
    if (len > TBBT_OP4_OWNER_MAX) {
        o->has |= 1u << TBBT_O4_TRUNC;
        return;
    }
    tbbt_trace_rec_set_str(rec, &o->owner, p, len);
    SET(o, OWNER);
}

static void set_owner(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const state_owner4 *w)
{
    o->clientid = w->clientid;
    SET(o, CLIENTID);
    set_owner_bytes(rec, o, w->owner.owner_val, w->owner.owner_len);
}

static void set_sattr(struct tbbt_op4 *o, const fattr4 *f)
{
    if (!tbbt__nfs4_sattr(f, &o->sattr))
        o->has |= 1u << TBBT_O4_TRUNC;      /* attributes past nfs4.x's: not all kept */
    SET(o, SATTR);
}

void tbbt__nfs4rec_entry(struct tbbt_trace_rec *rec, uint64_t cookie, const utf8string *name,
                         const fattr4 *attrs, struct tbbt_fhtab *fht)
{
    uint8_t fh[NFS4_FHSIZE];
    uint32_t fh_len;
    struct tbbt_fattr a;
    struct tbbt_entry *e;

    if (!(tbbt__nfs4_bitmap(&attrs->attrmask) & UINT64_C(1) << FATTR4_FILEID) ||
        name->utf8string_len > TBBT_NAME_MAX)
        return;
    if (!tbbt__nfs4_fattr_fh(attrs, &a, fh, &fh_len))
        return;
    e = tbbt_trace_rec_add_entry(rec);
    e->cookie = cookie;
    e->fileid = a.fileid;
    tbbt_trace_rec_set_str(rec, &e->name, name->utf8string_val, name->utf8string_len);
    if (tbbt__nfs4_attrs_whole(tbbt__nfs4_bitmap(&attrs->attrmask))) {
        e->attr = a;
        e->flags = TBBT_ENT_ATTR;
    }
    if (fh_len != UINT32_MAX) {
        e->fh = tbbt_fhtab_intern(fht, fh_len ? fh : (const uint8_t *)"", fh_len);
        e->flags |= TBBT_ENT_FH;
    }
    TBBT_SET(rec, TBBT_F_ENTRIES);
}

/* ---- calls ----------------------------------------------------------------------- */

static void open_call(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const OPEN4args *a)
{
    const createhow4 *h = &a->openhow.openflag4_u.how;
    uint32_t mode = 0;

    o->seqid = a->seqid;
    o->share = (a->share_access & 0xffff) | a->share_deny << 16;
    SET(o, SEQID);
    SET(o, SHARE);
    set_owner(rec, o, &a->owner);
    if (a->openhow.opentype == OPEN4_CREATE) {
        mode = (uint32_t)h->mode;
        if (h->mode == UNCHECKED4 || h->mode == GUARDED4)
            set_sattr(o, &h->createhow4_u.createattrs);
        if (h->mode == EXCLUSIVE4) {
            o->verf = verf64(h->createhow4_u.createverf);
            SET(o, VERF);
        }
        if (h->mode == EXCLUSIVE4_1) {
            o->verf = verf64(h->createhow4_u.ch_createboth.cva_verf);
            SET(o, VERF);
            set_sattr(o, &h->createhow4_u.ch_createboth.cva_attrs);
        }
    }
    o->how = (uint32_t)a->openhow.opentype | (mode & 0xf) << 4 | (uint32_t)a->claim.claim << 8;
    SET(o, HOW);
    switch (a->claim.claim) {
    case CLAIM_NULL:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &a->claim.open_claim4_u.file);
        break;
    case CLAIM_DELEGATE_CUR:
        set_name(rec, o, &o->name, TBBT_O4_NAME,
                 &a->claim.open_claim4_u.delegate_cur_info.file);
        set_stateid(o, &a->claim.open_claim4_u.delegate_cur_info.delegate_stateid);
        break;
    case CLAIM_DELEGATE_PREV:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &a->claim.open_claim4_u.file_delegate_prev);
        break;
    case CLAIM_DELEG_CUR_FH:
        set_stateid(o, &a->claim.open_claim4_u.oc_delegate_stateid);
        break;
    default:
        break;
    }
}

static void lock_call(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const LOCK4args *a)
{
    const locker4 *l = &a->locker;

    o->how = (uint32_t)a->locktype | (a->reclaim ? 1u << 7 : 0) |
             (l->new_lock_owner ? 1u << 8 : 0);
    o->offset = a->offset;
    o->length = a->length;
    SET(o, HOW);
    SET(o, OFFSET);
    SET(o, LENGTH);
    if (l->new_lock_owner) {
        const open_to_lock_owner4 *n = &l->locker4_u.open_owner;
        o->seqid = n->open_seqid;
        o->lock_seqid = n->lock_seqid;
        SET(o, SEQID);
        SET(o, LOCK_SEQID);
        set_stateid(o, &n->open_stateid);
        set_owner(rec, o, &n->lock_owner);
    } else {
        o->seqid = l->locker4_u.lock_owner.lock_seqid;
        SET(o, SEQID);
        set_stateid(o, &l->locker4_u.lock_owner.lock_stateid);
    }
}

static void create_call(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const CREATE4args *a)
{
    o->ftype = (uint32_t)a->objtype.type;
    SET(o, FTYPE);
    if (a->objtype.type == NF4LNK)
        set_target(rec, o, &a->objtype.createtype4_u.linkdata);
    set_name(rec, o, &o->name, TBBT_O4_NAME, &a->objname);
    set_sattr(o, &a->createattrs);
}

static void io_call(struct tbbt_op4 *o, uint64_t offset, uint32_t count)
{
    o->offset = offset;
    o->count = count;
    SET(o, OFFSET);
    SET(o, COUNT);
}

/* CREATE_SESSION's flags and fore channel attributes (the back channel: the player
 * asks for none). */
static void create_session_call(struct tbbt_op4 *o, const CREATE_SESSION4args *a)
{
    const channel_attrs4 *c = &a->csa_fore_chan_attrs;

    o->flags = a->csa_flags;
    o->fore_maxreq = c->ca_maxrequestsize;
    o->fore_maxresp = c->ca_maxresponsesize;
    o->fore_maxresp_cached = c->ca_maxresponsesize_cached;
    o->fore_maxops = c->ca_maxoperations;
    o->fore_slots = c->ca_maxrequests;
    SET(o, FLAGS);
    SET(o, FORE_MAXREQ);
    SET(o, FORE_MAXRESP);
    SET(o, FORE_MAXRESP_CACHED);
    SET(o, FORE_MAXOPS);
    SET(o, FORE_SLOTS);
}

/* VERIFY, NVERIFY: the attributes the call compares, and their values. */
static void verify_call(struct tbbt_op4 *o, const fattr4 *f)
{
    o->bitmap = tbbt__nfs4_bitmap(&f->attrmask);
    SET(o, BITMAP);
    if (!tbbt__nfs4_fattr(f, &o->attr))
        o->has |= 1u << TBBT_O4_TRUNC;      /* values that did not decode: not all kept */
    SET(o, ATTR);
}

/* The operations that name only a clientid, a session or a stateid. */
static bool state_call(struct tbbt_op4 *o, const nfs_argop4 *a)
{
    const __typeof__(a->nfs_argop4_u) *u = &a->nfs_argop4_u;

    switch (a->argop) {
    case OP_RENEW:
        o->clientid = u->oprenew.clientid;
        break;
    case OP_DESTROY_CLIENTID:
        o->clientid = u->opdestroy_clientid.dca_clientid;
        break;
    case OP_CREATE_SESSION:
        o->clientid = u->opcreate_session.csa_clientid;
        o->seqid = u->opcreate_session.csa_sequence;
        SET(o, SEQID);
        create_session_call(o, &u->opcreate_session);
        break;
    case OP_DESTROY_SESSION:
        memcpy(o->session, u->opdestroy_session.dsa_sessionid, TBBT_OP4_ID_LEN);
        SET(o, SESSION);
        return true;
    case OP_SEQUENCE:
        memcpy(o->session, u->opsequence.sa_sessionid, TBBT_OP4_ID_LEN);
        o->slot = (uint64_t)u->opsequence.sa_slotid << 32 | u->opsequence.sa_sequenceid;
        SET(o, SESSION);
        SET(o, SLOT);
        return true;
    case OP_DELEGRETURN:
        set_stateid(o, &u->opdelegreturn.deleg_stateid);
        return true;
    case OP_FREE_STATEID:
        set_stateid(o, &u->opfree_stateid.fsa_stateid);
        return true;
    case OP_OPEN_CONFIRM:
        set_stateid(o, &u->opopen_confirm.open_stateid);
        o->seqid = u->opopen_confirm.seqid;
        SET(o, SEQID);
        return true;
    case OP_OPEN_DOWNGRADE:
        set_stateid(o, &u->opopen_downgrade.open_stateid);
        o->seqid = u->opopen_downgrade.seqid;
        o->share = (u->opopen_downgrade.share_access & 0xffff) |
                   u->opopen_downgrade.share_deny << 16;
        SET(o, SEQID);
        SET(o, SHARE);
        return true;
    case OP_CLOSE:
        set_stateid(o, &u->opclose.open_stateid);
        o->seqid = u->opclose.seqid;
        SET(o, SEQID);
        return true;
    case OP_RECLAIM_COMPLETE:
        o->how = u->opreclaim_complete.rca_one_fs != 0;
        SET(o, HOW);
        return true;
    default:
        return false;
    }
    SET(o, CLIENTID);
    return true;
}

void tbbt__nfs4rec_call(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const nfs_argop4 *a,
                        struct tbbt_fhtab *fht)
{
    const __typeof__(a->nfs_argop4_u) *u = &a->nfs_argop4_u;

    if (state_call(o, a))
        return;
    switch (a->argop) {
    case OP_ACCESS:
        o->access = u->opaccess.access;
        SET(o, ACCESS);
        break;
    case OP_COMMIT:
        io_call(o, u->opcommit.offset, u->opcommit.count);
        break;
    case OP_CREATE:
        create_call(rec, o, &u->opcreate);
        break;
    case OP_GETATTR:
        o->bitmap = tbbt__nfs4_bitmap(&u->opgetattr.attr_request);
        SET(o, BITMAP);
        break;
    case OP_LINK:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &u->oplink.newname);
        break;
    case OP_LOCK:
        lock_call(rec, o, &u->oplock);
        break;
    case OP_LOCKT:
        o->how = (uint32_t)u->oplockt.locktype;
        o->offset = u->oplockt.offset;
        o->length = u->oplockt.length;
        SET(o, HOW);
        SET(o, OFFSET);
        SET(o, LENGTH);
        set_owner(rec, o, &u->oplockt.owner);
        break;
    case OP_LOCKU:
        o->how = (uint32_t)u->oplocku.locktype;
        o->seqid = u->oplocku.seqid;
        o->offset = u->oplocku.offset;
        o->length = u->oplocku.length;
        SET(o, HOW);
        SET(o, SEQID);
        SET(o, OFFSET);
        SET(o, LENGTH);
        set_stateid(o, &u->oplocku.lock_stateid);
        break;
    case OP_LOOKUP:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &u->oplookup.objname);
        break;
    case OP_NVERIFY:
        verify_call(o, &u->opnverify.obj_attributes);
        break;
    case OP_VERIFY:
        verify_call(o, &u->opverify.obj_attributes);
        break;
    case OP_OPEN:
        open_call(rec, o, &u->opopen);
        break;
    case OP_PUTFH:
        o->fh = intern_fh(fht, &u->opputfh.object);
        if (u->opputfh.object.nfs_fh4_len > TBBT_FH_MAX)
            o->has |= 1u << TBBT_O4_TRUNC;      /* kept cut to the trace's bound */
        SET(o, FH);
        break;
    case OP_READ:
        set_stateid(o, &u->opread.stateid);
        io_call(o, u->opread.offset, u->opread.count);
        break;
    case OP_READDIR:
        o->cookie = u->opreaddir.cookie;
        o->verf = verf64(u->opreaddir.cookieverf);
        o->count = u->opreaddir.maxcount;
        o->dircount = u->opreaddir.dircount;
        o->bitmap = tbbt__nfs4_bitmap(&u->opreaddir.attr_request);
        SET(o, COOKIE);
        SET(o, VERF);
        SET(o, COUNT);
        SET(o, DIRCOUNT);
        SET(o, BITMAP);
        break;
    case OP_REMOVE:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &u->opremove.target);
        break;
    case OP_RENAME:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &u->oprename.oldname);
        set_name(rec, o, &o->name2, TBBT_O4_NAME2, &u->oprename.newname);
        break;
    case OP_SECINFO:
        set_name(rec, o, &o->name, TBBT_O4_NAME, &u->opsecinfo.name);
        break;
    case OP_SETATTR:
        set_stateid(o, &u->opsetattr.stateid);
        set_sattr(o, &u->opsetattr.obj_attributes);
        break;
    case OP_SETCLIENTID:
        o->verf = verf64(u->opsetclientid.client.verifier);
        o->cb_program = u->opsetclientid.callback.cb_program;
        SET(o, VERF);
        SET(o, CB_PROGRAM);
        set_owner_bytes(rec, o, u->opsetclientid.client.id.id_val,
                        u->opsetclientid.client.id.id_len);
        break;
    case OP_SETCLIENTID_CONFIRM:
        o->clientid = u->opsetclientid_confirm.clientid;
        o->verf = verf64(u->opsetclientid_confirm.setclientid_confirm);
        SET(o, CLIENTID);
        SET(o, VERF);
        break;
    case OP_EXCHANGE_ID:
        o->verf = verf64(u->opexchange_id.eia_clientowner.co_verifier);
        o->flags = u->opexchange_id.eia_flags;
        SET(o, VERF);
        SET(o, FLAGS);
        set_owner_bytes(rec, o, u->opexchange_id.eia_clientowner.co_ownerid.co_ownerid_val,
                        u->opexchange_id.eia_clientowner.co_ownerid.co_ownerid_len);
        break;
    case OP_RELEASE_LOCKOWNER:
        set_owner(rec, o, &u->oprelease_lockowner.lock_owner);
        break;
    default:
        break;
    }
}

/* ---- results --------------------------------------------------------------------- */

void tbbt__nfs4rec_res(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const nfs_resop4 *r,
                       struct tbbt_fhtab *fht)
{
    const __typeof__(r->nfs_resop4_u) *u = &r->nfs_resop4_u;

    o->status = *(const nfsstat4 *)u;       /* every arm starts with its status */
    SET(o, STATUS);
    if (o->status != NFS4_OK)
        return;
    switch (r->resop) {
    case OP_ACCESS:
        o->res_flags = (u->opaccess.ACCESS4res_u.resok4.supported & 0xffff) |
                       u->opaccess.ACCESS4res_u.resok4.access << 16;
        SET(o, RES_FLAGS);
        break;
    case OP_CLOSE:
        set_new_stateid(o, &u->opclose.CLOSE4res_u.open_stateid);
        break;
    case OP_COMMIT:
        o->res_verf = verf64(u->opcommit.COMMIT4res_u.resok4.writeverf);
        SET(o, RES_VERF);
        break;
    case OP_GETATTR:
        if (!tbbt__nfs4_fattr(&u->opgetattr.GETATTR4res_u.resok4.obj_attributes, &o->attr))
            o->has |= 1u << TBBT_O4_TRUNC;
        SET(o, ATTR);
        break;
    case OP_GETFH:
        o->fh = intern_fh(fht, &u->opgetfh.GETFH4res_u.resok4.object);
        SET(o, FH);
        break;
    case OP_LOCK:
        set_new_stateid(o, &u->oplock.LOCK4res_u.resok4.lock_stateid);
        break;
    case OP_LOCKU:
        set_new_stateid(o, &u->oplocku.LOCKU4res_u.lock_stateid);
        break;
    case OP_OPEN:
        set_new_stateid(o, &u->opopen.OPEN4res_u.resok4.stateid);
        o->res_flags = u->opopen.OPEN4res_u.resok4.rflags;
        SET(o, RES_FLAGS);
        break;
    case OP_OPEN_CONFIRM:
        set_new_stateid(o, &u->opopen_confirm.OPEN_CONFIRM4res_u.resok4.open_stateid);
        break;
    case OP_OPEN_DOWNGRADE:
        set_new_stateid(o, &u->opopen_downgrade.OPEN_DOWNGRADE4res_u.resok4.open_stateid);
        break;
    case OP_READLINK:
        set_target(rec, o, &u->opreadlink.READLINK4res_u.resok4.link);
        break;
    case OP_SETCLIENTID:
        o->clientid = u->opsetclientid.SETCLIENTID4res_u.resok4.clientid;
        o->res_verf = verf64(u->opsetclientid.SETCLIENTID4res_u.resok4.setclientid_confirm);
        SET(o, CLIENTID);
        SET(o, RES_VERF);
        break;
    case OP_EXCHANGE_ID:
        o->clientid = u->opexchange_id.EXCHANGE_ID4res_u.eir_resok4.eir_clientid;
        o->seqid = u->opexchange_id.EXCHANGE_ID4res_u.eir_resok4.eir_sequenceid;
        SET(o, CLIENTID);
        SET(o, SEQID);
        break;
    case OP_CREATE_SESSION:
        memcpy(o->session, u->opcreate_session.CREATE_SESSION4res_u.csr_resok4.csr_sessionid,
               TBBT_OP4_ID_LEN);
        SET(o, SESSION);
        break;
    case OP_WRITE:
        o->res_count = u->opwrite.WRITE4res_u.resok4.count;
        o->res_flags = (uint32_t)u->opwrite.WRITE4res_u.resok4.committed;
        o->res_verf = verf64(u->opwrite.WRITE4res_u.resok4.writeverf);
        SET(o, RES_COUNT);
        SET(o, RES_FLAGS);
        SET(o, RES_VERF);
        break;
    default:
        break;
    }
}
