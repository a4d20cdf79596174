/* SPDX-License-Identifier: MIT */
/*
 * The replay scheduler (sched.h; TBBT paper 3.4.1 and Figure 6): the lookahead window,
 * conservative and FS-dependency order, the per-client and overall limits on requests
 * out, and due times.  No threads, no I/O, no clock: time is the caller's `now`.
 *
 * The window is a ring of request states indexed by sequence number (seq % ring).  A
 * state is FREE (recycled), WAIT (admitted), TAKEN (handed out by tbbt_sched_next()) or
 * DONE (completed, not yet recycled: an earlier request is still live).  Dependencies
 * found at admission (fsdep.h) are counted in the waiter (ndeps) and listed in the
 * holder (waiters), which releases them when it completes.
 */
#include "sched/sched.h"

#include <assert.h>

#include <glib.h>

#include "util/heap.h"

/* Requests of one clone that conservative order looks at past a held-back first one. */
#define CONS_SCAN 64

enum req_state { R_FREE = 0, R_WAIT, R_TAKEN, R_DONE };

struct req {
    uint64_t seq;
    uint64_t call_ns, reply_key, due_ns;
    uint32_t client;
    uint8_t state;              /* enum req_state */
    bool held;                  /* was held back at its client's limit (counted once) */
    uint32_t ndeps;             /* earlier live requests it waits for */
    uint32_t nwaiters, wcap;
    uint64_t *waiters;          /* requests waiting for this one */
};

struct tbbt_sched {
    struct tbbt_sched_opts o;
    uint32_t ring;
    struct req *reqs;
    uint64_t oldest, admitted;
    unsigned inflight, peak;
    uint64_t client_stalls;

    uint64_t *next_issue;       /* conservative: per clone, the next seq to issue */
    GArray **pend;              /* conservative: per clone, heap of (trace reply, seq) */
    GPtrArray *pend_ep;         /* conservative with a causal slack: per client key, the
                                   same heap of that client's requests */
    struct tbbt_fsdep *locks;
    GArray *ready;              /* fsdep: heap of (due or seq, seq) of free requests ... */
    GArray *ready_fifo;         /* ... and those that came in rising order */
    guint ready_head;           /* first live item of ready_fifo */
    GArray *cl_inflight;        /* client limit: unsigned per client key */
    GPtrArray *cl_parked;       /* ... GQueue of seqs (+1) held back per client key, fsdep */
};

static struct req *R(const struct tbbt_sched *s, uint64_t seq)
{
    return &s->reqs[seq % s->ring];
}

bool tbbt_sched_live(const struct tbbt_sched *s, uint64_t seq)
{
    if (seq < s->oldest || seq >= s->admitted)
        return false;
    const struct req *r = R(s, seq);
    return r->seq == seq && (r->state == R_WAIT || r->state == R_TAKEN);
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
    struct req *h = R(s, holder), *w = R(s, waiter);
    if (h->nwaiters == h->wcap) {
        h->wcap = MAX(4, h->wcap * 2);
        h->waiters = g_renew(uint64_t, h->waiters, h->wcap);
    }
    h->waiters[h->nwaiters++] = waiter;
    w->ndeps++;
}

struct tbbt_sched *tbbt_sched_new(const struct tbbt_sched_opts *o)
{
    assert(o->clones >= 1 && o->window >= 1 && o->window % o->clones == 0);
    struct tbbt_sched *s = g_new0(struct tbbt_sched, 1);
    s->o = *o;
    s->ring = o->max_requests && o->max_requests < o->window ? (uint32_t)o->max_requests
                                                             : o->window;
    s->reqs = g_new0(struct req, s->ring);
    s->next_issue = g_new0(uint64_t, o->clones);
    s->pend = g_new(GArray *, o->clones);
    for (uint32_t c = 0; c < o->clones; c++) {
        s->next_issue[c] = c;
        s->pend[c] = tbbt_heap_new();
    }
    if (o->order == TBBT_SCHED_CONSERVATIVE && o->causal_slack_ns)
        s->pend_ep = g_ptr_array_new();
    s->locks = tbbt_fsdep_new(live_cb, dep_cb, s);
    s->ready = tbbt_heap_new();
    s->ready_fifo = g_array_new(FALSE, FALSE, sizeof(struct tbbt_heap_item));
    if (o->client_outstanding) {
        s->cl_inflight = g_array_new(FALSE, TRUE, sizeof(unsigned));
        s->cl_parked = g_ptr_array_new();
    }
    return s;
}

