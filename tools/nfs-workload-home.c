/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload-home.c: the home-directory clients of the `home` and `mixed` mixes: a
 * user on a workstation with a shell, an editor and make, in their home directory
 * (and in their project groups' shared directories when the export's root is mounted).
 *
 * The client knows its tree the way a user does: it starts with a find-like walk of
 * its home, keeps that model up to date with what it does itself, and walks again now
 * and then (`find`).  Operations, each chosen by the client's sequence of intentions:
 *   login    read .bashrc and .profile, append to .bash_history, check the mbox
 *   ls       `ls -l`: stat of a directory, READDIRPLUS, READLINK of its symbolic links
 *   cat      read a file (hot files more often: Zipf over the tree in walk order)
 *   grep     read every file of a source or docs directory
 *   save     an editor session: swap file (written, fsynced, removed) and a safe save:
 *            the new text in a temporary file with the original's mode, closed
 *            (committed), renamed over the original
 *   build    make: list the directory, compile each .c whose .o is missing or older
 *            (read the source and a header, remove the old object, write the new
 *            one), link (read the objects, write the program); sometimes `make clean`
 *   scratch  mkdir a scratch directory with a few files, or remove one (unlink, rmdir)
 *   chmod    toggle the group/other read bits of a file
 *   chgrp    give a file to another of the user's groups (SETATTR gid, must succeed)
 *   symlink  make a symbolic link and readlink it, read an existing one, or remove one
 *   touch    utimes to the server's time (a source then needs rebuilding), or a new
 *            empty file
 *   find     the walk again
 *   project  in /proj/GROUP: list, read, edit group-writable files, add reports
 * Tolerated races: ENOENT on things another client of the same user (or group) removed
 * or renamed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "nfs-workload.h"

#define WALK_DEPTH 6
#define READ_CHUNK 65536

/* A set of paths relative to the home, in insertion order, with O(1) removal. */
struct pathset {
    GPtrArray *v;                 /* owned strings */
    GHashTable *idx;              /* path -> position + 1 */
};

struct wl_home {
    struct pathset files;         /* regular files, outside Maildir/ and .ssh/ */
    struct pathset dirs;          /* directories; "" is the home itself */
    struct pathset links;         /* symbolic links */
    struct pathset scratch;       /* scratch directories this client made */
    struct pathset reports;       /* project files this client made (absolute paths) */
    uint32_t seq;                 /* numbers the names this client makes */
};

/* ------------------------------------------------------------------ path sets */

static void ps_init(struct pathset *s)
{
    s->v = g_ptr_array_new_with_free_func(g_free);
    s->idx = g_hash_table_new(g_str_hash, g_str_equal);
}

static void ps_clear(struct pathset *s)
{
    g_hash_table_remove_all(s->idx);
    g_ptr_array_set_size(s->v, 0);
}

static void ps_add(struct pathset *s, const char *p)
{
    char *copy;

    if (g_hash_table_contains(s->idx, p))
        return;
    copy = g_strdup(p);
    g_ptr_array_add(s->v, copy);
    g_hash_table_insert(s->idx, copy, GUINT_TO_POINTER(s->v->len));
}

static void ps_remove(struct pathset *s, const char *p)
{
    guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(s->idx, p));
    char *last;

    if (pos == 0)
        return;
    g_hash_table_remove(s->idx, p);
    last = g_ptr_array_index(s->v, s->v->len - 1);
    if (pos != s->v->len)
        g_hash_table_insert(s->idx, last, GUINT_TO_POINTER(pos));
    g_ptr_array_remove_index_fast(s->v, pos - 1);
}

static const char *ps_get(const struct pathset *s, guint i)
{
    return g_ptr_array_index(s->v, i);
}

/* ------------------------------------------------------------------ helpers */

/* The path through the mount of REL (relative to the home; "" is the home). */
static char *hpath(struct wl_client *c, char *buf, const char *rel)
{
    if (!rel[0])
        return wl_path(c, buf, "%s", c->home[0] ? c->home : "/");
    return wl_path(c, buf, "%s/%s", c->home, rel);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);

    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');

    return s ? s + 1 : p;
}

