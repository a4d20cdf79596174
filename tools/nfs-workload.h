/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload: what the files of the lab's multi-client workload generator share.
 *
 *   nfs-workload.c        command line, the forked clients, the shared counters, JSON
 *   nfs-workload-site.c   the site's users and groups, and `setup` (the initial tree)
 *   nfs-workload-text.c   file contents: text, C sources, objects, mail messages
 *   nfs-workload-ops.c    checked libnfs high-level calls, dot-locking, small helpers
 *   nfs-workload-mail.c   the mail clients: delivery agents and user agents
 *   nfs-workload-home.c   the home-directory clients (shells, editors, builds)
 *
 * Every client is one process with its own libnfs context and so its own TCP
 * connection; everything here runs inside one client and is not thread-safe.  The
 * clients talk NFSv3 through libnfs's synchronous high-level API, so the wire carries
 * what that library sends for each call (path walks of LOOKUPs from the mount's root,
 * ACCESS on open, READDIRPLUS, UNSTABLE WRITEs and a COMMIT on close of a written file).
 * See docs/lab.md.  A test helper: built in the build tree, never installed.
 */
#ifndef TBBT_TOOLS_NFS_WORKLOAD_H
#define TBBT_TOOLS_NFS_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#define WL_PROG "nfs-workload"
#define WL_MAX_GIDS 16            /* AUTH_SYS carries at most 16 supplementary groups */
#define WL_PATH 1024
#define WL_NAME 32
#define WL_MAX_TOL 24             /* distinct kinds of tolerated error a client counts */
#define WL_MAIL_UID 8             /* Debian's mail user and group */
#define WL_MAIL_GID 8
#define WL_USERS_GID 100
#define WL_STAFF_GID 50
/* The site's "now" (2026-01-01 00:00 UTC): setup dates files up to a year before it and
 * the run's clients date their mail after it, whatever the wall clock says, so that a
 * seed gives the same names and contents. */
#define WL_SITE_EPOCH 1767225600

struct nfs_context;
struct nfsfh;
struct nfs_stat_64;

/* ------------------------------------------------------------------ identities */

/* A user (or daemon) as AUTH_SYS shows it: uid, primary gid, supplementary gids. */
struct wl_ident {
    char name[WL_NAME];
    uint32_t uid, gid;
    uint32_t ngids;
    uint32_t gids[WL_MAX_GIDS];
};

/* Fills *out with user I (0-based) of the site: a pure function of I. */
void wl_site_user(int i, struct wl_ident *out);
/* The mail daemon (uid and gid 8) and root. */
void wl_site_mail_ident(struct wl_ident *out);
void wl_site_root_ident(struct wl_ident *out);
/* Number of project groups of the site (6, whatever the number of users). */
int wl_site_nprojects(void);
/* Project group P (0-based): its gid and name ("proja", ...). */
uint32_t wl_site_project_gid(int p);
const char *wl_site_project_name(int p);
bool wl_ident_in_group(const struct wl_ident *id, uint32_t gid);

/* ------------------------------------------------------------------ what a client counts */

/* Workload operations (what a user or daemon means to do). */
enum wl_op {
    WL_OP_MBOX_DELIVER, WL_OP_MAILDIR_DELIVER, WL_OP_MBOX_CHECK, WL_OP_MBOX_READ,
    WL_OP_MBOX_EXPUNGE, WL_OP_MAILDIR_READ, WL_OP_MAILDIR_FLAG,
    WL_OP_LOGIN, WL_OP_LS, WL_OP_CAT, WL_OP_GREP, WL_OP_SAVE, WL_OP_BUILD, WL_OP_SCRATCH,
    WL_OP_CHMOD, WL_OP_CHGRP, WL_OP_SYMLINK, WL_OP_TOUCH, WL_OP_FIND, WL_OP_PROJECT,
    WL_N_OPS
};
extern const char *const wl_op_names[WL_N_OPS];

/* libnfs high-level calls, counted per client. */
enum wl_call {
    WL_C_MOUNT, WL_C_OPEN, WL_C_CREATE, WL_C_PREAD, WL_C_PWRITE, WL_C_FSYNC, WL_C_FTRUNCATE,
    WL_C_CLOSE, WL_C_STAT, WL_C_LSTAT, WL_C_FSTAT, WL_C_OPENDIR, WL_C_RENAME, WL_C_LINK,
    WL_C_UNLINK, WL_C_MKDIR, WL_C_RMDIR, WL_C_CHMOD, WL_C_CHOWN, WL_C_SYMLINK, WL_C_READLINK,
    WL_C_UTIMES,
    WL_N_CALLS
};
extern const char *const wl_call_names[WL_N_CALLS];

struct wl_tol {
    char what[WL_NAME];           /* "link EEXIST" */
    uint64_t n;
};

/*
 * One client's record.  It lives in memory shared with the parent (mmap MAP_SHARED):
 * the parent fills the identity before fork, the client writes the rest, and the parent
 * reads it after the client has exited.
 */
