/* SPDX-License-Identifier: MIT */
/*
 * engine4's NFSv2/v3 records (engine4-int.h): in a trace that mixes NFSv3 and NFSv4
 * clients, the NFSv3 calls are built by nfsreq.h on the image's handles (resolved at
 * start-up, bound here as LOOKUPs and creates answer), a READDIR that continues a
 * listing gets the live cookie of the traced entry it continues from (cookies.h),
 * NFS3ERR_JUKEBOX is waited out,
 * and every other status that differs from the trace is a replay failure.
 */
#include <stdio.h>
#include <string.h>

#include "player/engine4-int.h"
#include "util/util.h"

#define V3_JUKEBOX 10008                /* NFS3ERR_JUKEBOX: try again later */

int tbbt__e4_v3_send(struct e4 *e, struct prec *p)
{
    if (!p->v3call)
        p->v3call = g_new0(struct e4_v3call, 1);
    struct e4_v3call *v = p->v3call;
    if (!p->sent)
        v->cookie_taken = false;
    uint64_t missing = 0;
    int rc = tbbt_nfsreq_build(&v->q, &p->rec, e->o->handles, &missing);
    if (rc != 0)
        return rc;
    if (TBBT_HAS(&p->rec, TBBT_F_COOKIE) && p->rec.cookie && TBBT_HAS(&p->rec, TBBT_F_ID)) {
        /* the traced cookie is the traced server's (cookies.h); a resend keeps what the
         * first send took */
        if (!v->cookie_taken)
            tbbt_play_cookies_take(e->cookies, 0, &p->rec, &v->cookie[0], &v->cookie[1]);
        v->cookie_taken = true;
        tbbt_nfsreq_set_cookie(&v->q, v->cookie[0], v->cookie[1]);
    }
    memset(&v->res, 0, sizeof(v->res));
    v->xres = v->q.xres;
    struct tbbt_rpcconn_call call = {
        .prog = v->q.prog, .vers = v->q.vers, .proc = v->q.proc, .xargs = v->q.xargs,
        .args = &v->q.args, .xres = v->q.xres, .res = &v->res, .res_size = v->q.res_size,
        .arg = p,
    };
    return tbbt__e4_queue(e, p->conn, &p->rec, &call) < 0 ? -1 : 0;
}

/* What a successful reply tells later calls: the handle it made or found, the position
 * where a listing page ended. */
static void learn(struct e4 *e, struct prec *p)
{
    struct e4_v3call *v = p->v3call;
    const struct tbbt_trace_rec *rec = &p->rec;
    uint8_t fh[TBBT_HANDLE_MAX];
    uint32_t len = tbbt_nfsreq_new_fh(v->q.vers, v->q.proc, &v->res, fh);
    if (len && TBBT_HAS(rec, TBBT_F_ID_OBJ) && rec->id_obj)
        tbbt_handles_set(e->o->handles, rec->id_obj, fh, len);
    struct tbbt_nfsreq_listing l;
    if (tbbt_nfsreq_readdir(v->q.vers, v->q.proc, &v->res, &l) && l.n > 0)
        tbbt_play_cookies_put(e->cookies, 0, rec, l.last_cookie, l.verf);
}

bool tbbt__e4_v3_reply(struct e4 *e, struct prec *p, const struct tbbt_rpcconn_reply *r)
{
    struct e4_v3call *v = p->v3call;
    const struct tbbt_trace_rec *rec = &p->rec;
    uint64_t now = r->recv_ns;
    int32_t got = r->res_status;
    uint64_t budget = (uint64_t)e->o->jukebox_wait_ms * 1000000ull;

    if (got == 0)
        learn(e, p);
    if (v->xres)
        xdr_free(v->xres, (char *)&v->res);
    v->xres = NULL;
    bool traced_jb = (rec->flags & TBBT_RF_STATUS) && rec->status == V3_JUKEBOX;
    if (got == V3_JUKEBOX && !traced_jb && now - p->send_ns < budget) {
        unsigned n = p->tries++;
        e->c->jukebox_replies++;
        p->not_before = now + MIN(10000000ull << MIN(n, 6u), 500000000ull);
        return false;
    }
    if (p->tries)
        e->c->jukebox_ops++;
    tbbt_report_op(e->rep, rec->prog, rec->proc, now - p->send_ns, now);
    e->c->ops_completed++;
    if (got == 0 && (rec->flags & TBBT_RF_STATUS) && rec->status == 0 &&
        tbbt_ns_op(rec) == TBBT_NS_OP_READ &&
        TBBT_HAS(rec, TBBT_F_RES_COUNT))
        e->c->read_bytes += rec->res_count;
    if (!(rec->flags & TBBT_RF_STATUS))
        e->c->unchecked++;
    else if (rec->status != got) {
        tbbt_report_failure(e->rep, rec->prog, rec->proc, rec->status, got, now);
        if (e->o->verbose) {
            char *k = tbbt_report_failure_kind(rec->prog, rec->proc, rec->status, got);
            fprintf(stderr, "tbbt-play: xid 0x%08x endpoint %u: replay failure %s\n",
                    rec->xid, rec->endpoint, k);
            g_free(k);
        }
    }
    return true;
}
