/* SPDX-License-Identifier: MIT */
/*
 * READDIR(PLUS) continuations in a replay (cookies.h).
 */
#include <glib.h>

#include "player/cookies.h"

struct key {
    uint64_t clone_dir, cookie;
};

/* An entry: its key and the server's cookie and verifier (one allocation). */
struct entry {
    struct key key;
    uint64_t cookie, verf;
};

struct tbbt_play_cookies {
    GHashTable *t;              /* &entry.key -> struct entry */
};

static guint key_hash(gconstpointer p)
{
    const struct key *k = p;
    return (guint)((k->clone_dir * 0x9e3779b97f4a7c15ull) ^ k->cookie ^ (k->cookie >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const struct key *x = a, *y = b;
    return x->clone_dir == y->clone_dir && x->cookie == y->cookie;
}

struct tbbt_play_cookies *tbbt_play_cookies_new(void)
{
    struct tbbt_play_cookies *c = g_new(struct tbbt_play_cookies, 1);
    c->t = g_hash_table_new_full(key_hash, key_equal, NULL, g_free);
    return c;
}

void tbbt_play_cookies_free(struct tbbt_play_cookies *c)
{
    if (!c)
        return;
    g_hash_table_destroy(c->t);
    g_free(c);
}

void tbbt_play_cookies_put(struct tbbt_play_cookies *c, uint32_t clone,
                           const struct tbbt_trace_rec *rec, uint64_t cookie, uint64_t verf)
{
    if (rec->n_entries == 0 || !TBBT_HAS(rec, TBBT_F_ID))
        return;
    struct entry *x = g_new(struct entry, 1);
    x->key = (struct key){(uint64_t)clone << 32 | rec->id,
                          rec->entries[rec->n_entries - 1].cookie};
    x->cookie = cookie;
    x->verf = verf;
    g_hash_table_replace(c->t, &x->key, x);
}

bool tbbt_play_cookies_take(struct tbbt_play_cookies *c, uint32_t clone,
                            const struct tbbt_trace_rec *rec, uint64_t *cookie, uint64_t *verf)
{
    struct key k = {(uint64_t)clone << 32 | rec->id, rec->cookie};
    const struct entry *found = g_hash_table_lookup(c->t, &k);

    *cookie = *verf = 0;
    if (!found)
        return false;
    *cookie = found->cookie;
    *verf = found->verf;
    g_hash_table_remove(c->t, &k);
    return true;
}
