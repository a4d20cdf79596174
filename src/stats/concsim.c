/* SPDX-License-Identifier: MIT */
/*
 * The concurrency simulator of the TBBT paper, section 5 and Figure 6: how fast could a
 * player replay the trace under an ordering policy and a lookahead window, if every
 * reply came back after a fixed per-procedure latency and the server had unlimited
 * parallelism?  A discrete-event simulation in simulated nanoseconds, streaming: only
 * the requests inside the window are kept.
 *
 * The window is the player's (src/player/engine.c): it holds the oldest request not yet
 * completed and the window - 1 requests after it, in trace order; request i is admitted
 * once every request up to i - window has completed.  Admitted requests are issued as
 * soon as the policy lets them (full-speed timing):
 *
 *   conservative  (paper 3.4.1) in trace order, and only when no issued, uncompleted
 *                 request has a trace reply time at or before this request's call time;
 *   fsdep         the object locks of Table 4 (tbbt_fsdep_sets/tbbt_fsdep_admit from
 *                 src/player/fsdep.h): a request waits until every earlier conflicting
 *                 request has completed.
 *
 * Not modelled: the player's handle-pending wait and retries; every request succeeds.
 */
#include "stats/stats.h"

#include <assert.h>
#include <math.h>

#include "player/fsdep.h"
#include "util/heap.h"

#define NO_REPLY UINT64_MAX

enum { S_WAIT = 1, S_FLIGHT, S_DONE };

struct slot {
    uint64_t seq;
    uint64_t call_ns, reply_key, lat_ns;
    uint8_t state;
    uint32_t ndeps, nwaiters, wcap;
    uint64_t *waiters;
};

struct tbbt_concsim {
    enum tbbt_concsim_policy policy;
    uint32_t W;                     /* the window */
    uint32_t R;                     /* slots in the ring: min(W, max_ops) */
    uint64_t max_ops;
    struct slot *slots;
    uint64_t oldest, admitted, next_issue;
    uint64_t now, inflight, peak;
    GArray *events;                 /* (completion time, seq) */
    GArray *pend;                   /* conservative: (trace reply time, seq) */
    struct tbbt_fsdep *locks;
};

static struct slot *S(struct tbbt_concsim *s, uint64_t seq)
{
    return &s->slots[seq % s->R];
}

static bool live(uint64_t seq, void *arg)
{
    struct tbbt_concsim *s = arg;
    if (seq < s->oldest || seq >= s->admitted)
        return false;
    struct slot *x = S(s, seq);
    return x->seq == seq && x->state != S_DONE;
}

static void add_dep(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind, void *arg)
{
    struct tbbt_concsim *s = arg;
    (void)kind;         /* TBBT_FSDEP_ALL: every conflict binds */
    struct slot *h = S(s, holder), *w = S(s, waiter);
    if (h->nwaiters == h->wcap) {
        h->wcap = MAX(4, h->wcap * 2);
        h->waiters = g_renew(uint64_t, h->waiters, h->wcap);
    }
    h->waiters[h->nwaiters++] = waiter;
    w->ndeps++;
}

struct tbbt_concsim *tbbt_concsim_new(enum tbbt_concsim_policy policy, uint32_t window,
                                      uint64_t max_ops)
{
    struct tbbt_concsim *s = g_new0(struct tbbt_concsim, 1);
    assert(window >= 1 && window <= TBBT_STATS_WINDOW_MAX);
    s->policy = policy;
    s->W = window;
    s->R = max_ops && max_ops < window ? (uint32_t)max_ops : window;
    s->max_ops = max_ops;
    s->slots = g_new0(struct slot, s->R);
    s->events = tbbt_heap_new();
    s->pend = tbbt_heap_new();
    if (policy == TBBT_CONCSIM_FSDEP)
        s->locks = tbbt_fsdep_new(live, add_dep, s);
    return s;
}

