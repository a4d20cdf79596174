/* SPDX-License-Identifier: MIT */
/*
 * The three-thread trace player (engine.h; TBBT paper 3.4 and 4, Figure 2): the run
 * (start-up, threads, the final accounting) and what every thread shares: the wake-ups
 * under the scheduler mutex and the completion of a request.  The threads are in
 * engine-read.c, engine-send.c and engine-recv.c; the layout and ownership rules in
 * engine-int.h.
 */
#include "player/engine-int.h"

void tbbt__eng_wake_rx(struct eng *e)
{
    uint64_t one = 1;
    ssize_t w = write(e->rx_wake, &one, sizeof(one));
    (void)w;
}

void tbbt__eng_fail_run(struct eng *e, const char *why, int err, const char *fmt, ...)
{
    if (e->err == 0) {
        e->c.stop_reason = why;
        va_list ap;
        va_start(ap, fmt);
        g_vsnprintf(e->errbuf, sizeof(e->errbuf), fmt, ap);
        va_end(ap);
        e->err = err < 0 ? err : -EIO;
    }
    e->stop = true;
    pthread_cond_broadcast(&e->cv_send);
    pthread_cond_broadcast(&e->cv_read);
    tbbt__eng_wake_rx(e);
}

void tbbt__eng_unlock_wake(struct eng *e)
{
    bool send = e->wake_send, read = e->wake_read;
    e->wake_send = e->wake_read = false;
    if (e->notice_n)
        tbbt__eng_peer_flush_locked(e);
    pthread_mutex_unlock(&e->mu);
    if (send)
        pthread_cond_signal(&e->cv_send);
    if (read)
        pthread_cond_signal(&e->cv_read);
}

void tbbt__eng_wake_locked(struct eng *e)
{
    if (e->wake_send)
        pthread_cond_signal(&e->cv_send);
    if (e->wake_read)
        pthread_cond_signal(&e->cv_read);
    e->wake_send = e->wake_read = false;
}

void tbbt__eng_complete_locked(struct eng *e, struct slot *s)
{
    if (s->jb_first_ns) {
        uint64_t now = tbbt_now_ns();
        double w = (double)(now - MIN(now, s->jb_first_ns)) / 1e9;
        e->c.jukebox_wait_seconds += w;
        e->c.jukebox_wait_max_seconds = MAX(e->c.jukebox_wait_max_seconds, w);
        s->jb_first_ns = 0;
    }
    s->state = S_DONE;
    bool moved = tbbt_sched_complete(e->sched, s->seq) > 0;
    atomic_fetch_add_explicit(&e->done_count, 1, memory_order_relaxed);
    if (e->o->peer)
        tbbt__eng_peer_note_locked(e, s);
    tbbt__eng_advance_locked(e, moved);
}

void tbbt__eng_advance_locked(struct eng *e, bool moved)
{
    for (; e->oldest < tbbt_sched_oldest(e->sched); e->oldest++)
        S(e, e->oldest)->state = S_FREE;
    /* A reader that waits for room is woken once a chunk of the window is free. */
    if (moved && e->reader_waiting && e->oldest + e->W >= e->reader_need)
        e->wake_read = true;
    /* The requests a completion releases are sent by the receive thread itself
     * (rx_batch): the send thread is not woken for them. */
    if (e->eof && e->oldest == e->total) {
        pthread_cond_broadcast(&e->cv_send);
        tbbt__eng_wake_rx(e);
    }
}

void tbbt__eng_skip_locked(struct eng *e, struct slot *s, enum skip_why why)
{
    e->c.ops_skipped++;
    switch (why) {
    case SKIP_NOT_NFS: e->c.skipped_not_nfs++; break;
    case SKIP_INCOMPLETE: e->c.skipped_incomplete++; break;
    case SKIP_UNSENDABLE: e->c.skipped_unsendable++; break;
    case SKIP_NO_HANDLE: e->c.skipped_no_handle++; break;
    case SKIP_DEPENDENCY: e->c.skipped_dependency++; break;
    }
    tbbt__eng_made_failed(e, s);
    tbbt__eng_complete_locked(e, s);
}

