/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's private declarations (sched.h), shared by its files: sched.c (the
 * window, admission, completion, the limits on requests out) and one file per ordering
 * policy behind struct tbbt__sched_order (order-conservative.c, order-fsdep.c).  Not for
 * use outside src/sched/.
 *
 * The window is a ring of request states indexed by sequence number (seq % ring).  A
 * state is FREE (recycled), WAIT (admitted), TAKEN (handed out by tbbt_sched_next()) or
 * DONE (completed, not yet recycled: an earlier request is still live).  Dependencies
 * found at admission (fsdep.h) are counted in the waiter (ndeps) and listed in the
 * holder (waiters), which releases them when it completes.
 *
 * An external request (sched.h) is TAKEN from its admission to its completion, without
 * counting against the limits.  Its dependencies are counted as an own request's are,
 * but it does not wait for them to go: they only defer its completion, when its notice
 * comes first (notified), until they are completed here too.  An own request counts its
 * dependencies on external holders in xdeps too (xdeps <= ndeps), and is counted in
 * xwaiting while it waits (WAIT) with xdeps > 0.
 */
#ifndef TBBT_SCHED_SCHED_INT_H
#define TBBT_SCHED_SCHED_INT_H

#include <glib.h>

#include "sched/sched.h"
#include "util/heap.h"

enum tbbt__sched_state { TBBT__SCHED_FREE = 0, TBBT__SCHED_WAIT, TBBT__SCHED_TAKEN,
                         TBBT__SCHED_DONE };

struct tbbt__sched_req {
    uint64_t seq;
    uint64_t call_ns, reply_key, due_ns;
    uint32_t client;
    uint8_t state;              /* enum tbbt__sched_state */
    bool held;                  /* was held back at its client's limit (counted once) */
    bool external;              /* another rank sends it (sched.h) */
    union {
        bool xheld;             /* own: was held back by an external request (once) */
        bool notified;          /* external: its notice came; it completes at ndeps 0 */
    };
    uint32_t ndeps;             /* earlier live requests it waits for */
    uint32_t nwaiters, wcap;
    uint32_t xdeps;             /* own: of ndeps, those on external requests */
    uint64_t *waiters;          /* requests waiting for this one */
};

/*
 * An ordering policy: what it does when a request is admitted, when its last
 * dependency completes, when its client gets room again, and which request goes next.
 */
struct tbbt__sched_order {
    const char *name;
    void (*init)(struct tbbt_sched *s);
    void (*fini)(struct tbbt_sched *s);
    /* r was admitted (its dependencies counted); *ready: it may go at once. */
    void (*admitted)(struct tbbt_sched *s, struct tbbt__sched_req *r, bool *ready);
    /* r, waiting, has no dependency left. */
    void (*freed)(struct tbbt_sched *s, struct tbbt__sched_req *r);
    /* A request of client key c completed (its count is down already). */
    void (*client_room)(struct tbbt_sched *s, uint32_t c);
    /* tbbt_sched_next() below the overall limit. */
    uint64_t (*next)(struct tbbt_sched *s, uint64_t now, uint64_t *due);
    bool (*starved)(const struct tbbt_sched *s);
    bool (*behind)(const struct tbbt_sched *s);
    /* tbbt_sched_external_blocked() (below max_outstanding). */
    bool (*xblocked)(const struct tbbt_sched *s);
};

extern const struct tbbt__sched_order tbbt__sched_conservative, tbbt__sched_fsdep;

struct tbbt_sched {
    struct tbbt_sched_opts o;
    const struct tbbt__sched_order *ord;
    uint32_t ring;
    struct tbbt__sched_req *reqs;
    uint64_t oldest, admitted;
    unsigned inflight, peak;
    uint64_t client_stalls;
    uint64_t nx_live;           /* external requests admitted and not completed */
    uint64_t xwaiting;          /* own waiting requests with xdeps > 0 */
    uint64_t xstalls;           /* tbbt_sched_external_stalls() */
    bool xblocked;              /* conservative: set by next() (sched.h) */
    GArray *xdue;               /* uint64_t seqs of notified external requests whose last
                                   dependency just completed (made on first use) */
    struct tbbt_fsdep *locks;
    GArray *cl_inflight;        /* client limit: unsigned per client key */

    /* order-conservative.c */
    uint64_t *next_issue;       /* per clone, the next seq to issue */
    GArray **pend;              /* per clone, heap of (trace reply, seq) */
    GArray **pend_x;            /* per clone, the same of the external requests that the
                                   next request has passed (taken at their place) */
    GPtrArray *pend_ep;         /* with a causal slack: per client key, the same heap of
                                   that client's requests */
    /* order-fsdep.c */
    GArray *ready;              /* heap of (due or seq, seq) of free requests ... */
    GArray *ready_fifo;         /* ... and those that came in rising order */
    guint ready_head;           /* first live item of ready_fifo */
    GPtrArray *cl_parked;       /* GQueue of seqs (+1) held back per client key */
};

static inline struct tbbt__sched_req *tbbt__sched_r(const struct tbbt_sched *s, uint64_t seq)
{
    return &s->reqs[seq % s->ring];
}

/* Marks r taken: it counts against the limits until completed. */
void tbbt__sched_take(struct tbbt_sched *s, struct tbbt__sched_req *r);
/* True if r's client has client_outstanding requests out already. */
bool tbbt__sched_client_full(struct tbbt_sched *s, const struct tbbt__sched_req *r);
/* Counts r as held back at its client's limit, once. */
void tbbt__sched_client_held(struct tbbt_sched *s, struct tbbt__sched_req *r);
/* Counts own request r as held back by an external request, once. */
static inline void tbbt__sched_ext_held(struct tbbt_sched *s, struct tbbt__sched_req *r)
{
    if (!r->xheld) {
        r->xheld = true;
        s->xstalls++;
    }
}

#endif
