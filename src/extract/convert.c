/* SPDX-License-Identifier: MIT */
/*
 * The conversion core of tbbt-convert (see extract.h and conv-int.h): picks
 * the input reader by content, pairs what it reads (pair.c), interns
 * endpoints, writes records in call order, counts, and writes the summary.
 * TBBT paper 3.1.
 *
 * The core has two halves.  The pairing half (the pairer and the counts of
 * calls and replies) runs on the reader's thread and numbers the records in
 * call order.  The record half keeps the records by number (a ring: records
 * open at the tail and leave at the head), fills them (the reader's fill()),
 * interns endpoints and writes them.  Between the two flow three kinds of
 * event: a call opens record n, a reply completes record n, k records leave.
 * Without a pipeline the events are applied at once, on the reader's thread.
 * Pipelined, the reader's thread appends them to a batch (copying the
 * message bytes fill() needs, see keep()) and a writer thread applies them,
 * in the same order: the two ways write the same trace.  NBATCH batch
 * buffers circulate between two GAsyncQueues (full ones to the writer, empty
 * ones back), so memory stays bounded and nothing is allocated per message;
 * the reader waits when the writer is NBATCH batches behind.
 *
 * AUTH_SYS credentials are interned by the pairing half, as a call opens its
 * record (so references follow call order, as records do), and travel in the
 * call's event as a reference.  A flow's calls nearly always carry the
 * credential of its previous call: each flow remembers that one's bytes and
 * reference, and only a credential that differs is decoded and looked up in
 * the table.  The record half needs no definition: it counts the references
 * it has seen (a reference one past the highest so far is a new credential)
 * for the spill, and pass B takes the definitions from the pairing half's
 * table after the join.
 *
 * This file holds the two halves and their hand-over; the summary is
 * convert-summary.c's, the run (the passes, the outputs, --check)
 * convert-run.c's; convert-int.h is what they share.
 */
#include "extract/convert-int.h"

#include "extract/hier.h"
#include "extract/rpc.h"
#include "trace/spill.h"

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

/*
 * ThreadSanitizer cannot see glib's futex-based locking inside GAsyncQueue:
 * a batch's hand-over is declared to it explicitly (no-ops otherwise).
 */
#if defined(__SANITIZE_THREAD__)
#define TBBT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TBBT_TSAN 1
#endif
#endif
#ifdef TBBT_TSAN
#include <sanitizer/tsan_interface.h>
#define HANDOVER_RELEASE(p) __tsan_release(p)
#define HANDOVER_ACQUIRE(p) __tsan_acquire(p)
#else
#define HANDOVER_RELEASE(p) ((void)(p))
#define HANDOVER_ACQUIRE(p) ((void)(p))
#endif

#define NBATCH 8                   /* batches in flight between the threads */
#define BATCH_BYTES (128u << 10)   /* default batch size */
#define RECS_MIN 64

/* ---- events between the halves -------------------------------------------------- */

enum { EV_CALL = 1, EV_REPLY, EV_END };
#define EVF_TCP 1u
#define EVF_TRUNC 2u
#define EVF_BODY 4u                /* the record is filled from the body */
#define EVF_KEY 8u                 /* call: its key follows (see struct ev_call) */

struct ev {
    uint8_t kind;
    uint8_t flags;
    uint8_t prog;                  /* call */
    uint8_t proc_stat;             /* call: procedure; reply: rpc_stat */
    uint32_t emits;                /* records that leave before this event applies */
    uint32_t len;                  /* body length fill() sees */
    uint32_t kept;                 /* of which follow the event in a batch; the rest is 0 */
    uint64_t ts_ns;
    union {
        uint64_t seq;              /* reply: the record it completes */
        uint64_t cred;             /* call: its credential reference + 1; 0: none */
    };
};

/*
 * A call.  The writer knows its endpoint by its flow number and transport;
 * the key (addresses and ports) follows it (EVF_KEY) only in the first call
 * of each flow and transport, for the writer to make the endpoint from.
 */
