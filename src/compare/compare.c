/* SPDX-License-Identifier: MIT */
/*
 * A tbbt-compare run (compare.h): the object mapping from the maps (and whether the
 * traces carry credentials), the pass over both traces, then the examples pass.  Also
 * the results' accessors and the helpers that open traces and word their errors.
 */
#include "compare/compare-int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "util/util.h"

void tbbt_compare_opts_init(struct tbbt_compare_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->speed = 1.0;
    o->horizon = TBBT_COMPARE_HORIZON;
    o->show = TBBT_COMPARE_SHOW;
}

struct tbbt_compare *tbbt_compare_new(const struct tbbt_compare_opts *o)
{
    struct tbbt_compare *c = g_new0(struct tbbt_compare, 1);

    c->o = *o;
    if (!(c->o.speed > 0))
        c->o.speed = 1.0;
    if (c->o.horizon == 0)
        c->o.horizon = 1;
    tbbt__cmp_diffs_init(c);
    tbbt__cmp_timing_init(&c->t);
    for (int s = 0; s < 2; s++)
        tbbt__cmp_creds_init(&c->creds[s]);
    tbbt__cmp_racy_init(&c->racy);
    for (int s = 0; s < 2; s++)
        c->lines[s] = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return c;
}

void tbbt_compare_free(struct tbbt_compare *c)
{
    if (!c)
        return;
    tbbt__cmp_objmap_fini(&c->map);
    tbbt__cmp_diffs_fini(c);
    tbbt__cmp_timing_fini(&c->t);
    for (int s = 0; s < 2; s++)
        tbbt__cmp_creds_fini(&c->creds[s]);
    tbbt__cmp_racy_fini(&c->racy);
    for (int s = 0; s < 2; s++)
        g_hash_table_destroy(c->lines[s]);
    g_free(c);
}

struct tbbt_trace_reader *tbbt__cmp_open(const char *what, const char *path, char *err,
                                         size_t errlen)
{
    int rc = 0;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(path, &rc);

    if (!r)
        tbbt_errbuf(err, errlen, "cannot read the %s trace '%s': %s", what, path,
                    tbbt_strerror(rc));
    return r;
}

void tbbt__cmp_read_error(struct tbbt_trace_reader *r, const char *what, const char *path,
                          int rc, char *err, size_t errlen)
{
    tbbt_errbuf(err, errlen, "cannot read the %s trace '%s': %s at byte %" PRIu64, what, path,
                tbbt_strerror(rc), tbbt_trace_reader_offset(r));
}

int tbbt_compare_run(struct tbbt_compare *c, char *err, size_t errlen)
{
    bool creds = false;
    int rc;

    g_return_val_if_fail(!c->ran, -EINVAL);
    c->ran = true;
    if ((rc = tbbt__cmp_objmap_load(&c->map, &c->o, &creds, err, errlen)) < 0)
        return rc;
    c->cnt.credentials = creds;
    if ((rc = tbbt__cmp_match(c, err, errlen)) < 0)
        return rc;
    tbbt__cmp_objmap_count(&c->map, &c->cnt);
    tbbt__cmp_timing_held(&c->t, c->o.speed);
    if (c->o.show > 0 && (rc = tbbt__cmp_examples(c, err, errlen)) < 0)
        return rc;
    return 0;
}

const struct tbbt_compare_counts *tbbt_compare_counts(const struct tbbt_compare *c)
{
    return &c->cnt;
}

void tbbt_compare_get_timing(const struct tbbt_compare *c, struct tbbt_compare_timing *t)
{
    tbbt__cmp_timing_summary(&c->t, c->cnt.matched, t);
}

uint64_t tbbt_compare_diff(const struct tbbt_compare *c, enum tbbt_compare_kind kind,
                           const char *key)
{
    const struct tbbt__cmp_diff *d =
        kind < TBBT_COMPARE_NKINDS ? g_hash_table_lookup(c->diffs[kind], key) : NULL;
    return d ? d->n : 0;
}

const char *tbbt_compare_root_b(const struct tbbt_compare *c)
{
    return c->map.root_b_path ? c->map.root_b_path : ".";
}
