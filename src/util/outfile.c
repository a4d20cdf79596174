/* SPDX-License-Identifier: MIT */
/*
 * Output files written aside and renamed into place on success (see outfile.h):
 * symbolic links followed to their final target, non-regular targets written in
 * place, every write, flush, sync and close checked.  The atomic replace is the
 * usual POSIX one (rename(2) of a file in the same directory); no RFC applies.
 */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "util/util.h"

#define MAX_LINKS 40        /* as the kernel's ELOOP limit */
#define TEMP_BASE_MAX 200   /* bytes of the target's name in its temporary's */

struct tbbt_outfile {
    char *name;             /* as given */
    char *target;           /* final target after symlinks; NULL for "-" */
    char *tmp;              /* temporary (beside target, or spool in TMPDIR); NULL in place */
    int fd;                 /* on tmp, or on the in-place target once streamed; else -1 */
    FILE *stream;           /* tbbt_outfile_stream()'s, or NULL */
    bool keep_mode;         /* replace a regular file: give the temporary its mode */
    mode_t mode;
    bool spool;             /* tmp is copied to target at commit */
    int werr;               /* errno of the stream's first failed write */
};

/* The output's name in messages. */
static const char *shown(const struct tbbt_outfile *o)
{
    return o->target ? o->name : "standard output";
}

static bool is_special_path(const char *p)
{
    return g_str_has_prefix(p, "/dev/") || g_str_has_prefix(p, "/proc/");
}

/*
 * Follows symbolic links from path to the final target (given: g_free), which
 * need not exist; *st is its lstat and *exists says whether it does.  -errno.
 */
static int follow_links(const char *path, char **target, struct stat *st, bool *exists)
{
    char *p = g_strdup(path);

    for (int hops = 0;; hops++) {
        char *link, *dir;

        if (is_special_path(p)) {   /* /dev/stdout, /proc/self/fd/N: opened as named */
            *exists = stat(p, st) == 0;
            *target = p;
            return 0;
        }
        if (lstat(p, st) < 0) {
            int e = errno;
            *exists = false;
            if (e == ENOENT) {
                *target = p;
                return 0;
            }
            g_free(p);
            return -e;
        }
        *exists = true;
        if (!S_ISLNK(st->st_mode)) {
            *target = p;
            return 0;
        }
        if (hops >= MAX_LINKS || !(link = g_file_read_link(p, NULL))) {
            int e = hops >= MAX_LINKS ? ELOOP : errno;
            g_free(p);
            return -(e ? e : EINVAL);
        }
        dir = g_path_get_dirname(p);
        g_free(p);
        p = g_path_is_absolute(link) ? g_strdup(link) : g_build_filename(dir, link, NULL);
        g_free(dir);
        g_free(link);
    }
}

char *tbbt_outfile_temp_template(const char *target)
{
    char *dir = g_path_get_dirname(target), *base = g_path_get_basename(target), *t;

    /* the name cut to TEMP_BASE_MAX bytes: ".NAME.tmp-XXXXXX" must fit NAME_MAX (255) */
    t = g_strdup_printf("%s/.%.*s.tmp-XXXXXX", dir, TEMP_BASE_MAX, base);
    g_free(dir);
    g_free(base);
    return t;
}

/* Creates o->tmp: beside the target, or in the temporary directory when spooling. */
static int make_temp(struct tbbt_outfile *o)
{
    char *tmpl;

    if (o->spool) {
        tmpl = g_build_filename(g_get_tmp_dir(), "tbbt-spool-XXXXXX", NULL);
    } else {
        tmpl = tbbt_outfile_temp_template(o->target);
    }
    o->fd = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0666);     /* 0666 less the umask */
    if (o->fd < 0) {
        int e = errno;
        g_free(tmpl);
        return -e;
    }
    o->tmp = tmpl;
    return 0;
}

static void outfile_free(struct tbbt_outfile *o)
{
    g_free(o->name);
    g_free(o->target);
    g_free(o->tmp);
    g_free(o);
}

struct tbbt_outfile *tbbt_outfile_new(const char *path, unsigned flags, int *rc, char *err,
                                      size_t errlen)
{
    struct tbbt_outfile *o = g_new0(struct tbbt_outfile, 1);
    struct stat st;
    bool exists = false, in_place;
    int r = 0;

    o->name = g_strdup(path);
    o->fd = -1;
    if (strcmp(path, "-") == 0)
        return o;
    if ((r = follow_links(path, &o->target, &st, &exists)) < 0) {
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", path, strerror(-r));
        goto fail;
    }
    in_place = is_special_path(o->target) || (exists && !S_ISREG(st.st_mode));
    if (!in_place && exists) {
        o->keep_mode = true;
        o->mode = st.st_mode & 07777;
    }
    o->spool = in_place && (flags & TBBT_OUTFILE_SPOOL);
    if ((!in_place || o->spool) && (r = make_temp(o)) < 0) {
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", path, strerror(-r));
        goto fail;
    }
    return o;
fail:
    *rc = r;
    outfile_free(o);
    return NULL;
}

const char *tbbt_outfile_path(const struct tbbt_outfile *o)
{
    return o->tmp ? o->tmp : o->target ? o->target : "-";
}

const char *tbbt_outfile_name(const struct tbbt_outfile *o)
{
    return o->name;
}

bool tbbt_outfile_in_place(const struct tbbt_outfile *o)
{
    return !o->tmp || o->spool;
}

