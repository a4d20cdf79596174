/* SPDX-License-Identifier: MIT */
/*
 * sched: the replay scheduler (TBBT paper 3.4 and 5, Figure 6), with no threads, no I/O
 * and no clock of its own.  Its caller admits requests in trace order with their trace
 * times, their due times and their Table 4 object sets; asks for the next request that
 * may go at time `now` (or learns when the next one becomes due); and reports each
 * request's completion.  tbbt-play's engine (src/player/engine.c) drives it with real
 * time from its threads; tbbt-stats' concurrency simulator (src/stats/concsim.c) with
 * simulated time.  What it decides:
 *
 *   window        the lookahead window: the oldest request not yet completed and the
 *                 window - 1 admitted after it; tbbt_sched_admit() needs room
 *                 (tbbt_sched_room()), completing the oldest makes it.
 *   conservative  (paper 3.4.1) requests go in trace order (per clone), each only once
 *                 no request taken and not completed has a trace reply at or before its
 *                 trace call.  With a causal slack, a reply of another client less than
 *                 the slack before the call does not count, and a request held back by
 *                 its own client's reply, an entry lock or the hold callback does not
 *                 hold back later ones the rule lets go.  Admitted with object sets, a
 *                 request also waits for the earlier holders of the directory entries it
 *                 uses (TBBT_FSDEP_NAMES; with a causal slack, of every lock).
 *   fsdep         a request goes as soon as every earlier request holding a lock it
 *                 conflicts with (fsdep.h) has completed, least (due, sequence) first.
 *   client limit  at most client_outstanding requests of one client taken and not
 *                 completed; under fsdep, a request held back waits for a completion of
 *                 its client.
 *   outstanding   at most max_outstanding requests taken and not completed in all.
 *   timing        timed: no request goes before its due time (tbbt_sched_due(): the
 *                 trace's call time scaled by the speed), and conservative order keeps
 *                 the requests after it back too.
 *
 * The window, admission, completion and limits are sched.c; each ordering policy is a
 * file of its own behind one table of operations (order-conservative.c, order-fsdep.c).
 *
 * Requests are numbered by admission from 0 (their sequence number); with clones, the
 * caller admits every record `clones` times in a row, clone c as sequence numbers
 * record * clones + c, and clones never wait for each other.
 *
 * A request's life: admitted (waiting) -> taken by tbbt_sched_next() -> completed by
 * tbbt_sched_complete() -> recycled when every earlier request is completed too.
 *
 * External requests (tbbt-play --distribute clients, docs/mpi.md): every MPI rank admits
 * every record with the same sequence numbers; a record another rank sends is admitted
 * with `external` set.  It is taken at admission ("in flight elsewhere") and completed
 * by tbbt_sched_complete_external() when the owning rank's completion notice arrives.
 * Until then it holds exactly what a request taken by tbbt_sched_next() holds: its
 * Table 4 locks (both orders: fsdep's object locks, conservative order's entry locks)
 * and, under conservative order, its trace reply time.  It is never returned by
 * tbbt_sched_next(), never waits (for locks, a due time, a limit: its owner's scheduler
 * decided when it went), and counts against no limit (max_outstanding,
 * client_outstanding) nor in tbbt_sched_inflight()/tbbt_sched_peak().  Conservative
 * order treats it as taken at its place in trace order: the own requests after it that
 * the rule lets go are not held back by it, unless its reply came before their call
 * (then they wait for its completion, as for a request of this rank); own requests
 * before it never wait for it.  Like a request taken here, it completes only after the
 * requests it depends on by their locks (it went after them): a notice that comes
 * before theirs (notices of different ranks are not ordered) is kept, and the request
 * completes with the last of them; so an own request waits for everything it depends
 * on, also through requests of other ranks, and the handles those made are known here
 * by then.  Since all ranks see the same dependencies, and a request only ever waits for
 * earlier ones or for requests in flight, the ranks cannot wait for each other in a
 * cycle.  With external = false everywhere, the scheduler behaves exactly as without
 * this feature.
 *
 * Not thread-safe: the caller serializes (the player under its scheduler mutex).
 */
