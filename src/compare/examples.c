/* SPDX-License-Identifier: MIT */
/*
 * The examples of tbbt-compare's text summary: the difference tables keep only record
 * indexes (at most --show per key), and this second pass over each trace formats those
 * records in the text form of tbbt-dump (tbbt_trace_format_rec(), docs/trace-format.md),
 * cut at EXAMPLE_MAX bytes (a READDIRPLUS reply's entries run to kilobytes).  Memory:
 * the examples only; each trace is read up to its last wanted record.
 */
#include "compare/compare-int.h"

#include <errno.h>

#define EXAMPLE_MAX 600

/* The wanted indexes of one side (0 original, 1 replay) as a set; *last: the largest. */
static GHashTable *wanted(const struct tbbt_compare *c, int side, uint64_t *last)
{
    GHashTable *set = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTableIter it;
    gpointer v;

    *last = 0;
    for (int k = 0; k < TBBT_COMPARE_NKINDS; k++) {
        g_hash_table_iter_init(&it, c->diffs[k]);
        while (g_hash_table_iter_next(&it, NULL, &v)) {
            const struct tbbt__cmp_diff *d = v;
            for (guint i = 0; i < d->ex->len; i++) {
                const struct tbbt__cmp_example *e =
                    &g_array_index(d->ex, struct tbbt__cmp_example, i);
                uint64_t seq = side ? e->b_seq : e->a_seq;
                if (seq == UINT64_MAX)
                    continue;
                g_hash_table_add(set, (gpointer)(uintptr_t)seq);
                *last = MAX(*last, seq);
            }
        }
    }
    return set;
}

static int format_side(struct tbbt_compare *c, int side, char *err, size_t errlen)
{
    const char *what = side ? "replay" : "original";
    const char *path = side ? c->o.trace_b : c->o.trace_a;
    uint64_t last, seq = 0;
    GHashTable *set = wanted(c, side, &last);
    struct tbbt_trace_reader *r = NULL;
    struct tbbt_trace_rec rec;
    int rc = 0;

    tbbt_trace_rec_init(&rec);
    if (g_hash_table_size(set) == 0)
        goto out;
    if (!(r = tbbt__cmp_open(what, path, err, errlen))) {
        rc = -EIO;
        goto out;
    }
    while (seq <= last && (rc = tbbt_trace_reader_next(r, &rec)) == 1) {
        if (g_hash_table_contains(set, (gpointer)(uintptr_t)seq)) {
            GString *s = g_string_new(NULL);
            tbbt_trace_format_rec(s, &rec);
            if (s->len > EXAMPLE_MAX) {
                g_string_truncate(s, EXAMPLE_MAX);
                g_string_append(s, " ...");
            }
            g_hash_table_insert(c->lines[side], (gpointer)(uintptr_t)seq,
                                g_string_free(s, FALSE));
        }
        seq++;
    }
    if (rc < 0)
        tbbt__cmp_read_error(r, what, path, rc, err, errlen);
    else
        rc = 0;
out:
    if (r)
        tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    g_hash_table_destroy(set);
    return rc;
}

int tbbt__cmp_examples(struct tbbt_compare *c, char *err, size_t errlen)
{
    int rc = format_side(c, 0, err, errlen);
    return rc < 0 ? rc : format_side(c, 1, err, errlen);
}
