/* SPDX-License-Identifier: MIT */
/*
 * The object mapping of tbbt-compare: original TBBT-ID -> replay TBBT-ID (compare.h).
 * Start objects come from the two hierarchy maps (docs/hierarchy-map.md): every entry
 * with create time 0 of the original's map, at path P, is the replay map's start entry
 * at R/P, where R is the image root.  R is found (find_root) as the replay directory
 * under which the most original start paths exist: for every replay start path Q and
 * every '/' in it, the part after the '/' is looked up among the original's paths and
 * the part before it gets a vote (Q itself votes for "."); most votes wins, ties go to
 * the shorter and then the smaller path (tbbt-clone-0 before tbbt-clone-1).  An original
 * with no start path but its root has nothing to vote with: R is then the end of the
 * chain of LOOKUPs that opens the replay (the player looks up the image root from the
 * export, component by component, before anything else).  The same scan of the replay's
 * head finds where the player's start-up ends (startup_scan: by the calls' machine name
 * when the traces carry credentials, else by the LOOKUPs' pattern): its LOOKUPs are never
 * matched, though a replayed LOOKUP of a start path has the same key (without
 * credentials).  Objects made during the trace are mapped later by matched operations
 * (tbbt__cmp_objmap_set).
 *
 * Memory: both maps' start paths while loading, then 9 bytes per original ID.
 */
#include "compare/compare-int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "ns/ns.h"
#include "util/util.h"

/* Reads a map's start entries (create time 0) into path -> ID; 0 or error with err. */
static int load_start(const char *path, const char *what, GHashTable *out, uint64_t *root,
                      char *err, size_t errlen)
{
    int rc = 0;
    struct tbbt_ns_map_reader *r = tbbt_ns_map_reader_open(path, &rc);
    struct tbbt_ns_map_entry e;

    if (!r) {
        tbbt_errbuf(err, errlen, "cannot read the %s map '%s': %s", what, path,
                    tbbt_strerror(rc));
        return rc;
    }
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        if (e.create_ns != 0 || e.id == 0)
            continue;
        if (strcmp(e.path, ".") == 0 && !*root)
            *root = e.id;
        if (!g_hash_table_contains(out, e.path))
            g_hash_table_insert(out, g_strndup(e.path, e.path_len), (gpointer)(uintptr_t)e.id);
    }
    if (rc < 0) {
        if (rc == TBBT_E_SYNTAX)
            tbbt_errbuf(err, errlen, "cannot read the %s map '%s': line %" PRIu64 ": %s", what,
                        path, tbbt_ns_map_reader_line(r), tbbt_ns_map_reader_error(r));
        else
            tbbt_errbuf(err, errlen, "cannot read the %s map '%s': %s", what, path,
                        tbbt_strerror(rc));
    }
    tbbt_ns_map_reader_close(r);
    return rc < 0 ? rc : 0;
}

/* One more vote for root (taken). */
static void vote(GHashTable *votes, char *root)
{
    uintptr_t n = (uintptr_t)g_hash_table_lookup(votes, root);
    g_hash_table_replace(votes, root, (gpointer)(n + 1));
}

/* Counts, for every replay start path, the image roots it supports. */
static GHashTable *count_votes(GHashTable *a_paths, GHashTable *b_paths)
{
    GHashTable *votes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTableIter it;
    gpointer k;

    g_hash_table_iter_init(&it, b_paths);
    while (g_hash_table_iter_next(&it, &k, NULL)) {
        const char *q = k;
        if (strcmp(q, ".") == 0)
            continue;
        if (g_hash_table_contains(a_paths, q))
            vote(votes, g_strdup("."));
        for (const char *p = strchr(q, '/'); p; p = strchr(p + 1, '/'))
            if (g_hash_table_contains(a_paths, p + 1))
                vote(votes, g_strndup(q, (gsize)(p - q)));
    }
    return votes;
}

static unsigned depth(const char *p)
{
    unsigned d = strcmp(p, ".") != 0;
    for (; *p; p++)
        d += *p == '/';
    return d;
}

/* The best-voted root (given: g_free), or NULL when no path voted. */
static char *best_root(GHashTable *votes)
{
    GHashTableIter it;
    gpointer k, v;
    const char *best = NULL;
    uintptr_t best_n = 0;

    g_hash_table_iter_init(&it, votes);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        uintptr_t n = (uintptr_t)v;
        if (!best || n > best_n ||
            (n == best_n && (depth(k) < depth(best) ||
                             (depth(k) == depth(best) && strcmp(k, best) < 0)))) {
            best = k;
            best_n = n;
        }
    }
    return best ? g_strdup(best) : NULL;
}

