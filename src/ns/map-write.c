/* SPDX-License-Identifier: MIT */
/*
 * Writes the hierarchy map (TBBT paper 3.2: one entry per object and path,
 * with TBBT-ID, path, createTime, deleteTime, size and type; format in
 * docs/hierarchy-map.md) from the namespace model.
 *
 * Every object gets a place: the export root is "."; an object with a name
 * that existed at trace start (or, for objects made in the trace, its first
 * name) hangs under its directory; a directory whose start place is unknown
 * becomes tbbt-unnamed-ID under its parent (known from ".."), or a top-level
 * tbbt-subtree-ID; anything else goes to tbbt-orphans/ID.  Entries come out
 * depth first from the root and the top-level directories, so that every
 * directory's entry precedes the entries in it; a loop in the start state
 * (possible with lost packets) is cut by making its lowest ID a top-level
 * tbbt-subtree-ID.  Paths at a time come from the rename history of the
 * directories above.  Right after the header, a "# v4-export" line for each NFSv4
 * pseudo path the trace's clients walked to an export, with the map path of the
 * directory it reached (tab-separated fields, escaped as the path fields are).
 */
#include "ns/ns-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc32.h"
#include "util/textsum.h"

#define SYN_BIT 0x80000000u    /* item: an object's synthetic entry, else a link */

enum { P_NORMAL, P_ROOT, P_SUBTREE, P_UNNAMED, P_ORPHAN, P_FORCED, P_NONE };
enum { C_NAME, C_SUBTREE, C_UNNAMED, C_ORPHAN, C_ORPHANS };

struct comp {
    uint8_t kind;
    uint32_t v;                 /* name ref for C_NAME, else an object */
};

struct mapw {
    struct tbbt_ns *ns;
    FILE *out;
    uint32_t n;                 /* objects + 1 */
    uint8_t *place;             /* P_* per object */
    uint8_t *expanded;          /* children emitted */
    uint8_t *kids;              /* bit 0: has entries under it, bit 1: some from trace start */
    uint32_t *stamp;            /* walk marks (loop detection) */
    uint32_t epoch;
    uint32_t *cstart;           /* items of object x: items[cstart[x] .. cstart[x + 1]) */
    uint32_t *items;
    uint32_t *ostart;           /* links of object x (deleted ones too), by index: */
    uint32_t *olinks;           /* olinks[ostart[x] .. ostart[x + 1]) */
    uint32_t *anchor;           /* the link of x that lists x's children */
    GArray *comps;
    GString *line, *tmp;
    uint64_t entries;
    uint32_t crc;               /* of every byte written so far (the checksum line's) */
    int err;
};

/* Writes s[0..len) and adds it to the checksum; errors are sticky in w->err. */
static void put_bytes(struct mapw *w, const char *s, size_t len)
{
    if (w->err)
        return;
    errno = 0;
    if (fwrite(s, 1, len, w->out) != len)
        w->err = errno ? -errno : -EIO;
    w->crc = tbbt_crc32(w->crc, s, len);
}

/* ---- places ------------------------------------------------------------------------ */

/* Every object's links, live or not, in index order (a counting sort by object). */
static void index_links(struct mapw *w)
{
    const struct tbbt_ns *ns = w->ns;
    uint32_t *fill;

    w->ostart = g_new0(uint32_t, (size_t)w->n + 1);
    for (uint32_t l = 1; l < ns->links.n; l++)
        if (ns_link(ns, l)->child)
            w->ostart[ns_link(ns, l)->child + 1]++;
    for (uint32_t x = 0; x < w->n; x++)
        w->ostart[x + 1] += w->ostart[x];
    w->olinks = g_new(uint32_t, w->ostart[w->n] ? w->ostart[w->n] : 1);
    fill = g_memdup2(w->ostart, ((size_t)w->n + 1) * sizeof(uint32_t));
    for (uint32_t l = 1; l < ns->links.n; l++)
        if (ns_link(ns, l)->child)
            w->olinks[fill[ns_link(ns, l)->child]++] = l;
    g_free(fill);
}

