/* SPDX-License-Identifier: MIT */
/*
 * The three-thread trace player (engine.h; TBBT paper 3.4 and 4, Figure 2).
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
 * scheduler, the slot states, the handle states and the counters.  Each
 * thread takes it once per batch, not per request.  Handle slots that are KNOWN never
 * change, so the send thread reads them without the mutex while it encodes.
 */
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
#include "player/nfsreq.h"
#include "rpcclient/rpcconn.h"
#include "sched/sched.h"
#include "util/util.h"

#define REPLY_BATCH 128
#define NO_REPLY_KEY UINT64_MAX
#define MIN_REPLY_BYTES 28      /* record mark + the smallest accepted reply (NULL) */
#define JUKEBOX_DELAY0_NS 10000000ull     /* first wait after a JUKEBOX reply */
#define JUKEBOX_DELAY_MAX_NS 500000000ull /* longest wait between two tries */
#define STOP_KEY (UINT32_MAX - 1)         /* the receiver's epoll key of opts.stop_fd */
#define LOST_SETTLE_NS 100000000ull       /* a call lost with its connection waits this
                                             long before it is sent again (rx_apply()) */

enum slot_state { S_FREE = 0, S_WAIT, S_FLIGHT, S_RESEND, S_DONE };

/* A traced AUTH_SYS credential, encoded once (the I/O thread makes it; then read-only). */
struct encred {
    uint32_t len;
    uint8_t body[TBBT_RPCCONN_AUTH_MAX];
};

/* Why a request was not sent (counters of struct tbbt_report_counts). */
enum skip_why { SKIP_NOT_NFS, SKIP_INCOMPLETE, SKIP_UNSENDABLE, SKIP_NO_HANDLE, SKIP_DEPENDENCY };

struct slot {
    struct tbbt_trace_rec rec;  /* owned; its memory is kept across reuse */
    const struct encred *cred;  /* the call's traced credential (borrowed from the engine's
                                   table), NULL: the record's uid and gid only */
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
                                   duplicate-request semantics apply (dup_answer()) */
    bool cookie_mapped;         /* cookie[] holds the server's cookie for a resend */
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
    bool wake_send, wake_read;  /* signals owed, sent by unlock_wake() after unlocking */
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

    GPtrArray *creds;           /* struct encred * by trace credential reference (I/O
                                   thread; entries never change once made) */
    uint32_t cred_stamp;        /* AUTH_SYS stamp of every replayed credential */
    GMutex cookie_mu;
    GHashTable *cookies;        /* (clone, dir id, trace cookie) -> server cookie, verifier */

    struct tbbt_report *rep_tx, *rep_rx;
    struct tbbt_report_counts c;   /* under mu, except the reader's and the receiver's own */
    uint64_t filtered;             /* reader-owned */
};

/* ------------------------------------------------------------------ small helpers */

static struct slot *S(struct eng *e, uint64_t seq)
{
    return &e->slots[seq % e->W];
}

static void wake_rx(struct eng *e)
{
    uint64_t one = 1;
    ssize_t w = write(e->rx_wake, &one, sizeof(one));
    (void)w;
}

/* Ends the run (mu held): why is the report's stop_reason (static), fmt the error line. */
static void fail_run(struct eng *e, const char *why, int err, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static void fail_run(struct eng *e, const char *why, int err, const char *fmt, ...)
{
    if (e->err == 0) {
        e->c.stop_reason = why;
        va_list ap;
        va_start(ap, fmt);
        g_vsnprintf(e->errbuf, sizeof(e->errbuf), fmt, ap);
        va_end(ap);
        e->err = err < 0 ? err : -EIO;
    }
    e->stop = true;
    pthread_cond_broadcast(&e->cv_send);
    pthread_cond_broadcast(&e->cv_read);
    wake_rx(e);
}

/*
 * Unlocks mu, then sends the condition signals that changes made under it owe: a
 * thread woken while the signaller still holds the mutex would only block on it again
 * (a futex call and a context switch more per wake-up).
 */
static void unlock_wake(struct eng *e)
{
    bool send = e->wake_send, read = e->wake_read;
    e->wake_send = e->wake_read = false;
    pthread_mutex_unlock(&e->mu);
    if (send)
        pthread_cond_signal(&e->cv_send);
    if (read)
        pthread_cond_signal(&e->cv_read);
}

/* Sends owed signals now, mu held: before the calling thread waits itself. */
static void wake_locked(struct eng *e)
{
    if (e->wake_send)
        pthread_cond_signal(&e->cv_send);
    if (e->wake_read)
        pthread_cond_signal(&e->cv_read);
    e->wake_send = e->wake_read = false;
}

/* CREATE, MKDIR, SYMLINK, MKNOD: the reply makes an object (and binds its handle). */
static bool is_create(const struct slot *s)
{
    return s->op == TBBT_NS_OP_CREATE || s->op == TBBT_NS_OP_MKDIR ||
           s->op == TBBT_NS_OP_SYMLINK || s->op == TBBT_NS_OP_MKNOD;
}

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
static bool dup_answer(const struct slot *s, int32_t nfs)
{
    /* nfsstat3 (proto/nfs3.h); NFSv2's NOENT and EXIST have the same values */
    switch (s->op) {
    case TBBT_NS_OP_CREATE: case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_SYMLINK:
    case TBBT_NS_OP_MKNOD: case TBBT_NS_OP_LINK:
        return nfs == NFS3ERR_EXIST;
    case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR: case TBBT_NS_OP_RENAME:
        return nfs == NFS3ERR_NOENT;
    case TBBT_NS_OP_SETATTR:
        return nfs == NFS3ERR_NOT_SYNC;
    default:
        return false;
    }
}

/* Calls that make objects later requests need are retried (TBBT paper section 4). */
static bool is_retried(const struct slot *s)
{
    return is_create(s) || s->op == TBBT_NS_OP_LINK || s->fixup;
}

static uint64_t rec_obj(const struct tbbt_trace_rec *rec)
{
    return TBBT_HAS(rec, TBBT_F_ID_OBJ) ? rec->id_obj : 0;
}

/* The LOOKUP procedure number of rec's NFS version. */
static uint8_t lookup_proc(const struct tbbt_trace_rec *rec)
{
    return rec->prog == TBBT_PROG_NFS2 ? 4 : 3;
}

/* ------------------------------------------------------------------ completion */

static double tv_diff(const struct timeval *a, const struct timeval *b)
{
    return (double)(a->tv_sec - b->tv_sec) + (double)(a->tv_usec - b->tv_usec) / 1e6;
}

/* True if a changes the object whose attributes (or entries) b's reply shows. */
static bool writes_checked(const struct slot *a, const struct slot *b)
{
    for (unsigned i = 0; i < a->nchg && b->shown; i++)
        if (a->chg[i] == b->shown)
            return true;
    return false;
}

/*
 * The scheduler found that waiter, admitted after holder, uses one of holder's objects
 * or directory entries (fsdep.h): it waits for holder unless the conflict is only
 * reported (INFO: objects in conservative order).  Records that raced for one directory entry are in the trace
 * in the order the traced server ran them (tbbt-convert, docs/tbbt-convert.md); for
 * objects, call order is kept: which of two overlapping requests the server ran first
 * is not known from their times (a slow GETATTR can answer after a WRITE it ran
 * before), and the replies of such requests are not checked (racy).
 */
static void add_dep(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind, void *arg)
{
    struct eng *e = arg;
    struct slot *h = S(e, holder), *w = S(e, waiter);
    (void)kind;
    /* Overlapping in the trace, one of them changing the object whose attributes the
     * other's reply shows: that reply depends on how the traced server interleaved them. */
    if (w->rec.call_ns < h->reply_key) {
        h->racy |= writes_checked(w, h);
        w->racy |= writes_checked(h, w);
    }
}

/* Marks s DONE (under mu): the scheduler releases its waiters and recycles finished
 * slots in order. */
static void complete_locked(struct eng *e, struct slot *s)
{
    if (s->jb_first_ns) {
        uint64_t now = tbbt_now_ns();
        double w = (double)(now - MIN(now, s->jb_first_ns)) / 1e9;
        e->c.jukebox_wait_seconds += w;
        e->c.jukebox_wait_max_seconds = MAX(e->c.jukebox_wait_max_seconds, w);
        s->jb_first_ns = 0;
    }
    s->state = S_DONE;
    bool moved = tbbt_sched_complete(e->sched, s->seq) > 0;
    atomic_fetch_add_explicit(&e->done_count, 1, memory_order_relaxed);
    for (; e->oldest < tbbt_sched_oldest(e->sched); e->oldest++)
        S(e, e->oldest)->state = S_FREE;
    /* ... and a reader that waits for room once a chunk of the window is free. */
    if (moved && e->reader_waiting && e->oldest + e->W >= e->reader_need)
        e->wake_read = true;
    /* The requests a completion releases are sent by the receive thread itself
     * (rx_batch): the send thread is not woken for them. */
    if (e->eof && e->oldest == e->total) {
        pthread_cond_broadcast(&e->cv_send);
        wake_rx(e);
    }
}

/* The handle slot of the object rec makes, for clone. */
static struct tbbt_handle *made_handle(struct eng *e, const struct slot *s)
{
    uint64_t obj = rec_obj(&s->rec);
    return obj ? tbbt_handles_slot(e->o->handles[s->clone], obj) : NULL;
}

/* A request that makes an object did not make it: requests that need it are skipped. */
static void made_failed(struct eng *e, struct slot *s)
{
    if (!s->made_pending)
        return;
    struct tbbt_handle *h = made_handle(e, s);
    if (h && h->state == TBBT_HANDLE_PENDING)
        h->state = s->made_was_known ? TBBT_HANDLE_KNOWN : TBBT_HANDLE_FAILED;
    s->made_pending = false;
}

static void skip_locked(struct eng *e, struct slot *s, enum skip_why why)
{
    e->c.ops_skipped++;
    switch (why) {
    case SKIP_NOT_NFS: e->c.skipped_not_nfs++; break;
    case SKIP_INCOMPLETE: e->c.skipped_incomplete++; break;
    case SKIP_UNSENDABLE: e->c.skipped_unsendable++; break;
    case SKIP_NO_HANDLE: e->c.skipped_no_handle++; break;
    case SKIP_DEPENDENCY: e->c.skipped_dependency++; break;
    }
    made_failed(e, s);
    complete_locked(e, s);
}

static gint seq_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y;
}