struct ev_call {
    struct ev h;
    uint32_t xid;
    uint32_t flow;                 /* the pairer's number of the key's addresses and ports */
    uint32_t uid, gid;
};
/* what follows an event in a batch stays 8-byte aligned */
G_STATIC_ASSERT(sizeof(struct ev) % 8 == 0 && sizeof(struct ev_call) % 8 == 0 &&
                sizeof(struct tbbt__pair_key) % 8 == 0);

/*
 * A batch of events, owned by one thread at a time.  Padded so that the
 * fields of two batches never share a cache line, however the array lies.
 */
struct batch {
    uint8_t *buf;
    size_t len, cap;
    char pad[128 - sizeof(uint8_t *) - 2 * sizeof(size_t)];
};

/* The hand-over of a pipelined conversion. */
struct pipe {
    GAsyncQueue *full;             /* batches to the writer thread */
    GAsyncQueue *empty;            /* and back */
    GThread *thread;
    size_t batch_bytes;
    char pad0[64];                 /* below: written by the reader's thread */
    struct batch *cur;             /* being filled */
    uint32_t emits;                /* records that left, not yet told to the writer */
    char pad1[64];
    struct batch batches[NBATCH];  /* each owned by one thread at a time */
};

void **tbbt__conv_source_state(struct tbbt__conv *c)
{
    return &c->src_state;
}

const struct tbbt_convert_opts *tbbt__conv_opts(struct tbbt__conv *c)
{
    return c->o;
}

struct tbbt_fhtab *tbbt__conv_fhtab(struct tbbt__conv *c)
{
    return c->fh;
}

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/*
 * The index of (flow, tcp) in a per-flow-and-transport array (a cleared GArray),
 * grown to hold it: read a->data after this call, as it may move.
 */
static guint flow_index(GArray *a, uint32_t flow, bool tcp)
{
    guint i = (flow - 1) * 2 + tcp;

    if (i >= a->len)
        g_array_set_size(a, i + 1);
    return i;
}

/* ---- the record half: records by number ------------------------------------------ */

static void recs_init(struct tbbt__conv_recs *r)
{
    r->slot = g_new0(struct tbbt_trace_rec *, RECS_MIN);
    r->mask = RECS_MIN - 1;
}

static void recs_fini(struct tbbt__conv_recs *r)
{
    for (uint64_t i = 0; r->slot && i <= r->mask; i++) {
        if (r->slot[i]) {
            tbbt_trace_rec_fini(r->slot[i]);
            g_free(r->slot[i]);
        }
    }
    for (uint64_t i = 0; i < r->n_spare; i++) {
        tbbt_trace_rec_fini(r->spare[i]);
        g_free(r->spare[i]);
    }
    g_free(r->slot);
    g_free(r->spare);
    r->slot = NULL;
    r->spare = NULL;
    r->n_spare = 0;
}

/* Doubles a full ring (every slot holds a live record). */
static void recs_grow(struct tbbt__conv_recs *r)
{
    uint64_t cap = (r->mask + 1) * 2;
    struct tbbt_trace_rec **n = g_new0(struct tbbt_trace_rec *, cap);

    for (uint64_t s = r->head; s != r->head + r->n; s++)
        n[s & (cap - 1)] = r->slot[s & r->mask];
    g_free(r->slot);
    r->slot = n;
    r->mask = cap - 1;
}

/* Opens the next record (cleared), reusing the record that left last if there is one. */
static struct tbbt_trace_rec *recs_push(struct tbbt__conv_recs *r)
{
    struct tbbt_trace_rec *rec;

    if (r->n > r->mask)
        recs_grow(r);
    if (r->n_spare > 0) {
        rec = r->spare[--r->n_spare];
        tbbt_trace_rec_clear(rec);
    } else {
        rec = g_new(struct tbbt_trace_rec, 1);
        tbbt_trace_rec_init(rec);
    }
    r->slot[(r->head + r->n++) & r->mask] = rec;
    return rec;
}