/* x's anchor link: a name it had at trace start, else its earliest name; 0 if none. */
static uint32_t find_anchor(const struct mapw *w, uint32_t x)
{
    const struct tbbt_ns *ns = w->ns;
    uint32_t best = 0;

    for (uint32_t i = w->ostart[x]; i < w->ostart[x + 1]; i++) {
        const struct ns_link *k = ns_link(ns, w->olinks[i]);
        if (k->create_ns == 0)
            return w->olinks[i];
        if (!best || k->create_ns < ns_link(ns, best)->create_ns)
            best = w->olinks[i];
    }
    return best;
}

static bool has_links(const struct mapw *w, uint32_t x)
{
    return w->ostart[x] != w->ostart[x + 1];
}

static uint32_t parented(const struct tbbt_ns *ns, uint32_t x)
{
    const struct ns_obj *o = ns_obj(ns, x);

    return (o->flags & OF_PARENTED) && o->parent && o->parent != x ? o->parent : 0;
}

static void mark_kids(struct mapw *w)
{
    const struct tbbt_ns *ns = w->ns;

    for (uint32_t l = 1; l < ns->links.n; l++) {
        const struct ns_link *k = ns_link(ns, l);
        if (k->child)
            w->kids[k->sparent] |= k->create_ns == 0 ? 3 : 1;
    }
}

static int place_of(struct mapw *w, uint32_t x)
{
    const struct tbbt_ns *ns = w->ns;

    uint32_t a = w->anchor[x];

    if (x == ns->root)
        return P_ROOT;
    if (a && ns_link(ns, a)->create_ns == 0)
        return P_NORMAL;
    if (a && !(w->kids[x] & 2))
        return P_NORMAL;
    if (parented(ns, x))
        return P_UNNAMED;
    if (w->kids[x] || has_links(w, x))
        return P_SUBTREE;
    /* never named, and known to be gone (only ever STALE): not in the image at all */
    if (ns_obj(ns, x)->flags & OF_DELETED)
        return P_NONE;
    return P_ORPHAN;
}

static void compute_places(struct mapw *w)
{
    index_links(w);
    w->anchor = g_new0(uint32_t, w->n);
    for (uint32_t x = 1; x < w->n; x++)
        w->anchor[x] = find_anchor(w, x);
    mark_kids(w);
    for (uint32_t x = 1; x < w->n; x++)
        if (parented(w->ns, x))
            w->kids[parented(w->ns, x)] |= 3;
    for (uint32_t x = 1; x < w->n; x++)
        w->place[x] = (uint8_t)place_of(w, x);
}

/* ---- children lists ------------------------------------------------------------------ */

static const struct tbbt_ns *sort_ns;   /* qsort has no argument pointer */

static int item_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b, lx, ly;
    const uint8_t *px, *py;
    int c;

    if ((x & SYN_BIT) || (y & SYN_BIT))     /* names first, then synthetic by ID */
        return (x & SYN_BIT) != (y & SYN_BIT) ? ((x & SYN_BIT) ? 1 : -1) : (x < y ? -1 : 1);
    px = tbbt__ns_pool_get(&sort_ns->pool, ns_link(sort_ns, x)->sname, &lx);
    py = tbbt__ns_pool_get(&sort_ns->pool, ns_link(sort_ns, y)->sname, &ly);
    c = memcmp(px, py, MIN(lx, ly));
    if (c == 0 && lx != ly)
        c = lx < ly ? -1 : 1;
    return c ? c : (x < y ? -1 : (x > y));
}

