/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play's NFSv4 replay (engine4.h): the window of records, their dependency keys,
 * the ordering and timing policies, and one epoll loop that sends what may go, reads
 * the replies, absorbs them into the live state (nfs4build.h) and keeps the leases.
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <glib.h>

#include "player/engine4-int.h"
#include "proto/proto.h"
#include "util/util.h"

#define RETRIES_MAX 128                 /* tries of one record after DELAY/GRACE */
#define REPLY_BATCH 64
#define EXPIRE_EVERY_NS 50000000ull     /* calls out checked for their timeout this often */

/* ------------------------------------------------------------------ connections */

static void conn_free(gpointer p)
{
    struct p4conn *c = p;
    tbbt_rpcconn_free(c->rpc);
    g_free(c);
}

static struct p4conn *conn_of(struct e4 *e, uint32_t endpoint)
{
    gpointer key = GUINT_TO_POINTER(endpoint + 1u);
    struct p4conn *c = g_hash_table_lookup(e->conns, key);
    if (c)
        return c->down ? NULL : c;
    struct tbbt_rpcconn_opts ro = {.flavor = TBBT_RPCCONN_AUTH_SYS,
                                   .machine = TBBT_PLAYER_MACHINE, .uid = e->o->uid,
                                   .gid = e->o->gid, .ngids = 1, .gids = &e->o->gid,
                                   .reserved_port = e->o->reserved_ports};
    c = g_new0(struct p4conn, 1);
    c->endpoint = endpoint;
    c->rpc = tbbt_rpcconn_new(&ro);
    g_hash_table_insert(e->conns, key, c);
    if (tbbt_rpcconn_connect(c->rpc, e->o->server, e->o->port) < 0) {
        g_snprintf(e->errbuf, e->errlen, "cannot connect to %s:%u: %s", e->o->server,
                   e->o->port, tbbt_rpcconn_error(c->rpc));
        c->down = true;
        return NULL;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(e->ep, EPOLL_CTL_ADD, tbbt_rpcconn_fd(c->rpc), &ev);
    return c;
}

int tbbt__e4_queue(struct e4 *e, struct p4conn *c, const struct tbbt_trace_rec *rec,
                   const struct tbbt_rpcconn_call *call)
{
    struct tbbt_rpcconn_call rc = *call;
    const struct tbbt_play_cred *cr =
        rec && !e->o->fixed_creds
            ? tbbt_play_cred_of(&e->creds, tbbt_trace_reader_credtab(e->reader), rec) : NULL;
    if (cr) {
        rc.flags |= TBBT_RPCCONN_CALL_RAWCRED;
        rc.cred = cr->body;
        rc.cred_len = cr->len;
    } else if (rec && !e->o->fixed_creds) {
        rc.flags |= TBBT_RPCCONN_CALL_CRED;
        rc.uid = rec->uid;
        rc.gid = rec->gid;
    }
    if (tbbt_rpcconn_call(c->rpc, &rc, NULL) < 0)
        return -1;
    if (!c->dirty) {
        c->dirty = true;
        g_ptr_array_add(e->dirty, c);
    }
    c->last_send = tbbt_now_ns();
    return 0;
}

/* Queues a COMPOUND on c (arg: the reply's cookie; rec NULL: the engine's own call,
 * with the connection's credential).  0 or -1. */
static int queue_call(struct e4 *e, struct p4conn *c, const struct tbbt_trace_rec *rec,
                      struct tbbt_nfs4_call *call, COMPOUND4res *res, void *arg)
{
    struct tbbt_rpcconn_call rc = {
        .prog = NFS4_PROGRAM, .vers = NFS_V4, .proc = NFSPROC4_COMPOUND,
        .xargs = (xdrproc_t)xdr_COMPOUND4args, .args = &call->args,
        .xres = (xdrproc_t)tbbt_nfs4_xdr_res, .res = res, .res_size = sizeof(*res), .arg = arg,
    };
    return tbbt__e4_queue(e, c, rec, &rc);
}

/* ------------------------------------------------------------------ completion */

static void complete(struct e4 *e, struct prec *p)
{
    if (p->sent && (p->rec.flags & TBBT_RF_CORRECTIVE))
        e->c->corrective_ops++;
    if (p->in_call) {
        tbbt_nfs4_call_fini(&p->call);
        p->in_call = false;
    }
    p->state = P_DONE;
    for (guint i = 0; i < p->succ->len; i++) {
        struct prec *q = S(e, g_array_index(p->succ, uint64_t, i));
        if (q->ndeps && --q->ndeps == 0)
            tbbt__e4_heap_push(e, q->seq);
    }
    g_array_set_size(p->succ, 0);
    while (e->oldest < e->admitted && S(e, e->oldest)->state == P_DONE) {
        S(e, e->oldest)->state = P_FREE;
        e->oldest++;
    }
}

/* The connection each traced client last used (lease renewals go there); a table entry
 * is made or changed only when that connection changes. */
static void note_clients(struct e4 *e, const struct tbbt_trace_rec *rec, struct p4conn *c)
{
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        if (TBBT_O4_HAS(o, CLIENTID) && g_hash_table_lookup(e->client_conn, &o->clientid) != c)
            g_hash_table_replace(e->client_conn, g_memdup2(&o->clientid, 8), c);
    }
}

