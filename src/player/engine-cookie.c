/* SPDX-License-Identifier: MIT */
/*
 * READDIR(PLUS) cookies (engine-int.h): a page that continues a traced listing is sent
 * with the cookie and verifier the server gave for the traced entry it continues from,
 * kept per (clone, directory, traced cookie) from the replies of earlier pages.
 */
#include "player/engine-int.h"

/* Maps a server cookie for a READDIR(PLUS) continuation (the trace's cookie -> ours). */
struct cookie_key {
    uint64_t clone_dir, cookie;
};

guint tbbt__eng_cookie_hash(gconstpointer p)
{
    const struct cookie_key *k = p;
    return (guint)((k->clone_dir * 0x9e3779b97f4a7c15ull) ^ k->cookie ^ (k->cookie >> 32));
}

gboolean tbbt__eng_cookie_equal(gconstpointer a, gconstpointer b)
{
    const struct cookie_key *x = a, *y = b;
    return x->clone_dir == y->clone_dir && x->cookie == y->cookie;
}

void tbbt__eng_map_cookie(struct eng *e, struct slot *s, struct tbbt_nfsreq *q)
{
    const struct tbbt_trace_rec *r = &s->rec;
    if (!TBBT_HAS(r, TBBT_F_COOKIE) || r->cookie == 0)
        return;
    if (!s->cookie_mapped) {   /* a resend keeps what the first send took */
        struct cookie_key k = {((uint64_t)s->clone << 32) | r->id, r->cookie};
        s->cookie[0] = s->cookie[1] = 0;
        g_mutex_lock(&e->cookie_mu);
        const uint64_t *found = g_hash_table_lookup(e->cookies, &k);
        if (found) {
            memcpy(s->cookie, found, sizeof(s->cookie));
            g_hash_table_remove(e->cookies, &k);
        }
        g_mutex_unlock(&e->cookie_mu);
        s->cookie_mapped = true;
    }
    tbbt_nfsreq_set_cookie(q, s->cookie[0], s->cookie[1]);
}

void tbbt__eng_rx_cookies(struct eng *e, const struct rxdone *d, unsigned n)
{
    bool any = false;
    for (unsigned i = 0; i < n && !any; i++)
        any = d[i].tail;
    if (!any)
        return;
    g_mutex_lock(&e->cookie_mu);
    for (unsigned i = 0; i < n; i++) {
        const struct tbbt_trace_rec *r = &d[i].s->rec;
        if (!d[i].tail || r->n_entries == 0 || !TBBT_HAS(r, TBBT_F_ID))
            continue;
        struct cookie_key *k = g_new(struct cookie_key, 1);
        k->clone_dir = ((uint64_t)d[i].s->clone << 32) | r->id;
        k->cookie = r->entries[r->n_entries - 1].cookie;
        uint64_t *v = g_new(uint64_t, 2);
        v[0] = d[i].cookie;
        v[1] = d[i].verf;
        g_hash_table_replace(e->cookies, k, v);
    }
    g_mutex_unlock(&e->cookie_mu);
}
