/* SPDX-License-Identifier: MIT */
/*
 * Racy replies in tbbt-compare (compare.h, "Differences").  An original operation X
 * whose reply shows the post-operation attributes of an object (tbbt_fsdep_shown(): the
 * object a LOOKUP found or a create made, else the object of fh) raced another request
 * Y when the two overlapped in the original trace (one's call before the other's reply)
 * and Y changes that object (it is in Y's write set, tbbt_fsdep_sets(), TBBT paper
 * Table 4, or Y changes entries of that directory: tbbt_fsdep_changes()): what X's reply
 * showed depends on how the traced server interleaved them, and the replay may
 * interleave them otherwise.  The same rule as tbbt-play's, which does not
 * check such replies (engine.c: add_dep(), writes_checked()).  The objects a record
 * changes are computed once per record (tbbt__cmp_racy_changes()), the object its reply
 * shows once per operation (tbbt__cmp_op_fill(): op->shown).
 *
 * The original is read once, in call order.  A Y called before X raced it when Y's reply
 * came after X's call: per object, the latest reply time of the requests that changed it
 * so far is enough (wreply, 8 bytes per original ID, as the object mapping keeps).  A Y
 * called after X raced it when Y's call came before X's reply: not known when X is
 * matched, so a pair with real reply differences waits (pending, and listed under its
 * object in by_obj) until the original's calls pass its reply; then its differences are
 * counted as real (TBBT_COMPARE_REPLY) or racy (TBBT_COMPARE_REPLY_RACY).  Only pairs
 * with reply differences wait, each until the trace is one original reply time further:
 * memory is the differences within the longest latency.  A request without a traced
 * reply changes its objects at an unknown time: it races the operations in progress at
 * its call, not later ones.
 */
#include "compare/compare-int.h"

#include <string.h>

#include "sched/fsdep.h"

/* A matched pair with real-or-racy reply differences, waiting for the verdict. */
struct tbbt__cmp_pend {
    uint64_t obj;               /* the original object whose attributes the reply shows */
    uint64_t reply_ns;
    uint64_t a_seq, b_seq;
    uint8_t prog, proc;
    bool racy;
    unsigned n;
    const char *fields[CMP_MAX_FIELDS];
    GList *olink;               /* its link in by_obj's queue of obj */
};

static void queue_free(gpointer p)
{
    g_queue_free(p);
}

void tbbt__cmp_racy_init(struct tbbt__cmp_racy *r)
{
    r->wreply = g_array_new(FALSE, TRUE, sizeof(uint64_t));
    g_queue_init(&r->pending);
    r->by_obj = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, queue_free);
    r->now = 0;
}

void tbbt__cmp_racy_fini(struct tbbt__cmp_racy *r)
{
    struct tbbt__cmp_pend *p;

    while ((p = g_queue_pop_head(&r->pending)))
        g_free(p);
    if (r->by_obj)
        g_hash_table_destroy(r->by_obj);
    if (r->wreply)
        g_array_free(r->wreply, TRUE);
    memset(r, 0, sizeof(*r));
}

/* Counts p's differences. */
static void count(struct tbbt_compare *c, const struct tbbt__cmp_pend *p)
{
    tbbt__cmp_count_reply(c, p->racy ? TBBT_COMPARE_REPLY_RACY : TBBT_COMPARE_REPLY, p->prog,
                          p->proc, p->a_seq, p->b_seq, p->fields, p->n);
    if (p->racy)
        c->cnt.pairs_reply_racy++;
    else
        c->cnt.pairs_reply_diff++;
}

