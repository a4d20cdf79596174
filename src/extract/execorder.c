/* SPDX-License-Identifier: MIT */
/*
 * Pass B's records in the traced server's execution order (execorder.h): a FIFO of held
 * items in which a record naming a directory entry may move back past records it
 * overlapped, to just before the earliest one it raced with and beat (a record on the
 * same entry, or a listing of its directory that shows its effect).
 */
#include "extract/execorder.h"

#include <glib.h>
#include <string.h>

#include "trace/trace.h"
#include "util/hash.h"

#define DEF_MAX 512         /* largest definition payload (a credential) */

struct item {
    bool op;
    int type;               /* definitions */
    uint32_t ref;
    size_t len;
    uint8_t payload[DEF_MAX];
    struct tbbt_trace_rec rec;      /* records (initialized once, reused) */
    uint64_t keys[2];       /* directory entries named, 0: none */
    bool second[2];         /* key i is (fh2, name2), else (fh, name) */
    bool writes;            /* makes or removes them */
    bool replied;
    uint64_t call, reply;
    uint32_t endpoint;      /* the client connection */
    bool listing;           /* a READDIR(PLUS) page with its entries, answered OK */
    uint32_t ldir;          /* ... of this directory handle */
};

struct tbbt__xorder {
    tbbt__xorder_probe_cb probe;
    tbbt__xorder_same_cb same;
    GPtrArray *held;        /* struct item *, in emission order */
    GPtrArray *spare;       /* items for reuse */
    unsigned max_held;
    uint64_t newest;        /* the latest call time seen */
    uint64_t moved;
    tbbt__xorder_emit_cb emit;
    void *arg;
};

struct tbbt__xorder *tbbt__xorder_new(unsigned max_held, tbbt__xorder_emit_cb emit,
                                      tbbt__xorder_probe_cb probe, void *arg)
{
    struct tbbt__xorder *x = g_new0(struct tbbt__xorder, 1);

    x->probe = probe;
    x->held = g_ptr_array_new();
    x->spare = g_ptr_array_new();
    x->max_held = max_held ? max_held : 1;
    x->emit = emit;
    x->arg = arg;
    return x;
}

static void item_free(gpointer p)
{
    struct item *it = p;

    tbbt_trace_rec_fini(&it->rec);
    g_free(it);
}

void tbbt__xorder_set_same(struct tbbt__xorder *x, tbbt__xorder_same_cb same)
{
    x->same = same;
}

void tbbt__xorder_free(struct tbbt__xorder *x)
{
    if (!x)
        return;
    g_ptr_array_set_free_func(x->held, item_free);
    g_ptr_array_set_free_func(x->spare, item_free);
    g_ptr_array_free(x->held, TRUE);
    g_ptr_array_free(x->spare, TRUE);
    g_free(x);
}

uint64_t tbbt__xorder_moved(const struct tbbt__xorder *x)
{
    return x->moved;
}

static struct item *item_get(struct tbbt__xorder *x)
{
    struct item *it;

    if (x->spare->len)
        return g_ptr_array_steal_index_fast(x->spare, x->spare->len - 1);
    it = g_new0(struct item, 1);
    tbbt_trace_rec_init(&it->rec);
    return it;
}

static uint64_t entry_key(uint32_t dir, const struct tbbt_str *name)
{
    return tbbt_hash(name->p, name->len, (uint64_t)dir * 0x9e3779b97f4a7c15ull + 1) | 1u;
}

/*
 * The directory entries rec names, by handle and name (second[i]: key i is (fh2,
 * name2)), and whether it changes them.
 */
static void keys_of(const struct tbbt_trace_rec *rec, uint64_t keys[2], bool second[2],
                    bool *writes)
{
    bool n1 = TBBT_HAS(rec, TBBT_F_FH) && TBBT_HAS(rec, TBBT_F_NAME) && rec->name.p;
    bool n2 = TBBT_HAS(rec, TBBT_F_FH2) && TBBT_HAS(rec, TBBT_F_NAME2) && rec->name2.p;

    keys[0] = keys[1] = 0;
    second[0] = tbbt_ns_op(rec) == TBBT_NS_OP_LINK;
    second[1] = true;
    *writes = true;
    switch (tbbt_ns_op(rec)) {
    case TBBT_NS_OP_LOOKUP:
        *writes = false;
        /* fall through */
    case TBBT_NS_OP_CREATE: case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_SYMLINK:
    case TBBT_NS_OP_MKNOD: case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR:
        if (n1)
            keys[0] = entry_key(rec->fh, &rec->name);
        break;
    case TBBT_NS_OP_LINK:
        if (n2)
            keys[0] = entry_key(rec->fh2, &rec->name2);
        break;
    case TBBT_NS_OP_RENAME:
        if (n1)
            keys[0] = entry_key(rec->fh, &rec->name);
        if (n2)
            keys[1] = entry_key(rec->fh2, &rec->name2);
        break;
    default:
        break;
    }
}

