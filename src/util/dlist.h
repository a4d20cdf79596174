/* SPDX-License-Identifier: MIT */
/*
 * An intrusive doubly linked list: each entry embeds a struct tbbt_dlink, so appending,
 * unlinking and moving an entry to the end allocate nothing and cost a few stores.  Used
 * for lists kept in the order of last use (the capture's IP datagrams awaiting fragments
 * and its TCP streams, oldest first) and for the per-key queues of tbbt-compare's
 * matcher.  The list owns nothing; not thread-safe.
 */
#ifndef TBBT_UTIL_DLIST_H
#define TBBT_UTIL_DLIST_H

#include <stddef.h>

/* The link embedded in an entry; both NULL while the entry is not listed. */
struct tbbt_dlink {
    struct tbbt_dlink *prev, *next;
};

/* A list, first to last; all zero is empty. */
struct tbbt_dlist {
    struct tbbt_dlink *first, *last;
};

/* The entry of type (whose link is member) that link l is in; NULL for NULL. */
#define TBBT_DLIST_ENTRY(l, type, member)                                                       \
    ((l) ? (type *)(void *)((char *)(l) - offsetof(type, member)) : (type *)NULL)

/* Appends e, which is not listed, as the last. */
static inline void tbbt_dlist_push(struct tbbt_dlist *ls, struct tbbt_dlink *e)
{
    e->prev = ls->last;
    e->next = NULL;
    if (ls->last)
        ls->last->next = e;
    else
        ls->first = e;
    ls->last = e;
}

/* Takes e, which is listed in ls, out of it. */
static inline void tbbt_dlist_unlink(struct tbbt_dlist *ls, struct tbbt_dlink *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        ls->first = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        ls->last = e->prev;
    e->prev = e->next = NULL;
}

/* Makes e, which is listed in ls, the last. */
static inline void tbbt_dlist_touch(struct tbbt_dlist *ls, struct tbbt_dlink *e)
{
    if (ls->last != e) {
        tbbt_dlist_unlink(ls, e);
        tbbt_dlist_push(ls, e);
    }
}

#endif
