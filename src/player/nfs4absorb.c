/* SPDX-License-Identifier: MIT */
/*
 * A live NFSv4 COMPOUND reply absorbed into the replay state (nfs4build.h): the
 * session slot released (RFC 8881 2.10.6.1: advanced when SEQUENCE succeeded), 4.0
 * owner seqids moved (RFC 7530 9.1.7), and, when the reply is final (no DELAY, GRACE
 * or dead session to retry), the traced values learned (handles from GETFH, stateids
 * from OPEN/OPEN_CONFIRM/OPEN_DOWNGRADE/CLOSE/LOCK/LOCKU, client ids from
 * SETCLIENTID/EXCHANGE_ID, sessions from CREATE_SESSION) and each operation's status
 * compared with the traced one.  Also the result-by-result XDR routine of the reply.
 */
#include "player/nfs4build.h"

#include <stdlib.h>
#include <string.h>

static nfsstat4 res_status(const nfs_resop4 *r)
{
    return *(const nfsstat4 *)&r->nfs_resop4_u;  /* every arm starts with its status */
}

/* ------------------------------------------------------------------ XDR */

static bool_t res_array(XDR *x, COMPOUND4res *res)
{
    u_int n = res->resarray.resarray_len;
    nfs_resop4 *v;

    if (!xdr_u_int(x, &n) || n > NFS4_MAXOPS)
        return FALSE;
    if (x->x_op == XDR_ENCODE) {
        for (u_int i = 0; i < n; i++)
            if (!xdr_nfs_resop4(x, &res->resarray.resarray_val[i]))
                return FALSE;
        return TRUE;
    }
    v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return FALSE;
    res->resarray.resarray_val = v;
    res->resarray.resarray_len = 0;
    for (u_int i = 0; i < n; i++) {
        if (!xdr_nfs_resop4(x, &v[i])) {
            xdr_free((xdrproc_t)xdr_nfs_resop4, (char *)&v[i]);
            return FALSE;
        }
        res->resarray.resarray_len = i + 1;
    }
    return TRUE;
}

bool_t tbbt_nfs4_xdr_res(XDR *x, COMPOUND4res *res)
{
    if (!xdr_nfsstat4(x, &res->status) || !xdr_utf8str_cs(x, &res->tag))
        return FALSE;
    if (x->x_op != XDR_FREE)
        return res_array(x, res);
    for (u_int i = 0; i < res->resarray.resarray_len; i++)
        xdr_nfs_resop4(x, &res->resarray.resarray_val[i]);
    free(res->resarray.resarray_val);
    res->resarray.resarray_val = NULL;
    res->resarray.resarray_len = 0;
    return TRUE;
}

/* ------------------------------------------------------------------ live effects */

static bool seqid_op(uint32_t op)
{
    return op == OP_OPEN || op == OP_OPEN_CONFIRM || op == OP_OPEN_DOWNGRADE ||
           op == OP_CLOSE || op == OP_LOCK || op == OP_LOCKU;
}

static void bump(struct tbbt_nfs4_owner *w, bool live)
{
    if (!w)
        return;
    if (live)
        w->live_next++;
    else
        w->traced_next++;
}

/* The owners of a seqid-mutating operation move on when its status says so. */
static void owner_effects(const struct tbbt_nfs4_opaux *x, uint32_t op, nfsstat4 status,
                          bool live)
{
    if (!seqid_op(op) || !tbbt_nfs4_seqid_bumps(status))
        return;
    bump(x->owner, live);
    bump(x->owner2, live);
}

static void live_effects(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                         const struct tbbt_nfs4_call *call, const COMPOUND4res *res)
{
    for (u_int i = 0; i < res->resarray.resarray_len && i < call->n; i++) {
        const nfs_resop4 *r = &res->resarray.resarray_val[i];
        owner_effects(&call->aux[i], r->resop, res_status(r), true);
        if (r->resop == OP_CREATE_SESSION && res_status(r) == NFS4_OK) {
            struct tbbt_nfs4_client *c = tbbt_nfs4_client_get(st, rec->ops[i].clientid, false);
            if (c)
                c->cs_seq++;
        }
    }
}