static bool is_text(const char *p)
{
    static const char *const ext[] = { ".c", ".h", ".txt", ".md", ".tex", "Makefile",
                                       "README", ".bashrc", ".profile", ".vimrc" };

    for (size_t i = 0; i < G_N_ELEMENTS(ext); i++)
        if (has_suffix(p, ext[i]))
            return true;
    return false;
}

/* A file of the model, Zipf-chosen (hot files first in walk order); NULL if none. */
static const char *pick_file(struct wl_client *c, bool text)
{
    struct pathset *f = &c->hm->files;

    for (int tries = 0; tries < 20 && f->v->len > 0; tries++) {
        const char *p = ps_get(f, (guint)wl_rand_zipf(c->op, (int)f->v->len, 0.7));

        if (!text || is_text(p))
            return p;
    }
    return NULL;
}

/* New content like PATH's, of about SIZE bytes. */
static void content_like(struct wl_client *c, GString *out, const char *path, size_t size)
{
    if (has_suffix(path, ".c"))
        wl_text_csource(c->op, out, size, "edit");
    else if (has_suffix(path, ".h"))
        wl_text_header(c->op, out, size, "edit");
    else
        wl_text_prose(c->op, out, size);
}

static int64_t read_all(struct wl_client *c, const char *path, GString *out)
{
    return wl_read_file(c, path, 0, READ_CHUNK, out, NULL, WL_OK_RACE);
}

/* ------------------------------------------------------------------ the walk */

/* Mail, keys, and editors' leftovers (".NAME.swp", ".NAME.XXXXXX" of another session)
 * are not what a user opens, edits or builds. */
static bool skip_in_model(const char *rel)
{
    const char *b = base_name(rel);

    return g_str_has_prefix(rel, "Maildir") || g_str_has_prefix(rel, ".ssh") ||
           (b[0] == '.' && strchr(b + 1, '.'));
}

static void walk_entry(struct wl_home *hm, GQueue *todo, const char *dir,
                       const struct wl_dirent *e, int depth)
{
    char *rel = dir[0] ? g_strdup_printf("%s/%s", dir, e->name) : g_strdup(e->name);

    if (e->type == NF3DIR) {
        ps_add(&hm->dirs, rel);
        if (depth < WALK_DEPTH) {
            g_queue_push_tail(todo, rel);
            return;
        }
    } else if (e->type == NF3LNK) {
        ps_add(&hm->links, rel);
    } else if (e->type == NF3REG && !skip_in_model(rel)) {
        ps_add(&hm->files, rel);
    }
    g_free(rel);
}

/* `find ~`: lists every directory of the home (breadth first), rebuilding the model. */
static void walk(struct wl_client *c)
{
    struct wl_home *hm = c->hm;
    GQueue todo = G_QUEUE_INIT;
    char path[WL_PATH];
    char *dir;

    ps_clear(&hm->files);
    ps_clear(&hm->dirs);
    ps_clear(&hm->links);
    ps_add(&hm->dirs, "");
    g_queue_push_tail(&todo, g_strdup(""));
    while ((dir = g_queue_pop_head(&todo)) != NULL) {
        GPtrArray *ents = wl_listdir(c, hpath(c, path, dir), WL_OK_RACE);
        int depth = dir[0] ? 1 : 0;

        for (const char *s = dir; *s; s++)
            depth += *s == '/';
        for (guint i = 0; ents && i < ents->len; i++)
            walk_entry(hm, &todo, dir, g_ptr_array_index(ents, i), depth + 1);
        if (ents)
            g_ptr_array_unref(ents);
        g_free(dir);
    }
}

void wl_home_start(struct wl_client *c)
{
    struct wl_home *hm = g_new0(struct wl_home, 1);

    ps_init(&hm->files);
    ps_init(&hm->dirs);
    ps_init(&hm->links);
    ps_init(&hm->scratch);
    ps_init(&hm->reports);
    c->hm = hm;
    wl_begin_op(c, WL_OP_FIND);
    walk(c);
}

/* ------------------------------------------------------------------ shell */

