/* SPDX-License-Identifier: MIT */
/*
 * The pass of tbbt-compare over both traces (compare.h, "Matching").  The original is
 * read record by record; the replay is read lazily into the pending window: a FIFO of
 * replay operations in replay order, each also linked into the list of its key (a hash
 * table of key -> first, last).  The replay's head, the player's start-up (objmap.c),
 * is classified as it is read and never pending.  The frontier F is the largest replay
 * index matched so far (before the first match, the end of the start-up).  For each
 * original operation, in order:
 *
 *   candidates: the key's pending list, in replay order, up to index
 *               hi = F + horizon + 2 * lost, where lost counts the original operations
 *               missing since the last match; the replay is read further (up to hi)
 *               while the key has none
 *   best: the first with no argument difference, else the first with the same uid and
 *         gid, else the first (at most CANDIDATES of the key are looked at; with
 *         credentials in the key, cred.c, all candidates have the original's)
 *
 * then the pending operations that are more than `horizon` behind F *and* were read
 * more than `horizon` original operations ago leave the window: matched ones are freed,
 * the others are extra.  The second condition keeps a replay operation sent early (by
 * up to a few thousand places in FS-dependency order) until the original reaches it,
 * whatever a late one did to F; the first keeps the window open while the original has
 * a run of operations the replay lacks (no match moves F; the replay is read ahead by 2
 * operations per missing one), and a run of replay extras longer than the horizon is
 * crossed at that speed too, so that the two traces always find each other again.  An
 * extra's phase is known when it leaves (the window leaves in replay order, so every
 * later match has a later index): before the first matched replay operation, between
 * two, or after the last one so far; the last kind waits in `tail` until a later match
 * makes it "between" or the end makes it "after".  An extra is a retry when a replay operation of the same key (or,
 * for a LOOKUP, a create of the same directory and name) was matched before it; the
 * matched keys are kept for twice the horizon.  A matched create whose replay did not
 * make the object (a JUKEBOX reply, say) maps it from the retry or the LOOKUP that
 * follows (want): an original operation that names such an object reads the replay
 * ahead until it is mapped.  Every original NFS record also passes through racy.c
 * (before it is matched, and after), which decides where a pair's reply differences
 * count.
 */
#include "compare/compare-int.h"

#include <errno.h>
#include <string.h>

#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "trace/trace.h"
#include "util/util.h"

#define CANDIDATES 16           /* candidates of one key looked at per original operation */

struct keylist {
    uint64_t key;
    struct tbbt_dlist ops;      /* pending operations of the key, in trace order */
};

/* The operation whose klink is l; NULL for NULL. */
#define KEY_OP(l) TBBT_DLIST_ENTRY(l, struct tbbt__cmp_op, klink)

struct tail_ent {
    uint64_t seq;
    uint8_t prog, proc, origin;
    bool retry;
};

struct matcher {
    struct tbbt_compare *c;
    struct tbbt_trace_reader *ra, *rb;
    struct tbbt_trace_rec rec_a, rec_b;
    uint64_t a_seq, b_read;
    bool b_end;
    GQueue fifo;                /* pending replay operations, in replay order */
    GHashTable *keys;           /* &keylist.key -> struct keylist */
    uint64_t frontier;          /* the largest matched replay index (F) */
    uint64_t lost;              /* original operations missing since the last match */
    bool have_match;
    uint64_t first_b, last_b;   /* smallest and largest matched replay index */
    GHashTable *done;           /* matched key -> replay index (as pointers) */
    uint64_t done_sweep;        /* matches until the next sweep of done */
    GArray *tail;               /* struct tail_ent: extras after the last match so far */
    guint tail_head;
    GHashTable *want;           /* replay key -> original ID its object will map */
    GHashTable *awaited;        /* original IDs a matched create made, not mapped yet */
};

static uint64_t horizon(const struct matcher *m)
{
    return m->c->o.horizon;
}