struct wl_stats {
    int index;
    char role[8];                 /* "mda", "mua", "home" */
    char machine[WL_NAME];
    struct wl_ident id;
    char mount[WL_PATH];          /* the exported path the client mounted */
    int local_port;               /* the client's end of its NFS connection */
    gint64 start_us, end_us;      /* wall clock, microseconds */
    gint64 cpu_us;                /* the client's CPU (user + system) from start to end */
    uint64_t ops[WL_N_OPS];
    uint64_t calls[WL_N_CALLS];
    uint64_t bytes_read, bytes_written, lock_retries;
    struct wl_tol tol[WL_MAX_TOL];
    int ntol;
    int exited;                   /* set by the client when it ends normally */
    int failed;
    char error[512];
};

/* ------------------------------------------------------------------ a client */

enum wl_role { WL_ROLE_MDA, WL_ROLE_MUA, WL_ROLE_HOME };

struct wl_home;

struct wl_client {
    struct nfs_context *nfs;
    struct wl_stats *st;          /* borrowed: shared memory */
    enum wl_role role;
    struct wl_ident id;           /* the credentials the client normally uses */
    char machine[WL_NAME];
    bool subdir;                  /* mounted a subdirectory, not the export's root */
    /* Paths as seen through the mount ("" is its root); empty string = unreachable. */
    char home[WL_PATH];           /* the user's home: "" (subdir mount) or "/home/NAME" */
    char spool[WL_PATH];          /* the mbox directory: "/mail" or "" */
    bool has_home, has_spool;
    int nusers;
    GRand *intent;                /* the client's sequence of intentions */
    GRand *op;                    /* this operation's choices: seeded from `intent` */
    GRand *timing;                /* think times and lock back-off */
    uint32_t pid;                 /* the pid a process of this client would have */
    int64_t vtime;                /* virtual clock (seconds) for names and dates */
    uint64_t mbox_seen;           /* user agents: the mbox size they last read up to */
    struct nfsfh *mbox_fh;        /* user agents: their mbox, kept open once checked */
    struct wl_home *hm;           /* home clients' model of their tree */
};

/* ------------------------------------------------------------------ checked calls */

/*
 * Errors a real client shrugs off at this call.  Any other error (or these without
 * the flag) makes wl_fail() print one line and end the client with exit code 1.
 */
#define WL_OK_NOENT (1u << 0)
#define WL_OK_EXIST (1u << 1)
#define WL_OK_NOTEMPTY (1u << 2)
#define WL_OK_STALE (1u << 3)
/* What a client tolerates on objects other clients may remove or rename meanwhile:
 * the name is gone (ENOENT), or the object went after the lookup (ESTALE). */
#define WL_OK_RACE (WL_OK_NOENT | WL_OK_STALE)