static bool keyed(const struct item *it)
{
    return it->op && (it->keys[0] || it->keys[1]);
}

static bool is_listing(const struct tbbt_trace_rec *rec)
{
    int op = tbbt_ns_op(rec);
    return (op == TBBT_NS_OP_READDIR || op == TBBT_NS_OP_READDIRPLUS) &&
           TBBT_HAS(rec, TBBT_F_FH) && TBBT_HAS(rec, TBBT_F_ENTRIES) &&
           (rec->flags & TBBT_RF_STATUS) && rec->status == 0;
}

/* Held while a later call may still move before it: names an entry or lists a directory. */
static bool racy_kind(const struct item *it)
{
    return keyed(it) || (it->op && it->listing);
}

/* The entry of listing r named name, or NULL. */
static const struct tbbt_entry *listed(const struct tbbt_trace_rec *r, const struct tbbt_str *name)
{
    for (uint32_t i = 0; i < r->n_entries; i++)
        if (r->entries[i].name.len == name->len &&
            memcmp(r->entries[i].name.p, name->p, name->len) == 0)
            return &r->entries[i];
    return NULL;
}

/* a and b name a common entry and one of them changes it. */
static bool conflict(const struct item *a, const struct item *b)
{
    if (!a->writes && !b->writes)
        return false;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            if (a->keys[i] && a->keys[i] == b->keys[j])
                return true;
    return false;
}

/* ---- what an order predicts for one directory entry ------------------------------------ */

#define ST_OK 0
#define ST_NOENT 2
#define ST_EXIST 17
#define CREATE_UNCHECKED 0

/*
 * The status rec predicts for its entry key k when the entry's existence is *state
 * (1 yes, 0 no), and the state after it; -1 if it cannot tell (another status, an
 * operation that does not depend on the entry alone).
 */
static int predict_on(const struct tbbt_trace_rec *rec, uint64_t k, const uint64_t keys[2],
                      int *state)
{
    bool second = tbbt_ns_op(rec) == TBBT_NS_OP_RENAME && keys[1] == k && keys[0] != k;
    int st;

    switch (tbbt_ns_op(rec)) {
    case TBBT_NS_OP_LOOKUP:
        return *state ? ST_OK : ST_NOENT;
    case TBBT_NS_OP_CREATE:
        if (TBBT_HAS(rec, TBBT_F_CREATEMODE) && rec->createmode == CREATE_UNCHECKED) {
            *state = 1;
            return ST_OK;
        }
        /* GUARDED and EXCLUSIVE fail on an existing name */
        /* fall through */
    case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_SYMLINK: case TBBT_NS_OP_MKNOD:
    case TBBT_NS_OP_LINK:
        st = *state ? ST_EXIST : ST_OK;
        *state = 1;
        return st;
    case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR:
        st = *state ? ST_OK : ST_NOENT;
        *state = 0;
        return st;
    case TBBT_NS_OP_RENAME:
        if (second) {           /* the target: replaced or made; the status is the source's */
            *state = 1;
            return -1;
        }
        st = *state ? ST_OK : ST_NOENT;
        *state = 0;
        return st;
    default:
        return -1;
    }
}

/* True if it's traced status matches what it predicts from *state (updated). */
static bool consistent(const struct item *it, uint64_t k, int *state)
{
    const struct tbbt_trace_rec *r = &it->rec;
    int got;

    if (!(r->flags & TBBT_RF_STATUS) || r->rpc_stat != TBBT_RPC_SUCCESS)
        return false;
    got = predict_on(r, k, it->keys, state);
    return got >= 0 && got == r->status;
}

/*
 * Which order of a (held at ai, called first) and b explains both traced statuses on
 * their common entry, from the model's state of it and the held records before a:
 * 1 only a then b, 2 only b then a, 0 both, neither, or unknown.
 */