/* ---- the pending window ---------------------------------------------------------------- */

static void key_link(struct matcher *m, struct tbbt__cmp_op *op)
{
    struct keylist *kl = g_hash_table_lookup(m->keys, &op->key);

    if (!kl) {
        kl = g_new0(struct keylist, 1);
        kl->key = op->key;
        g_hash_table_insert(m->keys, &kl->key, kl);
    }
    tbbt_dlist_push(&kl->ops, &op->klink);
}

static void key_unlink(struct matcher *m, struct tbbt__cmp_op *op)
{
    struct keylist *kl = g_hash_table_lookup(m->keys, &op->key);

    g_assert(kl);
    tbbt_dlist_unlink(&kl->ops, &op->klink);
    if (!kl->ops.first)
        g_hash_table_remove(m->keys, &kl->key);
}

static void resolve(struct matcher *m, const struct tbbt__cmp_op *op);

static void count_extra(struct matcher *m, enum tbbt_compare_extra cls, int prog, int proc,
                        uint64_t seq);

/* Reads the next replay record into the window: the new operation, or NULL for a record
 * of the start-up (counted at once), at the end, or on an error (rc set). */
static struct tbbt__cmp_op *read_b(struct matcher *m, int *rc)
{
    struct tbbt__cmp_key k;

    *rc = tbbt_trace_reader_next(m->rb, &m->rec_b);
    if (*rc <= 0) {
        m->b_end = true;
        return NULL;
    }
    int64_t turn = tbbt__cmp_turnaround(&m->c->t, 1, &m->rec_b);
    enum tbbt__cmp_origin origin;
    uint64_t cred = tbbt__cmp_cred(m->c, &m->c->creds[1], m->rb, &m->rec_b, &origin);
    m->c->cnt.ops_replay++;
    if (m->b_read < m->c->map.startup_end_b) {  /* the start-up: before every match */
        const struct tbbt_trace_rec *r = &m->rec_b;
        count_extra(m, tbbt__cmp_classify(CMP_BEFORE, r->prog, r->proc, false, origin),
                    r->prog, r->proc, m->b_read);
        m->b_read++;
        return NULL;
    }
    struct tbbt__cmp_op *op = g_new(struct tbbt__cmp_op, 1);
    tbbt__cmp_op_fill(op, &m->rec_b, m->b_read++, true);
    op->cred = cred;
    op->origin = (uint8_t)origin;
    op->turn_ns = turn;
    op->a_at_read = m->a_seq;
    tbbt__cmp_key_own(&k, op);
    op->key = tbbt__cmp_key_hash(&k);
    key_link(m, op);
    g_queue_push_tail(&m->fifo, op);
    if (g_hash_table_size(m->want))
        resolve(m, op);
    return op;
}

/* ---- extras ---------------------------------------------------------------------------- */

static void count_extra(struct matcher *m, enum tbbt_compare_extra cls, int prog, int proc,
                        uint64_t seq)
{
    struct tbbt_compare *c = m->c;

    c->cnt.extra[cls]++;
    if (cls == TBBT_COMPARE_RETRY)
        tbbt__cmp_count(c, TBBT_COMPARE_EXTRA_RETRY, tbbt__cmp_proc_label(prog, proc),
                        UINT64_MAX, seq);
    else if (cls == TBBT_COMPARE_OTHER)
        tbbt__cmp_count(c, TBBT_COMPARE_EXTRA_OTHER, tbbt__cmp_proc_label(prog, proc),
                        UINT64_MAX, seq);
}

/* True when a replay operation of op's key was matched before op. */
static bool is_retry(const struct matcher *m, const struct tbbt__cmp_op *op)
{
    gpointer v;

    if (!g_hash_table_lookup_extended(m->done, (gpointer)(uintptr_t)op->key, NULL, &v))
        return false;
    return (uint64_t)(uintptr_t)v < op->seq;
}

