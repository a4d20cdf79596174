/* SPDX-License-Identifier: MIT */
/*
 * engine: the trace player of tbbt-play (TBBT paper 3.4 and 4, Figure 2).  Three
 * threads: an I/O thread streams trace records into the lookahead window (a ring of
 * `window` slots), a send thread dispatches the requests the ordering and timing
 * policies allow as asynchronous RPCs (rpcconn.h) over one or more connections, and a
 * receive thread matches replies, binds the handles of objects made during replay,
 * compares each outcome with the trace, releases dependencies and records latency.
 * Memory is bounded by the window, not by the trace.
 *
 * Ordering (3.4.1), decided by the scheduler (src/sched/sched.h), which the threads
 * drive with real time: CONSERVATIVE issues requests in trace order, each only once every
 * request whose reply came before its call in the trace has completed; FSDEP admits
 * each request with the object locks of Table 4 (src/sched/fsdep.h) and dispatches it as
 * soon as the requests it conflicts with have completed.  Timing: FULL speed, or TIMESTAMP
 * (each request at its call time divided by `speed` from the start).  Spatial scaling:
 * `clones` copies of every record, each against its own copy of the image (its own
 * handle table), never depending on each other.  Optional perturbations: `reorder`
 * swaps neighbouring READs as the I/O thread reads them (reorder.h: never across
 * another record, so never across a dependency; each position keeps its trace times),
 * and `client_outstanding` bounds the calls in flight per client, as a client with a
 * few nfsiod daemons does.
 *
 * Failures: every reply is compared with the status the trace recorded; JUKEBOX is
 * waited out within a time budget (every procedure; with back-off), timeouts of calls
 * that make objects are retried (bounded, with back-off); calls are
 * retransmitted with the same XID after a timeout; a dropped TCP connection is
 * reconnected and its calls accounted (calls that make objects are sent again, the
 * others' outcome is unknown); a request that needs an object whose making failed is
 * skipped, and so on transitively.  A server that stays unreachable or silent for
 * `dead_ms` ends the run; so does a readable `stop_fd` (the tool's SIGINT/SIGTERM), after
 * a short grace for the calls out.  Either way every request read is accounted.
 */
#ifndef TBBT_PLAYER_ENGINE_H
#define TBBT_PLAYER_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "player/handles.h"
#include "player/report.h"
#include "player/verify.h"
#include "trace/reorder.h"
#include "trace/trace.h"

enum tbbt_engine_order { TBBT_ORDER_CONSERVATIVE = 0, TBBT_ORDER_FSDEP = 1 };

#define TBBT_ENGINE_MAX_CONNS 1024u
enum tbbt_engine_timing { TBBT_TIMING_FULL = 0, TBBT_TIMING_TIMESTAMP = 1 };

/*
 * --distribute clients (docs/mpi.md): this engine replays the records `mine` keeps and
 * only follows the others, which another process (an MPI rank) replays against the same
 * image.  The engine admits every record to its scheduler with the same sequence
 * numbers in every process; another's record is admitted "external" (sched.h): never
 * sent here, holding its dependencies until a completion notice for it arrives.  A
 * notice also carries the handle the request bound (a CREATE there gives a LOOKUP here
 * its handle).  The channel between the processes is the caller's: it moves the
 * engine's notice messages (GBytes, the format of engine-peer.c) from `out` to the
 * other processes' `in`; each queue has an eventfd that its writer writes after a push.
 */
typedef bool (*tbbt_engine_owner_cb)(const struct tbbt_trace_rec *rec,
                                     const struct tbbt_eptab *eps, void *arg);

struct tbbt_engine_peer {
    tbbt_engine_owner_cb mine;          /* true: this process replays rec */
    void *mine_arg;
    GAsyncQueue *in;                    /* of GBytes (given to the engine): others' notices */
    int in_fd;                          /* eventfd: the channel wrote to `in` */
    GAsyncQueue *out;                   /* of GBytes (given to the channel): our notices */
    int out_fd;                         /* eventfd: the engine wrote to `out` */
    /* Set by tbbt_engine_run() at its end: */
    uint64_t deps;                      /* own requests held back by another's, at least once */
    double wait_seconds;                /* time nothing of ours could go for want of another's */
    uint64_t notices_sent, notices_received;  /* entries (one per request) */
    uint64_t external;                  /* records (per clone) others replayed */
};

/* Keeps a record (spatial scale-down) or not; called on the I/O thread. */
typedef bool (*tbbt_engine_filter_cb)(const struct tbbt_trace_rec *rec,
                                      const struct tbbt_eptab *eps, void *arg);

