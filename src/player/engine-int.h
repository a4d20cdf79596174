/* SPDX-License-Identifier: MIT */
/*
 * The player engine's private declarations (engine.h; TBBT paper 3.4 and 4, Figure 2),
 * shared by its files, one job each:
 *
 *   engine.c         the run: start-up, the threads' wake-ups, completion, accounting
 *   engine-read.c    the I/O thread: trace records into the window, admitted to the
 *                    scheduler (src/sched/sched.h)
 *   engine-send.c    the send thread, and dispatching (both the send and the receive
 *                    thread send what the scheduler lets go)
 *   engine-recv.c    the receive thread: replies matched, checked against the trace,
 *                    completed
 *   engine-retry.c   sending again: resends, retries, duplicate-request answers
 *   engine-bind.c    handles of the objects made during the replay
 *   engine-cookie.c  READDIR(PLUS) cookies: the traced ones mapped to the server's
 *   engine-racy.c    which traced replies raced another request (not checked)
 *
 * The lookahead window is a ring of slots indexed by request sequence number (seq %
 * window).  Every record gets `clones` consecutive sequence numbers, one per clone.
 * A slot has one owner at a time: the I/O thread fills it (FREE) and admits it under
 * the scheduler mutex (WAIT); the send thread picks it (FLIGHT) and sends it; the
 * receive thread completes it (DONE) or hands it back for sending again (RESEND).  The
 * oldest slots are recycled in order once DONE, so a slow request holds the window.
 *
 * The ordering and timing policies, the window's bounds and the limits on calls out are
 * the scheduler's (sched.h): the engine admits each slot to it, asks it for the next
 * request at the current time and reports each completion.  One mutex (`mu`) guards the
 * scheduler, the slot states, the handle states and the counters.  Each thread takes it
 * once per batch, not per request.  Handle slots that are KNOWN never change, so the
 * send thread reads them without the mutex while it encodes.  Functions named *_locked
 * are called with mu held; the others say so where it matters.  Not for use outside
 * src/player/engine*.c.
 */
#ifndef TBBT_PLAYER_ENGINE_INT_H
#define TBBT_PLAYER_ENGINE_INT_H

#include "player/engine.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "ns/ns.h"
#include "player/attrcheck.h"
#include "player/cookies.h"
#include "player/creds.h"
#include "player/nfsreq.h"
#include "onc/rpcconn.h"
#include "sched/sched.h"
#include "util/util.h"

#define REPLY_BATCH 128

#define NO_REPLY_KEY UINT64_MAX

#define MIN_REPLY_BYTES 28      /* record mark + the smallest accepted reply (NULL) */

#define JUKEBOX_DELAY0_NS 10000000ull     /* first wait after a JUKEBOX reply */

#define JUKEBOX_DELAY_MAX_NS 500000000ull /* longest wait between two tries */

#define STOP_KEY (UINT32_MAX - 1)         /* the receiver's epoll key of opts.stop_fd */

#define PEER_KEY (UINT32_MAX - 2)         /* ... and of opts.peer->in_fd */

#define LOST_SETTLE_NS 100000000ull       /* a call lost with its connection waits this
                                             long before it is sent again (rx_apply()) */

enum slot_state { S_FREE = 0, S_WAIT, S_FLIGHT, S_RESEND, S_DONE };

/* Why a request was not sent (counters of struct tbbt_report_counts). */
enum skip_why { SKIP_NOT_NFS, SKIP_INCOMPLETE, SKIP_UNSENDABLE, SKIP_NO_HANDLE, SKIP_DEPENDENCY };