#ifndef TBBT_SCHED_SCHED_H
#define TBBT_SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "sched/fsdep.h"

#define TBBT_SCHED_NONE UINT64_MAX       /* tbbt_sched_next(): nothing may go now */
#define TBBT_SCHED_NO_REPLY UINT64_MAX   /* struct tbbt_sched_req: no traced reply */

enum tbbt_sched_order { TBBT_SCHED_CONSERVATIVE = 0, TBBT_SCHED_FSDEP = 1 };

/*
 * Conservative order only: true if request seq must wait for something the scheduler
 * does not know of (the player: a handle that a request in flight is making).  Asked
 * each time the request is looked at; its answer may change without a completion.
 */
typedef bool (*tbbt_sched_hold_cb)(uint64_t seq, void *arg);

struct tbbt_sched_opts {
    enum tbbt_sched_order order;
    uint32_t window;                /* >= 1 and a multiple of clones */
    uint32_t clones;                /* >= 1 */
    uint64_t max_requests;          /* 0, or how many requests will ever be admitted (a
                                       smaller ring when fewer than the window) */
    bool timed;                     /* keep due times (struct tbbt_sched_req.due_ns) */
    uint64_t causal_slack_ns;       /* conservative: see above; 0: off */
    unsigned max_outstanding;       /* 0: no limit */
    unsigned client_outstanding;    /* 0: no limit */
    tbbt_sched_hold_cb hold;        /* NULL: none */
    void *hold_arg;
    /* Called for every conflict with a live earlier request found at admission (INFO
     * ones too, and those of external requests, which do not bind), before it binds:
     * the player marks racy replies with it.  NULL: none. */
    tbbt_fsdep_dep_cb conflict;
    void *conflict_arg;
};

/* What the scheduler needs of a request (borrowed for the call only). */
struct tbbt_sched_req {
    uint32_t clone;                 /* sequence number % clones */
    uint32_t client;                /* its client's key for the client limit (small:
                                       per-client state is an array indexed by it) */
    uint64_t call_ns;               /* trace call time */
    uint64_t reply_ns;              /* trace reply time, or TBBT_SCHED_NO_REPLY */
    uint64_t due_ns;                /* timed: when it may go, in the caller's clock */
    const struct tbbt_fsdep_sets *sets;   /* its Table 4 sets, or NULL: it takes no locks
                                             (and conservative order only applies its
                                             reply-time rule) */
    bool external;                  /* another rank sends it (see above); false: as
                                       before, this scheduler hands it out */
    bool done;                      /* external only: its completion notice came before
                                       it was admitted: as tbbt_sched_admit() then
                                       tbbt_sched_complete_external() */
};

struct tbbt_sched;

/* A new, empty scheduler (o is copied).  Given: tbbt_sched_free(). */
struct tbbt_sched *tbbt_sched_new(const struct tbbt_sched_opts *o);
/* Frees s; NULL is a no-op. */
void tbbt_sched_free(struct tbbt_sched *s);

/*
 * A request's due time under timestamp timing: start_ns plus the time since the first
 * traced call t0_ns, divided by speed (> 0; 2 is twice as fast).
 */
uint64_t tbbt_sched_due(uint64_t start_ns, uint64_t t0_ns, uint64_t call_ns, double speed);

/* True if n more requests fit in the window now. */
bool tbbt_sched_room(const struct tbbt_sched *s, uint64_t n);

/*
 * Admits the next request (its sequence number is tbbt_sched_admitted() before the call,
 * returned) with its dependencies on the live earlier requests.  The window must have
 * room (tbbt_sched_room(s, 1)).  *ready (may be NULL) is set when fsdep order made it
 * ready at once (never for an external request).  An external request admitted with
 * `done` is completed before this returns unless it depends on live requests: the
 * window may have moved (tbbt_sched_oldest()).
 */
uint64_t tbbt_sched_admit(struct tbbt_sched *s, const struct tbbt_sched_req *r, bool *ready);