/* Writes all of buf to fd; 0 or -errno. */
/* The stream's write function: keeps the first write error's errno for the message. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t len)
{
    struct tbbt_outfile *o = cookie;
    int rc = tbbt_write_all(o->fd, buf, len);

    if (rc < 0) {
        if (!o->werr)
            o->werr = -rc;
        errno = -rc;
        return 0;       /* fopencookie(3): 0 on error, never negative */
    }
    return (ssize_t)len;
}

FILE *tbbt_outfile_stream(struct tbbt_outfile *o, int *rc, char *err, size_t errlen)
{
    cookie_io_functions_t fns = { .write = cookie_write };   /* the fd is closed at commit */

    if (o->stream)
        return o->stream;
    if (!o->target) {
        o->stream = stdout;
        return o->stream;
    }
    if (o->fd < 0)      /* in place */
        o->fd = open(o->target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (o->fd < 0 || !(o->stream = fopencookie(o, "w", fns))) {
        *rc = -errno;
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", shown(o), strerror(errno));
    }
    return o->stream;
}

/* Copies the spool file (open on fd, any offset) to o->target; 0 or -errno. */
static int copy_spool(struct tbbt_outfile *o, int fd)
{
    char buf[1 << 16];
    int out = open(o->target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    ssize_t n;
    int rc = 0;

    if (out < 0)
        return -errno;
    if (lseek(fd, 0, SEEK_SET) < 0)
        rc = -errno;
    while (rc == 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno != EINTR)
            rc = -errno;
        else if (n > 0)
            rc = tbbt_write_all(out, buf, (size_t)n);
    }
    if (close(out) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* Flushes, syncs and closes what o holds open on the temporary (or in place); -errno. */
static int finish_writes(struct tbbt_outfile *o)
{
    int rc = 0;

    if (o->stream) {
        errno = 0;
        if (fflush(o->stream) != 0 || ferror(o->stream))
            rc = -(o->werr ? o->werr : errno ? errno : EIO);
        if (o->stream != stdout && fclose(o->stream) != 0 && rc == 0)
            rc = -(o->werr ? o->werr : errno ? errno : EIO);
        o->stream = NULL;
    }
    if (o->fd >= 0 && o->tmp) {
        if (rc == 0 && o->spool)
            rc = copy_spool(o, o->fd);
        else if (rc == 0 && fsync(o->fd) < 0)
            rc = -errno;
        if (rc == 0 && o->keep_mode && !o->spool && fchmod(o->fd, o->mode) < 0)
            rc = -errno;
    }
    if (o->fd >= 0 && close(o->fd) < 0 && rc == 0)
        rc = -errno;
    o->fd = -1;
    return rc;
}

/*
 * Syncs the directory that holds path, so that a rename into it survives a crash.  A
 * file system that cannot sync directories (EINVAL) is not an error.  0 or -errno.
 */
static int sync_dir_of(const char *path)
{
    char *dir = g_path_get_dirname(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

    g_free(dir);
    if (fd < 0)
        return -errno;
    if (fsync(fd) < 0 && errno != EINVAL)
        rc = -errno;
    close(fd);
    return rc;
}

int tbbt_outfile_commit(struct tbbt_outfile *o, char *err, size_t errlen)
{
    int rc;

    if (!o)
        return 0;
    rc = finish_writes(o);
    if (rc < 0) {
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", shown(o), strerror(-rc));
    } else if (o->tmp && !o->spool && rename(o->tmp, o->target) < 0) {
        rc = -errno;
        tbbt_errbuf(err, errlen, "cannot write '%s': rename from '%s': %s", o->name, o->tmp,
                    strerror(errno));
    } else if (o->tmp && !o->spool) {
        g_free(o->tmp);     /* renamed: nothing to remove */
        o->tmp = NULL;
        if ((rc = sync_dir_of(o->target)) < 0)
            tbbt_errbuf(err, errlen, "cannot write '%s': sync of its directory: %s", o->name,
                        strerror(-rc));
    }
    if (o->tmp)
        g_unlink(o->tmp);
    outfile_free(o);
    return rc;
}

void tbbt_outfile_abort(struct tbbt_outfile *o)
{
    if (!o)
        return;
    if (o->stream && o->stream != stdout)
        fclose(o->stream);      /* a failed flush here does not matter: dropped anyway */
    else if (o->stream)
        fflush(o->stream);
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp)
        g_unlink(o->tmp);
    outfile_free(o);
}

char *tbbt_outfile_resolve(const char *path, int *rc)
{
    struct stat st;
    bool exists;
    char *target = NULL;
    int r;

    if (strcmp(path, "-") == 0)
        return g_strdup(path);
    if ((r = follow_links(path, &target, &st, &exists)) < 0) {
        *rc = r;
        return NULL;
    }
    return target;
}

int tbbt_outfile_write_all(const char *path, const void *text, size_t len, char *err,
                           size_t errlen)
{
    int rc = 0;
    struct tbbt_outfile *o = tbbt_outfile_new(path, 0, &rc, err, errlen);
    FILE *f;

    if (!o)
        return rc;
    if (!(f = tbbt_outfile_stream(o, &rc, err, errlen))) {
        tbbt_outfile_abort(o);
        return rc;
    }
    errno = 0;
    if (len && fwrite(text, 1, len, f) != len) {
        rc = -(errno ? errno : EIO);
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", path, strerror(-rc));
        tbbt_outfile_abort(o);
        return rc;
    }
    return tbbt_outfile_commit(o, err, errlen);
}