void tbbt_sched_free(struct tbbt_sched *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->ring; i++)
        g_free(s->reqs[i].waiters);
    g_free(s->reqs);
    for (uint32_t c = 0; c < s->o.clones; c++)
        g_array_free(s->pend[c], TRUE);
    g_free(s->pend);
    g_free(s->next_issue);
    for (guint i = 0; s->pend_ep && i < s->pend_ep->len; i++)
        if (g_ptr_array_index(s->pend_ep, i))
            g_array_free(g_ptr_array_index(s->pend_ep, i), TRUE);
    if (s->pend_ep)
        g_ptr_array_free(s->pend_ep, TRUE);
    tbbt_fsdep_free(s->locks);
    g_array_free(s->ready, TRUE);
    g_array_free(s->ready_fifo, TRUE);
    if (s->cl_inflight)
        g_array_free(s->cl_inflight, TRUE);
    for (guint i = 0; s->cl_parked && i < s->cl_parked->len; i++)
        if (g_ptr_array_index(s->cl_parked, i))
            g_queue_free(g_ptr_array_index(s->cl_parked, i));
    if (s->cl_parked)
        g_ptr_array_free(s->cl_parked, TRUE);
    g_free(s);
}

uint64_t tbbt_sched_due(uint64_t start_ns, uint64_t t0_ns, uint64_t call_ns, double speed)
{
    double rel = (double)(call_ns - MIN(call_ns, t0_ns)) / speed;
    return start_ns + (uint64_t)rel;
}

/* ------------------------------------------------------------------ fsdep's ready queue */

static uint64_t ready_key(const struct tbbt_sched *s, const struct req *r)
{
    return s->o.timed ? r->due_ns : r->seq;
}

/*
 * fsdep's ready requests, least (due, seq) first.  Most become ready when admitted, in
 * rising order: they queue in a FIFO (O(1)); the few a completion releases later go to
 * the heap; the least of the two heads goes next.
 */
static void ready_push(struct tbbt_sched *s, const struct req *r)
{
    GArray *f = s->ready_fifo;
    if (s->ready_head == f->len) {
        g_array_set_size(f, 0);
        s->ready_head = 0;
    }
    struct tbbt_heap_item it = {ready_key(s, r), r->seq};
    if (f->len == 0 ||
        tbbt_heap_less(&g_array_index(f, struct tbbt_heap_item, f->len - 1), &it))
        g_array_append_val(f, it);
    else
        tbbt_heap_push(s->ready, it.key, it.seq);
}

static const struct tbbt_heap_item *ready_top(const struct tbbt_sched *s)
{
    const struct tbbt_heap_item *h = tbbt_heap_top(s->ready), *f = NULL;
    if (s->ready_head < s->ready_fifo->len)
        f = &g_array_index(s->ready_fifo, struct tbbt_heap_item, s->ready_head);
    if (!f || (h && tbbt_heap_less(h, f)))
        return h;
    return f;
}

/* Removes top, which ready_top() just returned. */
static void ready_pop(struct tbbt_sched *s, const struct tbbt_heap_item *top)
{
    GArray *f = s->ready_fifo;
    if (s->ready_head < f->len && top == &g_array_index(f, struct tbbt_heap_item, s->ready_head)) {
        s->ready_head++;
        if (s->ready_head >= 4096 && s->ready_head * 2 >= f->len) {
            g_array_remove_range(f, 0, s->ready_head);
            s->ready_head = 0;
        }
    } else {
        tbbt_heap_pop(s->ready);
    }
}

/* ------------------------------------------------------------------ per-client limit */

static unsigned *client_count(struct tbbt_sched *s, uint32_t key)
{
    if (key >= s->cl_inflight->len)
        g_array_set_size(s->cl_inflight, key + 1);
    return &g_array_index(s->cl_inflight, unsigned, key);
}

/* True if r's client has client_outstanding requests out already. */
static bool client_full(struct tbbt_sched *s, const struct req *r)
{
    return s->cl_inflight && *client_count(s, r->client) >= s->o.client_outstanding;
}

/* Counts a request held back at its client's limit, once. */
static void client_held(struct tbbt_sched *s, struct req *r)
{
    if (!r->held) {
        r->held = true;
        s->client_stalls++;
    }
}

/* fsdep: r may go but its client is at its limit; it waits for one of the client's
 * requests to complete (client_release()) instead of in the ready queue. */