static struct tbbt_trace_rec *recs_at(const struct tbbt__conv_recs *r, uint64_t seq)
{
    g_assert(seq - r->head < r->n);
    return r->slot[seq & r->mask];
}

/* The oldest record leaves (it stays valid until the next push). */
static struct tbbt_trace_rec *recs_pop(struct tbbt__conv_recs *r)
{
    struct tbbt_trace_rec **slot, *rec;

    g_assert(r->n > 0);
    slot = &r->slot[r->head & r->mask];
    rec = *slot;
    *slot = NULL;
    r->head++;
    r->n--;
    if (r->n_spare == r->spare_cap) {
        r->spare_cap = r->spare_cap ? 2 * r->spare_cap : RECS_MIN;
        r->spare = g_renew(struct tbbt_trace_rec *, r->spare, r->spare_cap);
    }
    r->spare[r->n_spare++] = rec;
    return rec;
}

/* ---- the record half: filling and writing -------------------------------------- */

/*
 * Endpoint of a call's flow number and transport (a flow and a transport are
 * one endpoint); key (its addresses and ports) may be NULL once the endpoint
 * is known.
 */
static uint32_t endpoint_ref(struct tbbt__conv *c, const struct tbbt__pair_key *key,
                             uint32_t flow, bool tcp)
{
    guint i = flow_index(c->ep_by_flow, flow, tcp);   /* before data is read: it may move */
    guint32 *known = &g_array_index(c->ep_by_flow, guint32, i);
    struct tbbt_endpoint ep;
    uint32_t ref;
    int af;

    if (*known)
        return *known - 1;
    g_assert(key);
    af = key->af == 6 ? AF_INET6 : AF_INET;
    memset(&ep, 0, sizeof(ep));
    inet_ntop(af, key->caddr, ep.client, sizeof(ep.client));
    inet_ntop(af, key->saddr, ep.server, sizeof(ep.server));
    ep.client_port = key->cport;
    ep.server_port = key->sport;
    ep.tcp = tcp;
    ref = tbbt_eptab_intern(c->ep, &ep);
    *known = ref + 1;
    return ref;
}

/* n records leave, in call order, for the writer. */
static void back_emit(struct tbbt__conv *c, uint32_t n)
{
    while (n-- > 0) {
        struct tbbt_trace_rec *rec = recs_pop(&c->recs);
        struct tbbt_spill_defs defs;
        int rc;

        if (c->write_err)
            continue;
        tbbt_ns_ident_scan(c->ns, rec);
        defs.nfh = tbbt_fhtab_count(c->fh);
        defs.nep = tbbt_eptab_count(c->ep);
        defs.ncred = c->ncred;
        rc = tbbt_spill_put(c->w, rec, &defs);
        if (rc < 0)
            c->write_err = rc;
        else
            c->records++;
    }
}

/* A call (key: its addresses, or NULL if its endpoint is known) opens the next record;
 * body (with EVF_BODY) fills it. */
static struct tbbt_trace_rec *back_call(struct tbbt__conv *c, const struct ev_call *e,
                                        const struct tbbt__pair_key *key, const uint8_t *body)
{
    struct tbbt_trace_rec *rec = recs_push(&c->recs);
    bool tcp = (e->h.flags & EVF_TCP) != 0;

    rec->call_ns = e->h.ts_ns;
    rec->xid = e->xid;
    rec->prog = e->h.prog;
    rec->proc = e->h.proc_stat;
    rec->flags = tcp ? TBBT_RF_TCP : 0;
    rec->endpoint = endpoint_ref(c, key, e->flow, tcp);
    rec->uid = e->uid;
    rec->gid = e->gid;
    if (e->h.cred) {
        TBBT_SET(rec, TBBT_F_CRED);
        rec->cred = (uint32_t)(e->h.cred - 1);
        if (e->h.cred > c->ncred)
            c->ncred = (uint32_t)e->h.cred;    /* references come in order: a new one */
    }
    if (e->h.flags & EVF_BODY)
        c->src->fill(c, rec, false, body, e->h.len, (e->h.flags & EVF_TRUNC) != 0);
    return rec;
}