/* The phase of an extra that leaves the window now. */
static void extra(struct matcher *m, struct tbbt__cmp_op *op)
{
    bool retry = is_retry(m, op);

    key_unlink(m, op);
    if (m->have_match && op->seq > m->last_b) {
        struct tail_ent t = {op->seq, op->prog, op->proc, op->origin, retry};
        g_array_append_val(m->tail, t);
        return;
    }
    enum tbbt__cmp_phase ph = (!m->have_match || op->seq < m->first_b) ? CMP_BEFORE : CMP_DURING;
    count_extra(m, tbbt__cmp_classify(ph, op->prog, op->proc, retry, op->origin), op->prog,
                op->proc, op->seq);
}

/* Classifies the waiting extras before index upto (all with UINT64_MAX) as of phase ph. */
static void flush_tail(struct matcher *m, uint64_t upto, enum tbbt__cmp_phase ph)
{
    while (m->tail_head < m->tail->len) {
        const struct tail_ent *t = &g_array_index(m->tail, struct tail_ent, m->tail_head);
        if (t->seq >= upto)
            break;
        count_extra(m, tbbt__cmp_classify(ph, t->prog, t->proc, t->retry, t->origin), t->prog,
                    t->proc, t->seq);
        m->tail_head++;
    }
    if (m->tail_head == m->tail->len) {
        g_array_set_size(m->tail, 0);
        m->tail_head = 0;
    }
}

/* Lets the pending operations leave the window: below replay index threshold and read
 * before original index a_limit (all with INT64_MAX and UINT64_MAX). */
static void expire(struct matcher *m, int64_t threshold, uint64_t a_limit)
{
    struct tbbt__cmp_op *op;

    while ((op = g_queue_peek_head(&m->fifo)) && (int64_t)op->seq < threshold &&
           op->a_at_read < a_limit) {
        g_queue_pop_head(&m->fifo);
        if (!op->matched)
            extra(m, op);
        tbbt__cmp_op_free(op);
    }
}

/* ---- objects a failed create will make -------------------------------------------------- */

/*
 * A matched create whose replay did not make the object (JUKEBOX, a timeout, EXIST
 * after a lost reply) leaves the original's new object unmapped; the player's retry of
 * the create, or its LOOKUP of the name, names the replay's object.  want maps both keys
 * to the original ID until a replay operation of one of them brings an id_obj.
 */
static bool has_field(const struct tbbt__cmp_op *op, int f)
{
    return (op->present >> f) & 1u;
}

/* Maps the original ID waiting for op's key from op's id_obj. */
static void resolve(struct matcher *m, const struct tbbt__cmp_op *op)
{
    gpointer v;

    if (!has_field(op, TBBT_F_ID_OBJ) || !(op->flags & TBBT_RF_REPLY) || op->status != 0 ||
        !g_hash_table_lookup_extended(m->want, (gpointer)(uintptr_t)op->key, NULL, &v))
        return;
    uint64_t a = (uint64_t)(uintptr_t)v;
    tbbt__cmp_objmap_set(&m->c->map, a, op->id_obj, true);
    g_hash_table_remove(m->want, (gpointer)(uintptr_t)op->key);
    g_hash_table_remove(m->awaited, (gpointer)(uintptr_t)a);
}

static uint64_t lookup_key(const struct tbbt__cmp_op *op);

/* Pending operations of key k that may bring the object. */
static void resolve_pending(struct matcher *m, uint64_t k)
{
    struct keylist *kl = g_hash_table_lookup(m->keys, &k);

    for (struct tbbt__cmp_op *op = kl ? KEY_OP(kl->ops.first) : NULL; op;
         op = KEY_OP(op->klink.next)) {
        resolve(m, op);
        if (!g_hash_table_contains(m->want, (gpointer)(uintptr_t)k))
            return;
    }
}

