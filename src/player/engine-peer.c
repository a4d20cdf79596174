/* SPDX-License-Identifier: MIT */
/*
 * --distribute clients (engine.h, struct tbbt_engine_peer; docs/mpi.md): the records
 * other processes replay.  Each is admitted "external" (sched.h) and completed here when
 * its completion notice arrives; each own request that completes (answered or skipped)
 * becomes a notice for the others.  Notices are batched per mutex section: the entries
 * made while mu was held leave when it is let go (tbbt__eng_unlock_wake()), at most
 * NOTICE_BATCH in one message.  Not the channel between the processes: the caller's.
 *
 * Message (big-endian):  "TBNT"  u32 n  then n entries:
 *     u64 seq   u8 what (0: no handle to give, 1: handle follows, 2: its object could
 *                        not be made or found)   [u8 len (1..64)  len bytes]
 * seq is the request's sequence number (record * clones + clone), the same in every
 * process; the handle is the one this process's handle table holds for the record's
 * object after the request, so the receiver binds what the sender learnt.
 */
#include "player/engine-int.h"

#include "util/buf.h"
#include "util/bytes.h"

#define NOTICE_MAGIC 0x54424e54u     /* "TBNT" */
#define NOTICE_BATCH 256u

enum { N_NONE = 0, N_HANDLE = 1, N_FAILED = 2 };

/* An entry that came before its request was admitted here (it waits in e->early). */
struct early {
    uint8_t what, len;
    uint8_t fh[TBBT_HANDLE_MAX];
};

void tbbt__eng_peer_flush_locked(struct eng *e)
{
    struct tbbt_engine_peer *p = e->o->peer;
    if (!p || e->notice_n == 0)
        return;
    tbbt_bytes_set_be32(e->notice, 4, e->notice_n);
    g_async_queue_push(p->out, g_byte_array_free_to_bytes(e->notice));
    e->notices_sent += e->notice_n;
    e->notice = NULL;
    e->notice_n = 0;
    uint64_t one = 1;
    ssize_t w = write(p->out_fd, &one, sizeof(one));
    (void)w;
}

void tbbt__eng_peer_note_locked(struct eng *e, const struct slot *s)
{
    if (!e->notice) {
        e->notice = g_byte_array_sized_new(8 + 16 * NOTICE_BATCH);
        tbbt_bytes_put_be32(e->notice, NOTICE_MAGIC);
        tbbt_bytes_put_be32(e->notice, 0);     /* n, at the flush */
    }
    tbbt_bytes_put_be64(e->notice, s->seq);
    uint64_t obj = rec_obj(&s->rec);
    const struct tbbt_handle *h = obj ? tbbt_handles_peek(e->o->handles[s->clone], obj) : NULL;
    if (h && h->state == TBBT_HANDLE_KNOWN && h->len > 0 && h->len <= TBBT_HANDLE_MAX) {
        tbbt_bytes_put_u8(e->notice, N_HANDLE);
        tbbt_bytes_put_u8(e->notice, h->len);
        g_byte_array_append(e->notice, h->data, h->len);
    } else {
        tbbt_bytes_put_u8(e->notice, h && h->state == TBBT_HANDLE_FAILED ? N_FAILED : N_NONE);
    }
    if (++e->notice_n >= NOTICE_BATCH)
        tbbt__eng_peer_flush_locked(e);
}

/* Another process completed external request s (admitted, live): bind, then complete. */
static void complete_external(struct eng *e, struct slot *s, const struct early *x)
{
    uint64_t obj = rec_obj(&s->rec);
    struct tbbt_handles *hs = e->o->handles[s->clone];
    if (obj && x->what == N_HANDLE) {
        tbbt_handles_set(hs, obj, x->fh, x->len);
    } else if (obj && s->made_pending) {
        struct tbbt_handle *h = tbbt_handles_slot(hs, obj);
        if (h && h->state == TBBT_HANDLE_PENDING)
            h->state = s->made_was_known ? TBBT_HANDLE_KNOWN
                       : x->what == N_FAILED ? TBBT_HANDLE_FAILED : TBBT_HANDLE_NONE;
    }
    s->made_pending = false;
    e->notices_received++;
    if (e->xwait_since) {
        uint64_t now = tbbt_now_ns();
        e->xwait_ns += now - MIN(now, e->xwait_since);
        e->xwait_since = 0;
    }
    s->state = S_DONE;
    bool moved = tbbt_sched_complete_external(e->sched, s->seq) > 0;
    tbbt__eng_advance_locked(e, moved);
}