/*
 * Queues s to be sent again, in sequence order: the calls a lost connection hands back
 * come in no particular order, and the oldest (the ones others wait for) go first.
 */
static void resend_locked(struct eng *e, struct slot *s, bool same_xid, uint64_t not_before)
{
    s->state = S_RESEND;
    s->same_xid = same_xid;
    s->not_before = not_before;
    GList *tail = e->resend.tail;
    if (!tail || GPOINTER_TO_SIZE(tail->data) < s->seq + 1)
        g_queue_push_tail(&e->resend, GSIZE_TO_POINTER(s->seq + 1));
    else
        g_queue_insert_sorted(&e->resend, GSIZE_TO_POINTER(s->seq + 1), seq_cmp, NULL);
    if (atomic_load_explicit(&e->sender_waiting, memory_order_relaxed))
        e->wake_send = true;
}

/* ------------------------------------------------------------------ I/O thread */

static void admit_locked(struct eng *e, uint64_t upto)
{
    /* The sender is woken only if these requests may go before the next reply, which
     * would let the receive thread send them: conservative order was waiting for them
     * (the next request to issue had not been admitted), or fsdep made some ready. */
    bool wake = e->o->order == TBBT_ORDER_CONSERVATIVE && tbbt_sched_behind(e->sched);
    for (uint64_t q = e->admitted; q < upto; q++) {
        struct slot *s = S(e, q);
        s->state = S_WAIT;
        /* fsdep is made of the object locks; conservative order adds the locks on
         * directory entries to its own rule, so that two requests on one name that
         * overlapped in the trace (two clients racing for one lock file) reach the server
         * in the order the traced server saw them, not in whichever order its threads
         * pick them up.  Other overlapping requests keep their traced concurrency (an
         * attribute read racing a write: its reply is not checked, see rx_check()). */
        struct tbbt_fsdep_sets sets;
        tbbt_fsdep_sets(&s->rec, &sets);
        s->nchg = (uint8_t)tbbt_fsdep_changes(&sets, s->chg);
        s->shown = tbbt_fsdep_shown(&s->rec);
        struct tbbt_sched_req rq = {.clone = s->clone, .client = s->client,
                                    .call_ns = s->rec.call_ns, .reply_ns = s->reply_key,
                                    .due_ns = s->sched_ns, .sets = &sets};
        bool ready;
        tbbt_sched_admit(e->sched, &rq, &ready);
        wake |= ready;
    }
    e->admitted = upto;
    atomic_store_explicit(&e->want_admit, false, memory_order_relaxed);
    if (wake && atomic_load_explicit(&e->sender_waiting, memory_order_relaxed))
        e->wake_send = true;
}

/* The encoded credential of rec's `cred` (I/O thread), made on first use; NULL if none. */
static const struct encred *rec_cred(struct eng *e, struct tbbt_trace_reader *r,
                                     const struct tbbt_trace_rec *rec)
{
    if (!TBBT_HAS(rec, TBBT_F_CRED))
        return NULL;
    if (rec->cred < e->creds->len && g_ptr_array_index(e->creds, rec->cred))
        return g_ptr_array_index(e->creds, rec->cred);
    const struct tbbt_cred *c = tbbt_credtab_get(tbbt_trace_reader_credtab(r), rec->cred);
    if (!c)
        return NULL;
    struct encred *x = g_new(struct encred, 1);
    x->len = tbbt_rpcconn_encode_authsys(x->body, e->cred_stamp, c->machine, c->machine_len,
                                         c->uid, c->gid, c->ngids, c->gids);
    if (rec->cred >= e->creds->len)
        g_ptr_array_set_size(e->creds, rec->cred + 1);
    g_ptr_array_index(e->creds, rec->cred) = x;
    return x;
}

/* Fills the per-request fields of a slot from its record. */
static void prepare(struct eng *e, struct slot *s, uint64_t seq, uint32_t clone)
{
    const struct tbbt_trace_rec *r = &s->rec;
    s->seq = seq;
    s->clone = clone;
    s->client = r->endpoint * e->n_clones + clone;
    s->attempts = s->retrans = s->relost = 0;
    s->resent = false;
    s->jb_tries = 0;
    s->jb_first_ns = 0;
    s->same_xid = s->fixup = s->made_pending = s->made_was_known = s->sent = false;
    s->cookie_mapped = s->racy = false;
    s->op = (uint8_t)tbbt_ns_op(r);
    s->checked = (r->flags & TBBT_RF_REPLY) && r->rpc_stat == TBBT_RPC_SUCCESS &&
                 ((r->flags & TBBT_RF_STATUS) || r->proc == 0);
    s->expected = (r->flags & TBBT_RF_STATUS) ? r->status : 0;
    s->reply_key = (r->flags & TBBT_RF_REPLY) ? r->reply_ns : NO_REPLY_KEY;
    s->sched_ns = tbbt_sched_due(e->start_ns, e->trace_t0, r->call_ns, e->o->speed);
}

/*
 * Timestamp timing: a sender that waits for a CPU misses its times, and so does one
 * that waits for the mutex while another player thread holding it is preempted by the
 * server's threads.  The player's threads run SCHED_FIFO where allowed (root or
 * CAP_SYS_NICE): the send thread at priority 2, so that even the I/O thread refilling
 * the window cannot hold it up on its CPU, the others at 1; else at nice -10; else as
 * they are (best effort).  The sender only spins for the last --spin-us before a due
 * request, and the kernel's RT throttling bounds what runaway RT threads could take.
 */
static void boost_thread(const char *who, int prio)
{
    struct sched_param sp = {.sched_priority = prio};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
        return;
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), -10) != 0)
        tbbt_log(TBBT_LOG_DEBUG, "%s thread priority unchanged: %s", who, g_strerror(errno));
}

/*
 * --reorder: the I/O thread's staging area.  Records are read into a pool of k+1
 * staging records and pass through the reorderer (reorder.h); the one that comes out
 * trades places (struct swap, no copy) with the record of the next slot.  Each
 * position keeps its trace times: the times of the records in read order are queued
 * and handed out in that order, so the swapped reads trade their call and reply times
 * too and the schedule, the conservative rule and the event log stay monotone.
 */
struct stage {
    struct tbbt_reorder *ro;
    struct tbbt_trace_rec *pool;    /* k+1 records */
    GPtrArray *free;                /* pool records not in the reorderer */
    uint64_t *times;                /* ring of (call_ns, reply_ns) in read order */
    size_t cap, head, n;
};

static void stage_init(struct stage *st, const struct tbbt_engine_opts *o)
{
    memset(st, 0, sizeof(*st));
    if (!o->reorder)
        return;
    st->ro = tbbt_reorder_new(&o->reorder_spec, o->reorder_seed);
    st->cap = (size_t)o->reorder_spec.k + 1;
    st->pool = g_new(struct tbbt_trace_rec, st->cap);
    st->free = g_ptr_array_sized_new((guint)st->cap);
    st->times = g_new(uint64_t, 2 * st->cap);
    for (size_t i = 0; i < st->cap; i++) {
        tbbt_trace_rec_init(&st->pool[i]);
        g_ptr_array_add(st->free, &st->pool[i]);
    }
}

static void stage_fini(struct stage *st)
{
    if (!st->ro)
        return;
    for (size_t i = 0; i < st->cap; i++)
        tbbt_trace_rec_fini(&st->pool[i]);
    g_free(st->pool);
    g_ptr_array_free(st->free, TRUE);
    g_free(st->times);
    tbbt_reorder_free(st->ro);
}

/* Only READs move, and only past other READs: two reads never depend on each other. */
static bool swappable(const struct tbbt_trace_rec *rec)
{
    return tbbt_ns_op(rec) == TBBT_NS_OP_READ;
}

/* Hands in a record just read (from the free pool) with its times. */
static void stage_push(struct stage *st, struct tbbt_trace_rec *rec)
{
    size_t at = (st->head + st->n) % st->cap;
    st->times[2 * at] = rec->call_ns;
    st->times[2 * at + 1] = rec->reply_ns;
    st->n++;
    tbbt_reorder_push(st->ro, rec, swappable(rec));
}

/* The next record in the new order into dst (swapped in), or false. */
static bool stage_pop(struct stage *st, struct tbbt_trace_rec *dst, bool flush)
{
    struct tbbt_trace_rec *rec = tbbt_reorder_pop(st->ro, flush), tmp;
    if (!rec)
        return false;
    rec->call_ns = st->times[2 * st->head];
    rec->reply_ns = st->times[2 * st->head + 1];
    st->head = (st->head + 1) % st->cap;
    st->n--;
    tmp = *dst;
    *dst = *rec;
    *rec = tmp;
    g_ptr_array_add(st->free, rec);
    return true;
}

/*
 * Reads the next kept record (--subset filter applied) into rec.  1, 0 at the end
 * of the trace, or a negative error (the run is failed).
 */
static int read_kept(struct eng *e, struct tbbt_trace_reader *r, struct tbbt_trace_rec *rec,
                     bool *first)
{
    for (;;) {
        int rc = tbbt_trace_reader_next(r, rec);
        if (rc < 0) {
            pthread_mutex_lock(&e->mu);
            fail_run(e, "trace error", rc, "trace '%s': %s at byte %" PRIu64,
                     e->o->trace_path, tbbt_strerror(rc), tbbt_trace_reader_offset(r));
            unlock_wake(e);
        }
        if (rc <= 0)
            return rc;
        if (e->o->filter && !e->o->filter(rec, tbbt_trace_reader_eptab(r), e->o->filter_arg)) {
            e->filtered++;
            continue;
        }
        if (e->o->sizes)
            tbbt_verify_sizes_note(e->o->sizes, rec);
        if (*first) {
            e->trace_t0 = rec->call_ns;
            *first = false;
        }
        e->trace_t1 = MAX(e->trace_t1, rec->call_ns);
        return 1;
    }
}

