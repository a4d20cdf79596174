/* SPDX-License-Identifier: MIT */
/*
 * The replay scheduler (sched.h; TBBT paper 3.4.1 and Figure 6): the lookahead window,
 * admission with the Table 4 locks, completion, the per-client and overall limits on
 * requests out, and due times; the ordering policy behind struct tbbt__sched_order
 * (order-conservative.c, order-fsdep.c).  No threads, no I/O, no clock: time is the
 * caller's `now`.  The ring of request states is described in sched-int.h.
 */
#include "sched/sched-int.h"

#include <assert.h>

typedef struct tbbt__sched_req req;

bool tbbt_sched_live(const struct tbbt_sched *s, uint64_t seq)
{
    if (seq < s->oldest || seq >= s->admitted)
        return false;
    const req *r = tbbt__sched_r(s, seq);
    return r->seq == seq && (r->state == TBBT__SCHED_WAIT || r->state == TBBT__SCHED_TAKEN);
}

static bool live_cb(uint64_t seq, void *arg)
{
    return tbbt_sched_live(arg, seq);
}

/* fsdep.h's dependency callback: the caller hears of every conflict, binding ones wait. */
static void dep_cb(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind, void *arg)
{
    struct tbbt_sched *s = arg;
    if (s->o.conflict)
        s->o.conflict(holder, waiter, kind, s->o.conflict_arg);
    if (kind == TBBT_FSDEP_DEP_INFO)
        return;
    req *h = tbbt__sched_r(s, holder), *w = tbbt__sched_r(s, waiter);
    if (h->nwaiters == h->wcap) {
        h->wcap = MAX(4, h->wcap * 2);
        h->waiters = g_renew(uint64_t, h->waiters, h->wcap);
    }
    h->waiters[h->nwaiters++] = waiter;
    w->ndeps++;
    if (h->external && !w->external && w->xdeps++ == 0)
        s->xwaiting++;
}

struct tbbt_sched *tbbt_sched_new(const struct tbbt_sched_opts *o)
{
    assert(o->clones >= 1 && o->window >= 1 && o->window % o->clones == 0);
    struct tbbt_sched *s = g_new0(struct tbbt_sched, 1);
    s->o = *o;
    if (o->order == TBBT_SCHED_FSDEP)
        s->o.causal_slack_ns = 0;
    s->ord = o->order == TBBT_SCHED_FSDEP ? &tbbt__sched_fsdep : &tbbt__sched_conservative;
    s->ring = o->max_requests && o->max_requests < o->window ? (uint32_t)o->max_requests
                                                             : o->window;
    s->reqs = g_new0(req, s->ring);
    s->locks = tbbt_fsdep_new(live_cb, dep_cb, s);
    if (o->client_outstanding)
        s->cl_inflight = g_array_new(FALSE, TRUE, sizeof(unsigned));
    s->ord->init(s);
    return s;
}

void tbbt_sched_free(struct tbbt_sched *s)
{
    if (!s)
        return;
    s->ord->fini(s);
    for (uint32_t i = 0; i < s->ring; i++)
        g_free(s->reqs[i].waiters);
    g_free(s->reqs);
    tbbt_fsdep_free(s->locks);
    if (s->xdue)
        g_array_free(s->xdue, TRUE);
    if (s->cl_inflight)
        g_array_free(s->cl_inflight, TRUE);
    g_free(s);
}

uint64_t tbbt_sched_due(uint64_t start_ns, uint64_t t0_ns, uint64_t call_ns, double speed)
{
    double rel = (double)(call_ns - MIN(call_ns, t0_ns)) / speed;
    return start_ns + (uint64_t)rel;
}

/* ------------------------------------------------------------------ per-client limit */

static unsigned *client_count(struct tbbt_sched *s, uint32_t key)
{
    if (key >= s->cl_inflight->len)
        g_array_set_size(s->cl_inflight, key + 1);
    return &g_array_index(s->cl_inflight, unsigned, key);
}

bool tbbt__sched_client_full(struct tbbt_sched *s, const req *r)
{
    return s->cl_inflight && *client_count(s, r->client) >= s->o.client_outstanding;
}

void tbbt__sched_client_held(struct tbbt_sched *s, req *r)
{
    if (!r->held) {
        r->held = true;
        s->client_stalls++;
    }
}

/* ------------------------------------------------------------------ admission */

bool tbbt_sched_room(const struct tbbt_sched *s, uint64_t n)
{
    return s->admitted + n <= s->oldest + s->o.window;
}

uint64_t tbbt_sched_admit(struct tbbt_sched *s, const struct tbbt_sched_req *rq, bool *ready)
{
    assert(tbbt_sched_room(s, 1));
    uint64_t seq = s->admitted++;
    assert(seq % s->o.clones == rq->clone);
    req *r = tbbt__sched_r(s, seq);
    r->seq = seq;
    r->call_ns = rq->call_ns;
    r->reply_key = rq->reply_ns;
    r->due_ns = rq->due_ns;
    r->client = rq->client;
    r->state = rq->external ? TBBT__SCHED_TAKEN : TBBT__SCHED_WAIT;
    r->held = r->xheld = false;
    r->external = rq->external;
    r->ndeps = r->nwaiters = r->xdeps = 0;
    s->nx_live += rq->external;
    /* fsdep is made of the object locks; conservative order adds the locks on directory
     * entries to its own rule (all locks with a causal slack). */
    if (rq->sets)
        tbbt_fsdep_admit(s->locks, seq, rq->clone, rq->sets,
                         s->o.order == TBBT_SCHED_FSDEP || s->o.causal_slack_ns
                             ? TBBT_FSDEP_ALL
                             : TBBT_FSDEP_NAMES);
    bool now;
    s->ord->admitted(s, r, &now);
    if (ready)
        *ready = now;
    if (rq->external && rq->done)
        tbbt_sched_complete_external(s, seq);
    return seq;
}