/* A reply completes record e->seq; body (with EVF_BODY) adds its results. */
static struct tbbt_trace_rec *back_reply(struct tbbt__conv *c, const struct ev *e,
                                         const uint8_t *body)
{
    struct tbbt_trace_rec *rec = recs_at(&c->recs, e->seq);

    rec->reply_ns = e->ts_ns;
    rec->flags |= TBBT_RF_REPLY;
    rec->rpc_stat = e->proc_stat;
    if (e->flags & EVF_BODY)
        c->src->fill(c, rec, true, body, e->len, (e->flags & EVF_TRUNC) != 0);
    return rec;
}

/* ---- the record half: batches on the writer thread ------------------------------ */

/* The body fill() sees: the kept bytes, then zeros up to its length. */
static const uint8_t *unpack_body(struct tbbt__conv *c, const struct ev *e, const uint8_t *p)
{
    if (e->kept == e->len)
        return p;
    if (c->zeros_len < e->len) {
        g_free(c->zeros);
        c->zeros = g_malloc0(e->len);
        c->zeros_len = e->len;
    }
    memcpy(c->zeros, p, e->kept);
    return c->zeros;
}

/* Applies a batch's events; true at the end of the input. */
static bool apply_batch(struct tbbt__conv *c, const struct batch *b)
{
    const uint8_t *buf = b->buf;
    size_t off = 0, len = b->len;

    while (off < len) {
        const struct ev *e = (const struct ev *)(const void *)(buf + off);
        size_t hdr = e->kind != EV_CALL ? sizeof(struct ev)
                     : sizeof(struct ev_call) +
                       (e->flags & EVF_KEY ? sizeof(struct tbbt__pair_key) : 0);
        const uint8_t *body = unpack_body(c, e, buf + off + hdr);

        back_emit(c, e->emits);
        if (e->kind == EV_END)
            return true;
        if (e->kind == EV_CALL)
            back_call(c, (const struct ev_call *)(const void *)e,
                      e->flags & EVF_KEY ? (const struct tbbt__pair_key *)(const void *)
                                           (buf + off + sizeof(struct ev_call)) : NULL,
                      body);
        else
            back_reply(c, e, body);
        if (e->kept != e->len)
            memset(c->zeros, 0, e->kept);   /* zeros again for the next body */
        off += hdr + pad8(e->kept);
    }
    return false;
}

/* Hands a batch to the other thread through q. */
static void batch_send(GAsyncQueue *q, struct batch *b)
{
    HANDOVER_RELEASE(b);
    g_async_queue_push(q, b);
}

/* Takes a batch from q, waiting for one. */
static struct batch *batch_take(GAsyncQueue *q)
{
    struct batch *b = g_async_queue_pop(q);

    HANDOVER_ACQUIRE(b);
    return b;
}

static gpointer writer_main(gpointer arg)
{
    struct tbbt__conv *c = arg;
    bool end = false;

    while (!end) {
        struct batch *b = batch_take(c->pipe->full);
        end = apply_batch(c, b);
        if (end)
            c->writer_cpu_ns = tbbt_thread_cpu_ns();   /* read after the join */
        batch_send(c->pipe->empty, b);
    }
    return NULL;
}

/* ---- the hand-over, on the reader's thread ------------------------------------- */