void tbbt__eng_boost_thread(const char *who, int prio)
{
    struct sched_param sp = {.sched_priority = prio};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
        return;
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), -10) != 0)
        tbbt_log(TBBT_LOG_DEBUG, "%s thread priority unchanged: %s", who, g_strerror(errno));
}

void tbbt_engine_defaults(struct tbbt_engine_opts *o)
{
    *o = (struct tbbt_engine_opts){
        .server = "127.0.0.1", .nfs_port = 2049, .clones = 1, .speed = 1.0, .window = 4096,
        .max_outstanding = 64, .connections = 1, .batch = 32, .max_retries = 5,
        .max_retrans = 3, .timeout_ms = 0, .dead_ms = 30000, .jukebox_wait_ms = 300000,
        .spin_us = 20, .stop_fd = -1, .start_spin_us = 200,
    };
}

static int open_conns(struct eng *e, char *err, size_t errlen)
{
    const struct tbbt_engine_opts *o = e->o;
    e->conns = g_new0(struct conn, e->nconns);
    for (unsigned i = 0; i < e->nconns; i++) {
        struct tbbt_rpcconn_opts co = {
            .transport = o->udp ? TBBT_RPCCONN_UDP : TBBT_RPCCONN_TCP,
            .flavor = TBBT_RPCCONN_AUTH_SYS, .uid = o->uid, .gid = o->gid,
            .machine = TBBT_PLAYER_MACHINE, .ngids = 1, .gids = &o->gid,
            .reserved_port = o->reserved_ports,
        };
        e->conns[i].rpc = tbbt_rpcconn_new(&co);
        pthread_mutex_init(&e->conns[i].send_mu, NULL);
        int rc = tbbt_rpcconn_connect(e->conns[i].rpc, o->server, o->nfs_port);
        if (rc < 0) {
            g_snprintf(err, errlen, "cannot connect to %s:%u: %s", o->server, o->nfs_port,
                       tbbt_rpcconn_error(e->conns[i].rpc));
            return rc;
        }
        e->conns[i].up = true;
        e->conns[i].lowat = 1;
    }
    return 0;
}

static void eng_free(struct eng *e)
{
    if (e->rx_listings)
        g_hash_table_destroy(e->rx_listings);
    tbbt__eng_racy_fini(e);
    for (unsigned i = 0; i < e->nconns && e->conns; i++) {
        tbbt_rpcconn_free(e->conns[i].rpc);
        if (e->conns[i].rpc)
            pthread_mutex_destroy(&e->conns[i].send_mu);
    }
    g_free(e->conns);
    for (unsigned i = 0; i < e->W; i++)
        tbbt_trace_rec_fini(&e->slots[i].rec);
    g_free(e->slots);
    g_queue_clear(&e->resend);
    tbbt_sched_free(e->sched);
    tbbt_play_cookies_free(e->cookies);
    tbbt_play_creds_fini(&e->creds);
    g_mutex_clear(&e->cookie_mu);
    tbbt_report_free(e->rep_tx);
    if (e->rx_wake >= 0)
        close(e->rx_wake);
    if (e->rx_ep >= 0)
        close(e->rx_ep);
    pthread_cond_destroy(&e->cv_send);
    pthread_cond_destroy(&e->cv_read);
    pthread_mutex_destroy(&e->mu);
}

/*
 * A run that stopped early leaves requests in the window: one that went out (counted
 * in ops_issued) and got no answer has an unknown outcome; one never sent is skipped
 * (skipped_stopped).  So trace_ops = issued + skipped and issued = completed + unknown
 * hold for every run.  After the threads are joined.
 */
static void account_unfinished(struct eng *e)
{
    for (uint64_t q = e->oldest; q < e->admitted; q++) {
        const struct slot *s = S(e, q);
        if (s->seq != q || s->state == S_DONE || s->state == S_FREE || s->external)
            continue;
        if (s->sent) {
            e->c.ops_unknown++;
        } else {
            e->c.ops_skipped++;
            e->c.skipped_stopped++;
        }
    }
}

