/* SPDX-License-Identifier: MIT */
/*
 * The live state of NFSv4 replay (nfs4state.h): hash tables from traced values to live
 * ones.  RFC 7530 9.1.7 (which errors leave an owner's seqid), RFC 8881 2.10.6.1
 * (a slot's sequence id starts at 1 and advances once per answered SEQUENCE).
 */
#include "player/nfs4state.h"

#include "trace/compound.h"

#include <string.h>

struct tbbt_nfs4_dir {
    uint64_t cookie;
    char verf[NFS4_VERIFIER_SIZE];
};

struct tbbt_nfs4_state {
    GHashTable *fhs;        /* GUINT_TO_POINTER(ref + 1) -> struct tbbt_nfs4_fh */
    GHashTable *clients;    /* uint64_t * -> struct tbbt_nfs4_client (key inside) */
    GHashTable *sessions;   /* its traced id (16 bytes) -> struct tbbt_nfs4_session */
    GHashTable *owners;     /* its key (clientid, bytes) -> struct owner_entry */
    GHashTable *sids;       /* its other (12 bytes) -> struct tbbt_nfs4_sid */
    GHashTable *attrs;      /* ref + 1 -> struct tbbt_fattr (traced) */
    GHashTable *dirs;       /* ref + 1 -> struct tbbt_nfs4_dir */
    GPtrArray *exports;     /* struct nfs4_export (tbbt_nfs4_export_add()) */
    char *client_tag;       /* tbbt_nfs4_client_tag_set(), NULL: none */
    bool root_known;        /* the traced pseudo root's reference is known */
    uint32_t root_ref;
};

/* A traced export and the live directory that stands for it (tbbt_nfs4_export_add()). */
struct nfs4_export {
    char **comps;           /* its pseudo path's components; NULL: any one */
    char **live_comps;      /* the pseudo path of the live directory */
    struct tbbt_nfs4_fh live;
};

static void export_free(gpointer p)
{
    struct nfs4_export *x = p;
    g_strfreev(x->comps);
    g_strfreev(x->live_comps);
    g_free(x);
}

struct tbbt_nfs4_state *tbbt_nfs4_state_new(void)
{
    struct tbbt_nfs4_state *st = g_new0(struct tbbt_nfs4_state, 1);

    st->fhs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    st->clients = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    st->sessions = g_hash_table_new_full(tbbt_op4_session_hash, tbbt_op4_session_equal, NULL, g_free);
    st->owners = g_hash_table_new_full(tbbt_op4_owner_hash, tbbt_op4_owner_equal, NULL, g_free);
    st->sids = g_hash_table_new_full(tbbt_op4_other_hash, tbbt_op4_other_equal, NULL, g_free);
    st->attrs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    st->dirs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    st->exports = g_ptr_array_new_with_free_func(export_free);
    return st;
}

void tbbt_nfs4_state_free(struct tbbt_nfs4_state *st)
{
    if (!st)
        return;
    g_hash_table_destroy(st->fhs);
    g_hash_table_destroy(st->clients);
    g_hash_table_destroy(st->sessions);
    g_hash_table_destroy(st->owners);
    g_hash_table_destroy(st->sids);
    g_hash_table_destroy(st->attrs);
    g_hash_table_destroy(st->dirs);
    g_ptr_array_free(st->exports, TRUE);
    g_free(st->client_tag);
    g_free(st);
}

#define REFKEY(ref) GUINT_TO_POINTER((ref) + 1u)

/* ------------------------------------------------------------------ client id strings */

void tbbt_nfs4_client_tag_set(struct tbbt_nfs4_state *st, const char *tag)
{
    g_free(st->client_tag);
    st->client_tag = tag && *tag ? g_strdup(tag) : NULL;
}

const char *tbbt_nfs4_client_tag(const struct tbbt_nfs4_state *st)
{
    return st->client_tag ? st->client_tag : "";
}

/* ------------------------------------------------------------------ the traced exports */

