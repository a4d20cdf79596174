/* SPDX-License-Identifier: MIT */
/*
 * The racy-reply rule of the engine (engine-int.h), as tbbt-compare's (compare/racy.c):
 * a traced reply that shows an object's attributes (or a directory's entries) is not
 * checked when, in the trace, its request X overlapped another request Y that changes
 * that object: what X's reply showed depends on how the traced server interleaved the
 * two, and the replay may interleave them otherwise.  The rule is a function of the
 * trace alone, whatever the replay's own timing:
 *
 *   - Y called before X: per changed object, the latest traced reply time of the
 *     requests admitted so far that change it (wreply); X is racy when it is after X's
 *     call.  Checked when X is admitted.  Entries whose time the admissions have passed
 *     can race nothing more and are dropped now and then.
 *   - Y called after X, before X's reply: found when Y is admitted.  If X is still in
 *     the scheduler, the scheduler's conflict callback marks it (tbbt__eng_racy_conflict()):
 *     X and Y conflict, for Y changes what X reads; if X's reply has already come, with
 *     differences, and the admissions had not yet passed X's traced reply time then, the
 *     verdict waits in a short list (pend) until they pass it (the differences are real)
 *     or a Y changing the object is admitted first (racy).
 *   - A request without a traced reply changes its objects at an unknown time: it races
 *     the requests in progress at its call, not later ones (as tbbt-compare).
 *
 * All under mu: the reader admits, the receive thread gives the verdicts.
 */
#include "player/engine-int.h"

/* A reply with differences waiting for the verdict. */
struct pend {
    uint64_t obj, call_ns, reply_ns;
    uint32_t prog, proc;
    unsigned diff;              /* RX_DIFF_* | TBBT_ATTRCHECK_* */
    bool racy;
};

/* Every this many admissions, wreply drops the times the admissions have passed. */
#define RACY_SWEEP 65536u

/* wreply holds object keys and reply times in its pointers, nothing allocated. */
G_STATIC_ASSERT(sizeof(gpointer) >= sizeof(uint64_t));
#define U2P(x) GSIZE_TO_POINTER((gsize)(x))
#define P2U(p) ((uint64_t)GPOINTER_TO_SIZE(p))

void tbbt__eng_racy_init(struct eng *e)
{
    e->racy_wreply = g_hash_table_new(g_direct_hash, g_direct_equal);
    e->racy_pend = g_array_new(FALSE, FALSE, sizeof(struct pend));
}

void tbbt__eng_racy_fini(struct eng *e)
{
    if (e->racy_wreply)
        g_hash_table_destroy(e->racy_wreply);
    if (e->racy_pend)
        g_array_free(e->racy_pend, TRUE);
}

static gboolean passed(gpointer key, gpointer value, gpointer arg)
{
    (void)key;
    return P2U(value) <= *(const uint64_t *)arg;    /* value: the latest reply time */
}

/* True if a changes the object whose attributes (or entries) b's reply shows. */
static bool changes_shown(const struct slot *a, const struct slot *b)
{
    for (unsigned i = 0; i < a->nchg && b->shown; i++)
        if (a->chg[i] == b->shown)
            return true;
    return false;
}

void tbbt__eng_racy_conflict(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind,
                             void *arg)
{
    struct eng *e = arg;
    struct slot *h = S(e, holder);
    const struct slot *w = S(e, waiter);
    (void)kind;
    if (w->rec.call_ns < h->reply_key && changes_shown(w, h))
        h->racy = true;
}

void tbbt__eng_racy_admit_locked(struct eng *e, struct slot *s)
{
    uint64_t call = s->rec.call_ns;
    e->racy_horizon = MAX(e->racy_horizon, call);
    if (s->shown && P2U(g_hash_table_lookup(e->racy_wreply, U2P(s->shown))) > call)
        s->racy = true;
    for (unsigned k = 0; k < e->racy_pend->len; k++) {
        struct pend *p = &g_array_index(e->racy_pend, struct pend, k);
        for (unsigned i = 0; i < s->nchg && !p->racy; i++)
            p->racy = s->chg[i] == p->obj && call < p->reply_ns;
    }
    if (s->reply_key != NO_REPLY_KEY && s->reply_key > call) {
        for (unsigned i = 0; i < s->nchg; i++) {
            gpointer key = U2P(s->chg[i]);
            if (P2U(g_hash_table_lookup(e->racy_wreply, key)) < s->reply_key)
                g_hash_table_insert(e->racy_wreply, key, U2P(s->reply_key));
        }
    }
    if (++e->racy_admits % RACY_SWEEP == 0)
        g_hash_table_foreach_remove(e->racy_wreply, passed, &e->racy_horizon);
}

/* Every trace record has been admitted: nothing more can race. */
static bool all_admitted(const struct eng *e)
{
    return e->eof && e->admitted == e->total;
}

void tbbt__eng_racy_verdict_locked(struct eng *e, const struct slot *s, unsigned diff)
{
    if (s->racy) {
        e->c.replies_racy++;
        return;
    }
    if (!diff)
        return;
    if (s->reply_key != NO_REPLY_KEY && s->reply_key > e->racy_horizon && !all_admitted(e)) {
        struct pend p = {.obj = s->shown, .call_ns = s->rec.call_ns, .reply_ns = s->reply_key,
                         .prog = s->rec.prog, .proc = s->rec.proc, .diff = diff};
        g_array_append_val(e->racy_pend, p);
        return;
    }
    tbbt__eng_report_diff(e->rep_rx, s->rec.prog, s->rec.proc, diff);
}

void tbbt__eng_racy_settle_locked(struct eng *e, bool end)
{
    bool all = end || all_admitted(e);
    for (unsigned k = 0; k < e->racy_pend->len;) {
        struct pend *p = &g_array_index(e->racy_pend, struct pend, k);
        if (p->racy) {
            e->c.replies_racy++;
        } else if (all || p->reply_ns <= e->racy_horizon) {
            tbbt__eng_report_diff(e->rep_rx, p->prog, p->proc, p->diff);
        } else {
            k++;
            continue;
        }
        g_array_remove_index_fast(e->racy_pend, k);
    }
}