static void op_login(struct wl_client *c)
{
    char p[WL_PATH];
    GString *g = g_string_new(NULL);
    struct nfs_stat_64 st;
    struct nfsfh *fh;

    wl_begin_op(c, WL_OP_LOGIN);
    read_all(c, hpath(c, p, ".bashrc"), NULL);
    read_all(c, hpath(c, p, ".profile"), NULL);
    wl_text_history(c->op, g, g_rand_int_range(c->op, 20, 400));
    if (wl_open(c, hpath(c, p, ".bash_history"), O_WRONLY, &fh, WL_OK_RACE) == 0) {
        wl_fstat(c, fh, p, &st);
        wl_pwrite(c, fh, p, st.nfs_size, g->len, g->str);
        wl_close(c, fh, p);
    }
    if (c->has_spool)
        wl_stat(c, wl_path(c, p, "%s/%s", c->spool, c->id.name), &st, 0);
    g_string_free(g, TRUE);
}

/*
 * `ls -l DIR`: stat of the directory, the listing (READDIRPLUS brings every entry's
 * attributes, as libnfs's own nfs-ls uses them), and READLINK of its symbolic links.
 */
static void ls_dir(struct wl_client *c, const char *path)
{
    char p[WL_PATH], buf[WL_PATH];
    struct nfs_stat_64 st;
    GPtrArray *ents;

    if (wl_stat(c, path, &st, WL_OK_RACE) < 0 || !(ents = wl_listdir(c, path, WL_OK_RACE)))
        return;
    for (guint i = 0; i < ents->len; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (e->type == NF3LNK)
            wl_readlink(c, wl_path(c, p, "%s/%s", path, e->name), buf, sizeof(buf), WL_OK_RACE);
    }
    g_ptr_array_unref(ents);
}

static void op_ls(struct wl_client *c)
{
    struct pathset *d = &c->hm->dirs;
    char p[WL_PATH];

    wl_begin_op(c, WL_OP_LS);
    ls_dir(c, hpath(c, p, ps_get(d, (guint)wl_rand_zipf(c->op, (int)d->v->len, 1.0))));
}

static void op_cat(struct wl_client *c)
{
    const char *rel;
    char p[WL_PATH];

    wl_begin_op(c, WL_OP_CAT);
    rel = pick_file(c, false);
    if (rel && read_all(c, hpath(c, p, rel), NULL) < 0)
        ps_remove(&c->hm->files, rel);
}

/* `grep -r WORD DIR`: reads every regular file of a directory of the model. */
static void op_grep(struct wl_client *c)
{
    struct pathset *d = &c->hm->dirs;
    char dir[WL_PATH], p[WL_PATH];
    GPtrArray *ents;

    wl_begin_op(c, WL_OP_GREP);
    hpath(c, dir, ps_get(d, (guint)g_rand_int_range(c->op, 0, (gint32)d->v->len)));
    ents = wl_listdir(c, dir, WL_OK_RACE);
    for (guint i = 0; ents && i < ents->len; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (e->type == NF3REG)
            read_all(c, wl_path(c, p, "%s/%s", dir, e->name), NULL);
    }
    if (ents)
        g_ptr_array_unref(ents);
}

/* ------------------------------------------------------------------ editor */

/* The editor's swap file .NAME.swp beside PATH: created, written, fsynced. */
static bool swap_open(struct wl_client *c, const char *path, char *swp, struct nfsfh **fh)
{
    const char *b = base_name(path);
    char block[4096];

    wl_path(c, swp, "%.*s.%s.swp", (int)(b - path), path, b);
    if (wl_create(c, swp, O_EXCL | O_WRONLY, 0600, fh, WL_OK_EXIST | WL_OK_RACE) < 0)
        return false;                   /* "swap file exists": another session edits it */
    memset(block, 0, sizeof(block));
    memcpy(block, "b0VIM 9.0", 9);
    wl_pwrite(c, *fh, swp, 0, sizeof(block), block);
    wl_fsync(c, *fh, swp);
    wl_pwrite(c, *fh, swp, sizeof(block), sizeof(block), block);
    return true;
}

/*
 * Edits PATH (absolute through the mount): read it, then a safe save of new text
 * through a temporary file renamed over it.  Returns false when PATH is gone.
 */