struct slot {
    struct tbbt_trace_rec rec;  /* owned; its memory is kept across reuse */
    const struct tbbt_play_cred *cred;  /* the call's traced credential (borrowed from
                                           the engine's table), NULL: the record's uid
                                           and gid only */
    uint64_t seq;
    uint32_t clone;
    uint32_t client;            /* --client-outstanding: endpoint * clones + clone */
    uint8_t state;              /* enum slot_state */
    uint8_t op;                 /* enum tbbt_ns_op of the record */
    uint16_t conn;
    uint8_t attempts;           /* sends with a fresh XID after the first (retries) */
    uint16_t jb_tries;          /* JUKEBOX answers so far */
    uint64_t jb_first_ns;       /* when the first JUKEBOX came, 0 if none */
    uint8_t retrans;            /* timeouts of the current attempt (each resent with the
                                   same XID, struct tbbt_rpcconn_retry) */
    uint8_t relost;             /* lost connections of the current attempt (the same) */
    bool same_xid;              /* RESEND: retransmit with xid */
    bool fixup;                 /* send a LOOKUP of (dir, name): a retried create found it */
    bool made_pending;          /* this request set its object's handle PENDING */
    bool made_was_known;        /* ... which was KNOWN before (restored if it fails) */
    bool checked;               /* expected holds the trace's outcome */
    bool sent;                  /* went out at least once */
    bool resent;                /* went out more than once (a timeout, a lost connection):
                                   duplicate-request semantics apply (tbbt__eng_dup_answer()) */
    bool cookie_mapped;         /* cookie[] holds the server's cookie for a resend */
    bool external;              /* another process replays it (engine-peer.c) */
    bool racy;                  /* overlapped in the trace with a request that changes one
                                   of its objects: its traced reply is not checked */
    uint8_t nchg;               /* chg[0 .. nchg): the objects it changes (admission) */
    uint64_t chg[TBBT_FSDEP_MAX_CHANGES];
    uint64_t shown;             /* the object whose attributes its reply shows, 0: none */
    uint64_t cookie[2];         /* READDIR(PLUS) continuation: server cookie, verifier */
    int32_t expected;
    uint32_t xid;
    uint64_t sched_ns;          /* timestamp timing: when it is due (CLOCK_MONOTONIC) */
    uint64_t not_before;        /* RESEND: back-off */
    uint64_t send_ns;
    uint64_t reply_key;         /* the trace's reply time, NO_REPLY_KEY if none */
    xdrproc_t xres;             /* decoder of the results of the call in flight, or NULL */
    union tbbt_nfsreq_res res;  /* results decoded by the receive side */
};

struct conn {
    struct tbbt_rpcconn *rpc;
    pthread_mutex_t send_mu;    /* the connection's send side: the send thread and the
                                   receive thread both dispatch */
    atomic_bool flush_owed;     /* the receive thread left bytes queued (the socket was
                                   full): the send thread flushes them */
    bool up;                    /* polled by the receiver; false: receiver let go of it */
    uint64_t down_since;
    uint64_t next_try;
    int lowat;                  /* receive side: SO_RCVLOWAT set now (1 = off) */
    bool polled;                /* receive side: its socket is in the receiver's epoll set */
};

struct eng {
    const struct tbbt_engine_opts *o;
    struct tbbt_rpcconn_retry retry;   /* resends and reconnects, as start-up and --verify */
    GHashTable *rx_listings;    /* receive thread: (clone, dir) -> struct listing */
    uint32_t n_clones;
    unsigned W;
    struct slot *slots;

    pthread_mutex_t mu;
    pthread_cond_t cv_send, cv_read;
    atomic_bool sender_waiting;
    atomic_bool want_admit;     /* a dispatcher ran out of admitted requests: the reader
                                   admits what it has read at once, not by 64 */
    bool wake_send, wake_read;  /* signals owed, sent by tbbt__eng_unlock_wake() after unlocking */
    uint64_t sender_until;      /* the waiting sender's wake-up time (UINT64_MAX: none) */
    bool reader_waiting;
    uint64_t reader_need;       /* the waiting reader is woken once oldest + W reaches it */
    struct tbbt_sched *sched;   /* ordering, timing, window, limits (under mu) */
    uint64_t admitted, oldest;  /* the scheduler's, as of its last admission, completion */
    uint64_t total;
    bool stop, eof;
    bool stopping;              /* opts.stop_fd: nothing more is sent; the receiver waits
                                   for the calls out until stop_deadline, then ends the run */
    uint64_t stop_deadline;
    int err;
    char errbuf[512];

    GQueue resend;              /* seqs to send again */

    struct conn *conns;
    unsigned nconns;
    int rx_wake;                /* eventfd: wakes the receiver */
    int rx_ep;                  /* the receiver's epoll set: rx_wake and the sockets up */

    uint64_t start_ns;
    uint64_t trace_t0, trace_t1;
    _Atomic uint64_t last_reply_ns;
    _Atomic uint64_t done_count, fail_count;

    struct tbbt_play_creds creds;   /* the traced credentials, encoded (I/O thread makes
                                       them; entries never change once made) */
    GMutex cookie_mu;
    struct tbbt_play_cookies *cookies;  /* READDIR(PLUS) continuations (under cookie_mu) */

