/* SPDX-License-Identifier: MIT */
/*
 * NFSv4 export paths in the namespace model.  An NFSv4 client reaches an export
 * through the server's pseudo file system ("/export/v4mix"), an NFSv3 client MOUNTs
 * the export's real path ("/srv/nfs/export/v3mix"); apply-v4.c lowers the pseudo walk
 * to a MOUNT of the pseudo path.  tbbt-convert --v4-export PSEUDO=PATH tells the real
 * path of a pseudo path, so that both kinds of clients share one tree in the map
 * (tbbt__ns_v4_rewrite()); and every pseudo path a lowered MOUNT reached is kept with
 * the object it placed, for the map's "# v4-export" header lines (map-write.c), which
 * let the player send the traced pseudo walk to the image.
 */
#include "ns/ns-int.h"
#include "util/util.h"

#include <string.h>

/* An absolute path p[0..len): "/" or "/" NAME ("/" NAME)..., names by tbbt_ns_name_ok(). */
static bool abs_path_ok(const char *p, size_t len)
{
    if (len == 0 || len > TBBT_PATH_MAX || p[0] != '/')
        return false;
    if (len == 1)
        return true;
    for (size_t i = 1; i <= len;) {
        const char *e = memchr(p + i, '/', len - i);
        size_t n = e ? (size_t)(e - (p + i)) : len - i;
        if (!tbbt_ns_name_ok(p + i, n))
            return false;
        i += n + 1;
    }
    return true;
}

int tbbt_ns_v4_export_check(const char *spec, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    size_t n = strlen(spec);

    const char *bad = NULL;

    if (!eq || strchr(eq + 1, '='))
        tbbt_errbuf(err, errlen, "expected PSEUDO=PATH with exactly one '='");
    else if (!abs_path_ok(spec, (size_t)(eq - spec)))
        bad = "PSEUDO";
    else if (!abs_path_ok(eq + 1, n - (size_t)(eq + 1 - spec)))
        bad = "PATH";
    else
        return 0;
    if (bad)
        tbbt_errbuf(err, errlen, "%s must be an absolute path of plain names (no empty, '.' "
                    "or '..' component, no trailing '/')", bad);
    return -1;
}

static void free_rewrite(gpointer p)
{
    struct ns_v4_rewrite *r = p;

    g_free(r->pseudo);
    g_free(r->path);
    g_free(r);
}

int tbbt_ns_add_v4_export(struct tbbt_ns *ns, const char *spec, char *err, size_t errlen)
{
    struct ns_v4_rewrite *r;
    const char *eq;

    if (tbbt_ns_v4_export_check(spec, err, errlen) < 0)
        return -1;
    eq = strchr(spec, '=');
    r = g_new(struct ns_v4_rewrite, 1);
    r->pseudo = g_strndup(spec, (gsize)(eq - spec));
    r->path = g_strdup(eq + 1);
    if (!ns->v4_rewrites)
        ns->v4_rewrites = g_ptr_array_new_with_free_func(free_rewrite);
    g_ptr_array_add(ns->v4_rewrites, r);
    return 0;
}

/* The length of pseudo's match at the start of p[0..len) (its components), 0 if none. */
static size_t match_len(const char *pseudo, const char *p, size_t len)
{
    size_t n = strlen(pseudo);

    if (n == 1)                 /* "/": every path */
        return 1;
    if (n > len || memcmp(pseudo, p, n) != 0 || (n < len && p[n] != '/'))
        return 0;
    return n;
}

void tbbt__ns_v4_rewrite(const struct tbbt_ns *ns, const char *p, size_t len, GString *out)
{
    const struct ns_v4_rewrite *best = NULL;
    size_t best_n = 0;

    for (guint i = 0; ns->v4_rewrites && i < ns->v4_rewrites->len; i++) {
        const struct ns_v4_rewrite *r = g_ptr_array_index(ns->v4_rewrites, i);
        size_t n = match_len(r->pseudo, p, len);
        if (n > best_n) {
            best = r;
            best_n = n;
        }
    }
    g_string_truncate(out, 0);
    if (!best) {
        g_string_append_len(out, p, (gssize)len);
        return;
    }
    if (best_n == 1)            /* "/" matched: the whole path follows PATH */
        best_n = 0;
    g_string_append(out, best->path);
    g_string_append_len(out, p + best_n, (gssize)(len - best_n));
}

void tbbt__ns_v4_export_note(struct tbbt_ns *ns, uint32_t pseudo, uint32_t obj)
{
    struct ns_v4_export e = { .pseudo = pseudo, .obj = obj };

    if (!ns->v4_exports)
        ns->v4_exports = g_array_new(FALSE, FALSE, sizeof(struct ns_v4_export));
    for (guint i = 0; i < ns->v4_exports->len; i++)
        if (g_array_index(ns->v4_exports, struct ns_v4_export, i).pseudo == pseudo)
            return;
    g_array_append_val(ns->v4_exports, e);
}
