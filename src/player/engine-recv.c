/* SPDX-License-Identifier: MIT */
/*
 * The engine's receive thread (engine-int.h): reads replies in batches, matches them by
 * XID, checks each outcome and reply against the trace (attributes: attrcheck.h; READDIR
 * entry counts), completes the requests (or hands them back to be sent again), expires
 * calls past their timeout, notices a dead server and a stop request.
 */
#include "player/engine-int.h"

static void event_complete(struct eng *e, const struct rxdone *d, const char *what)
{
    if (!e->o->events)
        return;
    fprintf(e->o->events, "C %" PRIu64 " %" PRIu64 " %s %d\n", d->s->seq,
            d->recv_ns - e->start_ns, what, d->nfs);
}

/* A listing read in several pages, as far as its replies came (struct eng rx_listings). */
struct listing {
    uint64_t next_cookie;       /* the traced cookie the next page continues from */
    uint64_t traced, got;       /* entries so far */
};

static uint64_t listing_key(const struct slot *s)
{
    return (uint64_t)s->clone << 32 | (s->rec.id & 0xffffffffu);
}

/*
 * READDIR(PLUS) entry counts.  A page that holds a whole listing (cookie 0, EOF) is
 * checked on its own; pages of a longer listing are summed from its first page to its
 * last, which must end it as traced: where a server splits a listing into pages follows
 * its directory order (ext4: a hash with a per-file-system seed), so a page's count
 * differs when only the split does.
 */
static unsigned rx_check_entries(struct eng *e, const struct slot *s, uint32_t n, bool eof)
{
    const struct tbbt_trace_rec *r = &s->rec;
    bool first = !TBBT_HAS(r, TBBT_F_COOKIE) || r->cookie == 0;
    bool last = TBBT_HAS(r, TBBT_F_EOF) && r->eof;
    uint64_t key = listing_key(s);
    if (first && last)
        return (n != r->n_entries ? RX_DIFF_ENTRIES : 0) | (!eof ? RX_DIFF_EOF : 0);
    struct listing *l = g_hash_table_lookup(e->rx_listings, GSIZE_TO_POINTER(key));
    if (first) {
        if (!l) {
            l = g_new(struct listing, 1);
            g_hash_table_insert(e->rx_listings, GSIZE_TO_POINTER(key), l);
        }
        l->traced = l->got = 0;
    } else if (!l || l->next_cookie != r->cookie) {
        if (l)      /* the page before this one was not seen: the sum is unknown */
            g_hash_table_remove(e->rx_listings, GSIZE_TO_POINTER(key));
        return 0;
    }
    l->traced += r->n_entries;
    l->got += n;
    l->next_cookie = r->n_entries ? r->entries[r->n_entries - 1].cookie : r->cookie;
    unsigned diff = 0;
    if (last || eof) {
        if (l->traced != l->got || eof != last)
            diff = RX_DIFF_ENTRIES;
        g_hash_table_remove(e->rx_listings, GSIZE_TO_POINTER(key));
    }
    return diff;
}

/*
 * The reply of s, answered with the status the trace recorded, against the traced
 * reply: the object's post-operation type, mode, owner, group, size (regular files and
 * symbolic links) and link count (not directories: their size and link count follow
 * subdirectories and entries the trace never saw), and for READDIR(PLUS) the number of
 * entries and EOF (rx_check_entries()).  A difference means the image or the server is
 * not as traced, even when every status matched, unless the traced reply was racy
 * (engine-racy.c): returns the differences, RX_DIFF_* and TBBT_ATTRCHECK_* bits, for
 * tbbt__eng_racy_verdict_locked().  Receive thread (it owns rx_listings).
 */
