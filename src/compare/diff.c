/* SPDX-License-Identifier: MIT */
/*
 * The differences of a matched pair (compare.h, "Differences"), and the tables that
 * count them by key with the first examples.  Not differences, by design: handles (the
 * pair's objects are the same through the mapping: they are the key), the names (also
 * the key), XIDs, cookie verifiers, write and create verifiers, the data, and the
 * values of set-to-client times (counted apart, TBBT_COMPARE_CLIENT_TIME).  A READDIR
 * or READDIRPLUS cookie is right when it is 0 on both sides, or when the original
 * continues a page whose replay ended at the replay's cookie (tbbt__cmp_cookie_learn
 * remembers the pair of last cookies of each matched page that was not the last).
 *
 * Argument fields are counted as PROC.FIELD ("write.count", "setattr.sattr.mode",
 * "setattr.guard": the player never sends a guard, whose ctime is the traced server's),
 * and the credentials as "uid" and "gid".  Reply fields, compared only when both sides
 * got the same status: "PROC.attr.{type,size,nlink,mode,uid,gid}" of the post-op
 * attributes (mode: permission bits; which ones: the player's rule, player/attrcheck.h),
 * "read.res_count", "write.res_count", "write.committed", "PROC.eof",
 * "readdir(plus).entries", "access.access_res",
 * "readlink.target".  Three tables take them: a directory's "attr.size" and
 * "attr.nlink" when both sides show a directory go to the image's (TBBT_COMPARE_REPLY_IMAGE:
 * they follow entries and subdirectories the trace never saw, which tbbt-init does not
 * make), and so do the entry count and EOF of a page of a listing longer than one page
 * (the split follows the file system's directory order); racy.c sends the others to the
 * real ones (TBBT_COMPARE_REPLY) or, when the original raced another request's change of
 * the object, to the racy ones.
 */
#include "compare/compare-int.h"

#include <string.h>

#include "player/attrcheck.h"
#include "trace/trace.h"

#define HAS(op, f) (((op)->present >> (f)) & 1u)

struct cookie_ent {
    uint64_t dir, cookie;       /* original directory, original page's last cookie */
    uint64_t replay;            /* the replay page's last cookie */
};

static guint cookie_hash(gconstpointer p)
{
    const struct cookie_ent *e = p;
    return (guint)((e->dir * 0x9e3779b97f4a7c15ull) ^ e->cookie ^ (e->cookie >> 32));
}

static gboolean cookie_equal(gconstpointer x, gconstpointer y)
{
    const struct cookie_ent *a = x, *b = y;
    return a->dir == b->dir && a->cookie == b->cookie;
}

static void diff_free(gpointer p)
{
    struct tbbt__cmp_diff *d = p;
    g_free(d->key);
    g_array_free(d->ex, TRUE);
    g_free(d);
}

void tbbt__cmp_diffs_init(struct tbbt_compare *c)
{
    for (int k = 0; k < TBBT_COMPARE_NKINDS; k++)
        c->diffs[k] = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, diff_free);
    c->cookies = g_hash_table_new_full(cookie_hash, cookie_equal, g_free, NULL);
}

void tbbt__cmp_diffs_fini(struct tbbt_compare *c)
{
    for (int k = 0; k < TBBT_COMPARE_NKINDS; k++)
        if (c->diffs[k])
            g_hash_table_destroy(c->diffs[k]);
    if (c->cookies)
        g_hash_table_destroy(c->cookies);
}

void tbbt__cmp_count(struct tbbt_compare *c, enum tbbt_compare_kind kind, const char *key,
                     uint64_t a_seq, uint64_t b_seq)
{
    struct tbbt__cmp_diff *d = g_hash_table_lookup(c->diffs[kind], key);

    if (!d) {
        d = g_new0(struct tbbt__cmp_diff, 1);
        d->key = g_strdup(key);
        d->ex = g_array_new(FALSE, FALSE, sizeof(struct tbbt__cmp_example));
        g_hash_table_insert(c->diffs[kind], d->key, d);
    }
    d->n++;
    if (d->ex->len < c->o.show) {
        struct tbbt__cmp_example e = {a_seq, b_seq};
        g_array_append_val(d->ex, e);
    }
}

