/* SPDX-License-Identifier: MIT */
/*
 * Handles of the objects made during the replay (engine-int.h): a create's object is
 * PENDING while it is in flight, bound from its reply or a LOOKUP of its name, restored
 * or FAILED when it fails; in conservative order, requests that need a PENDING handle
 * are held (the scheduler's hold callback).
 */
#include "player/engine-int.h"

struct tbbt_handle *tbbt__eng_made_handle(struct eng *e, const struct slot *s)
{
    uint64_t obj = rec_obj(&s->rec);
    return obj ? tbbt_handles_slot(e->o->handles[s->clone], obj) : NULL;
}

void tbbt__eng_made_failed(struct eng *e, struct slot *s)
{
    if (!s->made_pending)
        return;
    struct tbbt_handle *h = tbbt__eng_made_handle(e, s);
    if (h && h->state == TBBT_HANDLE_PENDING)
        h->state = s->made_was_known ? TBBT_HANDLE_KNOWN : TBBT_HANDLE_FAILED;
    s->made_pending = false;
}

bool tbbt__eng_needs_pending(uint64_t seq, void *arg)
{
    struct eng *e = arg;
    const struct slot *s = S(e, seq);
    uint64_t ids[2];
    int n = tbbt_nfsreq_needs(&s->rec, ids);
    for (int i = 0; i < n; i++) {
        const struct tbbt_handle *h = tbbt_handles_peek(e->o->handles[s->clone], ids[i]);
        if (h && h->state == TBBT_HANDLE_PENDING)
            return true;
    }
    return false;
}

void tbbt__eng_bind_made(struct eng *e, struct slot *s, const struct rxdone *d)
{
    uint64_t obj = rec_obj(&s->rec);
    struct tbbt_handles *h = e->o->handles[s->clone];
    if (obj && d->fhlen && d->nfs == 0) {
        const struct tbbt_handle *k = tbbt_handles_peek(h, obj);
        if (s->made_pending || !k || k->state != TBBT_HANDLE_KNOWN)
            tbbt_handles_set(h, obj, d->fh, d->fhlen);
        s->made_pending = false;
        return;
    }
    if (s->made_pending) {
        struct tbbt_handle *k = tbbt__eng_made_handle(e, s);
        if (k && k->state == TBBT_HANDLE_PENDING)
            k->state = s->made_was_known ? TBBT_HANDLE_KNOWN
                       : s->checked && s->expected == 0 ? TBBT_HANDLE_FAILED
                                                        : TBBT_HANDLE_NONE;
        s->made_pending = false;
    }
}