/* The next record for slot rec: straight from the trace, or through the reorderer. */
static int next_record(struct eng *e, struct tbbt_trace_reader *r, struct stage *st,
                       struct tbbt_trace_rec *rec, bool *first, bool *in_eof)
{
    if (!st->ro)
        return read_kept(e, r, rec, first);
    while (!stage_pop(st, rec, *in_eof)) {
        if (*in_eof)
            return 0;
        struct tbbt_trace_rec *in = g_ptr_array_steal_index_fast(st->free, st->free->len - 1);
        int rc = read_kept(e, r, in, first);
        if (rc <= 0) {
            g_ptr_array_add(st->free, in);
            if (rc < 0)
                return rc;
            *in_eof = true;
            continue;
        }
        stage_push(st, in);
    }
    return 1;
}

/*
 * Trace fields the player never reads: the reader steps over them instead of decoding
 * up to two more attribute sets and three wcc sets per record.  The object's
 * attributes are read: replies are checked against them (rx_check()).
 */
static uint64_t unused_fields(void)
{
    static const enum tbbt_field unused[] = {
        TBBT_F_FH, TBBT_F_FH2, TBBT_F_NEW_FH, TBBT_F_OBJ_PRE, TBBT_F_DIR_ATTR, TBBT_F_DIR_PRE,
        TBBT_F_DIR2_ATTR, TBBT_F_DIR2_PRE, TBBT_F_COMMITTED,
        TBBT_F_WRITEVERF, TBBT_F_ACCESS_RES, TBBT_F_INFO,
    };
    uint64_t m = 0;   /* obj_attr and eof: the replies are checked against them */
    for (size_t i = 0; i < G_N_ELEMENTS(unused); i++)
        m |= (uint64_t)1 << unused[i];
    return m;
}

static void *reader_main(void *arg)
{
    struct eng *e = arg;
    int err = 0;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(e->o->trace_path, &err);
    if (!r) {
        pthread_mutex_lock(&e->mu);
        fail_run(e, "trace error", err, "cannot open trace '%s': %s", e->o->trace_path,
                 tbbt_strerror(err));
        unlock_wake(e);
        return NULL;
    }
    tbbt_trace_reader_skip_fields(r, unused_fields());
    if (e->o->timing == TBBT_TIMING_TIMESTAMP)
        boost_thread("I/O", 1);
    const uint32_t N = e->n_clones;
    uint64_t next = 0, room_end;
    unsigned batch = 0;
    bool first = true, in_eof = false;
    struct stage st;
    stage_init(&st, e->o);
    pthread_mutex_lock(&e->mu);
    room_end = e->oldest + e->W;
    unlock_wake(e);
    for (;;) {
        if (next + N > room_end || batch >= 64 ||
            (batch && atomic_load_explicit(&e->want_admit, memory_order_relaxed))) {
            pthread_mutex_lock(&e->mu);
            admit_locked(e, next);
            batch = 0;
            /* A full window: wait until an eighth of it is free, not for every slot. */
            e->reader_need = next + MAX(N, e->W / 8);
            while (!e->stop && !e->stopping && next + N > e->oldest + e->W) {
                wake_locked(e);
                e->reader_waiting = true;
                pthread_cond_wait(&e->cv_read, &e->mu);
                e->reader_waiting = false;
            }
            room_end = e->oldest + e->W;
            bool stop = e->stop || e->stopping;
            unlock_wake(e);
            if (stop)
                break;
        }
        struct slot *s = S(e, next);
        if (next_record(e, r, &st, &s->rec, &first, &in_eof) <= 0)
            break;
        prepare(e, s, next, 0);
        s->cred = rec_cred(e, r, &s->rec);
        for (uint32_t c = 1; c < N; c++) {
            struct slot *d = S(e, next + c);
            tbbt_trace_rec_copy(&d->rec, &s->rec);
            prepare(e, d, next + c, c);
            d->cred = s->cred;
        }
        next += N;
        batch++;
    }
    uint64_t swaps = st.ro ? tbbt_reorder_swaps(st.ro) : 0;
    stage_fini(&st);
    tbbt_trace_reader_close(r);
    pthread_mutex_lock(&e->mu);
    e->c.reordered_reads = swaps;
    admit_locked(e, next);
    e->eof = true;
    e->total = next;
    if (e->oldest == e->total) {
        pthread_cond_broadcast(&e->cv_send);
        wake_rx(e);
    }
    unlock_wake(e);
    return NULL;
}

/* ------------------------------------------------------------------ send thread */

/* The scheduler's hold callback (conservative): true if a handle request seq needs is
 * being made by a request in flight. */
static bool needs_pending(uint64_t seq, void *arg)
{
    struct eng *e = arg;
    const struct slot *s = S(e, seq);
    uint64_t ids[2];
    int n = tbbt_nfsreq_needs(&s->rec, ids);
    for (int i = 0; i < n; i++) {
        const struct tbbt_handle *h = tbbt_handles_peek(e->o->handles[s->clone], ids[i]);
        if (h && h->state == TBBT_HANDLE_PENDING)
            return true;
    }
    return false;
}

/* A resend whose back-off is over and whose connection is up, or NULL. */
static struct slot *pick_resend(struct eng *e, uint64_t now, uint64_t *due)
{
    for (GList *l = e->resend.head; l; l = l->next) {
        struct slot *s = S(e, GPOINTER_TO_SIZE(l->data) - 1);
        if (!e->conns[s->conn].up)
            continue;
        if (s->not_before > now) {
            *due = MIN(*due, s->not_before);
            continue;
        }
        g_queue_delete_link(&e->resend, l);
        return s;
    }
    return NULL;
}

/*
 * The connection of a request: its traced client's own (the connection map), else one
 * by the hash of its object (a directory operation by its directory), so that requests
 * on one object keep their order.
 */
static unsigned conn_of(struct eng *e, const struct slot *s)
{
    if (e->o->conn_map && s->rec.endpoint < e->o->conn_map_len)
        return e->o->conn_map[s->rec.endpoint] % e->nconns;
    uint64_t id = TBBT_HAS(&s->rec, TBBT_F_ID) ? s->rec.id : 0;
    return (unsigned)(((id * 0x9e3779b97f4a7c15ull) >> 32) + s->clone) % e->nconns;
}

/*
 * Under mu: a picked request goes in flight; the object it makes becomes PENDING until
 * the reply binds its new handle, even when the ID had a handle: a create makes a new
 * object (after a rename over the old one, say), and the old handle may be stale.
 * Requests that need it wait (fsdep: the reply lock; conservative: needs_pending()).
 */
static void take_locked(struct eng *e, struct slot *s)
{
    if (s->state == S_WAIT) {
        s->conn = (uint16_t)conn_of(e, s);
        if (is_create(s)) {
            struct tbbt_handle *h = made_handle(e, s);
            if (h && h->state != TBBT_HANDLE_PENDING) {
                s->made_was_known = h->state == TBBT_HANDLE_KNOWN;
                h->state = TBBT_HANDLE_PENDING;
                s->made_pending = true;
            }
        }
    }
    s->state = S_FLIGHT;
}

/*
 * One request a dispatching thread sends.  Once its bytes are flushed the reply may
 * come, and the receive thread may complete and recycle the slot at once: what is
 * needed after the flush is copied here before it.
 */
struct txjob {
    struct slot *s;
    int skip;           /* -1: sent; else enum skip_why */
    bool requeue;       /* the connection refused it: send again later */
    bool first;         /* its first send (dispatch error, issued counts) */
    unsigned conn;      /* its connection */
    uint64_t sched_ns;  /* when it was due */
    char ev[160];       /* its event log line, "" if none */
};

/* Maps a server cookie for a READDIR(PLUS) continuation (the trace's cookie -> ours). */
struct cookie_key {
    uint64_t clone_dir, cookie;
};

static guint cookie_hash(gconstpointer p)
{
    const struct cookie_key *k = p;
    return (guint)((k->clone_dir * 0x9e3779b97f4a7c15ull) ^ k->cookie ^ (k->cookie >> 32));
}

static gboolean cookie_equal(gconstpointer a, gconstpointer b)
{
    const struct cookie_key *x = a, *y = b;
    return x->clone_dir == y->clone_dir && x->cookie == y->cookie;
}

/*
 * A READDIR(PLUS) that continues a listing gets the server's cookie for the trace's
 * (rx_cookies() learned it from the reply that ended the previous page); the entry is
 * used once and dropped, so the table holds only pending continuations.  An unknown
 * continuation starts over at cookie 0.  Other procedures carry no cookie: no-op.
 */
static void map_cookie(struct eng *e, struct slot *s, struct tbbt_nfsreq *q)
{
    const struct tbbt_trace_rec *r = &s->rec;
    if (!TBBT_HAS(r, TBBT_F_COOKIE) || r->cookie == 0)
        return;
    if (!s->cookie_mapped) {   /* a resend keeps what the first send took */
        struct cookie_key k = {((uint64_t)s->clone << 32) | r->id, r->cookie};
        s->cookie[0] = s->cookie[1] = 0;
        g_mutex_lock(&e->cookie_mu);
        const uint64_t *found = g_hash_table_lookup(e->cookies, &k);
        if (found) {
            memcpy(s->cookie, found, sizeof(s->cookie));
            g_hash_table_remove(e->cookies, &k);
        }
        g_mutex_unlock(&e->cookie_mu);
        s->cookie_mapped = true;
    }
    tbbt_nfsreq_set_cookie(q, s->cookie[0], s->cookie[1]);
}