/* A (directory, name) of the start-up prefix. */
struct dirname {
    uint64_t dir;
    char name[];
};

static guint dirname_hash(gconstpointer p)
{
    const struct dirname *d = p;
    return g_str_hash(d->name) ^ (guint)(d->dir * 0x9e3779b97f4a7c15ull >> 32);
}

static gboolean dirname_equal(gconstpointer x, gconstpointer y)
{
    const struct dirname *a = x, *b = y;
    return a->dir == b->dir && strcmp(a->name, b->name) == 0;
}

/* True (and remembered) the first time the start-up looks up (dir, name). */
static bool first_lookup(GHashTable *seen, const struct tbbt_trace_rec *rec)
{
    struct dirname *d = g_malloc(sizeof(*d) + rec->name.len + 1);

    d->dir = rec->id;
    memcpy(d->name, rec->name.p, rec->name.len);
    d->name[rec->name.len] = '\0';
    if (g_hash_table_contains(seen, d)) {
        g_free(d);
        return false;
    }
    g_hash_table_add(seen, d);
    return true;
}

/* True for a record of the player's start-up: MOUNT, or a LOOKUP the start-up sends. */
static bool startup_rec(const struct tbbt_trace_rec *rec, GHashTable *seen)
{
    enum tbbt_ns_op op = tbbt_ns_op(rec);
    bool ok = (rec->flags & TBBT_RF_REPLY) && rec->rpc_stat == TBBT_RPC_SUCCESS &&
              (rec->flags & TBBT_RF_STATUS) && rec->status == 0;

    if (!tbbt__cmp_is_nfs(rec->prog))
        return true;
    if (op != TBBT_NS_OP_LOOKUP || !ok || !TBBT_HAS(rec, TBBT_F_ID) ||
        !TBBT_HAS(rec, TBBT_F_NAME) || !tbbt_ns_name_ok(rec->name.p, rec->name.len) ||
        memchr(rec->name.p, '\0', rec->name.len))
        return false;
    return first_lookup(seen, rec);
}

/* The scan of the replay's head (startup_scan). */
struct scan {
    struct tbbt_trace_reader *r;
    GHashTable *seen;
    bool by_origin;             /* the player's records are those of its machine name */
    enum tbbt__cmp_origin next; /* by_origin: the origin of the record after the prefix */
};

static bool scan_rec(struct scan *s, const struct tbbt_trace_rec *rec)
{
    if (!s->by_origin)
        return startup_rec(rec, s->seen);
    enum tbbt__cmp_origin o = tbbt__cmp_rec_origin(s->r, rec);
    if (!tbbt__cmp_is_nfs(rec->prog) || o == CMP_ORIGIN_PLAYER)
        return true;
    s->next = o;
    return false;
}

/*
 * The player's start-up at the head of the replay.  by_origin: the leading MOUNT
 * records and calls of the player's machine name ("tbbt-play": its MOUNT, the LOOKUPs
 * of the image's paths, the grace probe); *traced: the record after them carries a
 * traced credential (false: the replay does not carry the calls' credentials, and the
 * caller scans again without).  Otherwise MOUNT records and successful LOOKUPs, each of
 * a (directory, name) not looked up before (the player looks up every path of the image
 * once, parents first, before it replays anything; a replayed LOOKUP of a start path
 * repeats one, anything else is no LOOKUP, and a LOOKUP of "." or ".." or one that
 * failed is not the player's).  *prefix_end: the index of the first record after it.
 * *chain_end: along it, the end of the chain from the MNT root of LOOKUPs that each
 * found a directory in the chain's end (the image root when the image holds nothing
 * else); 0 if none.
 */
static int startup_scan(const char *path, bool by_origin, bool *traced, uint64_t *chain_end,
                        uint64_t *prefix_end, char *err, size_t errlen)
{
    struct scan s = {.r = tbbt__cmp_open("replay", path, err, errlen), .by_origin = by_origin};
    struct tbbt_trace_rec rec;
    uint64_t n = 0, cur = 0;
    int rc;

    if (!s.r)
        return -EIO;
    s.seen = g_hash_table_new_full(dirname_hash, dirname_equal, g_free, NULL);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(s.r, &rec)) == 1 && scan_rec(&s, &rec)) {
        n++;
        bool ok = (rec.flags & TBBT_RF_STATUS) && rec.status == 0 && TBBT_HAS(&rec, TBBT_F_ID_OBJ);
        if (tbbt_ns_op(&rec) == TBBT_NS_OP_MNT) {
            if (ok && !cur)
                cur = rec.id_obj;
        } else if (tbbt_ns_op(&rec) == TBBT_NS_OP_LOOKUP && ok && (!cur || rec.id == cur) &&
                   TBBT_HAS(&rec, TBBT_F_OBJ_ATTR) && rec.obj_attr.type == 2) {
            cur = rec.id_obj;
        }
    }
    if (rc < 0)
        tbbt__cmp_read_error(s.r, "replay", path, rc, err, errlen);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(s.r);
    g_hash_table_destroy(s.seen);
    *traced = s.next == CMP_ORIGIN_REPLAYED;
    *chain_end = cur;
    *prefix_end = n;
    return rc < 0 ? rc : 0;
}

