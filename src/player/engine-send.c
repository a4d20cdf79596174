/* SPDX-License-Identifier: MIT */
/*
 * The engine's send thread and its dispatching (engine-int.h): takes what the scheduler
 * lets go now (resends first), encodes each call (nfsreq.h) with its credential, sends
 * them in batches per connection, reconnects connections that went down, and waits for
 * the next due time or wake-up.  The receive thread dispatches through the same code
 * (tbbt__eng_dispatch_locked()) what its replies made ready.
 */
#include "player/engine-int.h"

/*
 * The connection of a request: its traced client's own (the connection map), else one
 * by the hash of its object (a directory operation by its directory), so that requests
 * on one object keep their order.
 */
static unsigned conn_of(struct eng *e, const struct slot *s)
{
    if (e->o->conn_map && s->rec.endpoint < e->o->conn_map_len)
        return e->o->conn_map[s->rec.endpoint] % e->nconns;
    uint64_t id = TBBT_HAS(&s->rec, TBBT_F_ID) ? s->rec.id : 0;
    return (unsigned)(((id * 0x9e3779b97f4a7c15ull) >> 32) + s->clone) % e->nconns;
}

/*
 * Under mu: a picked request goes in flight; the object it makes becomes PENDING until
 * the reply binds its new handle, even when the ID had a handle: a create makes a new
 * object (after a rename over the old one, say), and the old handle may be stale.
 * Requests that need it wait (fsdep: the reply lock; conservative: tbbt__eng_needs_pending()).
 */
static void take_locked(struct eng *e, struct slot *s)
{
    if (s->state == S_WAIT) {
        s->conn = (uint16_t)conn_of(e, s);
        if (is_create(s)) {
            struct tbbt_handle *h = tbbt__eng_made_handle(e, s);
            if (h && h->state != TBBT_HANDLE_PENDING) {
                s->made_was_known = h->state == TBBT_HANDLE_KNOWN;
                h->state = TBBT_HANDLE_PENDING;
                s->made_pending = true;
            }
        }
    }
    s->state = S_FLIGHT;
}

/*
 * One request a dispatching thread sends.  Once its bytes are flushed the reply may
 * come, and the receive thread may complete and recycle the slot at once: what is
 * needed after the flush is copied here before it.
 */
struct txjob {
    struct slot *s;
    int skip;           /* -1: sent; else enum skip_why */
    bool requeue;       /* the connection refused it: send again later */
    bool first;         /* its first send (dispatch error, issued counts) */
    unsigned conn;      /* its connection */
    uint64_t sched_ns;  /* when it was due */
    char ev[160];       /* its event log line, "" if none */
};

/* The event log line of a dispatch, into j (before the request's bytes leave). */
static void event_dispatch(struct eng *e, const struct slot *s, struct txjob *j)
{
    j->ev[0] = '\0';
    if (!e->o->events)
        return;
    const struct tbbt_trace_rec *r = &s->rec;
    g_snprintf(j->ev, sizeof(j->ev),
               "D %" PRIu64 " %u %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
               "\n", s->seq, s->clone, tbbt_proc_name(r->prog, r->proc) ?: "?", r->call_ns,
               s->reply_key == NO_REPLY_KEY ? 0 : s->reply_key, s->send_ns - e->start_ns,
               TBBT_HAS(r, TBBT_F_ID) ? r->id : 0, TBBT_HAS(r, TBBT_F_OFFSET) ? r->offset : 0);
}

/*
 * Encodes and queues one request on its connection; fills j.  nonblock (the receive
 * thread): a send side held by the other thread is not waited for, the request goes
 * back to the send thread (j->requeue).
 */