static unsigned rx_check(struct eng *e, const struct slot *s, uint32_t vers, uint32_t proc,
                         const struct tbbt_nfsreq_listing *l)
{
    const struct tbbt_trace_rec *r = &s->rec;
    struct tbbt_fattr a;
    unsigned diff = 0;

    if (TBBT_HAS(r, TBBT_F_OBJ_ATTR) && tbbt_nfsreq_post_attr(vers, proc, &s->res, &a))
        diff = tbbt_attrcheck_diff(&r->obj_attr, &a) & RX_DIFF_ATTRS;
    if (l && TBBT_HAS(r, TBBT_F_ENTRIES) && !(r->flags & TBBT_RF_REPLY_TRUNC))
        diff |= rx_check_entries(e, s, l->n, l->eof);
    return diff;
}

void tbbt__eng_report_diff(struct tbbt_report *rep, uint32_t prog, uint32_t proc, unsigned diff)
{
    static const struct {
        unsigned bit;
        const char *field;
    } fields[] = {
        {TBBT_ATTRCHECK_TYPE, "type"}, {TBBT_ATTRCHECK_MODE, "mode"},
        {TBBT_ATTRCHECK_UID, "uid"},   {TBBT_ATTRCHECK_GID, "gid"},
        {TBBT_ATTRCHECK_SIZE, "size"}, {TBBT_ATTRCHECK_NLINK, "nlink"},
        {RX_DIFF_ENTRIES, "entries"},  {RX_DIFF_EOF, "eof"},
    };
    for (size_t i = 0; diff && i < G_N_ELEMENTS(fields); i++)
        if (diff & fields[i].bit)
            tbbt_report_mismatch(rep, prog, proc, fields[i].field);
}

/* Outside mu: decodes what the player needs from a reply, then frees the results. */
static void rx_extract(struct eng *e, const struct tbbt_rpcconn_reply *rp, struct rxdone *d)
{
    struct slot *s = rp->arg;
    const struct tbbt_trace_rec *r = &s->rec;
    memset(d, 0, offsetof(struct rxdone, fh));   /* the handle bytes need no clearing */
    d->s = s;
    d->status = rp->status;
    d->recv_ns = rp->recv_ns ? rp->recv_ns : tbbt_now_ns();
    d->lat_ns = d->recv_ns - MIN(d->recv_ns, rp->queued_ns);
    d->nfs = -1;
    if (rp->status != TBBT_RPCCONN_OK)
        return;
    uint32_t vers = r->prog == TBBT_PROG_NFS2 ? 2 : 3;
    uint32_t proc = s->fixup ? lookup_proc(r) : r->proc;
    d->nfs = proc == 0 ? 0 : rp->res_status;
    struct tbbt_nfsreq_listing l;
    bool listing = false;
    if (d->nfs == 0 && s->xres) {
        d->fhlen = tbbt_nfsreq_new_fh(vers, proc, &s->res, d->fh);
        listing = tbbt_nfsreq_readdir(vers, proc, &s->res, &l);
        d->tail = listing && l.n > 0;
        d->cookie = l.last_cookie;
        d->verf = l.verf;
    }
    if (s->xres && s->checked && !s->fixup && d->nfs == s->expected) {
        d->checkable = true;
        d->diff = rx_check(e, s, vers, proc, listing ? &l : NULL);
    }
    if (s->xres)
        xdr_free(s->xres, (char *)&s->res);
}