/* Counting sort of the items by parent, then each bucket by name. */
static void build_children(struct mapw *w)
{
    const struct tbbt_ns *ns = w->ns;
    uint32_t *fill, total;

    w->cstart = g_new0(uint32_t, (size_t)w->n + 1);
    for (uint32_t l = 1; l < ns->links.n; l++)
        if (ns_link(ns, l)->child)
            w->cstart[ns_link(ns, l)->sparent + 1]++;
    for (uint32_t x = 1; x < w->n; x++)
        if (w->place[x] == P_UNNAMED)
            w->cstart[parented(ns, x) + 1]++;
    for (uint32_t x = 0; x < w->n; x++)
        w->cstart[x + 1] += w->cstart[x];
    total = w->cstart[w->n];
    w->items = g_new(uint32_t, total ? total : 1);
    fill = g_memdup2(w->cstart, ((size_t)w->n + 1) * sizeof(uint32_t));
    for (uint32_t l = 1; l < ns->links.n; l++)
        if (ns_link(ns, l)->child)
            w->items[fill[ns_link(ns, l)->sparent]++] = l;
    for (uint32_t x = 1; x < w->n; x++)
        if (w->place[x] == P_UNNAMED)
            w->items[fill[parented(ns, x)]++] = x | SYN_BIT;
    g_free(fill);
    sort_ns = ns;
    for (uint32_t x = 1; x < w->n; x++)
        if (w->cstart[x + 1] - w->cstart[x] > 1)
            qsort(w->items + w->cstart[x], w->cstart[x + 1] - w->cstart[x], sizeof(uint32_t),
                  item_cmp);
}

/* ---- paths ------------------------------------------------------------------------------- */

static bool live_at(const struct ns_link *k, uint64_t t)
{
    return k->child && k->create_ns <= t && (k->delete_ns == NS_LIVE || t < k->delete_ns);
}

/* The link that gives x's place at time t: live then, else (fallback) its anchor. */
static uint32_t link_at(const struct mapw *w, uint32_t x, uint64_t t, bool fallback)
{
    for (uint32_t i = w->ostart[x]; i < w->ostart[x + 1]; i++)
        if (live_at(ns_link(w->ns, w->olinks[i]), t))
            return w->olinks[i];
    return fallback ? w->anchor[x] : 0;
}

/* Where link l was at time t (directories keep a rename history). */
static void loc_at(const struct tbbt_ns *ns, uint32_t l, uint64_t t, uint32_t *parent,
                   uint32_t *name)
{
    const struct ns_link *k = ns_link(ns, l);
    GArray *h = ns->hist && (ns_obj(ns, k->child)->flags & OF_HIST)
                    ? g_hash_table_lookup(ns->hist, GUINT_TO_POINTER(l)) : NULL;

    for (guint i = 0; h && i < h->len; i++) {
        const struct ns_hist *e = &g_array_index(h, struct ns_hist, i);
        if (e->t > t) {
            *parent = e->parent;
            *name = e->name;
            return;
        }
    }
    *parent = k->parent;
    *name = k->name;
}

static void push(struct mapw *w, int kind, uint32_t v)
{
    struct comp c = { .kind = (uint8_t)kind, .v = v };

    g_array_append_val(w->comps, c);
}

/* One step up from x at time t: pushes x's component, returns the next object or 0 (top). */
static uint32_t step_up(struct mapw *w, uint32_t x, uint64_t t)
{
    const struct tbbt_ns *ns = w->ns;
    int p = w->place[x];
    uint32_t l = p == P_FORCED ? 0 : link_at(w, x, t, false), parent, name;

    if (!l) {
        switch (p) {
        case P_UNNAMED:
            push(w, C_UNNAMED, x);
            return parented(ns, x);
        case P_ORPHAN:
            push(w, C_ORPHAN, x);
            push(w, C_ORPHANS, 0);
            return 0;
        case P_NORMAL:
            if ((l = link_at(w, x, t, true)))
                break;
            /* fall through */
        default:
            push(w, C_SUBTREE, x);
            return 0;
        }
    }
    loc_at(ns, l, t, &parent, &name);
    push(w, C_NAME, name);
    return parent;
}