void tbbt__eng_peer_admitted_locked(struct eng *e, struct slot *s)
{
    if (is_create(s)) {      /* as take_locked() does for an own create */
        struct tbbt_handle *h = tbbt__eng_made_handle(e, s);
        if (h && h->state != TBBT_HANDLE_PENDING) {
            s->made_was_known = h->state == TBBT_HANDLE_KNOWN;
            h->state = TBBT_HANDLE_PENDING;
            s->made_pending = true;
        }
    }
    struct early *x = e->early ? g_hash_table_lookup(e->early, &s->seq) : NULL;
    if (x) {
        complete_external(e, s, x);
        g_hash_table_remove(e->early, &s->seq);
    }
}

/* One message: 0, or -EBADMSG (the run fails: the processes no longer agree). */
static int apply_msg(struct eng *e, GBytes *msg)
{
    gsize len = 0;
    const uint8_t *p = g_bytes_get_data(msg, &len);
    struct tbbt_buf b;
    tbbt_buf_init(&b, p, len);
    if (tbbt_buf_get_be32(&b) != NOTICE_MAGIC)
        return -EBADMSG;
    uint32_t n = tbbt_buf_get_be32(&b);
    for (uint32_t i = 0; i < n && !b.trunc; i++) {
        uint64_t seq = tbbt_buf_get_be64(&b);
        struct early x = {.what = tbbt_buf_get_u8(&b)};
        if (x.what == N_HANDLE) {
            x.len = tbbt_buf_get_u8(&b);
            const uint8_t *fh = x.len && x.len <= TBBT_HANDLE_MAX ? tbbt_buf_get(&b, x.len) : NULL;
            if (!fh)
                return -EBADMSG;
            memcpy(x.fh, fh, x.len);
        } else if (x.what > N_FAILED) {
            return -EBADMSG;
        }
        if (b.trunc)
            return -EBADMSG;
        if (seq < e->admitted) {
            struct slot *s = S(e, seq);
            if (seq < e->oldest || s->seq != seq || !s->external || s->state == S_DONE)
                return -EBADMSG;
            complete_external(e, s, &x);
        } else {
            if (!e->early)
                e->early = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
            uint64_t *k = g_new(uint64_t, 1);
            *k = seq;
            g_hash_table_replace(e->early, k, g_memdup2(&x, sizeof(x)));
        }
    }
    return b.trunc ? -EBADMSG : 0;
}

bool tbbt__eng_peer_drain(struct eng *e)
{
    struct tbbt_engine_peer *p = e->o->peer;
    uint64_t v;
    ssize_t r = read(p->in_fd, &v, sizeof(v));
    (void)r;
    GBytes *msg;
    bool any = false;
    pthread_mutex_lock(&e->mu);
    while ((msg = g_async_queue_try_pop(p->in)) != NULL) {
        int rc = apply_msg(e, msg);
        g_bytes_unref(msg);
        any = true;
        if (rc < 0) {
            tbbt__eng_fail_run(e, "error", rc, "a completion notice from another rank does "
                               "not match this rank's trace (same trace and options on "
                               "every rank?)");
            break;
        }
    }
    tbbt__eng_unlock_wake(e);
    return any;
}

void tbbt__eng_peer_waiting_locked(struct eng *e)
{
    if (e->o->peer && !e->xwait_since && tbbt_sched_external_blocked(e->sched))
        e->xwait_since = tbbt_now_ns();
}

void tbbt__eng_peer_fini(struct eng *e)
{
    struct tbbt_engine_peer *p = e->o->peer;
    if (!p)
        return;
    p->deps = tbbt_sched_external_stalls(e->sched);
    p->wait_seconds = (double)e->xwait_ns / 1e9;
    p->notices_sent = e->notices_sent;
    p->notices_received = e->notices_received;
    p->external = e->ext_admitted;
    if (e->notice)
        g_byte_array_unref(e->notice);
    e->notice = NULL;
    if (e->early)
        g_hash_table_destroy(e->early);
    e->early = NULL;
}