static bool edit_file(struct wl_client *c, const char *path)
{
    const char *b = base_name(path);
    char swp[WL_PATH], tmp[WL_PATH];
    GString *old = g_string_new(NULL), *text = g_string_new(NULL);
    struct nfs_stat_64 st;
    struct nfsfh *sfh = NULL;
    bool ok = false;

    if (wl_read_file(c, path, 0, READ_CHUNK, old, &st, WL_OK_RACE) < 0)
        goto out;
    if (g_rand_double(c->op) < 0.7 && !swap_open(c, path, swp, &sfh))
        goto out;
    content_like(c, text, path, old->len * (0.9 + 0.3 * g_rand_double(c->op)) + 40);
    wl_path(c, tmp, "%.*s.%s.%06X", (int)(b - path), path, b, g_rand_int(c->op) & 0xffffff);
    if (wl_write_file(c, tmp, O_EXCL, (int)(st.nfs_mode & 0777), text->str, text->len,
                      READ_CHUNK, WL_OK_RACE) == 0)
        ok = wl_rename(c, tmp, path, WL_OK_RACE) == 0;
    if (sfh) {
        wl_close(c, sfh, swp);
        wl_unlink(c, swp, WL_OK_RACE);
    }
out:
    g_string_free(old, TRUE);
    g_string_free(text, TRUE);
    return ok;
}

static void op_save(struct wl_client *c)
{
    const char *rel;
    char p[WL_PATH];

    wl_begin_op(c, WL_OP_SAVE);
    rel = pick_file(c, true);
    if (rel && !edit_file(c, hpath(c, p, rel)))
        ps_remove(&c->hm->files, rel);
}

/* ------------------------------------------------------------------ make */

/* Source project directories of the model (src/NAME). */
static const char *pick_project_dir(struct wl_client *c)
{
    struct pathset *d = &c->hm->dirs;
    GPtrArray *cand = g_ptr_array_new();
    const char *p = NULL;

    for (guint i = 0; i < d->v->len; i++) {
        const char *s = ps_get(d, i);

        if (g_str_has_prefix(s, "src/") && !strchr(s + 4, '/'))
            g_ptr_array_add(cand, (gpointer)s);
    }
    if (cand->len)
        p = g_ptr_array_index(cand, g_rand_int_range(c->op, 0, (gint32)cand->len));
    g_ptr_array_free(cand, TRUE);
    return p;
}

