/* SPDX-License-Identifier: MIT */
/*
 * Building the initial image (see image.h): the planning, shared by every way of
 * making the objects.  Two phases per clone:
 *
 *  1. namespace: the map is read once, in its order (every directory before
 *     the names in it); each entry with create time 0 becomes a directory, an
 *     empty file, a hard link to the file its ID made first, a symbolic link
 *     or a FIFO.  Files are remembered (path, size) for phase 2.
 *  2. data: files are written with non-zero bytes to their size at trace
 *     start.  Without aging each file in one session, in map order; with
 *     aging (scope > 0, appends > 1) the files, shuffled by the seed so that
 *     directories mix, are taken in sets whose sizes add up to the scope, and
 *     within a set written in appends of size/appends bytes, each in its own
 *     session, the files of the set taking turns in a seeded order.
 *
 * Synthetic objects (paper 3.2; image-fill.c) are planned between the phases, fillers
 * and spacers deleted at the end, and the map root's mode and owner given to each clone
 * directory.  Every random choice comes from the seed, in an order that does not
 * depend on the backend, each clone's from a stream of its own (clone_seed()), so that
 * under MPI (image-team.c; rank r builds clones r, r + R, ...) a clone is the same
 * whichever rank builds it.  The operations themselves go through a backend
 * (image-int.h): image-local.c (system calls beneath a local directory, nothing
 * followed through a symlink) or image-nfs.c (NFSv3 calls).  The manifest (written
 * as the build goes) lists what was made, for the player (obj lines: where each
 * TBBT-ID lives) and for --force; its line format is ns/manifest.h's.
 */
#include "aging/image.h"
#include "aging/image-int.h"
#include "aging/plan-int.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ns/manifest.h"
#include "ns/ns.h"
#include "mpi/tbbt-mpi.h"
#include "util/outfile.h"
#include "util/util.h"

#define MARKER TBBT__IMAGE_MARKER
#define fail tbbt__image_fail

void tbbt_image_opts_init(struct tbbt_image_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->clones = 1;
    o->seed = 1;
    o->appends = 1;
}