void tbbt__conv_pipe_start(struct tbbt__conv *c)
{
    struct pipe *pp = g_new0(struct pipe, 1);

    pp->batch_bytes = c->o->batch_bytes ? c->o->batch_bytes : BATCH_BYTES;
    pp->full = g_async_queue_new();
    pp->empty = g_async_queue_new();
    for (int i = 0; i < NBATCH; i++) {
        pp->batches[i].buf = g_malloc(pp->batch_bytes);
        pp->batches[i].cap = pp->batch_bytes;
        if (i > 0)
            batch_send(pp->empty, &pp->batches[i]);
    }
    pp->cur = &pp->batches[0];
    c->pipe = pp;
    pp->thread = g_thread_new("tbbt-writer", writer_main, c);
}

/* Hands the current batch over and takes an empty one (waiting for the writer). */
static void pipe_flush(struct pipe *pp)
{
    batch_send(pp->full, pp->cur);
    pp->cur = batch_take(pp->empty);
    pp->cur->len = 0;
}

/* Room for n bytes in the current batch; a batch grows for one larger event only. */
static uint8_t *pipe_reserve(struct pipe *pp, size_t n)
{
    struct batch *b = pp->cur;
    uint8_t *p;

    if (b->len + n > b->cap && b->len > 0) {
        pipe_flush(pp);
        b = pp->cur;
    }
    /* Here the batch is empty or has room: an empty one takes its usual size back
     * after an oversized event, or grows for one. */
    if (b->len == 0 && (n > b->cap || (b->cap > pp->batch_bytes && n <= pp->batch_bytes))) {
        b->cap = n > pp->batch_bytes ? n : pp->batch_bytes;
        b->buf = g_realloc(b->buf, b->cap);
    }
    p = b->buf + b->len;
    b->len += n;
    return p;
}

/* Appends an event (hdr bytes of it), xlen bytes of x (a multiple of 8) and its kept body
 * bytes. */
static void pipe_event(struct pipe *pp, const struct ev *e, size_t hdr, const void *x,
                       size_t xlen, const uint8_t *body)
{
    uint8_t *p = pipe_reserve(pp, hdr + xlen + pad8(e->kept));
    struct ev *dst = (struct ev *)(void *)p;

    memcpy(p, e, hdr);
    dst->emits = pp->emits;
    pp->emits = 0;
    if (xlen)
        memcpy(p + hdr, x, xlen);
    if (e->kept)
        memcpy(p + hdr + xlen, body, e->kept);
}

/* Ends the writer thread after everything handed over is applied.  No-op without one. */
void tbbt__conv_pipe_stop(struct tbbt__conv *c)
{
    struct pipe *pp = c->pipe;
    struct ev end = {.kind = EV_END};

    if (!pp)
        return;
    pipe_event(pp, &end, sizeof(end), NULL, 0, NULL);
    batch_send(pp->full, pp->cur);
    g_thread_join(pp->thread);
    c->pipe = NULL;
    for (int i = 0; i < NBATCH; i++)
        g_free(pp->batches[i].buf);
    g_async_queue_unref(pp->full);
    g_async_queue_unref(pp->empty);
    g_free(pp);
}

/* ---- the pairing half ------------------------------------------------------------- */

/* A pairer tag: record number, program (TBBT_PROG_NONE: no record) and procedure. */
static uint64_t make_tag(uint64_t seq, int prog, uint32_t proc)
{
    return seq << 16 | (uint64_t)prog << 8 | proc;
}

static int tag_prog(uint64_t tag)
{
    return (int)(tag >> 8 & 0xff);
}

static void on_emit(uint64_t tag, bool replied, void *arg)
{
    struct tbbt__conv *c = arg;

    (void)replied;
    if (tag_prog(tag) == TBBT_PROG_NONE)
        return;              /* other programs and bad procedures have no record */
    c->emitted++;
    if (c->pipe)
        c->pipe->emits++;
    else
        back_emit(c, 1);
}

