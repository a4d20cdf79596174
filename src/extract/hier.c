/* SPDX-License-Identifier: MIT */
/*
 * Pass B of tbbt-convert (see hier.h): identity scan, replay through the
 * namespace model, final trace and hierarchy map.  TBBT paper 3.1, 3.2, 4.
 *
 * The replay reads its records from a source (struct src): a raw TBBT trace,
 * or the spill pass A wrote (trace/spill.h) with pass A's handle, endpoint
 * and credential tables.  Either way the source hands out handle, endpoint
 * and credential definitions as items, in the places a raw trace holds them
 * (a spilled record carries the table sizes at the time it was spilled), and
 * the final writer defines each with the same reference right before the
 * same record: the final trace is the same whichever the source.  ID fields already in
 * the raw records are dropped: the model would take them for corrective
 * records' IDs.
 */
#include "extract/hier.h"

#include <glib.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "extract/execorder.h"
#include "trace/spill.h"
#include "trace/trace.h"
#include "util/util.h"

/* ---- the records' source ----------------------------------------------------------- */

/* Pass B's input: a raw TBBT trace, or pass A's spill and tables. */
struct src {
    const char *path;
    struct tbbt_trace_reader *tr;       /* a trace; else: */
    struct tbbt_spill_reader *sp;       /* a spill, */
    const struct tbbt_fhtab *fh;        /* with pass A's tables (borrowed) */
    const struct tbbt_eptab *ep;
    const struct tbbt_credtab *cred;
    uint32_t nfh, nep, ncred;           /* definitions handed out so far */
};

/* Pass A's tables, for a spill. */
struct tables {
    const struct tbbt_fhtab *fh;
    const struct tbbt_eptab *ep;
    const struct tbbt_credtab *cred;
};

/* A raw trace at path (t NULL), or a spill with the tables t (borrowed). */
static int src_open(struct src *s, const char *path, const struct tables *t, char *errbuf,
                    size_t errlen)
{
    const struct tbbt_fhtab *fh = t ? t->fh : NULL;
    int err = 0;

    memset(s, 0, sizeof(*s));
    s->path = path;
    s->fh = fh;
    s->ep = t ? t->ep : NULL;
    s->cred = t ? t->cred : NULL;
    if (fh)
        s->sp = tbbt_spill_reader_open(path, true, &err);   /* a temporary: used up */
    else
        s->tr = tbbt_trace_reader_open(path, &err);
    if (!s->sp && !s->tr) {
        snprintf(errbuf, errlen, "cannot read %s '%s': %s", fh ? "records" : "trace", path,
                 tbbt_strerror(err));
        return err;
    }
    return 0;
}

static void src_close(struct src *s)
{
    tbbt_trace_reader_close(s->tr);
    tbbt_spill_reader_close(s->sp);
}

static const struct tbbt_fhtab *src_fhtab(const struct src *s)
{
    return s->tr ? tbbt_trace_reader_fhtab(s->tr) : s->fh;
}

static const struct tbbt_eptab *src_eptab(const struct src *s)
{
    return s->tr ? tbbt_trace_reader_eptab(s->tr) : s->ep;
}

static const struct tbbt_credtab *src_credtab(const struct src *s)
{
    return s->tr ? tbbt_trace_reader_credtab(s->tr) : s->cred;
}

/*
 * The next item, as tbbt_trace_reader_next_any(): TBBT_REC_HANDLE,
 * TBBT_REC_ENDPOINT or TBBT_REC_CRED with *ref, TBBT_REC_OP into rec, 0 at
 * the end, or an error.  A spill's definitions come before the record that
 * needed them (handles first, credentials last, as the trace writer does)
 * and the rest at the end.  Record types a later trace version may add are
 * skipped.
 */