/* "./a/b/" -> "a/b"; "" and "/" -> "." (given: g_free). */
static char *normalize(const char *p)
{
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    while (*p == '/')
        p++;
    char *s = g_strdup(*p ? p : ".");
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/')
        s[--n] = '\0';
    return s;
}

/* The path of replay ID id among its start paths (given), or NULL. */
static char *path_of(GHashTable *b_paths, uint64_t id)
{
    GHashTableIter it;
    gpointer k, v;

    g_hash_table_iter_init(&it, b_paths);
    while (g_hash_table_iter_next(&it, &k, &v))
        if ((uint64_t)(uintptr_t)v == id)
            return g_strdup(k);
    return NULL;
}

/* Finds the image root: m->root_b and m->root_b_path; 0 or error with err. */
static int find_root(struct tbbt__cmp_objmap *m, const struct tbbt_compare_opts *o,
                     GHashTable *a_paths, GHashTable *b_paths, char *err, size_t errlen)
{
    char *root = NULL;

    if (o->root_b) {
        root = normalize(o->root_b);
    } else {
        GHashTable *votes = count_votes(a_paths, b_paths);
        root = best_root(votes);
        g_hash_table_destroy(votes);
    }
    if (root) {
        gpointer v;
        if (!g_hash_table_lookup_extended(b_paths, root, NULL, &v)) {
            tbbt_errbuf(err, errlen, "the image root '%s' is not a start path of the replay's "
                        "map", root);
            g_free(root);
            return TBBT_E_RANGE;
        }
        m->root_b = (uint64_t)(uintptr_t)v;
        m->root_b_path = root;
        return 0;
    }
    m->root_b = m->chain_end_b;
    if (!m->root_b)
        m->root_b = (uint64_t)(uintptr_t)g_hash_table_lookup(b_paths, ".");
    m->root_b_path = path_of(b_paths, m->root_b);
    if (!m->root_b_path)
        m->root_b_path = g_strdup_printf("(id %" PRIu64 ")", m->root_b);
    return 0;
}

/* Another replay object that a start path of original object a names. */
static void add_alt(struct tbbt__cmp_objmap *m, uint64_t a, uint64_t b)
{
    GArray *alts = g_hash_table_lookup(m->alts, (gpointer)(uintptr_t)a);

    if (!alts) {
        alts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_hash_table_insert(m->alts, (gpointer)(uintptr_t)a, alts);
    }
    for (guint i = 0; i < alts->len; i++)
        if (g_array_index(alts, uint64_t, i) == b)
            return;
    g_array_append_val(alts, b);
}

static void alts_free(gpointer p)
{
    g_array_free(p, TRUE);
}

/* Maps every original start path that exists under the image root; an object with
 * start paths that name different replay objects keeps the others as alternatives. */
static void map_paths(struct tbbt__cmp_objmap *m, GHashTable *a_paths, GHashTable *b_paths)
{
    GHashTableIter it;
    gpointer k, v;
    bool top = strcmp(m->root_b_path, ".") == 0;
    GString *q = g_string_new(NULL);

    if (m->root_a && m->root_b)
        tbbt__cmp_objmap_set(m, m->root_a, m->root_b, false);
    g_hash_table_iter_init(&it, a_paths);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (strcmp(k, ".") == 0)
            continue;
        g_string_assign(q, top ? "" : m->root_b_path);
        if (!top)
            g_string_append_c(q, '/');
        g_string_append(q, k);
        uint64_t b = (uint64_t)(uintptr_t)g_hash_table_lookup(b_paths, q->str);
        uint64_t a = (uint64_t)(uintptr_t)v, have = tbbt__cmp_objmap_get(m, a);
        if (b && !have)
            tbbt__cmp_objmap_set(m, a, b, false);
        else if (b && have != b)
            add_alt(m, a, b);
    }
    g_string_free(q, TRUE);
    m->ambiguous = g_hash_table_size(m->alts);
    m->by_path = 0;
    for (guint i = 0; i < m->a2b->len; i++)
        m->by_path += g_array_index(m->a2b, uint64_t, i) != 0;
}

