/* SPDX-License-Identifier: MIT */
/*
 * Conservative order (sched.h; TBBT paper 3.4.1): requests go in trace order, per
 * clone, each only once no request taken and not completed has a trace reply at or
 * before its trace call.  With a causal slack, another client's reply less than the
 * slack before the call is no cause, and a request held back by its own client's reply,
 * an entry lock, the hold callback or its client's limit does not hold back the later
 * requests the rule lets go (up to CONS_SCAN of them are looked at).
 *
 * External requests (sched.h) are taken at their place in trace order: when the next
 * request to issue of their clone moves past them (at their admission if it is there,
 * else when the request before them is taken), their trace reply joins the clone's
 * pending replies (a heap of its own, pend_x, so that what holds a request back is
 * known: tbbt_sched_external_stalls(), _blocked()).  With a causal slack, the scan past
 * a held-back request meets external requests beyond the next one to issue: they hold
 * back the requests after them in that scan (struct xscan), never the ones before them,
 * exactly as the request they pass would be if taken there.
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

/* What holds a request back under conservative order's rule (rule_cause()). */
enum cause { CAUSE_NONE, CAUSE_OWN, CAUSE_ANY };

/*
 * The external requests that one scan past the next request to issue met (with a causal
 * slack): their least trace reply, and each one's client and reply, in scan order.
 */
struct xscan {
    uint64_t min;
    unsigned n;
    struct { uint32_t client; uint64_t key; } it[CONS_SCAN];
};

/*
 * Conservative order's rule against the pending replies in heap h: r waits while a
 * request whose trace reply came before r's call is pending (CAUSE_ANY: so do the
 * requests called after r).  With a causal slack, a reply of another client that came
 * less than the slack before the call does not count (r's client could not have learnt
 * of it in time); r's own client's replies always count (CAUSE_OWN: requests of other
 * clients called after r may go).  *ext: the request found is external (h holds
 * external requests only if xheap, own ones only if not; a client's heap holds both,
 * whose entry is looked at only while external requests are live).
 */
static inline __attribute__((always_inline)) enum cause
heap_cause(struct tbbt_sched *s, const req *r, GArray *h, bool xheap, bool *ext)
{
    const struct tbbt_heap_item *top = live_top(s, h);
    if (!top || top->key > r->call_ns)
        return CAUSE_NONE;
    if (!s->pend_ep || top->key + s->o.causal_slack_ns <= r->call_ns) {
        *ext = xheap;
        return CAUSE_ANY;
    }
    top = live_top(s, client_pend(s, r->client));
    if (!top || top->key > r->call_ns)
        return CAUSE_NONE;
    *ext = s->nx_live && tbbt__sched_r(s, top->seq)->external;
    return CAUSE_OWN;
}

/* The same rule against the external requests of a scan (they are all live). */
static enum cause scan_cause(const struct tbbt_sched *s, const req *r, const struct xscan *x)
{
    if (x->min > r->call_ns)
        return CAUSE_NONE;
    if (x->min + s->o.causal_slack_ns <= r->call_ns)
        return CAUSE_ANY;
    for (unsigned i = 0; i < x->n; i++)
        if (x->it[i].client == r->client && x->it[i].key <= r->call_ns)
            return CAUSE_OWN;
    return CAUSE_NONE;
}

/* Adds a cause c (*ext: of an external request) to the worst one *w. */
static void add_cause(enum cause c, bool ext, enum cause *w, bool *by_own, bool *by_ext)
{
    if (c == CAUSE_NONE)
        return;
    *w = MAX(*w, c);
    *(ext ? by_ext : by_own) = true;
}

/*
 * Why r (of clone k) waits under the rule: the worst cause, and whether own requests
 * (*by_own) or external ones (*by_ext) are among the causes.  Externals are looked at
 * only while some are live, so a replay without them costs what it did.
 */
static enum cause rule_cause(struct tbbt_sched *s, const req *r, uint32_t k,
                             const struct xscan *x, bool *by_own, bool *by_ext)
{
    enum cause w = CAUSE_NONE, c;
    bool ext = false;
    *by_own = *by_ext = false;
    c = heap_cause(s, r, s->pend[k], false, &ext);
    add_cause(c, ext, &w, by_own, by_ext);
    if (s->nx_live) {
        ext = false;
        c = heap_cause(s, r, s->pend_x[k], true, &ext);
        add_cause(c, ext, &w, by_own, by_ext);
        add_cause(scan_cause(s, r, x), true, &w, by_own, by_ext);
    }
    return w;
}