/* Collects the components of directory x's path at time t, leaf first. */
static void walk_up(struct mapw *w, uint32_t x, uint64_t t)
{
    uint32_t start = x;

    g_array_set_size(w->comps, 0);
    if (++w->epoch == 0) {
        memset(w->stamp, 0, (size_t)w->n * sizeof(uint32_t));
        w->epoch = 1;
    }
    while (x && x != w->ns->root) {
        if (w->stamp[x] == w->epoch) {      /* a loop at this time: cut it at the start */
            g_array_set_size(w->comps, 0);
            push(w, C_SUBTREE, start);
            return;
        }
        w->stamp[x] = w->epoch;
        x = step_up(w, x, t);
    }
}

static void put_u64(GString *s, uint64_t v)
{
    char b[20];
    int i = sizeof(b);

    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    g_string_append_len(s, b + i, (gssize)sizeof(b) - i);
}

/* Appends a synthetic name, with '~' until it is not a real name in dir. */
static void put_synthetic(struct mapw *w, GString *s, const char *base, uint32_t id,
                          uint32_t dir)
{
    char name[TBBT_NAME_MAX + 1];
    int n = id ? g_snprintf(name, sizeof(name), "%s-%" PRIu32, base, id)
               : g_snprintf(name, sizeof(name), "%s", base);
    uint32_t ref;

    while (dir && (size_t)n < TBBT_NAME_MAX &&
           (ref = tbbt__ns_pool_find(&w->ns->pool, name, (size_t)n)) &&
           tbbt__ns_dent_find(w->ns, dir, ref))
        name[n++] = '~';
    g_string_append_len(s, name, n);
}

static void put_comp(struct mapw *w, GString *s, const struct comp *c)
{
    uint32_t len;
    const uint8_t *p;

    switch (c->kind) {
    case C_NAME:
        p = tbbt__ns_pool_get(&w->ns->pool, c->v, &len);
        tbbt_ns_escape(s, p, len);
        break;
    case C_SUBTREE: put_synthetic(w, s, "tbbt-subtree", c->v, w->ns->root); break;
    case C_UNNAMED: put_synthetic(w, s, "tbbt-unnamed", c->v, parented(w->ns, c->v)); break;
    case C_ORPHAN: put_u64(s, c->v); break;
    default: put_synthetic(w, s, "tbbt-orphans", 0, w->ns->root); break;
    }
}

/* Appends the path of directory x at time t, then "/" and leaf if given ("." for the root). */
static void put_path(struct mapw *w, GString *s, uint32_t x, uint64_t t, const struct comp *leaf)
{
    GArray *c = w->comps;

    walk_up(w, x, t);
    if (leaf)
        g_array_prepend_val(c, *leaf);
    if (c->len == 0) {
        g_string_append_c(s, '.');
        return;
    }
    for (guint i = c->len; i-- > 0;) {
        put_comp(w, s, &g_array_index(c, struct comp, i));
        if (i)
            g_string_append_c(s, '/');
    }
}

/* ---- entries ------------------------------------------------------------------------------ */

static void put_time(GString *s, uint64_t ns)
{
    char frac[10];
    uint64_t n = ns % 1000000000u;

    put_u64(s, ns / 1000000000u);
    if (ns == 0)
        return;
    frac[0] = '.';
    for (int i = 9; i > 0; i--, n /= 10)
        frac[i] = (char)('0' + n % 10);
    g_string_append_len(s, frac, sizeof(frac));
}

static char type_char(const struct ns_obj *o)
{
    static const char tc[] = { 'f', 'f', 'd', 'l', 'o' };

    return o->type < sizeof(tc) ? tc[o->type] : 'f';
}

static uint32_t entries_of(const struct mapw *w, uint32_t x)
{
    return w->ostart[x + 1] - w->ostart[x] + (w->place[x] != P_NORMAL);
}

