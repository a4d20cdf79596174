/* SPDX-License-Identifier: MIT */
/*
 * The whole-file rules of a hierarchy map (docs/hierarchy-map.md, "Reading
 * it"), on top of the reader's line rules: one object per ID (its entries
 * agree on type, size, symlink target, links and attributes, and number as
 * many as links says), every start entry's directory already at trace start,
 * no start directory twice.  Used by tbbt-init (before it builds anything) and by
 * tbbt-play (before it talks to a server).  It builds nothing.
 */
#include "ns/ns.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc32.h"
#include "util/util.h"

#define MAX_ID (UINT64_C(1) << 31)

/* What the first entry of an ID said; later ones must agree. */
struct obj {
    uint64_t size, line;
    uint32_t links, count, mode, uid, gid, target;
    uint8_t type, size_state, attrs_known;
};

struct chk {
    const char *file;
    char *err;
    size_t errlen;
    GHashTable *ids;            /* ID -> index + 1 into objs */
    GArray *objs;
    GHashTable *dirs;           /* start directory paths (owned) */
    GArray *starts;             /* tbbt_ns_start_key() of every start entry, or NULL */
};

static int bad(struct chk *c, uint64_t line, int rc, const char *why)
{
    tbbt_errbuf(c->err, c->errlen, "hierarchy map '%s' line %" PRIu64 ": %s", c->file, line,
                why);
    return rc;
}

static uint32_t target_sum(const struct tbbt_ns_map_entry *e)
{
    return e->target ? tbbt_crc32(1, e->target, e->target_len) : 0;
}

static int same_object(struct chk *c, uint64_t line, const struct tbbt_ns_map_entry *e)
{
    gpointer v = g_hash_table_lookup(c->ids, GUINT_TO_POINTER((guint)e->id));
    struct obj o = { .size = e->size, .line = line, .links = e->links, .count = 1,
                     .mode = e->mode, .uid = e->uid, .gid = e->gid, .target = target_sum(e),
                     .type = (uint8_t)e->type, .size_state = (uint8_t)e->size_state,
                     .attrs_known = e->attrs_known };
    struct obj *p;

    if (!v) {
        g_array_append_val(c->objs, o);
        g_hash_table_insert(c->ids, GUINT_TO_POINTER((guint)e->id),
                            GUINT_TO_POINTER(c->objs->len));
        return 0;
    }
    p = &g_array_index(c->objs, struct obj, GPOINTER_TO_UINT(v) - 1);
    p->count++;
    if (p->type != o.type)
        return bad(c, line, TBBT_E_SYNTAX, "type differs from an earlier entry of this ID");
    if (p->size != o.size || p->size_state != o.size_state)
        return bad(c, line, TBBT_E_SYNTAX, "size differs from an earlier entry of this ID");
    if (p->target != o.target)
        return bad(c, line, TBBT_E_SYNTAX, "target differs from an earlier entry of this ID");
    if (p->links != o.links)
        return bad(c, line, TBBT_E_SYNTAX, "links differs from an earlier entry of this ID");
    if (p->attrs_known != o.attrs_known || p->mode != o.mode || p->uid != o.uid ||
        p->gid != o.gid)
        return bad(c, line, TBBT_E_SYNTAX,
                   "attributes differ from an earlier entry of this ID");
    return 0;
}

/* A start entry: its directory is at trace start, and its path is new. */
static int start_place(struct chk *c, uint64_t line, const struct tbbt_ns_map_entry *e)
{
    const char *slash = memrchr(e->path, '/', e->path_len);
    char *dir;
    bool ok;

    if (e->path_len == 1 && e->path[0] == '.')
        return 0;
    if (slash) {
        dir = g_strndup(e->path, (gsize)(slash - e->path));
        ok = g_hash_table_contains(c->dirs, dir);
        g_free(dir);
        if (!ok)
            return bad(c, line, TBBT_E_SYNTAX, "path: its directory is no earlier directory "
                       "entry at trace start");
    }
    if (e->type != TBBT_NS_DIR)
        return 0;
    dir = g_strndup(e->path, e->path_len);
    if (g_hash_table_contains(c->dirs, dir)) {
        g_free(dir);
        return bad(c, line, TBBT_E_SYNTAX, "path: a directory at trace start given twice");
    }
    g_hash_table_add(c->dirs, dir);
    return 0;
}