/* Under mu: applies one reply's outcome to the scheduler. */
static void rx_apply(struct eng *e, struct rxdone *d)
{
    struct slot *s = d->s;
    const struct tbbt_engine_opts *o = e->o;
    uint64_t now = d->recv_ns;
    if (d->status == TBBT_RPCCONN_LOST || d->status == TBBT_RPCCONN_TIMEDOUT) {
        /* As a real client: sent again with the same XID, on the same connection after a
         * timeout, on the new one after a reconnect, until the policy gives up.  The
         * server may still run the calls it read from a connection after that connection
         * is gone: a lost call waits LOST_SETTLE_NS before its resend, so that its first
         * send, if the server runs it, runs first (and the resend gets the duplicate
         * answer) rather than after the resend and the requests the resend's reply
         * released (a REMOVE of the old file run again after the CREATE of the new). */
        bool lost = d->status == TBBT_RPCCONN_LOST;
        /* A timeout against a silent server does not count against --retrans: the
         * call has its resends left when the server wakes up to a backlog. */
        bool silent = tbbt__eng_server_silent(e, d);
        e->c.timeouts += !lost;
        s->resent = true;
        s->retrans = (uint8_t)MIN(s->retrans + (!lost && !silent), 255);
        s->relost = (uint8_t)MIN(s->relost + lost, 255);
        if (silent ||
            tbbt_rpcconn_retry_step(&e->retry, s->retrans, s->relost) == TBBT_RPCCONN_RESEND) {
            e->c.retransmits++;
            tbbt__eng_resend_locked(e, s, true, lost ? now + LOST_SETTLE_NS : 0);
            return;
        }
        if (tbbt__eng_is_retried(s) && s->attempts < o->max_retries) {
            s->attempts++;
            s->retrans = s->relost = 0;
            e->c.retries++;
            tbbt__eng_resend_locked(e, s, false, now + (10000000ull << MIN(s->attempts, 8)));
            return;
        }
        e->c.ops_unknown++;
        tbbt__eng_made_failed(e, s);
        event_complete(e, d, "unknown");
        tbbt__eng_complete_locked(e, s);
        return;
    }
    if (d->status != TBBT_RPCCONN_OK) {
        e->c.ops_completed++;   /* answered, with an RPC error: a replay failure */
        tbbt_report_failure(e->rep_rx, s->rec.prog, s->rec.proc, s->expected,
                            TBBT_REPORT_NO_REPLY, now);
        atomic_fetch_add_explicit(&e->fail_count, 1, memory_order_relaxed);
        tbbt__eng_made_failed(e, s);
        event_complete(e, d, "rpcerror");
        tbbt__eng_complete_locked(e, s);
        return;
    }
    if (d->nfs == NFS3ERR_JUKEBOX) {
        /* "Try again later" (a grace period, an HSM recall): real clients wait it out;
         * so does the player, within --jukebox-wait, sending again with a new XID after
         * a back-off that doubles from 10 ms to 500 ms. */
        e->c.jukebox_replies++;
        if (s->jb_first_ns == 0) {
            s->jb_first_ns = MAX(now, 1);
            e->c.jukebox_ops++;
        }
        if (now - s->jb_first_ns < (uint64_t)o->jukebox_wait_ms * 1000000ull) {
            uint64_t delay = MIN(JUKEBOX_DELAY0_NS << MIN(s->jb_tries, 16u), JUKEBOX_DELAY_MAX_NS);
            s->jb_tries++;
            tbbt__eng_resend_locked(e, s, false, now + delay);
            return;
        }
        e->c.jukebox_gave_up++;
    }
    if (s->fixup) {
        e->c.ops_completed++;
        tbbt__eng_bind_made(e, s, d);
        event_complete(e, d, "fixup");
        tbbt__eng_complete_locked(e, s);
        return;
    }
    if (s->resent && s->expected == 0 && tbbt__eng_dup_answer(s, d->nfs)) {
        e->c.retransmit_dup_ok++;
        if (is_create(s)) {
            /* A resent create whose first send went through: find what it made. */
            s->fixup = true;
            tbbt__eng_resend_locked(e, s, false, 0);
            return;
        }
        d->nfs = 0;     /* done by its first send */
    }
    e->c.ops_completed++;
    if (d->checkable)
        tbbt__eng_racy_verdict_locked(e, s, d->diff);
    tbbt_report_op(e->rep_rx, s->rec.prog, s->rec.proc, d->lat_ns, now);
    if (!s->checked) {
        e->c.unchecked++;
    } else if (d->nfs != s->expected) {
        tbbt_report_failure(e->rep_rx, s->rec.prog, s->rec.proc, s->expected, d->nfs, now);
        atomic_fetch_add_explicit(&e->fail_count, 1, memory_order_relaxed);
    } else if (s->op == TBBT_NS_OP_READ && d->nfs == 0 && TBBT_HAS(&s->rec, TBBT_F_RES_COUNT)) {
        e->c.read_bytes += s->rec.res_count;
    }
    if (is_create(s) || s->op == TBBT_NS_OP_LOOKUP)
        tbbt__eng_bind_made(e, s, d);
    event_complete(e, d, "ok");
    tbbt__eng_complete_locked(e, s);
}

