/* SPDX-License-Identifier: MIT */
/*
 * The namespace model's state changes (TBBT paper 3.1 "TBBT-IDs", 3.2
 * hierarchy map): objects and their IDs, handle and (fsid, fileid) identity,
 * the (directory, name) -> link table, links coming, going and moving, and
 * the rename history of directories that gives paths at a given time.
 * apply*.c decide from the records what happens; this file only does it.
 */
#include "ns/ns-int.h"

#include <inttypes.h>
#include <stdio.h>

#include <string.h>

#define INDEX_MIN 1024u
#define WALK_MAX 1000000u      /* parent walks stop here: the model may hold a loop */

/* ---- open-addressing index ------------------------------------------------------ */

static void index_init(struct ns_index *x)
{
    x->slots = g_new0(uint64_t, INDEX_MIN);
    x->mask = INDEX_MIN - 1;
    x->count = 0;
}

static uint32_t mix2(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ b;

    h ^= h >> 31;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h;
}

static inline uint32_t slot_hash(uint64_t s)
{
    return (uint32_t)(s >> 32);
}

/*
 * The slot of x holding the member with hash h for which same(ns, value, a, b)
 * holds, or the empty slot to fill.  Always inline, so that each index's
 * same() is called directly.
 */
static inline __attribute__((always_inline)) uint64_t *
index_probe(const struct ns_index *x, uint32_t h,
            bool (*same)(const struct tbbt_ns *ns, uint32_t v, uint64_t a, uint64_t b),
            const struct tbbt_ns *ns, uint64_t a, uint64_t b)
{
    uint32_t i = h & x->mask;

    for (;; i = (i + 1) & x->mask) {
        uint64_t v = x->slots[i];
        if (!v || (slot_hash(v) == h && same(ns, (uint32_t)v, a, b)))
            return &x->slots[i];
    }
}

/* Counts a new member; doubles x at load 3/4. */
static void index_added(struct ns_index *x)
{
    uint32_t oldn = x->mask + 1;
    uint64_t *old = x->slots;

    if ((uint64_t)++x->count * 4 < (uint64_t)oldn * 3)
        return;
    x->slots = g_new0(uint64_t, (size_t)oldn * 2);
    x->mask = oldn * 2 - 1;
    for (uint32_t i = 0; i < oldn; i++) {
        uint32_t j;
        if (!old[i])
            continue;
        j = slot_hash(old[i]) & x->mask;
        while (x->slots[j])
            j = (j + 1) & x->mask;
        x->slots[j] = old[i];
    }
    g_free(old);
}