static int src_next(struct src *s, struct tbbt_trace_rec *rec, uint32_t *ref)
{
    struct tbbt_spill_defs d;
    int rc;

    if (s->tr) {
        do {
            rc = tbbt_trace_reader_next_any(s->tr, rec, ref);
        } while (rc > 0 && rc != TBBT_REC_OP && rc != TBBT_REC_HANDLE &&
                 rc != TBBT_REC_ENDPOINT && rc != TBBT_REC_CRED);
        return rc;
    }
    rc = tbbt_spill_peek(s->sp, &d);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        d.nfh = tbbt_fhtab_count(s->fh);
        d.nep = tbbt_eptab_count(s->ep);
        d.ncred = tbbt_credtab_count(s->cred);
    }
    if (d.nfh > tbbt_fhtab_count(s->fh) || d.nep > tbbt_eptab_count(s->ep) ||
        d.ncred > tbbt_credtab_count(s->cred))
        return TBBT_E_BADREC;
    if (s->nfh < d.nfh) {
        *ref = s->nfh++;
        return TBBT_REC_HANDLE;
    }
    if (s->nep < d.nep) {
        *ref = s->nep++;
        return TBBT_REC_ENDPOINT;
    }
    if (s->ncred < d.ncred) {
        *ref = s->ncred++;
        return TBBT_REC_CRED;
    }
    if (rc == 0)
        return tbbt_spill_next(s->sp, rec, &d);   /* checks the end mark */
    rc = tbbt_spill_next(s->sp, rec, &d);
    return rc == 1 ? TBBT_REC_OP : rc;
}

static uint64_t src_offset(const struct src *s)
{
    return s->tr ? tbbt_trace_reader_offset(s->tr) : tbbt_spill_reader_offset(s->sp);
}

/* Gives a definition item to the final writer. */
static int src_define(const struct src *s, struct tbbt_trace_writer *w, int type, uint32_t ref)
{
    uint32_t len;
    const uint8_t *fh;

    if (type == TBBT_REC_ENDPOINT)
        return tbbt_trace_writer_def_endpoint(w, ref, tbbt_eptab_get(src_eptab(s), ref));
    if (type == TBBT_REC_CRED)
        return tbbt_trace_writer_def_cred(w, ref, tbbt_credtab_get(src_credtab(s), ref));
    fh = tbbt_fhtab_get(src_fhtab(s), ref, &len);
    return tbbt_trace_writer_def_handle(w, ref, fh, len);
}

static int read_error(const struct src *s, int rc, char *errbuf, size_t errlen)
{
    snprintf(errbuf, errlen, "cannot read %s '%s': %s (at byte %" PRIu64 ")",
             s->tr ? "trace" : "records", s->path, tbbt_strerror(rc), src_offset(s));
    return rc;
}

/* First read: which (fsid, fileid) each handle stands for. */
static int ident_scan(struct tbbt_ns *ns, const char *raw, struct tbbt_trace_rec *rec,
                      char *errbuf, size_t errlen)
{
    struct src s;
    int rc = src_open(&s, raw, NULL, errbuf, errlen);

    if (rc < 0)
        return rc;
    while ((rc = tbbt_trace_reader_next(s.tr, rec)) == 1)
        tbbt_ns_ident_scan(ns, rec);
    if (rc < 0)
        rc = read_error(&s, rc, errbuf, errlen);
    src_close(&s);
    return rc;
}

/* IDs a raw trace may carry (from another numbering) would be taken as corrective: drop them. */
static void clear_ids(struct tbbt_trace_rec *rec)
{
    rec->present &= ~((UINT64_C(1) << TBBT_F_ID) | (UINT64_C(1) << TBBT_F_ID2) |
                      (UINT64_C(1) << TBBT_F_ID_OBJ) | (UINT64_C(1) << TBBT_F_ID_OLD));
    rec->id = rec->id2 = rec->id_obj = rec->id_old = 0;
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        rec->entries[i].flags &= ~(uint32_t)TBBT_ENT_ID;
        rec->entries[i].id = 0;
    }
}

/* Second read: IDs into every record, the model updated, the final trace written. */
/*
 * One record of the raw trace: its ID fields dropped, then applied to the
 * model (through the corrector if there is one), then written after the
 * corrective records it needed.  prev: the call time of the last record.
 */