int tbbt__image_fail(struct build *b, int rc, const char *fmt, ...)
{
    va_list ap;

    if (!b->errbuf[0]) {
        va_start(ap, fmt);
        vsnprintf(b->errbuf, b->errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ---- paths ------------------------------------------------------------------------ */

char *tbbt__image_shown(const char *p)
{
    GString *s = g_string_new(NULL);

    tbbt_ns_escape(s, p, strlen(p));
    return g_string_free(s, FALSE);
}

enum tbbt__image_root_name tbbt__image_root_name(const char *name)
{
    if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "lost+found"))
        return TBBT__IMAGE_ROOT_IGNORED;
    return strcmp(name, MARKER) ? TBBT__IMAGE_ROOT_OTHER : TBBT__IMAGE_ROOT_MARKER;
}

#define shown tbbt__image_shown

/* The directory part of path ("." for a name in the clone directory), given: g_free(). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? g_strndup(path, (gsize)(slash - path)) : g_strdup(".");
}

/* The backend's step that failed, as the messages say it. */
static int stage(const struct build *b)
{
    return b->be->stage;
}

/* A path made, relative to the root (for --force), with its kind. */
void tbbt__image_made(struct build *b, char kind, const char *path)
{
    char k[2] = { kind, 0 };
    char *full = strcmp(b->clone_dir, ".") == 0 ? g_strdup(path)
                                                 : g_strconcat(b->clone_dir, "/", path, NULL);

    tbbt_manifest_write_path(&b->man, "made", k, full);
    g_free(full);
}

/* ---- phase 1: the namespace ------------------------------------------------------- */

static void note_size(struct build *b, uint64_t size)
{
    uint64_t i = b->known++;

    if (i < RESERVOIR)
        b->reservoir[i] = size;
    else if ((i = (uint64_t)g_rand_double(b->rand) * (double)(i + 1)) < RESERVOIR)
        b->reservoir[i] = size;
}

/* A file (or hard link) whose creation --spread defers: the fields of its map entry. */
struct pending {
    uint32_t path;                  /* offset in pend_paths */
    uint64_t id, size;
    uint32_t links, mode, uid, gid, line;
    int size_state;
    bool attrs_known;
};

static int entry_fail(struct build *b, int rc, uint64_t line, const char *what, const char *path)
{
    char *p = shown(path);

    rc = fail(b, rc, "map line %" PRIu64 ": %s '%s': %s", line, what, p, strerror(-rc));
    g_free(p);
    return rc;
}

/* The manifest's obj line: where the ID lives (the same in every clone). */
static void obj_line(struct build *b, uint64_t id, const char *path)
{
    char s[24];

    if (b->clone != 0)
        return;
    snprintf(s, sizeof(s), "%" PRIu64, id);
    tbbt_manifest_write_path(&b->man, "obj", s, path);
}

/*
 * Files made right after each file and deleted at the end (--spacers, the
 * paper's unimplemented inode-distance control): empty ones take the next
 * inode numbers and directory slots; with --spacer-size they also take the
 * blocks after the file's (written and allocated at once), so the next
 * sibling's data lands further from its directory and its inode.
 */
static int make_spacers(struct build *b, const char *dir)
{
    for (uint32_t i = 0; i < b->o->spacers; i++) {
        char leaf[40];
        char *path;
        int rc;
        snprintf(leaf, sizeof(leaf), "tbbt-spacer-%" PRIu64, ++b->syn_seq);
        path = strcmp(dir, ".") ? g_strconcat(dir, "/", leaf, NULL) : g_strdup(leaf);
        rc = b->ops->create(b->be, path, NULL, b->o->spacer_size,
                            b->o->spacer_size ? TBBT__IMAGE_DATA_SYNC : 0);
        if (rc < 0) {
            rc = fail(b, rc, "cannot %s a spacer in '%s': %s",
                      stage(b) == TBBT__IMAGE_AT_WRITE ? "write" : "create", dir,
                      strerror(-rc));
            g_free(path);
            return rc;
        }
        g_string_append_len(b->spacers, path, (gssize)strlen(path) + 1);
        b->total_bytes += b->o->spacer_size;
        g_free(path);
    }
    return 0;
}

bool tbbt__image_aging(const struct build *b)
{
    const struct tbbt_image_opts *o = b->o;

    return o->scope > 0 && (o->appends > 1 || o->synthetic_appends > 1 ||
                            o->filler_appends > 1 || o->large_appends > 1);
}

static void progress(struct build *b, bool last);

/*
 * The mode, owner and group an object gets.  The set-user-ID bit is never made, nor the
 * set-group-ID bit of anything but a directory: they only matter when a program is
 * executed, which no replay does, and a damaged or hostile map must not make set-ID files
 * on the tested server.  A directory's set-group-ID bit (new names take its group) and
 * the sticky bit change what the replayed calls do: they are kept.
 */
static void attrs_of(struct tbbt__image_attrs *a, bool known, uint32_t mode, uint32_t uid,
                     uint32_t gid, bool dir)
{
    mode &= dir ? ~04000u : ~06000u;
    *a = (struct tbbt__image_attrs){ .known = known, .mode = mode, .uid = uid, .gid = gid };
}

/* A regular file of the start image (the first name of its ID); its data now or in phase 2. */
static int create_file(struct build *b, const struct pending *pe, const char *path)
{
    gpointer key = GSIZE_TO_POINTER((gsize)pe->id + 1);
    struct file f = { .path = (uint32_t)b->paths->len, .size = pe->size,
                      .unknown = pe->size_state == 0 };
    struct tbbt__image_attrs a;
    unsigned flags = 0;
    char *dir;
    int rc;

    attrs_of(&a, pe->attrs_known, pe->mode, pe->uid, pe->gid, false);
    if (!tbbt__image_aging(b) && pe->size_state != 0)   /* no aging: written now, in one go */
        flags = b->o->spacer_size ? TBBT__IMAGE_DATA_SYNC   /* placed before the spacers */
                                  : TBBT__IMAGE_DATA_NOW;
    rc = b->ops->create(b->be, path, &a, pe->size, flags);
    if (rc < 0) {
        switch (stage(b)) {
        case TBBT__IMAGE_AT_PARENT:
            return entry_fail(b, rc, pe->line, "cannot reach the directory beneath the root of",
                              path);
        case TBBT__IMAGE_AT_ATTRS:
            return entry_fail(b, rc, pe->line, "cannot set the mode or owner of", path);
        case TBBT__IMAGE_AT_WRITE:
            return entry_fail(b, rc, pe->line, "cannot write", path);
        default:
            return entry_fail(b, rc, pe->line, "cannot create", path);
        }
    }
    f.written = flags != 0;
    b->total_bytes += pe->size_state != 0 ? pe->size : 0;
    if (flags == TBBT__IMAGE_DATA_NOW)
        progress(b, false);
    b->st->files++;
    g_string_append_len(b->paths, path, (gssize)strlen(path) + 1);
    g_array_append_val(b->files, f);
    if (pe->size_state != 0)
        note_size(b, pe->size);
    if (pe->links > 1)
        g_hash_table_insert(b->first, key, g_strdup(path));
    tbbt__image_made(b, 'f', path);
    obj_line(b, pe->id, path);
    if (b->o->spacers == 0)
        return 0;
    dir = dir_of(path);
    rc = make_spacers(b, dir);
    g_free(dir);
    return rc;
}

/* Another name of a file made already. */
static int create_link(struct build *b, uint64_t id, const char *path, uint64_t line)
{
    const char *first = g_hash_table_lookup(b->first, GSIZE_TO_POINTER((gsize)id + 1));
    int rc;

    if (!first)
        return entry_fail(b, -ENOENT, line, "no first name to link", path);
    if ((rc = b->ops->link(b->be, first, path)) < 0)
        return entry_fail(b, rc, line, stage(b) == TBBT__IMAGE_AT_PARENT
                                           ? "cannot reach the directory beneath the root of"
                                           : "cannot link", path);
    b->st->links++;
    tbbt__image_made(b, 'f', path);
    return 0;
}

static void pend(struct build *b, GArray *list, const struct tbbt_ns_map_entry *e, uint64_t line)
{
    struct pending pe = { .path = (uint32_t)b->pend_paths->len, .id = e->id, .size = e->size,
                          .links = e->links, .mode = e->mode, .uid = e->uid, .gid = e->gid,
                          .line = (uint32_t)MIN(line, UINT32_MAX), .size_state = e->size_state,
                          .attrs_known = e->attrs_known };

    g_string_append_len(b->pend_paths, e->path, (gssize)e->path_len + 1);
    g_array_append_val(list, pe);
}

/* A directory, symbolic link or FIFO of the map. */
static int make_other(struct build *b, const struct tbbt_ns_map_entry *e, uint64_t line)
{
    struct tbbt__image_attrs a;
    int rc;

    attrs_of(&a, e->attrs_known, e->mode, e->uid, e->gid, e->type == TBBT_NS_DIR);
    switch (e->type) {
    case TBBT_NS_DIR:
        rc = b->ops->mkdir(b->be, e->path, &a);
        break;
    case TBBT_NS_SYMLINK:
        rc = b->ops->symlink(b->be, e->path,
                             e->target && e->target_len ? e->target : "tbbt-unknown-target", &a);
        break;
    default:
        rc = b->ops->mkfifo(b->be, e->path, &a);
        break;
    }
    if (rc < 0 && stage(b) == TBBT__IMAGE_AT_PARENT)
        return entry_fail(b, rc, line, "cannot reach the directory beneath the root of",
                          e->path);
    if (rc < 0 && stage(b) != TBBT__IMAGE_AT_ATTRS)
        return entry_fail(b, rc, line, "cannot create", e->path);
    if (e->type == TBBT_NS_DIR)
        tbbt__image_add_dir(b, e->path, false, e->deleted);
    b->st->dirs += e->type == TBBT_NS_DIR;
    b->st->symlinks += e->type == TBBT_NS_SYMLINK;
    b->st->others += e->type != TBBT_NS_DIR && e->type != TBBT_NS_SYMLINK;
    tbbt__image_made(b, e->type == TBBT_NS_DIR ? 'd' : 'f', e->path);
    if (rc < 0)
        return entry_fail(b, rc, line, "cannot set the mode or owner of", e->path);
    obj_line(b, e->id, e->path);
    return 0;
}

static int make_entry(struct build *b, const struct tbbt_ns_map_entry *e, uint64_t line)
{
    bool link = e->type == TBBT_NS_FILE && e->links > 1 &&
                g_hash_table_contains(b->seen, GSIZE_TO_POINTER((gsize)e->id + 1));

    if (e->path_len == 1 && e->path[0] == '.') {
        /* the root: the clone directory itself; its mode and owner come at the end */
        attrs_of(&b->root_attrs, e->attrs_known, e->mode, e->uid, e->gid, true);
        return 0;
    }
    if (e->type == TBBT_NS_FILE) {
        if (e->links > 1)
            g_hash_table_add(b->seen, GSIZE_TO_POINTER((gsize)e->id + 1));
        if (b->o->spread) {             /* made later, in a seeded order */
            pend(b, link ? b->pend_links : b->pend_files, e, line);
            return 0;
        }
        if (link)
            return create_link(b, e->id, e->path, line);
        struct pending pe = { .id = e->id, .size = e->size, .links = e->links,
                              .mode = e->mode, .uid = e->uid, .gid = e->gid,
                              .line = (uint32_t)MIN(line, UINT32_MAX),
                              .size_state = e->size_state, .attrs_known = e->attrs_known };
        return create_file(b, &pe, e->path);
    }
    return make_other(b, e, line);
}

/* --spread: the files in a seeded order across directories, then their other names. */
static int make_pending(struct build *b)
{
    guint n = b->pend_files->len;
    int rc = 0;

    for (guint i = n; i > 1; i--) {
        guint j = (guint)g_rand_int_range(b->rand, 0, (gint32)i);
        struct pending t = g_array_index(b->pend_files, struct pending, i - 1);
        g_array_index(b->pend_files, struct pending, i - 1) =
            g_array_index(b->pend_files, struct pending, j);
        g_array_index(b->pend_files, struct pending, j) = t;
    }
    for (guint i = 0; i < n && rc == 0; i++) {
        const struct pending *pe = &g_array_index(b->pend_files, struct pending, i);
        rc = create_file(b, pe, b->pend_paths->str + pe->path);
    }
    for (guint i = 0; i < b->pend_links->len && rc == 0; i++) {
        const struct pending *pe = &g_array_index(b->pend_links, struct pending, i);
        rc = create_link(b, pe->id, b->pend_paths->str + pe->path, pe->line);
    }
    return rc;
}

/* Spacers go when the image is complete. */
static int remove_spacers(struct build *b)
{
    for (size_t off = 0; off < b->spacers->len; off += strlen(b->spacers->str + off) + 1) {
        const char *path = b->spacers->str + off;
        int rc = b->ops->unlink(b->be, path);
        if (rc < 0)
            return fail(b, rc, "cannot delete the spacer '%s': %s", path, strerror(-rc));
        b->st->spacers++;
    }
    g_string_truncate(b->spacers, 0);
    return 0;
}

static int phase_names(struct build *b)
{
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0, rc;

    if (!(r = tbbt_ns_map_reader_open(b->o->map, &err)))
        return fail(b, err, "cannot read hierarchy map '%s': %s", b->o->map, tbbt_strerror(err));
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        if (e.create_ns != 0)
            continue;                   /* made during the trace: the player makes it */
        if ((rc = make_entry(b, &e, tbbt_ns_map_reader_line(r))) < 0)
            break;
    }
    if (rc < 0 && rc == TBBT_E_SYNTAX)
        fail(b, rc, "hierarchy map '%s' line %" PRIu64 ": %s", b->o->map,
             tbbt_ns_map_reader_line(r), tbbt_ns_map_reader_error(r));
    else if (rc < 0)
        fail(b, rc, "hierarchy map '%s': %s", b->o->map, tbbt_strerror(rc));
    tbbt_ns_map_reader_close(r);
    if (rc == 0 && b->o->spread)
        rc = make_pending(b);
    return rc < 0 ? rc : 0;
}

