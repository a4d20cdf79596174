/* SPDX-License-Identifier: MIT */
/*
 * The engine's I/O thread (engine-int.h): streams trace records into the lookahead
 * window (a record straight into its slot, or through the --reorder staging area), with
 * the --subset filter, and admits them to the scheduler in batches; waits for room when
 * the window is full.  Does not send, and never decides the order (sched.h).
 */
#include "player/engine-int.h"

static void admit_locked(struct eng *e, uint64_t upto)
{
    /* The sender is woken only if these requests may go before the next reply, which
     * would let the receive thread send them: conservative order was waiting for them
     * (the next request to issue had not been admitted), or fsdep made some ready. */
    bool wake = e->o->order == TBBT_ORDER_CONSERVATIVE && tbbt_sched_behind(e->sched);
    for (uint64_t q = e->admitted; q < upto; q++) {
        struct slot *s = S(e, q);
        s->state = S_WAIT;
        /* fsdep is made of the object locks; conservative order adds the locks on
         * directory entries to its own rule, so that two requests on one name that
         * overlapped in the trace (two clients racing for one lock file) reach the server
         * in the order the traced server saw them, not in whichever order its threads
         * pick them up.  Other overlapping requests keep their traced concurrency (an
         * attribute read racing a write: its reply is not checked, see rx_check()). */
        struct tbbt_fsdep_sets sets;
        tbbt_fsdep_sets(&s->rec, &sets);
        s->nchg = (uint8_t)tbbt_fsdep_changes(&sets, s->chg);
        s->shown = tbbt_fsdep_shown(&s->rec);
        tbbt__eng_racy_admit_locked(e, s);
        struct tbbt_sched_req rq = {.clone = s->clone, .client = s->client,
                                    .call_ns = s->rec.call_ns, .reply_ns = s->reply_key,
                                    .due_ns = s->sched_ns, .sets = &sets,
                                    .external = s->external};
        bool ready;
        tbbt_sched_admit(e->sched, &rq, &ready);
        wake |= ready;
        if (s->external) {
            s->state = S_FLIGHT;        /* in flight elsewhere */
            e->ext_admitted++;
            e->admitted = q + 1;        /* its notice may complete it now */
            tbbt__eng_peer_admitted_locked(e, s);
        }
    }
    e->admitted = upto;
    atomic_store_explicit(&e->want_admit, false, memory_order_relaxed);
    if (wake && atomic_load_explicit(&e->sender_waiting, memory_order_relaxed))
        e->wake_send = true;
}

/* Fills the per-request fields of a slot from its record. */
static void prepare(struct eng *e, struct slot *s, uint64_t seq, uint32_t clone)
{
    const struct tbbt_trace_rec *r = &s->rec;
    s->seq = seq;
    s->clone = clone;
    s->client = r->endpoint * e->n_clones + clone;
    s->attempts = s->retrans = s->relost = 0;
    s->resent = false;
    s->jb_tries = 0;
    s->jb_first_ns = 0;
    s->same_xid = s->fixup = s->made_pending = s->made_was_known = s->sent = false;
    s->cookie_mapped = s->racy = s->external = false;
    s->op = (uint8_t)tbbt_ns_op(r);
    s->checked = (r->flags & TBBT_RF_REPLY) && r->rpc_stat == TBBT_RPC_SUCCESS &&
                 ((r->flags & TBBT_RF_STATUS) || r->proc == 0);
    s->expected = (r->flags & TBBT_RF_STATUS) ? r->status : 0;
    s->reply_key = (r->flags & TBBT_RF_REPLY) ? r->reply_ns : NO_REPLY_KEY;
    s->sched_ns = tbbt_sched_due(e->start_ns, e->trace_t0, r->call_ns, e->o->speed);
}

/*
 * --reorder: the I/O thread's staging area.  Records are read into a pool of k+1
 * staging records and pass through the reorderer (reorder.h); the one that comes out
 * trades places (struct swap, no copy) with the record of the next slot.  Each
 * position keeps its trace times: the times of the records in read order are queued
 * and handed out in that order, so the swapped reads trade their call and reply times
 * too and the schedule, the conservative rule and the event log stay monotone.
 */