/* The event log line of a dispatch, into j (before the request's bytes leave). */
static void event_dispatch(struct eng *e, const struct slot *s, struct txjob *j)
{
    j->ev[0] = '\0';
    if (!e->o->events)
        return;
    const struct tbbt_trace_rec *r = &s->rec;
    g_snprintf(j->ev, sizeof(j->ev),
               "D %" PRIu64 " %u %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
               "\n", s->seq, s->clone, tbbt_proc_name(r->prog, r->proc) ?: "?", r->call_ns,
               s->reply_key == NO_REPLY_KEY ? 0 : s->reply_key, s->send_ns - e->start_ns,
               TBBT_HAS(r, TBBT_F_ID) ? r->id : 0, TBBT_HAS(r, TBBT_F_OFFSET) ? r->offset : 0);
}

/*
 * Encodes and queues one request on its connection; fills j.  nonblock (the receive
 * thread): a send side held by the other thread is not waited for, the request goes
 * back to the send thread (j->requeue).
 */
static void tx_one(struct eng *e, struct txjob *j, struct tbbt_nfsreq *q, bool nonblock)
{
    struct slot *s = j->s;
    uint64_t missing = 0;
    uint8_t proc = s->rec.proc;
    if (s->fixup)
        s->rec.proc = lookup_proc(&s->rec);
    int rc = tbbt_nfsreq_build(q, &s->rec, e->o->handles[s->clone], &missing);
    s->rec.proc = proc;
    j->skip = -1;
    j->requeue = false;
    j->ev[0] = '\0';
    if (rc != 0) {
        if (rc == TBBT_NFSREQ_NOT_NFS) {
            j->skip = SKIP_NOT_NFS;
        } else if (rc == TBBT_NFSREQ_UNSENDABLE) {
            j->skip = SKIP_UNSENDABLE;
        } else if (rc == TBBT_NFSREQ_NO_HANDLE) {
            const struct tbbt_handle *h = tbbt_handles_peek(e->o->handles[s->clone], missing);
            j->skip = h && h->state == TBBT_HANDLE_FAILED ? SKIP_DEPENDENCY : SKIP_NO_HANDLE;
        } else {
            j->skip = SKIP_INCOMPLETE;
        }
        return;
    }
    if (!s->fixup)
        map_cookie(e, s, q);
    struct tbbt_rpcconn_call call = {
        .prog = q->prog, .vers = q->vers, .proc = q->proc, .xargs = q->xargs,
        .args = &q->args, .xres = q->xres, .res = &s->res, .res_size = q->res_size,
        .arg = s,
    };
    if (!e->o->fixed_creds && s->cred) {
        call.flags |= TBBT_RPCCONN_CALL_RAWCRED;
        call.cred = s->cred->body;
        call.cred_len = s->cred->len;
    } else if (!e->o->fixed_creds) {
        call.flags |= TBBT_RPCCONN_CALL_CRED;
        call.uid = s->rec.uid;
        call.gid = s->rec.gid;
    }
    bool same_xid = s->same_xid;
    if (same_xid) {
        call.flags |= TBBT_RPCCONN_CALL_XID;
        call.xid = s->xid;
    }
    struct conn *cn = &e->conns[s->conn];
    j->conn = s->conn;
    if (!nonblock)
        pthread_mutex_lock(&cn->send_mu);
    else if (pthread_mutex_trylock(&cn->send_mu) != 0) {
        j->requeue = true;
        return;
    }
    /* Once the call is queued, a thread that flushes this connection may get its reply,
     * complete the request and recycle its slot: the slot's fields for the reply are set
     * before, and the slot is not touched after (the XID is written by the call itself,
     * before the call is handed over). */
    s->xres = q->xres;
    s->same_xid = false;
    s->send_ns = tbbt_now_ns();
    event_dispatch(e, s, j);
    int crc = tbbt_rpcconn_call(cn->rpc, &call, &s->xid);
    pthread_mutex_unlock(&cn->send_mu);
    if (crc < 0) {
        s->same_xid = same_xid;     /* not queued: the slot is still ours */
        j->ev[0] = '\0';
        if (crc == -EINVAL)
            j->skip = SKIP_UNSENDABLE;   /* larger than a record (UDP: a datagram) may be */
        else
            j->requeue = true;   /* not sent: the connection is down */
    }
}

/*
 * Sends what is queued on connection i, waiting for room; false if it failed.  The
 * receive thread (nonblock) never waits: not for a send side the other thread holds
 * (it flushes what is queued when it is done), not for room in a full socket (the bytes
 * stay queued and the send thread is told to flush them), so that it always goes back
 * to reading replies, which a server that stopped reading calls may be waiting for.
 */
static bool flush_conn(struct eng *e, unsigned i, bool nonblock)
{
    struct conn *cn = &e->conns[i];
    struct tbbt_rpcconn *c = cn->rpc;
    bool ok = false;
    if (!nonblock)
        pthread_mutex_lock(&cn->send_mu);
    else if (pthread_mutex_trylock(&cn->send_mu) != 0)
        return true;
    for (;;) {
        int rc = tbbt_rpcconn_flush(c);
        if (rc == 0) {
            ok = true;
            break;
        }
        if (rc != -EAGAIN)
            break;   /* the receive side reports the calls as LOST */
        if (nonblock) {
            atomic_store(&cn->flush_owed, true);
            ok = true;
            break;
        }
        struct pollfd p = {.fd = tbbt_rpcconn_fd(c), .events = POLLOUT};
        if (p.fd < 0 || poll(&p, 1, 100) < 0 || e->stop)
            break;
    }
    pthread_mutex_unlock(&cn->send_mu);
    return ok;
}

/* Reconnects connections the receiver let go of (send thread, mu not held). */
static void reconnect_down(struct eng *e)
{
    for (unsigned i = 0; i < e->nconns; i++) {
        pthread_mutex_lock(&e->mu);
        struct conn *cn = &e->conns[i];
        uint64_t now = tbbt_now_ns();
        bool want = !cn->up && !e->stop && now >= cn->next_try;
        unlock_wake(e);
        if (!want)
            continue;
        pthread_mutex_lock(&cn->send_mu);
        int rc = tbbt_rpcconn_revive(cn->rpc, &e->retry, cn->down_since);
        pthread_mutex_unlock(&cn->send_mu);
        pthread_mutex_lock(&e->mu);
        now = tbbt_now_ns();
        if (rc == 0) {
            cn->up = true;
            e->c.reconnects++;
            atomic_store(&e->last_reply_ns, now);
            tbbt_log(TBBT_LOG_INFO, "reconnected to %s:%u", e->o->server, e->o->nfs_port);
            wake_rx(e);
        } else if (rc != -EAGAIN) {
            fail_run(e, "server dead", rc, "server %s:%u unreachable for %d s: %s",
                     e->o->server, e->o->nfs_port, e->o->dead_ms / 1000,
                     tbbt_rpcconn_error(cn->rpc));
        } else {
            cn->next_try = now + 200000000ull;
        }
        unlock_wake(e);
    }
}

static bool any_down(struct eng *e)
{
    for (unsigned i = 0; i < e->nconns; i++)
        if (!e->conns[i].up)
            return true;
    return false;
}


/* Waits (mu held) until something may be ready, or until due. */
static void sender_wait(struct eng *e, uint64_t due)
{
    struct timespec ts;
    uint64_t now = tbbt_now_ns();
    uint64_t until = MIN(due, now + 100000000ull);
    uint64_t spin = (uint64_t)e->o->spin_us * 1000u;
    if (until > now + spin + spin / 2) {
        e->sender_until = due;
        until -= spin;   /* wake early, spin the rest (dispatch precision) */
        ts.tv_sec = (time_t)(until / 1000000000ull);
        ts.tv_nsec = (long)(until % 1000000000ull);
        wake_locked(e);
        atomic_store_explicit(&e->sender_waiting, true, memory_order_relaxed);
        pthread_cond_timedwait(&e->cv_send, &e->mu, &ts);
        atomic_store_explicit(&e->sender_waiting, false, memory_order_relaxed);
        e->sender_until = UINT64_MAX;
        return;
    }
    unlock_wake(e);
    while (tbbt_now_ns() < until)
        ;
    pthread_mutex_lock(&e->mu);
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
    unsigned skipped;           /* dispatch_locked(): of those picked, skipped (done) */
};

static void txctx_init(struct txctx *t, struct eng *e, struct tbbt_report *rep, bool nonblock)
{
    t->cap = MAX(1u, e->o->batch);
    t->nonblock = nonblock;
    t->jobs = g_new(struct txjob, t->cap);
    t->q = g_new0(struct tbbt_nfsreq, 1);
    t->touched = g_new0(bool, e->nconns);
    t->rep = rep;
}

static void txctx_fini(struct txctx *t)
{
    g_free(t->touched);
    g_free(t->q);
    g_free(t->jobs);
}

/*
 * Under mu: picks up to t->cap requests that may go now (resends first, then the
 * ordering policy's next ones), sends them with mu released, and accounts for them.
 * *due gets the earliest time something not ready now becomes due.  Returns the number
 * picked (0: nothing may go now); *handed the number of those given back to the send
 * thread (a connection down or, for the receive thread, busy).  mu is held again on
 * return.
 */
