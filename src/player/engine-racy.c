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
 *     the scheduler, its conflict callback marks it (engine.c, add_dep()); if X's reply
 *     has already come, with differences, and the admissions had not yet passed X's
 *     traced reply time then, the verdict waits in a short list (pend) until they pass
 *     it (the differences are real) or a Y changing the object is admitted first (racy).
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

void tbbt__eng_racy_init(struct eng *e)
{
    e->racy_wreply = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
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
    (void)value;
    const uint64_t *kv = key;   /* [0] the object, [1] the latest reply time */
    return kv[1] <= *(const uint64_t *)arg;
}

void tbbt__eng_racy_admit_locked(struct eng *e, struct slot *s)
{
    uint64_t call = s->rec.call_ns;
    e->racy_horizon = MAX(e->racy_horizon, call);
    if (s->shown) {
        const uint64_t *kv = g_hash_table_lookup(e->racy_wreply, &s->shown);
        if (kv && kv[1] > call)
            s->racy = true;
    }
    for (unsigned k = 0; k < e->racy_pend->len; k++) {
        struct pend *p = &g_array_index(e->racy_pend, struct pend, k);
        for (unsigned i = 0; i < s->nchg && !p->racy; i++)
            p->racy = s->chg[i] == p->obj && call < p->reply_ns;
    }
    if (s->reply_key != NO_REPLY_KEY && s->reply_key > call) {
        for (unsigned i = 0; i < s->nchg; i++) {
            uint64_t *kv = g_hash_table_lookup(e->racy_wreply, &s->chg[i]);
            if (!kv) {
                kv = g_new(uint64_t, 2);
                kv[0] = s->chg[i];
                kv[1] = 0;
                g_hash_table_add(e->racy_wreply, kv);
            }
            kv[1] = MAX(kv[1], s->reply_key);
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