/* After a matched create a -> b: wait for the object if b did not make it. */
static void await_object(struct matcher *m, const struct tbbt__cmp_op *a,
                         const struct tbbt__cmp_op *b)
{
    if (!tbbt__cmp_makes_object(b) || !has_field(a, TBBT_F_ID_OBJ) || !b->name ||
        tbbt__cmp_objmap_get(&m->c->map, a->id_obj))
        return;
    uint64_t k[2] = {b->key, lookup_key(b)};
    for (int i = 0; i < 2; i++)
        g_hash_table_replace(m->want, (gpointer)(uintptr_t)k[i], (gpointer)(uintptr_t)a->id_obj);
    g_hash_table_add(m->awaited, (gpointer)(uintptr_t)a->id_obj);
    for (int i = 0; i < 2 && g_hash_table_contains(m->awaited, (gpointer)(uintptr_t)a->id_obj);
         i++)
        resolve_pending(m, k[i]);
}

/* True when op names an unmapped object that a matched create made. */
static bool awaits(const struct matcher *m, const struct tbbt__cmp_op *op)
{
    const int f[2] = {TBBT_F_ID, TBBT_F_ID2};
    const uint64_t v[2] = {op->id, op->id2};

    for (int i = 0; i < 2; i++)
        if (has_field(op, f[i]) && !tbbt__cmp_objmap_get(&m->c->map, v[i]) &&
            g_hash_table_contains(m->awaited, (gpointer)(uintptr_t)v[i]))
            return true;
    return false;
}

/* ---- matching ------------------------------------------------------------------------- */

/* The best pending candidate of key k (hash h) up to index hi, or NULL. */
static struct tbbt__cmp_op *find(struct matcher *m, const struct tbbt__cmp_key *k, uint64_t h,
                                 const struct tbbt__cmp_op *a, uint64_t hi)
{
    struct keylist *kl = g_hash_table_lookup(m->keys, &h);
    struct tbbt__cmp_op *best = NULL;
    int best_rank = 3, seen = 0;

    for (struct tbbt__cmp_op *op = kl ? KEY_OP(kl->ops.first) : NULL; op && seen < CANDIDATES;
         op = KEY_OP(op->klink.next)) {
        if (op->seq > hi)
            break;
        if (!tbbt__cmp_key_equal(k, op))
            continue;
        seen++;
        int rank = tbbt__cmp_arg_diffs(m->c, a, op) == 0
                       ? 0 : (a->uid == op->uid && a->gid == op->gid ? 1 : 2);
        if (rank < best_rank) {
            best = op;
            best_rank = rank;
            if (rank == 0)
                break;
        }
    }
    return best;
}

/* The key of a LOOKUP of (dir, name) in prog. */
static uint64_t lookup_key(const struct tbbt__cmp_op *op)
{
    struct tbbt__cmp_key k = {
        .prog = op->prog,
        .proc = op->prog == TBBT_PROG_NFS2 ? NFSPROC_LOOKUP : NFSPROC3_LOOKUP,
        .has = CMP_K_ID | CMP_K_NAME,
        .id = op->id,
        .cred = op->cred,
        .name = op->name,
        .name_len = op->name_len,
    };
    return tbbt__cmp_key_hash(&k);
}

static gboolean done_old(gpointer key, gpointer value, gpointer arg)
{
    (void)key;
    return (uint64_t)(uintptr_t)value < *(const uint64_t *)arg;
}

/* Remembers b's key (and, for a create, its LOOKUP) for the retry test. */
static void remember(struct matcher *m, const struct tbbt__cmp_op *b)
{
    g_hash_table_replace(m->done, (gpointer)(uintptr_t)b->key, (gpointer)(uintptr_t)b->seq);
    if (tbbt__cmp_makes_object(b) && b->name)
        g_hash_table_replace(m->done, (gpointer)(uintptr_t)lookup_key(b),
                             (gpointer)(uintptr_t)b->seq);
    if (m->done_sweep-- > 0)
        return;
    m->done_sweep = horizon(m);
    uint64_t keep = m->b_read > 2 * horizon(m) ? m->b_read - 2 * horizon(m) : 0;
    g_hash_table_foreach_remove(m->done, done_old, &keep);
}