static unsigned dispatch_locked(struct eng *e, struct txctx *t, uint64_t *due, unsigned *handed)
{
    *handed = 0;
    t->skipped = 0;
    uint64_t now = tbbt_now_ns();
    unsigned n = 0;
    *due = UINT64_MAX;
    while (n < t->cap) {
        /* A resend is in flight already (counted in inflight): it may always go, or a
         * run whose calls in flight all wait to be sent again would stall. */
        struct slot *s = pick_resend(e, now, due);
        if (!s) {
            uint64_t q = tbbt_sched_next(e->sched, now, due);
            s = q == TBBT_SCHED_NONE ? NULL : S(e, q);
        }
        if (!s)
            break;
        if (s->state == S_WAIT && !e->conns[conn_of(e, s)].up) {
            /* its connection is down: park it until reconnected */
            take_locked(e, s);
            resend_locked(e, s, false, 0);
            (*handed)++;
            continue;
        }
        take_locked(e, s);
        struct txjob *j = &t->jobs[n++];
        j->s = s;
        j->sched_ns = s->sched_ns;
        j->first = !s->sent;
        if (!s->sent) {     /* counted now: its reply may complete it before we relock */
            s->sent = true;
            e->c.ops_issued++;
            if (s->rec.flags & TBBT_RF_CORRECTIVE)
                e->c.corrective_ops++;
        }
    }
    if (n == 0) {
        if (tbbt_sched_starved(e->sched) && !e->eof)
            atomic_store_explicit(&e->want_admit, true, memory_order_relaxed);
        return 0;
    }
    unlock_wake(e);

    memset(t->touched, 0, e->nconns * sizeof(*t->touched));
    for (unsigned i = 0; i < n; i++) {
        tx_one(e, &t->jobs[i], t->q, t->nonblock);
        if (t->jobs[i].skip < 0 && !t->jobs[i].requeue)
            t->touched[t->jobs[i].conn] = true;
    }
    bool owed = false;
    for (unsigned i = 0; i < e->nconns; i++) {
        if (t->touched[i])
            flush_conn(e, i, t->nonblock);
        owed |= t->nonblock && atomic_load(&e->conns[i].flush_owed);
    }
    /* A sent request's slot may be completed and reused by now: only jobs[]. */
    uint64_t sent_ns = tbbt_now_ns();
    for (unsigned i = 0; i < n; i++) {
        const struct txjob *j = &t->jobs[i];
        if (j->skip >= 0 || j->requeue)
            continue;
        tbbt_report_issued(t->rep, sent_ns);
        if (e->o->timing == TBBT_TIMING_TIMESTAMP && j->first)
            tbbt_report_dispatch(t->rep, (int64_t)(sent_ns - j->sched_ns), sent_ns);
        if (j->ev[0])
            fputs(j->ev, e->o->events);
    }

    pthread_mutex_lock(&e->mu);
    if (owed)
        e->wake_send = true;
    for (unsigned i = 0; i < n; i++) {
        struct txjob *j = &t->jobs[i];
        struct slot *s = j->s;
        if (j->skip >= 0) {
            if (j->first) {     /* never went out: not issued after all */
                s->sent = false;
                e->c.ops_issued--;
                if (s->rec.flags & TBBT_RF_CORRECTIVE)
                    e->c.corrective_ops--;
            }
            skip_locked(e, s, (enum skip_why)j->skip);
            t->skipped++;
        } else if (j->requeue) {
            resend_locked(e, s, false, 0);
            (*handed)++;
        }
    }
    return n;
}

/* True if the receive thread left bytes for the send thread to flush. */
static bool flush_owed(struct eng *e)
{
    for (unsigned i = 0; i < e->nconns; i++)
        if (atomic_load_explicit(&e->conns[i].flush_owed, memory_order_relaxed))
            return true;
    return false;
}

static void *sender_main(void *arg)
{
    struct eng *e = arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (e->o->timing == TBBT_TIMING_TIMESTAMP)
        boost_thread("send", 2);
    struct txctx t;
    txctx_init(&t, e, e->rep_tx, false);
    pthread_mutex_lock(&e->mu);
    for (;;) {
        if (e->stop || e->stopping || (e->eof && e->oldest == e->total))
            break;
        if (any_down(e)) {
            unlock_wake(e);
            reconnect_down(e);
            pthread_mutex_lock(&e->mu);
        }
        if (flush_owed(e)) {
            unlock_wake(e);
            for (unsigned i = 0; i < e->nconns; i++)
                if (atomic_exchange(&e->conns[i].flush_owed, false))
                    flush_conn(e, i, false);
            pthread_mutex_lock(&e->mu);
        }
        uint64_t due;
        unsigned handed;
        if (dispatch_locked(e, &t, &due, &handed) == 0 && !flush_owed(e)) {
            if (tbbt_sched_inflight(e->sched) < e->o->max_outstanding &&
                e->admitted - e->oldest >= e->W - 1 &&
                due == UINT64_MAX)
                e->c.window_stalls++;
            sender_wait(e, due);
        }
    }
    unlock_wake(e);
    wake_rx(e);
    txctx_fini(&t);
    return NULL;
}

/* ------------------------------------------------------------------ receive thread */

/* What the receiver learned from one reply, before taking the mutex. */
struct rxdone {
    struct slot *s;
    int status;              /* enum tbbt_rpcconn_status */
    int32_t nfs;             /* NFS status when OK, else -1 */
    uint32_t fhlen;
    bool tail;
    bool racy;               /* its reply was not checked (struct slot racy) */
    uint64_t cookie, verf;
    uint64_t lat_ns, recv_ns;
    uint8_t fh[TBBT_HANDLE_MAX];  /* last: rx_extract() clears everything before it */
};

static void event_complete(struct eng *e, const struct rxdone *d, const char *what)
{
    if (!e->o->events)
        return;
    fprintf(e->o->events, "C %" PRIu64 " %" PRIu64 " %s %d\n", d->s->seq,
            d->recv_ns - e->start_ns, what, d->nfs);
}

/* A listing read in several pages, as far as its replies came (struct eng rx_listings). */
struct listing {
    uint64_t next_cookie;       /* the traced cookie the next page continues from */
    uint64_t traced, got;       /* entries so far */
};

static uint64_t listing_key(const struct slot *s)
{
    return (uint64_t)s->clone << 32 | (s->rec.id & 0xffffffffu);
}

/*
 * READDIR(PLUS) entry counts.  A page that holds a whole listing (cookie 0, EOF) is
 * checked on its own; pages of a longer listing are summed from its first page to its
 * last, which must end it as traced: where a server splits a listing into pages follows
 * its directory order (ext4: a hash with a per-file-system seed), so a page's count
 * differs when only the split does.
 */
static void rx_check_entries(struct eng *e, const struct slot *s, uint32_t n, bool eof)
{
    const struct tbbt_trace_rec *r = &s->rec;
    bool first = !TBBT_HAS(r, TBBT_F_COOKIE) || r->cookie == 0;
    bool last = TBBT_HAS(r, TBBT_F_EOF) && r->eof;
    uint64_t key = listing_key(s);
    if (first && last) {
        if (n != r->n_entries)
            tbbt_report_mismatch(e->rep_rx, r->prog, r->proc, "entries");
        if (!eof)
            tbbt_report_mismatch(e->rep_rx, r->prog, r->proc, "eof");
        return;
    }
    struct listing *l = g_hash_table_lookup(e->rx_listings, GSIZE_TO_POINTER(key));
    if (first) {
        if (!l) {
            l = g_new(struct listing, 1);
            g_hash_table_insert(e->rx_listings, GSIZE_TO_POINTER(key), l);
        }
        l->traced = l->got = 0;
    } else if (!l || l->next_cookie != r->cookie) {
        if (l)      /* the page before this one was not seen: the sum is unknown */
            g_hash_table_remove(e->rx_listings, GSIZE_TO_POINTER(key));
        return;
    }
    l->traced += r->n_entries;
    l->got += n;
    l->next_cookie = r->n_entries ? r->entries[r->n_entries - 1].cookie : r->cookie;
    if (last || eof) {
        if (l->traced != l->got || eof != last)
            tbbt_report_mismatch(e->rep_rx, r->prog, r->proc, "entries");
        g_hash_table_remove(e->rx_listings, GSIZE_TO_POINTER(key));
    }
}

/*
 * The reply of s, answered with the status the trace recorded, against the traced
 * reply: the object's post-operation type, mode, owner, group, size (regular files and
 * symbolic links) and link count (not directories: their size and link count follow
 * subdirectories and entries the trace never saw), and for READDIR(PLUS) the number of
 * entries and EOF (rx_check_entries()).  A difference means the image or the server is
 * not as traced, even when every status matched.  Receive thread (it owns rep_rx and
 * rx_listings).
 */
static void rx_check(struct eng *e, const struct slot *s, uint32_t vers, uint32_t proc,
                     const struct tbbt_nfsreq_listing *l)
{
    struct tbbt_report *rep = e->rep_rx;
    const struct tbbt_trace_rec *r = &s->rec;
    struct tbbt_fattr a;

    if (TBBT_HAS(r, TBBT_F_OBJ_ATTR) && tbbt_nfsreq_post_attr(vers, proc, &s->res, &a)) {
        static const struct {
            unsigned bit;
            const char *field;
        } checked[] = {
            {TBBT_ATTRCHECK_TYPE, "type"}, {TBBT_ATTRCHECK_MODE, "mode"},
            {TBBT_ATTRCHECK_UID, "uid"},   {TBBT_ATTRCHECK_GID, "gid"},
            {TBBT_ATTRCHECK_SIZE, "size"}, {TBBT_ATTRCHECK_NLINK, "nlink"},
        };
        unsigned d = tbbt_attrcheck_diff(&r->obj_attr, &a);
        for (size_t i = 0; d && i < G_N_ELEMENTS(checked); i++)
            if (d & checked[i].bit)
                tbbt_report_mismatch(rep, r->prog, r->proc, checked[i].field);
    }
    if (l && TBBT_HAS(r, TBBT_F_ENTRIES) && !(r->flags & TBBT_RF_REPLY_TRUNC))
        rx_check_entries(e, s, l->n, l->eof);
}