void wl_fail(struct wl_client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Each returns 0 (or a count) on success, or -errno of an error allowed by OK.  The
 * handle calls allow no error: the mbox and the files a client is writing are removed
 * by no one else while it holds them. */
int wl_open(struct wl_client *c, const char *path, int flags, struct nfsfh **fh, unsigned ok);
int wl_create(struct wl_client *c, const char *path, int flags, int mode, struct nfsfh **fh,
              unsigned ok);
int64_t wl_pread(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t off,
                 uint64_t len, char *buf);
void wl_pwrite(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t off,
               uint64_t len, const char *buf);
void wl_fsync(struct wl_client *c, struct nfsfh *fh, const char *path);
void wl_ftruncate(struct wl_client *c, struct nfsfh *fh, const char *path, uint64_t len);
void wl_fstat(struct wl_client *c, struct nfsfh *fh, const char *path, struct nfs_stat_64 *st);
void wl_close(struct wl_client *c, struct nfsfh *fh, const char *path);
int wl_stat(struct wl_client *c, const char *path, struct nfs_stat_64 *st, unsigned ok);
int wl_lstat(struct wl_client *c, const char *path, struct nfs_stat_64 *st, unsigned ok);
int wl_rename(struct wl_client *c, const char *from, const char *to, unsigned ok);
int wl_link(struct wl_client *c, const char *from, const char *to, unsigned ok);
int wl_unlink(struct wl_client *c, const char *path, unsigned ok);
int wl_mkdir(struct wl_client *c, const char *path, int mode, unsigned ok);
int wl_rmdir(struct wl_client *c, const char *path, unsigned ok);
int wl_chmod(struct wl_client *c, const char *path, int mode, unsigned ok);
int wl_chown(struct wl_client *c, const char *path, int uid, int gid, unsigned ok);
int wl_lchown(struct wl_client *c, const char *path, int uid, int gid, unsigned ok);
int wl_symlink(struct wl_client *c, const char *target, const char *path, unsigned ok);
int wl_readlink(struct wl_client *c, const char *path, char *buf, int len, unsigned ok);
/* TIMES NULL: the server's current time (SET_TO_SERVER_TIME). */
int wl_utimes(struct wl_client *c, const char *path, struct timeval *times, unsigned ok);

/* One directory entry with the attributes READDIRPLUS brought. */
struct wl_dirent {
    char *name;
    uint32_t type;                /* NF3REG, NF3DIR, NF3LNK, ... */
    uint32_t mode, uid, gid, nlink;
    uint64_t size;
    int64_t mtime;
};

/*
 * Lists directory PATH (opendir, readdir to the end, closedir) without "." and "..",
 * sorted by name as ls and MUAs sort (the server's order differs between file systems:
 * ext4 hashes names with a seed of its own, and choices must not depend on it).
 * Returns a GPtrArray of struct wl_dirent (given: g_ptr_array_unref() frees all), or
 * NULL when an error allowed by OK happened.
 */
GPtrArray *wl_listdir(struct wl_client *c, const char *path, unsigned ok);

/*
 * Reads file PATH from FROM to its end as programs do: open, fstat (into ST when not
 * NULL), CHUNK-byte preads until a short one, close; the data goes to OUT when not NULL.
 * Returns the bytes read, or -errno allowed by OK (at any call: the file may go).
 */
int64_t wl_read_file(struct wl_client *c, const char *path, uint64_t from, uint32_t chunk,
                     GString *out, struct nfs_stat_64 *st, unsigned ok);
/*
 * Writes LEN bytes of DATA as file PATH created with FLAGS (O_EXCL or O_TRUNC) and
 * MODE, in CHUNK-byte WRITEs, then closes it (libnfs commits on close).  Returns 0 or
 * -errno allowed by OK (at any call: the file may go).
 */
int wl_write_file(struct wl_client *c, const char *path, int flags, int mode, const char *data,
                  size_t len, uint32_t chunk, unsigned ok);

/*
 * Dot-locks FILE the way mail programs do over NFS: a unique FILE.lock.MACHINE.PID is
 * created and LINKed to FILE.lock; EEXIST means someone else holds it: wait a little and
 * try again (after 4000 tries the client fails).  The temporary name is removed once
 * the lock is held.  wl_dotunlock() removes FILE.lock.
 */
void wl_dotlock(struct wl_client *c, const char *file);
void wl_dotunlock(struct wl_client *c, const char *file);

/* Switches the client's AUTH_SYS credentials (libnfs_authunix_create + nfs_set_auth). */
void wl_set_creds(struct wl_client *c, const struct wl_ident *id);

/* g_strdup_printf into a caller buffer of WL_PATH bytes; fails the client if too long. */
char *wl_path(struct wl_client *c, char *buf, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ randomness */

/* Exponential with mean MEAN; lognormal exp(N(ln MEDIAN, SIGMA)) clamped to [LO, HI]. */
double wl_rand_exp(GRand *r, double mean);
uint64_t wl_rand_lognormal(GRand *r, double median, double sigma, uint64_t lo, uint64_t hi);
/* Index 0..n-1, Zipf-like (index i has weight 1/(i+1)^S). */
int wl_rand_zipf(GRand *r, int n, double s);
/* Index of the weight chosen among N weights (not all zero). */
int wl_rand_weighted(GRand *r, const double *w, int n);
/* Starts the per-operation stream c->op from c->intent. */
void wl_begin_op(struct wl_client *c, enum wl_op op);

/* ------------------------------------------------------------------ contents */

/* Append about SIZE bytes of the kind of content to OUT, drawn from R. */
void wl_text_prose(GRand *r, GString *out, size_t size);
void wl_text_csource(GRand *r, GString *out, size_t size, const char *name);
void wl_text_header(GRand *r, GString *out, size_t size, const char *name);
void wl_text_binary(GRand *r, GString *out, size_t size, const char *magic);
void wl_text_history(GRand *r, GString *out, size_t size);
/*
 * One mail message from FROM to TO (user names) dated WHEN, about BODY bytes, with an
 * attachment sometimes.  MBOX: with its "From " separator line and ">From " quoting.
 */
void wl_text_message(GRand *r, GString *out, const char *from, const char *to, int64_t when,
                     size_t body, bool mbox);
/* A random message body size, the lognormal of mail (median ~3 KiB, some attachments). */
size_t wl_text_message_size(GRand *r);

/* ------------------------------------------------------------------ the workloads */

/* Runs one operation of the client's role, chosen by c->intent. */
void wl_mail_step(struct wl_client *c);
void wl_home_step(struct wl_client *c);
/* Prepares a home client (its model of its tree: a find-like walk). */
void wl_home_start(struct wl_client *c);

/* `setup`: builds the site under the mounted export as root.  Returns an exit code. */
struct wl_setup_cfg {
    int users;
    int64_t seed;
    double scale;
    bool verbose;
};
int wl_setup(struct wl_client *c, const struct wl_setup_cfg *cfg);

#endif
