/* SPDX-License-Identifier: MIT */
/*
 * Call/reply pairing in call order (see pair.h).  Pending calls sit in a
 * FIFO (arrival order) and in a hash table by exchange key; completed keys
 * are remembered in a direct-mapped cache (a slot per key hash, the newest
 * key wins) so late retransmissions are recognized without hash-table churn.
 * Entries are recycled through a free list: no allocation per record once
 * the pairer has warmed up.
 */
#include "extract/pair.h"

#include <glib.h>
#include <string.h>

#define RECENT_SLOTS 65536     /* completed exchanges remembered for duplicate detection */
#define XID_WINDOW 4096        /* XID jumps up to this size are losses, larger ones restarts */

struct pending {
    struct tbbt__pair_key key;
    struct tbbt_trace_rec rec;
    GList link;                /* in the FIFO; data points to this struct */
    bool done;                 /* reply seen */
    bool in_hash;              /* still in the open-call table */
};

struct xid_stream {
    uint8_t af;
    uint8_t caddr[16];
    uint32_t last;
    uint64_t calls;
    int64_t lost;
};

struct tbbt__pairer {
    uint64_t timeout_ns;
    uint32_t max_pending;
    tbbt__pair_emit_cb emit;
    void *arg;
    GQueue fifo;               /* struct pending, arrival order */
    GHashTable *open;          /* key -> struct pending (borrowed) */
    GPtrArray *free_list;      /* recycled struct pending */
    struct tbbt__pair_key *recent;  /* RECENT_SLOTS completed keys, by hash */
    GHashTable *streams;       /* stream key -> struct xid_stream */
    uint64_t now_ns;           /* latest capture time seen */
    struct tbbt__pair_stats st;
};

static guint key_hash(gconstpointer p)
{
    const struct tbbt__pair_key *k = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ k->xid ^ (uint64_t)k->cport << 32;
    uint64_t a, b;

    memcpy(&a, k->caddr, 8);
    memcpy(&b, k->caddr + 8, 8);
    h = (h ^ a) * 0xff51afd7ed558ccdull;
    h = (h ^ b) * 0xc4ceb9fe1a85ec53ull;
    memcpy(&a, k->saddr, 8);
    h = (h ^ a) * 0xff51afd7ed558ccdull;
    return (guint)(h ^ h >> 29);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct tbbt__pair_key)) == 0;
}

struct tbbt__pairer *tbbt__pairer_new(uint64_t timeout_ns, uint32_t max_pending,
                                      tbbt__pair_emit_cb emit, void *arg)
{
    struct tbbt__pairer *p = g_new0(struct tbbt__pairer, 1);

    p->timeout_ns = timeout_ns;
    p->max_pending = max_pending ? max_pending : 1;
    p->emit = emit;
    p->arg = arg;
    g_queue_init(&p->fifo);
    p->open = g_hash_table_new(key_hash, key_equal);
    p->free_list = g_ptr_array_new();
    p->recent = g_new0(struct tbbt__pair_key, RECENT_SLOTS);
    /* Stream keys are pair keys with xid 0. */
    p->streams = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
    return p;
}

static void pending_free(gpointer data)
{
    struct pending *e = data;
    tbbt_trace_rec_fini(&e->rec);
    g_free(e);
}

void tbbt__pairer_free(struct tbbt__pairer *p)
{
    GList *l;

    if (!p)
        return;
    while ((l = g_queue_pop_head_link(&p->fifo)))
        pending_free(l->data);
    g_ptr_array_set_free_func(p->free_list, pending_free);
    g_ptr_array_free(p->free_list, TRUE);
    g_hash_table_destroy(p->open);
    g_hash_table_destroy(p->streams);
    g_free(p->recent);
    g_free(p);
}

/* XID 0 with af 0 never occurs in a real key, so zeroed slots are empty. */
static void remember(struct tbbt__pairer *p, const struct tbbt__pair_key *k)
{
    p->recent[key_hash(k) & (RECENT_SLOTS - 1)] = *k;
}

static bool recently_done(const struct tbbt__pairer *p, const struct tbbt__pair_key *k)
{
    return key_equal(&p->recent[key_hash(k) & (RECENT_SLOTS - 1)], k);
}

static void track_xid(struct tbbt__pairer *p, const struct tbbt__pair_key *k)
{
    struct tbbt__pair_key sk = *k;
    struct xid_stream *s;
    int32_t d;

    sk.xid = 0;
    s = g_hash_table_lookup(p->streams, &sk);
    if (!s) {
        s = g_new0(struct xid_stream, 1);
        s->af = k->af;
        memcpy(s->caddr, k->caddr, 16);
        s->last = k->xid;
        s->calls = 1;
        g_hash_table_insert(p->streams, g_memdup2(&sk, sizeof(sk)), s);
        return;
    }
    s->calls++;
    d = (int32_t)(k->xid - s->last);
    if (d > 0 && d <= XID_WINDOW) {
        s->lost += d - 1;
        s->last = k->xid;
    } else if (d < 0 && d > -XID_WINDOW) {
        if (s->lost > 0)
            s->lost--;      /* a late call fills a hole counted before */
    } else if (d != 0) {
        s->last = k->xid;   /* a new XID sequence (client restart, random start) */
    }
}

