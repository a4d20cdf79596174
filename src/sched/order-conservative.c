/* SPDX-License-Identifier: MIT */
/*
 * Conservative order (sched.h; TBBT paper 3.4.1): requests go in trace order, per
 * clone, each only once no request taken and not completed has a trace reply at or
 * before its trace call.  With a causal slack, another client's reply less than the
 * slack before the call is no cause, and a request held back by its own client's reply,
 * an entry lock, the hold callback or its client's limit does not hold back the later
 * requests the rule lets go (up to CONS_SCAN of them are looked at).
 */
#include "sched/sched-int.h"

/* Requests of one clone that conservative order looks at past a held-back first one. */
#define CONS_SCAN 64

typedef struct tbbt__sched_req req;

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
static enum cause cause_pending(struct tbbt_sched *s, const req *r, GArray *h)
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
static uint64_t take_conservative(struct tbbt_sched *s, req *r, uint32_t k, uint64_t q)
{
    if (q == s->next_issue[k])
        s->next_issue[k] = q + s->o.clones;
    if (r->reply_key != TBBT_SCHED_NO_REPLY) {
        tbbt_heap_push(s->pend[k], r->reply_key, q);
        if (s->pend_ep)
            tbbt_heap_push(client_pend(s, r->client), r->reply_key, q);
    }
    tbbt__sched_take(s, r);
    return q;
}

/*
 * Conservative: the next request of some clone, if the policy lets it go now.  Requests
 * go in trace order; with a causal slack, a request held back by its own client's
 * pending reply, an entry lock or the hold callback does not hold back later ones that
 * the rule lets go (they overlapped it in the trace; conflicts keep fsdep's order).
 */
static uint64_t next(struct tbbt_sched *s, uint64_t now, uint64_t *due)
{
    const uint32_t N = s->o.clones;
    for (uint32_t k = 0; k < N; k++) {
        uint64_t q = s->next_issue[k];
        while (q < s->admitted && (q < s->oldest || tbbt__sched_r(s, q)->state != TBBT__SCHED_WAIT))
            q += N;     /* taken out of order earlier */
        s->next_issue[k] = q;
        for (unsigned seen = 0; q < s->admitted && seen < CONS_SCAN; q += N) {
            req *r = tbbt__sched_r(s, q);
            if (r->state != TBBT__SCHED_WAIT)
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
                if (!tbbt__sched_client_full(s, r))
                    return take_conservative(s, r, k, q);
                tbbt__sched_client_held(s, r);  /* a completion of its client lets it go */
            }
            if (!s->pend_ep)
                break;  /* held back: so are the requests after it */
        }
    }
    return TBBT_SCHED_NONE;
}

static void admitted(struct tbbt_sched *s, req *r, bool *ready)
{
    (void)s;
    (void)r;
    *ready = false;
}

/* Its dependencies (entry locks) are counted in ndeps, which next() reads. */
static void freed(struct tbbt_sched *s, req *r)
{
    (void)s;
    (void)r;
}

/* A held-back request is found again by next(), from next_issue. */
static void client_room(struct tbbt_sched *s, uint32_t c)
{
    (void)s;
    (void)c;
}

static bool starved(const struct tbbt_sched *s)
{
    return s->next_issue[0] >= s->admitted;
}

static bool behind(const struct tbbt_sched *s)
{
    for (uint32_t k = 0; k < s->o.clones; k++)
        if (s->next_issue[k] >= s->admitted)
            return true;
    return false;
}

static void init(struct tbbt_sched *s)
{
    s->next_issue = g_new0(uint64_t, s->o.clones);
    s->pend = g_new(GArray *, s->o.clones);
    for (uint32_t c = 0; c < s->o.clones; c++) {
        s->next_issue[c] = c;
        s->pend[c] = tbbt_heap_new();
    }
    if (s->o.causal_slack_ns)
        s->pend_ep = g_ptr_array_new();
}

static void fini(struct tbbt_sched *s)
{
    for (uint32_t c = 0; c < s->o.clones; c++)
        g_array_free(s->pend[c], TRUE);
    g_free(s->pend);
    g_free(s->next_issue);
    for (guint i = 0; s->pend_ep && i < s->pend_ep->len; i++)
        if (g_ptr_array_index(s->pend_ep, i))
            g_array_free(g_ptr_array_index(s->pend_ep, i), TRUE);
    if (s->pend_ep)
        g_ptr_array_free(s->pend_ep, TRUE);
}

const struct tbbt__sched_order tbbt__sched_conservative = {
    .name = "conservative", .init = init, .fini = fini, .admitted = admitted, .freed = freed,
    .client_room = client_room, .next = next, .starved = starved, .behind = behind,
};