/* The pairer's flow number of m's addresses and ports, remembered where m says. */
static uint32_t msg_flow(struct tbbt__conv *c, const struct tbbt__conv_msg *m)
{
    uint32_t flow;

    if (m->flow_cache && *m->flow_cache)
        return *m->flow_cache;
    flow = tbbt__pairer_flow(c->pairer, &m->key);
    if (m->flow_cache)
        *m->flow_cache = flow;
    return flow;
}

/* Pairs a call; true if it opens a record (numbered *seq; its flow number in *flow). */
static bool front_call(struct tbbt__conv *c, const struct tbbt__conv_msg *m, int prog,
                       uint32_t proc, uint64_t *seq, uint32_t *flow)
{
    bool known = prog > TBBT_PROG_NONE && prog < NPROGS;
    bool ours = known && proc < c->nprocs[prog];

    c->rpc_calls++;
    *flow = msg_flow(c, m);
    /* Other programs and bad procedures stay paired (their replies are not "unmatched")
     * with prog NONE, and are never written. */
    if (!tbbt__pairer_call_flow(c->pairer, *flow, m->key.xid, m->pair_ns,
                                ours ? make_tag(c->next_rec, prog, proc) : 0))
        return false;
    if (!known) {
        c->other_prog_calls++;
        return false;
    }
    if (!ours) {
        c->bad_procs++;
        return false;
    }
    if (prog == TBBT_PROG_NFS2 || prog == TBBT_PROG_NFS3 || prog == TBBT_PROG_NFS4)
        c->nfs_calls++;
    if (m->truncated)
        c->truncated_calls++;
    *seq = c->next_rec++;
    return true;
}

/* Pairs a reply; true if it completes a record (its call's tag in *tag). */
static bool front_reply(struct tbbt__conv *c, const struct tbbt__conv_msg *m, uint64_t *tag)
{
    c->rpc_replies++;
    if (!tbbt__pairer_reply_flow(c->pairer, msg_flow(c, m), m->key.xid, m->pair_ns, tag))
        return false;
    if (tag_prog(*tag) == TBBT_PROG_NONE) {
        c->other_prog_pairs++;
        return false;
    }
    c->pairs[tag_prog(*tag)][*tag & 0xff]++;
    if (m->truncated)
        c->truncated_replies++;
    return true;
}

static uint8_t msg_flags(const struct tbbt__conv_msg *m)
{
    return (uint8_t)((m->tcp ? EVF_TCP : 0) | (m->truncated ? EVF_TRUNC : 0));
}

/*
 * The last credential a flow's calls carried: its AUTH_SYS bytes after the
 * stamp (tbbt__rpc_hdr's sys) and its reference + 1 (0: none yet).
 */
struct cred_memo {
    uint32_t ref1;
    uint32_t len, cap;
    uint8_t *bytes;
};

/*
 * The credential reference + 1 of a call of flow number flow over tcp that
 * opens a record, with the AUTH_SYS bytes sys[0..len) (NULL: 0, none).
 * Compares the bytes with the flow's last credential first; only another
 * credential is decoded and interned.
 */
static uint32_t cred_ref(struct tbbt__conv *c, uint32_t flow, bool tcp, const uint8_t *sys,
                         uint32_t len)
{
    guint i;
    struct cred_memo *mm;
    struct tbbt_cred cred;

    if (!sys)
        return 0;
    i = flow_index(c->cred_memo, flow, tcp);        /* before data is read: it may move */
    mm = &g_array_index(c->cred_memo, struct cred_memo, i);
    if (mm->ref1 && mm->len == len && memcmp(mm->bytes, sys, len) == 0)
        return mm->ref1;
    if (!tbbt__rpc_authsys(sys, len, &cred))
        return 0;                  /* not what tbbt__rpc_parse() hands over */
    if (mm->cap < len) {
        mm->cap = len;
        mm->bytes = g_realloc(mm->bytes, len);
    }
    memcpy(mm->bytes, sys, len);
    mm->len = len;
    mm->ref1 = tbbt_credtab_intern(c->cred, &cred) + 1;
    return mm->ref1;
}