static int step(struct tbbt_ns *ns, struct tbbt__corr *corr, struct tbbt_trace_writer *w,
                struct tbbt_trace_rec *rec, uint64_t *prev)
{
    struct tbbt_trace_rec *const *extra;
    size_t n;
    int rc = 0;

    clear_ids(rec);
    if (!corr) {
        tbbt_ns_apply(ns, rec);
    } else {
        n = tbbt__corr_step(corr, ns, rec, *prev, &extra);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = tbbt_trace_writer_put(w, extra[i]);
        if (rec->call_ns > *prev)
            *prev = rec->call_ns;
    }
    return rc < 0 ? rc : tbbt_trace_writer_put(w, rec);
}

#define XORDER_MAX 4096            /* items held for the execution order at most */

/* The model's summary counts the records pass B moved (summary key exec_order_moves). */
static void ns_note_moved(struct tbbt_ns *ns, const struct tbbt__xorder *x)
{
    tbbt_ns_note_reordered(ns, tbbt__xorder_moved(x));
}

/* Where the execution-order buffer's items go (both ways of running pass B). */
struct applier {
    struct tbbt_ns *ns;
    struct tbbt__corr *corr;
    struct tbbt_trace_writer *w;
    const struct src *src;      /* single thread: definitions from the source's tables */
    uint64_t prev;
};

static int apply_item(void *arg, struct tbbt_trace_rec *rec, int type, uint32_t ref,
                      const void *payload, size_t len)
{
    struct applier *a = arg;

    if (rec)
        return step(a->ns, a->corr, a->w, rec, &a->prev);
    if (a->src)
        return src_define(a->src, a->w, type, ref);
    if (type == TBBT_REC_HANDLE)
        return tbbt_trace_writer_def_handle(a->w, ref, payload, (uint32_t)len);
    if (type == TBBT_REC_ENDPOINT)
        return tbbt_trace_writer_def_endpoint(a->w, ref, payload);
    return tbbt_trace_writer_def_cred(a->w, ref, payload);
}

/* Whether rec's directory entry exists in the model now (execorder.h). */
static int probe_entry(void *arg, const struct tbbt_trace_rec *rec, bool second)
{
    struct applier *a = arg;
    const struct tbbt_str *name = second ? &rec->name2 : &rec->name;
    uint64_t dir = tbbt_ns_rec_dir(a->ns, rec, second), child;

    if (!dir || !name->p)
        return -1;
    switch (tbbt_ns_lookup(a->ns, dir, name->p, name->len, &child)) {
    case TBBT_NS_PRESENT: return 1;
    case TBBT_NS_ABSENT: return 0;
    default: return -1;
    }
}

static int same_entry(void *arg, const struct tbbt_trace_rec *rec, const struct tbbt_entry *e)
{
    struct applier *a = arg;
    uint64_t dir = tbbt_ns_rec_dir(a->ns, rec, false), child, obj;

    if (!dir || !rec->name.p || !(e->flags & TBBT_ENT_FH))
        return -1;
    if (tbbt_ns_lookup(a->ns, dir, rec->name.p, rec->name.len, &child) != TBBT_NS_PRESENT)
        return -1;
    obj = tbbt_ns_handle_obj(a->ns, e->fh);
    return obj ? obj == child : -1;
}

static int replay(struct tbbt_ns *ns, struct tbbt__corr *corr, struct src *src,
                  const char *final, struct tbbt_trace_rec *rec, char *errbuf, size_t errlen)
{
    uint32_t ref = 0;
    int err = 0, rc, wrc = 0;
    struct tbbt_trace_writer *w = tbbt_trace_writer_open(final, NULL, NULL, &err);
    struct applier a = { .ns = ns, .corr = corr, .w = w, .src = src };
    struct tbbt__xorder *x;

    if (!w) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(err));
        return err;
    }
    x = tbbt__xorder_new(XORDER_MAX, apply_item, probe_entry, &a);
    tbbt__xorder_set_same(x, same_entry);
    while ((rc = src_next(src, rec, &ref)) > 0) {
        wrc = rc == TBBT_REC_OP ? tbbt__xorder_put_op(x, rec)
                                : tbbt__xorder_put_def(x, rc, ref, NULL, 0);
        if (wrc < 0)
            break;
    }
    if (rc == 0 && wrc >= 0)
        wrc = tbbt__xorder_flush(x);
    ns_note_moved(ns, x);
    tbbt__xorder_free(x);
    if (rc < 0) {
        read_error(src, rc, errbuf, errlen);
        tbbt_trace_writer_abort(w);
    } else if (wrc < 0 || (wrc = tbbt_trace_writer_close(w)) < 0) {
        if (rc > 0)
            tbbt_trace_writer_abort(w);
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(wrc));
        rc = wrc;
    }
    return rc;
}