static void fail_kind(struct e4 *e, uint32_t op, int32_t traced, int32_t got, uint64_t now,
                      const struct tbbt_trace_rec *rec)
{
    tbbt_report_failure(e->rep, TBBT_PROG_NFS4, (int)op, traced, got, now);
    if (e->o->verbose) {
        char *k = tbbt_report_failure_kind(TBBT_PROG_NFS4, (int)op, traced, got);
        fprintf(stderr, "tbbt-play: xid 0x%08x endpoint %u: replay failure %s\n", rec->xid,
                rec->endpoint, k);
        g_free(k);
    }
}

/* Record p got no reply (lost, timed out, refused): its outcome is unknown. */
static void unknown(struct e4 *e, struct prec *p, uint64_t now)
{
    e->c->ops_unknown++;
    tbbt_report_failure(e->rep, p->rec.prog, p->rec.proc,
                        (p->rec.flags & TBBT_RF_REPLY) ? p->rec.status : 0,
                        TBBT_REPORT_NO_REPLY, now);
    if (p->in_call)
        tbbt_nfs4_call_abort(&p->call);
    e->inflight--;
    complete(e, p);
}

/* The player declines delegations (no back channel, no callback address); one granted
 * anyway goes back at once, on the record's connection (and session). */
static void return_delegations(struct e4 *e, struct prec *p, const struct tbbt_nfs4_outcome *out)
{
    e->delegs_granted += out->n_deleg;
    for (uint32_t i = 0; i < out->n_deleg && i < TBBT_NFS4_DELEG_MAX; i++) {
        struct renewal *w = g_new0(struct renewal, 1);
        w->kind = K_DELEGRETURN;
        if (tbbt_nfs4_build_delegreturn(e->st, &p->call, &out->deleg[i], &w->call) < 0 ||
            queue_call(e, p->conn, NULL, &w->call, &w->res, w) < 0) {
            if (e->o->verbose)
                fprintf(stderr, "tbbt-play: xid 0x%08x endpoint %u: a delegation granted "
                        "could not be returned (%s)\n", p->rec.xid, p->rec.endpoint,
                        w->call.why ? w->call.why : "connection");
            tbbt_nfs4_call_fini(&w->call);
            g_free(w);
        }
    }
}

