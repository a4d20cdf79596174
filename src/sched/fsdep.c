/* SPDX-License-Identifier: MIT */
/*
 * The FS-dependency object locks (fsdep.h; TBBT paper 3.4.1, Table 4): per object, the
 * last writer and the readers since, as request sequence numbers.  A reader waits for
 * the last writer; a writer waits for the last writer and every reader since.  Entries
 * whose holders have all released are dropped when the table grows, so memory follows
 * the objects in the lookahead window, not the trace.
 */
#include "sched/fsdep.h"

#include <glib.h>

#include "ns/ns.h"
#include "util/hash.h"

struct objlock {
    uint64_t writer;        /* seq + 1 of the last writer, 0 if none */
    uint32_t nreaders, cap;
    uint64_t *readers;      /* seqs of readers since the last writer */
};

struct tbbt_fsdep {
    GHashTable *objs;       /* key (uint64 in the pointer) -> struct objlock * */
    tbbt_fsdep_live_cb live;
    tbbt_fsdep_dep_cb dep;
    void *arg;
    unsigned prune_at;
};

static void add_id(uint64_t *v, int *n, uint64_t id)
{
    if (id == 0 || *n >= TBBT_FSDEP_MAX_OBJS)
        return;
    for (int i = 0; i < *n; i++)
        if (v[i] == id)
            return;
    v[(*n)++] = id;
}

/* A directory's listing (READDIR against name changes), never 0 (see admit). */
static uint64_t list_key(uint64_t dir)
{
    return ((dir * 0xd6e8feb86659fd93ull) ^ 0x5bd1e9955bd1e995ull) | 1u;
}

/* A listing position: directory id at cookie, never 0 (a key of its own, see admit). */
static uint64_t page_key(uint64_t id, uint64_t cookie)
{
    uint64_t k = (id * 0x9e3779b97f4a7c15ull) ^ (cookie * 0xc2b2ae3d27d4eb4full);
    return (k ^ (k >> 29)) | 1u;
}

static void page_sets(const struct tbbt_trace_rec *rec, uint64_t id, struct tbbt_fsdep_sets *s)
{
    if (!id)
        return;
    if (TBBT_HAS(rec, TBBT_F_COOKIE) && rec->cookie != 0)
        s->page_r = page_key(id, rec->cookie);
    if (TBBT_HAS(rec, TBBT_F_ENTRIES) && rec->n_entries > 0)
        s->page_w = page_key(id, rec->entries[rec->n_entries - 1].cookie);
}

/* A directory entry: (dir, name), never 0. */
static uint64_t name_key(uint64_t dir, const struct tbbt_str *name)
{
    return tbbt_hash(name->p, name->len, dir * 0x9e3779b97f4a7c15ull) | 1u;
}

static void name_sets(const struct tbbt_trace_rec *rec, uint64_t id, uint64_t id2,
                      struct tbbt_fsdep_sets *s)
{
    bool n1 = id && TBBT_HAS(rec, TBBT_F_NAME) && rec->name.p;
    bool n2 = id2 && TBBT_HAS(rec, TBBT_F_NAME2) && rec->name2.p;
    switch (tbbt_ns_op(rec)) {
    case TBBT_NS_OP_LOOKUP:
        if (n1)
            s->name_r = name_key(id, &rec->name);
        break;
    case TBBT_NS_OP_CREATE: case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_SYMLINK:
    case TBBT_NS_OP_MKNOD: case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR:
        if (n1)
            s->name_w[0] = name_key(id, &rec->name);
        break;
    case TBBT_NS_OP_LINK:
        if (n2)
            s->name_w[0] = name_key(id2, &rec->name2);
        break;
    case TBBT_NS_OP_RENAME:
        if (n1)
            s->name_w[0] = name_key(id, &rec->name);
        if (n2)
            s->name_w[1] = name_key(id2, &rec->name2);
        break;
    default:
        break;
    }
}