/* Outside mu: decodes what the player needs from a reply, then frees the results. */
static void rx_extract(struct eng *e, const struct tbbt_rpcconn_reply *rp, struct rxdone *d)
{
    struct slot *s = rp->arg;
    const struct tbbt_trace_rec *r = &s->rec;
    memset(d, 0, offsetof(struct rxdone, fh));   /* the handle bytes need no clearing */
    d->s = s;
    d->status = rp->status;
    d->recv_ns = rp->recv_ns ? rp->recv_ns : tbbt_now_ns();
    d->lat_ns = d->recv_ns - MIN(d->recv_ns, rp->queued_ns);
    d->nfs = -1;
    if (rp->status != TBBT_RPCCONN_OK)
        return;
    uint32_t vers = r->prog == TBBT_PROG_NFS2 ? 2 : 3;
    uint32_t proc = s->fixup ? lookup_proc(r) : r->proc;
    d->nfs = proc == 0 ? 0 : rp->res_status;
    struct tbbt_nfsreq_listing l;
    bool listing = false;
    if (d->nfs == 0 && s->xres) {
        d->fhlen = tbbt_nfsreq_new_fh(vers, proc, &s->res, d->fh);
        listing = tbbt_nfsreq_readdir(vers, proc, &s->res, &l);
        d->tail = listing && l.n > 0;
        d->cookie = l.last_cookie;
        d->verf = l.verf;
    }
    if (s->xres && s->checked && !s->fixup && d->nfs == s->expected) {
        if (!s->racy)
            rx_check(e, s, vers, proc, listing ? &l : NULL);
        else
            d->racy = true;
    }
    if (s->xres)
        xdr_free(s->xres, (char *)&s->res);
}

/*
 * Binds the handle a reply returned to the object the record names: always for the
 * object a create made (PENDING, see take_locked()), for a LOOKUP only if the ID had no
 * handle (KNOWN handles never change under the send thread otherwise).
 */
static void bind_made(struct eng *e, struct slot *s, const struct rxdone *d)
{
    uint64_t obj = rec_obj(&s->rec);
    struct tbbt_handles *h = e->o->handles[s->clone];
    if (obj && d->fhlen && d->nfs == 0) {
        const struct tbbt_handle *k = tbbt_handles_peek(h, obj);
        if (s->made_pending || !k || k->state != TBBT_HANDLE_KNOWN)
            tbbt_handles_set(h, obj, d->fh, d->fhlen);
        s->made_pending = false;
        return;
    }
    if (s->made_pending) {
        struct tbbt_handle *k = made_handle(e, s);
        if (k && k->state == TBBT_HANDLE_PENDING)
            k->state = s->made_was_known ? TBBT_HANDLE_KNOWN
                       : s->checked && s->expected == 0 ? TBBT_HANDLE_FAILED
                                                        : TBBT_HANDLE_NONE;
        s->made_pending = false;
    }
}

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
static bool server_silent(struct eng *e, const struct rxdone *d)
{
    if (d->status != TBBT_RPCCONN_TIMEDOUT)
        return false;
    uint64_t sent = d->recv_ns - MIN(d->recv_ns, d->lat_ns);
    return atomic_load_explicit(&e->last_reply_ns, memory_order_relaxed) < sent;
}

/* Under mu: applies one reply's outcome to the scheduler. */
static void rx_apply(struct eng *e, struct rxdone *d)
{
    struct slot *s = d->s;
    const struct tbbt_engine_opts *o = e->o;
    uint64_t now = d->recv_ns;
    if (d->status == TBBT_RPCCONN_LOST || d->status == TBBT_RPCCONN_TIMEDOUT) {
        /* As a real client: sent again with the same XID, on the same connection after a
         * timeout, on the new one after a reconnect, until the policy gives up.  The
         * server may still run the calls it read from a connection after that connection
         * is gone: a lost call waits LOST_SETTLE_NS before its resend, so that its first
         * send, if the server runs it, runs first (and the resend gets the duplicate
         * answer) rather than after the resend and the requests the resend's reply
         * released (a REMOVE of the old file run again after the CREATE of the new). */
        bool lost = d->status == TBBT_RPCCONN_LOST;
        /* A timeout against a silent server does not count against --retrans: the
         * call has its resends left when the server wakes up to a backlog. */
        bool silent = server_silent(e, d);
        e->c.timeouts += !lost;
        s->resent = true;
        s->retrans = (uint8_t)MIN(s->retrans + (!lost && !silent), 255);
        s->relost = (uint8_t)MIN(s->relost + lost, 255);
        if (silent ||
            tbbt_rpcconn_retry_step(&e->retry, s->retrans, s->relost) == TBBT_RPCCONN_RESEND) {
            e->c.retransmits++;
            resend_locked(e, s, true, lost ? now + LOST_SETTLE_NS : 0);
            return;
        }
        if (is_retried(s) && s->attempts < o->max_retries) {
            s->attempts++;
            s->retrans = s->relost = 0;
            e->c.retries++;
            resend_locked(e, s, false, now + (10000000ull << MIN(s->attempts, 8)));
            return;
        }
        e->c.ops_unknown++;
        made_failed(e, s);
        event_complete(e, d, "unknown");
        complete_locked(e, s);
        return;
    }
    if (d->status != TBBT_RPCCONN_OK) {
        e->c.ops_completed++;   /* answered, with an RPC error: a replay failure */
        tbbt_report_failure(e->rep_rx, s->rec.prog, s->rec.proc, s->expected,
                            TBBT_REPORT_NO_REPLY, now);
        atomic_fetch_add_explicit(&e->fail_count, 1, memory_order_relaxed);
        made_failed(e, s);
        event_complete(e, d, "rpcerror");
        complete_locked(e, s);
        return;
    }
    if (d->nfs == NFS3ERR_JUKEBOX) {
        /* "Try again later" (a grace period, an HSM recall): real clients wait it out;
         * so does the player, within --jukebox-wait, sending again with a new XID after
         * a back-off that doubles from 10 ms to 500 ms. */
        e->c.jukebox_replies++;
        if (s->jb_first_ns == 0) {
            s->jb_first_ns = MAX(now, 1);
            e->c.jukebox_ops++;
        }
        if (now - s->jb_first_ns < (uint64_t)o->jukebox_wait_ms * 1000000ull) {
            uint64_t delay = MIN(JUKEBOX_DELAY0_NS << MIN(s->jb_tries, 16u), JUKEBOX_DELAY_MAX_NS);
            s->jb_tries++;
            resend_locked(e, s, false, now + delay);
            return;
        }
        e->c.jukebox_gave_up++;
    }
    if (s->fixup) {
        e->c.ops_completed++;
        bind_made(e, s, d);
        event_complete(e, d, "fixup");
        complete_locked(e, s);
        return;
    }
    if (s->resent && s->expected == 0 && dup_answer(s, d->nfs)) {
        e->c.retransmit_dup_ok++;
        if (is_create(s)) {
            /* A resent create whose first send went through: find what it made. */
            s->fixup = true;
            resend_locked(e, s, false, 0);
            return;
        }
        d->nfs = 0;     /* done by its first send */
    }
    e->c.ops_completed++;
    e->c.replies_racy += d->racy;
    tbbt_report_op(e->rep_rx, s->rec.prog, s->rec.proc, d->lat_ns, now);
    if (!s->checked) {
        e->c.unchecked++;
    } else if (d->nfs != s->expected) {
        tbbt_report_failure(e->rep_rx, s->rec.prog, s->rec.proc, s->expected, d->nfs, now);
        atomic_fetch_add_explicit(&e->fail_count, 1, memory_order_relaxed);
    } else if (s->op == TBBT_NS_OP_READ && d->nfs == 0 && TBBT_HAS(&s->rec, TBBT_F_RES_COUNT)) {
        e->c.read_bytes += s->rec.res_count;
    }
    if (is_create(s) || s->op == TBBT_NS_OP_LOOKUP)
        bind_made(e, s, d);
    event_complete(e, d, "ok");
    complete_locked(e, s);
}

static void rx_cookies(struct eng *e, const struct rxdone *d, unsigned n)
{
    bool any = false;
    for (unsigned i = 0; i < n && !any; i++)
        any = d[i].tail;
    if (!any)
        return;
    g_mutex_lock(&e->cookie_mu);
    for (unsigned i = 0; i < n; i++) {
        const struct tbbt_trace_rec *r = &d[i].s->rec;
        if (!d[i].tail || r->n_entries == 0 || !TBBT_HAS(r, TBBT_F_ID))
            continue;
        struct cookie_key *k = g_new(struct cookie_key, 1);
        k->clone_dir = ((uint64_t)d[i].s->clone << 32) | r->id;
        k->cookie = r->entries[r->n_entries - 1].cookie;
        uint64_t *v = g_new(uint64_t, 2);
        v[0] = d[i].cookie;
        v[1] = d[i].verf;
        g_hash_table_replace(e->cookies, k, v);
    }
    g_mutex_unlock(&e->cookie_mu);
}

/*
 * Applies a batch of replies, then sends what they made ready from this thread: the
 * turnaround from a reply to the call that waited for it is one pass of this thread,
 * with no wake-up of the send thread on the way.  The send thread is woken only when
 * something became ready for a later time than it plans to wake up (timestamp timing).
 */
static void rx_batch(struct eng *e, const struct tbbt_rpcconn_reply *reps, int n,
                     struct rxdone *d, struct txctx *t)
{
    for (int i = 0; i < n; i++)
        rx_extract(e, &reps[i], &d[i]);
    rx_cookies(e, d, (unsigned)n);
    /* Only an answer of the server shows it alive: a batch of timeouts (from
     * tbbt_rpcconn_expire()) or of calls lost with their connection does not, or a
     * stopped server whose calls keep timing out would never be found dead. */
    for (int i = 0; i < n; i++) {
        if (d[i].status != TBBT_RPCCONN_LOST && d[i].status != TBBT_RPCCONN_TIMEDOUT) {
            atomic_store_explicit(&e->last_reply_ns, tbbt_now_ns(), memory_order_relaxed);
            break;
        }
    }
    pthread_mutex_lock(&e->mu);
    for (int i = 0; i < n; i++)
        rx_apply(e, &d[i]);
    uint64_t due = UINT64_MAX;
    unsigned handed = 0;
    /* Until nothing more may go, or a request had to be handed to the send thread:
     * this thread goes back to reading replies rather than waiting on a send side.  A
     * skipped request (not NFS, no handle) completes within the pass and may release
     * the requests after it, which that pass could not pick yet: another pass. */
    unsigned n_picked;
    if (!e->stop && !e->stopping)
        while ((n_picked = dispatch_locked(e, t, &due, &handed)) > 0 && handed == 0 &&
               (n_picked == t->cap || t->skipped > 0))
            ;
    if (due != UINT64_MAX && due < e->sender_until &&
        atomic_load_explicit(&e->sender_waiting, memory_order_relaxed))
        e->wake_send = true;
    unlock_wake(e);
}