/* ---- two threads: the replay on this one, the writing on another ------------------- */

#define RING 1024                   /* slots between the threads */
#define BATCH 64                    /* slots published at a time */

enum { SLOT_OP, SLOT_FH, SLOT_EP, SLOT_CRED, SLOT_END };

/* One item for the writer thread, in file order. */
struct slot {
    int type;
    struct tbbt_trace_rec rec;      /* SLOT_OP; owned by the slot, reused */
    uint32_t ref;                   /* SLOT_FH, SLOT_EP, SLOT_CRED */
    uint32_t fh_len;                /* SLOT_FH */
    union {                         /* the definition, by type */
        uint8_t fh[TBBT_FH_MAX];
        struct tbbt_endpoint ep;
        struct tbbt_cred cred;
    };
};

struct ring {
    struct slot *slots;
    pthread_mutex_t lock;           /* (pthreads: sanitizers see them; GMutex is a futex) */
    pthread_cond_t moved;           /* head or tail moved */
    uint64_t head, tail;            /* published (under lock; tail also read atomically) */
    uint64_t phead, ctail;          /* the producer's and the consumer's own positions */
    struct tbbt_trace_writer *w;
    int wrc;                        /* the writer thread's first error */
};

static void ring_publish(struct ring *q)
{
    pthread_mutex_lock(&q->lock);
    q->head = q->phead;
    pthread_cond_broadcast(&q->moved);
    pthread_mutex_unlock(&q->lock);
}

/* The next free slot for the producer (waits while the ring is full). */
static struct slot *ring_acquire(struct ring *q)
{
    if (q->phead - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) >= RING) {
        pthread_mutex_lock(&q->lock);
        q->head = q->phead;
        pthread_cond_broadcast(&q->moved);
        while (q->phead - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) >= RING)
            pthread_cond_wait(&q->moved, &q->lock);
        pthread_mutex_unlock(&q->lock);
    }
    return &q->slots[q->phead % RING];
}

static void ring_push(struct ring *q)
{
    if (++q->phead % BATCH == 0)
        ring_publish(q);
}

/*
 * The consumer thread: the namespace model, pre-play correction and the
 * writer, over the records the reading thread decoded into the slots.
 */
struct consumer {
    struct ring *q;
    struct tbbt_ns *ns;
    struct tbbt__corr *corr;
    struct tbbt__xorder *x;
};

static int consume(struct consumer *cs, struct slot *sl)
{
    if (sl->type == SLOT_FH)
        return tbbt__xorder_put_def(cs->x, TBBT_REC_HANDLE, sl->ref, sl->fh, sl->fh_len);
    if (sl->type == SLOT_EP)
        return tbbt__xorder_put_def(cs->x, TBBT_REC_ENDPOINT, sl->ref, &sl->ep, sizeof(sl->ep));
    if (sl->type == SLOT_CRED)
        return tbbt__xorder_put_def(cs->x, TBBT_REC_CRED, sl->ref, &sl->cred,
                                    sizeof(sl->cred));
    return tbbt__xorder_put_op(cs->x, &sl->rec);
}