static gint by_count(gconstpointer x, gconstpointer y)
{
    const struct tbbt__cmp_diff *a = *(struct tbbt__cmp_diff *const *)x;
    const struct tbbt__cmp_diff *b = *(struct tbbt__cmp_diff *const *)y;
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    return strcmp(a->key, b->key);
}

GPtrArray *tbbt__cmp_sorted(const struct tbbt_compare *c, enum tbbt_compare_kind kind)
{
    GPtrArray *a = g_ptr_array_new();
    GHashTableIter it;
    gpointer v;

    g_hash_table_iter_init(&it, c->diffs[kind]);
    while (g_hash_table_iter_next(&it, NULL, &v))
        g_ptr_array_add(a, v);
    g_ptr_array_sort(a, by_count);
    return a;
}

/* ---- the differences of one pair ----------------------------------------------------- */

static void add(const char **list, unsigned *n, unsigned max, const char *field)
{
    if (*n < max)
        list[(*n)++] = field;
}

#define ARG(f, name) add((f)->arg, &(f)->n_arg, CMP_MAX_FIELDS, (name))
#define REPLY(f, name) add((f)->reply, &(f)->n_reply, CMP_MAX_FIELDS, (name))
#define IMAGE(f, name) add((f)->image, &(f)->n_image, G_N_ELEMENTS((f)->image), (name))

/* A u32/u64 field: differs when present on one side only, or with other values. */
static bool field_differs(const struct tbbt__cmp_op *a, const struct tbbt__cmp_op *b, int field,
                          uint64_t va, uint64_t vb)
{
    bool ha = HAS(a, field), hb = HAS(b, field);
    return ha != hb || (ha && va != vb);
}

/* Lists name among the argument differences when field_differs(). */
static void arg_field(struct tbbt__cmp_fields *f, const struct tbbt__cmp_op *a,
                      const struct tbbt__cmp_op *b, int field, uint64_t va, uint64_t vb,
                      const char *name)
{
    if (field_differs(a, b, field, va, vb))
        ARG(f, name);
}

/* How a sattr sets a time: 0 not, 1 to the server's time, 2 to the client's (value). */
static int time_how(uint32_t mask, uint32_t client, uint32_t server)
{
    return mask & client ? 2 : (mask & server ? 1 : 0);
}

static void sattr_diffs(const struct tbbt__cmp_op *a, const struct tbbt__cmp_op *b,
                        struct tbbt__cmp_fields *f)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } plain[] = {{TBBT_SA_MODE, "sattr.mode"}, {TBBT_SA_UID, "sattr.uid"},
                 {TBBT_SA_GID, "sattr.gid"}, {TBBT_SA_SIZE, "sattr.size"}};
    struct tbbt_sattr sa = {0}, sb = {0};

    if (!HAS(a, TBBT_F_SATTR) && !HAS(b, TBBT_F_SATTR))
        return;
    if (HAS(a, TBBT_F_SATTR))
        sa = a->sattr;
    if (HAS(b, TBBT_F_SATTR))
        sb = b->sattr;
    const uint64_t va[] = {sa.mode, sa.uid, sa.gid, sa.size};
    const uint64_t vb[] = {sb.mode, sb.uid, sb.gid, sb.size};
    for (size_t i = 0; i < G_N_ELEMENTS(plain); i++) {
        bool ia = sa.mask & plain[i].bit, ib = sb.mask & plain[i].bit;
        if (ia != ib || (ia && va[i] != vb[i]))
            ARG(f, plain[i].name);
    }
    int ha = time_how(sa.mask, TBBT_SA_ATIME, TBBT_SA_ATIME_SERVER);
    int hb = time_how(sb.mask, TBBT_SA_ATIME, TBBT_SA_ATIME_SERVER);
    if (ha != hb)
        ARG(f, "sattr.atime");
    else if (ha == 2 && sa.atime_ns != sb.atime_ns && f->n_client_time < 4)
        f->client_time[f->n_client_time++] = "sattr.atime";
    ha = time_how(sa.mask, TBBT_SA_MTIME, TBBT_SA_MTIME_SERVER);
    hb = time_how(sb.mask, TBBT_SA_MTIME, TBBT_SA_MTIME_SERVER);
    if (ha != hb)
        ARG(f, "sattr.mtime");
    else if (ha == 2 && sa.mtime_ns != sb.mtime_ns && f->n_client_time < 4)
        f->client_time[f->n_client_time++] = "sattr.mtime";
}

