/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload-ops.c: the clients' libnfs high-level calls, each checked: success,
 * an error the caller said a real client tolerates here (counted per kind), or the
 * end of the client with one line naming the call, the path and the error.  Also the
 * composite steps every workload uses: listing a directory, reading and writing whole
 * files, NFS-safe dot-locking (as liblockfile does it: LINK of a unique file, then a
 * check of its link count, because a LINK whose reply was lost may have succeeded),
 * switching AUTH_SYS credentials, and the random distributions.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "nfs-workload.h"

const char *const wl_call_names[WL_N_CALLS] = {
    "mount", "open", "create", "pread", "pwrite", "fsync", "ftruncate", "close", "stat",
    "lstat", "fstat", "opendir", "rename", "link", "unlink", "mkdir", "rmdir", "chmod",
    "chown", "symlink", "readlink", "utimes",
};

const char *const wl_op_names[WL_N_OPS] = {
    "mbox_deliver", "maildir_deliver", "mbox_check", "mbox_read", "mbox_expunge",
    "maildir_read", "maildir_flag", "login", "ls", "cat", "grep", "save", "build", "scratch",
    "chmod", "chgrp", "symlink", "touch", "find", "project",
};

#define LOCK_TRIES 4000

/* ------------------------------------------------------------------ failing, tolerating */

void wl_fail(struct wl_client *c, const char *fmt, ...)
{
    struct wl_stats *st = c->st;
    va_list ap;

    va_start(ap, fmt);
    g_vsnprintf(st->error, sizeof(st->error), fmt, ap);
    va_end(ap);
    fprintf(stderr, WL_PROG ": client %d %s@%s: %s\n", st->index, c->id.name, c->machine,
            st->error);
    st->failed = 1;
    st->end_us = g_get_real_time();
    _exit(1);
}

static const char *errno_name(int e)
{
    switch (e) {
    case ENOENT: return "ENOENT";
    case EEXIST: return "EEXIST";
    case ENOTEMPTY: return "ENOTEMPTY";
    case ESTALE: return "ESTALE";
    default: return "EOTHER";
    }
}

static void count_tolerated(struct wl_client *c, enum wl_call call, int err)
{
    struct wl_stats *st = c->st;
    char what[WL_NAME];

    g_snprintf(what, sizeof(what), "%s %s", wl_call_names[call], errno_name(err));
    for (int i = 0; i < st->ntol; i++) {
        if (strcmp(st->tol[i].what, what) == 0) {
            st->tol[i].n++;
            return;
        }
    }
    if (st->ntol < WL_MAX_TOL) {
        g_strlcpy(st->tol[st->ntol].what, what, sizeof(st->tol[0].what));
        st->tol[st->ntol++].n = 1;
    }
}

static bool allowed(int rc, unsigned ok)
{
    return (rc == -ENOENT && (ok & WL_OK_NOENT)) || (rc == -EEXIST && (ok & WL_OK_EXIST)) ||
           (rc == -ENOTEMPTY && (ok & WL_OK_NOTEMPTY)) || (rc == -ESTALE && (ok & WL_OK_STALE));
}

/* Counts CALL and returns RC when it succeeded or is allowed by OK; fails otherwise. */
static int check(struct wl_client *c, enum wl_call call, int rc, unsigned ok, const char *path,
                 const char *path2)
{
    c->st->calls[call]++;
    if (rc >= 0)
        return rc;
    if (allowed(rc, ok)) {
        count_tolerated(c, call, -rc);
        return rc;
    }
    wl_fail(c, "%s %s%s%s: %s (%s)", wl_call_names[call], path, path2 ? " -> " : "",
            path2 ? path2 : "", g_strerror(-rc), nfs_get_error(c->nfs));
}

/* ------------------------------------------------------------------ single calls */

int wl_open(struct wl_client *c, const char *path, int flags, struct nfsfh **fh, unsigned ok)
{
    return check(c, WL_C_OPEN, nfs_open(c->nfs, path, flags, fh), ok, path, NULL);
}

int wl_create(struct wl_client *c, const char *path, int flags, int mode, struct nfsfh **fh,
              unsigned ok)
{
    return check(c, WL_C_CREATE, nfs_create(c->nfs, path, flags, mode, fh), ok, path, NULL);
}

/*
 * libnfs 4.0 reports a READ or WRITE that failed with an NFS error (NFS3ERR_STALE after
 * another client removed the file) as -EFAULT, with no usable message.  When the caller
 * tolerates ESTALE, a GETATTR of the handle tells whether the file went: then the
 * result is -ESTALE; otherwise the -EFAULT stands (and fails the client).
 */