static void release_slot(struct tbbt_nfs4_call *call, const COMPOUND4res *res)
{
    bool ok = res->resarray.resarray_len > 0 &&
              res->resarray.resarray_val[0].resop == OP_SEQUENCE &&
              res_status(&res->resarray.resarray_val[0]) == NFS4_OK;

    if (call->slotted)
        tbbt_nfs4_slot_release(call->sess, call->slot, ok);
    call->slotted = false;
}

static int32_t traced_status(const struct tbbt_trace_rec *rec, u_int i)
{
    if (i >= rec->n_ops || !TBBT_O4_HAS(&rec->ops[i], STATUS))
        return TBBT_NFS4_NOSTATUS;
    return (int32_t)rec->ops[i].status;
}

static enum tbbt_nfs4_verdict verdict(const struct tbbt_trace_rec *rec, const COMPOUND4res *res)
{
    for (u_int i = 0; i < res->resarray.resarray_len; i++) {
        const nfs_resop4 *r = &res->resarray.resarray_val[i];
        nfsstat4 s = res_status(r);
        if ((int32_t)s == traced_status(rec, i))
            continue;
        if (s == NFS4ERR_DELAY || s == NFS4ERR_GRACE)
            return TBBT_NFS4_RETRY;
        if (i == 0 && r->resop == OP_SEQUENCE &&
            (s == NFS4ERR_BADSESSION || s == NFS4ERR_DEADSESSION))
            return TBBT_NFS4_RESESSION;
    }
    return TBBT_NFS4_DONE;
}

/* ------------------------------------------------------------------ learning */

static void learn_readdir(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_opaux *x,
                          const READDIR4resok *ok)
{
    const entry4 *e = ok->reply.entries;
    uint64_t cookie = 0;

    if (!x->cur_known)
        return;
    for (; e; e = e->nextentry)
        cookie = e->cookie;
    tbbt_nfs4_dir_note(st, x->cur, cookie, ok->cookieverf);
}

static void learn_client(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                         const struct tbbt_op4 *o, const nfs_resop4 *r)
{
    struct tbbt_nfs4_client *c;

    if (!TBBT_O4_HAS(o, CLIENTID))
        return;
    c = tbbt_nfs4_client_get(st, o->clientid, true);
    c->minor = rec->minor;
    if (r->resop == OP_SETCLIENTID) {
        const SETCLIENTID4resok *ok = &r->nfs_resop4_u.opsetclientid.SETCLIENTID4res_u.resok4;
        c->live = ok->clientid;
        memcpy(c->confirm, ok->setclientid_confirm, NFS4_VERIFIER_SIZE);
        c->traced_confirm = o->res_verf;
    } else {
        const EXCHANGE_ID4resok *ok =
            &r->nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4;
        c->live = ok->eir_clientid;
        c->cs_seq = ok->eir_sequenceid;
    }
}

static void learn_sid(struct tbbt_nfs4_state *st, const struct tbbt_op4 *o,
                      const struct tbbt_nfs4_opaux *x, const stateid4 *live)
{
    struct tbbt_nfs4_owner *w = x->owner;

    if (!TBBT_O4_HAS(o, NEW_STATEID))
        return;
    if (o->op == OP_LOCK && ((o->how >> 8) & 1))
        w = x->owner2;
    tbbt_nfs4_sid_learn(st, o->new_stateid, live, w);
}

static void learn_op(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                     const struct tbbt_nfs4_call *call, u_int i, const nfs_resop4 *r,
                     struct tbbt_nfs4_outcome *out)
{
    const struct tbbt_op4 *o = &rec->ops[i];
    const __typeof__(r->nfs_resop4_u) *u = &r->nfs_resop4_u;

