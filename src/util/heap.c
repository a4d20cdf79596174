/* SPDX-License-Identifier: MIT */
/* The (key, seq) min-heap of heap.h. */
#include "util/heap.h"

GArray *tbbt_heap_new(void)
{
    return g_array_new(FALSE, FALSE, sizeof(struct tbbt_heap_item));
}

void tbbt_heap_push(GArray *h, uint64_t key, uint64_t seq)
{
    struct tbbt_heap_item it = {key, seq};
    g_array_append_val(h, it);
    struct tbbt_heap_item *v = (struct tbbt_heap_item *)(void *)h->data;
    for (guint i = h->len - 1; i > 0;) {
        guint p = (i - 1) / 2;
        if (!tbbt_heap_less(&v[i], &v[p]))
            break;
        struct tbbt_heap_item t = v[i];
        v[i] = v[p];
        v[p] = t;
        i = p;
    }
}

const struct tbbt_heap_item *tbbt_heap_top(const GArray *h)
{
    return h->len ? &g_array_index(h, struct tbbt_heap_item, 0) : NULL;
}

void tbbt_heap_pop(GArray *h)
{
    struct tbbt_heap_item *v = (struct tbbt_heap_item *)(void *)h->data;
    guint n = h->len - 1;
    v[0] = v[n];
    g_array_set_size(h, n);
    for (guint i = 0;;) {
        guint l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && tbbt_heap_less(&v[l], &v[m]))
            m = l;
        if (r < n && tbbt_heap_less(&v[r], &v[m]))
            m = r;
        if (m == i)
            break;
        struct tbbt_heap_item t = v[i];
        v[i] = v[m];
        v[m] = t;
        i = m;
    }
}