static int stale_or(struct wl_client *c, struct nfsfh *fh, int rc, unsigned ok)
{
    struct nfs_stat_64 st;

    if (rc != -EFAULT || !(ok & WL_OK_STALE))
        return rc;
    c->st->calls[WL_C_FSTAT]++;
    return nfs_fstat64(c->nfs, fh, &st) == -ESTALE ? -ESTALE : rc;
}

/* The handle calls with tolerated errors, for the composite steps below. */
static int64_t pread_ok(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t off,
                        uint64_t len, char *buf, unsigned ok)
{
    int rc = check(c, WL_C_PREAD, stale_or(c, fh, nfs_pread(c->nfs, fh, off, len, buf), ok),
                   ok, path, NULL);

    if (rc > 0)
        c->st->bytes_read += (uint64_t)rc;
    return rc;
}

static int pwrite_ok(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t off,
                     uint64_t len, const char *buf, unsigned ok)
{
    int rc = check(c, WL_C_PWRITE,
                   stale_or(c, fh, nfs_pwrite(c->nfs, fh, off, len, (char *)buf), ok), ok, path,
                   NULL);

    if (rc < 0)
        return rc;
    if ((uint64_t)rc != len)
        wl_fail(c, "pwrite %s: %d of %" G_GUINT64_FORMAT " bytes written", path, rc, len);
    c->st->bytes_written += len;
    return 0;
}

static int fstat_ok(struct wl_client *c, struct nfsfh *fh, const char *path,
                    struct nfs_stat_64 *st, unsigned ok)
{
    return check(c, WL_C_FSTAT, nfs_fstat64(c->nfs, fh, st), ok, path, NULL);
}

static int close_ok(struct wl_client *c, struct nfsfh *fh, const char *path, unsigned ok)
{
    return check(c, WL_C_CLOSE, nfs_close(c->nfs, fh), ok, path, NULL);
}

int64_t wl_pread(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t off,
                 uint64_t len, char *buf)
{
    return pread_ok(c, fh, path, off, len, buf, 0);
}

void wl_pwrite(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t off,
               uint64_t len, const char *buf)
{
    pwrite_ok(c, fh, path, off, len, buf, 0);
}

void wl_fsync(struct wl_client *c, struct nfsfh *fh, const char *path)
{
    check(c, WL_C_FSYNC, nfs_fsync(c->nfs, fh), 0, path, NULL);
}

void wl_ftruncate(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t len)
{
    check(c, WL_C_FTRUNCATE, nfs_ftruncate(c->nfs, fh, len), 0, path, NULL);
}

void wl_fstat(struct wl_client *c, struct nfsfh *fh, const char *path, struct nfs_stat_64 *st)
{
    fstat_ok(c, fh, path, st, 0);
}

void wl_close(struct wl_client *c, struct nfsfh *fh, const char *path)
{
    close_ok(c, fh, path, 0);
}

int wl_stat(struct wl_client *c, const char *path, struct nfs_stat_64 *st, unsigned ok)
{
    return check(c, WL_C_STAT, nfs_stat64(c->nfs, path, st), ok, path, NULL);
}

int wl_lstat(struct wl_client *c, const char *path, struct nfs_stat_64 *st, unsigned ok)
{
    return check(c, WL_C_LSTAT, nfs_lstat64(c->nfs, path, st), ok, path, NULL);
}

int wl_rename(struct wl_client *c, const char *from, const char *to, unsigned ok)
{
    return check(c, WL_C_RENAME, nfs_rename(c->nfs, from, to), ok, from, to);
}

int wl_link(struct wl_client *c, const char *from, const char *to, unsigned ok)
{
    return check(c, WL_C_LINK, nfs_link(c->nfs, from, to), ok, from, to);
}

int wl_unlink(struct wl_client *c, const char *path, unsigned ok)
{
    return check(c, WL_C_UNLINK, nfs_unlink(c->nfs, path), ok, path, NULL);
}

int wl_mkdir(struct wl_client *c, const char *path, int mode, unsigned ok)
{
    return check(c, WL_C_MKDIR, nfs_mkdir2(c->nfs, path, mode), ok, path, NULL);
}

int wl_rmdir(struct wl_client *c, const char *path, unsigned ok)
{
    return check(c, WL_C_RMDIR, nfs_rmdir(c->nfs, path), ok, path, NULL);
}