static int status_order(struct tbbt__xorder *x, guint ai, const struct item *b)
{
    const struct item *a = g_ptr_array_index(x->held, ai), *first = NULL;
    uint64_t k = 0;
    int base, s, ab, ba;

    for (int i = 0; i < 2 && !k; i++)
        for (int j = 0; j < 2; j++)
            if (a->keys[i] && a->keys[i] == b->keys[j])
                k = a->keys[i];
    if (!k || !x->probe)
        return 0;
    /* the entry's state just before a: the model's, then the held records naming it */
    for (guint i = 0; i < ai && !first; i++) {
        const struct item *r = g_ptr_array_index(x->held, i);
        if (r->op && (r->keys[0] == k || r->keys[1] == k))
            first = r;
    }
    first = first ? first : a;
    base = x->probe(x->arg, &first->rec, first->second[first->keys[0] == k ? 0 : 1]);
    if (base < 0)
        return 0;
    for (guint i = 0; i < ai; i++) {
        const struct item *r = g_ptr_array_index(x->held, i);
        if (r->op && (r->keys[0] == k || r->keys[1] == k) && !consistent(r, k, &base))
            return 0;           /* the records before a do not add up already */
    }
    s = base;
    ab = consistent(a, k, &s) && consistent(b, k, &s);
    s = base;
    ba = consistent(b, k, &s) && consistent(a, k, &s);
    return ab == ba ? 0 : ab ? 1 : 2;
}

/* True if a held record in [from, to), other than the one at skip, names entry key k. */
static bool held_names(const struct tbbt__xorder *x, guint from, guint to, guint skip, uint64_t k)
{
    for (guint i = from; i < to; i++) {
        const struct item *h = g_ptr_array_index(x->held, i);
        if (i != skip && h->op && (h->keys[0] == k || h->keys[1] == k))
            return true;
    }
    return false;
}

/* A READDIR(PLUS) page that holds its directory's whole listing (cookie 0, EOF). */
static bool whole_listing(const struct tbbt_trace_rec *r)
{
    return (!TBBT_HAS(r, TBBT_F_COOKIE) || r->cookie == 0) && TBBT_HAS(r, TBBT_F_EOF) && r->eof;
}

/* What an entry change did to entry j of its record, succeeded as traced. */
enum effect {
    EFF_NONE,
    EFF_REMOVED,            /* REMOVE, RMDIR, RENAME's source: it existed before */
    EFF_MADE_NEW,           /* MKDIR, SYMLINK, MKNOD, LINK, a guarded or exclusive CREATE:
                             * it did not exist before */
    EFF_MADE,               /* an unchecked CREATE, RENAME's target: maybe it did */
};

static enum effect effect_on(const struct item *it, int j)
{
    const struct tbbt_trace_rec *r = &it->rec;
    if (!it->writes || !it->keys[j] || !(r->flags & TBBT_RF_STATUS) ||
        r->rpc_stat != TBBT_RPC_SUCCESS || r->status != ST_OK)
        return EFF_NONE;
    switch (tbbt_ns_op(r)) {
    case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR:
        return EFF_REMOVED;
    case TBBT_NS_OP_RENAME:
        return j == 0 ? EFF_REMOVED : EFF_MADE;
    case TBBT_NS_OP_CREATE:
        return TBBT_HAS(r, TBBT_F_CREATEMODE) && r->createmode != CREATE_UNCHECKED
                   ? EFF_MADE_NEW : EFF_MADE;
    default:
        return EFF_MADE_NEW;
    }
}

/*
 * The effect of c on its entry j (effect_on()) as listing l may show it: EFF_NONE
 * unless the entry is in l's directory and no held record in [from, to) other than
 * the one at skip names it.  Then *e is l's entry of that name, or NULL.
 */
static enum effect listed_effect(const struct tbbt__xorder *x, const struct item *l,
                                 const struct item *c, int j, guint from, guint to, guint skip,
                                 const struct tbbt_entry **e)
{
    enum effect eff = effect_on(c, j);
    bool second = c->second[j];

    if (!eff || (second ? c->rec.fh2 : c->rec.fh) != l->ldir ||
        held_names(x, from, to, skip, c->keys[j]))
        return EFF_NONE;
    *e = listed(&l->rec, second ? &c->rec.name2 : &c->rec.name);
    return eff;
}

/* Listing r shows b's effect eff on b's entry j (r's entry e, or NULL) as b left it. */
static bool shows_after(const struct tbbt__xorder *x, const struct item *r, const struct item *b,
                        int j, enum effect eff, const struct tbbt_entry *e)
{
    int before = x->probe ? x->probe(x->arg, &b->rec, b->second[j]) : -1;

    if (eff == EFF_REMOVED ? !e && whole_listing(&r->rec) && before != 0
                           : e && (eff == EFF_MADE_NEW || before == 0))
        return true;
    return eff == EFF_MADE && e && tbbt_ns_op(&b->rec) == TBBT_NS_OP_RENAME && before != 1 &&
           x->same && x->same(x->arg, &b->rec, e) == 1;
}

