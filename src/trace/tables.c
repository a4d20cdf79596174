/* SPDX-License-Identifier: MIT */
/*
 * Interning tables for file handles, client endpoints and AUTH_SYS
 * credentials: each distinct value gets the next small integer (its
 * reference), so trace records carry a reference and the file one definition
 * per value (TBBT paper 3.1: the trace rewrites handles; docs/trace-format.md
 * for the definition records).
 *
 * Handles live back to back in one byte pool with an offset per reference;
 * endpoints and credentials, values of a fixed size, in one generic value
 * table (struct valtab, with each kind's normalize, hash and equality).  An
 * open-addressing index of references and their hashes (linear probing,
 * load <= 1/2) finds a value's reference.  Nothing here checks more than the
 * bounds the file format enforces.
 */
#include "trace/trace-int.h"

#include <string.h>

#include "util/hash.h"

#define EMPTY UINT64_MAX
#define INDEX_MIN 64

/*
 * Open-addressing index over references; the tables supply equality.  A slot
 * holds a reference with its value's 32-bit hash (hash << 32 | ref), so a
 * probe passes over other values, and the index regrows, without touching
 * the values themselves (the handle pool is large and mostly cold).
 */
struct refindex {
    uint64_t *slots;
    uint32_t mask;
};

static void index_init(struct refindex *x)
{
    x->slots = g_new(uint64_t, INDEX_MIN);
    memset(x->slots, 0xff, INDEX_MIN * sizeof(uint64_t));
    x->mask = INDEX_MIN - 1;
}

static uint32_t slot_ref(uint64_t slot)
{
    return (uint32_t)slot;
}

/* Returns the slot holding the ref with this hash for which eq() holds, or the empty
 * slot to fill. */
static inline uint64_t *index_find(struct refindex *x, uint32_t hash,
                                   bool (*eq)(const void *tab, uint32_t ref, const void *key),
                                   const void *tab, const void *key)
{
    uint32_t i = hash & x->mask;

    for (;; i = (i + 1) & x->mask) {
        uint64_t v = x->slots[i];
        if (v == EMPTY || ((uint32_t)(v >> 32) == hash && eq(tab, slot_ref(v), key)))
            return &x->slots[i];
    }
}

/* Fills the empty slot that index_find() returned, then doubles the index when count
 * (references now in it) reaches half of it. */
static void index_put(struct refindex *x, uint64_t *slot, uint32_t hash, uint32_t ref,
                      uint32_t count)
{
    uint64_t *old = x->slots;
    uint32_t n = x->mask + 1;

    *slot = (uint64_t)hash << 32 | ref;
    if ((uint64_t)count * 2 < n)
        return;
    x->slots = g_new(uint64_t, 2 * (size_t)n);
    memset(x->slots, 0xff, 2 * (size_t)n * sizeof(uint64_t));
    x->mask = 2 * n - 1;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t i;
        if (old[j] == EMPTY)
            continue;
        i = (uint32_t)(old[j] >> 32) & x->mask;
        while (x->slots[i] != EMPTY)
            i = (i + 1) & x->mask;
        x->slots[i] = old[j];
    }
    g_free(old);
}

static uint32_t hash_bytes(const uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t h = tbbt_hash(p, len, seed);

    return (uint32_t)(h ^ h >> 32);
}

/* ---- handles ---------------------------------------------------------------- */

/*
 * A direct-mapped cache of recently interned handles, with their bytes: a
 * handle seen a moment ago (a directory's, a file being read) is found in one
 * entry, without the index slot, offset and pool bytes that a look-up touches
 * at random in tables of tens of thousands of handles.
 */
#define FH_FRONT 512u
struct fh_front {
    uint32_t hash;
    uint32_t ref;
    uint32_t len;           /* FH_FRONT_EMPTY: no handle */
    uint8_t bytes[TBBT_FH_MAX];
};
#define FH_FRONT_EMPTY UINT32_MAX

struct tbbt_fhtab {
    uint8_t *pool;          /* handle bytes back to back */
    size_t pool_len, pool_cap;
    size_t *off;            /* off[ref] .. off[ref + 1]: bytes of ref */
    uint32_t count, cap;
    struct refindex index;
    struct fh_front *front; /* FH_FRONT entries, by hash */
};

struct fh_key {
    const uint8_t *p;
    uint32_t len;
};