    struct tbbt_report *rep_tx, *rep_rx;
    struct tbbt_report_counts c;   /* under mu, except the reader's and the receiver's own */
    uint64_t filtered;             /* reader-owned */

    /* --distribute clients (engine-peer.c), under mu */
    GByteArray *notice;            /* the notice message being filled, or NULL */
    uint32_t notice_n;             /* its entries */
    GHashTable *early;             /* seq -> struct early: notices before admission */
    uint64_t ext_admitted;         /* external requests admitted */
    uint64_t notices_sent, notices_received;
    uint64_t xwait_since, xwait_ns;   /* nothing of ours could go for want of another's */

    /* The racy-reply rule (engine-racy.c), under mu */
    GHashTable *racy_wreply;       /* object -> latest traced reply of a change (in the
                                      pointers) */
    GArray *racy_pend;             /* replies with differences waiting for the verdict */
    uint64_t racy_horizon;         /* the latest call time admitted */
    uint64_t racy_admits;
};

static inline struct slot *S(struct eng *e, uint64_t seq)
{
    return &e->slots[seq % e->W];
}

/* CREATE, MKDIR, SYMLINK, MKNOD: the reply makes an object (and binds its handle). */
static inline bool is_create(const struct slot *s)
{
    return s->op == TBBT_NS_OP_CREATE || s->op == TBBT_NS_OP_MKDIR ||
           s->op == TBBT_NS_OP_SYMLINK || s->op == TBBT_NS_OP_MKNOD;
}

static inline uint64_t rec_obj(const struct tbbt_trace_rec *rec)
{
    return TBBT_HAS(rec, TBBT_F_ID_OBJ) ? rec->id_obj : 0;
}

/* The LOOKUP procedure number of rec's NFS version. */
static inline uint8_t lookup_proc(const struct tbbt_trace_rec *rec)
{
    return rec->prog == TBBT_PROG_NFS2 ? 4 : 3;
}

/*
 * What a dispatching thread owns: the send thread and the receive thread each have
 * one (their scratch request, their jobs, their report).
 */
struct txctx {
    struct txjob *jobs;
    unsigned cap;
    bool nonblock;              /* the receive thread: never waits on a send side */
    struct tbbt_nfsreq *q;
    bool *touched;
    struct tbbt_report *rep;
    unsigned skipped;           /* tbbt__eng_dispatch_locked(): of those picked, skipped (done) */
};

/* Reply differences beside the attributes' TBBT_ATTRCHECK_* bits (engine-recv.c). */
#define RX_DIFF_ATTRS (TBBT_ATTRCHECK_TYPE | TBBT_ATTRCHECK_MODE | TBBT_ATTRCHECK_UID | \
                       TBBT_ATTRCHECK_GID | TBBT_ATTRCHECK_SIZE | TBBT_ATTRCHECK_NLINK)
#define RX_DIFF_ENTRIES (1u << 8)  /* READDIR(PLUS): the number of entries */
#define RX_DIFF_EOF (1u << 9)      /* READDIR(PLUS): EOF */

/* What the receiver learned from one reply, before taking the mutex. */
struct rxdone {
    struct slot *s;
    int status;              /* enum tbbt_rpcconn_status */
    int32_t nfs;             /* NFS status when OK, else -1 */
    uint32_t fhlen;
    bool tail;
    bool checkable;          /* answered as traced: its reply was checked (diff) */
    unsigned diff;           /* the differences found, RX_DIFF_* | TBBT_ATTRCHECK_* */
    uint64_t cookie, verf;
    uint64_t lat_ns, recv_ns;
    uint8_t fh[TBBT_HANDLE_MAX];  /* last: rx_extract() clears everything before it */
};

/* ---- engine.c: the run, wake-ups, completion --------------------------------------------- */

/* Wakes the receive thread (its eventfd); any thread, mu held or not. */
void tbbt__eng_wake_rx(struct eng *e);

