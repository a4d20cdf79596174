/* SPDX-License-Identifier: MIT */
/*
 * Sending again (engine-int.h; TBBT paper section 4): the resend queue in sequence order
 * with back-off, which calls are retried with a new XID, the duplicate-request answers
 * taken as success, and the silent-server rule.  The decisions per reply are in
 * rx_apply() (engine-recv.c); the limits are struct tbbt_rpcconn_retry's.
 */
#include "player/engine-int.h"

bool tbbt__eng_dup_answer(const struct slot *s, int32_t nfs)
{
    /* nfsstat3 (proto/nfs3.h); NFSv2's NOENT and EXIST have the same values */
    switch (s->op) {
    case TBBT_NS_OP_CREATE: case TBBT_NS_OP_MKDIR: case TBBT_NS_OP_SYMLINK:
    case TBBT_NS_OP_MKNOD: case TBBT_NS_OP_LINK:
        return nfs == NFS3ERR_EXIST;
    case TBBT_NS_OP_REMOVE: case TBBT_NS_OP_RMDIR: case TBBT_NS_OP_RENAME:
        return nfs == NFS3ERR_NOENT;
    case TBBT_NS_OP_SETATTR:
        return nfs == NFS3ERR_NOT_SYNC;
    default:
        return false;
    }
}

bool tbbt__eng_is_retried(const struct slot *s)
{
    return is_create(s) || s->op == TBBT_NS_OP_LINK || s->fixup;
}

static gint seq_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y;
}

void tbbt__eng_resend_locked(struct eng *e, struct slot *s, bool same_xid, uint64_t not_before)
{
    s->state = S_RESEND;
    s->same_xid = same_xid;
    s->not_before = not_before;
    GList *tail = e->resend.tail;
    if (!tail || GPOINTER_TO_SIZE(tail->data) < s->seq + 1)
        g_queue_push_tail(&e->resend, GSIZE_TO_POINTER(s->seq + 1));
    else
        g_queue_insert_sorted(&e->resend, GSIZE_TO_POINTER(s->seq + 1), seq_cmp, NULL);
    if (atomic_load_explicit(&e->sender_waiting, memory_order_relaxed))
        e->wake_send = true;
}

struct slot *tbbt__eng_pick_resend(struct eng *e, uint64_t now, uint64_t *due)
{
    for (GList *l = e->resend.head; l; l = l->next) {
        struct slot *s = S(e, GPOINTER_TO_SIZE(l->data) - 1);
        if (!e->conns[s->conn].up)
            continue;
        if (s->not_before > now) {
            *due = MIN(*due, s->not_before);
            continue;
        }
        g_queue_delete_link(&e->resend, l);
        return s;
    }
    return NULL;
}

bool tbbt__eng_server_silent(struct eng *e, const struct rxdone *d)
{
    if (d->status != TBBT_RPCCONN_TIMEDOUT)
        return false;
    uint64_t sent = d->recv_ns - MIN(d->recv_ns, d->lat_ns);
    return atomic_load_explicit(&e->last_reply_ns, memory_order_relaxed) < sent;
}
