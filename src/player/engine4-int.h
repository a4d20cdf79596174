/* SPDX-License-Identifier: MIT */
/*
 * engine4's private declarations (engine4.h), shared by its files, one job each:
 *
 *   engine4.c       the run: the window, sending, replies, leases, the epoll loop
 *   engine4-keys.c  dependency keys of a record and its admission (ordering), the
 *                   heap of records ready to go
 *   engine4-v3.c    NFSv2/v3 records of a mixed trace: built with nfsreq.h on the
 *                   handles of the image, their replies checked and their new handles
 *                   bound
 *
 * Single-threaded: everything runs on the thread of tbbt_engine4_run().
 */
#ifndef TBBT_PLAYER_ENGINE4_INT_H
#define TBBT_PLAYER_ENGINE4_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "onc/rpcconn.h"
#include "player/cookies.h"
#include "player/creds.h"
#include "player/engine4.h"
#include "player/nfs4build.h"
#include "player/nfsreq.h"
#include "trace/trace.h"

enum pstate { P_FREE = 0, P_WAIT, P_FLIGHT, P_DONE };
enum callkind { K_REC = 1, K_RESESSION, K_RENEW, K_DELEGRETURN };

struct p4conn;

/* One record of the window. */
struct prec {
    uint8_t kind;               /* K_REC: first, as in struct renewal (the reply's arg) */
    uint8_t state;              /* enum pstate */
    bool resession;             /* the call out is CREATE_SESSION for it (K_RESESSION) */
    bool in_call;               /* call holds a built COMPOUND */
    bool sent;                  /* went out at least once */
    uint16_t tries;             /* DELAY/GRACE answers so far */
    uint32_t ndeps;             /* earlier records it still waits for */
    uint64_t seq;
    uint64_t due_ns;            /* timestamp: its send time */
    uint64_t not_before;        /* a retry's back-off */
    uint64_t send_ns;           /* the first send (latency) */
    uint64_t try_ns;            /* the current send */
    GArray *succ;               /* uint64_t: later records waiting for it */
    struct p4conn *conn;
    struct tbbt_trace_rec rec;  /* owned (memory kept across reuse) */
    struct tbbt_nfs4_call call;
    COMPOUND4res res;
    bool v3;                    /* an NFSv2/v3 record (engine4-v3.c) */
    struct e4_v3call *v3call;   /* its call and results (made on first use, kept) */
};

/* An NFSv2/v3 call in flight (engine4-v3.c). */
struct e4_v3call {
    struct tbbt_nfsreq q;
    union tbbt_nfsreq_res res;
    xdrproc_t xres;             /* res holds results to free with it, or NULL */
    bool cookie_taken;          /* cookie holds the continuation's live cookie, verifier */
    uint64_t cookie[2];
};

/* A lease renewal or a delegation's return in flight. */
struct renewal {
    uint8_t kind;               /* K_RENEW, or K_DELEGRETURN (a call of the engine's own) */
    struct tbbt_nfs4_call call;
    COMPOUND4res res;
    uint64_t client;            /* traced clientid */
};

/* One traced client endpoint's live connection. */
struct p4conn {
    struct tbbt_rpcconn *rpc;
    uint32_t endpoint;
    bool dirty;                 /* in e4.dirty: calls queued since the last flush */
    bool down;
    uint64_t last_send;
};

/* A dependency key's holders (RW lock over sequence numbers). */
struct holders {
    uint64_t writer;            /* seq + 1, 0: none */
    GArray *readers;            /* uint64_t seq, since the writer */
    guint compact_at;           /* readers are pruned of finished ones at this length */
};

struct e4 {
    const struct tbbt_engine4_opts *o;
    struct tbbt_trace_reader *reader;
    struct tbbt_nfs4_state *st;
    struct tbbt_report *rep;
    struct tbbt_report_counts *c;
    unsigned W;
    struct prec *slots;
    uint64_t oldest, admitted, next_cons, inflight;
    bool eof;
    GHashTable *keys;           /* uint64 key -> struct holders */
    GHashTable *owner_of;       /* stateid key (uint64_t *) -> its 4.0 owner's key */
    GHashTable *sess_client;    /* session key (uint64_t *) -> traced clientid (uint64_t *) */
    GHashTable *name_obj;       /* name key (uint64_t *) -> the handle ref it names + 1 */
    uint64_t *heap;             /* ready records (sequence numbers), min-heap */
    size_t nheap, cheap;
    GQueue retry;               /* struct prec *: to send again at not_before */
    GQueue slotwait;            /* struct prec *: their session had no free slot */
    GHashTable *conns;          /* endpoint + 1 -> struct p4conn */
    GPtrArray *dirty;           /* struct p4conn * with calls queued, not flushed */
    GHashTable *client_conn;    /* traced clientid (uint64_t *) -> struct p4conn */
    GHashTable *renewing;       /* traced clientids with a renewal out */
    struct tbbt_play_creds creds;   /* the traced credentials, encoded */
    struct tbbt_play_cookies *cookies;  /* NFSv2/v3 READDIR continuations (cookies.h) */
    int ep;
    uint64_t start_ns, trace_t0, last_renew, last_expire;
    uint64_t barrier;           /* the last barrier record's seq + 1, 0: none */
    uint64_t delegs_granted, delegs_returned;   /* delegations the server granted anyway */
    bool t0_set, stopping;
    uint64_t stop_deadline;
    int err;
    char *errbuf;
    size_t errlen;
};

static inline struct prec *S(struct e4 *e, uint64_t seq)
{
    return &e->slots[seq % e->W];
}

static inline bool live(struct e4 *e, uint64_t seq)
{
    if (seq < e->oldest || seq >= e->admitted)
        return false;
    struct prec *p = S(e, seq);
    return p->seq == seq && p->state != P_DONE && p->state != P_FREE;
}

/* ---- engine4-keys.c ---- */

/* Admits record p (its seq set): its dependencies on the live earlier records that hold
 * keys it conflicts with; pushed on the ready heap if none. */
void tbbt__e4_admit(struct e4 *e, struct prec *p);
/* The ready heap: the lowest sequence number first. */
void tbbt__e4_heap_push(struct e4 *e, uint64_t seq);
uint64_t tbbt__e4_heap_pop(struct e4 *e);
/* Frees the key tables (the end of the run). */
void tbbt__e4_keys_init(struct e4 *e);
void tbbt__e4_keys_fini(struct e4 *e);

/* ---- engine4-v3.c ---- */

/* Builds and queues NFSv2/v3 record p on its connection: 0, or the skip reason
 * (TBBT_NFSREQ_*) with nothing queued, or -1 when the connection refused it. */
int tbbt__e4_v3_send(struct e4 *e, struct prec *p);
/* Its reply (status OK): new handles bound, READDIR positions kept, the decoded results
 * freed.  false: NFS3ERR_JUKEBOX, send again at p->not_before; true: done, compared with
 * the trace and accounted in the report. */
bool tbbt__e4_v3_reply(struct e4 *e, struct prec *p, const struct tbbt_rpcconn_reply *r);
/* Queues a COMPOUND or NFSv2/v3 call of rec on c (engine4.c). */
int tbbt__e4_queue(struct e4 *e, struct p4conn *c, const struct tbbt_trace_rec *rec,
                   const struct tbbt_rpcconn_call *call);

#endif
