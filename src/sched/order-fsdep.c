/* SPDX-License-Identifier: MIT */
/*
 * FS-dependency order (sched.h; TBBT paper 3.4.1 and Table 4): a request may go once it
 * waits for no earlier request (its locks, fsdep.h, counted at admission), least (due
 * time, sequence number) first among those that may; a request whose client is at its
 * limit is parked until one of its client's requests completes, while other clients'
 * requests go past it.  An external request (sched.h) is never ready: it only holds its
 * locks until tbbt_sched_complete_external().
 */
#include "sched/sched-int.h"

typedef struct tbbt__sched_req req;

static uint64_t ready_key(const struct tbbt_sched *s, const req *r)
{
    return s->o.timed ? r->due_ns : r->seq;
}

/*
 * The ready requests, least (due, seq) first.  Most become ready when admitted, in
 * rising order: they queue in a FIFO (O(1)); the few a completion releases later go to
 * the heap; the least of the two heads goes next.
 */
static void ready_push(struct tbbt_sched *s, const req *r)
{
    GArray *f = s->ready_fifo;
    if (s->ready_head == f->len) {
        g_array_set_size(f, 0);
        s->ready_head = 0;
    }
    struct tbbt_heap_item it = {ready_key(s, r), r->seq};
    if (f->len == 0 ||
        tbbt_heap_less(&g_array_index(f, struct tbbt_heap_item, f->len - 1), &it))
        g_array_append_val(f, it);
    else
        tbbt_heap_push(s->ready, it.key, it.seq);
}

static const struct tbbt_heap_item *ready_top(const struct tbbt_sched *s)
{
    const struct tbbt_heap_item *h = tbbt_heap_top(s->ready), *f = NULL;
    if (s->ready_head < s->ready_fifo->len)
        f = &g_array_index(s->ready_fifo, struct tbbt_heap_item, s->ready_head);
    if (!f || (h && tbbt_heap_less(h, f)))
        return h;
    return f;
}

/* Removes top, which ready_top() just returned. */
static void ready_pop(struct tbbt_sched *s, const struct tbbt_heap_item *top)
{
    GArray *f = s->ready_fifo;
    if (s->ready_head < f->len && top == &g_array_index(f, struct tbbt_heap_item, s->ready_head)) {
        s->ready_head++;
        if (s->ready_head >= 4096 && s->ready_head * 2 >= f->len) {
            g_array_remove_range(f, 0, s->ready_head);
            s->ready_head = 0;
        }
    } else {
        tbbt_heap_pop(s->ready);
    }
}

/* r may go but its client is at its limit; it waits for one of the client's requests
 * to complete (client_room()) instead of in the ready queue. */
static void client_park(struct tbbt_sched *s, req *r)
{
    if (r->client >= s->cl_parked->len)
        g_ptr_array_set_size(s->cl_parked, (guint)r->client + 1);
    GQueue *q = g_ptr_array_index(s->cl_parked, r->client);
    if (!q) {
        q = g_queue_new();
        g_ptr_array_index(s->cl_parked, r->client) = q;
    }
    g_queue_push_tail(q, GSIZE_TO_POINTER(r->seq + 1));
    tbbt__sched_client_held(s, r);
}

/* A request of client c completed: one of its held-back requests becomes ready. */
static void client_room(struct tbbt_sched *s, uint32_t c)
{
    if (c >= s->cl_parked->len)
        return;
    GQueue *q = g_ptr_array_index(s->cl_parked, c);
    if (q && !g_queue_is_empty(q))
        ready_push(s, tbbt__sched_r(s, GPOINTER_TO_SIZE(g_queue_pop_head(q)) - 1));
}

static uint64_t next(struct tbbt_sched *s, uint64_t now, uint64_t *due)
{
    const struct tbbt_heap_item *top;
    while ((top = ready_top(s))) {
        req *r = tbbt__sched_r(s, top->seq);
        if (s->o.timed && r->due_ns > now) {
            *due = MIN(*due, r->due_ns);
            return TBBT_SCHED_NONE;
        }
        ready_pop(s, top);
        if (!tbbt__sched_client_full(s, r)) {
            tbbt__sched_take(s, r);
            return r->seq;
        }
        client_park(s, r);
    }
    return TBBT_SCHED_NONE;
}

static void admitted(struct tbbt_sched *s, req *r, bool *ready)
{
    *ready = !r->external && r->ndeps == 0;
    if (*ready)
        ready_push(s, r);
    else if (r->xdeps)
        tbbt__sched_ext_held(s, r);     /* it waits for an external request */
}

static void freed(struct tbbt_sched *s, req *r)
{
    ready_push(s, r);
}

static bool starved(const struct tbbt_sched *s)
{
    return ready_top(s) == NULL;
}

/* No own request is ready and one waits for an external request (sched.h). */
static bool xblocked(const struct tbbt_sched *s)
{
    return s->xwaiting > 0 && ready_top(s) == NULL;
}

static void init(struct tbbt_sched *s)
{
    s->ready = tbbt_heap_new();
    s->ready_fifo = g_array_new(FALSE, FALSE, sizeof(struct tbbt_heap_item));
    s->cl_parked = g_ptr_array_new();
}

static void fini(struct tbbt_sched *s)
{
    g_array_free(s->ready, TRUE);
    g_array_free(s->ready_fifo, TRUE);
    for (guint i = 0; i < s->cl_parked->len; i++)
        if (g_ptr_array_index(s->cl_parked, i))
            g_queue_free(g_ptr_array_index(s->cl_parked, i));
    g_ptr_array_free(s->cl_parked, TRUE);
}

const struct tbbt__sched_order tbbt__sched_fsdep = {
    .name = "fsdep", .init = init, .fini = fini, .admitted = admitted, .freed = freed,
    .client_room = client_room, .next = next, .starved = starved, .behind = starved,
    .xblocked = xblocked,
};