void tbbt_nfs4_export_add(struct tbbt_nfs4_state *st, char *const *comps,
                          char *const *live_comps, const struct tbbt_nfs4_fh *live)
{
    struct nfs4_export *x = g_new0(struct nfs4_export, 1);
    x->comps = comps ? g_strdupv((char **)comps) : NULL;
    x->live_comps = live_comps ? g_strdupv((char **)live_comps) : NULL;
    x->live = *live;
    g_ptr_array_add(st->exports, x);
}

/* names[0..k) are exactly the components comps (NULL-terminated). */
static bool names_are(const struct tbbt_str *const *names, uint32_t k, char *const *comps)
{
    uint32_t i = 0;
    for (; comps && comps[i] && i < k; i++)
        if (names[i]->len != strlen(comps[i]) || memcmp(names[i]->p, comps[i], names[i]->len))
            return false;
    return comps && i == k && !comps[i];
}

uint32_t tbbt_nfs4_export_match(const struct tbbt_nfs4_state *st,
                                const struct tbbt_str *const *names, uint32_t n,
                                const struct tbbt_nfs4_fh **live, bool *same)
{
    uint32_t best = 0;
    const struct nfs4_export *won = NULL;
    for (guint i = 0; i < st->exports->len; i++) {
        const struct nfs4_export *x = g_ptr_array_index(st->exports, i);
        uint32_t k = 0;
        if (!x->comps) {
            if (n >= 1 && best == 0) {      /* the wildcard: one component, lowest */
                best = 1;
                won = x;
            }
            continue;
        }
        while (x->comps[k] && k < n && names[k]->len == strlen(x->comps[k]) &&
               memcmp(names[k]->p, x->comps[k], names[k]->len) == 0)
            k++;
        if (!x->comps[k] && k > 0 && (k > best || (won && !won->comps))) {
            best = k;
            won = x;
        }
    }
    if (won) {
        *live = &won->live;
        *same = names_are(names, best, won->live_comps);
    }
    return best;
}

void tbbt_nfs4_pseudo_root_note(struct tbbt_nfs4_state *st, uint32_t ref)
{
    st->root_known = true;
    st->root_ref = ref;
}

bool tbbt_nfs4_pseudo_root(const struct tbbt_nfs4_state *st, uint32_t *ref)
{
    *ref = st->root_ref;
    return st->root_known;
}

/* ------------------------------------------------------------------ handles */

void tbbt_nfs4_fh_learn(struct tbbt_nfs4_state *st, uint32_t ref, const void *fh, uint32_t len)
{
    struct tbbt_nfs4_fh *f = g_new0(struct tbbt_nfs4_fh, 1);

    f->len = len > NFS4_FHSIZE ? NFS4_FHSIZE : len;
    if (f->len)     /* an empty handle may come without a buffer */
        memcpy(f->data, fh, f->len);
    g_hash_table_replace(st->fhs, REFKEY(ref), f);
}

const struct tbbt_nfs4_fh *tbbt_nfs4_fh_live(const struct tbbt_nfs4_state *st, uint32_t ref)
{
    return g_hash_table_lookup(st->fhs, REFKEY(ref));
}

/* ------------------------------------------------------------------ clients */

struct tbbt_nfs4_client *tbbt_nfs4_client_get(struct tbbt_nfs4_state *st, uint64_t traced,
                                              bool add)
{
    struct tbbt_nfs4_client *c = g_hash_table_lookup(st->clients, &traced);

    if (c || !add)
        return c;
    c = g_new0(struct tbbt_nfs4_client, 1);
    c->traced = traced;
    c->live = traced;
    g_hash_table_insert(st->clients, &c->traced, c);
    return c;
}

void tbbt_nfs4_client_foreach(struct tbbt_nfs4_state *st,
                              void (*cb)(struct tbbt_nfs4_client *c, void *arg), void *arg)
{
    GHashTableIter it;
    gpointer k, v;

    g_hash_table_iter_init(&it, st->clients);
    while (g_hash_table_iter_next(&it, &k, &v))
        cb(v, arg);
}