/*
 * Applies a batch of replies, then sends what they made ready from this thread: the
 * turnaround from a reply to the call that waited for it is one pass of this thread,
 * with no wake-up of the send thread on the way.  The send thread is woken only when
 * something became ready for a later time than it plans to wake up (timestamp timing).
 */
static void rx_batch(struct eng *e, const struct tbbt_rpcconn_reply *reps, int n,
                     struct rxdone *d, struct txctx *t)
{
    for (int i = 0; i < n; i++)
        rx_extract(e, &reps[i], &d[i]);
    tbbt__eng_rx_cookies(e, d, (unsigned)n);
    /* Only an answer of the server shows it alive: a batch of timeouts (from
     * tbbt_rpcconn_expire()) or of calls lost with their connection does not, or a
     * stopped server whose calls keep timing out would never be found dead. */
    for (int i = 0; i < n; i++) {
        if (d[i].status != TBBT_RPCCONN_LOST && d[i].status != TBBT_RPCCONN_TIMEDOUT) {
            atomic_store_explicit(&e->last_reply_ns, tbbt_now_ns(), memory_order_relaxed);
            break;
        }
    }
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < n; i++)
        rx_apply(e, &d[i]);
    if (e->racy_pend->len)
        tbbt__eng_racy_settle_locked(e, false);
    uint64_t due = UINT64_MAX;
    unsigned handed = 0;
    /* Until nothing more may go, or a request had to be handed to the send thread:
     * this thread goes back to reading replies rather than waiting on a send side.  A
     * skipped request (not NFS, no handle) completes within the pass and may release
     * the requests after it, which that pass could not pick yet: another pass. */
    unsigned n_picked;
    if (!e->stop && !e->stopping)
        while ((n_picked = tbbt__eng_dispatch_locked(e, t, &due, &handed)) > 0 && handed == 0 &&
               (n_picked == t->cap || t->skipped > 0))
            ;
    if (due != UINT64_MAX && due < e->sender_until &&
        atomic_load_explicit(&e->sender_waiting, memory_order_relaxed))
        e->wake_send = true;
    tbbt__eng_unlock_wake(e);
}

/*
 * --recv-batch K: while the sender waits for free slots (nothing else can be sent
 * until replies come), the receiver wakes only once K replies' worth of bytes (K times
 * the smallest reply) is buffered on a connection, or fewer if fewer are outstanding,
 * so that it reads many replies per wake-up.  Otherwise every reply wakes it at once.
 * The price: a reply's latency is measured when its batch is read.
 */
static bool set_lowats(struct eng *e, const unsigned *idx, unsigned n, bool full)
{
    bool any = false;
    for (unsigned k = 0; k < n; k++) {
        struct conn *cn = &e->conns[idx[k]];
        int want = 1;
        if (full && e->o->recv_batch) {
            /* N replies of the mean size so far, but at most half of those outstanding;
             * when the next ones are smaller the mark may not be reached: the receiver
             * reads anyway when its poll times out (2 ms). */
            struct tbbt_rpcconn_stats st;
            tbbt_rpcconn_stats(cn->rpc, &st);
            uint64_t mean = st.replies ? st.bytes_recv / st.replies : MIN_REPLY_BYTES;
            unsigned out = tbbt_rpcconn_outstanding(cn->rpc);
            uint64_t n = MAX(1u, MIN(e->o->recv_batch, out / 2));
            want = (int)MIN(n * MAX(mean, MIN_REPLY_BYTES), 1u << 20);
        }
        if (want != cn->lowat && tbbt_rpcconn_set_recv_lowat(cn->rpc, want) == 0)
            cn->lowat = want;
        any |= cn->lowat > 1;
    }
    return any;
}