/* Settles the waiting pairs (oldest first) whose reply is no later than upto. */
static void settle_upto(struct tbbt_compare *c, uint64_t upto)
{
    struct tbbt__cmp_racy *r = &c->racy;
    struct tbbt__cmp_pend *p;

    while ((p = g_queue_peek_head(&r->pending)) && p->reply_ns <= upto) {
        g_queue_pop_head(&r->pending);
        GQueue *q = g_hash_table_lookup(r->by_obj, (gpointer)(uintptr_t)p->obj);
        g_queue_delete_link(q, p->olink);
        if (g_queue_is_empty(q))
            g_hash_table_remove(r->by_obj, (gpointer)(uintptr_t)p->obj);
        count(c, p);
        g_free(p);
    }
}

void tbbt__cmp_racy_changes(const struct tbbt_trace_rec *rec, struct tbbt__cmp_changes *ch)
{
    struct tbbt_fsdep_sets s;

    tbbt_fsdep_sets(rec, &s);
    ch->n = tbbt_fsdep_changes(&s, ch->obj);
}

void tbbt__cmp_racy_before(struct tbbt_compare *c, const struct tbbt_trace_rec *rec,
                           const struct tbbt__cmp_changes *ch)
{
    struct tbbt__cmp_racy *r = &c->racy;

    if (!rec->call_ns)          /* a reply without its call: no time to judge by */
        return;
    r->now = MAX(r->now, rec->call_ns);
    if (g_hash_table_size(r->by_obj)) {
        for (int i = 0; i < ch->n; i++) {
            GQueue *q = g_hash_table_lookup(r->by_obj, (gpointer)(uintptr_t)ch->obj[i]);
            for (GList *l = q ? q->head : NULL; l; l = l->next) {
                struct tbbt__cmp_pend *p = l->data;
                p->racy |= rec->call_ns < p->reply_ns;
            }
        }
    }
    settle_upto(c, r->now);
}

void tbbt__cmp_racy_after(struct tbbt_compare *c, const struct tbbt_trace_rec *rec,
                          const struct tbbt__cmp_changes *ch)
{
    struct tbbt__cmp_racy *r = &c->racy;

    if (!(rec->flags & TBBT_RF_REPLY) || !rec->reply_ns)
        return;
    for (int i = 0; i < ch->n; i++) {
        uint64_t o = ch->obj[i];
        if (o > UINT32_MAX)
            continue;
        if (o >= r->wreply->len)
            g_array_set_size(r->wreply, (guint)o + 1);
        uint64_t *t = &g_array_index(r->wreply, uint64_t, o);
        *t = MAX(*t, rec->reply_ns);
    }
}

void tbbt__cmp_racy_pair(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                         const struct tbbt__cmp_op *b, const struct tbbt__cmp_fields *f)
{
    struct tbbt__cmp_racy *r = &c->racy;
    struct tbbt__cmp_pend now = {
        .obj = a->shown, .reply_ns = a->reply_ns, .a_seq = a->seq, .b_seq = b->seq,
        .prog = a->prog, .proc = a->proc, .n = MIN(f->n_reply, (unsigned)CMP_MAX_FIELDS),
    };

    memcpy(now.fields, f->reply, now.n * sizeof(now.fields[0]));
    /* An earlier request changing the object was still in progress at a's call. */
    now.racy = now.obj && now.obj < r->wreply->len && a->call_ns &&
               g_array_index(r->wreply, uint64_t, now.obj) > a->call_ns;
    /* No later call can race it: without an object, already racy, or answered by now. */
    if (!now.obj || now.racy || now.reply_ns <= r->now) {
        count(c, &now);
        return;
    }
    struct tbbt__cmp_pend *p = g_memdup2(&now, sizeof(now));
    GQueue *q = g_hash_table_lookup(r->by_obj, (gpointer)(uintptr_t)p->obj);
    if (!q) {
        q = g_queue_new();
        g_hash_table_insert(r->by_obj, (gpointer)(uintptr_t)p->obj, q);
    }
    g_queue_push_tail(q, p);
    p->olink = q->tail;
    g_queue_push_tail(&r->pending, p);
}

void tbbt__cmp_racy_flush(struct tbbt_compare *c)
{
    settle_upto(c, UINT64_MAX);
}