int tbbt__cmp_objmap_load(struct tbbt__cmp_objmap *m, const struct tbbt_compare_opts *o,
                          bool *creds, char *err, size_t errlen)
{
    GHashTable *a_paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTable *b_paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char *map_a = o->map_a ? g_strdup(o->map_a) : tbbt_ns_map_path(o->trace_a);
    char *map_b = o->map_b ? g_strdup(o->map_b) : tbbt_ns_map_path(o->trace_b);
    uint64_t root_b_map = 0;
    int rc;

    memset(m, 0, sizeof(*m));
    m->a2b = g_array_new(FALSE, TRUE, sizeof(uint64_t));
    m->refd = g_array_new(FALSE, TRUE, sizeof(uint8_t));
    m->alts = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, alts_free);
    rc = load_start(map_a, "original", a_paths, &m->root_a, err, errlen);
    if (rc == 0)
        rc = load_start(map_b, "replay", b_paths, &root_b_map, err, errlen);
    *creds = false;
    if (rc == 0)
        rc = tbbt__cmp_creds_scan("original", o->trace_a, creds, err, errlen);
    if (rc == 0 && *creds)
        rc = startup_scan(o->trace_b, true, creds, &m->chain_end_b, &m->startup_end_b, err,
                          errlen);
    if (rc == 0 && !*creds)
        rc = startup_scan(o->trace_b, false, &(bool){false}, &m->chain_end_b,
                          &m->startup_end_b, err, errlen);
    if (rc == 0)
        rc = find_root(m, o, a_paths, b_paths, err, errlen);
    if (rc == 0)
        map_paths(m, a_paths, b_paths);
    g_hash_table_destroy(a_paths);
    g_hash_table_destroy(b_paths);
    g_free(map_a);
    g_free(map_b);
    return rc;
}

void tbbt__cmp_objmap_fini(struct tbbt__cmp_objmap *m)
{
    if (m->a2b)
        g_array_free(m->a2b, TRUE);
    if (m->refd)
        g_array_free(m->refd, TRUE);
    if (m->alts)
        g_hash_table_destroy(m->alts);
    g_free(m->root_b_path);
    memset(m, 0, sizeof(*m));
}

uint64_t tbbt__cmp_objmap_get(const struct tbbt__cmp_objmap *m, uint64_t a)
{
    return a < m->a2b->len ? g_array_index(m->a2b, uint64_t, a) : 0;
}

void tbbt__cmp_objmap_set(struct tbbt__cmp_objmap *m, uint64_t a, uint64_t b, bool proof)
{
    if (!a || !b || a > UINT32_MAX)
        return;
    uint64_t have = tbbt__cmp_objmap_get(m, a);
    if (have == b)
        return;
    if (have && !proof) {
        m->conflicts++;
        return;
    }
    m->remaps += have != 0;
    g_hash_table_remove(m->alts, (gpointer)(uintptr_t)a);
    if (a >= m->a2b->len)
        g_array_set_size(m->a2b, (guint)a + 1);
    g_array_index(m->a2b, uint64_t, a) = b;
}

const GArray *tbbt__cmp_objmap_alts(const struct tbbt__cmp_objmap *m, uint64_t a)
{
    return g_hash_table_size(m->alts) ? g_hash_table_lookup(m->alts, (gpointer)(uintptr_t)a)
                                      : NULL;
}

void tbbt__cmp_objmap_decide(struct tbbt__cmp_objmap *m, uint64_t a, uint64_t b)
{
    g_array_index(m->a2b, uint64_t, a) = b;     /* a is mapped: a2b is long enough */
    g_hash_table_remove(m->alts, (gpointer)(uintptr_t)a);
}

void tbbt__cmp_objmap_ref(struct tbbt__cmp_objmap *m, uint64_t a)
{
    if (!a || a > UINT32_MAX)
        return;
    if (a >= m->refd->len)
        g_array_set_size(m->refd, (guint)a + 1);
    g_array_index(m->refd, uint8_t, a) = 1;
}

void tbbt__cmp_objmap_count(const struct tbbt__cmp_objmap *m, struct tbbt_compare_counts *cnt)
{
    cnt->objects_mapped = cnt->objects_unmapped = 0;
    for (guint i = 0; i < m->a2b->len; i++)
        cnt->objects_mapped += g_array_index(m->a2b, uint64_t, i) != 0;
    for (guint i = 0; i < m->refd->len; i++)
        cnt->objects_unmapped +=
            g_array_index(m->refd, uint8_t, i) && !tbbt__cmp_objmap_get(m, i);
    cnt->objects_by_path = m->by_path;
    cnt->mapping_conflicts = m->conflicts;
    cnt->objects_remapped = m->remaps;
    cnt->objects_ambiguous = m->ambiguous;
}