static bool fh_eq(const void *tab, uint32_t ref, const void *key)
{
    const struct tbbt_fhtab *t = tab;
    const struct fh_key *k = key;

    return t->off[ref + 1] - t->off[ref] == k->len &&
           (k->len == 0 || memcmp(t->pool + t->off[ref], k->p, k->len) == 0);
}

struct tbbt_fhtab *tbbt_fhtab_new(void)
{
    struct tbbt_fhtab *t = g_new0(struct tbbt_fhtab, 1);

    t->cap = 256;
    t->off = g_new(size_t, t->cap + 1);
    t->off[0] = 0;
    t->pool_cap = 256 * 32;
    t->pool = g_malloc(t->pool_cap);
    index_init(&t->index);
    t->front = g_new(struct fh_front, FH_FRONT);
    for (uint32_t i = 0; i < FH_FRONT; i++)
        t->front[i].len = FH_FRONT_EMPTY;
    return t;
}

void tbbt_fhtab_free(struct tbbt_fhtab *t)
{
    if (!t)
        return;
    g_free(t->pool);
    g_free(t->off);
    g_free(t->index.slots);
    g_free(t->front);
    g_free(t);
}

static uint32_t fh_append(struct tbbt_fhtab *t, uint64_t *slot, const struct fh_key *k,
                          uint32_t h)
{
    uint32_t ref = t->count;

    if (t->count == t->cap) {
        t->cap *= 2;
        t->off = g_renew(size_t, t->off, t->cap + 1);
    }
    if (t->pool_cap - t->pool_len < k->len) {
        t->pool_cap *= 2;
        t->pool = g_realloc(t->pool, t->pool_cap);
    }
    if (k->len)
        memcpy(t->pool + t->pool_len, k->p, k->len);
    t->pool_len += k->len;
    t->off[ref + 1] = t->pool_len;
    t->count++;
    index_put(&t->index, slot, h, ref, t->count);
    return ref;
}

uint32_t tbbt_fhtab_intern(struct tbbt_fhtab *t, const void *fh, uint32_t len)
{
    struct fh_key k = {fh, len > TBBT_FH_MAX ? TBBT_FH_MAX : len};
    uint32_t h = hash_bytes(k.p, k.len, 0);
    struct fh_front *e = &t->front[(h >> 16) & (FH_FRONT - 1)];
    uint64_t *slot;

    if (e->hash == h && e->len == k.len && (k.len == 0 || memcmp(e->bytes, k.p, k.len) == 0))
        return e->ref;
    slot = index_find(&t->index, h, fh_eq, t, &k);
    e->hash = h;
    e->len = k.len;
    if (k.len)
        memcpy(e->bytes, k.p, k.len);
    e->ref = *slot != EMPTY ? slot_ref(*slot) : fh_append(t, slot, &k, h);
    return e->ref;
}

int tbbt_fhtab_add(struct tbbt_fhtab *t, uint32_t ref, const void *fh, uint32_t len)
{
    struct fh_key k = {fh, len};
    uint32_t h;
    uint64_t *slot;

    if (ref != t->count || len > TBBT_FH_MAX)
        return TBBT_E_BADREC;
    h = hash_bytes(k.p, k.len, 0);
    slot = index_find(&t->index, h, fh_eq, t, &k);
    if (*slot != EMPTY)
        return TBBT_E_BADREC;
    fh_append(t, slot, &k, h);
    return 0;
}

uint32_t tbbt_fhtab_count(const struct tbbt_fhtab *t)
{
    return t->count;
}

const uint8_t *tbbt_fhtab_get(const struct tbbt_fhtab *t, uint32_t ref, uint32_t *len)
{
    if (ref >= t->count)
        return NULL;
    if (len)
        *len = (uint32_t)(t->off[ref + 1] - t->off[ref]);
    return t->pool + t->off[ref];
}

/* ---- tables of fixed-size values (endpoints, credentials) --------------------------- */

/* What a kind of value brings to a struct valtab. */
struct val_ops {
    size_t size;
    /* Copies src cut to its bounds, every byte past them zeroed. */
    void (*normalize)(void *dst, const void *src);
    uint32_t (*hash)(const void *val);
    /* index_find()'s equality: value ref of the struct valtab tab against key. */
    bool (*eq)(const void *tab, uint32_t ref, const void *key);
};

/* A value of any kind, normalized, on the stack. */
union val_buf {
    struct tbbt_endpoint ep;
    struct tbbt_cred cred;
};

/*
 * Values of one kind in an array by reference, and the index over them: the
 * first member of struct tbbt_eptab and struct tbbt_credtab.
 */