struct stage {
    struct tbbt_reorder *ro;
    struct tbbt_trace_rec *pool;    /* k+1 records */
    GPtrArray *free;                /* pool records not in the reorderer */
    uint64_t *times;                /* ring of (call_ns, reply_ns) in read order */
    size_t cap, head, n;
};

static void stage_init(struct stage *st, const struct tbbt_engine_opts *o)
{
    memset(st, 0, sizeof(*st));
    if (!o->reorder)
        return;
    st->ro = tbbt_reorder_new(&o->reorder_spec, o->reorder_seed);
    st->cap = (size_t)o->reorder_spec.k + 1;
    st->pool = g_new(struct tbbt_trace_rec, st->cap);
    st->free = g_ptr_array_sized_new((guint)st->cap);
    st->times = g_new(uint64_t, 2 * st->cap);
    for (size_t i = 0; i < st->cap; i++) {
        tbbt_trace_rec_init(&st->pool[i]);
        g_ptr_array_add(st->free, &st->pool[i]);
    }
}

static void stage_fini(struct stage *st)
{
    if (!st->ro)
        return;
    for (size_t i = 0; i < st->cap; i++)
        tbbt_trace_rec_fini(&st->pool[i]);
    g_free(st->pool);
    g_ptr_array_free(st->free, TRUE);
    g_free(st->times);
    tbbt_reorder_free(st->ro);
}

/* Only READs move, and only past other READs: two reads never depend on each other. */
static bool swappable(const struct tbbt_trace_rec *rec)
{
    return tbbt_ns_op(rec) == TBBT_NS_OP_READ;
}

/* Hands in a record just read (from the free pool) with its times. */
static void stage_push(struct stage *st, struct tbbt_trace_rec *rec)
{
    size_t at = (st->head + st->n) % st->cap;
    st->times[2 * at] = rec->call_ns;
    st->times[2 * at + 1] = rec->reply_ns;
    st->n++;
    tbbt_reorder_push(st->ro, rec, swappable(rec));
}

/* The next record in the new order into dst (swapped in), or false. */
static bool stage_pop(struct stage *st, struct tbbt_trace_rec *dst, bool flush)
{
    struct tbbt_trace_rec *rec = tbbt_reorder_pop(st->ro, flush), tmp;
    if (!rec)
        return false;
    rec->call_ns = st->times[2 * st->head];
    rec->reply_ns = st->times[2 * st->head + 1];
    st->head = (st->head + 1) % st->cap;
    st->n--;
    tmp = *dst;
    *dst = *rec;
    *rec = tmp;
    g_ptr_array_add(st->free, rec);
    return true;
}

/*
 * Reads the next kept record (--subset filter applied) into rec.  1, 0 at the end
 * of the trace, or a negative error (the run is failed).
 */
static int read_kept(struct eng *e, struct tbbt_trace_reader *r, struct tbbt_trace_rec *rec,
                     bool *first)
{
    for (;;) {
        int rc = tbbt_trace_reader_next(r, rec);
        if (rc < 0) {
            pthread_mutex_lock(&e->mu);
            tbbt__eng_fail_run(e, "trace error", rc, "trace '%s': %s at byte %" PRIu64,
                               e->o->trace_path, tbbt_strerror(rc), tbbt_trace_reader_offset(r));
            tbbt__eng_unlock_wake(e);
        }
        if (rc <= 0)
            return rc;
        if (e->o->filter && !e->o->filter(rec, tbbt_trace_reader_eptab(r), e->o->filter_arg)) {
            e->filtered++;
            continue;
        }
        if (e->o->sizes)
            tbbt_verify_sizes_note(e->o->sizes, rec);
        if (*first) {
            e->trace_t0 = rec->call_ns;
            *first = false;
        }
        e->trace_t1 = MAX(e->trace_t1, rec->call_ns);
        return 1;
    }
}

/* The next record for slot rec: straight from the trace, or through the reorderer. */
static int next_record(struct eng *e, struct tbbt_trace_reader *r, struct stage *st,
                       struct tbbt_trace_rec *rec, bool *first, bool *in_eof)
{
    if (!st->ro)
        return read_kept(e, r, rec, first);
    while (!stage_pop(st, rec, *in_eof)) {
        if (*in_eof)
            return 0;
        struct tbbt_trace_rec *in = g_ptr_array_steal_index_fast(st->free, st->free->len - 1);
        int rc = read_kept(e, r, in, first);
        if (rc <= 0) {
            g_ptr_array_add(st->free, in);
            if (rc < 0)
                return rc;
            *in_eof = true;
            continue;
        }
        stage_push(st, in);
    }
    return 1;
}