static int counts(struct chk *c)
{
    for (guint i = 0; i < c->objs->len; i++) {
        const struct obj *o = &g_array_index(c->objs, struct obj, i);
        if (o->count != o->links) {
            char why[160];
            snprintf(why, sizeof(why), "links: %" PRIu32 " but the map has %" PRIu32
                     " entries of this ID", o->links, o->count);
            return bad(c, o->line, TBBT_E_SYNTAX, why);
        }
    }
    return 0;
}

/* Adds every decoded field of e to the digest. */
static uint32_t digest(uint32_t d, const struct tbbt_ns_map_entry *e)
{
    uint64_t v[] = { e->id, (uint64_t)e->type, e->size, (uint64_t)e->size_state, e->create_ns,
                     e->deleted, e->delete_ns, e->links, e->attrs_known, e->mode, e->uid,
                     e->gid, e->path_len, e->final_len, e->target ? e->target_len + 1 : 0 };

    d = tbbt_crc32(d, v, sizeof(v));
    d = tbbt_crc32(d, e->path, e->path_len);
    d = tbbt_crc32(d, e->final_path, e->final_len);
    return e->target ? tbbt_crc32(d, e->target, e->target_len) : d;
}

static int read_all(struct chk *c, struct tbbt_ns_map_reader *r, struct tbbt_ns_map_info *info)
{
    struct tbbt_ns_map_entry e;
    int rc;

    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        uint64_t line = tbbt_ns_map_reader_line(r);
        if (info->entries++ == 0 && e.path_len == 1 && e.path[0] == '.')
            info->root_id = e.id;
        info->digest = digest(info->digest, &e);
        if (e.id >= MAX_ID)
            return bad(c, line, TBBT_E_RANGE, "id: above 2^31");
        if ((rc = same_object(c, line, &e)) < 0 ||
            (e.create_ns == 0 && (rc = start_place(c, line, &e)) < 0))
            return rc;
        if (c->starts && e.create_ns == 0) {
            uint64_t k = tbbt_ns_start_key(e.id, e.path, e.path_len);
            g_array_append_val(c->starts, k);
        }
    }
    if (rc < 0)
        return bad(c, tbbt_ns_map_reader_line(r), rc,
                   rc == TBBT_E_SYNTAX ? tbbt_ns_map_reader_error(r) : tbbt_strerror(rc));
    return counts(c);
}

uint64_t tbbt_ns_start_key(uint64_t id, const char *path, size_t len)
{
    return id << 32 | tbbt_crc32(0, path, len);
}

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

int tbbt_ns_map_check(const char *path, struct tbbt_ns_map_info *info, char *err,
                      size_t errlen)
{
    return tbbt_ns_map_check_starts(path, info, NULL, err, errlen);
}

int tbbt_ns_map_check_starts(const char *path, struct tbbt_ns_map_info *info, GArray *starts,
                             char *err, size_t errlen)
{
    struct chk c = { .file = path, .err = err, .errlen = errlen, .starts = starts };
    struct tbbt_ns_map_reader *r;
    int rc = 0;

    *info = (struct tbbt_ns_map_info){ 0 };
    if (!(r = tbbt_ns_map_reader_open(path, &rc))) {
        tbbt_errbuf(err, errlen, "hierarchy map '%s': %s", path, tbbt_ns_map_open_error(rc));
        return rc;
    }
    info->version = tbbt_ns_map_reader_version(r);
    info->summed = tbbt_ns_map_reader_crc(r, &info->crc);
    info->trace_known = tbbt_ns_map_reader_trace(r, &info->trace);
    c.ids = g_hash_table_new(g_direct_hash, g_direct_equal);
    c.objs = g_array_new(FALSE, FALSE, sizeof(struct obj));
    c.dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    rc = read_all(&c, r, info);
    info->objects = c.objs->len;
    if (starts)
        qsort(starts->data, starts->len, sizeof(uint64_t), key_cmp);
    tbbt_ns_map_reader_close(r);
    g_hash_table_destroy(c.ids);
    g_array_free(c.objs, TRUE);
    g_hash_table_destroy(c.dirs);
    return rc;
}