static gpointer consumer_main(gpointer arg)
{
    struct consumer *cs = arg;
    struct ring *q = cs->q;
    uint64_t head = 0;
    struct applier a = { .ns = cs->ns, .corr = cs->corr, .w = q->w };

    cs->x = tbbt__xorder_new(XORDER_MAX, apply_item, probe_entry, &a);
    tbbt__xorder_set_same(cs->x, same_entry);

    for (;;) {
        struct slot *sl;
        if (q->ctail == head) {
            pthread_mutex_lock(&q->lock);
            __atomic_store_n(&q->tail, q->ctail, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&q->moved);
            while (q->head == q->ctail)
                pthread_cond_wait(&q->moved, &q->lock);
            head = q->head;
            pthread_mutex_unlock(&q->lock);
        }
        sl = &q->slots[q->ctail % RING];
        if (sl->type == SLOT_END)
            break;
        if (q->wrc == 0) {
            int rc = consume(cs, sl);
            if (rc < 0)
                __atomic_store_n(&q->wrc, rc, __ATOMIC_RELAXED);
        }
        q->ctail++;
        if (q->ctail % BATCH == 0)
            __atomic_store_n(&q->tail, q->ctail, __ATOMIC_RELEASE);
    }
    if (q->wrc == 0) {
        int rc = tbbt__xorder_flush(cs->x);
        if (rc < 0)
            __atomic_store_n(&q->wrc, rc, __ATOMIC_RELAXED);
    }
    ns_note_moved(cs->ns, cs->x);
    tbbt__xorder_free(cs->x);
    cs->x = NULL;
    pthread_mutex_lock(&q->lock);
    __atomic_store_n(&q->tail, q->ctail, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&q->moved);
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/*
 * Two threads: this one reads and decodes the raw trace into a ring of
 * record slots; the other replays them through the model (with correction)
 * and writes the final trace.  Handle, endpoint and credential definitions
 * travel as items, so the writer shares no table with the reader.
 */
static int replay_mt(struct tbbt_ns *ns, struct tbbt__corr *corr, struct src *src,
                     const char *final, char *errbuf, size_t errlen)
{
    struct ring q = { 0 };
    struct consumer cs = { .q = &q, .ns = ns, .corr = corr };
    uint32_t ref = 0, len;
    int err = 0, rc;
    GThread *t;

    if (!(q.w = tbbt_trace_writer_open(final, NULL, NULL, &err))) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(err));
        return err;
    }
    q.slots = g_new0(struct slot, RING);
    for (int i = 0; i < RING; i++)
        tbbt_trace_rec_init(&q.slots[i].rec);
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.moved, NULL);
    t = g_thread_new("tbbt-passb", consumer_main, &cs);
    for (;;) {
        struct slot *sl = ring_acquire(&q);
        if (__atomic_load_n(&q.wrc, __ATOMIC_RELAXED) < 0) {
            rc = 0;                     /* the other thread failed: stop reading */
            break;
        }
        rc = src_next(src, &sl->rec, &ref);
        if (rc <= 0)
            break;
        if (rc == TBBT_REC_HANDLE) {
            const uint8_t *fh = tbbt_fhtab_get(src_fhtab(src), ref, &len);
            sl->type = SLOT_FH;
            sl->ref = ref;
            sl->fh_len = len;
            memcpy(sl->fh, fh, len);
        } else if (rc == TBBT_REC_ENDPOINT) {
            sl->type = SLOT_EP;
            sl->ref = ref;
            sl->ep = *tbbt_eptab_get(src_eptab(src), ref);
        } else if (rc == TBBT_REC_CRED) {
            sl->type = SLOT_CRED;
            sl->ref = ref;
            sl->cred = *tbbt_credtab_get(src_credtab(src), ref);
        } else {
            sl->type = SLOT_OP;
        }
        ring_push(&q);
    }
    ring_acquire(&q)->type = SLOT_END;
    q.phead++;
    ring_publish(&q);
    g_thread_join(t);
    if (rc < 0) {
        read_error(src, rc, errbuf, errlen);
        tbbt_trace_writer_abort(q.w);
    } else if (q.wrc < 0) {
        tbbt_trace_writer_abort(q.w);
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(q.wrc));
        rc = q.wrc;
    } else if ((rc = tbbt_trace_writer_close(q.w)) < 0) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(rc));
    }
    for (int i = 0; i < RING; i++)
        tbbt_trace_rec_fini(&q.slots[i].rec);
    g_free(q.slots);
    pthread_mutex_destroy(&q.lock);
    pthread_cond_destroy(&q.moved);
    return rc;
}