static void on_reply(struct e4 *e, struct prec *p, const struct tbbt_rpcconn_reply *r)
{
    uint64_t now = r->recv_ns;

    if (p->v3) {
        if (r->status != TBBT_RPCCONN_OK) {
            if (r->status == TBBT_RPCCONN_TIMEDOUT)
                e->c->timeouts++;
            unknown(e, p, now);
            return;
        }
        if (!tbbt__e4_v3_reply(e, p, r)) {
            g_queue_push_tail(&e->retry, p);
            return;
        }
        e->inflight--;
        complete(e, p);
        return;
    }

    if (p->resession) {
        p->resession = false;
        if (r->status == TBBT_RPCCONN_OK && p->call.sess)
            tbbt_nfs4_absorb_resession(e->st, p->call.sess, &p->res);
        if (r->status == TBBT_RPCCONN_OK)
            xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&p->res);
        tbbt_nfs4_call_fini(&p->call);
        p->in_call = false;
        p->not_before = now;
        g_queue_push_tail(&e->retry, p);
        return;
    }
    if (r->status != TBBT_RPCCONN_OK) {
        if (r->status == TBBT_RPCCONN_TIMEDOUT)
            e->c->timeouts++;
        unknown(e, p, now);
        return;
    }
    struct tbbt_nfs4_outcome out;
    tbbt_nfs4_absorb(e->st, &p->rec, &p->call, &p->res, &out);
    xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&p->res);
    if (out.n_deleg)
        return_delegations(e, p, &out);
    note_clients(e, &p->rec, p->conn);
    if (out.verdict == TBBT_NFS4_RETRY && p->tries < RETRIES_MAX) {
        e->c->retries++;
        e->c->jukebox_replies++;
        unsigned n = p->tries++;
        p->not_before = now + (n < 6 ? 20000000ull << n : 1000000000ull);
        tbbt_nfs4_call_fini(&p->call);
        p->in_call = false;
        g_queue_push_tail(&e->retry, p);
        return;
    }
    if (out.verdict == TBBT_NFS4_RESESSION && p->tries < RETRIES_MAX && p->call.sess) {
        struct tbbt_nfs4_session *s = p->call.sess;
        p->tries++;
        tbbt_nfs4_call_fini(&p->call);
        p->in_call = false;
        if (tbbt_nfs4_build_resession(e->st, s, &p->call) == 0 &&
            queue_call(e, p->conn, NULL, &p->call, &p->res, p) == 0) {
            p->in_call = true;
            p->resession = true;
            p->call.sess = s;     /* for the absorb (no slot is held by it) */
            return;
        }
        tbbt_nfs4_call_fini(&p->call);
        unknown(e, p, now);
        return;
    }
    if (p->tries)
        e->c->jukebox_ops++;
    tbbt_report_op(e->rep, TBBT_PROG_NFS4, 1, now - p->send_ns, now);
    e->c->ops_completed++;
    if (!out.n_mismatch)        /* READs answered as traced: the bytes the trace read */
        for (uint32_t i = 0; i < p->rec.n_ops; i++) {
            const struct tbbt_op4 *op = &p->rec.ops[i];
            if (op->op == OP_READ && TBBT_O4_HAS(op, RES_COUNT) && TBBT_O4_HAS(op, STATUS) &&
                op->status == NFS4_OK)
                e->c->read_bytes += op->res_count;
        }
    /* One replay failure per COMPOUND, as per NFSv3 call, named by its first differing
     * operation: the operations after it differ because the COMPOUND stopped there. */
    if (out.n_mismatch)
        fail_kind(e, out.mismatch[0].op, out.mismatch[0].traced, out.mismatch[0].live, now,
                  &p->rec);
    if (out.confirm_differs)    /* the trace's OPEN_CONFIRMs will not fit */
        tbbt_report_mismatch(e->rep, TBBT_PROG_NFS4, OP_OPEN, "confirm");
    e->inflight--;
    complete(e, p);
}

static void on_renewal(struct e4 *e, struct renewal *w, const struct tbbt_rpcconn_reply *r)
{
    bool ok = false;
    if (r->status == TBBT_RPCCONN_OK) {
        ok = tbbt_nfs4_absorb_renew(&w->call, &w->res) == 0;
        xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&w->res);
    } else {
        tbbt_nfs4_call_abort(&w->call);
    }
    if (w->kind == K_DELEGRETURN)
        e->delegs_returned += ok;
    else
        g_hash_table_remove(e->renewing, &w->client);
    tbbt_nfs4_call_fini(&w->call);
    g_free(w);
}