/* Conservative: r (of clone k, taken or external) joins the pending replies. */
static inline __attribute__((always_inline)) void
pend_push(struct tbbt_sched *s, const req *r, uint32_t k)
{
    if (r->reply_key == TBBT_SCHED_NO_REPLY)
        return;
    tbbt_heap_push(r->external ? s->pend_x[k] : s->pend[k], r->reply_key, r->seq);
    if (s->pend_ep)
        tbbt_heap_push(client_pend(s, r->client), r->reply_key, r->seq);
}

/*
 * Moves clone k's next request to issue past the requests taken (out of order, or
 * external: these are taken at their place now) and recycled, to the first one waiting.
 */
static void advance_slow(struct tbbt_sched *s, uint32_t k, uint64_t q)
{
    for (; q < s->admitted; q += s->o.clones) {
        if (q < s->oldest)
            continue;
        const req *r = tbbt__sched_r(s, q);
        if (r->state == TBBT__SCHED_WAIT)
            break;
        if (r->external && r->state == TBBT__SCHED_TAKEN)
            pend_push(s, r, k);
    }
    s->next_issue[k] = q;
}

/* advance(), inline while there is nothing to move past (the usual case). */
static inline __attribute__((always_inline)) void advance(struct tbbt_sched *s, uint32_t k)
{
    uint64_t q = s->next_issue[k];
    if (q < s->admitted && (q < s->oldest || tbbt__sched_r(s, q)->state != TBBT__SCHED_WAIT))
        advance_slow(s, k, q);
}

/* Conservative: marks r (of clone k, at q) taken and pending. */
static uint64_t take_conservative(struct tbbt_sched *s, req *r, uint32_t k, uint64_t q)
{
    pend_push(s, r, k);
    tbbt__sched_take(s, r);
    if (q == s->next_issue[k]) {
        s->next_issue[k] = q + s->o.clones;
        advance(s, k);
    }
    return q;
}

/*
 * Conservative: request r, the first waiting one of its clone (the next to issue), is
 * held back; *by_own, by_ext: by what (rule_cause()).  Records whether only external
 * requests hold it back (tbbt_sched_external_blocked()).
 */
static void front_held(struct tbbt_sched *s, const req *r, uint64_t now, bool by_own,
                       bool by_ext)
{
    if (by_own || r->ndeps > r->xdeps || (s->o.timed && r->due_ns > now))
        return;
    if (by_ext || r->xdeps)
        s->xblocked = true;
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
        advance(s, k);
        struct xscan x;
        x.min = UINT64_MAX;
        x.n = 0;
        uint64_t q = s->next_issue[k];
        for (unsigned seen = 0; q < s->admitted && seen < CONS_SCAN; q += N) {
            req *r = tbbt__sched_r(s, q);
            if (r->state != TBBT__SCHED_WAIT) {
                /* past the first: an external one met here is taken at its place */
                if (r->external && r->state == TBBT__SCHED_TAKEN &&
                    r->reply_key != TBBT_SCHED_NO_REPLY) {
                    if (x.n == CONS_SCAN)
                        break;
                    x.it[x.n].client = r->client;
                    x.it[x.n++].key = r->reply_key;
                    x.min = MIN(x.min, r->reply_key);
                }
                continue;
            }
            seen++;
            bool by_own, by_ext;
            enum cause c = rule_cause(s, r, k, &x, &by_own, &by_ext);
            if (by_ext || r->xdeps)
                tbbt__sched_ext_held(s, r);
            if (seen == 1 && (c != CAUSE_NONE || r->ndeps))
                front_held(s, r, now, by_own, by_ext);
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

/* An external request is taken at its place at once if the requests before it are. */
static void admitted(struct tbbt_sched *s, req *r, bool *ready)
{
    uint32_t k = (uint32_t)(r->seq % s->o.clones);
    if (r->external && s->next_issue[k] == r->seq)
        advance(s, k);
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

static bool xblocked(const struct tbbt_sched *s)
{
    return s->xblocked;
}

static void init(struct tbbt_sched *s)
{
    s->next_issue = g_new0(uint64_t, s->o.clones);
    s->pend = g_new(GArray *, s->o.clones);
    s->pend_x = g_new(GArray *, s->o.clones);
    for (uint32_t c = 0; c < s->o.clones; c++) {
        s->next_issue[c] = c;
        s->pend[c] = tbbt_heap_new();
        s->pend_x[c] = tbbt_heap_new();
    }
    if (s->o.causal_slack_ns)
        s->pend_ep = g_ptr_array_new();
}

static void fini(struct tbbt_sched *s)
{
    for (uint32_t c = 0; c < s->o.clones; c++) {
        g_array_free(s->pend[c], TRUE);
        g_array_free(s->pend_x[c], TRUE);
    }
    g_free(s->pend);
    g_free(s->pend_x);
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
    .xblocked = xblocked,
};