int wl_chmod(struct wl_client *c, const char *path, int mode, unsigned ok)
{
    return check(c, WL_C_CHMOD, nfs_chmod(c->nfs, path, mode), ok, path, NULL);
}

int wl_chown(struct wl_client *c, const char *path, int uid, int gid, unsigned ok)
{
    return check(c, WL_C_CHOWN, nfs_chown(c->nfs, path, uid, gid), ok, path, NULL);
}

int wl_lchown(struct wl_client *c, const char *path, int uid, int gid, unsigned ok)
{
    return check(c, WL_C_CHOWN, nfs_lchown(c->nfs, path, uid, gid), ok, path, NULL);
}

int wl_symlink(struct wl_client *c, const char *target, const char *path, unsigned ok)
{
    return check(c, WL_C_SYMLINK, nfs_symlink(c->nfs, target, path), ok, path, target);
}

int wl_readlink(struct wl_client *c, const char *path, char *buf, int len, unsigned ok)
{
    int rc;

    memset(buf, 0, (size_t)len);
    rc = check(c, WL_C_READLINK, nfs_readlink(c->nfs, path, buf, len - 1), ok, path, NULL);
    buf[len - 1] = '\0';
    return rc;
}

int wl_utimes(struct wl_client *c, const char *path, struct timeval *times, unsigned ok)
{
    return check(c, WL_C_UTIMES, nfs_utimes(c->nfs, path, times), ok, path, NULL);
}

/* ------------------------------------------------------------------ composite steps */

static void dirent_free(gpointer p)
{
    struct wl_dirent *e = p;

    g_free(e->name);
    g_free(e);
}

static gint dirent_cmp(gconstpointer a, gconstpointer b)
{
    const struct wl_dirent *x = *(const struct wl_dirent *const *)a;
    const struct wl_dirent *y = *(const struct wl_dirent *const *)b;

    return strcmp(x->name, y->name);
}

GPtrArray *wl_listdir(struct wl_client *c, const char *path, unsigned ok)
{
    struct nfsdir *dir;
    struct nfsdirent *ent;
    GPtrArray *out;

    if (check(c, WL_C_OPENDIR, nfs_opendir(c->nfs, path, &dir), ok, path, NULL) < 0)
        return NULL;
    out = g_ptr_array_new_with_free_func(dirent_free);
    while ((ent = nfs_readdir(c->nfs, dir)) != NULL) {
        struct wl_dirent *e;

        if (strcmp(ent->name, ".") == 0 || strcmp(ent->name, "..") == 0)
            continue;
        e = g_new0(struct wl_dirent, 1);
        e->name = g_strdup(ent->name);
        e->type = ent->type;
        e->mode = ent->mode;
        e->uid = ent->uid;
        e->gid = ent->gid;
        e->nlink = ent->nlink;
        e->size = ent->size;
        e->mtime = ent->mtime.tv_sec;
        g_ptr_array_add(out, e);
    }
    nfs_closedir(c->nfs, dir);
    g_ptr_array_sort(out, dirent_cmp);
    return out;
}

int64_t wl_read_file(struct wl_client *c, const char *path, uint64_t from, uint32_t chunk,
                     GString *out, struct nfs_stat_64 *st, unsigned ok)
{
    struct nfs_stat_64 own;
    struct nfsfh *fh;
    char *buf;
    int64_t total = 0, n = 0;
    int rc = wl_open(c, path, O_RDONLY, &fh, ok);

    if (rc < 0)
        return rc;
    /* The file may go while open (another client removed it): ESTALE, if OK allows. */
    if ((rc = fstat_ok(c, fh, path, st ? st : &own, ok)) < 0)
        goto out;
    buf = g_malloc(chunk);
    do {
        n = pread_ok(c, fh, path, from + (uint64_t)total, chunk, buf, ok);
        if (n > 0 && out)
            g_string_append_len(out, buf, n);
        total += MAX(n, 0);
    } while (n == (int64_t)chunk);
    g_free(buf);
    rc = n < 0 ? (int)n : 0;
out:
    if (close_ok(c, fh, path, ok) < 0 && rc == 0)
        rc = -ESTALE;
    return rc < 0 ? rc : total;
}

int wl_write_file(struct wl_client *c, const char *path, int flags, int mode, const char *data,
                  size_t len, uint32_t chunk, unsigned ok)
{
    struct nfsfh *fh;
    int rc = wl_create(c, path, flags | O_WRONLY, mode, &fh, ok);

    if (rc < 0)
        return rc;
    for (size_t off = 0; off < len && rc == 0; off += chunk)
        rc = pwrite_ok(c, fh, path, off, MIN((size_t)chunk, len - off), data + off, ok);
    if (close_ok(c, fh, path, ok) < 0 && rc == 0)
        rc = -ESTALE;
    return rc;
}