static void client_park(struct tbbt_sched *s, struct req *r)
{
    if (r->client >= s->cl_parked->len)
        g_ptr_array_set_size(s->cl_parked, (guint)r->client + 1);
    GQueue *q = g_ptr_array_index(s->cl_parked, r->client);
    if (!q) {
        q = g_queue_new();
        g_ptr_array_index(s->cl_parked, r->client) = q;
    }
    g_queue_push_tail(q, GSIZE_TO_POINTER(r->seq + 1));
    client_held(s, r);
}

/* A request of r's client completed: one of its held-back requests becomes ready. */
static void client_release(struct tbbt_sched *s, const struct req *r)
{
    (*client_count(s, r->client))--;
    if (r->client >= s->cl_parked->len)
        return;
    GQueue *q = g_ptr_array_index(s->cl_parked, r->client);
    if (q && !g_queue_is_empty(q))
        ready_push(s, R(s, GPOINTER_TO_SIZE(g_queue_pop_head(q)) - 1));
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
    struct req *r = R(s, seq);
    r->seq = seq;
    r->call_ns = rq->call_ns;
    r->reply_key = rq->reply_ns;
    r->due_ns = rq->due_ns;
    r->client = rq->client;
    r->state = R_WAIT;
    r->held = false;
    r->ndeps = r->nwaiters = 0;
    /* fsdep is made of the object locks; conservative order adds the locks on directory
     * entries to its own rule (all locks with a causal slack). */
    if (rq->sets)
        tbbt_fsdep_admit(s->locks, seq, rq->clone, rq->sets,
                         s->o.order == TBBT_SCHED_FSDEP || s->pend_ep ? TBBT_FSDEP_ALL
                                                                      : TBBT_FSDEP_NAMES);
    bool now = s->o.order == TBBT_SCHED_FSDEP && r->ndeps == 0;
    if (now)
        ready_push(s, r);
    if (ready)
        *ready = now;
    return seq;
}

/* ------------------------------------------------------------------ picking */

static void take(struct tbbt_sched *s, struct req *r)
{
    r->state = R_TAKEN;
    s->inflight++;
    s->peak = MAX(s->peak, s->inflight);
    if (s->cl_inflight)
        (*client_count(s, r->client))++;
}

/* The heap of pending requests of client key c, made on demand. */
static GArray *client_pend(struct tbbt_sched *s, uint32_t c)
{
    if (c >= s->pend_ep->len)
        g_ptr_array_set_size(s->pend_ep, (gint)(c + 1));
    GArray **h = (GArray **)&g_ptr_array_index(s->pend_ep, c);
    if (!*h)
        *h = tbbt_heap_new();
    return *h;
}

static const struct tbbt_heap_item *live_top(const struct tbbt_sched *s, GArray *h)
{
    const struct tbbt_heap_item *top;
    while ((top = tbbt_heap_top(h)) && !tbbt_sched_live(s, top->seq))
        tbbt_heap_pop(h);
    return top;
}

/* What holds a request back under conservative order's rule (cause_pending()). */
enum cause { CAUSE_NONE, CAUSE_OWN, CAUSE_ANY };

/*
 * Conservative order's rule: r waits while a request whose trace reply came before r's
 * call is pending (CAUSE_ANY: so do the requests called after r).  With a causal slack,
 * a reply of another client that came less than the slack before the call does not
 * count (r's client could not have learnt of it in time); r's own client's replies
 * always count (CAUSE_OWN: requests of other clients called after r may go).
 */
static enum cause cause_pending(struct tbbt_sched *s, const struct req *r, GArray *h)
{
    const struct tbbt_heap_item *top = live_top(s, h);
    if (!top || top->key > r->call_ns)
        return CAUSE_NONE;
    if (!s->pend_ep || top->key + s->o.causal_slack_ns <= r->call_ns)
        return CAUSE_ANY;
    top = live_top(s, client_pend(s, r->client));
    return top && top->key <= r->call_ns ? CAUSE_OWN : CAUSE_NONE;
}

/* Conservative: marks r (of clone k, at q) taken and pending. */
static uint64_t take_conservative(struct tbbt_sched *s, struct req *r, uint32_t k, uint64_t q)
{
    if (q == s->next_issue[k])
        s->next_issue[k] = q + s->o.clones;
    if (r->reply_key != TBBT_SCHED_NO_REPLY) {
        tbbt_heap_push(s->pend[k], r->reply_key, q);
        if (s->pend_ep)
            tbbt_heap_push(client_pend(s, r->client), r->reply_key, q);
    }
    take(s, r);
    return q;
}