static bool succeeded(const struct tbbt__cmp_op *op)
{
    return (op->flags & TBBT_RF_REPLY) && op->rpc_stat == TBBT_RPC_SUCCESS &&
           (op->flags & TBBT_RF_STATUS) && op->status == 0;
}

/* The objects a matched pair names: a create or LOOKUP that succeeded on both sides
 * proves its object's mapping; other ID fields fill in what is not mapped yet. */
static void map_objects(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                        const struct tbbt__cmp_op *b)
{
    bool proof = (tbbt__cmp_makes_object(a) || a->kind == TBBT_NS_OP_LOOKUP) && succeeded(a) &&
                 succeeded(b);

    if (has_field(a, TBBT_F_ID_OBJ) && has_field(b, TBBT_F_ID_OBJ))
        tbbt__cmp_objmap_set(&c->map, a->id_obj, b->id_obj, proof);
    if (has_field(a, TBBT_F_ID_OLD) && has_field(b, TBBT_F_ID_OLD))
        tbbt__cmp_objmap_set(&c->map, a->id_old, b->id_old, false);
}

static void on_match(struct matcher *m, const struct tbbt__cmp_op *a, struct tbbt__cmp_op *b)
{
    struct tbbt_compare *c = m->c;

    b->matched = true;
    key_unlink(m, b);
    if (!m->have_match) {
        m->have_match = true;
        m->first_b = m->last_b = b->seq;
    } else {
        m->first_b = MIN(m->first_b, b->seq);
        if (b->seq > m->last_b) {
            flush_tail(m, b->seq, CMP_DURING);
            m->last_b = b->seq;
        }
    }
    m->frontier = MAX(m->frontier, b->seq);
    m->lost = 0;
    c->cnt.matched++;
    c->cnt.identical += tbbt__cmp_pair(c, a, b);
    map_objects(c, a, b);
    await_object(m, a, b);
    tbbt__cmp_timing_pair(&c->t, c->o.speed, a, b);
    remember(m, b);
}

static void missing(struct tbbt_compare *c, const struct tbbt__cmp_op *a, bool unmapped)
{
    c->cnt.missing++;
    c->cnt.missing_unmapped += unmapped;
    tbbt__cmp_count(c, TBBT_COMPARE_MISSING, tbbt__cmp_proc_label(a->prog, a->proc), a->seq,
                    UINT64_MAX);
}

/* The original's key in replay IDs; false when an object has no replay counterpart. */
static bool mapped_key(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                       struct tbbt__cmp_key *k)
{
    tbbt__cmp_key_own(k, a);
    if (k->has & CMP_K_ID)
        k->id = tbbt__cmp_objmap_get(&c->map, a->id);
    if (k->has & CMP_K_ID2)
        k->id2 = tbbt__cmp_objmap_get(&c->map, a->id2);
    return (!(k->has & CMP_K_ID) || k->id) && (!(k->has & CMP_K_ID2) || k->id2);
}

static void ref_objects(struct tbbt_compare *c, const struct tbbt__cmp_op *a)
{
    const int f[4] = {TBBT_F_ID, TBBT_F_ID2, TBBT_F_ID_OBJ, TBBT_F_ID_OLD};
    const uint64_t v[4] = {a->id, a->id2, a->id_obj, a->id_old};

    for (int i = 0; i < 4; i++)
        if (a->present & (UINT64_C(1) << f[i]))
            tbbt__cmp_objmap_ref(&c->map, v[i]);
}

/*
 * The keys an original operation may have: its mapped key, and for an ambiguous object
 * (id, else id2: objmap.c) one per other replay object its start paths name.
 */
