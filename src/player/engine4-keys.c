/* SPDX-License-Identifier: MIT */
/*
 * engine4's ordering (engine4.h "Ordering"): the keys each record reads and writes, its
 * dependencies on the live earlier holders of conflicting keys, and the heap of records
 * whose dependencies are done.
 */
#include <string.h>

#include "player/engine4-int.h"
#include "trace/opkind.h"
#include "util/hash.h"

/* ------------------------------------------------------------------ the ready heap */

void tbbt__e4_heap_push(struct e4 *e, uint64_t seq)
{
    if (e->nheap == e->cheap) {
        e->cheap = e->cheap ? 2 * e->cheap : 256;
        e->heap = g_renew(uint64_t, e->heap, e->cheap);
    }
    size_t i = e->nheap++;
    while (i > 0 && e->heap[(i - 1) / 2] > seq) {
        e->heap[i] = e->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    e->heap[i] = seq;
}

uint64_t tbbt__e4_heap_pop(struct e4 *e)
{
    uint64_t top = e->heap[0], last = e->heap[--e->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        uint64_t v = last;
        if (l < e->nheap && e->heap[l] < v)
            m = l, v = e->heap[l];
        if (l + 1 < e->nheap && e->heap[l + 1] < v)
            m = l + 1;
        if (m == i)
            break;
        e->heap[i] = e->heap[m];
        i = m;
    }
    if (e->nheap)
        e->heap[i] = last;
    return top;
}

/* ------------------------------------------------------------------ dependency keys */

enum { KT_CLIENT = 1, KT_SESSION, KT_FH, KT_NAME, KT_STATEID, KT_OWNER, KT_PAGE };

static uint64_t key_of(int type, uint64_t a, const void *bytes, size_t n)
{
    uint64_t seed = a * 0x9e3779b97f4a7c15ull + (uint64_t)type;
    uint64_t h = tbbt_hash(bytes ? bytes : "", bytes ? n : 0, seed);
    return h ? h : 1;
}

struct keyset {
    uint64_t k[2 * TBBT_OP4_MAX + 16];
    bool w[2 * TBBT_OP4_MAX + 16];
    unsigned n;
    bool barrier;               /* an object it cannot name: it waits for all before it */
};

static void kadd(struct keyset *ks, uint64_t k, bool w)
{
    for (unsigned i = 0; i < ks->n; i++)
        if (ks->k[i] == k) {
            ks->w[i] |= w;
            return;
        }
    if (ks->n < G_N_ELEMENTS(ks->k)) {
        ks->k[ks->n] = k;
        ks->w[ks->n++] = w;
    } else {
        ks->barrier = true;     /* too many to list */
    }
}

static uint64_t name_key(bool dir_known, uint32_t dir, const struct tbbt_str *name)
{
    return key_of(KT_NAME, dir_known ? dir + 1ull : 0, name->p, name->len);
}

/* Does the operation change the object current when it runs? */
static bool writes_cur(uint32_t op)
{
    switch (op) {
    case OP_WRITE: case OP_SETATTR: case OP_COMMIT: case OP_CREATE: case OP_REMOVE:
    case OP_RENAME: case OP_LINK: case OP_OPEN: case OP_CLOSE: case OP_LOCK: case OP_LOCKU:
    case OP_OPEN_DOWNGRADE: case OP_OPEN_CONFIRM: case OP_ALLOCATE: case OP_DEALLOCATE:
        return true;
    default:
        return false;
    }
}

/* Operations that need no current object (or set it without reading one). */
static bool no_cur(uint32_t op)
{
    switch (op) {
    case OP_PUTFH: case OP_PUTROOTFH: case OP_PUTPUBFH: case OP_SEQUENCE: case OP_SETCLIENTID:
    case OP_SETCLIENTID_CONFIRM: case OP_RENEW: case OP_EXCHANGE_ID: case OP_CREATE_SESSION:
    case OP_DESTROY_SESSION: case OP_DESTROY_CLIENTID: case OP_RECLAIM_COMPLETE:
    case OP_RELEASE_LOCKOWNER: case OP_FREE_STATEID: case OP_TEST_STATEID: case OP_SAVEFH:
    case OP_RESTOREFH: case OP_GETFH: case OP_SECINFO_NO_NAME:
        return true;
    default:
        return false;
    }
}

/* OPEN4_CREATE (the how member: opentype | createmode << 4 | claim << 8) */
static bool opens_create(const struct tbbt_op4 *o)
{
    return TBBT_O4_HAS(o, HOW) && (o->how & 15) == OPEN4_CREATE;
}

static bool seqid_op(uint32_t op)
{
    return op == OP_OPEN || op == OP_OPEN_CONFIRM || op == OP_OPEN_DOWNGRADE || op == OP_CLOSE ||
           op == OP_LOCK || op == OP_LOCKU;
}

static uint64_t owner_key(uint64_t clientid, const struct tbbt_str *owner)
{
    return key_of(KT_OWNER, clientid, owner->p, owner->len);
}

/* A name change writes the object its name held (known from a GETFH after a look-up of
 * the name): a directory's removal after the changes inside it. */
static void name_obj_write(struct e4 *e, struct keyset *ks, uint64_t nk, bool w)
{
    gpointer ref = g_hash_table_lookup(e->name_obj, &nk);
    if (ref)
        kadd(ks, key_of(KT_FH, GPOINTER_TO_UINT(ref) - 1u, NULL, 0), w);
}

/* The keys record rec reads and writes (engine4.h "Ordering"). */
static void keys_of(struct e4 *e, const struct tbbt_trace_rec *rec, struct keyset *ks)
{
    uint32_t cur = 0, saved = 0;
    bool known = false, saved_known = false, named = false, saved_named = false;
    uint64_t cur_name = 0, saved_name = 0, client = 0;
    bool has_client = false;

    ks->n = 0;
    ks->barrier = false;
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        uint32_t op = o->op;
        /* the object current at the op (an OPEN by name: its directory, changed only
         * by a create) */
        if (!no_cur(op)) {
            bool w = writes_cur(op) && !(op == OP_OPEN && TBBT_O4_HAS(o, NAME) &&
                                         !opens_create(o));
            if (known)
                kadd(ks, key_of(KT_FH, cur, NULL, 0), w);
            else if (named)
                kadd(ks, cur_name, w);
            else
                ks->barrier = true;
        }
        /* READDIR pages of a directory go one after the other (a continuation starts
         * where the live page before it ended) */
        if (op == OP_READDIR && (known || named))
            kadd(ks, key_of(KT_PAGE, known ? cur + 1ull : cur_name, NULL, 0), true);
        /* names, and the objects a name change removes or moves */
        if (TBBT_O4_HAS(o, NAME) && (op == OP_LOOKUP || op == OP_OPEN || op == OP_CREATE ||
                                      op == OP_REMOVE || op == OP_LINK || op == OP_RENAME)) {
            uint64_t nk = name_key(known, cur, &o->name);
            if (op == OP_RENAME) {
                bool renamed = TBBT_O4_HAS(o, STATUS) && o->status == NFS4_OK;
                nk = name_key(saved_known, saved, &o->name);
                kadd(ks, nk, true);
                name_obj_write(e, ks, nk, true);
                if (TBBT_O4_HAS(o, NAME2)) {
                    uint64_t nk2 = name_key(known, cur, &o->name2);
                    kadd(ks, nk2, true);
                    name_obj_write(e, ks, nk2, true);
                    gpointer ref = g_hash_table_lookup(e->name_obj, &nk);
                    if (ref && renamed)
                        g_hash_table_replace(e->name_obj, g_memdup2(&nk2, 8), ref);
                }
                if (renamed)
                    g_hash_table_remove(e->name_obj, &nk);
            } else if (op == OP_REMOVE || op == OP_LINK) {
                kadd(ks, nk, true);
                name_obj_write(e, ks, nk, true);
                if (op == OP_REMOVE && TBBT_O4_HAS(o, STATUS) && o->status == NFS4_OK)
                    g_hash_table_remove(e->name_obj, &nk);
            } else {
                kadd(ks, nk, op == OP_CREATE || op == OP_REMOVE || op == OP_LINK ||
                             (op == OP_OPEN && opens_create(o)));
            }
            if (op == OP_LINK && saved_known)
                kadd(ks, key_of(KT_FH, saved, NULL, 0), true);
        }
        /* stateids */
        if (TBBT_O4_HAS(o, STATEID)) {
            bool changes = seqid_op(op) || op == OP_FREE_STATEID;
            uint64_t sk = key_of(KT_STATEID, 0, o->stateid + 4, 12);
            gpointer ok = NULL;
            kadd(ks, sk, changes);
            if (rec->minor == 0 && seqid_op(op) &&
                g_hash_table_lookup_extended(e->owner_of, &sk, NULL, &ok))
                kadd(ks, GPOINTER_TO_SIZE(ok), true);
        }
        if (TBBT_O4_HAS(o, NEW_STATEID)) {
            uint64_t sk = key_of(KT_STATEID, 0, o->new_stateid + 4, 12);
            kadd(ks, sk, true);
            if (rec->minor == 0 && TBBT_O4_HAS(o, OWNER) && TBBT_O4_HAS(o, CLIENTID))
                g_hash_table_replace(e->owner_of, g_memdup2(&sk, 8),
                                     GSIZE_TO_POINTER(owner_key(o->clientid, &o->owner)));
        }
        if (rec->minor == 0 && TBBT_O4_HAS(o, OWNER) && TBBT_O4_HAS(o, CLIENTID) &&
            seqid_op(op))
            kadd(ks, owner_key(o->clientid, &o->owner), true);
        /* client and session */
        if (TBBT_O4_HAS(o, CLIENTID)) {
            client = o->clientid;
            has_client = true;
        }
        if (TBBT_O4_HAS(o, SESSION)) {
            uint64_t sk = key_of(KT_SESSION, 0, o->session, 16);
            gpointer cid = NULL;
            bool lifecycle = op == OP_CREATE_SESSION || op == OP_DESTROY_SESSION;
            kadd(ks, sk, lifecycle);
            if (op == OP_CREATE_SESSION && TBBT_O4_HAS(o, CLIENTID))
                g_hash_table_replace(e->sess_client, g_memdup2(&sk, 8),
                                     g_memdup2(&o->clientid, 8));
            else if (!has_client && g_hash_table_lookup_extended(e->sess_client, &sk, NULL, &cid)) {
                client = *(uint64_t *)cid;
                has_client = true;
            }
        }
        bool lifecycle = op == OP_SETCLIENTID || op == OP_SETCLIENTID_CONFIRM ||
                         op == OP_EXCHANGE_ID || op == OP_CREATE_SESSION ||
                         op == OP_DESTROY_CLIENTID;
        if (has_client)
            kadd(ks, key_of(KT_CLIENT, client, NULL, 0), lifecycle);
        else if (lifecycle)
            ks->barrier = true;
        /* what is current after it */
        switch (op) {
        case OP_PUTFH: case OP_GETFH:
            if (TBBT_O4_HAS(o, FH)) {
                if (op == OP_GETFH && named && !known)     /* the name's object */
                    g_hash_table_replace(e->name_obj, g_memdup2(&cur_name, 8),
                                         GUINT_TO_POINTER(o->fh + 1u));
                cur = o->fh;
                known = true;
                named = false;
                if (op == OP_GETFH)
                    kadd(ks, key_of(KT_FH, cur, NULL, 0), true);
            }
            break;
        case OP_SAVEFH:
            saved = cur, saved_known = known, saved_named = named, saved_name = cur_name;
            break;
        case OP_RESTOREFH:
            cur = saved, known = saved_known, named = saved_named, cur_name = saved_name;
            break;
        case OP_PUTROOTFH: case OP_PUTPUBFH:
            cur_name = key_of(KT_NAME, 0, "/", 1);
            known = false;
            named = true;
            break;
        case OP_LOOKUP: case OP_OPEN: case OP_CREATE:
            if (TBBT_O4_HAS(o, NAME)) {
                cur_name = name_key(known, cur, &o->name);
                named = true;
                gpointer ref = g_hash_table_lookup(e->name_obj, &cur_name);
                known = ref != NULL && op != OP_CREATE;    /* a create makes a new one */
                cur = ref ? GPOINTER_TO_UINT(ref) - 1u : 0;
            } else {
                named = false;
                known = op == OP_OPEN && known;     /* OPEN by handle: the same file */
            }
            if (op == OP_CREATE || (op == OP_OPEN && opens_create(o)))
                known = false;
            break;
        case OP_LOOKUPP: case OP_OPENATTR:
            known = named = false;
            break;
        default:
            break;
        }
    }
}

