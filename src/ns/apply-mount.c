/* SPDX-License-Identifier: MIT */
/*
 * MOUNT and the export root in the namespace model: MNT replies (RFC 1813
 * Appendix I, RFC 1094 Appendix A) give the handle of a mounted path, which
 * is placed under the export root by its path components; a trace without
 * MOUNT traffic gets its root from the identity scan's hints.  Called from
 * apply.c: tbbt__ns_mounts_prepare() before the first record, tbbt__ns_op_mnt()
 * for each MNT.
 */
#include "ns/apply-int.h"

/* The i-th '/'-separated component of the pool string ref: *p, *n. */
static bool path_comp(const struct tbbt_ns *ns, uint32_t ref, uint32_t i, const char **p,
                      size_t *n)
{
    uint32_t len;
    const char *s = (const char *)tbbt__ns_pool_get(&ns->pool, ref, &len);
    uint32_t k = 0, a = 0;

    for (uint32_t j = 0; j <= len; j++) {
        if (j < len && s[j] != '/')
            continue;
        if (j > a || len == 0) {
            if (k == i && j > a) {
                *p = s + a;
                *n = j - a;
                return true;
            }
            k++;
        }
        a = j + 1;
    }
    return false;
}

static uint32_t path_ncomp(const struct tbbt_ns *ns, uint32_t ref)
{
    const char *p;
    size_t n;
    uint32_t k = 0;

    while (path_comp(ns, ref, k, &p, &n))
        k++;
    return k;
}

/*
 * A trace without MOUNT traffic (a capture of the NFS port only): the root is the
 * handle the identity scan's hints put at the top of the most handles (the parent a
 * LOOKUP or a ".." names, up to one that nothing names).  Ties go to the handle seen
 * first.
 */
static void infer_root(struct tbbt_ns *ns)
{
    uint32_t *count, best = 0, best_n = 0;

    if (ns->nh == 0)
        return;
    count = g_new0(uint32_t, ns->nh);
    for (uint32_t h = 0; h < ns->nh; h++) {
        uint32_t t = h, steps = 0;
        if (!ns->hdir[h])
            continue;
        while (ns->hdir[t] && ns->hdir[t] - 1 != t && steps++ < 4096)
            t = ns->hdir[t] - 1;
        if (steps < 4096 && t < ns->nh)
            count[t]++;
    }
    for (uint32_t h = 0; h < ns->nh; h++)
        if (count[h] > best_n) {
            best_n = count[h];
            best = h;
        }
    g_free(count);
    if (!best_n)
        return;
    ns->root = tbbt__ns_fh_resolve(ns, best);
    tbbt__ns_set_type(ns, ns->root, TBBT_NS_DIR, false);
    ns->st.root_inferred = 1;
}

/*
 * Before the first record: the export root's depth, the components every mounted path
 * shares; without MOUNT traffic, the root from the hints (infer_root()).
 */
void tbbt__ns_mounts_prepare(struct tbbt_ns *ns)
{
    uint32_t common = UINT32_MAX;
    const struct ns_mount *first;

    ns->mounts_ready = true;
    if (!ns->mounts || ns->mounts->len == 0) {
        if (!ns->root && !ns->by_id && ns->hdir)
            infer_root(ns);
        return;
    }
    first = &g_array_index(ns->mounts, struct ns_mount, 0);
    for (guint i = 0; i < ns->mounts->len; i++) {
        const struct ns_mount *m = &g_array_index(ns->mounts, struct ns_mount, i);
        uint32_t k = 0;
        const char *a, *b;
        size_t na, nb;
        while (k < common && path_comp(ns, first->path, k, &a, &na) &&
               path_comp(ns, m->path, k, &b, &nb) && na == nb && memcmp(a, b, na) == 0)
            k++;
        common = MIN(common, k);
    }
    ns->root_ncomp = common;
}

/* The export root: the object of a mount at the root's path, else a directory of its own. */
static uint32_t mount_root(struct tbbt_ns *ns)
{
    for (guint i = 0; ns->mounts && i < ns->mounts->len; i++) {
        const struct ns_mount *m = &g_array_index(ns->mounts, struct ns_mount, i);
        if (path_ncomp(ns, m->path) == ns->root_ncomp)
            return tbbt__ns_fh_resolve(ns, m->fh);
    }
    return tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
}

