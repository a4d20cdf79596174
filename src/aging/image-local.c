/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init's local backend (image-int.h): the image is made through system calls
 * beneath a local directory (a file system the build may write directly, or an NFS
 * client's mount of the server's export).
 *
 * Nothing is written outside the root, whatever the map says: every directory is
 * reached with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV) from the root, and every name is created with O_EXCL / O_NOFOLLOW
 * semantics.  The umask is 0 while the backend is open, so modes are exact from the
 * start.  Without aging, file data is written by a pool of two threads while the
 * build goes on making names (data copies and metadata overlap); with aging each
 * append starts writeback at once (sync_file_range), since delayed allocation (ext4,
 * xfs, btrfs) would otherwise place each file in one piece at writeback.
 */
#include "aging/image-int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/util.h"

#define CHUNK (1u << 20)            /* write size */
#define MARKER TBBT__IMAGE_MARKER

struct local {
    struct tbbt__image_be be;       /* first: what image.c sees */
    int root;                       /* the root directory */
    int base;                       /* O_PATH fd of the clone directory, -1 */
    int cur_dirfd;                  /* cached parent directory, -1 */
    char *cur_dir;
    uid_t euid;
    gid_t egid;
    mode_t old_mask;
    uint8_t *data;                  /* CHUNK bytes of non-zero data */
    GThreadPool *pool;              /* data writers (no aging), NULL when idle */
    GPtrArray *batch;               /* struct wtask * not handed over yet */
    GMutex pool_lock;
    int pool_err;                   /* first writer error */
    char *pool_err_path;
};

#define L(be) ((struct local *)(be))