static void call_event(struct ev_call *e, const struct tbbt__conv_msg *m, uint32_t flow,
                       int prog, uint32_t proc, uint32_t uid, uint32_t gid)
{
    memset(e, 0, sizeof(*e));
    e->h.kind = EV_CALL;
    e->h.flags = msg_flags(m);
    e->h.prog = (uint8_t)prog;
    e->h.proc_stat = (uint8_t)proc;
    e->h.ts_ns = m->ts_ns;
    e->xid = m->key.xid;
    e->flow = flow;
    e->uid = uid;
    e->gid = gid;
}

/* True the first time the writer must be told the key of flow number flow over tcp. */
static bool announce(struct tbbt__conv *c, uint32_t flow, bool tcp)
{
    guint i = flow_index(c->announced, flow, tcp);     /* before data is read: it may move */
    gboolean *sent = &g_array_index(c->announced, gboolean, i);

    if (*sent)
        return false;
    *sent = TRUE;
    return true;
}

/* Marks the event as carrying a body; when pipelined, keeps only what fill() reads. */
static void set_body(struct tbbt__conv *c, struct ev *e, int prog, uint32_t proc, bool reply,
                     const uint8_t *body, size_t len)
{
    if (!body)
        return;
    g_assert(len <= UINT32_MAX);
    e->flags |= EVF_BODY;
    e->len = e->kept = (uint32_t)len;
    if (c->pipe && c->src->keep) {
        uint32_t k = c->src->keep(prog, proc, reply, e->len, (e->flags & EVF_TRUNC) != 0);
        e->kept = k < e->len ? k : e->len;
    }
}

struct tbbt_trace_rec *tbbt__conv_call(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                                       int prog, uint32_t proc, uint32_t uid, uint32_t gid)
{
    struct ev_call e;
    uint64_t seq;
    uint32_t flow;

    g_assert(!c->pipe);
    if (!front_call(c, m, prog, proc, &seq, &flow))
        return NULL;
    call_event(&e, m, flow, prog, proc, uid, gid);
    return back_call(c, &e, &m->key, NULL);
}

struct tbbt_trace_rec *tbbt__conv_reply(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                                        int rpc_stat)
{
    struct ev e = {.kind = EV_REPLY, .proc_stat = (uint8_t)rpc_stat, .ts_ns = m->ts_ns};
    uint64_t tag;

    g_assert(!c->pipe);
    if (!front_reply(c, m, &tag))
        return NULL;
    e.seq = tag >> 16;
    return back_reply(c, &e, NULL);
}

void tbbt__conv_call_bytes(struct tbbt__conv *c, const struct tbbt__conv_msg *m, int prog,
                           uint32_t proc, uint32_t uid, uint32_t gid, const uint8_t *sys,
                           uint32_t sys_len, const uint8_t *body, size_t len)
{
    struct ev_call e;
    uint64_t seq;
    uint32_t flow;

    if (!front_call(c, m, prog, proc, &seq, &flow))
        return;
    call_event(&e, m, flow, prog, proc, uid, gid);
    e.h.cred = cred_ref(c, flow, m->tcp, sys, sys_len);
    set_body(c, &e.h, prog, proc, false, body, len);
    if (!c->pipe)
        back_call(c, &e, &m->key, body);
    else if (announce(c, flow, m->tcp)) {
        e.h.flags |= EVF_KEY;
        pipe_event(c->pipe, &e.h, sizeof(e), &m->key, sizeof(m->key), body);
    } else {
        pipe_event(c->pipe, &e.h, sizeof(e), NULL, 0, body);
    }
}

void tbbt__conv_side_call(struct tbbt__conv *c, const struct tbbt__conv_msg *m, uint8_t side)
{
    c->rpc_calls++;
    if (tbbt__pairer_call_flow(c->pairer, msg_flow(c, m), m->key.xid, m->pair_ns,
                               make_tag(0, TBBT_PROG_NONE, side)))
        c->other_prog_calls++;
}