/* Writes id, type, size and create time; the caller adds the rest. */
static void put_head(struct mapw *w, uint32_t x, uint64_t create_ns)
{
    const struct ns_obj *o = ns_obj(w->ns, x);
    GString *s = w->line;

    g_string_truncate(s, 0);
    put_u64(s, x);
    g_string_append_c(s, '\t');
    /* whatever attributes said, what holds names is a directory in the image */
    g_string_append_c(s, x && x != w->ns->root && !w->kids[x] ? type_char(o) : 'd');
    g_string_append_c(s, '\t');
    if (x && (o->flags & OF_SIZE_KNOWN)) {
        put_u64(s, o->size);
    } else if (x && o->size) {
        put_u64(s, o->size);
        g_string_append_c(s, '+');
    } else {
        g_string_append_c(s, '-');
    }
    g_string_append_c(s, '\t');
    put_time(s, create_ns);
    g_string_append_c(s, '\t');
}

static void put_tail(struct mapw *w, uint32_t x)
{
    const struct ns_obj *o = ns_obj(w->ns, x);
    GString *s = w->line;
    const uint8_t *p;
    uint32_t len;

    g_string_append_c(s, '\t');
    if (x && o->target) {
        p = tbbt__ns_pool_get(&w->ns->pool, o->target, &len);
        tbbt_ns_escape(s, p, len);
    } else {
        g_string_append_c(s, '-');
    }
    g_string_append_c(s, '\t');
    put_u64(s, x ? entries_of(w, x) : 1);
    g_string_append_c(s, '\t');
    if (x && (o->smode & NS_MODE_KNOWN))
        g_string_append_printf(s, "%04o:%" PRIu32 ":%" PRIu32, o->smode & NS_MODE_BITS, o->suid,
                               o->sgid);
    else
        g_string_append_c(s, '-');
    g_string_append_c(s, '\n');
    put_bytes(w, s->str, s->len);
    w->entries++;
}

static void put_delete(GString *s, bool deleted, uint64_t t)
{
    if (deleted)
        put_time(s, t);
    else
        g_string_append_c(s, '-');
    g_string_append_c(s, '\t');
}

static void emit_link(struct mapw *w, uint32_t l)
{
    const struct ns_link *k = ns_link(w->ns, l);
    bool deleted = k->delete_ns != NS_LIVE;
    struct comp leaf = { .kind = C_NAME, .v = k->sname };

    put_head(w, k->child, k->create_ns);
    put_delete(w->line, deleted, k->delete_ns);
    put_path(w, w->line, k->sparent, k->create_ns, &leaf);
    g_string_append_c(w->line, '\t');
    leaf.v = k->name;
    put_path(w, w->line, k->parent, deleted ? k->delete_ns : UINT64_MAX, &leaf);
    put_tail(w, k->child);
}

/*
 * The entry of x's synthetic place (root, subtree, unnamed, orphan).  A
 * directory that holds names from trace start existed then, whatever the
 * trace said of its own creation: tbbt-init must make it first.
 */
static void emit_synthetic(struct mapw *w, uint32_t x)
{
    const struct ns_obj *o = ns_obj(w->ns, x);
    bool start = x == w->ns->root || (w->kids[x] & 2);
    size_t mark;

    put_head(w, x, start ? 0 : o->create_ns);
    put_delete(w->line, (o->flags & OF_DELETED) && x != w->ns->root, o->delete_ns);
    mark = w->line->len;
    put_path(w, w->line, x, 0, NULL);
    g_string_append_c(w->line, '\t');
    g_string_append_len(w->line, w->line->str + mark, (gssize)(w->line->len - mark - 1));
    put_tail(w, x);
}

/* The anchor of x: the entry whose emission lists x's children. */
static bool is_anchor(const struct mapw *w, uint32_t x, uint32_t item)
{
    if (item & SYN_BIT)
        return true;
    return w->place[x] == P_NORMAL && w->anchor[x] == item;
}

struct frame {
    uint32_t x, pos;
};

