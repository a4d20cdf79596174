/* SPDX-License-Identifier: MIT */
/*
 * The in-memory trace record (TBBT paper 3.1, Table 1): initialization,
 * clearing for reuse, strings in the record's arena and the readdir entry
 * array.  The entry array is a heap block owned by the record whose
 * capacity follows from n_entries (0, then powers of two from 8), so the
 * struct needs no capacity member.
 */
#include "trace/trace-int.h"

#include <string.h>

#define ARENA_BLOCK 1024    /* most records hold at most a couple of short names */
#define ENTRIES_MIN 8

void tbbt_trace_rec_init(struct tbbt_trace_rec *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->arena = g_string_chunk_new(ARENA_BLOCK);
}

void tbbt_trace_rec_fini(struct tbbt_trace_rec *rec)
{
    g_free(rec->entries);
    if (rec->arena)
        g_string_chunk_free(rec->arena);
    memset(rec, 0, sizeof(*rec));
}

void tbbt_trace_rec_clear(struct tbbt_trace_rec *rec)
{
    GStringChunk *arena = rec->arena;

    g_free(rec->entries);
    memset(rec, 0, sizeof(*rec));
    rec->arena = arena;
    g_string_chunk_clear(arena);
}

void tbbt_trace_rec_set_str(struct tbbt_trace_rec *rec, struct tbbt_str *dst, const void *p,
                            uint32_t len)
{
    dst->len = len;
    dst->p = len ? g_string_chunk_insert_len(rec->arena, p, len) : "";
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
    uint32_t have = rec->entries ? entries_cap(rec->n_entries) : 0;

    if (n <= have)
        return;
    rec->entries = g_renew(struct tbbt_entry, rec->entries, entries_cap(n));
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

void tbbt_trace_rec_copy(struct tbbt_trace_rec *dst, const struct tbbt_trace_rec *src)
{
    GStringChunk *arena = dst->arena;

    tbbt_trace_rec_clear(dst);
    *dst = *src;
    dst->arena = arena;
    dst->entries = NULL;
    dst->n_entries = 0;
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
