/* SPDX-License-Identifier: MIT */
/*
 * The player's TBBT-ID -> server file handle table (handles.h): a two-level array of
 * lazily made pages, published with atomic stores so that readers on other threads
 * see either no page or a fully zeroed one.
 */
#include "player/handles.h"

#include <glib.h>
#include <stdatomic.h>
#include <string.h>

#define NPAGES (TBBT_HANDLES_MAX_ID / TBBT_HANDLES_PAGE)

struct tbbt_handles {
    _Atomic(struct tbbt_handle *) *pages;   /* NPAGES pointers, NULL until made */
    uint64_t count;
};

struct tbbt_handles *tbbt_handles_new(void)
{
    struct tbbt_handles *h = g_new0(struct tbbt_handles, 1);
    h->pages = g_new0(_Atomic(struct tbbt_handle *), NPAGES);
    return h;
}

void tbbt_handles_free(struct tbbt_handles *h)
{
    if (!h)
        return;
    for (uint64_t i = 0; i < NPAGES; i++)
        g_free(atomic_load_explicit(&h->pages[i], memory_order_relaxed));
    g_free(h->pages);
    g_free(h);
}

struct tbbt_handle *tbbt_handles_peek(const struct tbbt_handles *h, uint64_t id)
{
    if (id == 0 || id >= TBBT_HANDLES_MAX_ID)
        return NULL;
    struct tbbt_handle *p =
        atomic_load_explicit(&h->pages[id / TBBT_HANDLES_PAGE], memory_order_acquire);
    return p ? &p[id % TBBT_HANDLES_PAGE] : NULL;
}

struct tbbt_handle *tbbt_handles_slot(struct tbbt_handles *h, uint64_t id)
{
    if (id == 0 || id >= TBBT_HANDLES_MAX_ID)
        return NULL;
    struct tbbt_handle *p = tbbt_handles_peek(h, id);
    if (p)
        return p;
    struct tbbt_handle *page = g_new0(struct tbbt_handle, TBBT_HANDLES_PAGE);
    atomic_store_explicit(&h->pages[id / TBBT_HANDLES_PAGE], page, memory_order_release);
    return &page[id % TBBT_HANDLES_PAGE];
}

bool tbbt_handles_set(struct tbbt_handles *h, uint64_t id, const void *fh, uint32_t len)
{
    if (len == 0 || len > TBBT_HANDLE_MAX)
        return false;
    struct tbbt_handle *s = tbbt_handles_slot(h, id);
    if (!s)
        return false;
    memcpy(s->data, fh, len);
    s->len = (uint8_t)len;
    if (s->state != TBBT_HANDLE_KNOWN)
        h->count++;
    s->state = TBBT_HANDLE_KNOWN;
    return true;
}

const struct tbbt_handle *tbbt_handles_known(const struct tbbt_handles *h, uint64_t id)
{
    const struct tbbt_handle *s = tbbt_handles_peek(h, id);
    return s && s->state == TBBT_HANDLE_KNOWN ? s : NULL;
}

uint64_t tbbt_handles_count(const struct tbbt_handles *h)
{
    return h->count;
}