struct valtab {
    uint8_t *vals;          /* count values, ops->size bytes each */
    uint32_t count, cap;
    struct refindex index;
};

/* A zeroed table of size bytes whose first member is its struct valtab; cap: first room. */
static void *valtab_new(size_t size, const struct val_ops *ops, uint32_t cap)
{
    struct valtab *v = g_malloc0(size);

    v->cap = cap;
    v->vals = g_malloc_n(cap, ops->size);
    index_init(&v->index);
    return v;
}

/* Frees a table from valtab_new(); NULL is a no-op. */
static void valtab_free(void *tab)
{
    struct valtab *v = tab;

    if (!v)
        return;
    g_free(v->vals);
    g_free(v->index.slots);
    g_free(v);
}

static inline const void *valtab_get(const struct valtab *v, const struct val_ops *ops,
                                     uint32_t ref)
{
    return ref < v->count ? v->vals + (size_t)ref * ops->size : NULL;
}

/* Value ref of the table tab, for the ops' eq(). */
static inline const void *valtab_at(const void *tab, size_t size, uint32_t ref)
{
    return ((const struct valtab *)tab)->vals + (size_t)ref * size;
}

/*
 * The reference of val (normalized first): the one it has, or the next one,
 * the value appended.  Always inline, so that each table's ops are called
 * directly (as they were when each table had its own copy of this).
 */
static inline __attribute__((always_inline)) uint32_t
valtab_intern(struct valtab *v, const struct val_ops *ops, const void *val)
{
    union val_buf n;
    uint32_t h;
    uint64_t *slot;

    ops->normalize(&n, val);
    h = ops->hash(&n);
    slot = index_find(&v->index, h, ops->eq, v, &n);
    if (*slot != EMPTY)
        return slot_ref(*slot);
    if (v->count == v->cap) {
        v->cap *= 2;
        v->vals = g_realloc_n(v->vals, v->cap, ops->size);
    }
    memcpy(v->vals + (size_t)v->count * ops->size, &n, ops->size);
    v->count++;
    index_put(&v->index, slot, h, v->count - 1, v->count);
    return v->count - 1;
}

/* Defines reference ref as val: 0, or TBBT_E_BADREC if ref is not the next one or val is known. */
static int valtab_add(struct valtab *v, const struct val_ops *ops, uint32_t ref, const void *val)
{
    if (ref != v->count)
        return TBBT_E_BADREC;
    return valtab_intern(v, ops, val) == ref ? 0 : TBBT_E_BADREC;   /* known: an older ref */
}

/* ---- endpoints -------------------------------------------------------------- */

struct tbbt_eptab {
    struct valtab v;        /* first: valtab_new(), valtab_free() */
};

/* Copies ep with both addresses cut to 47 bytes and zero-padded. */
static void ep_normalize(void *d, const void *src)
{
    struct tbbt_endpoint *dst = d;
    const struct tbbt_endpoint *ep = src;
    size_t c = strnlen(ep->client, TBBT__TRACE_ADDR_MAX);
    size_t s = strnlen(ep->server, TBBT__TRACE_ADDR_MAX);

    memset(dst, 0, sizeof(*dst));
    memcpy(dst->client, ep->client, c);
    memcpy(dst->server, ep->server, s);
    dst->client_port = ep->client_port;
    dst->server_port = ep->server_port;
    dst->tcp = ep->tcp;
}

static uint32_t ep_hash(const void *val)
{
    const struct tbbt_endpoint *e = val;
    uint64_t seed = (uint64_t)e->client_port << 32 | (uint64_t)e->server_port << 1 | e->tcp;
    uint32_t h = hash_bytes((const uint8_t *)e->client, strlen(e->client), seed);

    return hash_bytes((const uint8_t *)e->server, strlen(e->server), h);
}

static bool ep_eq(const void *tab, uint32_t ref, const void *key)
{
    const struct tbbt_endpoint *a = valtab_at(tab, sizeof(*a), ref);
    const struct tbbt_endpoint *b = key;

    return a->client_port == b->client_port && a->server_port == b->server_port &&
           a->tcp == b->tcp && strcmp(a->client, b->client) == 0 &&
           strcmp(a->server, b->server) == 0;
}

static const struct val_ops ep_ops = {sizeof(struct tbbt_endpoint), ep_normalize, ep_hash, ep_eq};

struct tbbt_eptab *tbbt_eptab_new(void)
{
    return valtab_new(sizeof(struct tbbt_eptab), &ep_ops, 16);
}