static void on_replies(struct e4 *e, struct tbbt_rpcconn_reply *rep, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t kind = *(uint8_t *)rep[i].arg;
        if (kind == K_RENEW || kind == K_DELEGRETURN)
            on_renewal(e, rep[i].arg, &rep[i]);
        else
            on_reply(e, rep[i].arg, &rep[i]);
    }
    /* a reply may have freed a slot */
    while (!g_queue_is_empty(&e->slotwait))
        g_queue_push_tail(&e->retry, g_queue_pop_head(&e->slotwait));
}

/* ------------------------------------------------------------------ sending */

/* p goes out now: counted once, on its first send. */
static void issued(struct e4 *e, struct prec *p, uint64_t now)
{
    if (p->sent)
        return;
    p->sent = true;
    p->send_ns = now;
    e->inflight++;
    e->c->ops_issued++;
    tbbt_report_issued(e->rep, now);
    if (e->o->timestamp)
        tbbt_report_dispatch(e->rep, (int64_t)(now - p->due_ns), now);
    if (e->inflight > e->c->peak_outstanding)
        e->c->peak_outstanding = e->inflight;
}

/* Builds and queues p (its first send or again), or accounts why it cannot go. */
static void send_rec(struct e4 *e, struct prec *p, uint64_t now)
{
    if (!p->conn) {
        p->conn = conn_of(e, p->rec.endpoint);
        if (!p->conn) {
            e->err = -ECONNREFUSED;
            issued(e, p, now);
            unknown(e, p, now);
            return;
        }
    }
    if (p->v3) {
        int rc = tbbt__e4_v3_send(e, p);
        if (rc > 0) {           /* not sent: why */
            e->c->ops_skipped++;
            if (rc == TBBT_NFSREQ_NOT_NFS)
                e->c->skipped_not_nfs++;
            else if (rc == TBBT_NFSREQ_NO_HANDLE)
                e->c->skipped_no_handle++;
            else if (rc == TBBT_NFSREQ_MISSING)
                e->c->skipped_incomplete++;
            else
                e->c->skipped_unsendable++;
            if (e->o->verbose)
                fprintf(stderr, "tbbt-play: xid 0x%08x endpoint %u: %s %s not sent (%s)\n",
                        p->rec.xid, p->rec.endpoint, tbbt_prog_name(p->rec.prog) ?: "?",
                        tbbt_proc_name(p->rec.prog, p->rec.proc) ?: "?",
                        rc == TBBT_NFSREQ_NO_HANDLE ? "no handle" : rc == TBBT_NFSREQ_MISSING
                        ? "incomplete" : "unsendable");
            complete(e, p);
            return;
        }
        issued(e, p, now);
        p->try_ns = now;
        if (rc < 0)
            unknown(e, p, now);
        return;
    }
    if (tbbt_nfs4_build(e->st, &p->rec, &p->call) < 0) {
        bool noslot = p->call.why && !strcmp(p->call.why, TBBT_NFS4_NO_SLOT);
        if (noslot) {
            tbbt_nfs4_call_fini(&p->call);
            g_queue_push_tail(&e->slotwait, p);
            return;
        }
        if (e->o->verbose)
            fprintf(stderr, "tbbt-play: xid 0x%08x endpoint %u: unsendable: %s: %s\n",
                    p->rec.xid, p->rec.endpoint, p->call.why ? p->call.why : "?",
                    p->call.detail);
        tbbt_nfs4_call_fini(&p->call);
        if (p->sent) {          /* a retry that no longer builds: its outcome is open */
            unknown(e, p, now);
            return;
        }
        e->c->skipped_unsendable++;
        e->c->ops_skipped++;
        complete(e, p);
        return;
    }
    p->in_call = true;
    issued(e, p, now);
    p->try_ns = now;
    if (queue_call(e, p->conn, &p->rec, &p->call, &p->res, p) < 0)
        unknown(e, p, now);
}