static struct pending *take_entry(struct tbbt__pairer *p)
{
    struct pending *e;

    if (p->free_list->len) {
        e = g_ptr_array_steal_index_fast(p->free_list, p->free_list->len - 1);
        tbbt_trace_rec_clear(&e->rec);
    } else {
        e = g_new0(struct pending, 1);
        tbbt_trace_rec_init(&e->rec);
        e->link.data = e;
    }
    e->done = false;
    e->in_hash = false;
    return e;
}

struct tbbt_trace_rec *tbbt__pairer_call(struct tbbt__pairer *p, const struct tbbt__pair_key *k,
                                         uint64_t ts_ns)
{
    struct pending *e;

    p->st.calls++;
    if (ts_ns > p->now_ns)
        p->now_ns = ts_ns;
    if (recently_done(p, k) || g_hash_table_contains(p->open, k)) {
        p->st.duplicate_calls++;
        return NULL;
    }
    track_xid(p, k);
    e = take_entry(p);
    e->key = *k;
    e->in_hash = true;
    e->rec.call_ns = ts_ns;
    e->rec.xid = k->xid;
    g_hash_table_insert(p->open, &e->key, e);
    g_queue_push_tail_link(&p->fifo, &e->link);
    return &e->rec;
}

struct tbbt_trace_rec *tbbt__pairer_reply(struct tbbt__pairer *p, const struct tbbt__pair_key *k,
                                          uint64_t ts_ns)
{
    struct pending *e;

    p->st.replies++;
    if (ts_ns > p->now_ns)
        p->now_ns = ts_ns;
    e = g_hash_table_lookup(p->open, k);
    if (!e) {
        if (recently_done(p, k))
            p->st.duplicate_replies++;
        else
            p->st.unmatched_replies++;
        return NULL;
    }
    g_hash_table_remove(p->open, k);
    e->in_hash = false;
    remember(p, k);
    e->done = true;
    e->rec.reply_ns = ts_ns;
    e->rec.flags |= TBBT_RF_REPLY;
    p->st.pairs++;
    return &e->rec;
}

static void emit_head(struct tbbt__pairer *p)
{
    GList *l = g_queue_pop_head_link(&p->fifo);
    struct pending *e = l->data;

    if (!e->done) {
        p->st.unmatched_calls++;
        if (e->in_hash) {
            g_hash_table_remove(p->open, &e->key);
            remember(p, &e->key);   /* a reply after this counts as late, not as new */
        }
    }
    p->emit(&e->rec, p->arg);
    g_ptr_array_add(p->free_list, e);
}

void tbbt__pairer_drain(struct tbbt__pairer *p)
{
    struct pending *head;

    while ((head = g_queue_peek_head(&p->fifo))) {
        if (!head->done && head->rec.call_ns + p->timeout_ns >= p->now_ns &&
            p->fifo.length <= p->max_pending)
            break;
        emit_head(p);
    }
}

void tbbt__pairer_finish(struct tbbt__pairer *p)
{
    GHashTableIter it;
    gpointer v;

    while (!g_queue_is_empty(&p->fifo))
        emit_head(p);
    p->st.estimated_lost_calls = 0;
    g_hash_table_iter_init(&it, p->streams);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct xid_stream *s = v;
        p->st.estimated_lost_calls += s->lost > 0 ? (uint64_t)s->lost : 0;
    }
}

const struct tbbt__pair_stats *tbbt__pairer_stats(const struct tbbt__pairer *p)
{
    return &p->st;
}

void tbbt__pairer_foreach_client(const struct tbbt__pairer *p, tbbt__pair_client_cb cb,
                                 void *arg)
{
    GHashTable *by_client = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
    GHashTableIter it;
    gpointer k, v;

    /* Fold streams (client address and port) into clients (address). */
    g_hash_table_iter_init(&it, p->streams);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct xid_stream *s = v;
        struct tbbt__pair_key ck = {.af = s->af};
        struct xid_stream *c;

        memcpy(ck.caddr, s->caddr, 16);
        c = g_hash_table_lookup(by_client, &ck);
        if (!c) {
            c = g_new0(struct xid_stream, 1);
            c->af = s->af;
            memcpy(c->caddr, s->caddr, 16);
            g_hash_table_insert(by_client, g_memdup2(&ck, sizeof(ck)), c);
        }
        c->calls += s->calls;
        c->lost += s->lost > 0 ? s->lost : 0;
    }
    g_hash_table_iter_init(&it, by_client);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        struct xid_stream *c = v;
        cb(c->af, c->caddr, c->calls, (uint64_t)c->lost, arg);
    }
    g_hash_table_destroy(by_client);
}