/*
 * The next request that may go at time now, taken (it counts against the limits until
 * completed), or TBBT_SCHED_NONE.  *due is lowered to the earliest due time of a request
 * kept back only by its time (untouched if none; start it at UINT64_MAX).
 */
uint64_t tbbt_sched_next(struct tbbt_sched *s, uint64_t now, uint64_t *due);

/*
 * Request seq (admitted, not completed, not external) is done: its limits and locks are
 * released, and the window moves past the completed oldest requests.  Returns how many
 * requests were recycled (tbbt_sched_oldest() moved by that much).
 */
uint64_t tbbt_sched_complete(struct tbbt_sched *s, uint64_t seq);

/*
 * External request seq (admitted with `external`, live, its notice not given yet:
 * asserted) completed on its rank: as tbbt_sched_complete(), its locks and its reply
 * time stop holding the own requests back, now if the requests it depends on by their
 * locks are completed here, else with the last of them (tbbt_sched_live() stays true
 * until then; see above).  Returns how many requests were recycled (by this call: 0 if
 * deferred; the completion that ends a deferral counts them).  A notice for a request
 * not admitted yet is the caller's to keep (the player: a hash set) until it admits the
 * request, with `done` set.
 */
uint64_t tbbt_sched_complete_external(struct tbbt_sched *s, uint64_t seq);

/* The oldest request not yet recycled; the number admitted so far. */
uint64_t tbbt_sched_oldest(const struct tbbt_sched *s);
uint64_t tbbt_sched_admitted(const struct tbbt_sched *s);
/* Requests taken and not completed now, and at most so far. */
unsigned tbbt_sched_inflight(const struct tbbt_sched *s);
unsigned tbbt_sched_peak(const struct tbbt_sched *s);
/* Requests that were held back at their client's limit at least once. */
uint64_t tbbt_sched_client_stalls(const struct tbbt_sched *s);
/* True while request seq is admitted and not completed (external ones too). */
bool tbbt_sched_live(const struct tbbt_sched *s, uint64_t seq);

/*
 * Own (not external) requests that were held back at least once by a live external
 * request, each counted once: its Table 4 locks (counted at admission under fsdep
 * order, when the request is looked at under conservative order) or, under
 * conservative order, its trace reply before their call.  The report's cross_rank_deps.
 */
uint64_t tbbt_sched_external_stalls(const struct tbbt_sched *s);

/*
 * True if this rank is waiting for other ranks now.  Conservative order: the last
 * tbbt_sched_next() found the next own request in trace order of some clone (the first
 * one not taken) held back by live external requests only (their reply times or locks;
 * not by an own request, nor by its due time at that call's `now`; the hold callback is
 * not asked), and no external request completed since; false when that call stopped
 * at max_outstanding.  Fsdep order: below max_outstanding, no own request is ready (due
 * or not) and at least one own waiting request waits for a live external request (it
 * may wait for own ones too).  The player adds the time this is true to
 * cross_rank_wait_seconds.
 */
bool tbbt_sched_external_blocked(const struct tbbt_sched *s);

/*
 * True if nothing may go for want of admitted requests: fsdep has no ready request;
 * conservative order's next request of clone 0 (any clone: tbbt_sched_behind()) is not
 * admitted yet.  The player's reader then admits what it has at once.
 *
 * External requests are never "the next request": conservative order moves its next
 * request past them as soon as they are admitted or the requests before them taken,
 * so a window whose remaining requests are all external counts as starved (admitting
 * more may find own requests to send), not as waiting for a request that this rank will
 * never send.  Under fsdep order, own requests waiting for external ones are not ready,
 * so starved() is true while they wait, as when they wait for own requests in flight:
 * the reader admits what it has, which may find independent own requests; when the
 * window is full it waits for room as usual (completions of external requests make it).
 */
bool tbbt_sched_starved(const struct tbbt_sched *s);
bool tbbt_sched_behind(const struct tbbt_sched *s);

#endif