/* Depth-first emission of everything under top (whose own entry is out). */
static void emit_tree(struct mapw *w, uint32_t top)
{
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(struct frame));
    struct frame fr = { top, w->cstart[top] };

    w->expanded[top] = 1;
    g_array_append_val(stack, fr);
    while (stack->len && !w->err) {
        struct frame *f = &g_array_index(stack, struct frame, stack->len - 1);
        uint32_t item, x;
        if (f->pos == w->cstart[f->x + 1]) {
            g_array_set_size(stack, stack->len - 1);
            continue;
        }
        item = w->items[f->pos++];
        x = item & SYN_BIT ? item & ~SYN_BIT : ns_link(w->ns, item)->child;
        if (item & SYN_BIT)
            emit_synthetic(w, x);
        else
            emit_link(w, item);
        if (!w->expanded[x] && is_anchor(w, x, item)) {
            struct frame nf = { x, w->cstart[x] };
            w->expanded[x] = 1;
            g_array_append_val(stack, nf);
        }
    }
    g_array_free(stack, TRUE);
}

static void emit_orphans(struct mapw *w)
{
    bool any = false;

    for (uint32_t x = 1; x < w->n && !w->err; x++) {
        if (w->place[x] != P_ORPHAN)
            continue;
        if (!any) {
            put_head(w, 0, 0);
            g_string_append(w->line, "-\t");
            put_synthetic(w, w->line, "tbbt-orphans", 0, w->ns->root);
            g_string_append_c(w->line, '\t');
            put_synthetic(w, w->line, "tbbt-orphans", 0, w->ns->root);
            put_tail(w, 0);
            any = true;
        }
        w->ns->st.orphans++;
        emit_synthetic(w, x);
    }
}

static void emit_all(struct mapw *w)
{
    struct tbbt_ns *ns = w->ns;

    if (ns->root) {
        emit_synthetic(w, ns->root);
        emit_tree(w, ns->root);
    }
    for (uint32_t x = 1; x < w->n && !w->err; x++) {
        if (w->place[x] == P_SUBTREE) {
            ns->st.subtrees++;
            emit_synthetic(w, x);
            emit_tree(w, x);
        } else if (w->place[x] == P_UNNAMED) {
            ns->st.unnamed++;
        } else if (w->place[x] == P_NONE) {
            ns->st.stale_objects++;
        }
    }
    emit_orphans(w);
    /* What is still out hangs from a loop: cut each at its lowest ID. */
    for (uint32_t x = 1; x < w->n && !w->err; x++) {
        if (w->expanded[x] || w->cstart[x] == w->cstart[x + 1])
            continue;
        w->place[x] = P_FORCED;
        ns->st.subtrees++;
        emit_synthetic(w, x);
        emit_tree(w, x);
    }
}

/* ---- NFSv4 exports --------------------------------------------------------------------- */

/* A pseudo path "/a/b" (pool ref) appended to t, each component escaped as a path
 * field's. */
static void put_pseudo(const struct mapw *w, GString *t, uint32_t ref)
{
    uint32_t len;
    const char *p = (const char *)tbbt__ns_pool_get(&w->ns->pool, ref, &len);

    for (uint32_t i = 0; i < len;) {
        uint32_t j = i + 1;
        while (j < len && p[j] != '/')
            j++;
        g_string_append_c(t, '/');
        tbbt_ns_escape(t, p + i + 1, j - i - 1);
        i = j;
    }
    if (len == 0)
        g_string_append_c(t, '/');
}

/*
 * The map path of object x at the end of the trace appended to t: its live name then, else
 * where its entries start (its first name, or its synthetic place); false if the map
 * has no entry of it.
 */
