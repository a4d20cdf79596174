/* SPDX-License-Identifier: MIT */
/*
 * The in-memory trace record (TBBT paper 3.1, Table 1): initialization,
 * clearing for reuse, strings in the record's arena and the readdir entry
 * array and the NFSv4 operation array.  A record is cleared once per record
 * read or written, so clearing keeps the memory: the entry and operation arrays
 * (their capacities in entries_cap and ops_cap) and the
 * arena's largest block stay for the next record; only blocks that an
 * unusually large record needed beside it are freed.
 */
#include "trace/trace-int.h"

#include <string.h>

#define ARENA_BLOCK 1024    /* most records hold at most a couple of short names */
#define ENTRIES_MIN 8

/* Strings of one record: a bump block, and older blocks until the next clear. */
struct tbbt__arena {
    char *base;
    size_t used, cap;
    GSList *old;            /* blocks that filled up (pointers into them stay valid) */
};

static struct tbbt__arena *arena_new(void)
{
    struct tbbt__arena *a = g_new0(struct tbbt__arena, 1);

    a->cap = ARENA_BLOCK;
    a->base = g_malloc(a->cap);
    return a;
}

static void arena_reset(struct tbbt__arena *a)
{
    if (a->old) {       /* rare; glib's list free costs a thread-local look-up even for none */
        g_slist_free_full(a->old, g_free);
        a->old = NULL;
    }
    a->used = 0;
}

static void arena_free(struct tbbt__arena *a)
{
    if (!a)
        return;
    arena_reset(a);
    g_free(a->base);
    g_free(a);
}

/* A NUL-terminated copy of p[0..len) that lives until the next reset. */
static const char *arena_copy(struct tbbt__arena *a, const void *p, size_t len)
{
    char *d;

    if (a->cap - a->used < len + 1) {
        size_t cap = MAX(a->cap * 2, len + 1);
        a->old = g_slist_prepend(a->old, a->base);   /* earlier strings stay where they are */
        a->base = g_malloc(cap);
        a->cap = cap;
        a->used = 0;
    }
    d = a->base + a->used;
    memcpy(d, p, len);
    d[len] = '\0';
    a->used += len + 1;
    return d;
}

void tbbt_trace_rec_init(struct tbbt_trace_rec *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->arena = arena_new();
}

void tbbt_trace_rec_fini(struct tbbt_trace_rec *rec)
{
    g_free(rec->entries);
    g_free(rec->ops);
    arena_free(rec->arena);
    memset(rec, 0, sizeof(*rec));
}

void tbbt_trace_rec_clear(struct tbbt_trace_rec *rec)
{
    struct tbbt__arena *arena = rec->arena;
    struct tbbt_entry *entries = rec->entries;
    struct tbbt_op4 *ops = rec->ops;
    uint32_t cap = rec->entries_cap, ops_cap = rec->ops_cap;

    memset(rec, 0, sizeof(*rec));
    rec->arena = arena;
    rec->entries = entries;
    rec->entries_cap = cap;
    rec->ops = ops;
    rec->ops_cap = ops_cap;
    arena_reset(arena);
}

void tbbt_trace_rec_set_str(struct tbbt_trace_rec *rec, struct tbbt_str *dst, const void *p,
                            uint32_t len)
{
    dst->len = len;
    dst->p = len ? arena_copy(rec->arena, p, len) : "";
}

/* Capacity of an entry array holding n entries. */
static uint32_t entries_cap(uint32_t n)
{
    uint32_t cap = ENTRIES_MIN;

    while (cap < n)
        cap *= 2;
    return cap;
}

void tbbt__trace_rec_reserve(struct tbbt_trace_rec *rec, uint32_t n)
{
    if (n <= rec->entries_cap)
        return;
    rec->entries_cap = entries_cap(n);
    rec->entries = g_renew(struct tbbt_entry, rec->entries, rec->entries_cap);
}

struct tbbt_entry *tbbt_trace_rec_add_entry(struct tbbt_trace_rec *rec)
{
    struct tbbt_entry *e;

    tbbt__trace_rec_reserve(rec, rec->n_entries + 1);
    e = &rec->entries[rec->n_entries++];
    memset(e, 0, sizeof(*e));
    e->name.p = "";
    return e;
}

struct tbbt_op4 *tbbt_trace_rec_add_op4(struct tbbt_trace_rec *rec)
{
    struct tbbt_op4 *o;

    if (rec->n_ops >= TBBT_OP4_MAX)
        return NULL;
    if (rec->n_ops == rec->ops_cap) {
        rec->ops_cap = rec->ops_cap ? MIN(rec->ops_cap * 2, TBBT_OP4_MAX) : ENTRIES_MIN;
        rec->ops = g_renew(struct tbbt_op4, rec->ops, rec->ops_cap);
    }
    o = &rec->ops[rec->n_ops++];
    memset(o, 0, sizeof(*o));
    o->name.p = o->name2.p = o->target.p = o->owner.p = "";
    return o;
}

/* dst's copies of src's operations, their strings in dst's arena. */
static void copy_ops(struct tbbt_trace_rec *dst, const struct tbbt_trace_rec *src)
{
    for (uint32_t i = 0; i < src->n_ops; i++) {
        const struct tbbt_op4 *s = &src->ops[i];
        struct tbbt_op4 *d = tbbt_trace_rec_add_op4(dst);

        *d = *s;
        tbbt_trace_rec_set_str(dst, &d->name, s->name.p, s->name.len);
        tbbt_trace_rec_set_str(dst, &d->name2, s->name2.p, s->name2.len);
        tbbt_trace_rec_set_str(dst, &d->target, s->target.p, s->target.len);
        tbbt_trace_rec_set_str(dst, &d->owner, s->owner.p, s->owner.len);
    }
}

void tbbt_trace_rec_copy(struct tbbt_trace_rec *dst, const struct tbbt_trace_rec *src)
{
    struct tbbt__arena *arena = dst->arena;
    struct tbbt_entry *entries;
    struct tbbt_op4 *ops;
    uint32_t cap, ops_cap;

    tbbt_trace_rec_clear(dst);
    entries = dst->entries;
    cap = dst->entries_cap;
    ops = dst->ops;
    ops_cap = dst->ops_cap;
    *dst = *src;
    dst->arena = arena;
    dst->entries = entries;         /* dst's own arrays, not src's */
    dst->entries_cap = cap;
    dst->n_entries = 0;
    dst->ops = ops;
    dst->ops_cap = ops_cap;
    dst->n_ops = 0;
    copy_ops(dst, src);
    tbbt_trace_rec_set_str(dst, &dst->name, src->name.p, src->name.len);
    tbbt_trace_rec_set_str(dst, &dst->name2, src->name2.p, src->name2.len);
    tbbt_trace_rec_set_str(dst, &dst->target, src->target.p, src->target.len);
    tbbt_trace_rec_set_str(dst, &dst->dirpath, src->dirpath.p, src->dirpath.len);
    if (src->n_entries) {
        tbbt__trace_rec_reserve(dst, src->n_entries);
        memcpy(dst->entries, src->entries, src->n_entries * sizeof(*src->entries));
        dst->n_entries = src->n_entries;
        for (uint32_t i = 0; i < src->n_entries; i++) {
            const struct tbbt_str *n = &src->entries[i].name;
            tbbt_trace_rec_set_str(dst, &dst->entries[i].name, n->p, n->len);
        }
    }
}