#define CANDS 8
struct cands {
    unsigned n;
    uint64_t a_id;              /* the ambiguous original object, 0: none */
    uint64_t b_id[CANDS];       /* the replay object each key assumes for it */
    struct tbbt__cmp_key key[CANDS];
    uint64_t hash[CANDS];
};

static void build_cands(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                        const struct tbbt__cmp_key *k, struct cands *cs)
{
    cs->n = 1;
    cs->a_id = 0;
    cs->key[0] = *k;
    cs->hash[0] = tbbt__cmp_key_hash(k);
    for (int second = 0; second < 2 && !cs->a_id; second++) {
        uint64_t aid = second ? a->id2 : a->id;
        const GArray *alts = (k->has & (second ? CMP_K_ID2 : CMP_K_ID))
                                 ? tbbt__cmp_objmap_alts(&c->map, aid) : NULL;
        if (!alts)
            continue;
        cs->a_id = aid;
        cs->b_id[0] = second ? k->id2 : k->id;
        for (guint i = 0; i < alts->len && cs->n < CANDS; i++, cs->n++) {
            uint64_t b = g_array_index(alts, uint64_t, i);
            cs->key[cs->n] = *k;
            *(second ? &cs->key[cs->n].id2 : &cs->key[cs->n].id) = b;
            cs->hash[cs->n] = tbbt__cmp_key_hash(&cs->key[cs->n]);
            cs->b_id[cs->n] = b;
        }
    }
}

static bool in_cands(const struct cands *cs, uint64_t h)
{
    for (unsigned i = 0; i < cs->n; i++)
        if (cs->hash[i] == h)
            return true;
    return false;
}

/* The best candidate of any of the keys (the earliest in the replay); *which: its key. */
static struct tbbt__cmp_op *find_cands(struct matcher *m, const struct cands *cs,
                                       const struct tbbt__cmp_op *a, uint64_t hi,
                                       unsigned *which)
{
    struct tbbt__cmp_op *best = NULL;

    for (unsigned i = 0; i < cs->n; i++) {
        struct tbbt__cmp_op *op = find(m, &cs->key[i], cs->hash[i], a, hi);
        if (op && (!best || op->seq < best->seq)) {
            best = op;
            *which = i;
        }
    }
    return best;
}

/* One original NFS operation a: matched or missing.  0 or a replay read error. */
static int one_nfs(struct matcher *m, struct tbbt__cmp_op *a)
{
    struct tbbt_compare *c = m->c;
    struct tbbt__cmp_op *b;
    struct tbbt__cmp_key k;
    int rc = 0;

    ref_objects(c, a);
    uint64_t hi = m->frontier + horizon(m) + 2 * m->lost;
    while (awaits(m, a) && !m->b_end && m->b_read <= hi) {
        read_b(m, &rc);
        if (rc < 0)
            return rc;
    }
    if (!mapped_key(c, a, &k)) {
        missing(c, a, true);
        return 0;
    }
    struct cands cs;
    unsigned which = 0;
    build_cands(c, a, &k, &cs);
    b = find_cands(m, &cs, a, hi, &which);
    while (!b && !m->b_end && m->b_read <= hi) {
        struct tbbt__cmp_op *n = read_b(m, &rc);
        if (rc < 0)
            return rc;
        if (n && in_cands(&cs, n->key))
            b = find_cands(m, &cs, a, hi, &which);
    }
    if (b && cs.a_id)
        tbbt__cmp_objmap_decide(&c->map, cs.a_id, cs.b_id[which]);
    if (b) {
        on_match(m, a, b);
    } else {
        missing(c, a, false);
        m->lost++;
    }
    if (m->a_seq > horizon(m))
        expire(m, (int64_t)m->frontier - (int64_t)horizon(m), m->a_seq - horizon(m));
    return 0;
}