struct tbbt_nfs4_session *tbbt_nfs4_session_of(const struct tbbt_nfs4_state *st,
                                               uint64_t traced_clientid)
{
    GHashTableIter it;
    gpointer k, v;

    g_hash_table_iter_init(&it, st->sessions);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (((struct tbbt_nfs4_session *)v)->traced_clientid == traced_clientid)
            return v;
    return NULL;
}

int tbbt_nfs4_clientid_live(const struct tbbt_nfs4_state *st, uint64_t traced, uint64_t *live)
{
    const struct tbbt_nfs4_client *c = g_hash_table_lookup(st->clients, &traced);

    if (!c)
        return -1;
    *live = c->live;
    return 0;
}

/* ------------------------------------------------------------------ sessions */

struct tbbt_nfs4_session *tbbt_nfs4_session_add(struct tbbt_nfs4_state *st,
                                                const uint8_t *traced, const uint8_t *live,
                                                uint32_t nslots, uint64_t traced_clientid)
{
    struct tbbt_nfs4_session *s = g_new0(struct tbbt_nfs4_session, 1);

    memcpy(s->traced, traced, NFS4_SESSIONID_SIZE);
    memcpy(s->live, live, NFS4_SESSIONID_SIZE);
    s->traced_clientid = traced_clientid;
    s->nslots = nslots < 1 ? 1 : nslots > TBBT_NFS4_SLOTS_MAX ? TBBT_NFS4_SLOTS_MAX : nslots;
    for (uint32_t i = 0; i < s->nslots; i++)
        s->seq[i] = 1;
    g_hash_table_replace(st->sessions, s->traced, s);
    return s;
}

struct tbbt_nfs4_session *tbbt_nfs4_session_get(const struct tbbt_nfs4_state *st,
                                                const uint8_t *traced)
{
    return g_hash_table_lookup(st->sessions, traced);
}

void tbbt_nfs4_session_forget(struct tbbt_nfs4_state *st, const uint8_t *traced)
{
    g_hash_table_remove(st->sessions, traced);
}

int tbbt_nfs4_slot_take(struct tbbt_nfs4_session *s, uint32_t *slot, uint32_t *seq,
                        uint32_t *highest)
{
    uint32_t hi = 0;

    for (uint32_t i = 0; i < s->nslots; i++) {
        if (s->busy[i])
            continue;
        s->busy[i] = true;
        *slot = i;
        *seq = s->seq[i];
        for (uint32_t j = 0; j < s->nslots; j++)
            if (s->busy[j])
                hi = j;
        *highest = hi;
        return 0;
    }
    return -1;
}

void tbbt_nfs4_slot_release(struct tbbt_nfs4_session *s, uint32_t slot, bool advance)
{
    if (slot >= s->nslots)
        return;
    s->busy[slot] = false;
    if (advance)
        s->seq[slot]++;
}

/* ------------------------------------------------------------------ owners */

/* An owner in st->owners: its key (pointing at its own copy of the bytes) and state. */
struct owner_entry {
    struct tbbt_op4_owner_key key;
    struct tbbt_nfs4_owner o;
    char bytes[];
};

struct tbbt_nfs4_owner *tbbt_nfs4_owner_get(struct tbbt_nfs4_state *st, uint64_t clientid,
                                            const struct tbbt_str *bytes,
                                            uint32_t traced_seqid)
{
    struct tbbt_op4_owner_key k = {clientid, *bytes};
    struct owner_entry *e = g_hash_table_lookup(st->owners, &k);

    if (e)
        return &e->o;
    e = g_malloc0(sizeof(*e) + bytes->len);
    memcpy(e->bytes, bytes->p, bytes->len);
    e->key = (struct tbbt_op4_owner_key){clientid, {e->bytes, bytes->len}};
    e->o.live_next = e->o.traced_next = traced_seqid;
    g_hash_table_insert(st->owners, &e->key, e);
    return &e->o;
}