static const struct wl_dirent *find_entry(GPtrArray *ents, const char *name)
{
    for (guint i = 0; i < ents->len; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

/*
 * Compiles SRC (an entry of DIR's listing ENTS) into its .o when that is missing or
 * older: make reads the directory and compares the times it got (here READDIRPLUS's).
 */
static bool compile(struct wl_client *c, const char *dir, GPtrArray *ents,
                    const struct wl_dirent *src, const char *hdr)
{
    char cp[WL_PATH], op[WL_PATH], rel[WL_PATH];
    const struct wl_dirent *o;
    GString *obj = g_string_new(NULL);
    int64_t n;
    bool built = false;

    wl_path(c, cp, "%s/%s", dir, src->name);
    wl_path(c, rel, "%.*s.o", (int)strlen(src->name) - 2, src->name);
    wl_path(c, op, "%s/%s", dir, rel);
    if ((o = find_entry(ents, rel)) != NULL && o->mtime >= src->mtime)
        goto out;
    if ((n = read_all(c, cp, NULL)) < 0)
        goto out;
    if (hdr)
        read_all(c, wl_path(c, rel, "%s/%s", dir, hdr), NULL);
    wl_unlink(c, op, WL_OK_RACE);
    wl_text_binary(c->op, obj, (size_t)n + 900 + g_rand_int_range(c->op, 0, 8000), "\177ELF");
    built = wl_write_file(c, op, O_TRUNC, 0644, obj->str, obj->len, READ_CHUNK, WL_OK_RACE) == 0;
out:
    g_string_free(obj, TRUE);
    return built;
}

/* Links the objects of DIR into the program NAME. */
static void link_program(struct wl_client *c, const char *dir, GPtrArray *ents, const char *name)
{
    char p[WL_PATH];
    GString *prog = g_string_new(NULL);
    int64_t total = 16000, n;

    for (guint i = 0; i < ents->len; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (e->type == NF3REG && has_suffix(e->name, ".o") &&
            (n = read_all(c, wl_path(c, p, "%s/%s", dir, e->name), NULL)) > 0)
            total += n;
    }
    wl_text_binary(c->op, prog, MIN((size_t)total, (size_t)2 << 20), "\177ELF");
    wl_write_file(c, wl_path(c, p, "%s/%s", dir, name), O_TRUNC, 0755, prog->str, prog->len,
                  READ_CHUNK, WL_OK_RACE);
    g_string_free(prog, TRUE);
}

static void make_clean(struct wl_client *c, const char *dir, GPtrArray *ents, const char *name)
{
    char p[WL_PATH];

    for (guint i = 0; i < ents->len; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (e->type == NF3REG && has_suffix(e->name, ".o"))
            wl_unlink(c, wl_path(c, p, "%s/%s", dir, e->name), WL_OK_RACE);
    }
    wl_unlink(c, wl_path(c, p, "%s/%s", dir, name), WL_OK_RACE);
}

static void op_build(struct wl_client *c)
{
    const char *rel, *hdr = NULL;
    char dir[WL_PATH];
    GPtrArray *ents;
    int built = 0;

    wl_begin_op(c, WL_OP_BUILD);
    if (!(rel = pick_project_dir(c)) || !(ents = wl_listdir(c, hpath(c, dir, rel), WL_OK_RACE)))
        return;
    for (guint i = 0; i < ents->len && !hdr; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (has_suffix(e->name, ".h"))
            hdr = e->name;
    }
    if (g_rand_double(c->op) < 0.1) {
        make_clean(c, dir, ents, base_name(rel));
    } else {
        for (guint i = 0; i < ents->len; i++) {
            const struct wl_dirent *e = g_ptr_array_index(ents, i);

            if (e->type == NF3REG && has_suffix(e->name, ".c"))
                built += compile(c, dir, ents, e, hdr);
        }
        if (built)
            link_program(c, dir, ents, base_name(rel));
    }
    g_ptr_array_unref(ents);
}

/* ------------------------------------------------------------------ scratch, attributes */

/* Removes scratch directory REL (which may point into the model's own storage). */
static void scratch_remove(struct wl_client *c, const char *rel_in)
{
    char rel[WL_PATH], dir[WL_PATH], p[WL_PATH];
    GPtrArray *ents = wl_listdir(c, hpath(c, dir, wl_path(c, rel, "%s", rel_in)), WL_OK_RACE);

    for (guint i = 0; ents && i < ents->len; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        wl_unlink(c, wl_path(c, p, "%s/%s", dir, e->name), WL_OK_RACE);
    }
    if (ents)
        g_ptr_array_unref(ents);
    /* Another session of the user may have just saved a file in it: give up then. */
    wl_rmdir(c, dir, WL_OK_RACE | WL_OK_NOTEMPTY);
    ps_remove(&c->hm->scratch, rel);
    ps_remove(&c->hm->dirs, rel);
}

static void op_scratch(struct wl_client *c)
{
    struct wl_home *hm = c->hm;
    char rel[WL_PATH], dir[WL_PATH], p[WL_PATH];
    GString *g = g_string_new(NULL);
    int n = g_rand_int_range(c->op, 1, 6);

    wl_begin_op(c, WL_OP_SCRATCH);
    if (hm->scratch.v->len > 0 && g_rand_double(c->op) < 0.5) {
        scratch_remove(c, ps_get(&hm->scratch, 0));
        goto out;
    }
    wl_path(c, rel, "tmp/%s.%u.%u", c->machine, c->pid, ++hm->seq);
    if (wl_mkdir(c, hpath(c, dir, rel), 0755, WL_OK_RACE) < 0)
        goto out;
    ps_add(&hm->scratch, rel);
    ps_add(&hm->dirs, rel);
    for (int i = 0; i < n; i++) {
        g_string_truncate(g, 0);
        wl_text_prose(c->op, g, wl_rand_lognormal(c->op, 3000, 1.2, 50, 200000));
        wl_write_file(c, wl_path(c, p, "%s/out%d.txt", dir, i), O_EXCL, 0644, g->str, g->len,
                      READ_CHUNK, WL_OK_RACE);
    }
out:
    g_string_free(g, TRUE);
}

static void op_chmod(struct wl_client *c)
{
    const char *rel;
    char p[WL_PATH];
    struct nfs_stat_64 st;

    wl_begin_op(c, WL_OP_CHMOD);
    if (!(rel = pick_file(c, false)) || wl_lstat(c, hpath(c, p, rel), &st, WL_OK_RACE) < 0)
        return;
    if (st.nfs_uid == c->id.uid)
        wl_chmod(c, p, (int)((st.nfs_mode & 07777) ^ 0044), WL_OK_RACE);
}

/* chgrp to another of the user's groups: allowed to the owner, so it must succeed. */
static void op_chgrp(struct wl_client *c)
{
    const char *rel;
    char p[WL_PATH];
    struct nfs_stat_64 st;
    uint32_t gid;

    wl_begin_op(c, WL_OP_CHGRP);
    if (!(rel = pick_file(c, false)) || wl_lstat(c, hpath(c, p, rel), &st, WL_OK_RACE) < 0)
        return;
    gid = c->id.gids[g_rand_int_range(c->op, 0, (gint32)c->id.ngids)];
    if (st.nfs_uid != c->id.uid)
        return;
    if (gid == st.nfs_gid)
        gid = c->id.gid;
    wl_chown(c, p, -1, (int)gid, WL_OK_RACE);
}

static void op_symlink(struct wl_client *c)
{
    struct wl_home *hm = c->hm;
    char rel[WL_PATH], p[WL_PATH], buf[WL_PATH];
    const char *target;
    double x = g_rand_double(c->op);

    wl_begin_op(c, WL_OP_SYMLINK);
    if (x < 0.4 && hm->links.v->len > 0) {
        const char *l = ps_get(&hm->links, (guint)g_rand_int_range(c->op, 0, (gint32)hm->links.v->len));

        if (wl_readlink(c, hpath(c, p, l), buf, sizeof(buf), WL_OK_RACE) < 0)
            ps_remove(&hm->links, l);
        return;
    }
    if (x < 0.6 && hm->links.v->len > 3) {
        /* Remove a link this client made (ln -sf and friends), oldest first. */
        for (guint i = 0; i < hm->links.v->len; i++) {
            const char *l = ps_get(&hm->links, i);

            if (g_str_has_prefix(l, "link-")) {
                wl_unlink(c, hpath(c, p, l), WL_OK_RACE);
                ps_remove(&hm->links, l);
                return;
            }
        }
    }
    if (!(target = pick_file(c, false)))
        return;
    wl_path(c, rel, "link-%s-%u", c->machine, ++hm->seq);
    if (wl_symlink(c, target, hpath(c, p, rel), WL_OK_EXIST) == 0) {
        ps_add(&hm->links, rel);
        wl_readlink(c, p, buf, sizeof(buf), WL_OK_RACE);
    }
}

static void op_touch(struct wl_client *c)
{
    const char *rel;
    char p[WL_PATH], name[WL_PATH];
    struct nfsfh *fh;

    wl_begin_op(c, WL_OP_TOUCH);
    if (g_rand_double(c->op) < 0.75) {
        if ((rel = pick_file(c, false)) && wl_utimes(c, hpath(c, p, rel), NULL, WL_OK_RACE) < 0)
            ps_remove(&c->hm->files, rel);
        return;
    }
    wl_path(c, name, "notes-%s-%u.txt", c->machine, ++c->hm->seq);
    if (wl_create(c, hpath(c, p, name), O_WRONLY, 0644, &fh, WL_OK_RACE) == 0) {
        wl_close(c, fh, p);
        ps_add(&c->hm->files, name);
    }
}

static void op_find(struct wl_client *c)
{
    wl_begin_op(c, WL_OP_FIND);
    walk(c);
}

/* ------------------------------------------------------------------ project directories */

static void project_new_report(struct wl_client *c, const char *dir)
{
    struct wl_home *hm = c->hm;
    char p[WL_PATH];
    GString *g = g_string_new(NULL);

    if (hm->reports.v->len >= 4) {
        /* Tidy up: the oldest report this client wrote goes. */
        wl_unlink(c, ps_get(&hm->reports, 0), WL_OK_RACE);
        ps_remove(&hm->reports, ps_get(&hm->reports, 0));
    }
    wl_text_prose(c->op, g, wl_rand_lognormal(c->op, 8000, 1.0, 200, 500000));
    wl_path(c, p, "%s/%s-%s-%u.txt", dir, c->id.name, c->machine, ++hm->seq);
    if (wl_write_file(c, p, O_EXCL, 0664, g->str, g->len, READ_CHUNK, WL_OK_RACE) == 0)
        ps_add(&hm->reports, p);
    g_string_free(g, TRUE);
}

/* Whether the user may read E by its mode bits (owner, then group, then others). */
static bool may_read(const struct wl_client *c, const struct wl_dirent *e)
{
    if (e->uid == c->id.uid)
        return e->mode & 0400;
    if (wl_ident_in_group(&c->id, e->gid))
        return e->mode & 0040;
    return e->mode & 0004;
}

/* The files of a project directory a member would open: not hidden (other members'
 * swap and temporary files), readable. */
static GPtrArray *project_files(struct wl_client *c, GPtrArray *ents)
{
    GPtrArray *files = g_ptr_array_new();

    for (guint i = 0; i < ents->len; i++) {
        struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (e->type == NF3REG && e->name[0] != '.' && may_read(c, e))
            g_ptr_array_add(files, e);
    }
    return files;
}

static void op_project(struct wl_client *c)
{
    static const char *const subs[] = { "data", "reports", "src" };
    char dir[WL_PATH], p[WL_PATH];
    GPtrArray *groups = g_ptr_array_new(), *ents, *files = NULL;
    const struct wl_dirent *e;
    double x;

    wl_begin_op(c, WL_OP_PROJECT);
    for (int i = 0; i < wl_site_nprojects(); i++)
        if (wl_ident_in_group(&c->id, wl_site_project_gid(i)))
            g_ptr_array_add(groups, (gpointer)wl_site_project_name(i));
    wl_path(c, dir, "/proj/%s/%s",
            (const char *)g_ptr_array_index(groups, g_rand_int_range(c->op, 0, (gint32)groups->len)),
            subs[g_rand_int_range(c->op, 0, 3)]);
    g_ptr_array_free(groups, TRUE);
    x = g_rand_double(c->op);
    ents = wl_listdir(c, dir, 0);
    files = project_files(c, ents);
    if (files->len == 0 || x < 0.15) {
        project_new_report(c, dir);
    } else {
        e = g_ptr_array_index(files, (guint)wl_rand_zipf(c->op, (int)files->len, 0.8));
        wl_path(c, p, "%s/%s", dir, e->name);
        /* An editor opens read-only what the user may not write. */
        if (x < 0.4 && (e->uid == c->id.uid || (e->mode & 020)))
            edit_file(c, p);
        else
            read_all(c, p, NULL);
    }
    g_ptr_array_free(files, TRUE);
    g_ptr_array_unref(ents);
}

/* ------------------------------------------------------------------ the step */

enum { H_LOGIN, H_LS, H_CAT, H_GREP, H_SAVE, H_BUILD, H_SCRATCH, H_CHMOD, H_CHGRP, H_SYMLINK,
       H_TOUCH, H_FIND, H_PROJECT, H_N };

static bool has_projects(const struct wl_client *c)
{
    for (int i = 0; i < wl_site_nprojects(); i++)
        if (wl_ident_in_group(&c->id, wl_site_project_gid(i)))
            return true;
    return false;
}

void wl_home_step(struct wl_client *c)
{
    double w[H_N] = { [H_LOGIN] = 3, [H_LS] = 16, [H_CAT] = 16, [H_GREP] = 3, [H_SAVE] = 9,
                      [H_BUILD] = 8, [H_SCRATCH] = 6, [H_CHMOD] = 3, [H_CHGRP] = 3,
                      [H_SYMLINK] = 4, [H_TOUCH] = 6, [H_FIND] = 2, [H_PROJECT] = 10 };

    if (c->subdir || !has_projects(c))
        w[H_PROJECT] = 0;
    switch (wl_rand_weighted(c->intent, w, H_N)) {
    case H_LOGIN: op_login(c); break;
    case H_LS: op_ls(c); break;
    case H_CAT: op_cat(c); break;
    case H_GREP: op_grep(c); break;
    case H_SAVE: op_save(c); break;
    case H_BUILD: op_build(c); break;
    case H_SCRATCH: op_scratch(c); break;
    case H_CHMOD: op_chmod(c); break;
    case H_CHGRP: op_chgrp(c); break;
    case H_SYMLINK: op_symlink(c); break;
    case H_TOUCH: op_touch(c); break;
    case H_FIND: op_find(c); break;
    default: op_project(c); break;
    }
}