void tbbt_concsim_free(struct tbbt_concsim *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->R; i++)
        g_free(s->slots[i].waiters);
    g_free(s->slots);
    g_array_free(s->events, TRUE);
    g_array_free(s->pend, TRUE);
    tbbt_fsdep_free(s->locks);
    g_free(s);
}

static void issue(struct tbbt_concsim *s, struct slot *x)
{
    x->state = S_FLIGHT;
    tbbt_heap_push(s->events, s->now + x->lat_ns, x->seq);
    s->inflight++;
    s->peak = MAX(s->peak, s->inflight);
}

/* Conservative: issues requests in trace order while the rule allows. */
static void issue_conservative(struct tbbt_concsim *s)
{
    while (s->next_issue < s->admitted) {
        struct slot *x = S(s, s->next_issue);
        const struct tbbt_heap_item *top;
        while ((top = tbbt_heap_top(s->pend)) && !live(top->seq, s))
            tbbt_heap_pop(s->pend);
        if (top && top->key <= x->call_ns)
            return;     /* a request whose trace reply came before this call is pending */
        issue(s, x);
        if (x->reply_key != NO_REPLY)
            tbbt_heap_push(s->pend, x->reply_key, x->seq);
        s->next_issue++;
    }
}

/* Completes the earliest request in flight, advancing time to its completion. */
static void step(struct tbbt_concsim *s)
{
    const struct tbbt_heap_item *top = tbbt_heap_top(s->events);
    assert(top);
    uint64_t seq = top->seq;
    s->now = MAX(s->now, top->key);
    tbbt_heap_pop(s->events);
    struct slot *x = S(s, seq);
    x->state = S_DONE;
    s->inflight--;
    for (uint32_t i = 0; i < x->nwaiters; i++) {
        struct slot *w = S(s, x->waiters[i]);
        if (w->seq == x->waiters[i] && w->ndeps > 0 && --w->ndeps == 0 && w->state == S_WAIT)
            issue(s, w);
    }
    x->nwaiters = 0;
    while (s->oldest < s->admitted && S(s, s->oldest)->state == S_DONE)
        s->oldest++;
    if (s->policy == TBBT_CONCSIM_CONSERVATIVE)
        issue_conservative(s);
}

void tbbt_concsim_add(struct tbbt_concsim *s, const struct tbbt_trace_rec *rec,
                      uint64_t latency_ns)
{
    assert(s->max_ops == 0 || s->admitted < s->max_ops);
    while (s->admitted - s->oldest >= s->W)
        step(s);
    uint64_t seq = s->admitted++;
    struct slot *x = S(s, seq);
    x->seq = seq;
    x->call_ns = rec->call_ns;
    x->reply_key = (rec->flags & TBBT_RF_REPLY) ? rec->reply_ns : NO_REPLY;
    x->lat_ns = latency_ns;
    x->state = S_WAIT;
    x->ndeps = x->nwaiters = 0;
    if (s->policy == TBBT_CONCSIM_FSDEP) {
        struct tbbt_fsdep_sets sets;
        tbbt_fsdep_sets(rec, &sets);
        tbbt_fsdep_admit(s->locks, seq, 0, &sets, TBBT_FSDEP_ALL);
        if (x->ndeps == 0)
            issue(s, x);
    } else {
        issue_conservative(s);
    }
}

void tbbt_concsim_finish(struct tbbt_concsim *s)
{
    while (s->events->len)
        step(s);
    assert(s->oldest == s->admitted);
}

uint64_t tbbt_concsim_ops(const struct tbbt_concsim *s)
{
    return s->admitted;
}

uint64_t tbbt_concsim_makespan(const struct tbbt_concsim *s)
{
    return s->now;
}

double tbbt_concsim_throughput(const struct tbbt_concsim *s)
{
    if (s->admitted == 0)
        return 0;
    if (s->now == 0)
        return INFINITY;
    return (double)s->admitted / ((double)s->now / 1e9);
}

uint64_t tbbt_concsim_peak(const struct tbbt_concsim *s)
{
    return s->peak;
}