/* The receiver lets go of a connection that went down; the sender reconnects it. */
static void conn_down(struct eng *e, unsigned i)
{
    pthread_mutex_lock(&e->mu);
    struct conn *cn = &e->conns[i];
    if (cn->polled) {           /* before the sender may close the socket and reconnect */
        epoll_ctl(e->rx_ep, EPOLL_CTL_DEL, tbbt_rpcconn_fd(cn->rpc), NULL);
        cn->polled = false;
    }
    if (cn->up) {
        cn->up = false;
        cn->lowat = 1;          /* the next socket starts without one */
        cn->down_since = tbbt_now_ns();
        cn->next_try = 0;
        tbbt_log(TBBT_LOG_WARN, "connection %u to %s:%u lost: %s", i, e->o->server,
                 e->o->nfs_port, tbbt_rpcconn_error(cn->rpc));
        e->wake_send = true;
    }
    tbbt__eng_unlock_wake(e);
}

/* The receiver's epoll set gets the sockets that came up (the sender connected them). */
static void poll_new_conns(struct eng *e, const unsigned *idx, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        struct conn *cn = &e->conns[idx[k]];
        if (cn->polled)
            continue;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = idx[k]};
        if (epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, tbbt_rpcconn_fd(cn->rpc), &ev) == 0)
            cn->polled = true;
    }
}

/* Reads every reply waiting on connection i and completes them. */
static void rx_conn(struct eng *e, unsigned i, struct tbbt_rpcconn_reply *reps,
                    struct rxdone *d, struct txctx *t)
{
    struct tbbt_rpcconn *c = e->conns[i].rpc;
    for (;;) {
        int got = tbbt_rpcconn_recv(c, reps, REPLY_BATCH);
        if (got > 0)
            rx_batch(e, reps, got, d, t);
        if (got < 0)
            conn_down(e, i);
        if (got < REPLY_BATCH)
            break;
    }
}

/*
 * opts.stop_fd became readable: nothing more is sent (the send and I/O threads end, the
 * receiver dispatches nothing), and the calls out get the stop grace to be answered.
 */
static void begin_stop(struct eng *e)
{
    const struct tbbt_engine_opts *o = e->o;
    unsigned grace_ms = o->stop_grace_ms ? o->stop_grace_ms
                        : (unsigned)MIN(1000, o->timeout_ms > 0 ? o->timeout_ms : 1000);
    pthread_mutex_lock(&e->mu);
    if (!e->stopping && !e->stop) {
        e->stopping = true;
        e->stop_deadline = tbbt_now_ns() + grace_ms * 1000000ull;
        tbbt_log(TBBT_LOG_INFO, "stopping: %u calls out get %u ms to be answered",
                 tbbt_sched_inflight(e->sched), grace_ms);
        pthread_cond_broadcast(&e->cv_send);
        pthread_cond_broadcast(&e->cv_read);
    }
    tbbt__eng_unlock_wake(e);
}

/* Calls queued or sent on the connections up and not answered yet (idx: those up). */
static unsigned calls_out(struct eng *e, const unsigned *idx, unsigned n)
{
    unsigned out = 0;
    for (unsigned k = 0; k < n; k++)
        out += tbbt_rpcconn_outstanding(e->conns[idx[k]].rpc);
    return out;
}