/*
 * Conservative: the next request of some clone, if the policy lets it go now.  Requests
 * go in trace order; with a causal slack, a request held back by its own client's
 * pending reply, an entry lock or the hold callback does not hold back later ones that
 * the rule lets go (they overlapped it in the trace; conflicts keep fsdep's order).
 */
static uint64_t next_conservative(struct tbbt_sched *s, uint64_t now, uint64_t *due)
{
    const uint32_t N = s->o.clones;
    for (uint32_t k = 0; k < N; k++) {
        uint64_t q = s->next_issue[k];
        while (q < s->admitted && (q < s->oldest || R(s, q)->state != R_WAIT))
            q += N;     /* taken out of order earlier */
        s->next_issue[k] = q;
        for (unsigned seen = 0; q < s->admitted && seen < CONS_SCAN; q += N) {
            struct req *r = R(s, q);
            if (r->state != R_WAIT)
                continue;
            seen++;
            enum cause c = cause_pending(s, r, s->pend[k]);
            if (c == CAUSE_ANY)
                break;  /* a request whose trace reply came before this call is pending */
            if (c == CAUSE_NONE && !r->ndeps && !(s->o.hold && s->o.hold(q, s->o.hold_arg))) {
                if (s->o.timed && r->due_ns > now) {
                    *due = MIN(*due, r->due_ns);
                    break;      /* so are the requests after it */
                }
                if (!client_full(s, r))
                    return take_conservative(s, r, k, q);
                client_held(s, r);  /* a completion of its client lets it go */
            }
            if (!s->pend_ep)
                break;  /* held back: so are the requests after it */
        }
    }
    return TBBT_SCHED_NONE;
}

/* fsdep: the least (due, seq) ready request, if it is due and its client has room. */
static uint64_t next_fsdep(struct tbbt_sched *s, uint64_t now, uint64_t *due)
{
    const struct tbbt_heap_item *top;
    while ((top = ready_top(s))) {
        struct req *r = R(s, top->seq);
        if (s->o.timed && r->due_ns > now) {
            *due = MIN(*due, r->due_ns);
            return TBBT_SCHED_NONE;
        }
        ready_pop(s, top);
        if (!client_full(s, r)) {
            take(s, r);
            return r->seq;
        }
        client_park(s, r);
    }
    return TBBT_SCHED_NONE;
}

uint64_t tbbt_sched_next(struct tbbt_sched *s, uint64_t now, uint64_t *due)
{
    if (s->o.max_outstanding && s->inflight >= s->o.max_outstanding)
        return TBBT_SCHED_NONE;
    return s->o.order == TBBT_SCHED_FSDEP ? next_fsdep(s, now, due)
                                          : next_conservative(s, now, due);
}

/* ------------------------------------------------------------------ completion */

uint64_t tbbt_sched_complete(struct tbbt_sched *s, uint64_t seq)
{
    struct req *r = R(s, seq);
    assert(r->seq == seq && (r->state == R_WAIT || r->state == R_TAKEN));
    if (r->state == R_TAKEN) {
        s->inflight--;
        if (s->cl_inflight)
            client_release(s, r);
    }
    r->state = R_DONE;
    for (uint32_t i = 0; i < r->nwaiters; i++) {
        uint64_t w = r->waiters[i];
        struct req *wr = R(s, w);
        if (wr->seq != w || wr->ndeps == 0)
            continue;
        if (--wr->ndeps == 0 && wr->state == R_WAIT && s->o.order == TBBT_SCHED_FSDEP)
            ready_push(s, wr);
    }
    r->nwaiters = 0;
    uint64_t from = s->oldest;
    while (s->oldest < s->admitted && R(s, s->oldest)->state == R_DONE) {
        R(s, s->oldest)->state = R_FREE;
        s->oldest++;
    }
    return s->oldest - from;
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

bool tbbt_sched_starved(const struct tbbt_sched *s)
{
    if (s->o.order == TBBT_SCHED_FSDEP)
        return ready_top(s) == NULL;
    return s->next_issue[0] >= s->admitted;
}

bool tbbt_sched_behind(const struct tbbt_sched *s)
{
    if (s->o.order == TBBT_SCHED_FSDEP)
        return ready_top(s) == NULL;
    for (uint32_t k = 0; k < s->o.clones; k++)
        if (s->next_issue[k] >= s->admitted)
            return true;
    return false;
}