/* One original record: an NFS operation, or not NFS.  0 or a replay read error. */
static int one_original(struct matcher *m)
{
    struct tbbt_compare *c = m->c;
    struct tbbt__cmp_op a;
    struct tbbt__cmp_changes ch;
    enum tbbt__cmp_origin origin;
    uint64_t seq = m->a_seq++;

    c->cnt.ops_original++;
    int64_t turn = tbbt__cmp_turnaround(&c->t, 0, &m->rec_a);
    if (!tbbt__cmp_is_nfs(m->rec_a.prog)) {
        c->cnt.original_not_nfs++;
        return 0;
    }
    tbbt__cmp_op_fill(&a, &m->rec_a, seq, false);
    a.cred = tbbt__cmp_cred(c, &c->creds[0], m->ra, &m->rec_a, &origin);
    a.turn_ns = turn;
    tbbt__cmp_racy_changes(&m->rec_a, &ch);
    tbbt__cmp_racy_before(c, &m->rec_a, &ch);
    int rc = one_nfs(m, &a);
    tbbt__cmp_racy_after(c, &m->rec_a, &ch);
    return rc;
}

/* The rest of the replay after the original's end: all extra. */
static int drain(struct matcher *m)
{
    int rc = 0;

    while (!m->b_end) {
        read_b(m, &rc);
        if (rc < 0)
            return rc;
        expire(m, INT64_MAX, UINT64_MAX);
    }
    expire(m, INT64_MAX, UINT64_MAX);
    flush_tail(m, UINT64_MAX, CMP_AFTER);
    return 0;
}

static void matcher_fini(struct matcher *m)
{
    struct tbbt__cmp_op *op;

    while ((op = g_queue_pop_head(&m->fifo)))
        tbbt__cmp_op_free(op);
    if (m->keys)
        g_hash_table_destroy(m->keys);
    if (m->done)
        g_hash_table_destroy(m->done);
    if (m->tail)
        g_array_free(m->tail, TRUE);
    if (m->want)
        g_hash_table_destroy(m->want);
    if (m->awaited)
        g_hash_table_destroy(m->awaited);
    tbbt_trace_rec_fini(&m->rec_a);
    tbbt_trace_rec_fini(&m->rec_b);
    if (m->ra)
        tbbt_trace_reader_close(m->ra);
    if (m->rb)
        tbbt_trace_reader_close(m->rb);
}

int tbbt__cmp_match(struct tbbt_compare *c, char *err, size_t errlen)
{
    struct matcher m = {.c = c};
    int rc;

    g_queue_init(&m.fifo);
    tbbt_trace_rec_init(&m.rec_a);
    tbbt_trace_rec_init(&m.rec_b);
    m.keys = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    m.done = g_hash_table_new(g_direct_hash, g_direct_equal);
    m.done_sweep = c->o.horizon;
    m.tail = g_array_new(FALSE, FALSE, sizeof(struct tail_ent));
    m.want = g_hash_table_new(g_direct_hash, g_direct_equal);
    m.awaited = g_hash_table_new(g_direct_hash, g_direct_equal);
    m.frontier = c->map.startup_end_b;
    m.ra = tbbt__cmp_open("original", c->o.trace_a, err, errlen);
    m.rb = m.ra ? tbbt__cmp_open("replay", c->o.trace_b, err, errlen) : NULL;
    if (!m.ra || !m.rb) {
        matcher_fini(&m);
        return -EIO;
    }
    while ((rc = tbbt_trace_reader_next(m.ra, &m.rec_a)) == 1) {
        if ((rc = one_original(&m)) < 0) {
            tbbt__cmp_read_error(m.rb, "replay", c->o.trace_b, rc, err, errlen);
            goto out;
        }
    }
    if (rc < 0) {
        tbbt__cmp_read_error(m.ra, "original", c->o.trace_a, rc, err, errlen);
        goto out;
    }
    tbbt__cmp_racy_flush(c);
    if ((rc = drain(&m)) < 0)
        tbbt__cmp_read_error(m.rb, "replay", c->o.trace_b, rc, err, errlen);
out:
    matcher_fini(&m);
    return rc;
}