static bool export_path(struct mapw *w, GString *t, uint32_t x)
{
    struct comp leaf = { .kind = C_NAME };
    const struct ns_link *k;
    uint32_t l;

    if (x == w->ns->root) {
        g_string_append_c(t, '.');
        return true;
    }
    if (!x || x >= w->n || w->place[x] == P_NONE)
        return false;
    if ((l = link_at(w, x, UINT64_MAX, false))) {
        k = ns_link(w->ns, l);
        leaf.v = k->name;
        put_path(w, t, k->parent, UINT64_MAX, &leaf);
    } else if (w->place[x] == P_NORMAL && w->anchor[x]) {
        k = ns_link(w->ns, w->anchor[x]);
        leaf.v = k->sname;
        put_path(w, t, k->sparent, k->create_ns, &leaf);
    } else {
        put_path(w, t, x, 0, NULL);
    }
    return true;
}

/*
 * The header lines "# v4-export<TAB>PSEUDO<TAB>MAPPATH", one per pseudo path a lowered
 * NFSv4 MOUNT reached (v4export.c), first reached first: tab-separated and escaped as
 * the entry lines' path fields are.
 */
static void emit_v4_exports(struct mapw *w)
{
    const GArray *a = w->ns->v4_exports;

    for (guint i = 0; a && i < a->len && !w->err; i++) {
        const struct ns_v4_export *e = &g_array_index(a, struct ns_v4_export, i);
        g_string_assign(w->line, "# v4-export\t");
        put_pseudo(w, w->line, e->pseudo);
        g_string_append_c(w->line, '\t');
        if (!export_path(w, w->line, e->obj))
            continue;
        g_string_append_c(w->line, '\n');
        put_bytes(w, w->line->str, w->line->len);
    }
}

int tbbt_ns_write_map(struct tbbt_ns *ns, FILE *out)
{
    struct mapw w = { .ns = ns, .out = out, .n = ns->objs.n };

    w.place = g_new0(uint8_t, w.n);
    w.expanded = g_new0(uint8_t, w.n);
    w.kids = g_new0(uint8_t, w.n);
    w.stamp = g_new0(uint32_t, w.n);
    w.comps = g_array_new(FALSE, FALSE, sizeof(struct comp));
    w.line = g_string_sized_new(256);
    ns->st.orphans = ns->st.subtrees = ns->st.unnamed = ns->st.untyped = 0;
    for (uint32_t x = 1; x < w.n; x++)
        ns->st.untyped += ns_obj(ns, x)->type == TBBT_NS_UNKNOWN;
    compute_places(&w);
    build_children(&w);
    g_string_assign(w.line, "# tbbt-map 3");
    if (ns->trace_known)
        g_string_append_printf(w.line, " trace-crc32=%08" PRIx32 " trace-ops=%" PRIu64,
                               ns->trace.crc, ns->trace.ops);
    g_string_append_c(w.line, '\n');
    put_bytes(&w, w.line->str, w.line->len);
    emit_v4_exports(&w);
    if (!w.err)
        emit_all(&w);
    if (!w.err) {
        char sum[TBBT_TEXTSUM_LINE];
        tbbt_textsum_line(sum, w.crc);
        put_bytes(&w, sum, strlen(sum));
    }
    if (!w.err && fflush(out) != 0)
        w.err = errno ? -errno : -EIO;
    ns->st.map_entries = w.entries;
    g_free(w.place);
    g_free(w.kids);
    g_free(w.expanded);
    g_free(w.stamp);
    g_free(w.cstart);
    g_free(w.items);
    g_free(w.ostart);
    g_free(w.olinks);
    g_free(w.anchor);
    g_array_free(w.comps, TRUE);
    g_string_free(w.line, TRUE);
    return w.err;
}

int tbbt_ns_write_map_file(struct tbbt_ns *ns, const char *path)
{
    FILE *f = fopen(path, "w");
    int rc;

    if (!f)
        return -errno;
    rc = tbbt_ns_write_map(ns, f);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

void tbbt_ns_set_map_trace(struct tbbt_ns *ns, const struct tbbt_trace_ident *id)
{
    ns->trace_known = id != NULL;
    if (id)
        ns->trace = *id;
}

char *tbbt_ns_map_path(const char *trace_path)
{
    return g_strconcat(trace_path, ".map", NULL);
}