void tbbt_eptab_free(struct tbbt_eptab *t)
{
    valtab_free(t);
}

uint32_t tbbt_eptab_intern(struct tbbt_eptab *t, const struct tbbt_endpoint *ep)
{
    return valtab_intern(&t->v, &ep_ops, ep);
}

int tbbt_eptab_add(struct tbbt_eptab *t, uint32_t ref, const struct tbbt_endpoint *ep)
{
    if (!tbbt__addr_valid(ep->client, strnlen(ep->client, sizeof(ep->client))) ||
        !tbbt__addr_valid(ep->server, strnlen(ep->server, sizeof(ep->server))))
        return TBBT_E_BADREC;
    return valtab_add(&t->v, &ep_ops, ref, ep);
}

uint32_t tbbt_eptab_count(const struct tbbt_eptab *t)
{
    return t->v.count;
}

const struct tbbt_endpoint *tbbt_eptab_get(const struct tbbt_eptab *t, uint32_t ref)
{
    return valtab_get(&t->v, &ep_ops, ref);
}

/* ---- credentials -------------------------------------------------------------- */

struct tbbt_credtab {
    struct valtab v;        /* first: valtab_new(), valtab_free() */
};

/* Copies cred cut to its bounds, every member past them zeroed. */
static void cred_normalize(void *d, const void *src)
{
    struct tbbt_cred *dst = d;
    const struct tbbt_cred *c = src;
    uint32_t m = c->machine_len > TBBT_MACHINE_MAX ? TBBT_MACHINE_MAX : c->machine_len;
    uint32_t n = c->ngids > TBBT_CRED_GIDS_MAX ? TBBT_CRED_GIDS_MAX : c->ngids;

    memset(dst, 0, sizeof(*dst));
    dst->uid = c->uid;
    dst->gid = c->gid;
    dst->ngids = n;
    if (n)
        memcpy(dst->gids, c->gids, n * sizeof(uint32_t));
    dst->machine_len = m;
    if (m)
        memcpy(dst->machine, c->machine, m);
}

static uint32_t cred_hash(const void *val)
{
    const struct tbbt_cred *c = val;
    uint64_t seed = (uint64_t)c->uid << 32 | c->gid;
    uint32_t h = hash_bytes((const uint8_t *)c->machine, c->machine_len, seed);

    return hash_bytes((const uint8_t *)c->gids, c->ngids * sizeof(uint32_t), h ^ c->ngids);
}

bool tbbt_cred_equal(const struct tbbt_cred *a, const struct tbbt_cred *b)
{
    return a->uid == b->uid && a->gid == b->gid && a->ngids == b->ngids &&
           a->machine_len == b->machine_len && a->ngids <= TBBT_CRED_GIDS_MAX &&
           a->machine_len <= TBBT_MACHINE_MAX &&
           memcmp(a->gids, b->gids, a->ngids * sizeof(uint32_t)) == 0 &&
           memcmp(a->machine, b->machine, a->machine_len) == 0;
}

static bool cred_eq(const void *tab, uint32_t ref, const void *key)
{
    return tbbt_cred_equal(valtab_at(tab, sizeof(struct tbbt_cred), ref), key);
}

static const struct val_ops cred_ops = {sizeof(struct tbbt_cred), cred_normalize, cred_hash,
                                        cred_eq};

struct tbbt_credtab *tbbt_credtab_new(void)
{
    return valtab_new(sizeof(struct tbbt_credtab), &cred_ops, 4);
}

void tbbt_credtab_free(struct tbbt_credtab *t)
{
    valtab_free(t);
}

uint32_t tbbt_credtab_intern(struct tbbt_credtab *t, const struct tbbt_cred *cred)
{
    return valtab_intern(&t->v, &cred_ops, cred);
}

int tbbt_credtab_add(struct tbbt_credtab *t, uint32_t ref, const struct tbbt_cred *cred)
{
    if (cred->machine_len > TBBT_MACHINE_MAX || cred->ngids > TBBT_CRED_GIDS_MAX)
        return TBBT_E_BADREC;
    return valtab_add(&t->v, &cred_ops, ref, cred);
}

uint32_t tbbt_credtab_count(const struct tbbt_credtab *t)
{
    return t->v.count;
}

const struct tbbt_cred *tbbt_credtab_get(const struct tbbt_credtab *t, uint32_t ref)
{
    return valtab_get(&t->v, &cred_ops, ref);
}