/*
 * The handles (+ 1, 0 unknown) of the directories on a mounted path, bottom up from the
 * mounted handle fh, as the identity scan's hints tell them: the ".." of a LOOKUP or
 * READDIRPLUS names a directory's parent, a LOOKUP names a handle in its directory
 * (that name must be the path's).  hs[k] is the directory named by component k.
 */
static void mount_hints(const struct tbbt_ns *ns, uint32_t path, uint32_t fh, uint32_t n,
                        uint32_t *hs)
{
    const char *p;
    size_t len;

    hs[n - 1] = fh + 1;
    for (uint32_t k = n - 1; k > ns->root_ncomp; k--) {
        uint32_t h = hs[k] - 1, name;
        if (h >= ns->nh || !ns->hdir[h])
            return;
        if (ns->hname[h]) {
            path_comp(ns, path, k, &p, &len);
            name = tbbt__ns_pool_find(&ns->pool, p, len);
            if (name != ns->hname[h])
                return;
        }
        hs[k - 1] = ns->hdir[h];
    }
}

/*
 * Places mounted object x at its path under the root: a client that mounted
 * export/home/u1 works in home/u1.  Directories on the way that the model does not know
 * yet are made (they existed when the mount succeeded).  Nothing changes when x has a
 * name already (LOOKUPs placed it) or the path holds another object (counted).
 */
static void place_mount(struct tbbt__ns_ctx *c, uint32_t fh, uint32_t x)
{
    struct tbbt_ns *ns = c->ns;
    const struct ns_mount *m = NULL;
    uint32_t d = ns->root, n;
    const char *p;
    size_t len;

    for (guint i = 0; ns->mounts && i < ns->mounts->len && !m; i++)
        if (g_array_index(ns->mounts, struct ns_mount, i).fh == fh)
            m = &g_array_index(ns->mounts, struct ns_mount, i);
    if (!m || x == ns->root || tbbt__ns_live_link(ns, x))
        return;
    n = path_ncomp(ns, m->path);
    if (n <= ns->root_ncomp) {
        ns->st.mount_conflicts++;       /* another handle for the root's path */
        return;
    }
    uint32_t *hs = g_new0(uint32_t, n);
    mount_hints(ns, m->path, fh, n, hs);
    for (uint32_t k = ns->root_ncomp; k < n; k++) {
        uint32_t name, child, l;
        path_comp(ns, m->path, k, &p, &len);
        name = tbbt__ns_pool_intern(&ns->pool, p, len);
        child = tbbt__ns_dent_child(ns, d, name);
        l = tbbt__ns_dent_find(ns, d, name);
        if (k + 1 == n) {
            if (child || tbbt__ns_would_loop(ns, d, x)) {
                ns->st.mount_conflicts += child != x;
                break;
            }
            tbbt__ns_link_add(ns, d, name, x, ns_sighting_time(c, d, l));
            ns->st.mounts_placed++;
            break;
        }
        if (!child) {
            /* the directory the hints name, if it has no place yet; else a new one */
            child = hs[k] ? tbbt__ns_fh_resolve(ns, hs[k] - 1) : 0;
            if (!child || child == ns->root || tbbt__ns_live_link(ns, child) ||
                tbbt__ns_would_loop(ns, d, child))
                child = tbbt__ns_obj_new(ns, TBBT_NS_DIR, 0);
            tbbt__ns_link_add(ns, d, name, child, ns_sighting_time(c, d, l));
        }
        tbbt__ns_set_type(ns, child, TBBT_NS_DIR, false);
        d = child;
    }
    g_free(hs);
}

void tbbt__ns_op_mnt(struct tbbt__ns_ctx *c)
{
    struct tbbt_trace_rec *r = c->rec;
    uint32_t x;

    if (!c->ok || !TBBT_HAS(r, TBBT_F_NEW_FH) || c->ns->by_id)
        return;
    if (!c->ns->root)
        c->ns->root = mount_root(c->ns);
    x = tbbt__ns_fh_resolve(c->ns, r->new_fh);
    tbbt__ns_set_type(c->ns, x, TBBT_NS_DIR, false);
    tbbt__ns_set_type(c->ns, c->ns->root, TBBT_NS_DIR, false);
    place_mount(c, r->new_fh, x);
    ns_set_id(r, TBBT_F_ID_OBJ, x);
}