void *tbbt__eng_receiver_main(void *arg)
{
    struct eng *e = arg;
    struct tbbt_rpcconn_reply *reps = g_new(struct tbbt_rpcconn_reply, REPLY_BATCH);
    struct rxdone *d = g_new(struct rxdone, REPLY_BATCH);
    struct epoll_event *ev = g_new(struct epoll_event, e->nconns + 1);
    unsigned *idx = g_new(unsigned, e->nconns + 1);
    uint64_t timeout_ns = (uint64_t)e->o->timeout_ms * 1000000ull;
    /* Calls past their timeout are looked for every timeout / 20, clamped to 10..100 ms:
     * a lost reply costs its timeout and at most a twentieth more (or 10 ms); with a
     * check every timeout / 4 it cost up to a quarter more, 12.5 s for the 10 s TCP
     * default, and conservative order waits that long for every lost reply. */
    uint64_t scan_ns = CLAMP(timeout_ns / 20, 10000000ull, 100000000ull);
    uint64_t next_expire = tbbt_now_ns() + scan_ns;
    if (e->o->timing == TBBT_TIMING_TIMESTAMP)
        tbbt__eng_boost_thread("receive", 1);
    struct txctx t;
    tbbt__eng_txctx_init(&t, e, e->rep_rx, true);
    for (;;) {
        unsigned n = 0;
        pthread_mutex_lock(&e->mu);
        bool done = e->stop || (e->eof && e->oldest == e->total);
        unsigned inflight = tbbt_sched_inflight(e->sched);
        bool full = inflight >= e->o->max_outstanding;
        for (unsigned i = 0; i < e->nconns; i++)
            if (e->conns[i].up)
                idx[n++] = i;
        if (!done && e->stopping)
            done = tbbt_now_ns() >= e->stop_deadline || calls_out(e, idx, n) == 0;
        tbbt__eng_unlock_wake(e);
        if (done)
            break;
        poll_new_conns(e, idx, n);
        bool batched = set_lowats(e, idx, n, full);
        int rc = 0;
        if (inflight > 0 && e->o->rx_spin_us && !batched) {
            uint64_t until = tbbt_now_ns() + e->o->rx_spin_us * 1000ull;
            while ((rc = epoll_wait(e->rx_ep, ev, (int)e->nconns + 1, 0)) == 0 &&
                   tbbt_now_ns() < until)
                ;
        }
        if (rc == 0)
            rc = epoll_wait(e->rx_ep, ev, (int)e->nconns + 1, batched ? 2 : 50);
        if (rc < 0 && errno != EINTR) {
            int err = -errno;
            pthread_mutex_lock(&e->mu);
            tbbt__eng_fail_run(e, "error", err, "receive thread: epoll_wait: %s", g_strerror(-err));
            tbbt__eng_unlock_wake(e);
            break;
        }
        for (int k = 0; k < rc; k++) {
            if (ev[k].data.u32 == STOP_KEY) {
                begin_stop(e);
            } else if (ev[k].data.u32 == PEER_KEY) {
                if (tbbt__eng_peer_drain(e))
                    rx_batch(e, reps, 0, d, &t);    /* what the notices released */
            } else if (ev[k].data.u32 == UINT32_MAX) {
                uint64_t v;
                ssize_t r = read(e->rx_wake, &v, sizeof(v));
                (void)r;
            } else {
                rx_conn(e, ev[k].data.u32, reps, d, &t);
            }
        }
        /* With a low-water mark, replies below it are read when the wait times out. */
        for (unsigned k = 0; rc == 0 && k < n; k++)
            if (e->conns[idx[k]].lowat > 1)
                rx_conn(e, idx[k], reps, d, &t);
        uint64_t now = tbbt_now_ns();
        if (now >= next_expire) {
            next_expire = now + scan_ns;
            for (unsigned k = 0; k < n; k++) {
                int got = tbbt_rpcconn_expire(e->conns[idx[k]].rpc, now - MIN(now, timeout_ns),
                                              reps, REPLY_BATCH);
                if (got > 0)
                    rx_batch(e, reps, got, d, &t);
            }
            uint64_t last = atomic_load_explicit(&e->last_reply_ns, memory_order_relaxed);
            if (inflight > 0 && now > last + (uint64_t)e->o->dead_ms * 1000000ull) {
                pthread_mutex_lock(&e->mu);
                tbbt__eng_fail_run(e, "server dead", -ETIMEDOUT,
                                   "server %s:%u did not answer for %d s", e->o->server,
                                   e->o->nfs_port, e->o->dead_ms / 1000);
                tbbt__eng_unlock_wake(e);
            }
        }
    }
    /* A stopped run ends here: the other threads and the progress loop see stop. */
    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        e->stop = true;
        pthread_cond_broadcast(&e->cv_send);
        pthread_cond_broadcast(&e->cv_read);
    }
    tbbt__eng_unlock_wake(e);
    tbbt__eng_txctx_fini(&t);
    g_free(idx);
    g_free(ev);
    g_free(d);
    g_free(reps);
    return NULL;
}