/* The conservative rule: no record in flight has a traced reply at or before p's call. */
static bool cons_may(struct e4 *e, const struct prec *p)
{
    for (uint64_t s = e->oldest; s < p->seq; s++) {
        const struct prec *q = S(e, s);
        if (q->state == P_FLIGHT && (q->rec.flags & TBBT_RF_REPLY) &&
            q->rec.reply_ns <= p->rec.call_ns)
            return false;
    }
    return true;
}

/* Sends what may go now; *due: the earliest time something else may. */
static void dispatch(struct e4 *e, uint64_t now, uint64_t *due)
{
    /* retries first */
    for (guint n = g_queue_get_length(&e->retry); n > 0; n--) {
        struct prec *p = g_queue_pop_head(&e->retry);
        if (p->not_before > now) {
            *due = MIN(*due, p->not_before);
            g_queue_push_tail(&e->retry, p);
            continue;
        }
        send_rec(e, p, now);
    }
    if (e->stopping)
        return;
    while (e->nheap && (!e->o->max_outstanding || e->inflight < e->o->max_outstanding)) {
        uint64_t seq = e->heap[0];
        struct prec *p = S(e, seq);
        if (!e->o->fsdep && seq != e->next_cons)
            break;          /* conservative: in trace order */
        if (e->o->timestamp && p->due_ns > now) {
            *due = MIN(*due, p->due_ns);
            break;
        }
        if (!e->o->fsdep && !cons_may(e, p))
            break;
        tbbt__e4_heap_pop(e);
        p->state = P_FLIGHT;
        if (!e->o->fsdep)
            e->next_cons++;
        send_rec(e, p, now);
    }
}

/* Sends what was queued since the last call: only the connections that have some. */
static void flush_all(struct e4 *e)
{
    guint k = 0;
    for (guint i = 0; i < e->dirty->len; i++) {
        struct p4conn *c = g_ptr_array_index(e->dirty, i);
        c->dirty = !c->down && tbbt_rpcconn_flush(c->rpc) == -EAGAIN;
        if (c->dirty)           /* the socket is full: again on the next turn */
            g_ptr_array_index(e->dirty, k++) = c;
    }
    g_ptr_array_set_size(e->dirty, k);
}

/* ------------------------------------------------------------------ leases */

struct renew_ctx {
    struct e4 *e;
    uint64_t now;
};

static void renew_one(struct tbbt_nfs4_client *cl, void *arg)
{
    struct renew_ctx *rc = arg;
    struct e4 *e = rc->e;
    struct p4conn *c = g_hash_table_lookup(e->client_conn, &cl->traced);
    uint64_t every = (uint64_t)e->o->renew_ms * 1000000ull;
    if (!c || c->down || rc->now - c->last_send < every ||
        g_hash_table_contains(e->renewing, &cl->traced))
        return;
    struct renewal *w = g_new0(struct renewal, 1);
    w->kind = K_RENEW;
    w->client = cl->traced;
    if (tbbt_nfs4_build_renew(e->st, cl, &w->call) < 0 ||
        queue_call(e, c, NULL, &w->call, &w->res, w) < 0) {
        tbbt_nfs4_call_fini(&w->call);
        g_free(w);
        return;
    }
    g_hash_table_add(e->renewing, g_memdup2(&cl->traced, 8));
}

static void renew_leases(struct e4 *e, uint64_t now)
{
    if (!e->o->renew_ms || now - e->last_renew < (uint64_t)e->o->renew_ms * 250000ull)
        return;
    e->last_renew = now;
    struct renew_ctx rc = {e, now};
    tbbt_nfs4_client_foreach(e->st, renew_one, &rc);
}

/* ------------------------------------------------------------------ the loop */