void tbbt_fsdep_sets(const struct tbbt_trace_rec *rec, struct tbbt_fsdep_sets *s)
{
    uint64_t id = TBBT_HAS(rec, TBBT_F_ID) ? rec->id : 0;
    uint64_t id2 = TBBT_HAS(rec, TBBT_F_ID2) ? rec->id2 : 0;
    uint64_t obj = TBBT_HAS(rec, TBBT_F_ID_OBJ) ? rec->id_obj : 0;
    uint64_t old = TBBT_HAS(rec, TBBT_F_ID_OLD) ? rec->id_old : 0;
    s->nr = s->nw = 0;
    s->page_r = s->page_w = 0;
    s->name_r = s->name_w[0] = s->name_w[1] = 0;
    s->list_r = s->list_w[0] = s->list_w[1] = 0;
    name_sets(rec, id, id2, s);
    switch (tbbt_ns_op(rec)) {
    case TBBT_NS_OP_READDIR:
    case TBBT_NS_OP_READDIRPLUS:
        page_sets(rec, id, s);
        s->list_r = id;
        add_id(s->r, &s->nr, id);
        break;
    case TBBT_NS_OP_ATTR:
    case TBBT_NS_OP_READLINK:
    case TBBT_NS_OP_READ:
        add_id(s->r, &s->nr, id);
        break;
    case TBBT_NS_OP_LOOKUP:
        add_id(s->r, &s->nr, id);
        add_id(s->r, &s->nr, obj);
        break;
    case TBBT_NS_OP_SETATTR:
    case TBBT_NS_OP_WRITE:
        add_id(s->w, &s->nw, id);
        break;
    case TBBT_NS_OP_CREATE:
    case TBBT_NS_OP_MKDIR:
    case TBBT_NS_OP_SYMLINK:
    case TBBT_NS_OP_MKNOD:
    case TBBT_NS_OP_REMOVE:
    case TBBT_NS_OP_RMDIR:
        s->list_w[0] = id;
        add_id(s->r, &s->nr, id);
        add_id(s->w, &s->nw, obj);
        add_id(s->w, &s->nw, old);
        break;
    case TBBT_NS_OP_RENAME:
        s->list_w[0] = id;
        s->list_w[1] = id2 != id ? id2 : 0;
        add_id(s->r, &s->nr, id);
        if (id2 != id)
            add_id(s->r, &s->nr, id2);
        add_id(s->w, &s->nw, obj);
        add_id(s->w, &s->nw, old);
        break;
    case TBBT_NS_OP_LINK:
        add_id(s->w, &s->nw, id);
        s->list_w[0] = id2;
        add_id(s->r, &s->nr, id2);
        add_id(s->w, &s->nw, old);
        break;
    case TBBT_NS_OP_NONE:
    case TBBT_NS_OP_MNT:
        break;
    }
    /* An object both read and written is written. */
    int k = 0;
    for (int i = 0; i < s->nr; i++) {
        bool w = false;
        for (int j = 0; j < s->nw; j++)
            w |= s->w[j] == s->r[i];
        if (!w)
            s->r[k++] = s->r[i];
    }
    s->nr = k;
}

static void objlock_free(gpointer p)
{
    struct objlock *o = p;
    g_free(o->readers);
    g_free(o);
}

/* Keys (clone << 32 | TBBT-ID, never 0) are stored in the pointer itself: no key
 * allocation, no indirection on lookup. */
G_STATIC_ASSERT(sizeof(gpointer) >= sizeof(uint64_t));

static guint key_hash(gconstpointer p)
{
    uint64_t k = GPOINTER_TO_SIZE(p);
    return (guint)((k * 0x9e3779b97f4a7c15ull) >> 32);
}

struct tbbt_fsdep *tbbt_fsdep_new(tbbt_fsdep_live_cb live, tbbt_fsdep_dep_cb dep, void *arg)
{
    struct tbbt_fsdep *t = g_new0(struct tbbt_fsdep, 1);
    t->objs = g_hash_table_new_full(key_hash, NULL, NULL, objlock_free);
    t->live = live;
    t->dep = dep;
    t->arg = arg;
    t->prune_at = 4096;
    return t;
}

void tbbt_fsdep_free(struct tbbt_fsdep *t)
{
    if (!t)
        return;
    g_hash_table_destroy(t->objs);
    g_free(t);
}

unsigned tbbt_fsdep_size(const struct tbbt_fsdep *t)
{
    return g_hash_table_size(t->objs);
}

int tbbt_fsdep_changes(const struct tbbt_fsdep_sets *s, uint64_t *out)
{
    int n = 0;
    for (int i = 0; i < s->nw; i++)
        out[n++] = s->w[i];
    for (int i = 0; i < 2; i++) {
        bool dup = s->list_w[i] == 0;
        for (int k = 0; k < n && !dup; k++)
            dup = out[k] == s->list_w[i];
        if (!dup)
            out[n++] = s->list_w[i];
    }
    return n;
}

uint64_t tbbt_fsdep_shown(const struct tbbt_trace_rec *rec)
{
    switch (tbbt_ns_op(rec)) {
    case TBBT_NS_OP_LOOKUP: case TBBT_NS_OP_CREATE: case TBBT_NS_OP_MKDIR:
    case TBBT_NS_OP_SYMLINK: case TBBT_NS_OP_MKNOD:
        return TBBT_HAS(rec, TBBT_F_ID_OBJ) ? rec->id_obj : 0;
    default:
        return TBBT_HAS(rec, TBBT_F_ID) ? rec->id : 0;
    }
}