/* Removes slot i by shifting later members of its run back (linear probing). */
static void index_del(struct ns_index *x, uint32_t i)
{
    uint32_t j = i;

    x->slots[i] = 0;
    x->count--;
    for (;;) {
        uint32_t home;
        j = (j + 1) & x->mask;
        if (!x->slots[j])
            return;
        home = slot_hash(x->slots[j]) & x->mask;
        /* move j back to i unless its home lies cyclically in (i, j] */
        if ((i <= j) ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        x->slots[i] = x->slots[j];
        x->slots[j] = 0;
        i = j;
    }
}

/* ---- new / free -------------------------------------------------------------------- */

struct tbbt_ns *tbbt_ns_new(void)
{
    struct tbbt_ns *ns = g_new0(struct tbbt_ns, 1);

    tbbt__ns_vec_init(&ns->objs, sizeof(struct ns_obj));
    tbbt__ns_vec_init(&ns->links, sizeof(struct ns_link));
    tbbt__ns_vec_init(&ns->keys, sizeof(struct ns_key));
    tbbt__ns_pool_init(&ns->pool);
    index_init(&ns->dents);
    index_init(&ns->keyidx);
    return ns;
}

static void free_hist(gpointer p)
{
    g_array_free(p, TRUE);
}

void tbbt_ns_free(struct tbbt_ns *ns)
{
    if (!ns)
        return;
    tbbt__ns_vec_fini(&ns->objs);
    tbbt__ns_vec_fini(&ns->links);
    tbbt__ns_vec_fini(&ns->keys);
    tbbt__ns_pool_fini(&ns->pool);
    g_free(ns->dents.slots);
    g_free(ns->keyidx.slots);
    g_free(ns->hid);
    g_free(ns->hkey);
    g_free(ns->used);
    g_free(ns->hdir);
    g_free(ns->hname);
    g_free(ns->hpkey);
    g_free(ns->htype);
    if (ns->hist)
        g_hash_table_destroy(ns->hist);
    if (ns->v4_pseudo)
        g_hash_table_destroy(ns->v4_pseudo);
    if (ns->v4_low) {
        tbbt_trace_rec_fini(ns->v4_low);
        g_free(ns->v4_low);
    }
    if (ns->mounts)
        g_array_free(ns->mounts, TRUE);
    if (ns->v4_rewrites)
        g_ptr_array_free(ns->v4_rewrites, TRUE);
    if (ns->v4_exports)
        g_array_free(ns->v4_exports, TRUE);
    g_free(ns);
}

void tbbt_ns_set_closed(struct tbbt_ns *ns, bool closed)
{
    ns->closed = closed;
}

void tbbt_ns_set_by_id(struct tbbt_ns *ns, bool by_id)
{
    ns->by_id = by_id;
}

bool tbbt_ns_by_id(const struct tbbt_ns *ns)
{
    return ns->by_id;
}

void tbbt_ns_each_child(const struct tbbt_ns *ns, uint64_t dir,
                        void (*fn)(const void *name, size_t len, uint64_t child, void *arg),
                        void *arg)
{
    if (dir == 0 || dir >= ns->objs.n || ns_obj(ns, (uint32_t)dir)->nchild == 0)
        return;
    for (uint32_t l = 1; l < ns->links.n; l++) {
        const struct ns_link *k = ns_link(ns, l);
        const uint8_t *p;
        uint32_t len;

        if (k->parent != dir || !ns_link_live(k))
            continue;
        p = tbbt__ns_pool_get(&ns->pool, k->name, &len);
        fn(p, len, k->child, arg);
    }
}

void tbbt_ns_set_infer(struct tbbt_ns *ns, tbbt_ns_infer_fn fn, void *arg)
{
    ns->infer = fn;
    ns->infer_arg = arg;
}

void tbbt__ns_infer(struct tbbt_ns *ns, enum tbbt_ns_infer_kind kind, uint32_t dir,
                    uint32_t name, uint32_t dir2, uint32_t name2, uint32_t obj)
{
    struct tbbt_ns_inferred e = { .kind = kind, .dir = dir, .dir2 = dir2, .obj = obj };
    uint32_t len = 0, len2 = 0;

    if (!ns->infer)
        return;
    e.name = tbbt__ns_pool_get(&ns->pool, name, &len);
    e.len = len;
    if (name2) {
        e.name2 = tbbt__ns_pool_get(&ns->pool, name2, &len2);
        e.len2 = len2;
    }
    e.type = obj ? (enum tbbt_ns_type)ns_obj(ns, obj)->type : TBBT_NS_UNKNOWN;
    ns->infer(ns->infer_arg, &e);
}

void tbbt__ns_mark_used(struct tbbt_ns *ns, uint32_t id)
{
    if (id >= ns->used_cap) {
        uint32_t n = ns->used_cap ? ns->used_cap : 4096;
        while (n <= id)
            n *= 2;
        ns->used = g_realloc(ns->used, n / 8);
        memset(ns->used + ns->used_cap / 8, 0, (n - ns->used_cap) / 8);
        ns->used_cap = n;
    }
    ns->used[id >> 3] |= (uint8_t)(1u << (id & 7));
}

static bool was_used(const struct tbbt_ns *ns, uint32_t id)
{
    return id < ns->used_cap && (ns->used[id >> 3] & (1u << (id & 7)));
}

void tbbt__ns_infer_attrs(struct tbbt_ns *ns, uint32_t obj, uint32_t mode, uint32_t uid,
                          uint32_t gid)
{
    struct tbbt_ns_inferred e = { .kind = TBBT_NS_INFER_SETATTR, .obj = obj, .mode = mode,
                                  .uid = uid, .gid = gid };

    if (!ns->infer)
        return;
    e.type = (enum tbbt_ns_type)ns_obj(ns, obj)->type;
    e.name = e.name2 = "";
    ns->infer(ns->infer_arg, &e);
}

bool tbbt_ns_forget(struct tbbt_ns *ns, uint64_t id, uint64_t t)
{
    struct ns_obj *o;
    uint32_t name, l;
    char s[24];
    int n;

    if (id == 0 || id >= ns->objs.n || id == ns->root)
        return false;
    o = ns_obj(ns, (uint32_t)id);
    if (o->links || o->nchild || (o->flags & (OF_DELETED | OF_ANCESTOR)))
        return false;
    if (!was_used(ns, (uint32_t)id)) {
        o->flags |= OF_DELETED;
        o->delete_ns = t ? t : 1;
        return true;
    }
    /*
     * It answered before: it existed at trace start under a name the trace never
     * showed, and a lost call removed it.  Give it one in "tbbt-gone" (a top-level
     * directory of the start image) and remove that, as the lost call did.
     */
    if (!ns->gone_dir) {
        ns->gone_dir = tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
        name = tbbt__ns_pool_intern(&ns->pool, "tbbt-gone", 9);
        if (ns->root && !tbbt__ns_dent_child(ns, ns->root, name))
            tbbt__ns_link_add(ns, ns->root, name, ns->gone_dir, 0);
    }
    n = snprintf(s, sizeof(s), "%" PRIu64, id);
    name = tbbt__ns_pool_intern(&ns->pool, s, (size_t)n);
    if (tbbt__ns_dent_child(ns, ns->gone_dir, name))
        return false;
    l = tbbt__ns_link_add(ns, ns->gone_dir, name, (uint32_t)id, 0);
    tbbt__ns_infer(ns, TBBT_NS_INFER_REMOVE, ns->gone_dir, name, 0, 0, (uint32_t)id);
    tbbt__ns_link_end(ns, l, t ? t : 1);
    return true;
}

void tbbt_ns_each_name(const struct tbbt_ns *ns, uint64_t id,
                       void (*fn)(uint64_t dir, const void *name, size_t len, void *arg),
                       void *arg)
{
    if (id == 0 || id >= ns->objs.n)
        return;
    for (uint32_t l = ns_obj(ns, (uint32_t)id)->links; l; l = ns_link(ns, l)->next) {
        const struct ns_link *k = ns_link(ns, l);
        uint32_t len;
        const uint8_t *p = tbbt__ns_pool_get(&ns->pool, k->name, &len);

        fn(k->parent, p, len, arg);
    }
}

uint64_t tbbt_ns_count(const struct tbbt_ns *ns)
{
    return ns->objs.n - 1;
}

void tbbt_ns_note_reordered(struct tbbt_ns *ns, uint64_t n)
{
    ns->st.exec_order_moves += n;
}

uint64_t tbbt_ns_root(const struct tbbt_ns *ns)
{
    return ns->root;
}

/* ---- objects ----------------------------------------------------------------------- */

uint32_t tbbt__ns_obj_new(struct tbbt_ns *ns, int type, uint64_t create_ns)
{
    uint32_t id = tbbt__ns_vec_push(&ns->objs);
    struct ns_obj *o = ns_obj(ns, id);

    o->type = (uint8_t)type;
    o->create_ns = create_ns;
    if (create_ns)              /* made in the trace: it starts empty */
        o->flags |= OF_SIZE_KNOWN;
    ns->st.objects++;
    return id;
}

uint64_t tbbt_ns_new_id(struct tbbt_ns *ns, enum tbbt_ns_type type)
{
    return tbbt__ns_obj_new(ns, type, 0);
}

bool tbbt__ns_obj_gone(const struct tbbt_ns *ns, uint32_t id)
{
    return id && (ns_obj(ns, id)->flags & OF_DELETED);
}

void tbbt__ns_set_type(struct tbbt_ns *ns, uint32_t id, int type, bool from_attr)
{
    struct ns_obj *o = ns_obj(ns, id);

    if (type == TBBT_NS_UNKNOWN || o->type == type)
        return;
    if (o->type == TBBT_NS_UNKNOWN || (from_attr && !(o->flags & OF_TYPE_ATTR)))
        o->type = (uint8_t)type;
    if (from_attr)
        o->flags |= OF_TYPE_ATTR;
}

int tbbt_ns_obj_info(const struct tbbt_ns *ns, uint64_t id, struct tbbt_ns_obj_info *info)
{
    const struct ns_obj *o;
    uint32_t n = 0;

    if (id == 0 || id >= ns->objs.n)
        return TBBT_E_RANGE;
    o = ns_obj(ns, (uint32_t)id);
    for (uint32_t l = o->links; l; l = ns_link(ns, l)->next)
        n++;
    *info = (struct tbbt_ns_obj_info){
        .type = o->type, .size_at_start = o->size, .size_known = o->flags & OF_SIZE_KNOWN,
        .create_ns = o->create_ns, .deleted = o->flags & OF_DELETED,
        .delete_ns = o->delete_ns, .live_links = n, .children = o->nchild,
        .parent = tbbt__ns_parent_of(ns, (uint32_t)id),
    };
    return 0;
}

/* ---- identity: handles and (fsid, fileid) ------------------------------------------ */

void tbbt__ns_handle_reserve(struct tbbt_ns *ns, uint32_t ref)
{
    uint32_t n;

    if (ref < ns->nh)
        return;
    if (ref >= ns->caph) {
        n = ns->caph ? ns->caph : 1024;
        while (n <= ref)
            n *= 2;
        ns->hid = g_renew(uint32_t, ns->hid, n);
        ns->hkey = g_renew(uint32_t, ns->hkey, n);
        ns->hdir = g_renew(uint32_t, ns->hdir, n);
        ns->hname = g_renew(uint32_t, ns->hname, n);
        ns->htype = g_renew(uint8_t, ns->htype, n);
        ns->hpkey = g_renew(uint32_t, ns->hpkey, n);
        ns->caph = n;
    }
    memset(ns->hid + ns->nh, 0, (size_t)(ref + 1 - ns->nh) * sizeof(uint32_t));
    memset(ns->hkey + ns->nh, 0, (size_t)(ref + 1 - ns->nh) * sizeof(uint32_t));
    memset(ns->hdir + ns->nh, 0, (size_t)(ref + 1 - ns->nh) * sizeof(uint32_t));
    memset(ns->hname + ns->nh, 0, (size_t)(ref + 1 - ns->nh) * sizeof(uint32_t));
    memset(ns->htype + ns->nh, 0, (size_t)(ref + 1 - ns->nh));
    memset(ns->hpkey + ns->nh, 0, (size_t)(ref + 1 - ns->nh) * sizeof(uint32_t));
    ns->nh = ref + 1;
}

static bool key_is(const struct tbbt_ns *ns, uint32_t key, uint64_t fsid, uint64_t fileid)
{
    const struct ns_key *k = ns_key(ns, key);

    return k->fsid == fsid && k->fileid == fileid;
}

uint32_t tbbt__ns_key_find(const struct tbbt_ns *ns, uint64_t fsid, uint64_t fileid)
{
    return (uint32_t)*index_probe(&ns->keyidx, mix2(fsid, fileid), key_is, ns, fsid, fileid);
}

uint32_t tbbt__ns_key_intern(struct tbbt_ns *ns, uint64_t fsid, uint64_t fileid)
{
    uint32_t h = mix2(fsid, fileid), k;
    uint64_t *slot = index_probe(&ns->keyidx, h, key_is, ns, fsid, fileid);
    struct ns_key *e;

    if (*slot)
        return (uint32_t)*slot;
    k = tbbt__ns_vec_push(&ns->keys);
    e = ns_key(ns, k);
    e->fsid = fsid;
    e->fileid = fileid;
    *slot = (uint64_t)h << 32 | k;
    index_added(&ns->keyidx);
    return k;
}

/* Gives key k to object id when k is free (no object, or a deleted one). */
static void key_claim(struct tbbt_ns *ns, uint32_t k, uint32_t id)
{
    struct ns_key *e = ns_key(ns, k);
    struct ns_obj *o = ns_obj(ns, id);

    if (!o->key)
        o->key = k;
    if (!e->obj || (e->obj != id && tbbt__ns_obj_gone(ns, e->obj)))
        e->obj = id;
}

void tbbt__ns_obj_set_key(struct tbbt_ns *ns, uint32_t id, uint64_t fsid, uint64_t fileid)
{
    key_claim(ns, tbbt__ns_key_intern(ns, fsid, fileid), id);
}

void tbbt__ns_fh_bind(struct tbbt_ns *ns, uint32_t ref, uint32_t id)
{
    uint32_t k;

    tbbt__ns_handle_reserve(ns, ref);
    if (!ns->hid[ref])
        ns->st.handles++;
    ns->hid[ref] = id;
    k = ns->hkey[ref];
    if (k)
        key_claim(ns, k, id);
}

uint32_t tbbt__ns_fh_known(struct tbbt_ns *ns, uint32_t ref)
{
    uint32_t k, id;

    tbbt__ns_handle_reserve(ns, ref);
    if (ns->hid[ref])
        return ns->hid[ref];
    k = ns->hkey[ref];
    if (!k)
        return 0;
    id = ns_key(ns, k)->obj;
    if (!id || tbbt__ns_obj_gone(ns, id))
        return 0;
    ns->st.merged_handles++;
    tbbt__ns_fh_bind(ns, ref, id);
    return id;
}

uint32_t tbbt__ns_fh_resolve(struct tbbt_ns *ns, uint32_t ref)
{
    uint32_t id = tbbt__ns_fh_known(ns, ref);

    if (!id) {
        id = tbbt__ns_obj_new(ns, TBBT_NS_UNKNOWN, 0);
        tbbt__ns_fh_bind(ns, ref, id);
    }
    return id;
}

/* ---- names --------------------------------------------------------------------------- */

static bool link_is(const struct tbbt_ns *ns, uint32_t link, uint64_t dir, uint64_t name)
{
    const struct ns_link *l = ns_link(ns, link);

    return l->parent == dir && l->name == name;
}

uint32_t tbbt__ns_dent_find(const struct tbbt_ns *ns, uint32_t dir, uint32_t name)
{
    return (uint32_t)*index_probe(&ns->dents, mix2(dir, name), link_is, ns, dir, name);
}

uint32_t tbbt__ns_dent_child(const struct tbbt_ns *ns, uint32_t dir, uint32_t name)
{
    uint32_t l = tbbt__ns_dent_find(ns, dir, name);

    return l && ns_link_live(ns_link(ns, l)) ? ns_link(ns, l)->child : 0;
}

/* Makes (dir, name) point to link l, which already carries that key. */
static void dent_set(struct tbbt_ns *ns, uint32_t l)
{
    struct ns_link *k = ns_link(ns, l);
    uint32_t h = mix2(k->parent, k->name);
    uint64_t *slot = index_probe(&ns->dents, h, link_is, ns, k->parent, k->name);
    uint32_t old = (uint32_t)*slot;

    *slot = (uint64_t)h << 32 | l;
    if (!old) {
        index_added(&ns->dents);
    } else if (old != l && !ns_link(ns, old)->child) {
        /* a negative record nobody points to any more: keep it for reuse */
        ns_link(ns, old)->next = ns->free_neg;
        ns->free_neg = old;
    }
}

static uint32_t link_alloc(struct tbbt_ns *ns)
{
    uint32_t l = ns->free_neg;

    if (!l)
        return tbbt__ns_vec_push(&ns->links);
    ns->free_neg = ns_link(ns, l)->next;
    memset(ns_link(ns, l), 0, sizeof(struct ns_link));
    return l;
}

/* Puts link l at the head of its object's live list. */
static void obj_add_link(struct tbbt_ns *ns, uint32_t id, uint32_t l)
{
    struct ns_obj *o = ns_obj(ns, id);

    ns_link(ns, l)->next = o->links;
    o->links = l;
}

/* Takes link l out of its object's live list. */
static void obj_drop_link(struct tbbt_ns *ns, uint32_t id, uint32_t l)
{
    uint32_t *p = &ns_obj(ns, id)->links;

    while (*p && *p != l)
        p = &ns_link(ns, *p)->next;
    if (*p)
        *p = ns_link(ns, l)->next;
    ns_link(ns, l)->next = 0;
}

uint32_t tbbt__ns_link_add(struct tbbt_ns *ns, uint32_t dir, uint32_t name, uint32_t id,
                           uint64_t create_ns)
{
    uint32_t l = tbbt__ns_dent_find(ns, dir, name);
    struct ns_link *k;
    struct ns_obj *d = ns_obj(ns, dir);

    g_assert(!(l && ns_link_live(ns_link(ns, l))));
    if (!l || ns_link(ns, l)->child)   /* reuse a negative record in place */
        l = link_alloc(ns);
    k = ns_link(ns, l);
    *k = (struct ns_link){ .parent = dir, .name = name, .sparent = dir, .sname = name,
                           .child = id, .create_ns = create_ns, .delete_ns = NS_LIVE };
    dent_set(ns, l);
    obj_add_link(ns, id, l);
    ns->link_events++;
    d->nchild++;
    d->flags |= OF_ANCESTOR;
    tbbt__ns_set_type(ns, dir, TBBT_NS_DIR, false);
    ns_obj(ns, id)->flags &= (uint8_t)~OF_DELETED;
    return l;
}

uint32_t tbbt__ns_live_link(const struct tbbt_ns *ns, uint32_t id)
{
    return ns_obj(ns, id)->links;
}

void tbbt__ns_link_end(struct tbbt_ns *ns, uint32_t l, uint64_t t)
{
    struct ns_link *k = ns_link(ns, l);
    struct ns_obj *o = ns_obj(ns, k->child), *d = ns_obj(ns, k->parent);

    g_assert(ns_link_live(k));
    k->delete_ns = t;
    ns->link_events++;
    obj_drop_link(ns, k->child, l);
    if (d->nchild)
        d->nchild--;
    if (o->nlink)
        o->nlink--;
    if (o->links)
        return;
    /* The last name we know of: gone, unless its attributes told of other names. */
    if (o->type == TBBT_NS_DIR || !(o->flags & OF_NLINK) || o->nlink == 0) {
        o->flags |= OF_DELETED;
        o->delete_ns = t;
    }
}

void tbbt__ns_neg_add(struct tbbt_ns *ns, uint32_t dir, uint32_t name)
{
    uint32_t l;

    if (tbbt__ns_dent_find(ns, dir, name))
        return;
    l = link_alloc(ns);
    *ns_link(ns, l) = (struct ns_link){ .parent = dir, .name = name, .sparent = dir,
                                        .sname = name, .delete_ns = NS_LIVE };
    dent_set(ns, l);
}

/*
 * Records that link l leaves its place at time t.  Paths are only ever asked
 * for at times when some link was made or ended (and at the start and end),
 * so a place no such time fell into is forgotten: the history grows with
 * those events, not with renames.
 */
static void hist_add(struct tbbt_ns *ns, uint32_t l, uint64_t t)
{
    struct ns_link *k = ns_link(ns, l);
    struct ns_hist h = { .t = t, .events = ns->link_events, .parent = k->parent,
                         .name = k->name };
    GArray *a;

    if (!ns->hist)
        ns->hist = g_hash_table_new_full(NULL, NULL, NULL, free_hist);
    a = g_hash_table_lookup(ns->hist, GUINT_TO_POINTER(l));
    if (!a) {
        a = g_array_new(FALSE, FALSE, sizeof(struct ns_hist));
        g_hash_table_insert(ns->hist, GUINT_TO_POINTER(l), a);
    }
    if (a->len && g_array_index(a, struct ns_hist, a->len - 1).events == ns->link_events) {
        g_array_index(a, struct ns_hist, a->len - 1).t = t;  /* the last place went unseen */
        return;
    }
    g_array_append_val(a, h);
    ns_obj(ns, k->child)->flags |= OF_HIST;
}

void tbbt__ns_link_move(struct tbbt_ns *ns, uint32_t l, uint32_t dir, uint32_t name, uint64_t t)
{
    struct ns_link *k = ns_link(ns, l);
    struct ns_obj *o = ns_obj(ns, k->child);
    uint32_t from = k->parent, from_name = k->name;
    uint64_t *slot = index_probe(&ns->dents, mix2(from, from_name), link_is, ns, from, from_name);

    g_assert((uint32_t)*slot == l);
    /* Directories (and objects that may be one) keep where they were: their
     * children's paths at a given time depend on it. */
    if (o->type == TBBT_NS_DIR || o->type == TBBT_NS_UNKNOWN)
        hist_add(ns, l, t);
    index_del(&ns->dents, (uint32_t)(slot - ns->dents.slots));
    ns_obj(ns, from)->nchild--;
    k->parent = dir;
    k->name = name;
    dent_set(ns, l);
    ns_obj(ns, dir)->nchild++;
    ns_obj(ns, dir)->flags |= OF_ANCESTOR;
    tbbt__ns_set_type(ns, dir, TBBT_NS_DIR, false);
    tbbt__ns_neg_add(ns, from, from_name);   /* the old name is proven free now */
}

uint32_t tbbt__ns_parent_of(const struct tbbt_ns *ns, uint32_t id)
{
    uint32_t l = tbbt__ns_live_link(ns, id);
    const struct ns_obj *o = ns_obj(ns, id);

    if (l)
        return ns_link(ns, l)->parent;
    return o->flags & OF_PARENTED ? o->parent : 0;
}

bool tbbt__ns_is_under(const struct tbbt_ns *ns, uint32_t dir, uint32_t obj)
{
    for (uint32_t i = 0; dir && i < WALK_MAX; i++) {
        if (dir == obj)
            return true;
        if (dir == ns->root)
            return false;
        dir = tbbt__ns_parent_of(ns, dir);
    }
    return dir != 0;    /* a walk that does not end is a loop already: refuse */
}

bool tbbt__ns_would_loop(const struct tbbt_ns *ns, uint32_t dir, uint32_t obj)
{
    if (dir == obj)
        return true;
    return (ns_obj(ns, obj)->flags & OF_ANCESTOR) && tbbt__ns_is_under(ns, dir, obj);
}

/* ---- queries ------------------------------------------------------------------------- */

enum tbbt_ns_lookup_res tbbt_ns_lookup(const struct tbbt_ns *ns, uint64_t dir, const void *name,
                                       size_t len, uint64_t *child)
{
    const char *s = name;
    uint32_t ref, l;

    *child = 0;
    if (dir == 0 || dir >= ns->objs.n)
        return ns->closed ? TBBT_NS_ABSENT : TBBT_NS_UNSURE;
    if (len == 1 && s[0] == '.') {
        *child = dir;
        return TBBT_NS_PRESENT;
    }
    if (len == 2 && s[0] == '.' && s[1] == '.') {
        *child = dir == ns->root ? dir : tbbt__ns_parent_of(ns, (uint32_t)dir);
        return *child ? TBBT_NS_PRESENT : TBBT_NS_UNSURE;
    }
    ref = tbbt_ns_name_ok(name, len) ? tbbt__ns_pool_find(&ns->pool, name, len) : 0;
    l = ref ? tbbt__ns_dent_find(ns, (uint32_t)dir, ref) : 0;
    if (l && ns_link_live(ns_link(ns, l))) {
        *child = ns_link(ns, l)->child;
        return TBBT_NS_PRESENT;
    }
    /* a directory made in the trace started empty: every name in it came in the trace */
    return l || ns->closed || ns_obj(ns, (uint32_t)dir)->create_ns ? TBBT_NS_ABSENT
                                                                  : TBBT_NS_UNSURE;
}

void tbbt_ns_stats(const struct tbbt_ns *ns, struct tbbt_ns_stats *st)
{
    *st = ns->st;
    st->objects = tbbt_ns_count(ns);
}

void tbbt_ns_summary(const struct tbbt_ns *ns, struct tbbt_json *j)
{
    struct tbbt_ns_stats st;

    tbbt_ns_stats(ns, &st);
    tbbt_json_kv_uint(j, "objects", st.objects);
    tbbt_json_kv_uint(j, "map_entries", st.map_entries);
    tbbt_json_kv_uint(j, "orphans", st.orphans);
    tbbt_json_kv_uint(j, "hostile_names", st.hostile_names);
    tbbt_json_kv_uint(j, "subtrees", st.subtrees);
    tbbt_json_kv_uint(j, "unnamed_dirs", st.unnamed);
    tbbt_json_kv_uint(j, "untyped_objects", st.untyped);
    tbbt_json_kv_uint(j, "handles_with_id", st.handles);
    tbbt_json_kv_uint(j, "merged_handles", st.merged_handles);
    tbbt_json_kv_uint(j, "handle_key_conflicts", st.key_conflicts);
    tbbt_json_kv_uint(j, "dotdot_lookups", st.dotdot_lookups);
    tbbt_json_kv_uint(j, "mounts", st.mounts);
    tbbt_json_kv_uint(j, "mounts_placed", st.mounts_placed);
    tbbt_json_kv_uint(j, "mount_conflicts", st.mount_conflicts);
    tbbt_json_kv_uint(j, "root_inferred", st.root_inferred);
    tbbt_json_kv_uint(j, "exec_order_moves", st.exec_order_moves);
    tbbt_json_kv_uint(j, "identity_mismatches", st.identity_mismatches);
    tbbt_json_kv_uint(j, "inferred_creates", st.inferred_creates);
    tbbt_json_kv_uint(j, "inferred_removes", st.inferred_removes);
    tbbt_json_kv_uint(j, "cycles_refused", st.cycles_refused);
    tbbt_json_kv_uint(j, "stale_objects", st.stale_objects);
}