static void tx_one(struct eng *e, struct txjob *j, struct tbbt_nfsreq *q, bool nonblock)
{
    struct slot *s = j->s;
    uint64_t missing = 0;
    uint8_t proc = s->rec.proc;
    if (s->fixup)
        s->rec.proc = lookup_proc(&s->rec);
    int rc = tbbt_nfsreq_build(q, &s->rec, e->o->handles[s->clone], &missing);
    s->rec.proc = proc;
    j->skip = -1;
    j->requeue = false;
    j->ev[0] = '\0';
    if (rc != 0) {
        if (rc == TBBT_NFSREQ_NOT_NFS) {
            j->skip = SKIP_NOT_NFS;
        } else if (rc == TBBT_NFSREQ_UNSENDABLE) {
            j->skip = SKIP_UNSENDABLE;
        } else if (rc == TBBT_NFSREQ_NO_HANDLE) {
            const struct tbbt_handle *h = tbbt_handles_peek(e->o->handles[s->clone], missing);
            j->skip = h && h->state == TBBT_HANDLE_FAILED ? SKIP_DEPENDENCY : SKIP_NO_HANDLE;
        } else {
            j->skip = SKIP_INCOMPLETE;
        }
        return;
    }
    if (!s->fixup)
        tbbt__eng_map_cookie(e, s, q);
    struct tbbt_rpcconn_call call = {
        .prog = q->prog, .vers = q->vers, .proc = q->proc, .xargs = q->xargs,
        .args = &q->args, .xres = q->xres, .res = &s->res, .res_size = q->res_size,
        .arg = s,
    };
    if (!e->o->fixed_creds && s->cred) {
        call.flags |= TBBT_RPCCONN_CALL_RAWCRED;
        call.cred = s->cred->body;
        call.cred_len = s->cred->len;
    } else if (!e->o->fixed_creds) {
        call.flags |= TBBT_RPCCONN_CALL_CRED;
        call.uid = s->rec.uid;
        call.gid = s->rec.gid;
    }
    bool same_xid = s->same_xid;
    if (same_xid) {
        call.flags |= TBBT_RPCCONN_CALL_XID;
        call.xid = s->xid;
    }
    struct conn *cn = &e->conns[s->conn];
    j->conn = s->conn;
    if (!nonblock)
        pthread_mutex_lock(&cn->send_mu);
    else if (pthread_mutex_trylock(&cn->send_mu) != 0) {
        j->requeue = true;
        return;
    }
    /* Once the call is queued, a thread that flushes this connection may get its reply,
     * complete the request and recycle its slot: the slot's fields for the reply are set
     * before, and the slot is not touched after (the XID is written by the call itself,
     * before the call is handed over). */
    s->xres = q->xres;
    s->same_xid = false;
    s->send_ns = tbbt_now_ns();
    event_dispatch(e, s, j);
    int crc = tbbt_rpcconn_call(cn->rpc, &call, &s->xid);
    pthread_mutex_unlock(&cn->send_mu);
    if (crc < 0) {
        s->same_xid = same_xid;     /* not queued: the slot is still ours */
        j->ev[0] = '\0';
        if (crc == -EINVAL)
            j->skip = SKIP_UNSENDABLE;   /* larger than a record (UDP: a datagram) may be */
        else
            j->requeue = true;   /* not sent: the connection is down */
    }
}

/*
 * Sends what is queued on connection i, waiting for room; false if it failed.  The
 * receive thread (nonblock) never waits: not for a send side the other thread holds
 * (it flushes what is queued when it is done), not for room in a full socket (the bytes
 * stay queued and the send thread is told to flush them), so that it always goes back
 * to reading replies, which a server that stopped reading calls may be waiting for.
 */
static bool flush_conn(struct eng *e, unsigned i, bool nonblock)
{
    struct conn *cn = &e->conns[i];
    struct tbbt_rpcconn *c = cn->rpc;
    bool ok = false;
    if (!nonblock)
        pthread_mutex_lock(&cn->send_mu);
    else if (pthread_mutex_trylock(&cn->send_mu) != 0)
        return true;
    for (;;) {
        int rc = tbbt_rpcconn_flush(c);
        if (rc == 0) {
            ok = true;
            break;
        }
        if (rc != -EAGAIN)
            break;   /* the receive side reports the calls as LOST */
        if (nonblock) {
            atomic_store(&cn->flush_owed, true);
            ok = true;
            break;
        }
        struct pollfd p = {.fd = tbbt_rpcconn_fd(c), .events = POLLOUT};
        if (p.fd < 0 || poll(&p, 1, 100) < 0 || e->stop)
            break;
    }
    pthread_mutex_unlock(&cn->send_mu);
    return ok;
}

