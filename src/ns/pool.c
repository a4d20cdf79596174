/* SPDX-License-Identifier: MIT */
/*
 * Storage of the namespace model: chunked arrays (objects, links, keys) that
 * grow without copying, and the name pool, where every distinct name is
 * stored once and referred to by a 32-bit reference (TBBT paper 3.2: the
 * hierarchy map must fit in memory for big traces; docs/hierarchy-map.md,
 * "Model").  Symlink targets go into the same pool without interning.
 */
#include "ns/ns-int.h"

#include <string.h>

#define POOL_CHUNK (1u << 20)
#define POOL_INDEX_MIN 1024u

/* ---- chunked arrays ---------------------------------------------------------- */

void tbbt__ns_vec_init(struct ns_vec *v, uint32_t esz)
{
    memset(v, 0, sizeof(*v));
    v->esz = esz;
    tbbt__ns_vec_push(v);       /* index 0 means "none" */
}

void tbbt__ns_vec_fini(struct ns_vec *v)
{
    for (uint32_t i = 0; i < v->nchunks; i++)
        g_free(v->chunks[i]);
    g_free(v->chunks);
    memset(v, 0, sizeof(*v));
}

uint32_t tbbt__ns_vec_push(struct ns_vec *v)
{
    uint32_t i = v->n;

    if (i == UINT32_MAX)
        g_error("tbbt ns: more than 2^32 model elements");
    if ((i >> NS_CHUNK_BITS) == v->nchunks) {
        /* the chunk pointer array grows by doubling; the chunks never move */
        if ((v->nchunks & (v->nchunks - 1)) == 0)
            v->chunks = g_renew(char *, v->chunks, v->nchunks ? v->nchunks * 2 : 1);
        v->chunks[v->nchunks++] = g_malloc((size_t)NS_CHUNK * v->esz);
    }
    v->n++;
    memset(ns_vec_at(v, i), 0, v->esz);
    return i;
}

/* ---- names ------------------------------------------------------------------- */

bool tbbt_ns_name_ok(const void *name, size_t len)
{
    const char *s = name;

    if (len == 0 || len > TBBT_NAME_MAX)
        return false;
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    return !memchr(s, '/', len) && !memchr(s, '\0', len);
}

static uint32_t hash_bytes(const uint8_t *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull ^ len;
    uint64_t w;

    for (; len >= 8; p += 8, len -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    w = 0;
    if (len)
        memcpy(&w, p, len);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    return (uint32_t)h;
}

void tbbt__ns_pool_init(struct ns_pool *p)
{
    memset(p, 0, sizeof(*p));
    p->slots = g_new0(uint64_t, POOL_INDEX_MIN);
    p->mask = POOL_INDEX_MIN - 1;
    p->used = POOL_CHUNK;       /* the first store opens a chunk */
}

void tbbt__ns_pool_fini(struct ns_pool *p)
{
    for (uint32_t i = 0; i < p->nchunks; i++)
        g_free(p->chunks[i]);
    g_free(p->chunks);
    g_free(p->slots);
    memset(p, 0, sizeof(*p));
}

const uint8_t *tbbt__ns_pool_get(const struct ns_pool *p, uint32_t ref, uint32_t *len)
{
    uint32_t off = ref - 1;
    const uint8_t *s = p->chunks[off / POOL_CHUNK] + off % POOL_CHUNK;

    *len = (uint32_t)s[0] | (uint32_t)s[1] << 8;
    return s + 2;
}

uint32_t tbbt__ns_pool_add(struct ns_pool *p, const void *s, size_t len)
{
    uint8_t *d;
    uint64_t off;

    g_assert(len <= 0xffff);
    if (p->used + 2 + len > POOL_CHUNK) {
        if ((p->nchunks & (p->nchunks - 1)) == 0)
            p->chunks = g_renew(uint8_t *, p->chunks, p->nchunks ? p->nchunks * 2 : 1);
        p->chunks[p->nchunks++] = g_malloc(POOL_CHUNK);
        p->used = 0;
    }
    off = (uint64_t)(p->nchunks - 1) * POOL_CHUNK + p->used;
    if (off >= UINT32_MAX)
        g_error("tbbt ns: more than 4 GiB of names");
    d = p->chunks[p->nchunks - 1] + p->used;
    d[0] = (uint8_t)len;
    d[1] = (uint8_t)(len >> 8);
    if (len)
        memcpy(d + 2, s, len);
    p->used += (uint32_t)(2 + len);
    p->bytes += 2 + len;
    return (uint32_t)off + 1;
}

static bool pool_eq(const struct ns_pool *p, uint32_t ref, const void *s, size_t len)
{
    uint32_t n;
    const uint8_t *b = tbbt__ns_pool_get(p, ref, &n);

    return n == len && (len == 0 || memcmp(b, s, len) == 0);
}

static uint64_t *pool_slot(const struct ns_pool *p, const void *s, size_t len, uint32_t h)
{
    uint32_t i = h & p->mask;

    while (p->slots[i] && ((uint32_t)(p->slots[i] >> 32) != h ||
                           !pool_eq(p, (uint32_t)p->slots[i], s, len)))
        i = (i + 1) & p->mask;
    return &p->slots[i];
}

static void pool_grow(struct ns_pool *p)
{
    uint32_t n = (p->mask + 1) * 2, oldn = p->mask + 1;
    uint64_t *old = p->slots;

    p->slots = g_new0(uint64_t, n);
    p->mask = n - 1;
    for (uint32_t i = 0; i < oldn; i++) {
        uint32_t j;
        if (!old[i])
            continue;
        j = (uint32_t)(old[i] >> 32) & p->mask;
        while (p->slots[j])
            j = (j + 1) & p->mask;
        p->slots[j] = old[i];
    }
    g_free(old);
}

uint32_t tbbt__ns_pool_find(const struct ns_pool *p, const void *s, size_t len)
{
    return (uint32_t)*pool_slot(p, s, len, hash_bytes(s, len));
}

uint32_t tbbt__ns_pool_intern(struct ns_pool *p, const void *s, size_t len)
{
    uint32_t h = hash_bytes(s, len), ref;
    uint64_t *slot = pool_slot(p, s, len, h);

    if (*slot)
        return (uint32_t)*slot;
    ref = tbbt__ns_pool_add(p, s, len);
    *slot = (uint64_t)h << 32 | ref;
    if (++p->count * 4 >= (p->mask + 1) * 3)
        pool_grow(p);
    return ref;
}
