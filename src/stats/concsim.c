/* SPDX-License-Identifier: MIT */
/*
 * The concurrency simulator of the TBBT paper, section 5 and Figure 6: how fast could a
 * player replay the trace under an ordering policy and a lookahead window, if every
 * reply came back after a fixed per-procedure latency and the server had unlimited
 * parallelism?  A discrete-event simulation in simulated nanoseconds, streaming: only
 * the requests inside the window are kept.
 *
 * The window, the ordering policies and the limits are the player's: the simulator
 * drives the same scheduler (src/sched/sched.h) as tbbt-play's engine, with simulated
 * time and without limits on the requests out.  Request i is admitted once every request
 * up to i - window has completed; admitted requests are issued as soon as the policy
 * lets them (full-speed timing):
 *
 *   conservative  (paper 3.4.1) in trace order, and only when no issued, uncompleted
 *                 request has a trace reply time at or before this request's call time
 *                 (admitted without object sets: the player's entry locks are left out);
 *   fsdep         the object locks of Table 4 (src/sched/fsdep.h): a request waits
 *                 until every earlier conflicting request has completed.
 *
 * Not modelled: the player's handle-pending wait and retries; every request succeeds.
 */
#include "stats/stats.h"

#include <assert.h>
#include <math.h>

#include "sched/sched.h"
#include "util/heap.h"

struct tbbt_concsim {
    struct tbbt_sched *sched;
    enum tbbt_concsim_policy policy;
    uint32_t W;                     /* the window */
    uint32_t R;                     /* latencies kept: min(W, max_ops) */
    uint64_t max_ops;
    uint64_t *lat_ns;               /* by seq % R: the latency of each admitted request */
    uint64_t now;
    GArray *events;                 /* (completion time, seq) */
};

struct tbbt_concsim *tbbt_concsim_new(enum tbbt_concsim_policy policy, uint32_t window,
                                      uint64_t max_ops)
{
    struct tbbt_concsim *s = g_new0(struct tbbt_concsim, 1);
    assert(window >= 1 && window <= TBBT_STATS_WINDOW_MAX);
    s->policy = policy;
    s->W = window;
    s->R = max_ops && max_ops < window ? (uint32_t)max_ops : window;
    s->max_ops = max_ops;
    s->lat_ns = g_new0(uint64_t, s->R);
    s->events = tbbt_heap_new();
    struct tbbt_sched_opts so = {
        .order = policy == TBBT_CONCSIM_FSDEP ? TBBT_SCHED_FSDEP : TBBT_SCHED_CONSERVATIVE,
        .window = window, .clones = 1, .max_requests = max_ops};
    s->sched = tbbt_sched_new(&so);
    return s;
}

void tbbt_concsim_free(struct tbbt_concsim *s)
{
    if (!s)
        return;
    tbbt_sched_free(s->sched);
    g_free(s->lat_ns);
    g_array_free(s->events, TRUE);
    g_free(s);
}

/* Issues every request the policy lets go now; each completes after its latency. */
static void issue_ready(struct tbbt_concsim *s)
{
    uint64_t due = UINT64_MAX, seq;
    while ((seq = tbbt_sched_next(s->sched, s->now, &due)) != TBBT_SCHED_NONE)
        tbbt_heap_push(s->events, s->now + s->lat_ns[seq % s->R], seq);
}

/* Completes the earliest request in flight, advancing time to its completion. */
static void step(struct tbbt_concsim *s)
{
    const struct tbbt_heap_item *top = tbbt_heap_top(s->events);
    assert(top);
    uint64_t seq = top->seq;
    s->now = MAX(s->now, top->key);
    tbbt_heap_pop(s->events);
    tbbt_sched_complete(s->sched, seq);
    issue_ready(s);
}

void tbbt_concsim_add(struct tbbt_concsim *s, const struct tbbt_trace_rec *rec,
                      uint64_t latency_ns)
{
    assert(s->max_ops == 0 || tbbt_sched_admitted(s->sched) < s->max_ops);
    while (!tbbt_sched_room(s->sched, 1))
        step(s);
    struct tbbt_fsdep_sets sets;
    struct tbbt_sched_req rq = {
        .call_ns = rec->call_ns,
        .reply_ns = (rec->flags & TBBT_RF_REPLY) ? rec->reply_ns : TBBT_SCHED_NO_REPLY};
    if (s->policy == TBBT_CONCSIM_FSDEP) {
        tbbt_fsdep_sets(rec, &sets);
        rq.sets = &sets;
    }
    s->lat_ns[tbbt_sched_admitted(s->sched) % s->R] = latency_ns;
    tbbt_sched_admit(s->sched, &rq, NULL);
    issue_ready(s);
}

void tbbt_concsim_finish(struct tbbt_concsim *s)
{
    while (s->events->len)
        step(s);
    assert(tbbt_sched_oldest(s->sched) == tbbt_sched_admitted(s->sched));
}

uint64_t tbbt_concsim_ops(const struct tbbt_concsim *s)
{
    return tbbt_sched_admitted(s->sched);
}

uint64_t tbbt_concsim_makespan(const struct tbbt_concsim *s)
{
    return s->now;
}

double tbbt_concsim_throughput(const struct tbbt_concsim *s)
{
    uint64_t n = tbbt_sched_admitted(s->sched);
    if (n == 0)
        return 0;
    if (s->now == 0)
        return INFINITY;
    return (double)n / ((double)s->now / 1e9);
}

uint64_t tbbt_concsim_peak(const struct tbbt_concsim *s)
{
    return tbbt_sched_peak(s->sched);
}