static bool is_readdir(const struct tbbt__cmp_op *op)
{
    return op->kind == TBBT_NS_OP_READDIR || op->kind == TBBT_NS_OP_READDIRPLUS;
}

/* The replay cookie that continues the original's page ending at cookie, if known. */
static const struct cookie_ent *cookie_find(const struct tbbt_compare *c, uint64_t dir,
                                            uint64_t cookie)
{
    struct cookie_ent k = {dir, cookie, 0};
    return g_hash_table_lookup(c->cookies, &k);
}

static bool cookie_differs(const struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                           const struct tbbt__cmp_op *b)
{
    uint64_t ca = HAS(a, TBBT_F_COOKIE) ? a->cookie : 0, cb = HAS(b, TBBT_F_COOKIE) ? b->cookie : 0;
    if (ca == 0 || cb == 0)
        return ca != cb;
    const struct cookie_ent *e = cookie_find(c, a->id, ca);
    return e && e->replay != cb;
}

static void arg_diffs(const struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                      const struct tbbt__cmp_op *b, struct tbbt__cmp_fields *f)
{
    bool rw = a->kind == TBBT_NS_OP_READ || a->kind == TBBT_NS_OP_WRITE;

    if (a->uid != b->uid)
        ARG(f, "uid");
    if (a->gid != b->gid)
        ARG(f, "gid");
    if (!rw && field_differs(a, b, TBBT_F_OFFSET, a->offset, b->offset))
        ARG(f, "offset");
    arg_field(f, a, b, TBBT_F_COUNT, a->count, b->count, "count");
    arg_field(f, a, b, TBBT_F_STABLE, a->stable, b->stable, "stable");
    sattr_diffs(a, b, f);
    if (HAS(a, TBBT_F_GUARD) != HAS(b, TBBT_F_GUARD))
        ARG(f, "guard");
    if (a->kind == TBBT_NS_OP_SYMLINK &&
        (a->target_len != b->target_len || (a->target_len &&
                                             memcmp(a->target, b->target, a->target_len) != 0)))
        ARG(f, "target");
    if (is_readdir(a) && cookie_differs(c, a, b))
        ARG(f, "cookie");
    arg_field(f, a, b, TBBT_F_DIRCOUNT, a->dircount, b->dircount, "dircount");
    arg_field(f, a, b, TBBT_F_MAXCOUNT, a->maxcount, b->maxcount, "maxcount");
    arg_field(f, a, b, TBBT_F_ACCESS, a->access, b->access, "access");
    arg_field(f, a, b, TBBT_F_CREATEMODE, a->createmode, b->createmode, "createmode");
    arg_field(f, a, b, TBBT_F_FTYPE, a->ftype, b->ftype, "ftype");
    arg_field(f, a, b, TBBT_F_RDEV, a->rdev, b->rdev, "rdev");
}

static bool status_differs(const struct tbbt__cmp_op *a, const struct tbbt__cmp_op *b)
{
    if ((b->flags & TBBT_RF_REPLY) == 0 || a->rpc_stat != b->rpc_stat)
        return true;
    if ((a->flags & TBBT_RF_STATUS) != (b->flags & TBBT_RF_STATUS))
        return true;
    return (a->flags & TBBT_RF_STATUS) && a->status != b->status;
}