/* Ends the run (mu held): why is the report's stop_reason (static), fmt the error line. */
void tbbt__eng_fail_run(struct eng *e, const char *why, int err, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/*
 * Unlocks mu, then sends the condition signals that changes made under it owe: a
 * thread woken while the signaller still holds the mutex would only block on it again
 * (a futex call and a context switch more per wake-up).
 */
void tbbt__eng_unlock_wake(struct eng *e);

/* Sends owed signals now, mu held: before the calling thread waits itself. */
void tbbt__eng_wake_locked(struct eng *e);

/* Marks s DONE (under mu): the scheduler releases its waiters and recycles finished
 * slots in order. */
void tbbt__eng_complete_locked(struct eng *e, struct slot *s);

/* After completing a request: recycles the completed oldest slots (moved: the scheduler's
 * oldest moved) and wakes who waits for that (mu held). */
void tbbt__eng_advance_locked(struct eng *e, bool moved);

/* Counts s as skipped for why, fails the object it would make and completes it. */
void tbbt__eng_skip_locked(struct eng *e, struct slot *s, enum skip_why why);

/*
 * Timestamp timing: a sender that waits for a CPU misses its times, and so does one
 * that waits for the mutex while another player thread holding it is preempted by the
 * server's threads.  The player's threads run SCHED_FIFO where allowed (root or
 * CAP_SYS_NICE): the send thread at priority 2, so that even the I/O thread refilling
 * the window cannot hold it up on its CPU, the others at 1; else at nice -10; else as
 * they are (best effort).  The sender only spins for the last --spin-us before a due
 * request, and the kernel's RT throttling bounds what runaway RT threads could take.
 */
void tbbt__eng_boost_thread(const char *who, int prio);

/* ---- engine-retry.c: sending again ------------------------------------------------------- */

/*
 * Duplicate-request semantics.  A non-idempotent request sent more than once (after a
 * timeout or a reconnect) may have been applied by its first send, whose reply was
 * lost: the server's duplicate request cache may no longer hold that reply (NFS-Ganesha
 * drops a TCP connection's cached replies with the connection and retires them after
 * later calls), and runs it again.  The answer it then gives where the trace says OK is
 * what that first send left behind: EXIST for a create or a LINK, NOENT for a REMOVE,
 * RMDIR or RENAME, NOT_SYNC for a guarded SETATTR.  Real clients take it as success,
 * and so does the player (counted in retransmit_dup_ok).
 */
bool tbbt__eng_dup_answer(const struct slot *s, int32_t nfs);

/* Calls that make objects later requests need are retried (TBBT paper section 4). */
bool tbbt__eng_is_retried(const struct slot *s);

/*
 * Queues s to be sent again, in sequence order: the calls a lost connection hands back
 * come in no particular order, and the oldest (the ones others wait for) go first.
 */
void tbbt__eng_resend_locked(struct eng *e, struct slot *s, bool same_xid, uint64_t not_before);

/* A resend whose back-off is over and whose connection is up, or NULL. */
struct slot *tbbt__eng_pick_resend(struct eng *e, uint64_t now, uint64_t *due);

/*
 * Whether a call that timed out met a silent server rather than a lost reply: the
 * server answered nothing at all since the call was last sent (a whole timeout).  Such a
 * server is stopped, busy or gone, not dropping one reply: the call is sent again rather
 * than given up as unknown once its resends are used up, since the server still holds it
 * and will run it when it wakes up, after the requests that giving it up would release
 * (fsdep order sent them at once: a CREATE answered STALE, seen on the lab with
 * ganesha.nfsd stopped for 3 s).  The wait is bounded by --dead-after (the receive
 * thread's check of last_reply_ns).
 */
bool tbbt__eng_server_silent(struct eng *e, const struct rxdone *d);

/* ---- engine-bind.c: handles made during the replay --------------------------------------- */

/* The handle slot of the object rec makes, for clone. */
struct tbbt_handle *tbbt__eng_made_handle(struct eng *e, const struct slot *s);

/* A request that makes an object did not make it: requests that need it are skipped. */
void tbbt__eng_made_failed(struct eng *e, struct slot *s);

/* The scheduler's hold callback (conservative): true if a handle request seq needs is
 * being made by a request in flight. */
bool tbbt__eng_needs_pending(uint64_t seq, void *arg);

/*
 * Binds the handle a reply returned to the object the record names: always for the
 * object a create made (PENDING, see take_locked()), for a LOOKUP only if the ID had no
 * handle (KNOWN handles never change under the send thread otherwise).
 */
void tbbt__eng_bind_made(struct eng *e, struct slot *s, const struct rxdone *d);

/* ---- engine-peer.c: records other processes replay (--distribute clients) --------------- */

/* Own request s completed: a notice entry for the others (mu held; opts.peer set). */
void tbbt__eng_peer_note_locked(struct eng *e, const struct slot *s);
/* Hands the notice entries made so far to the channel (mu held); no-op without any. */
void tbbt__eng_peer_flush_locked(struct eng *e);
/* External request s was just admitted (mu held): marks the object it makes PENDING and
 * completes it at once if its notice came early. */
void tbbt__eng_peer_admitted_locked(struct eng *e, struct slot *s);
/* The receive thread: applies the notices queued in opts.peer->in (takes mu).  True if
 * there were any (requests they released may go). */
bool tbbt__eng_peer_drain(struct eng *e);
/* The send thread found nothing to send (mu held): notes when it waits on others only. */
void tbbt__eng_peer_waiting_locked(struct eng *e);
/* End of the run, threads joined: the peer's figures, and frees the notice state. */
void tbbt__eng_peer_fini(struct eng *e);

/* ---- engine-read.c: the I/O thread ------------------------------------------------------- */

/* The I/O thread (arg: struct eng); returns NULL once the trace is read or the run stops. */
void *tbbt__eng_reader_main(void *arg);

/* ---- engine-send.c: the send thread and dispatching -------------------------------------- */

/* A dispatching thread's context (caller storage; rep borrowed, the thread's own report);
 * nonblock for the receive thread.  _fini() frees what _init() made. */
void tbbt__eng_txctx_init(struct txctx *t, struct eng *e, struct tbbt_report *rep,
                          bool nonblock);
void tbbt__eng_txctx_fini(struct txctx *t);

/*
 * Under mu: picks up to t->cap requests that may go now (resends first, then the
 * ordering policy's next ones), sends them with mu released, and accounts for them.
 * *due gets the earliest time something not ready now becomes due.  Returns the number
 * picked (0: nothing may go now); *handed the number of those given back to the send
 * thread (a connection down or, for the receive thread, busy).  mu is held again on
 * return.
 */
unsigned tbbt__eng_dispatch_locked(struct eng *e, struct txctx *t, uint64_t *due,
                                   unsigned *handed);

/* The send thread (arg: struct eng); returns NULL when the run ends or stops. */
void *tbbt__eng_sender_main(void *arg);

/* ---- engine-cookie.c: READDIR cookies ---------------------------------------------------- */

/*
 * A READDIR(PLUS) that continues a listing gets the server's cookie for the trace's
 * (tbbt__eng_rx_cookies() learned it from the reply that ended the previous page); the
 * entry is used once and dropped, so the table holds only pending continuations.  An unknown
 * continuation starts over at cookie 0.  Other procedures carry no cookie: no-op.
 */
void tbbt__eng_map_cookie(struct eng *e, struct slot *s, struct tbbt_nfsreq *q);

/* The receive side of the above: of the n replies d, those that ended a page (tail) leave
 * the server's cookie and verifier for the page that continues it. */
void tbbt__eng_rx_cookies(struct eng *e, const struct rxdone *d, unsigned n);

/* ---- engine-recv.c: the receive thread --------------------------------------------------- */

/* The receive thread (arg: struct eng); returns NULL when the run ends or stops. */
void *tbbt__eng_receiver_main(void *arg);

/* Counts one reply's differences (RX_DIFF_* | TBBT_ATTRCHECK_* bits) as mismatches. */
void tbbt__eng_report_diff(struct tbbt_report *rep, uint32_t prog, uint32_t proc, unsigned diff);

/* ---- engine-racy.c: which replies are not checked ----------------------------------------- */

void tbbt__eng_racy_init(struct eng *e);
/* The scheduler's conflict callback (struct tbbt_sched_opts): waiter, admitted after
 * holder, uses one of holder's objects or directory entries (the scheduler makes it wait
 * unless the conflict is only reported: objects in conservative order); marks holder's
 * reply racy when waiter raced it in the trace.  arg: the engine. */
void tbbt__eng_racy_conflict(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind,
                             void *arg);
void tbbt__eng_racy_fini(struct eng *e);
/* s is admitted (trace order): marks it racy by the requests before it, and the waiting
 * verdicts it races. */
void tbbt__eng_racy_admit_locked(struct eng *e, struct slot *s);
/* s was answered as traced, with differences diff (0: none): counts it racy, reports
 * the differences, or keeps them until the verdict is known. */
void tbbt__eng_racy_verdict_locked(struct eng *e, const struct slot *s, unsigned diff);
/* Gives the verdicts now known; end: all of them (the run is over). */
void tbbt__eng_racy_settle_locked(struct eng *e, bool end);

#endif