/*
 * --recv-batch K: while the sender waits for free slots (nothing else can be sent
 * until replies come), the receiver wakes only once K replies' worth of bytes (K times
 * the smallest reply) is buffered on a connection, or fewer if fewer are outstanding,
 * so that it reads many replies per wake-up.  Otherwise every reply wakes it at once.
 * The price: a reply's latency is measured when its batch is read.
 */
static bool set_lowats(struct eng *e, const unsigned *idx, unsigned n, bool full)
{
    bool any = false;
    for (unsigned k = 0; k < n; k++) {
        struct conn *cn = &e->conns[idx[k]];
        int want = 1;
        if (full && e->o->recv_batch) {
            /* N replies of the mean size so far, but at most half of those outstanding;
             * when the next ones are smaller the mark may not be reached: the receiver
             * reads anyway when its poll times out (2 ms). */
            struct tbbt_rpcconn_stats st;
            tbbt_rpcconn_stats(cn->rpc, &st);
            uint64_t mean = st.replies ? st.bytes_recv / st.replies : MIN_REPLY_BYTES;
            unsigned out = tbbt_rpcconn_outstanding(cn->rpc);
            uint64_t n = MAX(1u, MIN(e->o->recv_batch, out / 2));
            want = (int)MIN(n * MAX(mean, MIN_REPLY_BYTES), 1u << 20);
        }
        if (want != cn->lowat && tbbt_rpcconn_set_recv_lowat(cn->rpc, want) == 0)
            cn->lowat = want;
        any |= cn->lowat > 1;
    }
    return any;
}

/* The receiver lets go of a connection that went down; the sender reconnects it. */
static void conn_down(struct eng *e, unsigned i)
{
    pthread_mutex_lock(&e->mu);
    struct conn *cn = &e->conns[i];
    if (cn->polled) {           /* before the sender may close the socket and reconnect */
        epoll_ctl(e->rx_ep, EPOLL_CTL_DEL, tbbt_rpcconn_fd(cn->rpc), NULL);
        cn->polled = false;
    }
    if (cn->up) {
        cn->up = false;
        cn->lowat = 1;          /* the next socket starts without one */
        cn->down_since = tbbt_now_ns();
        cn->next_try = 0;
        tbbt_log(TBBT_LOG_WARN, "connection %u to %s:%u lost: %s", i, e->o->server,
                 e->o->nfs_port, tbbt_rpcconn_error(cn->rpc));
        e->wake_send = true;
    }
    unlock_wake(e);
}

/* The receiver's epoll set gets the sockets that came up (the sender connected them). */
static void poll_new_conns(struct eng *e, const unsigned *idx, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        struct conn *cn = &e->conns[idx[k]];
        if (cn->polled)
            continue;
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = idx[k]};
        if (epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, tbbt_rpcconn_fd(cn->rpc), &ev) == 0)
            cn->polled = true;
    }
}

/* Reads every reply waiting on connection i and completes them. */
static void rx_conn(struct eng *e, unsigned i, struct tbbt_rpcconn_reply *reps,
                    struct rxdone *d, struct txctx *t)
{
    struct tbbt_rpcconn *c = e->conns[i].rpc;
    for (;;) {
        int got = tbbt_rpcconn_recv(c, reps, REPLY_BATCH);
        if (got > 0)
            rx_batch(e, reps, got, d, t);
        if (got < 0)
            conn_down(e, i);
        if (got < REPLY_BATCH)
            break;
    }
}

/*
 * opts.stop_fd became readable: nothing more is sent (the send and I/O threads end, the
 * receiver dispatches nothing), and the calls out get the stop grace to be answered.
 */
static void begin_stop(struct eng *e)
{
    const struct tbbt_engine_opts *o = e->o;
    unsigned grace_ms = o->stop_grace_ms ? o->stop_grace_ms
                        : (unsigned)MIN(1000, o->timeout_ms > 0 ? o->timeout_ms : 1000);
    pthread_mutex_lock(&e->mu);
    if (!e->stopping && !e->stop) {
        e->stopping = true;
        e->stop_deadline = tbbt_now_ns() + grace_ms * 1000000ull;
        tbbt_log(TBBT_LOG_INFO, "stopping: %u calls out get %u ms to be answered",
                 tbbt_sched_inflight(e->sched), grace_ms);
        pthread_cond_broadcast(&e->cv_send);
        pthread_cond_broadcast(&e->cv_read);
    }
    unlock_wake(e);
}

/* Calls queued or sent on the connections up and not answered yet (idx: those up). */
static unsigned calls_out(struct eng *e, const unsigned *idx, unsigned n)
{
    unsigned out = 0;
    for (unsigned k = 0; k < n; k++)
        out += tbbt_rpcconn_outstanding(e->conns[idx[k]].rpc);
    return out;
}

static void *receiver_main(void *arg)
{
    struct eng *e = arg;
    struct tbbt_rpcconn_reply *reps = g_new(struct tbbt_rpcconn_reply, REPLY_BATCH);
    struct rxdone *d = g_new(struct rxdone, REPLY_BATCH);
    struct epoll_event *ev = g_new(struct epoll_event, e->nconns + 1);
    unsigned *idx = g_new(unsigned, e->nconns + 1);
    uint64_t timeout_ns = (uint64_t)e->o->timeout_ms * 1000000ull;
    /* Calls past their timeout are looked for every timeout / 20, clamped to 10..100 ms:
     * a lost reply costs its timeout and at most a twentieth more (or 10 ms); with a
     * check every timeout / 4 it cost up to a quarter more, 12.5 s for the 10 s TCP
     * default, and conservative order waits that long for every lost reply. */
    uint64_t scan_ns = CLAMP(timeout_ns / 20, 10000000ull, 100000000ull);
    uint64_t next_expire = tbbt_now_ns() + scan_ns;
    if (e->o->timing == TBBT_TIMING_TIMESTAMP)
        boost_thread("receive", 1);
    struct txctx t;
    txctx_init(&t, e, e->rep_rx, true);
    for (;;) {
        unsigned n = 0;
        pthread_mutex_lock(&e->mu);
        bool done = e->stop || (e->eof && e->oldest == e->total);
        unsigned inflight = tbbt_sched_inflight(e->sched);
        bool full = inflight >= e->o->max_outstanding;
        for (unsigned i = 0; i < e->nconns; i++)
            if (e->conns[i].up)
                idx[n++] = i;
        if (!done && e->stopping)
            done = tbbt_now_ns() >= e->stop_deadline || calls_out(e, idx, n) == 0;
        unlock_wake(e);
        if (done)
            break;
        poll_new_conns(e, idx, n);
        bool batched = set_lowats(e, idx, n, full);
        int rc = 0;
        if (inflight > 0 && e->o->rx_spin_us && !batched) {
            uint64_t until = tbbt_now_ns() + e->o->rx_spin_us * 1000ull;
            while ((rc = epoll_wait(e->rx_ep, ev, (int)e->nconns + 1, 0)) == 0 &&
                   tbbt_now_ns() < until)
                ;
        }
        if (rc == 0)
            rc = epoll_wait(e->rx_ep, ev, (int)e->nconns + 1, batched ? 2 : 50);
        if (rc < 0 && errno != EINTR) {
            int err = -errno;
            pthread_mutex_lock(&e->mu);
            fail_run(e, "error", err, "receive thread: epoll_wait: %s", g_strerror(-err));
            unlock_wake(e);
            break;
        }
        for (int k = 0; k < rc; k++) {
            if (ev[k].data.u32 == STOP_KEY) {
                begin_stop(e);
            } else if (ev[k].data.u32 == UINT32_MAX) {
                uint64_t v;
                ssize_t r = read(e->rx_wake, &v, sizeof(v));
                (void)r;
            } else {
                rx_conn(e, ev[k].data.u32, reps, d, &t);
            }
        }
        /* With a low-water mark, replies below it are read when the wait times out. */
        for (unsigned k = 0; rc == 0 && k < n; k++)
            if (e->conns[idx[k]].lowat > 1)
                rx_conn(e, idx[k], reps, d, &t);
        uint64_t now = tbbt_now_ns();
        if (now >= next_expire) {
            next_expire = now + scan_ns;
            for (unsigned k = 0; k < n; k++) {
                int got = tbbt_rpcconn_expire(e->conns[idx[k]].rpc, now - MIN(now, timeout_ns),
                                              reps, REPLY_BATCH);
                if (got > 0)
                    rx_batch(e, reps, got, d, &t);
            }
            uint64_t last = atomic_load_explicit(&e->last_reply_ns, memory_order_relaxed);
            if (inflight > 0 && now > last + (uint64_t)e->o->dead_ms * 1000000ull) {
                pthread_mutex_lock(&e->mu);
                fail_run(e, "server dead", -ETIMEDOUT, "server %s:%u did not answer for %d s",
                         e->o->server, e->o->nfs_port, e->o->dead_ms / 1000);
                unlock_wake(e);
            }
        }
    }
    /* A stopped run ends here: the other threads and the progress loop see stop. */
    pthread_mutex_lock(&e->mu);
    if (e->stopping) {
        e->stop = true;
        pthread_cond_broadcast(&e->cv_send);
        pthread_cond_broadcast(&e->cv_read);
    }
    unlock_wake(e);
    txctx_fini(&t);
    g_free(idx);
    g_free(ev);
    g_free(d);
    g_free(reps);
    return NULL;
}

/* ------------------------------------------------------------------ the run */

void tbbt_engine_defaults(struct tbbt_engine_opts *o)
{
    *o = (struct tbbt_engine_opts){
        .server = "127.0.0.1", .nfs_port = 2049, .clones = 1, .speed = 1.0, .window = 4096,
        .max_outstanding = 64, .connections = 1, .batch = 32, .max_retries = 5,
        .max_retrans = 3, .timeout_ms = 0, .dead_ms = 30000, .jukebox_wait_ms = 300000,
        .spin_us = 20, .stop_fd = -1,
    };
}

