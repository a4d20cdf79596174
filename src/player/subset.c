/* SPDX-License-Identifier: MIT */
/*
 * Spatial scale-down (TBBT paper 4, "scaling"): tbbt-play --subset-client and
 * --subset-subtree replay only the records of some clients, or only those whose objects
 * all lie under some top-level directories of the image (subset.h).  Objects that a
 * record makes inside the subset join it.  Moved out of play-main.c unchanged.
 */
#include "player/subset.h"

#include <string.h>

static bool subset_has(const struct tbbt_subset *ss, uint64_t id)
{
    return id == 0 || id == ss->root_id || g_hash_table_contains(ss->ids, &id);
}

static void subset_add(struct tbbt_subset *ss, uint64_t id)
{
    if (id == 0 || g_hash_table_contains(ss->ids, &id))
        return;
    uint64_t *k = g_new(uint64_t, 1);
    *k = id;
    g_hash_table_add(ss->ids, k);
}

bool tbbt_subset_want(uint64_t id, void *arg)
{
    const struct tbbt_subset *ss = arg;
    return !ss->ids || subset_has(ss, id);
}

bool tbbt_subset_filter(const struct tbbt_trace_rec *rec, const struct tbbt_eptab *eps,
                        void *arg)
{
    struct tbbt_subset *ss = arg;
    if (ss->clients) {
        const struct tbbt_endpoint *ep = tbbt_eptab_get(eps, rec->endpoint);
        if (!ep || !g_strv_contains((const char *const *)ss->clients, ep->client))
            return false;
    }
    if (!ss->ids)
        return true;
    uint64_t dir = TBBT_HAS(rec, TBBT_F_ID) ? rec->id : 0;
    uint64_t ids[4] = {dir, TBBT_HAS(rec, TBBT_F_ID2) ? rec->id2 : 0,
                       TBBT_HAS(rec, TBBT_F_ID_OBJ) ? rec->id_obj : 0,
                       TBBT_HAS(rec, TBBT_F_ID_OLD) ? rec->id_old : 0};
    /* Objects made inside the subset join it (not those made at the root level). */
    if (dir && dir != ss->root_id && g_hash_table_contains(ss->ids, &dir)) {
        subset_add(ss, ids[2]);
        subset_add(ss, ids[3]);
    }
    int in = 0, out = 0;
    for (int i = 0; i < 4; i++) {
        if (ids[i] == 0 || ids[i] == ss->root_id)
            continue;
        if (g_hash_table_contains(ss->ids, &ids[i]))
            in++;
        else
            out++;
    }
    if (in && out)
        ss->crossing++;
    return in > 0 && out == 0;
}

void tbbt_subset_add_tops(struct tbbt_subset *ss, const struct tbbt_manifest *m, char **names)
{
    ss->ids = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    for (guint i = 0; i < m->objs->len; i++) {
        const struct tbbt_manifest_obj *o = &g_array_index(m->objs, struct tbbt_manifest_obj, i);
        const char *slash = memchr(o->path, '/', o->len);
        size_t top = slash ? (size_t)(slash - o->path) : o->len;
        for (char **n = names; *n; n++)
            if (strlen(*n) == top && memcmp(*n, o->path, top) == 0)
                subset_add(ss, o->id);
    }
}

void tbbt_subset_fini(struct tbbt_subset *ss)
{
    if (ss->ids)
        g_hash_table_destroy(ss->ids);
    g_strfreev(ss->clients);
}