/* ---- phase 2: the data ------------------------------------------------------------ */

static void progress(struct build *b, bool last)
{
    uint64_t now = tbbt_now_ns(), done;
    double secs, rate;

    if (!b->o->progress || (!last && now - b->last_progress_ns < 250000000ull))
        return;
    b->last_progress_ns = now;
    done = __atomic_load_n(&b->be->done_bytes, __ATOMIC_RELAXED);
    secs = (double)(now - b->started_ns) / 1e9;
    rate = secs > 0 ? (double)done / secs : 0;
    fprintf(stderr, "\rtbbt-init: %.1f of %.1f MB written, %.1f MB/s, ETA %.0f s   ",
            (double)done / 1e6, (double)b->total_bytes / 1e6, rate / 1e6,
            rate > 0 && b->total_bytes > done ? (double)(b->total_bytes - done) / rate : 0.0);
    if (last)
        fputc('\n', stderr);
}

/* Appends len bytes to file f in one session (with aging: allocated at once). */
int tbbt__image_append(struct build *b, const struct file *f, uint64_t len)
{
    int rc = b->ops->append(b->be, b->paths->str + f->path, len, tbbt__image_aging(b));

    progress(b, false);
    return rc;
}

int tbbt__image_data_fail(struct build *b, const struct file *f, int rc)
{
    char *p = shown(b->paths->str + f->path);

    rc = fail(b, rc, "cannot write '%s': %s", p, strerror(-rc));
    g_free(p);
    return rc;
}