static void to_fattr(struct tbbt_fattr *f, const struct tbbt__cmp_attr *a)
{
    *f = (struct tbbt_fattr){.type = a->type, .mode = a->mode, .nlink = a->nlink,
                             .uid = a->uid, .gid = a->gid, .size = a->size};
}

/* The attribute checks, in the order their differences are listed. */
static const struct {
    unsigned bit;               /* TBBT_ATTRCHECK_* */
    const char *field;
    bool image;                 /* a directory's size or link count: the image's */
} attr_checks[] = {
    {TBBT_ATTRCHECK_TYPE, "attr.type", false},
    {TBBT_ATTRCHECK_DIR_SIZE, "attr.size", true},
    {TBBT_ATTRCHECK_SIZE, "attr.size", false},
    {TBBT_ATTRCHECK_DIR_NLINK, "attr.nlink", true},
    {TBBT_ATTRCHECK_NLINK, "attr.nlink", false},
    {TBBT_ATTRCHECK_MODE, "attr.mode", false},
    {TBBT_ATTRCHECK_UID, "attr.uid", false},
    {TBBT_ATTRCHECK_GID, "attr.gid", false},
};

/*
 * Post-op attributes, by the player's rule (tbbt_attrcheck_diff()); a directory's size
 * and link count are the image's (f->image).
 */
static void attr_diffs(const struct tbbt__cmp_attr *a, const struct tbbt__cmp_attr *b,
                       struct tbbt__cmp_fields *f)
{
    struct tbbt_fattr fa, fb;

    to_fattr(&fa, a);
    to_fattr(&fb, b);
    unsigned d = tbbt_attrcheck_diff(&fa, &fb);
    for (size_t i = 0; i < G_N_ELEMENTS(attr_checks); i++) {
        if (!(d & attr_checks[i].bit))
            continue;
        if (attr_checks[i].image)
            IMAGE(f, attr_checks[i].field);
        else
            REPLY(f, attr_checks[i].field);
    }
}

static bool has_arg(const struct tbbt__cmp_fields *f, const char *name)
{
    for (unsigned i = 0; i < f->n_arg; i++)
        if (strcmp(f->arg[i], name) == 0)
            return true;
    return false;
}

static void reply_diffs(const struct tbbt__cmp_op *a, const struct tbbt__cmp_op *b,
                        struct tbbt__cmp_fields *f)
{
    if (HAS(a, TBBT_F_OBJ_ATTR) && HAS(b, TBBT_F_OBJ_ATTR))
        attr_diffs(&a->attr, &b->attr, f);
    /* A page of a longer listing: where the server splits it follows its directory order
     * (ext4: a hash with a per-file-system seed), the image's, not the replay's doing;
     * unless the page was asked for from another place than traced. */
    bool part = is_readdir(a) && (a->cookie != 0 || !HAS(a, TBBT_F_EOF) || !a->eof) &&
                !has_arg(f, "cookie");
    if (field_differs(a, b, TBBT_F_RES_COUNT, a->res_count, b->res_count)) {
        if (part)
            IMAGE(f, "entries");
        else
            REPLY(f, is_readdir(a) ? "entries" : "res_count");
    }
    if (field_differs(a, b, TBBT_F_EOF, a->eof, b->eof)) {
        if (part)
            IMAGE(f, "eof");
        else
            REPLY(f, "eof");
    }
    if (field_differs(a, b, TBBT_F_COMMITTED, a->committed, b->committed))
        REPLY(f, "committed");
    if (field_differs(a, b, TBBT_F_ACCESS_RES, a->access_res, b->access_res))
        REPLY(f, "access_res");
    if (a->kind == TBBT_NS_OP_READLINK &&
        (a->target_len != b->target_len || (a->target_len &&
                                             memcmp(a->target, b->target, a->target_len) != 0)))
        REPLY(f, "target");
}

unsigned tbbt__cmp_arg_diffs(const struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                             const struct tbbt__cmp_op *b)
{
    struct tbbt__cmp_fields f;

    memset(&f, 0, sizeof(f));
    arg_diffs(c, a, b, &f);
    return f.n_arg;
}