/* Reconnects connections the receiver let go of (send thread, mu not held). */
static void reconnect_down(struct eng *e)
{
    for (unsigned i = 0; i < e->nconns; i++) {
        pthread_mutex_lock(&e->mu);
        struct conn *cn = &e->conns[i];
        uint64_t now = tbbt_now_ns();
        bool want = !cn->up && !e->stop && now >= cn->next_try;
        tbbt__eng_unlock_wake(e);
        if (!want)
            continue;
        pthread_mutex_lock(&cn->send_mu);
        int rc = tbbt_rpcconn_revive(cn->rpc, &e->retry, cn->down_since);
        pthread_mutex_unlock(&cn->send_mu);
        pthread_mutex_lock(&e->mu);
        now = tbbt_now_ns();
        if (rc == 0) {
            cn->up = true;
            e->c.reconnects++;
            atomic_store(&e->last_reply_ns, now);
            tbbt_log(TBBT_LOG_INFO, "reconnected to %s:%u", e->o->server, e->o->nfs_port);
            tbbt__eng_wake_rx(e);
        } else if (rc != -EAGAIN) {
            tbbt__eng_fail_run(e, "server dead", rc, "server %s:%u unreachable for %d s: %s",
                               e->o->server, e->o->nfs_port, e->o->dead_ms / 1000,
                               tbbt_rpcconn_error(cn->rpc));
        } else {
            cn->next_try = now + 200000000ull;
        }
        tbbt__eng_unlock_wake(e);
    }
}

static bool any_down(struct eng *e)
{
    for (unsigned i = 0; i < e->nconns; i++)
        if (!e->conns[i].up)
            return true;
    return false;
}

/* Waits (mu held) until something may be ready, or until due. */
static void sender_wait(struct eng *e, uint64_t due)
{
    struct timespec ts;
    uint64_t now = tbbt_now_ns();
    uint64_t until = MIN(due, now + 100000000ull);
    uint64_t spin = (uint64_t)e->o->spin_us * 1000u;
    if (until > now + spin + spin / 2) {
        e->sender_until = due;
        until -= spin;   /* wake early, spin the rest (dispatch precision) */
        ts.tv_sec = (time_t)(until / 1000000000ull);
        ts.tv_nsec = (long)(until % 1000000000ull);
        tbbt__eng_wake_locked(e);
        atomic_store_explicit(&e->sender_waiting, true, memory_order_relaxed);
        pthread_cond_timedwait(&e->cv_send, &e->mu, &ts);
        atomic_store_explicit(&e->sender_waiting, false, memory_order_relaxed);
        e->sender_until = UINT64_MAX;
        return;
    }
    tbbt__eng_unlock_wake(e);
    while (tbbt_now_ns() < until)
        ;
    pthread_mutex_lock(&e->mu);
}

void tbbt__eng_txctx_init(struct txctx *t, struct eng *e, struct tbbt_report *rep, bool nonblock)
{
    t->cap = MAX(1u, e->o->batch);
    t->nonblock = nonblock;
    t->jobs = g_new(struct txjob, t->cap);
    t->q = g_new0(struct tbbt_nfsreq, 1);
    t->touched = g_new0(bool, e->nconns);
    t->rep = rep;
}

void tbbt__eng_txctx_fini(struct txctx *t)
{
    g_free(t->touched);
    g_free(t->q);
    g_free(t->jobs);
}