/* Listing b shows the entry a had effect eff on (b's entry e, or NULL) as it was before a. */
static bool shows_before(const struct item *b, enum effect eff, const struct tbbt_entry *e)
{
    return eff == EFF_REMOVED ? e != NULL : eff == EFF_MADE_NEW && !e && whole_listing(&b->rec);
}

/*
 * Listing l shows one of the entries c changed as c left it (after) or as it was
 * before c (!after), no held record in [from, to) other than the one at skip naming it.
 */
static bool listing_sees(const struct tbbt__xorder *x, const struct item *l, const struct item *c,
                         guint from, guint to, guint skip, bool after)
{
    for (int j = 0; j < 2; j++) {
        const struct tbbt_entry *e;
        enum effect eff = listed_effect(x, l, c, j, from, to, skip, &e);
        if (eff && (after ? shows_after(x, l, c, j, eff, e) : shows_before(l, eff, e)))
            return true;
    }
    return false;
}

/*
 * A listing r (held at ri) that overlapped b, called after it, shows b's effect on an
 * entry of r's directory (execorder.h), no held record before b naming that entry.
 */
static bool listing_shows(const struct tbbt__xorder *x, guint ri, const struct item *r,
                          guint bi, const struct item *b)
{
    return listing_sees(x, r, b, 0, bi, ri, true);
}

/*
 * The other way round: a listing b, called after a (held at ai) while a was in progress,
 * shows an entry of its directory as it was before a (a name a removed still listed, or
 * a name a made, absent before as a's success proves, missing from a whole listing),
 * and no held record between them names that entry: the server listed the directory
 * before it ran a.
 */
static bool listing_predates(const struct tbbt__xorder *x, guint ai, const struct item *a,
                             guint bi, const struct item *b)
{
    return listing_sees(x, b, a, ai + 1, bi, bi, false);
}

/* What an op item's reply time says about passing it: its reply, else its call. */
static uint64_t done_at(const struct item *it)
{
    return it->replied ? it->reply : it->call;
}

/* b may depend on r, a record called before it: its own client's, or one naming the
 * same entry, answered before b was called. */
static bool needed_by(const struct item *r, const struct item *b)
{
    return (r->endpoint == b->endpoint || (keyed(r) && conflict(r, b))) &&
           done_at(r) <= b->call;
}

/* r, called after a while a was in progress, may depend on a: a call of a's own client
 * (it cannot be: a client waits for its reply) or one naming the same entry. */
static bool needs(const struct item *r, const struct item *a)
{
    return r->endpoint == a->endpoint || (keyed(r) && conflict(r, a));
}

/*
 * The item just appended (b, at the end) and an earlier held record a that the traced
 * server ran after it: b moves just before a (with the definitions between them), or,
 * when b depends on something between them, a moves just after b.  The earliest such a
 * counts; a record b depends on that came before every such a ends the search.
 */