/* All the differences of the pair (a, b) into f. */
static void pair_diffs(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                       const struct tbbt__cmp_op *b, struct tbbt__cmp_fields *f)
{
    memset(f, 0, sizeof(*f));
    arg_diffs(c, a, b, f);
    if (!(a->flags & TBBT_RF_REPLY)) {
        f->status_unchecked = true;
        return;
    }
    f->status_differs = status_differs(a, b);
    if (!f->status_differs)
        reply_diffs(a, b, f);
}

/* ---- counting a pair --------------------------------------------------------------------- */

/* Room for a difference key: a procedure label, a field or two status labels. */
#define KEY_MAX 96

/* "PROC.FIELD", or FIELD itself for the credentials. */
static const char *field_key(char *buf, const struct tbbt__cmp_op *a, const char *field)
{
    if (strcmp(field, "uid") == 0 || strcmp(field, "gid") == 0)
        return field;
    g_snprintf(buf, KEY_MAX, "%s.%s", tbbt__cmp_proc_label(a->prog, a->proc), field);
    return buf;
}

void tbbt__cmp_count_reply(struct tbbt_compare *c, enum tbbt_compare_kind kind, int prog,
                           int proc, uint64_t a_seq, uint64_t b_seq, const char *const *fields,
                           unsigned n)
{
    char key[KEY_MAX];

    for (unsigned i = 0; i < n; i++) {
        g_snprintf(key, sizeof(key), "%s.%s", tbbt__cmp_proc_label(prog, proc), fields[i]);
        tbbt__cmp_count(c, kind, key, a_seq, b_seq);
    }
}

void tbbt__cmp_cookie_learn(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                            const struct tbbt__cmp_op *b)
{
    if (!is_readdir(a))
        return;
    if (HAS(a, TBBT_F_COOKIE) && a->cookie) {   /* a continuation uses its page once */
        struct cookie_ent k = {a->id, a->cookie, 0};
        g_hash_table_remove(c->cookies, &k);
    }
    if (!HAS(a, TBBT_F_EOF) || a->eof || !a->last_cookie)
        return;
    struct cookie_ent *e = g_new(struct cookie_ent, 1);
    *e = (struct cookie_ent){a->id, a->last_cookie, b->last_cookie};
    g_hash_table_add(c->cookies, e);
}

bool tbbt__cmp_pair(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                    const struct tbbt__cmp_op *b)
{
    struct tbbt__cmp_fields f;
    char key[KEY_MAX], sa[32], sb[32];

    pair_diffs(c, a, b, &f);
    for (unsigned i = 0; i < f.n_arg; i++)
        tbbt__cmp_count(c, TBBT_COMPARE_ARG, field_key(key, a, f.arg[i]), a->seq, b->seq);
    tbbt__cmp_count_reply(c, TBBT_COMPARE_REPLY_IMAGE, a->prog, a->proc, a->seq, b->seq,
                          f.image, f.n_image);
    if (f.n_reply)
        tbbt__cmp_racy_pair(c, a, b, &f);
    for (unsigned i = 0; i < f.n_client_time; i++)
        tbbt__cmp_count(c, TBBT_COMPARE_CLIENT_TIME, field_key(key, a, f.client_time[i]), a->seq,
                        b->seq);
    if (f.status_differs) {
        tbbt__cmp_status_label(a, sa, sizeof(sa));
        tbbt__cmp_status_label(b, sb, sizeof(sb));
        g_snprintf(key, sizeof(key), "%s:%s->%s", tbbt__cmp_proc_label(a->prog, a->proc), sa, sb);
        tbbt__cmp_count(c, TBBT_COMPARE_STATUS, key, a->seq, b->seq);
    }
    c->cnt.pairs_arg_diff += f.n_arg > 0;
    c->cnt.pairs_status_diff += f.status_differs;
    c->cnt.pairs_reply_image += f.n_image > 0;
    c->cnt.status_unchecked += f.status_unchecked;
    tbbt__cmp_cookie_learn(c, a, b);
    return f.n_arg == 0 && !f.status_differs;
}