static void sleep_us(double us)
{
    struct timespec ts = { .tv_sec = (time_t)(us / 1e6),
                           .tv_nsec = (long)fmod(us * 1000.0, 1e9) };

    if (us >= 1.0)
        nanosleep(&ts, NULL);
}

/* One attempt: LINK, then the link count of the unique file tells who won. */
static bool lock_try(struct wl_client *c, const char *tmp, const char *lock)
{
    struct nfs_stat_64 st;

    wl_link(c, tmp, lock, WL_OK_EXIST);
    wl_lstat(c, tmp, &st, 0);
    return st.nfs_nlink == 2;
}

void wl_dotlock(struct wl_client *c, const char *file)
{
    char tmp[WL_PATH], lock[WL_PATH];
    struct nfsfh *fh;
    char pid[32];
    int n = g_snprintf(pid, sizeof(pid), "%u\n", c->pid);

    wl_path(c, lock, "%s.lock", file);
    wl_path(c, tmp, "%s.lock.%s.%u", file, c->machine, c->pid);
    wl_create(c, tmp, O_EXCL | O_WRONLY, 0644, &fh, 0);
    wl_pwrite(c, fh, tmp, 0, (uint64_t)n, pid);
    wl_close(c, fh, tmp);
    for (int tries = 1; !lock_try(c, tmp, lock); tries++) {
        if (tries >= LOCK_TRIES)
            wl_fail(c, "dot-lock %s: still held by another client after %d tries", lock, tries);
        c->st->lock_retries++;
        /* Back off 1, 2, 4 .. 16 ms, with jitter (mail programs sleep a second or more). */
        sleep_us((1000 << MIN(tries - 1, 4)) * (0.5 + g_rand_double(c->timing)));
    }
    wl_unlink(c, tmp, 0);
}

void wl_dotunlock(struct wl_client *c, const char *file)
{
    char lock[WL_PATH];

    wl_unlink(c, wl_path(c, lock, "%s.lock", file), 0);
}

void wl_set_creds(struct wl_client *c, const struct wl_ident *id)
{
    uint32_t gids[WL_MAX_GIDS];
    struct AUTH *auth;

    memcpy(gids, id->gids, sizeof(gids));
    auth = libnfs_authunix_create(c->machine, id->uid, id->gid, id->ngids, gids);
    if (!auth)
        wl_fail(c, "cannot create AUTH_SYS credentials for uid %u", id->uid);
    nfs_set_auth(c->nfs, auth);       /* libnfs frees the previous one */
}

char *wl_path(struct wl_client *c, char *buf, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = g_vsnprintf(buf, WL_PATH, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= WL_PATH)
        wl_fail(c, "path too long: %.60s...", buf);
    return buf;
}

/* ------------------------------------------------------------------ randomness */

double wl_rand_exp(GRand *r, double mean)
{
    return -mean * log(1.0 - g_rand_double(r));
}

uint64_t wl_rand_lognormal(GRand *r, double median, double sigma, uint64_t lo, uint64_t hi)
{
    double u1 = 1.0 - g_rand_double(r), u2 = g_rand_double(r);
    double z = sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
    double v = median * exp(sigma * z);

    return CLAMP((uint64_t)v, lo, hi);
}

int wl_rand_zipf(GRand *r, int n, double s)
{
    double total = 0.0, x;

    for (int i = 0; i < n; i++)
        total += 1.0 / pow(i + 1, s);
    x = g_rand_double(r) * total;
    for (int i = 0; i < n; i++) {
        x -= 1.0 / pow(i + 1, s);
        if (x < 0)
            return i;
    }
    return n - 1;
}

int wl_rand_weighted(GRand *r, const double *w, int n)
{
    double total = 0.0, x;

    for (int i = 0; i < n; i++)
        total += w[i];
    x = g_rand_double(r) * total;
    for (int i = 0; i < n; i++) {
        x -= w[i];
        if (x < 0 && w[i] > 0)
            return i;
    }
    for (int i = n - 1; i > 0; i--)
        if (w[i] > 0)
            return i;
    return 0;
}

void wl_begin_op(struct wl_client *c, enum wl_op op)
{
    if (c->op)
        g_rand_free(c->op);
    c->op = g_rand_new_with_seed(g_rand_int(c->intent));
    c->st->ops[op]++;
}