/* ------------------------------------------------------------------ picking */

void tbbt__sched_take(struct tbbt_sched *s, req *r)
{
    r->state = TBBT__SCHED_TAKEN;
    s->inflight++;
    s->peak = MAX(s->peak, s->inflight);
    if (s->cl_inflight)
        (*client_count(s, r->client))++;
}

uint64_t tbbt_sched_next(struct tbbt_sched *s, uint64_t now, uint64_t *due)
{
    s->xblocked = false;
    if (s->o.max_outstanding && s->inflight >= s->o.max_outstanding)
        return TBBT_SCHED_NONE;
    return s->ord->next(s, now, due);
}

/* ------------------------------------------------------------------ completion */

/*
 * r (live) is done: its limits and its waiters.  A notified external waiter whose last
 * dependency this was is due to complete too: queued in s->xdue.
 */
static void release(struct tbbt_sched *s, req *r)
{
    if (r->external) {
        s->nx_live--;
        s->xblocked = false;    /* something may go now: next() tells */
    } else if (r->state == TBBT__SCHED_TAKEN) {
        s->inflight--;
        if (s->cl_inflight) {
            (*client_count(s, r->client))--;
            s->ord->client_room(s, r->client);
        }
    } else if (r->xdeps) {
        s->xwaiting--;          /* completed without being taken */
    }
    r->state = TBBT__SCHED_DONE;
    for (uint32_t i = 0; i < r->nwaiters; i++) {
        uint64_t w = r->waiters[i];
        req *wr = tbbt__sched_r(s, w);
        if (wr->seq != w || wr->ndeps == 0)
            continue;
        if (r->external && !wr->external && --wr->xdeps == 0 &&
            wr->state == TBBT__SCHED_WAIT)
            s->xwaiting--;
        if (--wr->ndeps > 0)
            continue;
        if (wr->state == TBBT__SCHED_WAIT) {
            s->ord->freed(s, wr);
        } else if (wr->external && wr->notified && wr->state == TBBT__SCHED_TAKEN) {
            if (!s->xdue)
                s->xdue = g_array_new(FALSE, FALSE, sizeof(uint64_t));
            g_array_append_val(s->xdue, w);
        }
    }
    r->nwaiters = 0;
}

/* r (live) is done, and the notified external requests waiting only for it (and so
 * on, without recursion); the window moves past the completed oldest requests. */
static uint64_t complete(struct tbbt_sched *s, req *r)
{
    release(s, r);
    while (s->xdue && s->xdue->len) {
        uint64_t q = g_array_index(s->xdue, uint64_t, s->xdue->len - 1);
        g_array_set_size(s->xdue, s->xdue->len - 1);
        release(s, tbbt__sched_r(s, q));
    }
    uint64_t from = s->oldest;
    while (s->oldest < s->admitted && tbbt__sched_r(s, s->oldest)->state == TBBT__SCHED_DONE) {
        tbbt__sched_r(s, s->oldest)->state = TBBT__SCHED_FREE;
        s->oldest++;
    }
    return s->oldest - from;
}

uint64_t tbbt_sched_complete(struct tbbt_sched *s, uint64_t seq)
{
    req *r = tbbt__sched_r(s, seq);
    assert(r->seq == seq && (r->state == TBBT__SCHED_WAIT || r->state == TBBT__SCHED_TAKEN));
    assert(!r->external);
    return complete(s, r);
}

uint64_t tbbt_sched_complete_external(struct tbbt_sched *s, uint64_t seq)
{
    req *r = tbbt__sched_r(s, seq);
    assert(tbbt_sched_live(s, seq) && r->external && !r->notified);
    r->notified = true;
    if (r->ndeps)
        return 0;   /* it completes with its last dependency here (sched.h) */
    return complete(s, r);
}

/* ------------------------------------------------------------------ state */

uint64_t tbbt_sched_oldest(const struct tbbt_sched *s)
{
    return s->oldest;
}

uint64_t tbbt_sched_admitted(const struct tbbt_sched *s)
{
    return s->admitted;
}

unsigned tbbt_sched_inflight(const struct tbbt_sched *s)
{
    return s->inflight;
}

unsigned tbbt_sched_peak(const struct tbbt_sched *s)
{
    return s->peak;
}

uint64_t tbbt_sched_client_stalls(const struct tbbt_sched *s)
{
    return s->client_stalls;
}

uint64_t tbbt_sched_external_stalls(const struct tbbt_sched *s)
{
    return s->xstalls;
}

bool tbbt_sched_external_blocked(const struct tbbt_sched *s)
{
    if (s->o.max_outstanding && s->inflight >= s->o.max_outstanding)
        return false;
    return s->ord->xblocked(s);
}

bool tbbt_sched_starved(const struct tbbt_sched *s)
{
    return s->ord->starved(s);
}

bool tbbt_sched_behind(const struct tbbt_sched *s)
{
    return s->ord->behind(s);
}