/* Reads records into the window; false on a read error (e->err set). */
static bool fill(struct e4 *e)
{
    while (!e->eof && e->admitted - e->oldest < e->W) {
        struct prec *p = S(e, e->admitted);
        int rc = tbbt_trace_reader_next(e->reader, &p->rec);
        if (rc < 0) {
            e->err = rc;
            g_snprintf(e->errbuf, e->errlen, "trace '%s': %s", e->o->trace_path,
                       tbbt_strerror(rc));
            e->eof = true;
            return false;
        }
        if (rc == 0) {
            e->eof = true;
            break;
        }
        e->c->trace_ops++;
        if (!e->t0_set) {
            e->trace_t0 = p->rec.call_ns;
            e->t0_set = true;
        }
        e->c->trace_seconds = (double)(p->rec.call_ns - MIN(p->rec.call_ns, e->trace_t0)) / 1e9;
        bool v3 = p->rec.prog == TBBT_PROG_NFS3 || p->rec.prog == TBBT_PROG_NFS2;
        if ((!v3 && (p->rec.prog != TBBT_PROG_NFS4 || p->rec.proc != 1)) ||
            (v3 && !e->o->handles)) {
            e->c->skipped_not_nfs++;    /* MOUNT, NULL: the start-up made the mounts */
            e->c->ops_skipped++;
            continue;       /* the slot is reused by the next record */
        }
        p->kind = K_REC;
        p->v3 = v3;
        p->seq = e->admitted++;
        p->state = P_WAIT;
        p->ndeps = 0;
        p->sent = p->resession = p->in_call = false;
        p->tries = 0;
        p->conn = NULL;
        p->due_ns = e->o->timestamp
                    ? e->start_ns + (uint64_t)((double)(p->rec.call_ns - MIN(p->rec.call_ns,
                                                                               e->trace_t0)) /
                                               e->o->speed)
                    : 0;
        tbbt__e4_admit(e, p);
    }
    return true;
}

static void expire_all(struct e4 *e, uint64_t now)
{
    struct tbbt_rpcconn_reply rep[REPLY_BATCH];
    uint64_t limit = (uint64_t)e->o->timeout_ms * 1000000ull;
    GHashTableIter it;
    gpointer k, v;
    if (now < limit)
        return;
    g_hash_table_iter_init(&it, e->conns);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        struct p4conn *c = v;
        int n;
        while ((n = tbbt_rpcconn_expire(c->rpc, now - limit, rep, REPLY_BATCH)) > 0)
            on_replies(e, rep, n);
    }
}

static void receive(struct e4 *e, struct p4conn *c)
{
    struct tbbt_rpcconn_reply rep[REPLY_BATCH];
    int n;
    /* a short batch emptied the socket (rpcconn.h): the level-triggered epoll says when
     * there is more, rather than one more read that finds nothing */
    do {
        n = tbbt_rpcconn_recv(c->rpc, rep, REPLY_BATCH);
        if (n > 0)
            on_replies(e, rep, n);
    } while (n == REPLY_BATCH);
    if (n < 0 && !c->down) {
        c->down = true;
        epoll_ctl(e->ep, EPOLL_CTL_DEL, tbbt_rpcconn_fd(c->rpc), NULL);
        if (!e->err) {
            e->err = n;
            g_snprintf(e->errbuf, e->errlen, "connection of trace endpoint %u lost: %s",
                       c->endpoint, tbbt_rpcconn_error(c->rpc));
        }
    }
}

int tbbt_engine4_run(const struct tbbt_engine4_opts *o, struct tbbt_report **rep,
                     struct tbbt_report_counts *cn, char *err, size_t errlen)
{
    struct e4 e = {.o = o, .errbuf = err, .errlen = errlen};
    int rc = 0;