/* Appends for file f: by its class (large, synthetic, filler), else --appends. */
static uint32_t appends_of(const struct build *b, const struct file *f)
{
    const struct tbbt_image_opts *o = b->o;
    uint32_t a = o->appends;

    if (f->filler && o->filler_appends)
        a = o->filler_appends;
    else if (f->synthetic && o->synthetic_appends)
        a = o->synthetic_appends;
    if (o->large_size && f->size >= o->large_size && o->large_appends)
        a = o->large_appends;
    return a ? a : 1;
}

/* One set of files, written in interleaved appends (each file its own number of them). */
static int write_set(struct build *b, const guint *idx, guint n)
{
    uint32_t rounds = 1;
    guint *order = g_new(guint, n);
    int rc = 0;

    for (guint i = 0; i < n; i++)
        rounds = MAX(rounds, appends_of(b, &g_array_index(b->files, struct file, idx[i])));
    for (uint32_t k = 0; k < rounds && rc == 0; k++) {
        for (guint i = 0; i < n; i++)
            order[i] = idx[i];
        for (guint i = n; i > 1; i--) {          /* seeded Fisher-Yates: who goes next */
            guint j = (guint)g_rand_int_range(b->rand, 0, (gint32)i);
            guint t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (guint i = 0; i < n && rc == 0; i++) {
            const struct file *f = &g_array_index(b->files, struct file, order[i]);
            uint32_t appends = appends_of(b, f);
            uint64_t part = f->size / appends, len = k >= appends ? 0
                                                     : k + 1 == appends
                                                         ? f->size - part * (appends - 1)
                                                         : part;
            if (len && (rc = tbbt__image_append(b, f, len)) < 0)
                rc = tbbt__image_data_fail(b, f, rc);
        }
    }
    g_free(order);
    return rc;
}

/* Files of the map whose size the trace never told: drawn from the distribution. */
static void resolve_sizes(struct build *b)
{
    for (guint i = 0; i < b->files->len; i++) {
        struct file *f = &g_array_index(b->files, struct file, i);
        if (f->unknown) {
            f->size = tbbt__image_draw_size(b);
            f->unknown = false;
            b->total_bytes += f->size;
            b->st->unknown_sizes++;
        }
    }
}

static int phase_data(struct build *b)
{
    guint n = b->files->len, *perm = g_new(guint, n ? n : 1), start = 0;
    uint64_t set_bytes = 0;
    int rc = 0;

    for (guint i = 0; i < n; i++)
        perm[i] = i;
    if (!tbbt__image_aging(b)) {
        for (guint i = 0; i < n && rc == 0; i++) {
            const struct file *f = &g_array_index(b->files, struct file, i);
            if (f->size && !f->written && (rc = tbbt__image_append(b, f, f->size)) < 0)
                rc = tbbt__image_data_fail(b, f, rc);
        }
        g_free(perm);
        return rc;
    }
    for (guint i = n; i > 1; i--) {      /* files of different directories mix */
        guint j = (guint)g_rand_int_range(b->rand, 0, (gint32)i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (guint i = 0; i < n && rc == 0; i++) {
        set_bytes += g_array_index(b->files, struct file, perm[i]).size;
        if (set_bytes >= b->o->scope || i + 1 == n) {
            rc = write_set(b, perm + start, i + 1 - start);
            start = i + 1;
            set_bytes = 0;
        }
    }
    g_free(perm);
    return rc;
}

/* ---- entry point ------------------------------------------------------------------ */

/*
 * Clone k's own random stream: the seed alone for clone 0 (so one clone, and clone 0 of
 * several, are what they always were), the seed and k for the others.  With the size
 * reservoir and the synthetic names also starting afresh, a clone's plan depends on the
 * map, the options, the seed and k only, not on the clones built before it: the same
 * whichever rank builds it (docs/tbbt-init.md "Under MPI").
 */
static void clone_seed(struct build *b, uint32_t k)
{
    const guint32 s[3] = { (guint32)b->o->seed, (guint32)(b->o->seed >> 32), k };

    g_rand_set_seed_array(b->rand, s, k == 0 ? 2 : 3);
    b->known = 0;
    b->syn_seq = 0;
}

/* Forgets the previous clone's plan. */
static void clone_reset(struct build *b)
{
    g_array_set_size(b->files, 0);
    g_string_truncate(b->paths, 0);
    g_hash_table_remove_all(b->first);
    g_hash_table_remove_all(b->seen);
    g_string_truncate(b->pend_paths, 0);
    g_array_set_size(b->pend_files, 0);
    g_array_set_size(b->pend_links, 0);
    g_string_truncate(b->dpaths, 0);
    g_array_set_size(b->dirs, 0);
    for (int c = 0; c < 2; c++) {
        g_array_set_size(b->class_dirs[c], 0);
        g_array_set_size(b->class_parents[c], 0);
    }
}

/* The map root's mode and owner on the clone directory, once everything is in it. */
static int root_attrs(struct build *b)
{
    int rc;

    if (!b->root_attrs.known)
        return 0;
    if ((rc = b->ops->set_dir_attrs(b->be, ".", &b->root_attrs)) < 0)
        return fail(b, rc, "cannot set the mode or owner of the image root %s/%s: %s",
                    b->o->root, b->clone_dir, strerror(-rc));
    return 0;
}

static int build_clone(struct build *b, uint32_t k)
{
    int rc, erc;

    b->clone = k;
    b->clone_dir = b->o->clones > 1 ? g_strdup_printf("tbbt-clone-%" PRIu32, k) : g_strdup(".");
    if (b->team)
        tbbt__image_team_clone(b, k);
    clone_seed(b, k);
    rc = b->ops->begin_clone(b->be, b->clone_dir, b->o->clones > 1);
    if (rc < 0 && stage(b) == TBBT__IMAGE_AT_CREATE)
        return fail(b, rc, "cannot make %s/%s: %s", b->o->root, b->clone_dir, strerror(-rc));
    if (b->o->clones > 1)
        tbbt_manifest_write_path(&b->man, "made", "d", b->clone_dir);
    tbbt_manifest_write_path(&b->man, "clone", NULL, b->clone_dir);
    if (rc < 0)
        return fail(b, rc, "cannot open %s/%s", b->o->root, b->clone_dir);
    clone_reset(b);
    tbbt__image_add_dir(b, ".", false, false);
    rc = phase_names(b);
    if ((erc = b->ops->barrier(b->be)) < 0 && rc == 0)
        rc = erc;
    if (rc == 0) {
        for (guint i = 0; i < b->dirs->len; i++)
            if (!g_array_index(b->dirs, struct dir, i).keep_empty)
                g_array_append_val(b->class_dirs[EXT], i);
        resolve_sizes(b);
        rc = tbbt__image_plan_fill(b);
    }
    if (rc == 0)
        rc = phase_data(b);
    if (rc == 0)
        rc = tbbt__image_finish_fill(b);
    if (k + 1 == b->o->clones && b->o->fill > 0) {
        /* the whole file system's fill, once every clone is there (on every rank) */
        if (b->team) {
            b->built_agreed = true;
            erc = tbbt__image_team_agree(b, rc);
            if (rc == 0)
                b->errbuf[0] = '\0';     /* another rank's reason: not this rank's */
        } else {
            erc = 0;
        }
        if (rc == 0 && erc == 0)
            rc = tbbt__image_top_up(b);
    }
    if (rc == 0)
        rc = remove_spacers(b);
    if (rc == 0)
        rc = root_attrs(b);
    if ((erc = b->ops->end_clone(b->be)) < 0 && rc == 0)
        rc = fail(b, erc, "cannot finish %s/%s: %s", b->o->root, b->clone_dir, strerror(-erc));
    g_free(b->clone_dir);
    b->clone_dir = NULL;
    return rc;
}

/* path as an absolute, canonical one (given): symlinks resolved when it exists. */
static char *abs_path(const char *path)
{
    char *real = realpath(path, NULL), *p;

    p = real ? g_strdup(real) : g_canonicalize_filename(path, NULL);
    free(real);
    return p;
}

static void man_header(struct build *b, struct tbbt_manifest_writer *w)
{
    const struct tbbt_image_opts *o = b->o;
    /* absolute: the manifest is read from any directory (tbbt-play) */
    char *map = abs_path(o->map), *root = o->server ? g_strdup(o->root) : abs_path(o->root);

    tbbt_manifest_write_path(w, "map", NULL, map);
    if (b->map.summed)      /* the map this image was built from: tbbt-play checks it */
        tbbt_manifest_write(w, "map-crc32", "%08" PRIx32, b->map.crc);
    tbbt_manifest_write_path(w, "root", NULL, root);
    g_free(map);
    g_free(root);
    if (o->server) {
        tbbt_manifest_write_path(w, "server", NULL, o->server);
        tbbt_manifest_write_path(w, "export", NULL, o->export_path);
    }
    tbbt_manifest_write(w, "seed", "%" PRIu64, o->seed);
    tbbt_manifest_write(w, "clones", "%" PRIu32, o->clones);
    tbbt_manifest_write(w, "scope", "%" PRIu64, o->scope);
    tbbt_manifest_write(w, "appends", "%" PRIu32, o->appends);
    tbbt_manifest_write(w, "classes", "synthetic_appends %" PRIu32 " filler_appends %" PRIu32
                        " large_size %" PRIu64 " large_appends %" PRIu32, o->synthetic_appends,
                        o->filler_appends, o->large_size, o->large_appends);
    tbbt_manifest_write(w, "fill", "fill %.4f dir_ratio %.4f distortion %.4f merge %.4f "
                        "fragment_free %d spread %d spacers %" PRIu32, o->fill, o->dir_ratio,
                        o->distortion, o->merge, o->fragment_free, o->spread, o->spacers);
}

static void man_footer(struct build *b, struct tbbt_manifest_writer *w, int rc)
{
    const struct tbbt_image_stats *st = b->st;

    tbbt_manifest_write(w, "stats", "dirs %" PRIu64 " files %" PRIu64 " links %" PRIu64
                        " symlinks %" PRIu64 " others %" PRIu64 " bytes %" PRIu64 " appends %"
                        PRIu64 " unknown_sizes %" PRIu64 " synthetic_files %" PRIu64
                        " synthetic_dirs %" PRIu64 " synthetic_bytes %" PRIu64 " fillers %"
                        PRIu64 " filler_bytes %" PRIu64 " spacers %" PRIu64
                        " utilization %.4f seconds %.3f", st->dirs, st->files, st->links,
                        st->symlinks, st->others, st->bytes, st->appends, st->unknown_sizes,
                        st->synthetic_files, st->synthetic_dirs, st->synthetic_bytes,
                        st->fillers, st->filler_bytes, st->spacers, st->utilization,
                        st->seconds);
    if (rc == 0)
        tbbt_manifest_write(w, "status", "complete");
    else
        tbbt_manifest_write_path(w, "status", "failed", b->errbuf);
}

static void build_init(struct build *b)
{
    const struct tbbt_image_opts *o = b->o;

    b->rand = g_rand_new_with_seed_array((const guint32[]){ (guint32)o->seed,
                                                            (guint32)(o->seed >> 32) }, 2);
    b->paths = g_string_new(NULL);
    b->files = g_array_new(FALSE, FALSE, sizeof(struct file));
    b->first = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    b->seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    b->pend_paths = g_string_new(NULL);
    b->pend_files = g_array_new(FALSE, FALSE, sizeof(struct pending));
    b->pend_links = g_array_new(FALSE, FALSE, sizeof(struct pending));
    b->spacers = g_string_new(NULL);
    b->dpaths = g_string_new(NULL);
    b->dirs = g_array_new(FALSE, FALSE, sizeof(struct dir));
    for (int c = 0; c < 2; c++) {
        b->class_dirs[c] = g_array_new(FALSE, FALSE, sizeof(guint));
        b->class_parents[c] = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    b->table = g_array_new(FALSE, FALSE, sizeof(double));
}

static void build_fini(struct build *b)
{
    g_rand_free(b->rand);
    g_string_free(b->paths, TRUE);
    g_array_free(b->files, TRUE);
    g_hash_table_destroy(b->first);
    g_hash_table_destroy(b->seen);
    g_string_free(b->pend_paths, TRUE);
    g_array_free(b->pend_files, TRUE);
    g_array_free(b->pend_links, TRUE);
    g_string_free(b->spacers, TRUE);
    g_string_free(b->dpaths, TRUE);
    g_array_free(b->dirs, TRUE);
    for (int c = 0; c < 2; c++) {
        g_array_free(b->class_dirs[c], TRUE);
        g_array_free(b->class_parents[c], TRUE);
    }
    g_array_free(b->table, TRUE);
}

/*
 * --fill with several clones: the file system's use before the first clone, which every
 * clone's plan divides (image-fill.c), so that the plan does not depend on the order or
 * the concurrency of the clones.  0 or an error.
 */
static int base_usage(struct build *b)
{
    int rc;

    if (b->o->fill <= 0 || b->o->clones < 2)
        return 0;
    rc = b->ops->usage(b->be, &b->base_capacity, &b->base_used, &b->base_block);
    if (rc < 0)
        return fail(b, rc, "cannot stat the file system of '%s': %s", b->o->root, strerror(-rc));
    b->have_base = true;
    return 0;
}

/*
 * The clones this process builds (all of them; under MPI rank r of R builds r, r + R,
 * ...) and the final sync; 0 or the first error of this process.  Under MPI every rank
 * then learns whether all succeeded (the first failure's reason in errbuf).  The
 * utilization is measured once all is synced (rank 0).
 */
static int build_all(struct build *b)
{
    uint32_t rank = b->team ? b->o->rank : 0, step = b->team ? b->o->ranks : 1;
    uint64_t used = 0;
    int rc = b->o->sizes ? tbbt__image_read_sizes(b) : 0;

    if (rc == 0 && !b->team)
        rc = base_usage(b);
    for (uint32_t k = rank; rc == 0 && k < b->o->clones; k += step)
        rc = build_clone(b, k);
    if (b->team && b->o->fill > 0 && !b->built_agreed) {     /* the last clone's rank waits */
        int erc = tbbt__image_team_agree(b, rc);
        if (rc == 0 && erc < 0)
            b->errbuf[0] = '\0';
    }
    if (rc == 0 && (rc = b->ops->sync(b->be)) < 0)
        fail(b, rc, "cannot sync the image: %s", strerror(-rc));
    if (b->team)
        rc = tbbt__image_team_agree(b, rc);
    b->st->seconds = (double)(tbbt_now_ns() - b->started_ns) / 1e9;
    if ((!b->team || b->o->rank == 0) &&
        b->ops->usage(b->be, &b->capacity, &used, &b->block) == 0 && b->capacity)
        b->st->utilization = (double)used / (double)b->capacity;
    progress(b, true);
    return rc;
}

/* Opens the manifest's temporary file; NULL with the reason in errbuf. */
static struct tbbt_outfile *man_open(struct build *b, FILE **man, int *rc)
{
    struct tbbt_outfile *out = tbbt_outfile_new(b->o->manifest, 0, rc, NULL, 0);

    if (out && (*man = tbbt_outfile_stream(out, rc, NULL, 0)))
        return out;
    tbbt_outfile_abort(out);
    fail(b, *rc, "cannot write the manifest '%s': %s", b->o->manifest, strerror(-*rc));
    return NULL;
}

/*
 * Start-up under MPI: every rank checks the manifest's place and the map and opens the
 * backend; once all have, rank 0 (alone) prepares the root, measures the base use for
 * --fill and opens the manifest.  A failure anywhere stops every rank before anything
 * else is made.  0, or the first failure (errbuf: its rank and reason).
 */
static int team_start(struct build *b, struct tbbt_outfile **man_out, FILE **man)
{
    const struct tbbt_image_opts *o = b->o;
    uint64_t base[4];
    int rc = tbbt__image_manifest_outside(b);

    if (rc == 0)
        rc = tbbt_ns_map_check(o->map, &b->map, b->errbuf, b->errlen);
    if (rc == 0 && !(b->be = b->ops->open(o, b->st, b->errbuf, b->errlen, &rc)) && rc == 0)
        rc = -EIO;
    if ((rc = tbbt__image_team_agree(b, rc)) < 0)
        return rc;
    if (o->rank == 0 && (rc = tbbt__image_prepare_root(b)) == 0 && (rc = base_usage(b)) == 0)
        *man_out = man_open(b, man, &rc);
    if ((rc = tbbt__image_team_agree(b, rc)) < 0)
        return rc;
    base[0] = b->have_base;
    base[1] = b->base_capacity;
    base[2] = b->base_used;
    base[3] = b->base_block;
    if ((rc = tbbt_mpi_bcast(base, sizeof(base))) < 0)
        return fail(b, rc, "MPI broadcast failed: %s", tbbt_mpi_error());
    b->have_base = base[0] != 0;
    b->base_capacity = base[1];
    b->base_used = base[2];
    b->base_block = base[3];
    return 0;
}

/*
 * A build as one of several MPI ranks (o->ranks > 1; docs/tbbt-init.md "Under MPI"): the
 * start-up above, this rank's clones, then rank 0 writes the manifest with every rank's
 * lines (image-team.c).  Every rank returns the same status.
 */
static int build_team(struct build *b)
{
    struct tbbt_outfile *man_out = NULL;
    struct tbbt_manifest_writer w;
    FILE *man = NULL;
    char *why = NULL, *first = NULL;
    int rc, wrc, crc = 0;

    if ((rc = team_start(b, &man_out, &man)) < 0) {
        tbbt_outfile_abort(man_out);
        b->ops->close(b->be);
        return rc;
    }
    build_init(b);
    tbbt__image_team_init(b);
    tbbt_manifest_writer_init(&b->man, b->part_f);
    if (man_out) {
        tbbt_manifest_writer_init(&w, man);
        man_header(b, &w);
    }
    rc = build_all(b);
    /* rank 0's own late failures (the gathered parts, the manifest's commit) */
    wrc = tbbt__image_team_merge(b, &w);
    if (man_out) {
        if (wrc < 0)
            why = g_strdup(b->errbuf);
        man_footer(b, &w, rc < 0 ? rc : wrc);
        tbbt_manifest_write_sum(&w);
        tbbt_manifest_writer_fini(&w);
        if ((crc = tbbt_outfile_commit(man_out, NULL, 0)) < 0 && wrc == 0) {
            wrc = crc;
            why = g_strdup_printf("cannot write the manifest '%s': %s", b->o->manifest,
                                  strerror(-crc));
        }
    }
    /* every rank returns once the manifest is in place (or not), with the same status */
    crc = tbbt_mpi_agree(rc < 0 ? 0 : wrc, rc < 0 ? NULL : why, &first);
    if (rc == 0 && crc < 0) {
        rc = crc;
        snprintf(b->errbuf, b->errlen, "%s", first ? first : tbbt_mpi_error());
    }
    g_free(first);
    g_free(why);
    tbbt_manifest_writer_fini(&b->man);
    tbbt__image_team_fini(b);
    b->ops->close(b->be);
    build_fini(b);
    return rc;
}

int tbbt__image_build_with(const struct tbbt__image_backend_ops *ops,
                           const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                           char *errbuf, size_t errlen)
{
    struct build b = { .o = o, .st = st, .errbuf = errbuf, .errlen = errlen, .ops = ops,
                       .team = o->ranks > 1 };
    struct tbbt_outfile *man_out = NULL;
    FILE *man;
    int rc, wrc;

    *st = (struct tbbt_image_stats){ 0 };
    errbuf[0] = '\0';
    b.started_ns = tbbt_now_ns();
    if (b.team)
        return build_team(&b);
    if ((rc = tbbt__image_manifest_outside(&b)) < 0)
        return rc;
    /* a map that is not whole and valid must not cost an earlier image (--force) */
    if ((rc = tbbt_ns_map_check(o->map, &b.map, errbuf, errlen)) < 0)
        return rc;
    if (!(b.be = ops->open(o, st, errbuf, errlen, &rc)))
        return rc;
    /* the root before the manifest: --force reads the old one */
    if ((rc = tbbt__image_prepare_root(&b)) < 0) {
        ops->close(b.be);
        return rc;
    }
    /* written aside, renamed into place at the end (a failed build's manifest too) */
    if (!(man_out = tbbt_outfile_new(o->manifest, 0, &rc, NULL, 0)) ||
        !(man = tbbt_outfile_stream(man_out, &rc, NULL, 0))) {
        tbbt_outfile_abort(man_out);
        rc = fail(&b, rc, "cannot write the manifest '%s': %s", o->manifest, strerror(-rc));
        ops->close(b.be);
        return rc;
    }
    build_init(&b);
    tbbt_manifest_writer_init(&b.man, man);
    man_header(&b, &b.man);
    rc = build_all(&b);
    man_footer(&b, &b.man, rc);
    tbbt_manifest_write_sum(&b.man);
    tbbt_manifest_writer_fini(&b.man);
    if ((wrc = tbbt_outfile_commit(man_out, NULL, 0)) < 0 && rc == 0)
        rc = fail(&b, wrc, "cannot write the manifest '%s': %s", o->manifest, strerror(-wrc));
    ops->close(b.be);
    build_fini(&b);
    return rc;
}

int tbbt_image_build(const struct tbbt_image_opts *o, struct tbbt_image_stats *st, char *errbuf,
                     size_t errlen)
{
    return tbbt__image_build_with(o->server ? &tbbt__image_nfs_ops : &tbbt__image_local_ops, o,
                                  st, errbuf, errlen);
}