unsigned tbbt__eng_dispatch_locked(struct eng *e, struct txctx *t, uint64_t *due, unsigned *handed)
{
    *handed = 0;
    t->skipped = 0;
    uint64_t now = tbbt_now_ns();
    unsigned n = 0;
    *due = UINT64_MAX;
    while (n < t->cap) {
        /* A resend is in flight already (counted in inflight): it may always go, or a
         * run whose calls in flight all wait to be sent again would stall. */
        struct slot *s = tbbt__eng_pick_resend(e, now, due);
        if (!s) {
            uint64_t q = tbbt_sched_next(e->sched, now, due);
            s = q == TBBT_SCHED_NONE ? NULL : S(e, q);
        }
        if (!s)
            break;
        if (s->state == S_WAIT && !e->conns[conn_of(e, s)].up) {
            /* its connection is down: park it until reconnected */
            take_locked(e, s);
            tbbt__eng_resend_locked(e, s, false, 0);
            (*handed)++;
            continue;
        }
        take_locked(e, s);
        struct txjob *j = &t->jobs[n++];
        j->s = s;
        j->sched_ns = s->sched_ns;
        j->first = !s->sent;
        if (!s->sent) {     /* counted now: its reply may complete it before we relock */
            s->sent = true;
            e->c.ops_issued++;
            if (s->rec.flags & TBBT_RF_CORRECTIVE)
                e->c.corrective_ops++;
        }
    }
    if (n == 0) {
        if (tbbt_sched_starved(e->sched) && !e->eof)
            atomic_store_explicit(&e->want_admit, true, memory_order_relaxed);
        return 0;
    }
    tbbt__eng_unlock_wake(e);

    memset(t->touched, 0, e->nconns * sizeof(*t->touched));
    for (unsigned i = 0; i < n; i++) {
        tx_one(e, &t->jobs[i], t->q, t->nonblock);
        if (t->jobs[i].skip < 0 && !t->jobs[i].requeue)
            t->touched[t->jobs[i].conn] = true;
    }
    bool owed = false;
    for (unsigned i = 0; i < e->nconns; i++) {
        if (t->touched[i])
            flush_conn(e, i, t->nonblock);
        owed |= t->nonblock && atomic_load(&e->conns[i].flush_owed);
    }
    /* A sent request's slot may be completed and reused by now: only jobs[]. */
    uint64_t sent_ns = tbbt_now_ns();
    for (unsigned i = 0; i < n; i++) {
        const struct txjob *j = &t->jobs[i];
        if (j->skip >= 0 || j->requeue)
            continue;
        tbbt_report_issued(t->rep, sent_ns);
        if (e->o->timing == TBBT_TIMING_TIMESTAMP && j->first)
            tbbt_report_dispatch(t->rep, (int64_t)(sent_ns - j->sched_ns), sent_ns);
        if (j->ev[0])
            fputs(j->ev, e->o->events);
    }

    pthread_mutex_lock(&e->mu);
    if (owed)
        e->wake_send = true;
    for (unsigned i = 0; i < n; i++) {
        struct txjob *j = &t->jobs[i];
        struct slot *s = j->s;
        if (j->skip >= 0) {
            if (j->first) {     /* never went out: not issued after all */
                s->sent = false;
                e->c.ops_issued--;
                if (s->rec.flags & TBBT_RF_CORRECTIVE)
                    e->c.corrective_ops--;
            }
            tbbt__eng_skip_locked(e, s, (enum skip_why)j->skip);
            t->skipped++;
        } else if (j->requeue) {
            tbbt__eng_resend_locked(e, s, false, 0);
            (*handed)++;
        }
    }
    return n;
}

/* True if the receive thread left bytes for the send thread to flush. */
static bool flush_owed(struct eng *e)
{
    for (unsigned i = 0; i < e->nconns; i++)
        if (atomic_load_explicit(&e->conns[i].flush_owed, memory_order_relaxed))
            return true;
    return false;
}

void *tbbt__eng_sender_main(void *arg)
{
    struct eng *e = arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (e->o->timing == TBBT_TIMING_TIMESTAMP)
        tbbt__eng_boost_thread("send", 2);
    struct txctx t;
    tbbt__eng_txctx_init(&t, e, e->rep_tx, false);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        if (e->stop || e->stopping || (e->eof && e->oldest == e->total))
            break;
        if (any_down(e)) {
            tbbt__eng_unlock_wake(e);
            reconnect_down(e);
            pthread_mutex_lock(&e->mu);
        }
        if (flush_owed(e)) {
            tbbt__eng_unlock_wake(e);
            for (unsigned i = 0; i < e->nconns; i++)
                if (atomic_exchange(&e->conns[i].flush_owed, false))
                    flush_conn(e, i, false);
            pthread_mutex_lock(&e->mu);
        }
        uint64_t due;
        unsigned handed;
        if (tbbt__eng_dispatch_locked(e, &t, &due, &handed) == 0 && !flush_owed(e)) {
            if (tbbt_sched_inflight(e->sched) < e->o->max_outstanding &&
                e->admitted - e->oldest >= e->W - 1 &&
                due == UINT64_MAX)
                e->c.window_stalls++;
            if (e->o->peer)
                tbbt__eng_peer_waiting_locked(e);
            sender_wait(e, due);
        }
    }
    tbbt__eng_unlock_wake(e);
    tbbt__eng_wake_rx(e);
    tbbt__eng_txctx_fini(&t);
    return NULL;
}