uint8_t tbbt__conv_reply_bytes(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                               int rpc_stat, const uint8_t *body, size_t len)
{
    struct ev e = {.kind = EV_REPLY, .proc_stat = (uint8_t)rpc_stat, .ts_ns = m->ts_ns};
    uint64_t tag = 0;

    if (!front_reply(c, m, &tag))
        return tag_prog(tag) == TBBT_PROG_NONE ? (uint8_t)(tag & 0xff) : 0;
    e.flags = msg_flags(m);
    e.seq = tag >> 16;
    set_body(c, &e, tag_prog(tag), (uint32_t)(tag & 0xff), true, body, len);
    if (c->pipe)
        pipe_event(c->pipe, &e, sizeof(e), NULL, 0, body);
    else
        back_reply(c, &e, body);
    return 0;
}

void tbbt__conv_drain(struct tbbt__conv *c)
{
    tbbt__pairer_drain(c->pairer);
}

void tbbt__conv_progress(struct tbbt__conv *c, uint64_t done, uint64_t total)
{
    uint64_t now = tbbt_now_ns();
    double secs = (double)(now - c->started_ns) / 1e9;

    if (now - c->last_progress_ns < 500000000ull)
        return;
    c->last_progress_ns = now;
    fprintf(stderr, "\rtbbt-convert: %.0f MB", (double)done / 1e6);
    if (total)
        fprintf(stderr, " of %.0f MB (%.0f%%)", (double)total / 1e6, 100.0 * done / total);
    fprintf(stderr, ", %.1f MB/s, %" G_GUINT64_FORMAT " records   ",
            secs > 0 ? (double)done / 1e6 / secs : 0.0, (guint64)c->emitted);
    fflush(stderr);
}

/* ---- setting up and tearing down -------------------------------------------- */

void tbbt__conv_tables_init(struct tbbt__conv *c, const struct tbbt_convert_opts *o)
{
    for (int p = TBBT_PROG_NONE + 1; p < NPROGS; p++) {
        int n = tbbt_prog_nprocs(p);
        c->nprocs[p] = (uint8_t)(n < 0 ? 0 : n > MAXPROCS ? MAXPROCS : n);
    }
    c->fh = tbbt_fhtab_new();
    c->ep = tbbt_eptab_new();
    c->ep_by_flow = g_array_new(FALSE, TRUE, sizeof(guint32));
    c->announced = g_array_new(FALSE, TRUE, sizeof(gboolean));
    c->cred = tbbt_credtab_new();
    c->cred_memo = g_array_new(FALSE, TRUE, sizeof(struct cred_memo));
    c->ns = tbbt_ns_new();
    for (const char *const *s = o->v4_exports; s && *s; s++)
        tbbt_ns_add_v4_export(c->ns, *s, NULL, 0);     /* checked by tbbt_convert_run() */
    c->pairer = tbbt__pairer_new(o->reply_timeout_ns, o->max_pending, on_emit, c);
    recs_init(&c->recs);
}

void tbbt__conv_fini(struct tbbt__conv *c)
{
    tbbt__conv_pipe_stop(c);
    tbbt__pairer_free(c->pairer);
    c->src->fini(c);
    recs_fini(&c->recs);
    g_free(c->zeros);
    g_array_free(c->ep_by_flow, TRUE);
    g_array_free(c->announced, TRUE);
    for (guint i = 0; i < c->cred_memo->len; i++)
        g_free(g_array_index(c->cred_memo, struct cred_memo, i).bytes);
    g_array_free(c->cred_memo, TRUE);
    tbbt_credtab_free(c->cred);
    tbbt_eptab_free(c->ep);
    tbbt_fhtab_free(c->fh);
    tbbt_ns_free(c->ns);
    tbbt__corr_free(c->corr);
    tbbt__corr_free(c->check);
}