/*
 * The keys of an NFSv2/v3 record of a mixed trace, in the same key space as the
 * COMPOUNDs' (both name objects by trace handle references, which the trace shares
 * between versions): its handle's object (read, or written by the procedures that
 * change it), the (directory, name) entries it looks up, makes or removes, the objects
 * a name change removes or moves, the handle a create makes, READDIR pages in order.
 */
static void keys_of_v3(struct e4 *e, const struct tbbt_trace_rec *rec, struct keyset *ks)
{
    enum tbbt_ns_op op = tbbt_ns_op(rec);
    bool fh = TBBT_HAS(rec, TBBT_F_FH), fh2 = TBBT_HAS(rec, TBBT_F_FH2);
    bool name = TBBT_HAS(rec, TBBT_F_NAME), name2 = TBBT_HAS(rec, TBBT_F_NAME2);
    uint64_t nk = fh && name ? name_key(true, rec->fh, &rec->name) : 0;
    bool ok = (rec->flags & TBBT_RF_STATUS) && rec->status == 0;   /* the name changed */

    ks->n = 0;
    ks->barrier = false;
    bool w = false;
    switch (op) {
    case TBBT_NS_OP_WRITE: case TBBT_NS_OP_SETATTR: case TBBT_NS_OP_CREATE:
    case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_SYMLINK: case TBBT_NS_OP_MKNOD:
    case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR: case TBBT_NS_OP_RENAME:
    case TBBT_NS_OP_LINK:
        w = true;
        break;
    default:
        break;
    }
    if (fh)
        kadd(ks, key_of(KT_FH, rec->fh, NULL, 0), w);
    if ((op == TBBT_NS_OP_READDIR || op == TBBT_NS_OP_READDIRPLUS) && fh)
        kadd(ks, key_of(KT_PAGE, rec->fh + 1ull, NULL, 0), true);
    if (nk) {
        kadd(ks, nk, op != TBBT_NS_OP_LOOKUP);
        if (op == TBBT_NS_OP_REMOVE || op == TBBT_NS_OP_RMDIR || op == TBBT_NS_OP_RENAME)
            name_obj_write(e, ks, nk, true);
    }
    if (op == TBBT_NS_OP_RENAME && fh2 && name2) {
        uint64_t nk2 = name_key(true, rec->fh2, &rec->name2);
        kadd(ks, key_of(KT_FH, rec->fh2, NULL, 0), true);
        kadd(ks, nk2, true);
        name_obj_write(e, ks, nk2, true);
        gpointer ref = nk && ok ? g_hash_table_lookup(e->name_obj, &nk) : NULL;
        if (ref)
            g_hash_table_replace(e->name_obj, g_memdup2(&nk2, 8), ref);
    }
    if (op == TBBT_NS_OP_LINK && fh2 && name2) {
        kadd(ks, key_of(KT_FH, rec->fh2, NULL, 0), true);
        kadd(ks, name_key(true, rec->fh2, &rec->name2), true);
    }
    if (nk && ok && (op == TBBT_NS_OP_REMOVE || op == TBBT_NS_OP_RMDIR || op == TBBT_NS_OP_RENAME))
        g_hash_table_remove(e->name_obj, &nk);
    if (TBBT_HAS(rec, TBBT_F_NEW_FH) && op != TBBT_NS_OP_MNT) {
        kadd(ks, key_of(KT_FH, rec->new_fh, NULL, 0), op != TBBT_NS_OP_LOOKUP);
        if (nk)
            g_hash_table_replace(e->name_obj, g_memdup2(&nk, 8),
                                 GUINT_TO_POINTER(rec->new_fh + 1u));
    }
}