/* Drops readers that released; true if the entry holds nothing live. */
static bool compact(struct tbbt_fsdep *t, struct objlock *o)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < o->nreaders; i++)
        if (t->live(o->readers[i], t->arg))
            o->readers[k++] = o->readers[i];
    o->nreaders = k;
    if (o->writer && !t->live(o->writer - 1, t->arg))
        o->writer = 0;
    return k == 0 && o->writer == 0;
}

static gboolean prune_one(gpointer key, gpointer value, gpointer arg)
{
    (void)key;
    return compact(arg, value);
}

static struct objlock *get(struct tbbt_fsdep *t, uint64_t key)
{
    struct objlock *o = g_hash_table_lookup(t->objs, GSIZE_TO_POINTER(key));
    if (o)
        return o;
    if (g_hash_table_size(t->objs) >= t->prune_at) {
        g_hash_table_foreach_remove(t->objs, prune_one, t);
        t->prune_at = MAX(4096u, 2 * g_hash_table_size(t->objs));
    }
    o = g_new0(struct objlock, 1);
    g_hash_table_insert(t->objs, GSIZE_TO_POINTER(key), o);
    return o;
}

static void read_obj(struct tbbt_fsdep *t, uint64_t seq, struct objlock *o,
                     enum tbbt_fsdep_dep kind)
{
    if (o->writer && t->live(o->writer - 1, t->arg))
        t->dep(o->writer - 1, seq, kind, t->arg);
    if (o->nreaders == o->cap) {
        compact(t, o);
        if (o->nreaders == o->cap) {
            o->cap = MAX(4, o->cap * 2);
            o->readers = g_renew(uint64_t, o->readers, o->cap);
        }
    }
    o->readers[o->nreaders++] = seq;
}

static void write_obj(struct tbbt_fsdep *t, uint64_t seq, struct objlock *o,
                      enum tbbt_fsdep_dep kind)
{
    if (o->writer && t->live(o->writer - 1, t->arg))
        t->dep(o->writer - 1, seq, kind, t->arg);
    for (uint32_t i = 0; i < o->nreaders; i++)
        if (o->readers[i] != seq && t->live(o->readers[i], t->arg))
            t->dep(o->readers[i], seq, kind, t->arg);
    o->nreaders = 0;
    o->writer = seq + 1;
}

/*
 * Listing positions live in a key space of their own: bit 63 set (object keys are
 * clone << 32 | ID, IDs below 2^32 and clones below 2^31), the rest a hash of the
 * position and the clone.  A collision only adds a needless wait.
 */
static uint64_t page_lock_key(uint32_t clone, uint64_t page)
{
    uint64_t k = page ^ ((uint64_t)clone * 0xff51afd7ed558ccdull);
    return (k & ~(UINT64_C(1) << 63)) | (UINT64_C(1) << 63);
}

void tbbt_fsdep_admit(struct tbbt_fsdep *t, uint64_t seq, uint32_t clone,
                      const struct tbbt_fsdep_sets *s, enum tbbt_fsdep_scope scope)
{
    uint64_t base = (uint64_t)clone << 32;
    enum tbbt_fsdep_dep all = scope == TBBT_FSDEP_ALL ? TBBT_FSDEP_DEP_OBJECT : TBBT_FSDEP_DEP_INFO;
    for (int i = 0; i < s->nr; i++)
        read_obj(t, seq, get(t, base | s->r[i]), all);
    for (int i = 0; i < s->nw; i++)
        write_obj(t, seq, get(t, base | s->w[i]), all);
    if (s->page_r)
        read_obj(t, seq, get(t, page_lock_key(clone, s->page_r)), all);
    if (s->page_w)
        write_obj(t, seq, get(t, page_lock_key(clone, s->page_w)), all);
    if (s->list_r)
        read_obj(t, seq, get(t, page_lock_key(clone, list_key(s->list_r))), all);
    for (int i = 0; i < 2; i++)
        if (s->list_w[i])
            write_obj(t, seq, get(t, page_lock_key(clone, list_key(s->list_w[i]))), all);
    if (s->name_r)
        read_obj(t, seq, get(t, page_lock_key(clone, s->name_r)), TBBT_FSDEP_DEP_NAME);
    for (int i = 0; i < 2; i++)
        if (s->name_w[i] && (i == 0 || s->name_w[1] != s->name_w[0]))
            write_obj(t, seq, get(t, page_lock_key(clone, s->name_w[i])), TBBT_FSDEP_DEP_NAME);
}
