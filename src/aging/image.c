/* SPDX-License-Identifier: MIT */
/*
 * Building the initial image (see image.h).  Two phases per clone:
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
 *     open/append/close session, the files of the set taking turns in a
 *     seeded order.
 *
 * Every directory is reached with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_XDEV) from the root, and every name is created with O_EXCL /
 * O_NOFOLLOW semantics, so nothing is written outside the root whatever the
 * map says.  The manifest (written as the build goes) lists what was made,
 * for the player (obj lines: where each TBBT-ID lives) and for --force.
 */
#include "aging/image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns/ns.h"
#include "util/util.h"

#define MARKER ".tbbt-init"
#define CHUNK (1u << 20)            /* write size */
#define RESERVOIR 4096              /* known sizes kept to draw unknown ones from */

struct file {
    uint32_t path;                  /* offset in paths */
    uint64_t size;
    bool unknown;
    bool filler;                    /* deleted after the data phase */
    bool synthetic;
    bool written;                   /* its data is there already (no aging) */
};

/* A directory new objects may go to. */
struct dir {
    uint32_t path;                  /* offset in dpaths */
    bool synthetic;
    bool keep_empty;                /* the trace removes it (RMDIR, or a RENAME over it):
                                     * no synthetic object may go in, or that fails */
};

struct build {
    const struct tbbt_image_opts *o;
    struct tbbt_image_stats *st;
    char *errbuf;
    size_t errlen;
    int root;                       /* O_PATH fd of the root */
    int base;                       /* O_PATH fd of the clone directory */
    FILE *man;
    GRand *rand;
    GString *paths;                 /* NUL-separated paths of files (phase 2) */
    GArray *files;                  /* struct file */
    GHashTable *first;              /* id -> first path (for hard links), owned strings */
    GHashTable *seen;               /* ids of files with several names met so far */
    GString *pend_paths;            /* --spread: paths of the pending files and links */
    GArray *pend_files, *pend_links;    /* struct pending */
    GString *spacers;               /* NUL-separated paths of spacer files */
    GString *esc;                   /* man_path()'s buffer */
    uint64_t reservoir[RESERVOIR];
    uint64_t known;                 /* known sizes seen */
    uint64_t total_bytes, done_bytes, started_ns, last_progress_ns;
    GThreadPool *pool;              /* data writers (no aging), NULL when idle */
    GPtrArray *batch;               /* struct wtask * not handed over yet */
    uid_t euid;
    gid_t egid;
    GMutex pool_lock;
    int pool_err;                   /* first writer error */
    char *pool_err_path;
    uint8_t *data;                  /* CHUNK bytes of non-zero data */
    GString *dpaths;                /* NUL-separated paths of directories */
    GArray *dirs;                   /* struct dir: directories of the image */
    GArray *class_dirs[2];          /* indices in dirs: the map's (EXT), synthetic (SYN) */
    GArray *class_parents[2];       /* the directory of each object in the class (distortion) */
    GArray *table;                  /* --sizes: size, weight pairs (double) */
    double table_total;
    uint64_t syn_seq;               /* synthetic names made */
    uint64_t capacity, block;       /* file system bytes and block size */
    char *clone_dir;                /* relative to root: "." or tbbt-clone-K */
    uint32_t clone;
    int cur_dirfd;                  /* cached parent directory */
    char *cur_dir;
};

void tbbt_image_opts_init(struct tbbt_image_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->clones = 1;
    o->seed = 1;
    o->appends = 1;
}

static int fail(struct build *b, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct build *b, int rc, const char *fmt, ...)
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

/* Path bytes for messages, escaped as in the map and the manifest. */
static char *shown(const char *p)
{
    GString *s = g_string_new(NULL);

    tbbt_ns_escape(s, p, strlen(p));
    return g_string_free(s, FALSE);
}

static int open_beneath(int dirfd, const char *path, int flags)
{
    struct open_how how = {
        .flags = (uint64_t)flags,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                   RESOLVE_NO_XDEV,
    };
    int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

    return fd < 0 ? -errno : fd;
}

/*
 * The directory fd for the parent of path (relative to the clone directory)
 * and the leaf name.  Consecutive entries mostly share a directory: the last
 * one is cached.
 */
static int parent_of(struct build *b, const char *path, const char **leaf)
{
    const char *slash = strrchr(path, '/');
    const char *d = slash ? path : ".";
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *dir;
    int fd;

    *leaf = slash ? slash + 1 : path;
    if (b->cur_dir && strlen(b->cur_dir) == n && memcmp(b->cur_dir, d, n) == 0)
        return b->cur_dirfd;            /* the usual case: the last entry's directory */
    dir = g_strndup(d, n);
    fd = open_beneath(b->base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        g_free(dir);
        return fd;
    }
    if (b->cur_dirfd >= 0)
        close(b->cur_dirfd);
    g_free(b->cur_dir);
    b->cur_dir = dir;
    b->cur_dirfd = fd;
    return fd;
}

/* ---- manifest ---------------------------------------------------------------------- */

