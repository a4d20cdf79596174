/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play's encoded traced credentials (creds.h).
 */
#include <time.h>

#include "player/creds.h"

void tbbt_play_creds_init(struct tbbt_play_creds *c)
{
    c->enc = g_ptr_array_new_with_free_func(g_free);
    c->stamp = (uint32_t)time(NULL);
}

void tbbt_play_creds_fini(struct tbbt_play_creds *c)
{
    if (c->enc)
        g_ptr_array_free(c->enc, TRUE);
    c->enc = NULL;
}

const struct tbbt_play_cred *tbbt_play_cred_of(struct tbbt_play_creds *c,
                                               const struct tbbt_credtab *t,
                                               const struct tbbt_trace_rec *rec)
{
    if (!TBBT_HAS(rec, TBBT_F_CRED))
        return NULL;
    if (rec->cred < c->enc->len && g_ptr_array_index(c->enc, rec->cred))
        return g_ptr_array_index(c->enc, rec->cred);
    const struct tbbt_cred *tc = tbbt_credtab_get(t, rec->cred);
    if (!tc)
        return NULL;
    struct tbbt_play_cred *x = g_new(struct tbbt_play_cred, 1);
    x->len = tbbt_rpcconn_encode_authsys(x->body, c->stamp, tc->machine, tc->machine_len,
                                         tc->uid, tc->gid, tc->ngids, tc->gids);
    if (rec->cred >= c->enc->len)
        g_ptr_array_set_size(c->enc, rec->cred + 1);
    g_ptr_array_index(c->enc, rec->cred) = x;
    return x;
}