    memset(cn, 0, sizeof(*cn));
    *rep = NULL;
    e.c = cn;
    e.reader = tbbt_trace_reader_open(o->trace_path, &rc);
    if (!e.reader) {
        g_snprintf(err, errlen, "cannot open trace '%s': %s", o->trace_path, tbbt_strerror(rc));
        return rc ? rc : -EIO;
    }
    e.W = MAX(o->window, 1u);
    e.slots = g_new0(struct prec, e.W);
    for (unsigned i = 0; i < e.W; i++) {
        tbbt_trace_rec_init(&e.slots[i].rec);
        e.slots[i].succ = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    }
    e.st = tbbt_nfs4_state_new();
    tbbt_nfs4_client_tag_set(e.st, o->client_tag);
    for (unsigned i = 0; i < o->nexports; i++)
        tbbt_nfs4_export_add(e.st, o->exports[i].comps, o->exports[i].live_comps,
                             &o->exports[i].live);
    e.cookies = tbbt_play_cookies_new();
    tbbt__e4_keys_init(&e);
    e.conns = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, conn_free);
    e.client_conn = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    e.renewing = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    tbbt_play_creds_init(&e.creds);
    e.dirty = g_ptr_array_new();
    e.ep = epoll_create1(EPOLL_CLOEXEC);
    if (o->stop_fd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(e.ep, EPOLL_CTL_ADD, o->stop_fd, &ev);
    }
    double user0, sys0;
    tbbt_cpu_seconds(&user0, &sys0);
    e.start_ns = tbbt_now_ns();
    e.last_renew = e.start_ns;
    e.rep = tbbt_report_new(e.start_ns);
    cn->order = o->fsdep ? "fsdep" : "conservative";
    cn->timing = o->timestamp ? "timestamp" : "full";
    cn->transport = "tcp";
    cn->speed = o->timestamp ? o->speed : 1;
    cn->clones = 1;
    cn->window = e.W;
    cn->max_outstanding = o->max_outstanding;
    cn->causal_slack_us = o->fsdep ? NAN : 0;

    for (;;) {
        uint64_t now = tbbt_now_ns(), due = UINT64_MAX;
        if (!fill(&e))
            break;
        dispatch(&e, now, &due);
        renew_leases(&e, now);
        flush_all(&e);
        if (e.err && e.err != -ECONNREFUSED)
            break;
        if (e.eof && e.oldest == e.admitted)
            break;
        if (e.stopping && (e.inflight == 0 || now > e.stop_deadline))
            break;
        int ms = 100;
        if (due != UINT64_MAX)
            ms = due <= now ? 0 : (int)MIN((due - now + 999999) / 1000000, 100u);
        struct epoll_event evs[64];
        int n = epoll_wait(e.ep, evs, 64, ms);
        for (int i = 0; i < n; i++) {
            if (!evs[i].data.ptr) {
                if (!e.stopping) {
                    e.stopping = true;
                    e.stop_deadline = tbbt_now_ns() + 2000000000ull;
                }
                continue;
            }
            receive(&e, evs[i].data.ptr);
        }
        uint64_t t = tbbt_now_ns();
        if (t - e.last_expire >= EXPIRE_EVERY_NS) {     /* a walk of every call out */
            e.last_expire = t;
            expire_all(&e, t);
        }
    }
    uint64_t end_ns = tbbt_now_ns();
    if (e.delegs_granted)
        tbbt_log(TBBT_LOG_WARN, "the server granted %" PRIu64 " delegations although the "
                 "player asked for none; %" PRIu64 " were returned", e.delegs_granted,
                 e.delegs_returned);

    /* what never went: the rest of the window */
    for (uint64_t s = e.oldest; s < e.admitted; s++)
        if (S(&e, s)->state == P_WAIT)
            cn->skipped_stopped++;
    cn->wall_seconds = (double)(end_ns - e.start_ns) / 1e9;
    tbbt_cpu_seconds(&cn->cpu_user_seconds, &cn->cpu_system_seconds);
    cn->cpu_user_seconds -= user0;
    cn->cpu_system_seconds -= sys0;
    cn->connections = g_hash_table_size(e.conns);
    cn->finished = e.eof && e.oldest == e.admitted && !e.err;
    if (e.stopping && !cn->finished) {
        rc = -EINTR;
        cn->stop_reason = "stopped";
    } else if (e.err) {
        rc = e.err;
        cn->error = err;
    }
    *rep = e.rep;

    tbbt_play_cookies_free(e.cookies);
    for (unsigned i = 0; i < e.W; i++) {
        if (e.slots[i].in_call)
            tbbt_nfs4_call_fini(&e.slots[i].call);
        g_free(e.slots[i].v3call);
        tbbt_trace_rec_fini(&e.slots[i].rec);
        g_array_free(e.slots[i].succ, TRUE);
    }
    g_free(e.slots);
    g_hash_table_destroy(e.conns);          /* outstanding calls dropped: no reply comes */
    tbbt_nfs4_state_free(e.st);
    tbbt__e4_keys_fini(&e);
    g_hash_table_destroy(e.client_conn);
    g_hash_table_destroy(e.renewing);
    tbbt_play_creds_fini(&e.creds);
    g_ptr_array_free(e.dirty, TRUE);
    g_queue_clear(&e.retry);
    g_queue_clear(&e.slotwait);
    close(e.ep);
    tbbt_trace_reader_close(e.reader);
    return rc;
}

