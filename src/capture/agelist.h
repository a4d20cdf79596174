/* SPDX-License-Identifier: MIT */
/*
 * Private to the capture module: a list of entries in the order they were
 * last used, oldest first, for the state that is bounded by dropping what
 * has waited longest (IP datagrams awaiting fragments, ipfrag.c; TCP
 * streams, tcp.c).  Intrusive: each entry embeds a struct tbbt__cap_age,
 * so pushing, unlinking and finding the oldest allocate nothing and cost a
 * few stores.  The list owns nothing; not thread-safe (one decoder's).
 */
#ifndef TBBT_CAPTURE_AGELIST_H
#define TBBT_CAPTURE_AGELIST_H

#include <stddef.h>

/* The link embedded in an entry; both NULL while the entry is not listed. */
struct tbbt__cap_age {
    struct tbbt__cap_age *older, *newer;
};

/* A list; all zero is empty. */
struct tbbt__cap_ages {
    struct tbbt__cap_age *oldest, *newest;
};

/* The entry of type (whose link is member) that link l is in; NULL for NULL. */
#define TBBT__CAP_AGE_ENTRY(l, type, member)                                                     \
    ((l) ? (type *)(void *)((char *)(l) - offsetof(type, member)) : (type *)NULL)

/* Appends e, which is not listed, as the newest. */
static inline void tbbt__cap_ages_push(struct tbbt__cap_ages *ls, struct tbbt__cap_age *e)
{
    e->older = ls->newest;
    e->newer = NULL;
    if (ls->newest)
        ls->newest->newer = e;
    else
        ls->oldest = e;
    ls->newest = e;
}

/* Takes e, which is listed in ls, out of it. */
static inline void tbbt__cap_ages_unlink(struct tbbt__cap_ages *ls, struct tbbt__cap_age *e)
{
    if (e->older)
        e->older->newer = e->newer;
    else
        ls->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        ls->newest = e->older;
    e->older = e->newer = NULL;
}

/* Makes e, which is listed in ls, the newest. */
static inline void tbbt__cap_ages_touch(struct tbbt__cap_ages *ls, struct tbbt__cap_age *e)
{
    if (ls->newest != e) {
        tbbt__cap_ages_unlink(ls, e);
        tbbt__cap_ages_push(ls, e);
    }
}

#endif