int tbbt__hier_scan(struct tbbt_ns *ns, const char *raw_trace, char *errbuf, size_t errlen)
{
    struct tbbt_trace_rec rec;
    int rc;

    tbbt_trace_rec_init(&rec);
    rc = ident_scan(ns, raw_trace, &rec, errbuf, errlen);
    tbbt_trace_rec_fini(&rec);
    return rc;
}

int tbbt__hier_replay(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *raw_trace,
                      const char *final_trace, const char *map_path, char *errbuf, size_t errlen)
{
    return tbbt__hier_replay_mt(ns, corr, raw_trace, final_trace, map_path, 1, errbuf, errlen);
}

/* The replay from an open source, then the map. */
static int replay_src(struct tbbt_ns *ns, struct tbbt__corr *corr, struct src *src,
                      const char *final_trace, const char *map_path, int threads, char *errbuf,
                      size_t errlen)
{
    struct tbbt_trace_rec rec;
    int rc;

    tbbt_trace_rec_init(&rec);
    rc = threads > 1 ? replay_mt(ns, corr, src, final_trace, errbuf, errlen)
                     : replay(ns, corr, src, final_trace, &rec, errbuf, errlen);
    tbbt_trace_rec_fini(&rec);
    if (rc == 0 && map_path) {  /* the map names the trace it goes with */
        struct tbbt_trace_ident id;
        tbbt_ns_set_map_trace(ns, tbbt_trace_ident_read(final_trace, &id) == 0 ? &id : NULL);
    }
    if (rc == 0 && map_path && (rc = tbbt_ns_write_map_file(ns, map_path)) < 0)
        snprintf(errbuf, errlen, "cannot write hierarchy map '%s': %s", map_path,
                 tbbt_strerror(rc));
    return rc;
}

/* The replay from the trace or spill at path (with tables t: a spill), then the map. */
static int replay_path(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *path,
                       const struct tables *t, const char *final_trace, const char *map_path,
                       int threads, char *errbuf, size_t errlen)
{
    struct src src;
    int rc = src_open(&src, path, t, errbuf, errlen);

    if (rc < 0)
        return rc;
    rc = replay_src(ns, corr, &src, final_trace, map_path, threads, errbuf, errlen);
    src_close(&src);
    return rc;
}

int tbbt__hier_replay_mt(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *raw_trace,
                         const char *final_trace, const char *map_path, int threads,
                         char *errbuf, size_t errlen)
{
    return replay_path(ns, corr, raw_trace, NULL, final_trace, map_path, threads, errbuf,
                       errlen);
}

int tbbt__hier_replay_spill(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *spill,
                            const struct tbbt_fhtab *fh, const struct tbbt_eptab *ep,
                            const struct tbbt_credtab *cred, const char *final_trace,
                            const char *map_path, int threads, char *errbuf, size_t errlen)
{
    struct tables t = {.fh = fh, .ep = ep, .cred = cred};

    return replay_path(ns, corr, spill, &t, final_trace, map_path, threads, errbuf, errlen);
}

int tbbt__hier_run(const char *raw_trace, const char *final_trace, const char *map_path,
                   struct tbbt__corr *corr, struct tbbt_ns **ns_out, char *errbuf,
                   size_t errlen)
{
    struct tbbt_ns *ns = tbbt_ns_new();
    int rc;

    if (ns_out)
        *ns_out = NULL;
    rc = tbbt__hier_scan(ns, raw_trace, errbuf, errlen);
    if (rc == 0)
        rc = tbbt__hier_replay(ns, corr, raw_trace, final_trace, map_path, errbuf, errlen);
    if (rc == 0 && ns_out)
        *ns_out = ns;
    else
        tbbt_ns_free(ns);
    return rc;
}