static void move_back(struct tbbt__xorder *x)
{
    GPtrArray *h = x->held;
    guint bi = h->len - 1, at = bi;
    struct item *b = g_ptr_array_index(h, bi);
    bool b_pinned = false;      /* b depends on a record between the candidate and b */

    if (!b->replied)
        return;
    for (guint i = bi; i-- > 0;) {
        const struct item *r = g_ptr_array_index(h, i);
        if (!r->op)
            continue;
        if (b->listing && !keyed(b)) {
            /* a listing moves before a change it does not show yet */
            if (done_at(r) <= b->call && !keyed(r))
                b_pinned |= needed_by(r, b);
            if (keyed(r) && done_at(r) > b->call && listing_predates(x, i, r, bi, b)) {
                at = i;
                break;
            }
            continue;
        }
        if (done_at(r) <= b->call && !keyed(r))
            b_pinned |= needed_by(r, b);
        if (r->listing && done_at(r) > b->call && listing_shows(x, i, r, bi, b)) {
            at = i;
            break;
        }
        if (!keyed(r) || !conflict(r, b) || done_at(r) <= b->call)
            continue;           /* no race with b (a conflict answered before b: kept) */
        int order = status_order(x, i, b);
        if (order == 1)
            break;              /* the call order explains the statuses */
        if (order == 2 || (order == 0 && r->replied && r->reply > b->reply)) {
            at = i;
            break;
        }
    }
    if (at == bi)
        return;
    for (guint i = at + 1; i < bi; i++)
        b_pinned |= needed_by(g_ptr_array_index(h, i), b);
    if (!b_pinned) {
        /* h[at .. bi): definitions, then b, then the records, each in their order */
        GPtrArray *tail = g_ptr_array_sized_new(bi - at + 1);
        for (guint i = at; i < bi; i++)
            if (!((struct item *)g_ptr_array_index(h, i))->op)
                g_ptr_array_add(tail, g_ptr_array_index(h, i));
        g_ptr_array_add(tail, b);
        for (guint i = at; i < bi; i++)
            if (((struct item *)g_ptr_array_index(h, i))->op)
                g_ptr_array_add(tail, g_ptr_array_index(h, i));
        for (guint i = 0; i < tail->len; i++)
            g_ptr_array_index(h, at + i) = g_ptr_array_index(tail, i);
        g_ptr_array_free(tail, TRUE);
        x->moved++;
        return;
    }
    /* b stays: a moves just after it, if nothing between them may depend on a */
    const struct item *a = g_ptr_array_index(h, at);
    for (guint i = at + 1; i < bi; i++) {
        const struct item *r = g_ptr_array_index(h, i);
        if (r->op && needs(r, a))
            return;
    }
    gpointer it = g_ptr_array_index(h, at);
    for (guint i = at; i < bi; i++)
        g_ptr_array_index(h, i) = g_ptr_array_index(h, i + 1);
    g_ptr_array_index(h, bi) = it;
    x->moved++;
}

static int emit_item(struct tbbt__xorder *x, struct item *it)
{
    return it->op ? x->emit(x->arg, &it->rec, 0, 0, NULL, 0)
                  : x->emit(x->arg, NULL, it->type, it->ref, it->len ? it->payload : NULL,
                            it->len);
}

/* Emits the head while no later call can still move before it. */
static int drain(struct tbbt__xorder *x, bool all)
{
    GPtrArray *h = x->held;
    guint n = 0;
    int rc = 0;

    while (n < h->len && rc == 0) {
        struct item *it = g_ptr_array_index(h, n);
        if (!all && racy_kind(it) && it->replied && it->reply > x->newest &&
            h->len - n <= x->max_held)
            break;
        rc = emit_item(x, it);
        n++;
    }
    for (guint i = 0; i < n; i++)
        g_ptr_array_add(x->spare, g_ptr_array_index(h, i));
    g_ptr_array_remove_range(h, 0, n);
    return rc;
}

int tbbt__xorder_put_op(struct tbbt__xorder *x, struct tbbt_trace_rec *rec)
{
    uint64_t keys[2];
    bool second[2], writes, replied = (rec->flags & TBBT_RF_REPLY) && rec->reply_ns;
    bool listing = is_listing(rec);
    struct item *it;

    if (rec->call_ns > x->newest)
        x->newest = rec->call_ns;
    keys_of(rec, keys, second, &writes);
    if (x->held->len == 0 &&
        !((keys[0] || keys[1] || listing) && replied && rec->reply_ns > x->newest))
        return x->emit(x->arg, rec, 0, 0, NULL, 0);     /* nothing to wait for: no copy */
    it = item_get(x);
    it->op = true;
    tbbt_trace_rec_copy(&it->rec, rec);
    it->keys[0] = keys[0];
    it->keys[1] = keys[1];
    it->second[0] = second[0];
    it->second[1] = second[1];
    it->writes = writes;
    it->replied = replied;
    it->call = rec->call_ns;
    it->reply = rec->reply_ns;
    it->endpoint = rec->endpoint;
    it->listing = listing;
    it->ldir = listing ? rec->fh : 0;
    g_ptr_array_add(x->held, it);
    if (keys[0] || keys[1] || listing)
        move_back(x);
    return drain(x, false);
}

int tbbt__xorder_put_def(struct tbbt__xorder *x, int type, uint32_t ref, const void *payload,
                         size_t len)
{
    struct item *it;

    if (x->held->len == 0)
        return x->emit(x->arg, NULL, type, ref, payload, payload ? len : 0);
    it = item_get(x);
    it->op = false;
    it->type = type;
    it->ref = ref;
    it->len = payload ? MIN(len, sizeof(it->payload)) : 0;
    if (it->len)
        memcpy(it->payload, payload, it->len);
    g_ptr_array_add(x->held, it);
    return 0;
}

int tbbt__xorder_flush(struct tbbt__xorder *x)
{
    return drain(x, true);
}