struct tbbt_engine_opts {
    const char *trace_path;             /* borrowed */
    const char *server;                 /* host name or address, borrowed */
    uint16_t nfs_port;
    bool udp;
    uint32_t clones;                    /* >= 1 */
    struct tbbt_handles **handles;      /* [clones], borrowed; filled by start-up */
    enum tbbt_engine_order order;
    uint64_t causal_slack_ns;           /* conservative: another client's reply less than
                                           this before a call is not taken as its cause
                                           (that client could not have seen it in time);
                                           such pairs keep fsdep's conflict order; 0: off */
    enum tbbt_engine_timing timing;
    double speed;                       /* timestamp: > 0, 2 = twice as fast */
    unsigned window;                    /* lookahead window slots */
    unsigned max_outstanding;           /* calls in flight over all connections */
    unsigned client_outstanding;        /* 0, or calls in flight per client (the trace's
                                           endpoint, per clone) at most */
    bool reorder;                       /* swap reads as a sloppy client (reorder.h) */
    struct tbbt_reorder_spec reorder_spec;
    uint64_t reorder_seed;
    unsigned connections;               /* per run, at most TBBT_ENGINE_MAX_CONNS */
    const uint16_t *conn_map;           /* NULL: requests hash onto the connections by
                                           object; else the connection of each trace
                                           endpoint (borrowed), e.g. one per traced
                                           client; endpoints past conn_map_len hash */
    uint32_t conn_map_len;
    bool reserved_ports;                /* bind each connection to a port below 1024 */
    unsigned batch;                     /* calls per send() at most */
    unsigned recv_batch;                /* 0, or replies per receive wake-up when the
                                           window is full (SO_RCVLOWAT; see engine-recv.c) */
    bool fixed_creds;                   /* all calls with uid/gid below, else the trace's */
    uint32_t uid, gid;
    unsigned max_retries;               /* retries of calls that make objects */
    unsigned jukebox_wait_ms;           /* how long one request may keep getting
                                           NFS3ERR_JUKEBOX before it counts as failed */
    unsigned max_retrans;               /* retransmissions (same XID) after a timeout */
    int timeout_ms;                     /* per attempt */
    int dead_ms;                        /* end the run after so long without the server */
    unsigned spin_us;                   /* timestamp timing: the send thread wakes this
                                           long before a due request and spins the rest */
    unsigned rx_spin_us;                /* the receive thread polls this long for the next
                                           reply, while calls are out, before it sleeps */
    tbbt_engine_filter_cb filter;       /* NULL: every record */
    void *filter_arg;
    struct tbbt_verify_sizes *sizes;    /* NULL, or noted for every kept record */
    FILE *events;                       /* NULL, or the event log (docs/tbbt-play.md) */
    bool progress;                      /* a progress line on stderr */
    int stop_fd;                        /* -1, or a descriptor (borrowed, never read) that
                                           becomes readable when the run must stop, e.g. an
                                           eventfd the tool writes on SIGTERM: no call is
                                           sent after that, the calls out get stop_grace_ms
                                           to be answered, the rest count as unknown */
    unsigned stop_grace_ms;             /* 0: the lesser of 1000 and timeout_ms */
    uint64_t (*ready)(void *arg);       /* NULL, or called once the connections are open
                                           (or failed to), on the calling thread: returns the
                                           CLOCK_MONOTONIC time to start the threads at (0:
                                           at once; slept to, the last start_spin_us spun),
                                           time 0
                                           of the report and of timestamp timing, e.g. one
                                           instant for every MPI rank (docs/mpi.md) */
    void *ready_arg;
    unsigned start_spin_us;             /* see ready (default 200; 0: sleep all the way,
                                           for processes that share a core and would spin
                                           against each other) */
    uint64_t *started_ns;               /* NULL, or set to when the threads were started */
    struct tbbt_engine_peer *peer;      /* NULL: this process replays every record */
};

/* Fills o with the defaults (TCP, one clone, conservative, full speed, window 4096, ...). */
void tbbt_engine_defaults(struct tbbt_engine_opts *o);

/*
 * Replays the trace.  On return *rep holds the merged statistics (given: free with
 * tbbt_report_free()) and *counts the counters, also when the replay stopped early:
 * every request read from the trace is accounted, trace_ops = ops_issued + ops_skipped
 * and ops_issued = ops_completed + ops_unknown (a request that was read but never sent
 * when the run stopped counts as skipped_stopped, one sent and not answered as unknown),
 * and counts->stop_reason says why it stopped early ("server dead", "trace error",
 * "stopped", "error"; NULL when it ran to the end).  Returns 0 when the replay ran to
 * the end (replay failures are counted, not errors), -EINTR when stop_fd stopped it, or
 * another negative error with a one-line reason in err (trace unreadable, server gone).
 * Starts and joins its threads; not reentrant.
 */
int tbbt_engine_run(const struct tbbt_engine_opts *o, struct tbbt_report **rep,
                    struct tbbt_report_counts *counts, char *err, size_t errlen);

#endif
