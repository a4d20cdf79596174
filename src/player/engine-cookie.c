/* SPDX-License-Identifier: MIT */
/*
 * READDIR(PLUS) cookies (engine-int.h): the continuation table (cookies.h) shared by the
 * send and the receive thread under cookie_mu.
 */
#include "player/engine-int.h"

void tbbt__eng_map_cookie(struct eng *e, struct slot *s, struct tbbt_nfsreq *q)
{
    const struct tbbt_trace_rec *r = &s->rec;
    if (!TBBT_HAS(r, TBBT_F_COOKIE) || r->cookie == 0)
        return;
    if (!s->cookie_mapped) {   /* a resend keeps what the first send took */
        g_mutex_lock(&e->cookie_mu);
        tbbt_play_cookies_take(e->cookies, s->clone, r, &s->cookie[0], &s->cookie[1]);
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
    for (unsigned i = 0; i < n; i++)
        if (d[i].tail)
            tbbt_play_cookies_put(e->cookies, d[i].s->clone, &d[i].s->rec, d[i].cookie,
                                  d[i].verf);
    g_mutex_unlock(&e->cookie_mu);
}