static void progress_line(struct eng *e, bool final)
{
    double t = (double)(tbbt_now_ns() - e->start_ns) / 1e9;
    uint64_t done = atomic_load_explicit(&e->done_count, memory_order_relaxed);
    uint64_t fails = atomic_load_explicit(&e->fail_count, memory_order_relaxed);
    fprintf(stderr, "\rtbbt-play: %6.1f s  %10" PRIu64 " ops done  %9.0f ops/s  %" PRIu64
            " failures%s", t, done, t > 0 ? (double)done / t : 0.0, fails, final ? "\n" : "");
    fflush(stderr);
}

/*
 * Waits until CLOCK_MONOTONIC time t: sleeps, then spins the last spin_us.  Returns t,
 * and when it went on in *woke.
 * The calling thread runs SCHED_FIFO above the player's threads meanwhile, where allowed:
 * processes that start together on shared cores (MPI ranks) each get a core at once
 * instead of a time slice later, behind the threads the first ones start.
 */
static uint64_t start_at(uint64_t t, unsigned spin_us, uint64_t *woke)
{
    uint64_t spin = (uint64_t)spin_us * 1000u;
    int policy;
    struct sched_param old, rt = {.sched_priority = 3};
    bool boosted = pthread_getschedparam(pthread_self(), &policy, &old) == 0 &&
                   pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt) == 0;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);     /* wake on time, not up to 50 us late */
    if (t > tbbt_now_ns() + spin) {
        uint64_t wake = t - spin;
        struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000u),
                              .tv_nsec = (long)(wake % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    while (tbbt_now_ns() < t)
        ;
    *woke = tbbt_now_ns();
    if (boosted)
        pthread_setschedparam(pthread_self(), policy, &old);
    return t;
}

