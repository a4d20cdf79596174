/* SPDX-License-Identifier: MIT */
/*
 * Loads the start state of a hierarchy map into a namespace model: the
 * "initial image" that TBBT's pre-play (paper 3.1) runs a trace against.
 * Used by tbbt-convert --check on a finished trace, where the model must give
 * every object the ID the trace's records carry, and must know every name
 * that exists at trace start (closed world).
 *
 * Two reads of the map: the first finds the largest ID (objects are dense
 * arrays by ID), the second makes the objects and the names of the entries
 * with create time 0.  Start directories are found by path through a table
 * of the paths read so far; the map's order (docs/hierarchy-map.md: every
 * directory before the names in it) makes one pass enough.
 */
#include "ns/ns-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_ID (UINT32_C(1) << 31)

struct load {
    struct tbbt_ns *ns;
    const char *path;
    GHashTable *dirs;           /* start path (owned) -> directory ID */
    uint32_t max_id, orphans, root;
    uint8_t *listed;            /* bit per ID that has an entry */
    char *errbuf;
    size_t errlen;
};

static int load_fail(struct load *ld, struct tbbt_ns_map_reader *r, int rc, const char *why)
{
    if (r && rc == TBBT_E_SYNTAX)
        snprintf(ld->errbuf, ld->errlen, "hierarchy map '%s' line %" PRIu64 ": %s", ld->path,
                 tbbt_ns_map_reader_line(r), tbbt_ns_map_reader_error(r));
    else if (r)
        snprintf(ld->errbuf, ld->errlen, "hierarchy map '%s' line %" PRIu64 ": %s", ld->path,
                 tbbt_ns_map_reader_line(r), why ? why : tbbt_strerror(rc));
    else
        snprintf(ld->errbuf, ld->errlen, "cannot read hierarchy map '%s': %s", ld->path,
                 tbbt_ns_map_open_error(rc));
    return rc;
}

/* First read: the largest ID. */
static int scan_ids(struct load *ld)
{
    struct tbbt_ns_map_entry e;
    struct tbbt_ns_map_reader *r;
    int err = 0, rc;

    if (!(r = tbbt_ns_map_reader_open(ld->path, &err)))
        return load_fail(ld, NULL, err, NULL);
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        if (e.id >= MAX_ID) {
            rc = load_fail(ld, r, TBBT_E_RANGE, "ID too large");
            break;
        }
        if (e.id > ld->max_id)
            ld->max_id = (uint32_t)e.id;
    }
    if (rc < 0 && rc != TBBT_E_RANGE)
        load_fail(ld, r, rc, NULL);
    tbbt_ns_map_reader_close(r);
    return rc;
}

/* The directory holding start path p[0..len) and the leaf's offset; 0 if none. */
static uint32_t parent_of(struct load *ld, const char *p, size_t len, size_t *leaf)
{
    const char *slash = memrchr(p, '/', len);
    gpointer v;
    char *dir;

    if (!slash) {
        *leaf = 0;
        return ld->root;
    }
    *leaf = (size_t)(slash - p) + 1;
    dir = g_strndup(p, (size_t)(slash - p));
    v = g_hash_table_lookup(ld->dirs, dir);
    g_free(dir);
    return GPOINTER_TO_UINT(v);
}

static int add_entry(struct load *ld, struct tbbt_ns_map_reader *r,
                     const struct tbbt_ns_map_entry *e)
{
    struct tbbt_ns *ns = ld->ns;
    uint32_t id = e->id ? (uint32_t)e->id : ld->orphans, dir, name;
    size_t leaf;

    if (e->id)
        ld->listed[id >> 3] |= (uint8_t)(1u << (id & 7));
    tbbt__ns_set_type(ns, id, e->type, true);
    if (e->attrs_known && !(ns_obj(ns, id)->mode & NS_MODE_KNOWN)) {
        struct ns_obj *o = ns_obj(ns, id);
        o->mode = o->smode = (uint16_t)((e->mode & NS_MODE_BITS) | NS_MODE_KNOWN);
        o->uid = o->suid = e->uid;
        o->gid = o->sgid = e->gid;
    }
    if (e->type == TBBT_NS_SYMLINK && e->target && !ns_obj(ns, id)->target)
        ns_obj(ns, id)->target = tbbt__ns_pool_add(&ns->pool, e->target, e->target_len);
    if (e->create_ns != 0)
        return 0;               /* made in the trace: its record makes the name */
    if (e->path_len == 1 && e->path[0] == '.') {
        ns->root = id;
        return 0;
    }
    if (!(dir = parent_of(ld, e->path, e->path_len, &leaf)))
        return load_fail(ld, r, TBBT_E_RANGE, "start path whose directory is not at trace start");
    name = tbbt__ns_pool_intern(&ns->pool, e->path + leaf, e->path_len - leaf);
    if (tbbt__ns_dent_child(ns, dir, name) || tbbt__ns_would_loop(ns, dir, id))
        return load_fail(ld, r, TBBT_E_RANGE, "start path given twice or in a loop");
    tbbt__ns_link_add(ns, dir, name, id, 0);
    if (e->type == TBBT_NS_DIR)
        g_hash_table_insert(ld->dirs, g_strndup(e->path, e->path_len), GUINT_TO_POINTER(id));
    return 0;
}

int tbbt_ns_load_start(struct tbbt_ns *ns, const char *map_path, uint64_t max_id, char *errbuf,
                       size_t errlen)
{
    struct load ld = { .ns = ns, .path = map_path, .errbuf = errbuf, .errlen = errlen };
    struct tbbt_ns_map_entry e;
    struct tbbt_ns_map_reader *r;
    int err = 0, rc;

    g_assert(ns->objs.n == 1);
    if (errlen)
        errbuf[0] = '\0';
    if ((rc = scan_ids(&ld)) < 0)
        return rc;
    if (max_id >= MAX_ID)
        return load_fail(&ld, NULL, TBBT_E_RANGE, NULL);
    if (max_id > ld.max_id)
        ld.max_id = (uint32_t)max_id;
    while (ns->objs.n <= ld.max_id)
        tbbt__ns_obj_new(ns, TBBT_NS_UNKNOWN, 0);
    ld.orphans = tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
    /* A map without "." (no MOUNT reply): its top-level entries hang from a made-up root. */
    ld.root = tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
    ns->root = ld.root;
    ld.dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    ld.listed = g_malloc0(ld.max_id / 8 + 1);
    if (!(r = tbbt_ns_map_reader_open(map_path, &err))) {
        g_hash_table_destroy(ld.dirs);
        g_free(ld.listed);
        return load_fail(&ld, NULL, err, NULL);
    }
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        if ((rc = add_entry(&ld, r, &e)) < 0)
            break;
        if (ns->root != ld.root)
            ld.root = ns->root;         /* the map's own root (first entry) */
    }
    if (rc < 0 && !*errbuf)
        load_fail(&ld, r, rc, NULL);
    tbbt_ns_map_reader_close(r);
    g_hash_table_destroy(ld.dirs);
    /* IDs the map leaves out never existed in the image (only ever STALE) */
    for (uint32_t x = 1; x <= ld.max_id; x++)
        if (!(ld.listed[x >> 3] & (1u << (x & 7))))
            tbbt_ns_forget(ns, x, 1);
    g_free(ld.listed);
    ns->st = (struct tbbt_ns_stats){ 0 };
    tbbt_ns_set_closed(ns, true);
    tbbt_ns_set_by_id(ns, true);
    return rc < 0 ? rc : 0;
}