/* Drops the keys that no live record holds any more (every SWEEP_EVERY admissions):
 * the table stays the size of the window's keys, not of the trace's. */
#define SWEEP_EVERY 65536u
static gboolean dead_key(gpointer k, gpointer v, gpointer arg)
{
    struct e4 *e = arg;
    const struct holders *h = v;
    (void)k;
    if (h->writer && live(e, h->writer - 1))
        return FALSE;
    for (guint j = 0; j < h->readers->len; j++)
        if (live(e, g_array_index(h->readers, uint64_t, j)))
            return FALSE;
    return TRUE;
}

void tbbt__e4_admit(struct e4 *e, struct prec *p)
{
    if (p->seq && p->seq % SWEEP_EVERY == 0)
        g_hash_table_foreach_remove(e->keys, dead_key, e);
    struct keyset ks;
    uint64_t deps[64];
    unsigned nd = 0;
    bool overflow = false;

    if (p->v3)
        keys_of_v3(e, &p->rec, &ks);
    else
        keys_of(e, &p->rec, &ks);
    if (!ks.barrier && e->barrier && live(e, e->barrier - 1))
        deps[nd++] = e->barrier - 1;
    for (unsigned i = 0; i < ks.n; i++) {
        struct holders *h = g_hash_table_lookup(e->keys, &ks.k[i]);
        if (!h) {
            h = g_new0(struct holders, 1);
            h->readers = g_array_new(FALSE, FALSE, sizeof(uint64_t));
            g_hash_table_insert(e->keys, g_memdup2(&ks.k[i], 8), h);
        }
        if (h->writer && live(e, h->writer - 1)) {
            if (nd < G_N_ELEMENTS(deps))
                deps[nd++] = h->writer - 1;
            else
                overflow = true;
        }
        if (ks.w[i]) {
            for (guint j = 0; j < h->readers->len; j++) {
                uint64_t r = g_array_index(h->readers, uint64_t, j);
                if (!live(e, r))
                    continue;
                if (nd < G_N_ELEMENTS(deps))
                    deps[nd++] = r;
                else
                    overflow = true;
            }
            g_array_set_size(h->readers, 0);
            h->writer = p->seq + 1;
        } else {
            if (h->readers->len >= MAX(h->compact_at, 32u)) {   /* drop the finished */
                guint k = 0;
                for (guint j = 0; j < h->readers->len; j++) {
                    uint64_t r = g_array_index(h->readers, uint64_t, j);
                    if (live(e, r))
                        g_array_index(h->readers, uint64_t, k++) = r;
                }
                g_array_set_size(h->readers, k);
                h->compact_at = 2 * k;      /* amortized: live readers may be many */
            }
            g_array_append_val(h->readers, p->seq);
        }
    }
    if (overflow || ks.barrier) {   /* it waits for everything before it */
        if (ks.barrier)             /* ... and everything after it for it */
            e->barrier = p->seq + 1;
        nd = 0;
        for (uint64_t s = e->oldest; s < p->seq; s++)
            if (live(e, s)) {
                g_array_append_val(S(e, s)->succ, p->seq);
                p->ndeps++;
            }
    }
    for (unsigned i = 0; i < nd; i++) {
        bool dup = false;
        for (unsigned j = 0; j < i && !dup; j++)
            dup = deps[j] == deps[i];
        if (dup)
            continue;
        g_array_append_val(S(e, deps[i])->succ, p->seq);
        p->ndeps++;
    }
    if (!p->ndeps)
        tbbt__e4_heap_push(e, p->seq);
}


static void holders_free(gpointer p)
{
    struct holders *h = p;
    g_array_free(h->readers, TRUE);
    g_free(h);
}

void tbbt__e4_keys_init(struct e4 *e)
{
    e->keys = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, holders_free);
    e->owner_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    e->sess_client = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    e->name_obj = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

void tbbt__e4_keys_fini(struct e4 *e)
{
    g_hash_table_destroy(e->keys);
    g_hash_table_destroy(e->owner_of);
    g_hash_table_destroy(e->sess_client);
    g_hash_table_destroy(e->name_obj);
    g_free(e->heap);
}