int tbbt_engine_run(const struct tbbt_engine_opts *o, struct tbbt_report **rep,
                    struct tbbt_report_counts *counts, char *err, size_t errlen)
{
    struct eng eng = {0}, *e = &eng;
    e->o = o;
    e->retry = (struct tbbt_rpcconn_retry){.timeout_ms = MAX(o->timeout_ms, 1),
                                           .retrans = o->max_retrans,
                                           .relost = o->max_retries,
                                           .dead_ms = MAX(o->dead_ms, 1)};
    e->n_clones = MAX(1u, o->clones);
    e->W = MAX(o->window, 2 * e->n_clones);
    e->W = (e->W + e->n_clones - 1) / e->n_clones * e->n_clones;
    e->nconns = MAX(1u, MIN(o->connections, TBBT_ENGINE_MAX_CONNS));
    e->slots = g_new0(struct slot, e->W);
    for (unsigned i = 0; i < e->W; i++)
        tbbt_trace_rec_init(&e->slots[i].rec);
    /* Adaptive: a thread that finds mu taken spins a little before it sleeps; the
     * sections under mu are short, and each sleep is a futex call and two switches. */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&e->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv_send, &ca);
    pthread_cond_init(&e->cv_read, &ca);
    pthread_condattr_destroy(&ca);
    struct tbbt_sched_opts so = {
        .order = o->order == TBBT_ORDER_FSDEP ? TBBT_SCHED_FSDEP : TBBT_SCHED_CONSERVATIVE,
        .window = e->W, .clones = e->n_clones,
        .timed = o->timing == TBBT_TIMING_TIMESTAMP,
        .causal_slack_ns = o->order == TBBT_ORDER_CONSERVATIVE ? o->causal_slack_ns : 0,
        .max_outstanding = o->max_outstanding, .client_outstanding = o->client_outstanding,
        .hold = tbbt__eng_needs_pending, .hold_arg = e, .conflict = tbbt__eng_racy_conflict, .conflict_arg = e};
    e->sched = tbbt_sched_new(&so);
    g_queue_init(&e->resend);
    e->rx_listings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    tbbt__eng_racy_init(e);
    g_mutex_init(&e->cookie_mu);
    e->cookies = tbbt_play_cookies_new();
    tbbt_play_creds_init(&e->creds);
    e->total = UINT64_MAX;
    e->sender_until = UINT64_MAX;
    e->rx_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    e->rx_ep = epoll_create1(EPOLL_CLOEXEC);
    e->c.order = o->order == TBBT_ORDER_FSDEP ? "fsdep" : "conservative";
    e->c.timing = o->timing == TBBT_TIMING_TIMESTAMP ? "timestamp" : "full";
    e->c.transport = o->udp ? "udp" : "tcp";
    e->c.speed = o->timing == TBBT_TIMING_TIMESTAMP ? o->speed : 1.0;
    e->c.clones = e->n_clones;
    e->c.connections = e->nconns;
    e->c.window = e->W;
    e->c.max_outstanding = o->max_outstanding;
    e->c.causal_slack_us = o->order == TBBT_ORDER_FSDEP ? NAN : (double)o->causal_slack_ns / 1e3;

    struct epoll_event wake = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    struct epoll_event stop = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = STOP_KEY};
    struct epoll_event peer = {.events = EPOLLIN, .data.u32 = PEER_KEY};
    int rc = 0;
    if (e->rx_wake < 0 || e->rx_ep < 0 ||
        epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, e->rx_wake, &wake) < 0 ||
        (o->stop_fd >= 0 && epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, o->stop_fd, &stop) < 0) ||
        (o->peer && epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, o->peer->in_fd, &peer) < 0)) {
        rc = -errno;
        g_snprintf(err, errlen, "cannot set up the receive thread's wake-ups: %s",
                   g_strerror(errno));
    }
    if (rc == 0)
        rc = open_conns(e, err, errlen);
    double user0, sys0;
    tbbt_cpu_seconds(&user0, &sys0);
    uint64_t at = o->ready ? o->ready(o->ready_arg) : 0;  /* also after a failure: the
                                                              other ranks wait for it */
    uint64_t woke = 0;
    e->start_ns = at && rc == 0 ? start_at(at, o->start_spin_us, &woke) : (woke = tbbt_now_ns());
    if (o->started_ns)
        *o->started_ns = woke;
    e->rep_tx = tbbt_report_new(e->start_ns);
    e->rep_rx = tbbt_report_new(e->start_ns);
    if (rc == 0) {
        atomic_store(&e->last_reply_ns, tbbt_now_ns());
        pthread_t tr, ts, tx;
        pthread_create(&tr, NULL, tbbt__eng_reader_main, e);
        pthread_create(&ts, NULL, tbbt__eng_sender_main, e);
        pthread_create(&tx, NULL, tbbt__eng_receiver_main, e);
        if (o->progress) {
            for (;;) {
                pthread_mutex_lock(&e->mu);
                bool done = e->stop || (e->eof && e->oldest == e->total);
                tbbt__eng_unlock_wake(e);
                if (done)
                    break;
                progress_line(e, false);
                g_usleep(500000);
            }
            progress_line(e, true);
        }
        pthread_join(tr, NULL);
        pthread_join(ts, NULL);
        pthread_join(tx, NULL);
        if (e->err) {
            rc = e->err;
            g_strlcpy(err, e->errbuf, errlen);
        } else if (e->stopping && !(e->eof && e->oldest == e->total)) {
            rc = -EINTR;
            e->c.stop_reason = "stopped";
            g_snprintf(err, errlen, "replay stopped on request");
        }
    }
    uint64_t end_ns = tbbt_now_ns();
    tbbt_cpu_seconds(&e->c.cpu_user_seconds, &e->c.cpu_system_seconds);
    e->c.cpu_user_seconds -= user0;
    e->c.cpu_system_seconds -= sys0;
    e->c.trace_ops = e->admitted - e->ext_admitted;  /* the records read into the window,
                                                        per clone, but others' */
    e->c.peak_outstanding = tbbt_sched_peak(e->sched);
    e->c.client_stalls = tbbt_sched_client_stalls(e->sched);
    e->c.skipped_filtered = e->filtered;
    e->c.wall_seconds = (double)(end_ns - e->start_ns) / 1e9;
    e->c.trace_seconds = (double)(e->trace_t1 - MIN(e->trace_t1, e->trace_t0)) / 1e9;
    e->c.finished = rc == 0;
    if (rc != 0 && !e->c.stop_reason)
        e->c.stop_reason = "error";
    tbbt__eng_racy_settle_locked(e, true);  /* the threads are gone */
    account_unfinished(e);
    tbbt__eng_peer_fini(e);
    *counts = e->c;
    tbbt_report_merge(e->rep_rx, e->rep_tx);
    *rep = e->rep_rx;
    eng_free(e);
    return rc;
}