/* ------------------------------------------------------------------ start-up */

int tbbt_engine4_lookup(const char *server, uint16_t port, char *const *comps,
                        struct tbbt_nfs4_fh *out, char *err, size_t errlen)
{
    guint n = 0;
    while (comps && comps[n])
        n++;
    nfs_argop4 *ops = g_new0(nfs_argop4, n + 2);
    ops[0].argop = OP_PUTROOTFH;
    for (guint i = 0; i < n; i++) {
        ops[i + 1].argop = OP_LOOKUP;
        ops[i + 1].nfs_argop4_u.oplookup.objname.utf8string_len = (u_int)strlen(comps[i]);
        ops[i + 1].nfs_argop4_u.oplookup.objname.utf8string_val = comps[i];
    }
    ops[n + 1].argop = OP_GETFH;
    COMPOUND4args args = {.minorversion = 0};
    args.argarray.argarray_len = n + 2;
    args.argarray.argarray_val = ops;
    COMPOUND4res res;
    memset(&res, 0, sizeof(res));
    struct tbbt_rpcconn_opts ro = {.flavor = TBBT_RPCCONN_AUTH_SYS, .machine = TBBT_PLAYER_MACHINE};
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(&ro);
    struct tbbt_rpcconn_call call = {
        .prog = NFS4_PROGRAM, .vers = NFS_V4, .proc = NFSPROC4_COMPOUND,
        .xargs = (xdrproc_t)xdr_COMPOUND4args, .args = &args,
        .xres = (xdrproc_t)tbbt_nfs4_xdr_res, .res = &res, .res_size = sizeof(res),
    };
    struct tbbt_rpcconn_reply r;
    int rc = -1;
    if (tbbt_rpcconn_connect(c, server, port) < 0) {
        g_snprintf(err, errlen, "NFSv4 server %s:%u: %s", server, port, tbbt_rpcconn_error(c));
    } else if (tbbt_rpcconn_call_sync(c, &call, 10000, &r) < 0) {
        g_snprintf(err, errlen, "NFSv4 server %s:%u: %s", server, port, tbbt_rpcconn_error(c));
    } else if (r.status != TBBT_RPCCONN_OK) {
        g_snprintf(err, errlen, "NFSv4 server %s:%u refused a COMPOUND (%s): does it serve "
                   "NFSv4?", server, port, tbbt_rpcconn_status_name(r.status));
    } else {
        u_int m = res.resarray.resarray_len;
        const nfs_resop4 *last = m ? &res.resarray.resarray_val[m - 1] : NULL;
        if (res.status != NFS4_OK || m != n + 2 || last->resop != OP_GETFH) {
            const char *st = tbbt_status_name(TBBT_PROG_NFS4, res.status);
            g_snprintf(err, errlen, "NFSv4 look-up of the image directory in the pseudo file "
                       "system: %s at component %u (--pseudo names the export's NFSv4 path)",
                       st ? st : "error", m ? m - 1 : 0);
        } else {
            const nfs_fh4 *fh = &last->nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
            out->len = MIN(fh->nfs_fh4_len, (u_int)NFS4_FHSIZE);
            memcpy(out->data, fh->nfs_fh4_val, out->len);
            rc = 0;
        }
        xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&res);
    }
    tbbt_rpcconn_free(c);
    g_free(ops);
    return rc;
}