/*
 * Trace fields the player never reads: the reader steps over them instead of decoding
 * up to two more attribute sets and three wcc sets per record.  The object's
 * attributes are read: replies are checked against them (rx_check()).
 */
static uint64_t unused_fields(void)
{
    static const enum tbbt_field unused[] = {
        TBBT_F_FH, TBBT_F_FH2, TBBT_F_NEW_FH, TBBT_F_OBJ_PRE, TBBT_F_DIR_ATTR, TBBT_F_DIR_PRE,
        TBBT_F_DIR2_ATTR, TBBT_F_DIR2_PRE, TBBT_F_COMMITTED,
        TBBT_F_WRITEVERF, TBBT_F_ACCESS_RES, TBBT_F_INFO,
    };
    uint64_t m = 0;   /* obj_attr and eof: the replies are checked against them */
    for (size_t i = 0; i < G_N_ELEMENTS(unused); i++)
        m |= (uint64_t)1 << unused[i];
    return m;
}

void *tbbt__eng_reader_main(void *arg)
{
    struct eng *e = arg;
    int err = 0;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(e->o->trace_path, &err);
    if (!r) {
        pthread_mutex_lock(&e->mu);
        tbbt__eng_fail_run(e, "trace error", err, "cannot open trace '%s': %s", e->o->trace_path,
                           tbbt_strerror(err));
        tbbt__eng_unlock_wake(e);
        return NULL;
    }
    tbbt_trace_reader_skip_fields(r, unused_fields());
    if (e->o->timing == TBBT_TIMING_TIMESTAMP)
        tbbt__eng_boost_thread("I/O", 1);
    const uint32_t N = e->n_clones;
    uint64_t next = 0, room_end;
    unsigned batch = 0;
    bool first = true, in_eof = false;
    struct stage st;
    stage_init(&st, e->o);
    pthread_mutex_lock(&e->mu);
    room_end = e->oldest + e->W;
    tbbt__eng_unlock_wake(e);
    for (;;) {
        if (next + N > room_end || batch >= 64 ||
            (batch && atomic_load_explicit(&e->want_admit, memory_order_relaxed))) {
            pthread_mutex_lock(&e->mu);
            admit_locked(e, next);
            batch = 0;
            /* A full window: wait until an eighth of it is free, not for every slot. */
            e->reader_need = next + MAX(N, e->W / 8);
            while (!e->stop && !e->stopping && next + N > e->oldest + e->W) {
                tbbt__eng_wake_locked(e);
                e->reader_waiting = true;
                pthread_cond_wait(&e->cv_read, &e->mu);
                e->reader_waiting = false;
            }
            room_end = e->oldest + e->W;
            bool stop = e->stop || e->stopping;
            tbbt__eng_unlock_wake(e);
            if (stop)
                break;
        }
        struct slot *s = S(e, next);
        if (next_record(e, r, &st, &s->rec, &first, &in_eof) <= 0)
            break;
        prepare(e, s, next, 0);
        s->cred = tbbt_play_cred_of(&e->creds, tbbt_trace_reader_credtab(r), &s->rec);
        s->external = e->o->peer &&
                      !e->o->peer->mine(&s->rec, tbbt_trace_reader_eptab(r), e->o->peer->mine_arg);
        for (uint32_t c = 1; c < N; c++) {
            struct slot *d = S(e, next + c);
            tbbt_trace_rec_copy(&d->rec, &s->rec);
            prepare(e, d, next + c, c);
            d->cred = s->cred;
            d->external = s->external;
        }
        next += N;
        batch++;
    }
    uint64_t swaps = st.ro ? tbbt_reorder_swaps(st.ro) : 0;
    stage_fini(&st);
    tbbt_trace_reader_close(r);
    pthread_mutex_lock(&e->mu);
    e->c.reordered_reads = swaps;
    admit_locked(e, next);
    e->eof = true;
    e->total = next;
    if (e->oldest == e->total) {
        pthread_cond_broadcast(&e->cv_send);
        tbbt__eng_wake_rx(e);
    }
    tbbt__eng_unlock_wake(e);
    return NULL;
}
