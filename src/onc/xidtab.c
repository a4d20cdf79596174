/* SPDX-License-Identifier: MIT */
/*
 * The table of outstanding calls by XID (RFC 5531 section 9: a reply names its call
 * only by the XID): a chained hash table over entries the caller embeds in its calls,
 * so that matching a reply costs no allocation.  It doubles when it holds as many
 * entries as buckets.  Used by the client transport (rpcconn.c); the capture pairing
 * (src/extract/pair.c) is keyed by addresses and ports too and ages calls out, so it
 * keeps its own.
 */
#include "onc/onc.h"

#include <glib.h>

void tbbt_onc_xidtab_init(struct tbbt_onc_xidtab *t, size_t buckets)
{
    size_t n = 1;

    while (n < buckets)
        n *= 2;
    t->b = g_new0(struct tbbt_onc_xident *, n);
    t->mask = n - 1;
    t->n = 0;
}

void tbbt_onc_xidtab_fini(struct tbbt_onc_xidtab *t)
{
    g_free(t->b);
    t->b = NULL;
    t->mask = t->n = 0;
}

static void link_in(struct tbbt_onc_xidtab *t, struct tbbt_onc_xident *e)
{
    struct tbbt_onc_xident **b = &t->b[e->xid & t->mask];

    e->next = *b;
    *b = e;
    t->n++;
}

static void grow(struct tbbt_onc_xidtab *t)
{
    struct tbbt_onc_xident **old = t->b;
    size_t oldn = t->mask + 1;

    t->b = g_new0(struct tbbt_onc_xident *, oldn * 2);
    t->mask = oldn * 2 - 1;
    t->n = 0;
    for (size_t i = 0; i < oldn; i++) {
        for (struct tbbt_onc_xident *e = old[i], *next; e; e = next) {
            next = e->next;
            link_in(t, e);
        }
    }
    g_free(old);
}

void tbbt_onc_xidtab_insert(struct tbbt_onc_xidtab *t, struct tbbt_onc_xident *e)
{
    if (t->n > t->mask)
        grow(t);
    link_in(t, e);
}

struct tbbt_onc_xident *tbbt_onc_xidtab_remove(struct tbbt_onc_xidtab *t, uint32_t xid)
{
    for (struct tbbt_onc_xident **pp = &t->b[xid & t->mask]; *pp; pp = &(*pp)->next) {
        struct tbbt_onc_xident *e = *pp;
        if (e->xid == xid) {
            *pp = e->next;
            t->n--;
            return e;
        }
    }
    return NULL;
}

static bool pick_any(const struct tbbt_onc_xident *e, void *arg)
{
    (void)e;
    (void)arg;
    return true;
}

struct tbbt_onc_xident *tbbt_onc_xidtab_take_all(struct tbbt_onc_xidtab *t)
{
    return tbbt_onc_xidtab_take_if(t, pick_any, NULL, SIZE_MAX);
}

struct tbbt_onc_xident *tbbt_onc_xidtab_take_if(struct tbbt_onc_xidtab *t,
                                                bool (*pick)(const struct tbbt_onc_xident *e,
                                                             void *arg),
                                                void *arg, size_t max)
{
    struct tbbt_onc_xident *head = NULL, **tail = &head;
    size_t taken = 0;

    for (size_t i = 0; i <= t->mask && taken < max; i++) {
        for (struct tbbt_onc_xident **pp = &t->b[i]; *pp && taken < max;) {
            struct tbbt_onc_xident *e = *pp;
            if (!pick(e, arg)) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            t->n--;
            e->next = NULL;
            *tail = e;
            tail = &e->next;
            taken++;
        }
    }
    return head;
}
