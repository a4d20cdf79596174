/* SPDX-License-Identifier: MIT */
/*
 * The identity scan (ns.h, step 1; the TBBT paper's section 4 first pass):
 * before any record is applied, every record tells which (directory, name)
 * first named each handle, its type and its (fsid, fileid), and which paths
 * MOUNT gave; apply.c's placing of handles the model meets for the first
 * time, and apply-mount.c's export root, read what it learnt.  It changes
 * no object or link of the model.
 */
#include "ns/apply-int.h"

#include "proto/proto.h"

/*
 * The catalogue's NEWOBJ flag: the reply's obj_attr/new_fh describe the named
 * object, not fh (LOOKUP and the creations).
 */
static bool names_new_object(const struct tbbt_trace_rec *rec)
{
    const struct tbbt_proc_desc *d = tbbt_proc_desc(rec->prog, rec->proc);

    return d && (d->ns & TBBT_PROTO_NS_NEWOBJ);
}

/* The first (directory handle, name) that named handle ref, and its type. */
static void scan_hint(struct tbbt_ns *ns, uint32_t ref, uint32_t dir, const struct tbbt_str *name,
                      const struct tbbt_fattr *a)
{
    tbbt__ns_handle_reserve(ns, ref);
    tbbt__ns_handle_reserve(ns, dir);
    if (a && !ns->htype[ref])
        ns->htype[ref] = (uint8_t)tbbt__ns_ftype(a->type);
    if (ref == dir)
        return;
    if (name->len == 2 && name->p[0] == '.' && name->p[1] == '.') {
        /* "..": ref is dir's parent; no name (unless one came already) */
        if (!ns->hdir[dir])
            ns->hdir[dir] = ref + 1;
        return;
    }
    if ((ns->hdir[ref] && ns->hname[ref]) || !tbbt_ns_name_ok(name->p, name->len))
        return;
    ns->hdir[ref] = dir + 1;
    ns->hname[ref] = tbbt__ns_pool_intern(&ns->pool, name->p, name->len);
}

static void scan_pair(struct tbbt_ns *ns, uint32_t ref, const struct tbbt_fattr *a)
{
    const struct ns_key *e;

    tbbt__ns_handle_reserve(ns, ref);
    if (!ns->hkey[ref]) {
        ns->hkey[ref] = tbbt__ns_key_intern(ns, a->fsid, a->fileid);
        return;
    }
    e = ns_key(ns, ns->hkey[ref]);
    if (e->fsid != a->fsid || e->fileid != a->fileid)
        ns->st.key_conflicts++;
}

/*
 * Normalizes a MOUNT path into out: its components joined by '/', without empty and "."
 * ones.  False for a path with ".." or a component that cannot be a name.
 */
static bool mount_path(const struct tbbt_str *p, GString *out)
{
    g_string_truncate(out, 0);
    for (uint32_t i = 0; i < p->len;) {
        uint32_t j = i;
        while (j < p->len && p->p[j] != '/')
            j++;
        size_t n = j - i;
        if (n && !(n == 1 && p->p[i] == '.')) {
            if (!tbbt_ns_name_ok(p->p + i, n))
                return false;
            if (out->len)
                g_string_append_c(out, '/');
            g_string_append_len(out, p->p + i, (gssize)n);
        }
        i = j + 1;
    }
    return true;
}

/* A successful MNT: remembers (path, handle) once. */
static void scan_mount(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec)
{
    GString *path;
    struct ns_mount m;

    if (!(rec->flags & TBBT_RF_STATUS) || rec->status != 0 || !TBBT_HAS(rec, TBBT_F_NEW_FH) ||
        !TBBT_HAS(rec, TBBT_F_DIRPATH))
        return;
    path = g_string_new(NULL);
    if (!mount_path(&rec->dirpath, path) || path->len > 0xffff) {
        ns->st.hostile_names++;
        g_string_free(path, TRUE);
        return;
    }
    m.fh = rec->new_fh;
    m.path = tbbt__ns_pool_intern(&ns->pool, path->str, path->len);
    g_string_free(path, TRUE);
    if (!ns->mounts)
        ns->mounts = g_array_new(FALSE, FALSE, sizeof(struct ns_mount));
    for (guint i = 0; i < ns->mounts->len; i++) {
        const struct ns_mount *k = &g_array_index(ns->mounts, struct ns_mount, i);
        if (k->fh == m.fh && k->path == m.path)
            return;
    }
    g_array_append_val(ns->mounts, m);
    ns->st.mounts++;
}

static void scan_lowered(void *arg, struct tbbt_ns *ns, struct tbbt_trace_rec *low)
{
    (void)arg;
    tbbt_ns_ident_scan(ns, low);
}

void tbbt_ns_ident_scan(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec)
{
    int op = tbbt__ns_op(rec);
    bool newobj;

    if (rec->prog == TBBT_PROG_NFS4) {
        tbbt_ns_v4_lower(ns, rec, scan_lowered, NULL);
        return;
    }
    if (op == NS_OP_NONE)
        return;
    newobj = names_new_object(rec);
    if (op == NS_OP_MNT)
        scan_mount(ns, rec);
    if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR)) {
        if (newobj && TBBT_HAS(rec, TBBT_F_NEW_FH))
            scan_pair(ns, rec->new_fh, &rec->obj_attr);
        else if (!newobj && TBBT_HAS(rec, TBBT_F_FH))
            scan_pair(ns, rec->fh, &rec->obj_attr);
    }
    if (newobj && TBBT_HAS(rec, TBBT_F_NEW_FH) && TBBT_HAS(rec, TBBT_F_FH) &&
        TBBT_HAS(rec, TBBT_F_NAME))
        scan_hint(ns, rec->new_fh, rec->fh, &rec->name,
                  TBBT_HAS(rec, TBBT_F_OBJ_ATTR) ? &rec->obj_attr : NULL);
    if (TBBT_HAS(rec, TBBT_F_FH) && TBBT_HAS(rec, TBBT_F_DIR_ATTR))
        scan_pair(ns, rec->fh, &rec->dir_attr);
    if (TBBT_HAS(rec, TBBT_F_FH2) && TBBT_HAS(rec, TBBT_F_DIR2_ATTR))
        scan_pair(ns, rec->fh2, &rec->dir2_attr);
    if (!TBBT_HAS(rec, TBBT_F_ENTRIES))
        return;
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        const struct tbbt_entry *e = &rec->entries[i];
        if ((e->flags & TBBT_ENT_FH) && (e->flags & TBBT_ENT_ATTR))
            scan_pair(ns, e->fh, &e->attr);
        if ((e->flags & TBBT_ENT_FH) && TBBT_HAS(rec, TBBT_F_FH))
            scan_hint(ns, e->fh, rec->fh, &e->name, e->flags & TBBT_ENT_ATTR ? &e->attr : NULL);
        else if (TBBT_HAS(rec, TBBT_F_FH) && TBBT_HAS(rec, TBBT_F_DIR_ATTR) &&
                 ns_is_dots(&e->name, 2)) {
            /* a READDIR's "..": the parent by fileid only (resolve_placed() finds it) */
            tbbt__ns_handle_reserve(ns, rec->fh);
            if (!ns->hpkey[rec->fh])
                ns->hpkey[rec->fh] = tbbt__ns_key_intern(ns, rec->dir_attr.fsid, e->fileid);
        }
    }
}