    switch (r->resop) {
    case OP_GETFH:
        if (TBBT_O4_HAS(o, FH))
            tbbt_nfs4_fh_learn(st, o->fh, u->opgetfh.GETFH4res_u.resok4.object.nfs_fh4_val,
                               u->opgetfh.GETFH4res_u.resok4.object.nfs_fh4_len);
        break;
    case OP_OPEN:
        learn_sid(st, o, &call->aux[i], &u->opopen.OPEN4res_u.resok4.stateid);
        if (TBBT_O4_HAS(o, RES_FLAGS) &&
            ((o->res_flags ^ u->opopen.OPEN4res_u.resok4.rflags) & OPEN4_RESULT_CONFIRM))
            out->confirm_differs++;
        break;
    case OP_OPEN_CONFIRM:
        learn_sid(st, o, &call->aux[i], &u->opopen_confirm.OPEN_CONFIRM4res_u.resok4.open_stateid);
        break;
    case OP_OPEN_DOWNGRADE:
        learn_sid(st, o, &call->aux[i],
                  &u->opopen_downgrade.OPEN_DOWNGRADE4res_u.resok4.open_stateid);
        break;
    case OP_CLOSE:
        learn_sid(st, o, &call->aux[i], &u->opclose.CLOSE4res_u.open_stateid);
        break;
    case OP_LOCK:
        learn_sid(st, o, &call->aux[i], &u->oplock.LOCK4res_u.resok4.lock_stateid);
        break;
    case OP_LOCKU:
        learn_sid(st, o, &call->aux[i], &u->oplocku.LOCKU4res_u.lock_stateid);
        break;
    case OP_SETCLIENTID:
    case OP_EXCHANGE_ID:
        learn_client(st, rec, o, r);
        break;
    case OP_CREATE_SESSION:
        if (TBBT_O4_HAS(o, SESSION) && TBBT_O4_HAS(o, CLIENTID))
            tbbt_nfs4_session_add(
                st, o->session, (const uint8_t *)u->opcreate_session.CREATE_SESSION4res_u
                                    .csr_resok4.csr_sessionid,
                u->opcreate_session.CREATE_SESSION4res_u.csr_resok4.csr_fore_chan_attrs
                    .ca_maxrequests,
                o->clientid);
        break;
    case OP_DESTROY_SESSION:
        if (TBBT_O4_HAS(o, SESSION))
            tbbt_nfs4_session_forget(st, o->session);
        break;
    case OP_RECLAIM_COMPLETE:
        if (call->sess) {
            struct tbbt_nfs4_client *c =
                tbbt_nfs4_client_get(st, call->sess->traced_clientid, false);
            if (c)
                c->reclaim_complete = true;
        }
        break;
    case OP_READDIR:
        learn_readdir(st, &call->aux[i], &u->opreaddir.READDIR4res_u.resok4);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ comparing */

static void mismatch(struct tbbt_nfs4_outcome *out, uint32_t op, int32_t traced, int32_t live)
{
    if (out->n_mismatch < TBBT_NFS4_MISMATCH_MAX)
        out->mismatch[out->n_mismatch] = (struct tbbt_nfs4_mismatch){ op, traced, live };
    out->n_mismatch++;
}

static void compare(const struct tbbt_trace_rec *rec, const COMPOUND4res *res,
                    struct tbbt_nfs4_outcome *out)
{
    u_int n_live = res->resarray.resarray_len;
    bool cut = (rec->flags & (TBBT_RF_REPLY_TRUNC | TBBT_RF_REPLY_BAD)) != 0;
    u_int n = rec->n_ops > n_live ? rec->n_ops : n_live;

    if (!(rec->flags & TBBT_RF_REPLY))
        return;
    for (u_int i = 0; i < n; i++) {
        int32_t t = traced_status(rec, i);
        int32_t l = i < n_live ? (int32_t)res_status(&res->resarray.resarray_val[i])
                               : TBBT_NFS4_NOSTATUS;
        uint32_t op = i < rec->n_ops ? rec->ops[i].op : res->resarray.resarray_val[i].resop;
        if (t == l || (cut && (t == TBBT_NFS4_NOSTATUS || l == TBBT_NFS4_NOSTATUS)))
            continue;
        mismatch(out, op, t, l);
    }
}

/* The delegations the live OPENs of res were granted (the player declines them: none are
 * expected), each with the handle the next GETFH returned. */
static void granted(const COMPOUND4res *res, struct tbbt_nfs4_outcome *out)
{
    u_int n = res->resarray.resarray_len;
    for (u_int i = 0; i < n; i++) {
        const nfs_resop4 *r = &res->resarray.resarray_val[i];
        if (r->resop != OP_OPEN || r->nfs_resop4_u.opopen.status != NFS4_OK)
            continue;
        const open_delegation4 *d = &r->nfs_resop4_u.opopen.OPEN4res_u.resok4.delegation;
        if (d->delegation_type != OPEN_DELEGATE_READ &&
            d->delegation_type != OPEN_DELEGATE_WRITE)
            continue;
        if (out->n_deleg++ >= TBBT_NFS4_DELEG_MAX)
            continue;
        struct tbbt_nfs4_deleg *g = &out->deleg[out->n_deleg - 1];
        memset(g, 0, sizeof(*g));
        g->stateid = d->delegation_type == OPEN_DELEGATE_READ
                     ? d->open_delegation4_u.read.stateid : d->open_delegation4_u.write.stateid;
        for (u_int j = i + 1; j < n; j++) {
            const nfs_resop4 *f = &res->resarray.resarray_val[j];
            if (f->resop == OP_GETFH && f->nfs_resop4_u.opgetfh.status == NFS4_OK) {
                const nfs_fh4 *h = &f->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
                g->fh.len = MIN(h->nfs_fh4_len, (u_int)NFS4_FHSIZE);
                memcpy(g->fh.data, h->nfs_fh4_val, g->fh.len);
                g->fh_known = true;
                break;
            }
            if (f->resop != OP_GETATTR && f->resop != OP_ACCESS)
                break;      /* the current handle may have moved */
        }
    }
}

void tbbt_nfs4_absorb(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                      struct tbbt_nfs4_call *call, const COMPOUND4res *res,
                      struct tbbt_nfs4_outcome *out)
{
    memset(out, 0, sizeof(*out));
    release_slot(call, res);
    live_effects(st, rec, call, res);
    granted(res, out);
    out->verdict = verdict(rec, res);
    if (out->verdict != TBBT_NFS4_DONE)
        return;
    for (u_int i = 0; i < rec->n_ops && i < call->n; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        if (TBBT_O4_HAS(o, STATUS))
            owner_effects(&call->aux[i], o->op, (nfsstat4)o->status, false);
        if (o->op == OP_GETATTR && TBBT_O4_HAS(o, ATTR) && call->aux[i].cur_known)
            tbbt_nfs4_attr_note(st, call->aux[i].cur, &o->attr);
        if (i < res->resarray.resarray_len && traced_status(rec, i) == NFS4_OK &&
            res_status(&res->resarray.resarray_val[i]) == NFS4_OK &&
            res->resarray.resarray_val[i].resop == o->op)
            learn_op(st, rec, call, i, &res->resarray.resarray_val[i], out);
    }
    compare(rec, res, out);
}

int tbbt_nfs4_absorb_resession(struct tbbt_nfs4_state *st, struct tbbt_nfs4_session *s,
                               const COMPOUND4res *res)
{
    const CREATE_SESSION4resok *ok;
    struct tbbt_nfs4_client *c;

    if (res->resarray.resarray_len < 1 ||
        res->resarray.resarray_val[0].resop != OP_CREATE_SESSION ||
        res_status(&res->resarray.resarray_val[0]) != NFS4_OK)
        return -1;
    ok = &res->resarray.resarray_val[0].nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u
              .csr_resok4;
    c = tbbt_nfs4_client_get(st, s->traced_clientid, false);
    if (c)
        c->cs_seq++;
    tbbt_nfs4_session_add(st, s->traced, (const uint8_t *)ok->csr_sessionid,
                          ok->csr_fore_chan_attrs.ca_maxrequests, s->traced_clientid);
    return 0;
}

int tbbt_nfs4_absorb_renew(struct tbbt_nfs4_call *call, const COMPOUND4res *res)
{
    release_slot(call, res);
    return res->resarray.resarray_len == call->n && res->status == NFS4_OK ? 0 : -1;
}