static int fail_at(struct local *l, int stage, int rc)
{
    l->be.stage = stage;
    return rc;
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
 * and the leaf name, or the error (its stage set).  Consecutive entries mostly
 * share a directory: the last one is cached.
 */
static int parent_of(struct local *l, const char *path, const char **leaf)
{
    const char *slash = strrchr(path, '/');
    const char *d = slash ? path : ".";
    size_t n = slash ? (size_t)(slash - path) : 1;
    char *dir;
    int fd;

    *leaf = slash ? slash + 1 : path;
    if (l->cur_dir && strlen(l->cur_dir) == n && memcmp(l->cur_dir, d, n) == 0)
        return l->cur_dirfd;            /* the usual case: the last entry's directory */
    dir = g_strndup(d, n);
    fd = open_beneath(l->base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        g_free(dir);
        return fail_at(l, TBBT__IMAGE_AT_PARENT, fd);
    }
    if (l->cur_dirfd >= 0)
        close(l->cur_dirfd);
    g_free(l->cur_dir);
    l->cur_dir = dir;
    l->cur_dirfd = fd;
    return fd;
}

/* ---- data ----------------------------------------------------------------------- */

/* Writes len bytes of data to fd (counted; any thread); 0 or -errno. */
static int write_fd(struct local *l, int fd, uint64_t len)
{
    while (len > 0) {
        size_t n = len < CHUNK ? (size_t)len : CHUNK;
        ssize_t w = write(fd, l->data, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        len -= (uint64_t)w;
        __atomic_fetch_add(&l->be.done_bytes, (uint64_t)w, __ATOMIC_RELAXED);
        __atomic_fetch_add(&l->be.st->bytes, (uint64_t)w, __ATOMIC_RELAXED);
    }
    __atomic_fetch_add(&l->be.st->appends, 1, __ATOMIC_RELAXED);
    return 0;
}

/* One file for the writer pool: its descriptor (taken) and the bytes to write. */
struct wtask {
    int fd;
    uint64_t len;
    char *path;
};

static void write_task(gpointer data, gpointer user)
{
    struct wtask *t = data;
    struct local *l = user;
    int rc = __atomic_load_n(&l->pool_err, __ATOMIC_RELAXED) ? 0 : write_fd(l, t->fd, t->len);

    if (close(t->fd) < 0 && rc == 0)
        rc = -errno;
    if (rc < 0) {
        g_mutex_lock(&l->pool_lock);
        if (!l->pool_err) {
            l->pool_err = rc;
            l->pool_err_path = t->path;
            t->path = NULL;
        }
        g_mutex_unlock(&l->pool_lock);
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

/* Waits for the writers; their first error (its reason in the error buffer) or 0. */
static int pool_wait(struct local *l)
{
    int rc;

    if (!l->pool)
        return 0;
    if (l->batch) {
        g_thread_pool_push(l->pool, l->batch, NULL);
        l->batch = NULL;
    }
    g_thread_pool_free(l->pool, FALSE, TRUE);
    l->pool = NULL;
    if (!(rc = l->pool_err))
        return 0;
    if (!l->be.errbuf[0]) {
        char *p = tbbt__image_shown(l->pool_err_path);
        tbbt_errbuf(l->be.errbuf, l->be.errlen, "cannot write '%s': %s", p, strerror(-rc));
        g_free(p);
    }
    return rc;
}

/* Hands fd (taken) to the writer pool, 64 files per wake-up. */
static void pool_add(struct local *l, int fd, uint64_t len, const char *path)
{
    struct wtask *t = g_new(struct wtask, 1);

    if (!l->pool)
        l->pool = g_thread_pool_new(write_batch, l, 2, FALSE, NULL);
    if (!l->batch)
        l->batch = g_ptr_array_new();
    *t = (struct wtask){ .fd = fd, .len = len, .path = g_strdup(path) };
    g_ptr_array_add(l->batch, t);
    if (l->batch->len >= 64) {
        g_thread_pool_push(l->pool, l->batch, NULL);
        l->batch = NULL;
    }
}

/* ---- objects ---------------------------------------------------------------------- */

enum kind { K_DIR, K_SYMLINK, K_OTHER };

/* The owner and mode the object had at trace start (not through symlinks). */
static int set_attrs(struct local *l, int dfd, const char *leaf, enum kind k,
                     const struct tbbt__image_attrs *a)
{
    if (a->uid == l->euid && a->gid == l->egid && !(a->mode & 07000) && k == K_DIR)
        return 0;       /* made with this mode (umask 0) by this owner */
    if (fchownat(dfd, leaf, a->uid, a->gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM)
        return -errno;
    if (k != K_SYMLINK && fchmodat(dfd, leaf, (mode_t)(a->mode & 07777), 0) < 0)
        return -errno;
    return 0;
}

static int made_attrs(struct local *l, int dfd, const char *leaf, enum kind k,
                      const struct tbbt__image_attrs *a)
{
    int rc = a && a->known ? set_attrs(l, dfd, leaf, k, a) : 0;

    return rc < 0 ? fail_at(l, TBBT__IMAGE_AT_ATTRS, rc) : 0;
}

/* A directory, symbolic link (to target) or FIFO at path, then its owner and mode. */
static int make_at(struct local *l, const char *path, enum kind k, const char *target,
                   const struct tbbt__image_attrs *a)
{
    const char *leaf;
    int dfd = parent_of(l, path, &leaf), rc;

    if (dfd < 0)
        return dfd;
    if (k == K_DIR)
        rc = mkdirat(dfd, leaf, a && a->known ? (mode_t)(a->mode & 07777) : 0755);
    else if (k == K_SYMLINK)
        rc = symlinkat(target, dfd, leaf);
    else
        rc = mkfifoat(dfd, leaf, 0644);
    if (rc < 0)
        return fail_at(l, TBBT__IMAGE_AT_CREATE, -errno);
    return made_attrs(l, dfd, leaf, k, a);
}

static int l_mkdir(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a)
{
    return make_at(L(be), path, K_DIR, NULL, a);
}

static int l_symlink(struct tbbt__image_be *be, const char *path, const char *target,
                     const struct tbbt__image_attrs *a)
{
    return make_at(L(be), path, K_SYMLINK, target, a);
}

static int l_mkfifo(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a)
{
    return make_at(L(be), path, K_OTHER, NULL, a);
}

/* The data of a new file (fd taken) as flags say. */
static int create_data(struct local *l, int fd, const char *path, uint64_t len, unsigned flags)
{
    int rc;

    if (flags & TBBT__IMAGE_DATA_SYNC) {
        /* allocated before anything that follows is made (spacers) */
        if ((rc = write_fd(l, fd, len)) < 0 ||
            (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0 && (rc = -errno))) {
            close(fd);
            return fail_at(l, TBBT__IMAGE_AT_WRITE, rc);
        }
    } else if (flags & TBBT__IMAGE_DATA_NOW) {
        pool_add(l, fd, len, path);
        return l->pool_err ? pool_wait(l) : 0;
    }
    if (close(fd) < 0)
        return fail_at(l, TBBT__IMAGE_AT_WRITE, -errno);
    return 0;
}

static int l_create(struct tbbt__image_be *be, const char *path, const struct tbbt__image_attrs *a,
                    uint64_t len, unsigned flags)
{
    struct local *l = L(be);
    const char *leaf;
    int dfd = parent_of(l, path, &leaf), fd, rc;
    bool known = a && a->known;

    if (dfd < 0)
        return dfd;
    fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                known ? (mode_t)(a->mode & 07777) : 0644);
    if (fd < 0)
        return fail_at(l, TBBT__IMAGE_AT_CREATE, -errno);
    if (known && (a->uid != l->euid || a->gid != l->egid || (a->mode & 07000))) {
        /* set-ID bits: after the chown */
        if ((fchown(fd, a->uid, a->gid) < 0 && errno != EPERM) ||
            fchmod(fd, (mode_t)(a->mode & 07777)) < 0) {
            rc = -errno;
            close(fd);
            return fail_at(l, TBBT__IMAGE_AT_ATTRS, rc);
        }
    }
    return create_data(l, fd, path, len, flags);
}

static int l_link(struct tbbt__image_be *be, const char *first, const char *path)
{
    struct local *l = L(be);
    const char *leaf;
    int dfd = parent_of(l, path, &leaf);

    if (dfd < 0)
        return dfd;
    if (linkat(l->base, first, dfd, leaf, 0) < 0)
        return fail_at(l, TBBT__IMAGE_AT_CREATE, -errno);
    return 0;
}

static int l_set_dir_attrs(struct tbbt__image_be *be, const char *path,
                           const struct tbbt__image_attrs *a)
{
    struct local *l = L(be);
    int fd = open_beneath(l->base, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return fail_at(l, TBBT__IMAGE_AT_PARENT, fd);
    if ((fchown(fd, a->uid, a->gid) < 0 && errno != EPERM) ||
        fchmod(fd, (mode_t)(a->mode & 07777)) < 0)
        rc = fail_at(l, TBBT__IMAGE_AT_ATTRS, -errno);
    close(fd);
    return rc;
}

static int l_append(struct tbbt__image_be *be, const char *path, uint64_t len, bool sync)
{
    struct local *l = L(be);
    int fd = open_beneath(l->base, path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    int rc = 0;

    if (fd < 0)
        return fd;
    rc = write_fd(l, fd, len);
    /*
     * Delayed allocation (ext4, xfs, btrfs) places a file's blocks only at
     * writeback, all at once: without starting writeback here, interleaved
     * appends would age nothing.  SYNC_FILE_RANGE_WRITE starts it (blocks are
     * allocated now, next to what the other files of the set took) without
     * waiting for the disk.
     */
    if (rc == 0 && sync && sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int l_trim(struct tbbt__image_be *be, const char *path, uint64_t size)
{
    struct local *l = L(be);
    int fd = open_beneath(l->base, path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), rc = 0;

    if (fd < 0)
        return fd;
    if (ftruncate(fd, (off_t)size) < 0)
        rc = -errno;
    close(fd);
    return rc;
}

static int l_unlink(struct tbbt__image_be *be, const char *path)
{
    struct local *l = L(be);
    const char *leaf;
    int dfd = parent_of(l, path, &leaf);

    if (dfd < 0)
        return dfd;
    return unlinkat(dfd, leaf, 0) < 0 ? fail_at(l, TBBT__IMAGE_AT_CREATE, -errno) : 0;
}

static int l_usage(struct tbbt__image_be *be, uint64_t *capacity, uint64_t *used,
                   uint64_t *block)
{
    struct statvfs v;

    if (fstatvfs(L(be)->root, &v) < 0)
        return -errno;
    *block = v.f_frsize ? v.f_frsize : 4096;
    *capacity = (uint64_t)v.f_blocks * v.f_frsize;
    *used = (uint64_t)(v.f_blocks - v.f_bfree) * v.f_frsize;
    return 0;
}

static int l_sync(struct tbbt__image_be *be)
{
    return syncfs(L(be)->root) < 0 ? -errno : 0;
}

/* ---- the root and the clones ----------------------------------------------------- */

/* 1 if the root holds nothing (or only the marker and lost+found), 0 if not, -errno. */
static int l_root_empty(struct tbbt__image_be *be, bool *has_marker)
{
    int dup_fd = openat(L(be)->root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d;
    struct dirent *de;
    int empty = 1;

    *has_marker = false;
    if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
        int rc = -errno;
        if (dup_fd >= 0)
            close(dup_fd);
        return rc;
    }
    while ((de = readdir(d))) {
        enum tbbt__image_root_name k = tbbt__image_root_name(de->d_name);
        *has_marker |= k == TBBT__IMAGE_ROOT_MARKER;
        if (k == TBBT__IMAGE_ROOT_OTHER)
            empty = 0;
    }
    closedir(d);
    return empty;
}

static int l_read_marker(struct tbbt__image_be *be, char **text)
{
    int fd = openat(L(be)->root, MARKER, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char buf[4096];
    ssize_t n;

    if (fd < 0)
        return -errno;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    *text = g_strndup(buf, n > 0 ? (gsize)n : 0);
    return 0;
}

static int l_write_marker(struct tbbt__image_be *be, const char *text)
{
    struct local *l = L(be);
    int fd = openat(l->root, MARKER, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f;

    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        int rc = -errno;
        if (fd >= 0)
            close(fd);
        return fail_at(l, TBBT__IMAGE_AT_CREATE, rc);
    }
    fputs(text, f);
    return fclose(f) == 0 ? 0 : fail_at(l, TBBT__IMAGE_AT_WRITE, -errno);
}

static int l_remove_marker(struct tbbt__image_be *be)
{
    return unlinkat(L(be)->root, MARKER, 0) < 0 ? -errno : 0;
}

static int l_remove_made(struct tbbt__image_be *be, const char *path, bool dir)
{
    const char *slash = strrchr(path, '/');
    char *d = slash ? g_strndup(path, (gsize)(slash - path)) : g_strdup(".");
    int dfd = open_beneath(L(be)->root, d, O_PATH | O_DIRECTORY | O_CLOEXEC), rc = 0;

    g_free(d);
    if (dfd < 0)
        return 0;           /* not reachable beneath the root: not ours to remove */
    if (unlinkat(dfd, slash ? slash + 1 : path, dir ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
        rc = -errno;
    close(dfd);
    return rc;
}

static void drop_cache(struct local *l)
{
    if (l->cur_dirfd >= 0)
        close(l->cur_dirfd);
    l->cur_dirfd = -1;
    g_free(l->cur_dir);
    l->cur_dir = NULL;
}

static int l_begin_clone(struct tbbt__image_be *be, const char *dir, bool make)
{
    struct local *l = L(be);

    if (make && mkdirat(l->root, dir, 0755) < 0)
        return fail_at(l, TBBT__IMAGE_AT_CREATE, -errno);
    drop_cache(l);
    l->base = open_beneath(l->root, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return l->base < 0 ? fail_at(l, TBBT__IMAGE_AT_PARENT, l->base) : 0;
}

static int l_barrier(struct tbbt__image_be *be)
{
    return pool_wait(L(be));
}

static int l_end_clone(struct tbbt__image_be *be)
{
    struct local *l = L(be);
    int rc = pool_wait(l);

    drop_cache(l);
    if (l->base >= 0)
        close(l->base);
    l->base = -1;
    return rc;
}

static struct tbbt__image_be *l_open(const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                                     char *errbuf, size_t errlen, int *rc)
{
    struct local *l;
    int fd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        *rc = -errno;
        tbbt_errbuf(errbuf, errlen, "cannot open the root '%s': %s", o->root, strerror(errno));
        return NULL;
    }
    l = g_new0(struct local, 1);
    l->be = (struct tbbt__image_be){ .ops = &tbbt__image_local_ops, .o = o, .st = st,
                                     .errbuf = errbuf, .errlen = errlen };
    l->root = fd;
    l->base = l->cur_dirfd = -1;
    l->euid = geteuid();
    l->egid = getegid();
    g_mutex_init(&l->pool_lock);
    l->data = g_malloc(CHUNK);
    for (size_t i = 0; i < CHUNK; i++)
        l->data[i] = (uint8_t)('a' + i % 26);
    l->old_mask = umask(0);     /* modes from the map are exact */
    return &l->be;
}

static void l_close(struct tbbt__image_be *be)
{
    struct local *l = L(be);

    if (!l)
        return;
    l_end_clone(be);            /* the writers, the clone directory */
    close(l->root);
    umask(l->old_mask);
    g_mutex_clear(&l->pool_lock);
    g_free(l->pool_err_path);
    g_free(l->data);
    g_free(l);
}

const struct tbbt__image_backend_ops tbbt__image_local_ops = {
    .name = "local",
    .version = 1,
    .open = l_open,
    .close = l_close,
    .root_empty = l_root_empty,
    .read_marker = l_read_marker,
    .write_marker = l_write_marker,
    .remove_marker = l_remove_marker,
    .remove_made = l_remove_made,
    .begin_clone = l_begin_clone,
    .end_clone = l_end_clone,
    .barrier = l_barrier,
    .mkdir = l_mkdir,
    .create = l_create,
    .link = l_link,
    .symlink = l_symlink,
    .mkfifo = l_mkfifo,
    .set_dir_attrs = l_set_dir_attrs,
    .append = l_append,
    .trim = l_trim,
    .unlink = l_unlink,
    .usage = l_usage,
    .sync = l_sync,
};