static int open_conns(struct eng *e, char *err, size_t errlen)
{
    const struct tbbt_engine_opts *o = e->o;
    e->conns = g_new0(struct conn, e->nconns);
    for (unsigned i = 0; i < e->nconns; i++) {
        struct tbbt_rpcconn_opts co = {
            .transport = o->udp ? TBBT_RPCCONN_UDP : TBBT_RPCCONN_TCP,
            .flavor = TBBT_RPCCONN_AUTH_SYS, .uid = o->uid, .gid = o->gid,
            .machine = TBBT_PLAYER_MACHINE, .ngids = 1, .gids = &o->gid,
            .reserved_port = o->reserved_ports,
        };
        e->conns[i].rpc = tbbt_rpcconn_new(&co);
        pthread_mutex_init(&e->conns[i].send_mu, NULL);
        int rc = tbbt_rpcconn_connect(e->conns[i].rpc, o->server, o->nfs_port);
        if (rc < 0) {
            g_snprintf(err, errlen, "cannot connect to %s:%u: %s", o->server, o->nfs_port,
                       tbbt_rpcconn_error(e->conns[i].rpc));
            return rc;
        }
        e->conns[i].up = true;
        e->conns[i].lowat = 1;
    }
    return 0;
}

static void eng_free(struct eng *e)
{
    if (e->rx_listings)
        g_hash_table_destroy(e->rx_listings);
    for (unsigned i = 0; i < e->nconns && e->conns; i++) {
        tbbt_rpcconn_free(e->conns[i].rpc);
        if (e->conns[i].rpc)
            pthread_mutex_destroy(&e->conns[i].send_mu);
    }
    g_free(e->conns);
    for (unsigned i = 0; i < e->W; i++)
        tbbt_trace_rec_fini(&e->slots[i].rec);
    g_free(e->slots);
    g_queue_clear(&e->resend);
    tbbt_sched_free(e->sched);
    g_hash_table_destroy(e->cookies);
    g_ptr_array_free(e->creds, TRUE);
    g_mutex_clear(&e->cookie_mu);
    tbbt_report_free(e->rep_tx);
    if (e->rx_wake >= 0)
        close(e->rx_wake);
    if (e->rx_ep >= 0)
        close(e->rx_ep);
    pthread_cond_destroy(&e->cv_send);
    pthread_cond_destroy(&e->cv_read);
    pthread_mutex_destroy(&e->mu);
}

/*
 * A run that stopped early leaves requests in the window: one that went out (counted
 * in ops_issued) and got no answer has an unknown outcome; one never sent is skipped
 * (skipped_stopped).  So trace_ops = issued + skipped and issued = completed + unknown
 * hold for every run.  After the threads are joined.
 */
static void account_unfinished(struct eng *e)
{
    for (uint64_t q = e->oldest; q < e->admitted; q++) {
        const struct slot *s = S(e, q);
        if (s->seq != q || s->state == S_DONE || s->state == S_FREE)
            continue;
        if (s->sent) {
            e->c.ops_unknown++;
        } else {
            e->c.ops_skipped++;
            e->c.skipped_stopped++;
        }
    }
}

static void progress_line(struct eng *e, bool final)
{
    double t = (double)(tbbt_now_ns() - e->start_ns) / 1e9;
    uint64_t done = atomic_load_explicit(&e->done_count, memory_order_relaxed);
    uint64_t fails = atomic_load_explicit(&e->fail_count, memory_order_relaxed);
    fprintf(stderr, "\rtbbt-play: %6.1f s  %10" PRIu64 " ops done  %9.0f ops/s  %" PRIu64
            " failures%s", t, done, t > 0 ? (double)done / t : 0.0, fails, final ? "\n" : "");
    fflush(stderr);
}

int tbbt_engine_run(const struct tbbt_engine_opts *o, struct tbbt_report **rep,
                    struct tbbt_report_counts *counts, char *err, size_t errlen)
{
    struct eng eng = {0}, *e = &eng;
    e->o = o;
    e->retry = (struct tbbt_rpcconn_retry){.timeout_ms = MAX(o->timeout_ms, 1),
                                           .retrans = o->max_retrans,
                                           .relost = o->max_retries,
                                           .dead_ms = MAX(o->dead_ms, 1)};
    e->n_clones = MAX(1u, o->clones);
    e->W = MAX(o->window, 2 * e->n_clones);
    e->W = (e->W + e->n_clones - 1) / e->n_clones * e->n_clones;
    e->nconns = MAX(1u, MIN(o->connections, TBBT_ENGINE_MAX_CONNS));
    e->slots = g_new0(struct slot, e->W);
    for (unsigned i = 0; i < e->W; i++)
        tbbt_trace_rec_init(&e->slots[i].rec);
    /* Adaptive: a thread that finds mu taken spins a little before it sleeps; the
     * sections under mu are short, and each sleep is a futex call and two switches. */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&e->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv_send, &ca);
    pthread_cond_init(&e->cv_read, &ca);
    pthread_condattr_destroy(&ca);
    struct tbbt_sched_opts so = {
        .order = o->order == TBBT_ORDER_FSDEP ? TBBT_SCHED_FSDEP : TBBT_SCHED_CONSERVATIVE,
        .window = e->W, .clones = e->n_clones,
        .timed = o->timing == TBBT_TIMING_TIMESTAMP,
        .causal_slack_ns = o->order == TBBT_ORDER_CONSERVATIVE ? o->causal_slack_ns : 0,
        .max_outstanding = o->max_outstanding, .client_outstanding = o->client_outstanding,
        .hold = needs_pending, .hold_arg = e, .conflict = add_dep, .conflict_arg = e};
    e->sched = tbbt_sched_new(&so);
    g_queue_init(&e->resend);
    e->rx_listings = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g_mutex_init(&e->cookie_mu);
    e->cookies = g_hash_table_new_full(cookie_hash, cookie_equal, g_free, g_free);
    e->creds = g_ptr_array_new_with_free_func(g_free);
    e->cred_stamp = (uint32_t)time(NULL);
    e->total = UINT64_MAX;
    e->sender_until = UINT64_MAX;
    e->rx_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    e->rx_ep = epoll_create1(EPOLL_CLOEXEC);
    e->c.order = o->order == TBBT_ORDER_FSDEP ? "fsdep" : "conservative";
    e->c.timing = o->timing == TBBT_TIMING_TIMESTAMP ? "timestamp" : "full";
    e->c.transport = o->udp ? "udp" : "tcp";
    e->c.speed = o->timing == TBBT_TIMING_TIMESTAMP ? o->speed : 1.0;
    e->c.clones = e->n_clones;
    e->c.connections = e->nconns;
    e->c.window = e->W;
    e->c.max_outstanding = o->max_outstanding;
    e->c.causal_slack_us = o->order == TBBT_ORDER_FSDEP ? NAN : (double)o->causal_slack_ns / 1e3;

    struct epoll_event wake = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    struct epoll_event stop = {.events = EPOLLIN | EPOLLONESHOT, .data.u32 = STOP_KEY};
    int rc = 0;
    if (e->rx_wake < 0 || e->rx_ep < 0 ||
        epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, e->rx_wake, &wake) < 0 ||
        (o->stop_fd >= 0 && epoll_ctl(e->rx_ep, EPOLL_CTL_ADD, o->stop_fd, &stop) < 0)) {
        rc = -errno;
        g_snprintf(err, errlen, "cannot set up the receive thread's wake-ups: %s",
                   g_strerror(errno));
    }
    if (rc == 0)
        rc = open_conns(e, err, errlen);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    e->start_ns = tbbt_now_ns();
    e->rep_tx = tbbt_report_new(e->start_ns);
    e->rep_rx = tbbt_report_new(e->start_ns);
    if (rc == 0) {
        atomic_store(&e->last_reply_ns, tbbt_now_ns());
        pthread_t tr, ts, tx;
        pthread_create(&tr, NULL, reader_main, e);
        pthread_create(&ts, NULL, sender_main, e);
        pthread_create(&tx, NULL, receiver_main, e);
        if (o->progress) {
            for (;;) {
                pthread_mutex_lock(&e->mu);
                bool done = e->stop || (e->eof && e->oldest == e->total);
                unlock_wake(e);
                if (done)
                    break;
                progress_line(e, false);
                g_usleep(500000);
            }
            progress_line(e, true);
        }
        pthread_join(tr, NULL);
        pthread_join(ts, NULL);
        pthread_join(tx, NULL);
        if (e->err) {
            rc = e->err;
            g_strlcpy(err, e->errbuf, errlen);
        } else if (e->stopping && !(e->eof && e->oldest == e->total)) {
            rc = -EINTR;
            e->c.stop_reason = "stopped";
            g_snprintf(err, errlen, "replay stopped on request");
        }
    }
    uint64_t end_ns = tbbt_now_ns();
    getrusage(RUSAGE_SELF, &ru1);
    e->c.cpu_user_seconds = tv_diff(&ru1.ru_utime, &ru0.ru_utime);
    e->c.cpu_system_seconds = tv_diff(&ru1.ru_stime, &ru0.ru_stime);
    e->c.trace_ops = e->admitted;   /* the records read into the window, per clone */
    e->c.peak_outstanding = tbbt_sched_peak(e->sched);
    e->c.client_stalls = tbbt_sched_client_stalls(e->sched);
    e->c.skipped_filtered = e->filtered;
    e->c.wall_seconds = (double)(end_ns - e->start_ns) / 1e9;
    e->c.trace_seconds = (double)(e->trace_t1 - MIN(e->trace_t1, e->trace_t0)) / 1e9;
    e->c.finished = rc == 0;
    if (rc != 0 && !e->c.stop_reason)
        e->c.stop_reason = "error";
    account_unfinished(e);
    *counts = e->c;
    tbbt_report_merge(e->rep_rx, e->rep_tx);
    *rep = e->rep_rx;
    eng_free(e);
    return rc;
}