static void man_line(struct build *b, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void man_line(struct build *b, const char *key, const char *fmt, ...)
{
    va_list ap;

    fputs(key, b->man);
    fputc('\t', b->man);
    va_start(ap, fmt);
    vfprintf(b->man, fmt, ap);
    va_end(ap);
    fputc('\n', b->man);
}

static void man_path(struct build *b, const char *key, const char *extra, const char *path)
{
    GString *s = b->esc;        /* reused: two lines per object */

    g_string_truncate(s, 0);
    tbbt_ns_escape(s, path, strlen(path));
    if (extra)
        fprintf(b->man, "%s\t%s\t%s\n", key, extra, s->str);
    else
        fprintf(b->man, "%s\t%s\n", key, s->str);
}

/* A path made, relative to the root (for --force), with its kind. */
static void made(struct build *b, char kind, const char *path)
{
    char k[2] = { kind, 0 };
    char *full = strcmp(b->clone_dir, ".") == 0 ? g_strdup(path)
                                                 : g_strconcat(b->clone_dir, "/", path, NULL);

    man_path(b, "made", k, full);
    g_free(full);
}

/* ---- phase 1: the namespace ------------------------------------------------------- */

static void add_dir(struct build *b, const char *path, bool synthetic, bool keep_empty);

static void note_size(struct build *b, uint64_t size)
{
    uint64_t i = b->known++;

    if (i < RESERVOIR)
        b->reservoir[i] = size;
    else if ((i = (uint64_t)g_rand_double(b->rand) * (double)(i + 1)) < RESERVOIR)
        b->reservoir[i] = size;
}

/* The owner and mode the object had at trace start (not through symlinks). */
static int set_attrs(struct build *b, int dfd, const char *leaf,
                     const struct tbbt_ns_map_entry *e)
{
    if (e->uid == b->euid && e->gid == b->egid && !(e->mode & 07000) &&
        e->type == TBBT_NS_DIR)
        return 0;       /* made with this mode (umask 0) by this owner */
    if (fchownat(dfd, leaf, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
        return -errno;
    if (e->type != TBBT_NS_SYMLINK &&
        fchmodat(dfd, leaf, (mode_t)(e->mode & 07777), 0) < 0)
        return -errno;
    return 0;
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
    man_path(b, "obj", s, path);
}

static int write_fd(struct build *b, int fd, uint64_t len);

/*
 * Files made right after each file and deleted at the end (--spacers, the
 * paper's unimplemented inode-distance control): empty ones take the next
 * inode numbers and directory slots; with --spacer-size they also take the
 * blocks after the file's (written and allocated at once), so the next
 * sibling's data lands further from its directory and its inode.
 */
static int make_spacers(struct build *b, int dfd, const char *dir)
{
    for (uint32_t i = 0; i < b->o->spacers; i++) {
        char leaf[40];
        int fd, rc = 0;
        snprintf(leaf, sizeof(leaf), "tbbt-spacer-%" PRIu64, ++b->syn_seq);
        fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
            return fail(b, -errno, "cannot create a spacer in '%s': %s", dir, strerror(errno));
        if (b->o->spacer_size && ((rc = write_fd(b, fd, b->o->spacer_size)) < 0 ||
                                  (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0 &&
                                   (rc = -errno))))
            rc = fail(b, rc, "cannot write a spacer in '%s': %s", dir, strerror(-rc));
        close(fd);
        if (rc < 0)
            return rc;
        g_string_append_printf(b->spacers, "%s%s%s", strcmp(dir, ".") ? dir : "",
                               strcmp(dir, ".") ? "/" : "", leaf);
        g_string_append_c(b->spacers, 0);
    }
    return 0;
}

static bool aging(const struct build *b)
{
    const struct tbbt_image_opts *o = b->o;

    return o->scope > 0 && (o->appends > 1 || o->synthetic_appends > 1 ||
                            o->filler_appends > 1 || o->large_appends > 1);
}

static void progress(struct build *b, bool last);

/* Writes len bytes of data to fd (counted; any thread); 0 or -errno. */
static int write_fd(struct build *b, int fd, uint64_t len)
{
    while (len > 0) {
        size_t n = len < CHUNK ? (size_t)len : CHUNK;
        ssize_t w = write(fd, b->data, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        len -= (uint64_t)w;
        __atomic_fetch_add(&b->done_bytes, (uint64_t)w, __ATOMIC_RELAXED);
        __atomic_fetch_add(&b->st->bytes, (uint64_t)w, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&b->st->appends, 1, __ATOMIC_RELAXED);
    return 0;
}

/*
 * Without aging, file data is written by a small pool of threads while the
 * main thread goes on making names: data copies and metadata overlap.
 */
struct wtask {
    int fd;
    uint64_t len;
    char *path;
};

static void write_task(gpointer data, gpointer user)
{
    struct wtask *t = data;
    struct build *b = user;
    int rc = __atomic_load_n(&b->pool_err, __ATOMIC_RELAXED) ? 0 : write_fd(b, t->fd, t->len);

    if (close(t->fd) < 0 && rc == 0)
        rc = -errno;
    if (rc < 0) {
        g_mutex_lock(&b->pool_lock);
        if (!b->pool_err) {
            b->pool_err = rc;
            b->pool_err_path = t->path;
            t->path = NULL;
        }
        g_mutex_unlock(&b->pool_lock);
    }
    g_free(t->path);
    g_free(t);
}

static void write_batch(gpointer data, gpointer user)
{
    GPtrArray *a = data;

    for (guint i = 0; i < a->len; i++)
        write_task(a->pdata[i], user);
    g_ptr_array_free(a, TRUE);
}

/* Waits for the writers; their first error (with the file) or 0. */
static int pool_wait(struct build *b)
{
    int rc;

    if (!b->pool)
        return 0;
    if (b->batch) {
        g_thread_pool_push(b->pool, b->batch, NULL);
        b->batch = NULL;
    }
    g_thread_pool_free(b->pool, FALSE, TRUE);
    b->pool = NULL;
    if (!(rc = b->pool_err))
        return 0;
    {
        char *p = shown(b->pool_err_path);
        rc = fail(b, rc, "cannot write '%s': %s", p, strerror(-rc));
        g_free(p);
    }
    return rc;
}

/* A regular file of the start image (the first name of its ID); its data now or in phase 2. */
static int create_file(struct build *b, const struct pending *pe, const char *path)
{
    const char *leaf;
    int dfd = parent_of(b, path, &leaf), fd, rc;
    gpointer key = GSIZE_TO_POINTER((gsize)pe->id + 1);
    struct file f = { .path = (uint32_t)b->paths->len, .size = pe->size,
                      .unknown = pe->size_state == 0 };

    if (dfd < 0)
        return entry_fail(b, dfd, pe->line, "cannot reach the directory beneath the root of",
                          path);
    /* the umask is 0 while building: the mode is exact from the start */
    fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                pe->attrs_known ? (mode_t)(pe->mode & 07777) : 0644);
    if (fd < 0)
        return entry_fail(b, -errno, pe->line, "cannot create", path);
    if (pe->attrs_known && (pe->uid != b->euid || pe->gid != b->egid ||
                            (pe->mode & 07000))) {   /* set-ID bits: after the chown */
        if ((fchown(fd, pe->uid, pe->gid) < 0 && errno != EPERM) ||
            fchmod(fd, (mode_t)(pe->mode & 07777)) < 0) {
            rc = -errno;
            close(fd);
            return entry_fail(b, rc, pe->line, "cannot set the mode or owner of", path);
        }
    }
    if (!aging(b) && pe->size_state != 0 && b->o->spacer_size) {
        /* spacers with data follow: this file's blocks must be placed first */
        if ((rc = write_fd(b, fd, pe->size)) < 0 ||
            (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0 && (rc = -errno))) {
            close(fd);
            return entry_fail(b, rc, pe->line, "cannot write", path);
        }
        f.written = true;
        if (close(fd) < 0)
            return entry_fail(b, -errno, pe->line, "cannot write", path);
    } else if (!aging(b) && pe->size_state != 0) {     /* no aging: written now, in one go */
        if (!b->pool)
            b->pool = g_thread_pool_new(write_batch, b, 2, FALSE, NULL);
        if (!b->batch)
            b->batch = g_ptr_array_new();
        struct wtask *t = g_new(struct wtask, 1);
        *t = (struct wtask){ .fd = fd, .len = pe->size, .path = g_strdup(path) };
        g_ptr_array_add(b->batch, t);
        if (b->batch->len >= 64) {      /* a wake-up per 64 files, not per file */
            g_thread_pool_push(b->pool, b->batch, NULL);
            b->batch = NULL;
        }
        f.written = true;
        progress(b, false);
        if (b->pool_err)
            return pool_wait(b);
    } else if (close(fd) < 0) {
        return entry_fail(b, -errno, pe->line, "cannot write", path);
    }
    b->st->files++;
    g_string_append_len(b->paths, path, (gssize)strlen(path) + 1);
    g_array_append_val(b->files, f);
    if (pe->size_state != 0)
        note_size(b, pe->size);
    if (pe->links > 1)
        g_hash_table_insert(b->first, key, g_strdup(path));
    made(b, 'f', path);
    obj_line(b, pe->id, path);
    return make_spacers(b, dfd, b->cur_dir);
}

/* Another name of a file made already. */
static int create_link(struct build *b, uint64_t id, const char *path, uint64_t line)
{
    const char *leaf, *first = g_hash_table_lookup(b->first, GSIZE_TO_POINTER((gsize)id + 1));
    int dfd = parent_of(b, path, &leaf);

    if (dfd < 0)
        return entry_fail(b, dfd, line, "cannot reach the directory beneath the root of", path);
    if (!first)
        return entry_fail(b, -ENOENT, line, "no first name to link", path);
    if (linkat(b->base, first, dfd, leaf, 0) < 0)
        return entry_fail(b, -errno, line, "cannot link", path);
    b->st->links++;
    made(b, 'f', path);
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

static int make_entry(struct build *b, const struct tbbt_ns_map_entry *e, uint64_t line)
{
    const char *leaf;
    int dfd, rc = 0;
    bool link = e->type == TBBT_NS_FILE && e->links > 1 &&
                g_hash_table_contains(b->seen, GSIZE_TO_POINTER((gsize)e->id + 1));

    if (e->path_len == 1 && e->path[0] == '.')
        return 0;                       /* the root: the clone directory itself */
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
    if ((dfd = parent_of(b, e->path, &leaf)) < 0)
        return entry_fail(b, dfd, line, "cannot reach the directory beneath the root of",
                          e->path);
    switch (e->type) {
    case TBBT_NS_DIR:
        if (mkdirat(dfd, leaf, e->attrs_known ? (mode_t)(e->mode & 07777) : 0755) < 0)
            rc = -errno;
        else {
            b->st->dirs++;
            add_dir(b, e->path, false, e->deleted);
        }
        break;
    case TBBT_NS_SYMLINK:
        if (symlinkat(e->target && e->target_len ? e->target : "tbbt-unknown-target", dfd,
                      leaf) < 0)
            rc = -errno;
        else
            b->st->symlinks++;
        break;
    default:
        if (mkfifoat(dfd, leaf, 0644) < 0)
            rc = -errno;
        else
            b->st->others++;
        break;
    }
    if (rc < 0)
        return entry_fail(b, rc, line, "cannot create", e->path);
    made(b, e->type == TBBT_NS_DIR ? 'd' : 'f', e->path);
    if (e->attrs_known && (rc = set_attrs(b, dfd, leaf, e)) < 0)
        return entry_fail(b, rc, line, "cannot set the mode or owner of", e->path);
    obj_line(b, e->id, e->path);
    return 0;
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
        const char *leaf, *path = b->spacers->str + off;
        int dfd = parent_of(b, path, &leaf);
        if (dfd < 0 || unlinkat(dfd, leaf, 0) < 0)
            return fail(b, dfd < 0 ? dfd : -errno, "cannot delete the spacer '%s': %s", path,
                        strerror(dfd < 0 ? -dfd : errno));
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

/* ---- synthetic objects (paper 3.2) -------------------------------------------------- */

static int append(struct build *b, const struct file *f, uint64_t len);
static bool aging(const struct build *b);
static int data_fail(struct build *b, const struct file *f, int rc);

enum { EXT = 0, SYN = 1 };

static void add_dir(struct build *b, const char *path, bool synthetic, bool keep_empty)
{
    struct dir d = { .path = (uint32_t)b->dpaths->len, .synthetic = synthetic,
                     .keep_empty = keep_empty };

    g_string_append_len(b->dpaths, path, (gssize)strlen(path) + 1);
    g_array_append_val(b->dirs, d);
}

/*
 * The directory of a new synthetic object: among the map's directories (except those
 * the trace removes: an RMDIR would find them not empty) with
 * probability merge (always if there is no synthetic one), else among the
 * synthetic ones; within the class, with probability distortion the directory
 * of a random object already there (fan-out grows where it is large), else a
 * uniformly random directory.
 */
static guint pick_dir(struct build *b)
{
    GArray *pool[2] = { b->class_dirs[EXT], b->class_dirs[SYN] };
    int c = (b->class_dirs[SYN]->len == 0 || g_rand_double(b->rand) < b->o->merge) ? EXT : SYN;
    GArray *parents = b->class_parents[c];

    if (pool[c]->len == 0)
        c = c == EXT ? SYN : EXT;
    if (parents->len && g_rand_double(b->rand) < b->o->distortion)
        return g_array_index(parents, guint,
                             (guint)g_rand_int_range(b->rand, 0, (gint32)parents->len));
    return g_array_index(pool[c], guint,
                         (guint)g_rand_int_range(b->rand, 0, (gint32)pool[c]->len));
}

static void placed(struct build *b, guint dir)
{
    int c = g_array_index(b->dirs, struct dir, dir).synthetic ? SYN : EXT;

    g_array_append_val(b->class_parents[c], dir);
}

/* One size from the distribution: the user's table, the map's sizes, or the built-in one. */
static uint64_t draw_size(struct build *b)
{
    static const uint64_t builtin[][2] = {   /* size, weight in 1000ths */
        {0, 20}, {512, 80}, {2048, 120}, {8192, 200}, {32768, 220}, {131072, 170},
        {524288, 110}, {2097152, 60}, {8388608, 15}, {33554432, 5},
    };
    double u;

    if (b->table->len) {
        u = g_rand_double(b->rand) * b->table_total;
        for (guint i = 0; i < b->table->len; i += 2) {
            double w = g_array_index(b->table, double, i + 1);
            if (u < w || i + 2 == b->table->len)
                return (uint64_t)g_array_index(b->table, double, i);
            u -= w;
        }
    }
    if (b->known)
        return b->reservoir[(uint64_t)g_rand_int_range(b->rand, 0,
                                                       (gint32)MIN(b->known, RESERVOIR))];
    u = g_rand_double(b->rand) * 1000.0;
    for (size_t i = 0; i < G_N_ELEMENTS(builtin); i++) {
        if (u < (double)builtin[i][1])
            return builtin[i][0];
        u -= (double)builtin[i][1];
    }
    return 8192;
}

static uint64_t on_disk(const struct build *b, uint64_t size)
{
    return (size + b->block - 1) / b->block * b->block;
}

/* A synthetic (or filler) file of size bytes in directory dir, to be written in phase 2. */
static int new_file(struct build *b, guint dir, uint64_t size, bool filler)
{
    const char *dpath = b->dpaths->str + g_array_index(b->dirs, struct dir, dir).path;
    char *path = strcmp(dpath, ".") == 0
                     ? g_strdup_printf("tbbt-syn-%" PRIu64, ++b->syn_seq)
                     : g_strdup_printf("%s/tbbt-syn-%" PRIu64, dpath, ++b->syn_seq);
    const char *leaf;
    int dfd = parent_of(b, path, &leaf), fd, rc = 0;
    struct file f = { .path = (uint32_t)b->paths->len, .size = size, .filler = filler,
                      .synthetic = !filler };

    if (dfd < 0 || (fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                O_CLOEXEC, 0644)) < 0)
        rc = fail(b, dfd < 0 ? dfd : -errno, "cannot create the synthetic file '%s': %s", path,
                  strerror(dfd < 0 ? -dfd : errno));
    else
        close(fd);
    if (rc == 0) {
        made(b, 'f', path);
        g_string_append_len(b->paths, path, (gssize)strlen(path) + 1);
        g_array_append_val(b->files, f);
        placed(b, dir);
    }
    g_free(path);
    return rc;
}

static int new_dir(struct build *b, guint parent, guint *out)
{
    const char *dpath = b->dpaths->str + g_array_index(b->dirs, struct dir, parent).path;
    char *path = strcmp(dpath, ".") == 0
                     ? g_strdup_printf("tbbt-syn-%" PRIu64, ++b->syn_seq)
                     : g_strdup_printf("%s/tbbt-syn-%" PRIu64, dpath, ++b->syn_seq);
    const char *leaf;
    int dfd = parent_of(b, path, &leaf), rc = 0;

    if (dfd < 0 || mkdirat(dfd, leaf, 0755) < 0)
        rc = fail(b, dfd < 0 ? dfd : -errno, "cannot create the synthetic directory '%s': %s",
                  path, strerror(dfd < 0 ? -dfd : errno));
    if (rc == 0) {
        made(b, 'd', path);
        *out = b->dirs->len;
        add_dir(b, path, true, false);
        g_array_append_val(b->class_dirs[SYN], *out);
        placed(b, parent);
        b->st->synthetic_dirs++;
    }
    g_free(path);
    return rc;
}

static int fs_usage(struct build *b, uint64_t *used)
{
    struct statvfs v;

    if (fstatvfs(b->root, &v) < 0)
        return fail(b, -errno, "cannot stat the file system of '%s': %s", b->o->root,
                    strerror(errno));
    b->block = v.f_frsize ? v.f_frsize : 4096;
    b->capacity = (uint64_t)v.f_blocks * v.f_frsize;
    *used = (uint64_t)(v.f_blocks - v.f_bfree) * v.f_frsize;
    return 0;
}

/* Synthetic files (and directories) of about `bytes` on disk. */
static int add_synthetic(struct build *b, uint64_t bytes)
{
    double ratio = b->o->dir_ratio >= 0 ? b->o->dir_ratio
                   : b->st->files ? (double)b->st->dirs / (double)b->st->files : 0.1;
    guint dir, nd;
    int rc = 0;

    while (bytes > 0 && rc == 0) {
        uint64_t size = draw_size(b);
        if (on_disk(b, size) > bytes)
            size = bytes;
        dir = pick_dir(b);
        if (g_rand_double(b->rand) < ratio && (rc = new_dir(b, dir, &nd)) == 0)
            dir = nd;
        if (rc == 0 && (rc = new_file(b, dir, size, false)) == 0) {
            b->st->synthetic_files++;
            b->st->synthetic_bytes += size;
            bytes -= MIN(bytes, MAX(on_disk(b, size), b->block));
        }
    }
    return rc;
}

/* Plans this clone's synthetic files and the fillers, before the data phase. */
static int plan_fill(struct build *b)
{
    uint64_t used, planned = 0, target, share, fill_bytes, free_after;
    guint i, top;
    int rc;

    if (b->o->fill <= 0)
        return 0;
    if ((rc = fs_usage(b, &used)) < 0)
        return rc;
    for (i = 0; i < b->files->len; i++)
        planned += on_disk(b, g_array_index(b->files, struct file, i).size);
    target = (uint64_t)(b->o->fill * (double)b->capacity);
    share = target > used ? (target - used) / (b->o->clones - b->clone) : 0;
    /* a margin for metadata: the top-up after the data phase closes the gap */
    fill_bytes = share > planned ? (share - planned) - (share - planned) / 50 : 0;
    if (b->class_dirs[SYN]->len == 0 && b->o->merge < 1 && (rc = new_dir(b, 0, &top)) < 0)
        return rc;
    if ((rc = add_synthetic(b, fill_bytes)) < 0)
        return rc;
    if (!b->o->fragment_free || !aging(b))
        return 0;
    /* fillers: most of the space that stays free, written interleaved, deleted at the end */
    free_after = b->capacity > target ? (b->capacity - target) / (b->o->clones - b->clone) : 0;
    for (uint64_t left = free_after - free_after / 5; left > 0 && rc == 0;) {
        uint64_t size = MIN(draw_size(b), left);
        if ((rc = new_file(b, pick_dir(b), size, true)) == 0) {
            b->st->fillers++;
            left -= MIN(left, MAX(on_disk(b, size), b->block));
        }
    }
    return rc;
}

/* After the data phase: fillers go, and small synthetic files close the gap to the target. */
static int finish_fill(struct build *b)
{
    uint64_t used, target;
    int rc = 0;

    for (guint i = 0; i < b->files->len && rc == 0; i++) {
        const struct file *f = &g_array_index(b->files, struct file, i);
        const char *leaf, *path = b->paths->str + f->path;
        int dfd;
        if (!f->filler)
            continue;
        if ((dfd = parent_of(b, path, &leaf)) < 0 || unlinkat(dfd, leaf, 0) < 0)
            rc = fail(b, dfd < 0 ? dfd : -errno, "cannot delete the filler '%s': %s", path,
                      strerror(dfd < 0 ? -dfd : errno));
        else
            b->st->filler_bytes += f->size;
    }
    if (rc < 0 || b->o->fill <= 0)
        return rc;
    /* space some file systems hold beyond EOF for appending files (XFS speculative
     * preallocation) would count as used: trim it, as a truncate to the size does */
    for (guint i = 0; i < b->files->len && rc == 0; i++) {
        const struct file *f = &g_array_index(b->files, struct file, i);
        int fd;
        if (f->filler)
            continue;
        fd = open_beneath(b->base, b->paths->str + f->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)f->size) < 0)
            rc = data_fail(b, f, fd < 0 ? fd : -errno);
        if (fd >= 0)
            close(fd);
    }
    if (rc < 0 || b->clone + 1 != b->o->clones)
        return rc;
    if (syncfs(b->root) < 0 || (rc = fs_usage(b, &used)) < 0)
        return rc < 0 ? rc : fail(b, -errno, "cannot sync: %s", strerror(errno));
    target = (uint64_t)(b->o->fill * (double)b->capacity);
    /* over: metadata of fragmented files took more than planned; the newest synthetic
     * files go until the target is met (their made lines just find nothing to remove) */
    for (guint i = b->files->len; rc == 0 && i > 0 && used > target + b->capacity / 400;) {
        const struct file *f = &g_array_index(b->files, struct file, --i);
        const char *leaf, *path = b->paths->str + f->path;
        int dfd;
        if (!f->synthetic)
            continue;
        if ((dfd = parent_of(b, path, &leaf)) < 0 || unlinkat(dfd, leaf, 0) < 0) {
            rc = fail(b, dfd < 0 ? dfd : -errno, "cannot delete '%s': %s", path,
                      strerror(dfd < 0 ? -dfd : errno));
            break;
        }
        b->st->synthetic_files--;
        b->st->synthetic_bytes -= f->size;
        used -= MIN(used, on_disk(b, f->size));
        if (used <= target + b->capacity / 400 && (syncfs(b->root) < 0 ||
                                                   (rc = fs_usage(b, &used)) < 0))
            rc = rc < 0 ? rc : fail(b, -errno, "cannot sync: %s", strerror(errno));
    }
    while (rc == 0 && used + b->capacity / 400 < target) {    /* within 0.25 % */
        guint first = b->files->len;
        if ((rc = add_synthetic(b, (target - used) - (target - used) / 20)) < 0)
            break;
        for (guint i = first; i < b->files->len && rc == 0; i++) {
            const struct file *f = &g_array_index(b->files, struct file, i);
            if (f->size && (rc = append(b, f, f->size)) < 0)
                rc = data_fail(b, f, rc);
        }
        if (rc == 0 && (syncfs(b->root) < 0 || (rc = fs_usage(b, &used)) < 0))
            rc = rc < 0 ? rc : fail(b, -errno, "cannot sync: %s", strerror(errno));
    }
    return rc;
}

/* ---- phase 2: the data ------------------------------------------------------------ */

static void progress(struct build *b, bool last)
{
    uint64_t now = tbbt_now_ns();
    double secs, rate;

    if (!b->o->progress || (!last && now - b->last_progress_ns < 250000000ull))
        return;
    b->last_progress_ns = now;
    secs = (double)(now - b->started_ns) / 1e9;
    rate = secs > 0 ? (double)b->done_bytes / secs : 0;
    fprintf(stderr, "\rtbbt-init: %.1f of %.1f MB written, %.1f MB/s, ETA %.0f s   ",
            (double)b->done_bytes / 1e6, (double)b->total_bytes / 1e6, rate / 1e6,
            rate > 0 ? (double)(b->total_bytes - b->done_bytes) / rate : 0.0);
    if (last)
        fputc('\n', stderr);
}

/* Appends len bytes to file f in one open/write/close session. */
static int append(struct build *b, const struct file *f, uint64_t len)
{
    const char *path = b->paths->str + f->path;
    int fd = open_beneath(b->base, path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    int rc = 0;

    if (fd < 0)
        return fd;
    rc = write_fd(b, fd, len);
    /*
     * Delayed allocation (ext4, xfs, btrfs) places a file's blocks only at
     * writeback, all at once: without starting writeback here, interleaved
     * appends would age nothing.  SYNC_FILE_RANGE_WRITE starts it (blocks are
     * allocated now, next to what the other files of the set took) without
     * waiting for the disk.
     */
    if (rc == 0 && aging(b) && sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    progress(b, false);
    return rc;
}

static int data_fail(struct build *b, const struct file *f, int rc)
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
            if (len && (rc = append(b, f, len)) < 0)
                rc = data_fail(b, f, rc);
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
            f->size = draw_size(b);
            f->unknown = false;
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
    if (!aging(b)) {
        for (guint i = 0; i < n && rc == 0; i++) {
            const struct file *f = &g_array_index(b->files, struct file, i);
            if (f->size && !f->written && (rc = append(b, f, f->size)) < 0)
                rc = data_fail(b, f, rc);
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

/* ---- the root --------------------------------------------------------------------- */

/* 1 if the directory fd holds nothing (or only the marker), 0 if not, -errno. */
static int only_marker(int fd, bool *has_marker)
{
    int dup_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d;
    struct dirent *de;
    int empty = 1;

    *has_marker = false;
    if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
        if (dup_fd >= 0)
            close(dup_fd);
        return -errno;
    }
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (!strcmp(de->d_name, MARKER))
            *has_marker = true;
        else if (strcmp(de->d_name, "lost+found") != 0)
            empty = 0;
    }
    closedir(d);
    return empty;
}

/* Removes what the previous manifest's made lines list, newest first. */
static int remove_previous(struct build *b)
{
    char *mpath = NULL, *text = NULL, **lines;
    GString *bytes;
    gsize len;
    GError *gerr = NULL;
    int rc = 0, fd = openat(b->root, MARKER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char buf[4096];
    ssize_t n;

    if (fd < 0)
        return fail(b, -errno, "cannot read the marker %s/%s: %s", b->o->root, MARKER,
                    strerror(errno));
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return fail(b, -EINVAL, "the marker %s/%s is empty", b->o->root, MARKER);
    buf[n] = 0;
    mpath = g_strstrip(g_strdup(buf));
    if (!g_file_get_contents(mpath, &text, &len, &gerr)) {
        rc = fail(b, -ENOENT, "cannot read the previous manifest '%s' (from %s/%s): %s", mpath,
                  b->o->root, MARKER, gerr->message);
        g_error_free(gerr);
        g_free(mpath);
        return rc;
    }
    lines = g_strsplit(text, "\n", -1);
    bytes = g_string_new(NULL);
    for (gint i = (gint)g_strv_length(lines) - 1; i >= 0 && rc == 0; i--) {
        char **f = g_strsplit(lines[i], "\t", 3);
        if (g_strv_length(f) == 3 && !strcmp(f[0], "made")) {
            const char *path, *slash;
            if (!tbbt_ns_unescape(f[2], strlen(f[2]), bytes)) {
                rc = fail(b, TBBT_E_SYNTAX, "--force: the previous manifest '%s' has a bad "
                          "path '%s'; nothing else removed", mpath, f[2]);
                g_strfreev(f);
                break;
            }
            path = bytes->str;
            slash = strrchr(path, '/');
            char *dir = slash ? g_strndup(path, (gsize)(slash - path)) : g_strdup(".");
            int dfd = open_beneath(b->root, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (dfd >= 0) {
                if (unlinkat(dfd, slash ? slash + 1 : path,
                             f[1][0] == 'd' ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
                    rc = fail(b, -errno, "--force: cannot remove '%s' (made by the previous "
                              "run): %s; nothing else removed", path, strerror(errno));
                close(dfd);
            }
            g_free(dir);
        }
        g_strfreev(f);
    }
    g_string_free(bytes, TRUE);
    g_strfreev(lines);
    g_free(text);
    g_free(mpath);
    if (rc == 0 && unlinkat(b->root, MARKER, 0) < 0)
        rc = fail(b, -errno, "cannot remove %s/%s: %s", b->o->root, MARKER, strerror(errno));
    return rc;
}

static int prepare_root(struct build *b)
{
    bool marker;
    int rc;
    char *abs_manifest;
    FILE *f;

    b->root = open(b->o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (b->root < 0)
        return fail(b, -errno, "cannot open the root '%s': %s", b->o->root, strerror(errno));
    if ((rc = only_marker(b->root, &marker)) < 0)
        return fail(b, rc, "cannot list the root '%s': %s", b->o->root, strerror(-rc));
    if (marker && !b->o->force)
        return fail(b, -EEXIST, "the root '%s' holds a tbbt-init image: --force removes it",
                    b->o->root);
    if (!marker && !rc)
        return fail(b, -EEXIST, "the root '%s' is not empty and holds no tbbt-init image: "
                    "refusing to write there", b->o->root);
    if (marker && ((rc = remove_previous(b)) < 0 || (rc = only_marker(b->root, &marker)) < 0))
        return rc;
    if (!rc)
        return fail(b, -ENOTEMPTY, "the root '%s' still holds files tbbt-init did not make "
                    "(left as they are)", b->o->root);
    abs_manifest = g_canonicalize_filename(b->o->manifest, NULL);
    rc = openat(b->root, MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (rc < 0 || !(f = fdopen(rc, "w"))) {
        g_free(abs_manifest);
        return fail(b, -errno, "cannot write %s/%s: %s", b->o->root, MARKER, strerror(errno));
    }
    fprintf(f, "%s\n", abs_manifest);
    g_free(abs_manifest);
    return fclose(f) == 0 ? 0 : fail(b, -errno, "cannot write the marker: %s", strerror(errno));
}

/* --sizes FILE: "SIZE WEIGHT" per line (bytes, relative weight); '#' starts a comment. */
static int read_table(struct build *b)
{
    char *text = NULL, **lines;
    GError *gerr = NULL;
    int rc = 0;

    if (!g_file_get_contents(b->o->sizes, &text, NULL, &gerr)) {
        rc = fail(b, -ENOENT, "cannot read the size table '%s': %s", b->o->sizes,
                  gerr->message);
        g_error_free(gerr);
        return rc;
    }
    lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] && rc == 0; i++) {
        char *l = g_strstrip(lines[i]), *end;
        double size, w;
        if (!*l || *l == '#')
            continue;
        size = g_ascii_strtod(l, &end);
        w = end != l ? g_ascii_strtod(end, &end) : -1;
        while (*end == ' ' || *end == '\t')
            end++;
        if (!(size >= 0 && size <= 1e15) || !(w > 0 && w < 1e15) || (*end && *end != '#')) {
            rc = fail(b, TBBT_E_SYNTAX, "size table '%s' line %u: want SIZE WEIGHT", b->o->sizes,
                      i + 1);
            break;
        }
        g_array_append_val(b->table, size);
        g_array_append_val(b->table, w);
        b->table_total += w;
    }
    if (rc == 0 && b->table->len == 0)
        rc = fail(b, TBBT_E_SYNTAX, "size table '%s' has no entries", b->o->sizes);
    g_strfreev(lines);
    g_free(text);
    return rc;
}

/* ---- entry point ------------------------------------------------------------------ */

static int build_clone(struct build *b, uint32_t k)
{
    int rc;

    b->clone = k;
    b->clone_dir = b->o->clones > 1 ? g_strdup_printf("tbbt-clone-%" PRIu32, k) : g_strdup(".");
    if (b->o->clones > 1) {
        if (mkdirat(b->root, b->clone_dir, 0755) < 0)
            return fail(b, -errno, "cannot make %s/%s: %s", b->o->root, b->clone_dir,
                        strerror(errno));
        man_path(b, "made", "d", b->clone_dir);
    }
    man_path(b, "clone", NULL, b->clone_dir);
    b->base = open_beneath(b->root, b->clone_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (b->base < 0)
        return fail(b, b->base, "cannot open %s/%s", b->o->root, b->clone_dir);
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
    add_dir(b, ".", false, false);
    rc = phase_names(b);
    if (pool_wait(b) < 0 && rc == 0)
        rc = b->pool_err;
    if (rc == 0) {
        for (guint i = 0; i < b->dirs->len; i++)
            if (!g_array_index(b->dirs, struct dir, i).keep_empty)
                g_array_append_val(b->class_dirs[EXT], i);
        resolve_sizes(b);
        rc = plan_fill(b);
    }
    if (rc == 0)
        rc = phase_data(b);
    if (rc == 0)
        rc = finish_fill(b);
    if (rc == 0)
        rc = remove_spacers(b);
    if (b->cur_dirfd >= 0)
        close(b->cur_dirfd);
    b->cur_dirfd = -1;
    g_free(b->cur_dir);
    b->cur_dir = NULL;
    close(b->base);
    g_free(b->clone_dir);
    b->clone_dir = NULL;
    return rc;
}

int tbbt_image_build(const struct tbbt_image_opts *o, struct tbbt_image_stats *st, char *errbuf,
                     size_t errlen)
{
    struct build b = { .o = o, .st = st, .errbuf = errbuf, .errlen = errlen, .root = -1,
                       .cur_dirfd = -1 };
    mode_t old_mask;
    int rc;

    *st = (struct tbbt_image_stats){ 0 };
    errbuf[0] = '\0';
    b.started_ns = tbbt_now_ns();
    b.euid = geteuid();
    b.egid = getegid();
    {   /* the manifest must not be part of the image it describes */
        char *root = g_canonicalize_filename(o->root, NULL);
        char *man = g_canonicalize_filename(o->manifest, NULL);
        size_t n = strlen(root);
        bool inside = strncmp(man, root, n) == 0 && (man[n] == '/' || n == 1);
        g_free(root);
        g_free(man);
        if (inside)
            return fail(&b, -EINVAL, "the manifest '%s' is inside the root '%s': put it "
                        "elsewhere (--manifest)", o->manifest, o->root);
    }
    {   /* a map that does not open must not cost an earlier image (--force) */
        int err = 0;
        struct tbbt_ns_map_reader *r = tbbt_ns_map_reader_open(o->map, &err);
        if (!r)
            return fail(&b, err, "cannot read hierarchy map '%s': %s", o->map,
                        tbbt_strerror(err));
        tbbt_ns_map_reader_close(r);
    }
    if ((rc = prepare_root(&b)) < 0) {     /* before the manifest: --force reads the old one */
        if (b.root >= 0)
            close(b.root);
        return rc;
    }
    if (!(b.man = fopen(o->manifest, "w"))) {
        rc = fail(&b, -errno, "cannot write the manifest '%s': %s", o->manifest,
                  strerror(errno));
        close(b.root);
        return rc;
    }
    fprintf(b.man, "# tbbt-manifest 1\n");
    b.esc = g_string_new(NULL);
    man_path(&b, "map", NULL, o->map);
    man_path(&b, "root", NULL, o->root);
    man_line(&b, "seed", "%" PRIu64, o->seed);
    man_line(&b, "clones", "%" PRIu32, o->clones);
    man_line(&b, "scope", "%" PRIu64, o->scope);
    man_line(&b, "appends", "%" PRIu32, o->appends);
    man_line(&b, "classes", "synthetic_appends %" PRIu32 " filler_appends %" PRIu32
             " large_size %" PRIu64 " large_appends %" PRIu32, o->synthetic_appends,
             o->filler_appends, o->large_size, o->large_appends);
    man_line(&b, "fill", "fill %.4f dir_ratio %.4f distortion %.4f merge %.4f fragment_free %d "
             "spread %d spacers %" PRIu32, o->fill, o->dir_ratio, o->distortion, o->merge,
             o->fragment_free, o->spread, o->spacers);
    b.rand = g_rand_new_with_seed_array((const guint32[]){ (guint32)o->seed,
                                                           (guint32)(o->seed >> 32) }, 2);
    b.paths = g_string_new(NULL);
    b.files = g_array_new(FALSE, FALSE, sizeof(struct file));
    b.first = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    b.seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    b.pend_paths = g_string_new(NULL);
    b.pend_files = g_array_new(FALSE, FALSE, sizeof(struct pending));
    b.pend_links = g_array_new(FALSE, FALSE, sizeof(struct pending));
    b.spacers = g_string_new(NULL);
    b.dpaths = g_string_new(NULL);
    b.dirs = g_array_new(FALSE, FALSE, sizeof(struct dir));
    for (int c = 0; c < 2; c++) {
        b.class_dirs[c] = g_array_new(FALSE, FALSE, sizeof(guint));
        b.class_parents[c] = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    b.table = g_array_new(FALSE, FALSE, sizeof(double));
    if (o->sizes)
        rc = read_table(&b);
    b.data = g_malloc(CHUNK);
    for (size_t i = 0; i < CHUNK; i++)
        b.data[i] = (uint8_t)('a' + i % 26);
    old_mask = umask(0);        /* modes from the map are exact */
    for (uint32_t k = 0; rc == 0 && k < o->clones; k++)
        rc = build_clone(&b, k);
    umask(old_mask);
    if (rc == 0 && syncfs(b.root) < 0)
        rc = fail(&b, -errno, "cannot sync the image: %s", strerror(errno));
    st->seconds = (double)(tbbt_now_ns() - b.started_ns) / 1e9;
    {
        uint64_t used = 0;
        if (fs_usage(&b, &used) == 0 && b.capacity)
            st->utilization = (double)used / (double)b.capacity;
    }
    progress(&b, true);
    man_line(&b, "stats", "dirs %" PRIu64 " files %" PRIu64 " links %" PRIu64
             " symlinks %" PRIu64 " others %" PRIu64 " bytes %" PRIu64 " appends %" PRIu64
             " unknown_sizes %" PRIu64 " synthetic_files %" PRIu64 " synthetic_dirs %" PRIu64
             " synthetic_bytes %" PRIu64 " fillers %" PRIu64 " filler_bytes %" PRIu64
             " spacers %" PRIu64 " utilization %.4f seconds %.3f", st->dirs, st->files, st->links, st->symlinks,
             st->others, st->bytes, st->appends, st->unknown_sizes, st->synthetic_files,
             st->synthetic_dirs, st->synthetic_bytes, st->fillers, st->filler_bytes,
             st->spacers, st->utilization, st->seconds);
    if (rc == 0)
        man_line(&b, "status", "complete");
    else
        man_path(&b, "status", "failed", errbuf);
    if (fclose(b.man) != 0 && rc == 0)
        rc = fail(&b, -errno, "cannot write the manifest '%s': %s", o->manifest,
                  strerror(errno));
    if (b.root >= 0)
        close(b.root);
    g_rand_free(b.rand);
    g_string_free(b.paths, TRUE);
    g_array_free(b.files, TRUE);
    g_hash_table_destroy(b.first);
    g_free(b.data);
    if (b.pool)
        pool_wait(&b);
    g_free(b.pool_err_path);
    g_hash_table_destroy(b.seen);
    g_string_free(b.pend_paths, TRUE);
    g_array_free(b.pend_files, TRUE);
    g_array_free(b.pend_links, TRUE);
    g_string_free(b.spacers, TRUE);
    g_string_free(b.esc, TRUE);
    g_string_free(b.dpaths, TRUE);
    g_array_free(b.dirs, TRUE);
    for (int c = 0; c < 2; c++) {
        g_array_free(b.class_dirs[c], TRUE);
        g_array_free(b.class_parents[c], TRUE);
    }
    g_array_free(b.table, TRUE);
    return rc;
}