uint32_t tbbt_nfs4_owner_seqid(struct tbbt_nfs4_owner *o, uint32_t traced_seqid)
{
    uint32_t ahead = traced_seqid - o->traced_next;
    if (ahead != 0 && ahead < 0x80000000u)
        o->traced_next = traced_seqid;  /* the owner's calls in between were not captured */
    return o->live_next + (traced_seqid - o->traced_next);
}

bool tbbt_nfs4_seqid_bumps(nfsstat4 status)
{
    switch (status) {
    case NFS4ERR_STALE_CLIENTID:
    case NFS4ERR_STALE_STATEID:
    case NFS4ERR_BAD_STATEID:
    case NFS4ERR_BAD_SEQID:
    case NFS4ERR_BADXDR:
    case NFS4ERR_RESOURCE:
    case NFS4ERR_NOFILEHANDLE:
    case NFS4ERR_MOVED:
        return false;
    default:
        return true;
    }
}

/* ------------------------------------------------------------------ stateids */

void tbbt_nfs4_sid_learn(struct tbbt_nfs4_state *st, const uint8_t *traced,
                         const stateid4 *live, struct tbbt_nfs4_owner *owner)
{
    struct tbbt_nfs4_sid *s = g_hash_table_lookup(st->sids, traced + 4);

    if (!s) {
        s = g_new0(struct tbbt_nfs4_sid, 1);
        memcpy(s->other, traced + 4, NFS4_OTHER_SIZE);
        g_hash_table_insert(st->sids, s->other, s);
    }
    s->traced_seqid = tbbt_op4_sid_seqid(traced);
    s->live = *live;
    if (owner)
        s->owner = owner;
}

struct tbbt_nfs4_sid *tbbt_nfs4_sid_get(const struct tbbt_nfs4_state *st,
                                        const uint8_t *traced)
{
    return g_hash_table_lookup(st->sids, traced + 4);
}

int tbbt_nfs4_sid_live(const struct tbbt_nfs4_state *st, const uint8_t *traced,
                       stateid4 *out)
{
    const struct tbbt_nfs4_sid *s;
    uint32_t seqid = tbbt_op4_sid_seqid(traced);

    if (tbbt_op4_sid_special(traced)) {
        out->seqid = seqid;
        memcpy(out->other, traced + 4, NFS4_OTHER_SIZE);
        return 0;
    }
    s = tbbt_nfs4_sid_get(st, traced);
    if (!s)
        return -1;
    *out = s->live;
    out->seqid = seqid == 0 ? 0 : s->live.seqid + (seqid - s->traced_seqid);
    return 0;
}

/* ------------------------------------------------------------------ attributes, listings */

void tbbt_nfs4_attr_note(struct tbbt_nfs4_state *st, uint32_t ref, const struct tbbt_fattr *a)
{
    g_hash_table_replace(st->attrs, REFKEY(ref), g_memdup2(a, sizeof(*a)));
}

const struct tbbt_fattr *tbbt_nfs4_attr_traced(const struct tbbt_nfs4_state *st, uint32_t ref)
{
    return g_hash_table_lookup(st->attrs, REFKEY(ref));
}

void tbbt_nfs4_dir_note(struct tbbt_nfs4_state *st, uint32_t ref, uint64_t cookie,
                        const char *verf)
{
    struct tbbt_nfs4_dir *d = g_new0(struct tbbt_nfs4_dir, 1);

    d->cookie = cookie;
    memcpy(d->verf, verf, NFS4_VERIFIER_SIZE);
    g_hash_table_replace(st->dirs, REFKEY(ref), d);
}

bool tbbt_nfs4_dir_next(const struct tbbt_nfs4_state *st, uint32_t ref, uint64_t *cookie,
                        char *verf)
{
    const struct tbbt_nfs4_dir *d = g_hash_table_lookup(st->dirs, REFKEY(ref));

    if (!d)
        return false;
    *cookie = d->cookie;
    memcpy(verf, d->verf, NFS4_VERIFIER_SIZE);
    return true;
}
