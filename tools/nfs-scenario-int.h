/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario: what its files share (the tool itself: nfs-scenario.c's comment).
 *
 *   nfs-scenario.c          the command line, the run, the per-procedure counts
 *   nfs-scenario-client.c   connections, the poll loop, waiting for a reply and checking it
 *   nfs-scenario-calls.c    one function per NFSv3 procedure, the callbacks that fill a
 *                           struct res from its reply, MOUNT MNT and UMNT
 *   nfs-scenario-script.c   the scripted scenario (every procedure, expected failures)
 *   nfs-scenario-random.c   --ops random calls in --inflight slots, checked against a model
 *
 * One thread runs everything: nothing here is thread-safe.  Every failed call or
 * unexpected reply ends the process (sc_die(), tool-die.h: exit code 1).  A test helper, built in
 * the build tree and never installed.
 */
#ifndef TBBT_TOOLS_NFS_SCENARIO_INT_H
#define TBBT_TOOLS_NFS_SCENARIO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "util/exit-codes.h"
#include "tool-die.h"

#define PROG "nfs-scenario"
#define FH_MAX 64              /* NFS3_FHSIZE */
#define NPROC3 22              /* NFSv3 procedures 0..21 */
#define STALL_MS 30000         /* no reply for this long: the server is gone */
#define FILE_SPAN 65536        /* random writes stay below this offset */

/* NFSv3 procedure numbers (RFC 1813 section 3), used for the per-procedure counters. */
enum proc3 {
    P_NULL, P_GETATTR, P_SETATTR, P_LOOKUP, P_ACCESS, P_READLINK, P_READ, P_WRITE,
    P_CREATE, P_MKDIR, P_SYMLINK, P_MKNOD, P_REMOVE, P_RMDIR, P_RENAME, P_LINK,
    P_READDIR, P_READDIRPLUS, P_FSSTAT, P_FSINFO, P_PATHCONF, P_COMMIT,
};

/* Their names, by number ("NULL", "GETATTR", ...). */
extern const char *const sc_proc_names[NPROC3];

struct fh {
    uint32_t len;
    char data[FH_MAX];
};

/* One connection (MOUNT or NFS) with its poll loop and counters. */
struct client {
    struct rpc_context *rpc;
    const char *what;
    uint64_t calls[NPROC3];
};

/* Time of the last call sent or reply received, for the stall check. */
extern gint64 sc_last_activity;

struct res;
typedef void (*res_done_cb)(struct res *r);

/*
 * The outcome of one call, filled by the callback from data that is only valid during
 * the callback.  `then` (may be NULL) runs after it is filled; `arg` is for its owner.
 */
struct res {
    bool done;
    int rpc_status;          /* RPC_STATUS_* */
    int status;              /* nfsstat3 or mountstat3 */
    char err[160];           /* RPC-level error text */
    struct fh fh;            /* new object: LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD, MNT */
    bool have_attr;
    uint32_t type, nlink, mode;
    uint64_t size;
    uint32_t count;          /* READ, WRITE */
    bool eof;                /* READ, READDIR(PLUS) */
    char *rbuf;              /* READ: where to copy the data (borrowed), or NULL */
    uint32_t rbuf_len;
    uint64_t cookie;         /* READDIR(PLUS): last cookie of the page */
    char verf[NFS3_COOKIEVERFSIZE];
    uint32_t nent;
    GString *names;          /* READDIR(PLUS): names appended "/name" (borrowed) or NULL */
    char path[1024];         /* READLINK */
    res_done_cb then;
    void *arg;
};

struct config {
    char *server;
    char *path;              /* exported directory to mount */
    int nfs_port;            /* 0: ask the portmapper */
    int mount_port;
    gint64 ops;
    gint64 seed;
    int inflight;
    int max_io;              /* largest random READ or WRITE */
    bool no_rename_over;     /* Ganesha's MEM FSAL cannot rename over a file it holds open */
    bool verbose;
};

/* The tree of the scripted scenario. */
struct tree {
    struct fh root, top, a, b, sub, f1, f2, f3, sym;
    char topname[64];
    bool no_rename_over;
};

/* ---- nfs-scenario-client.c */

/* Prints "nfs-scenario: " and the message to stderr and exits with TBBT_EXIT_FAIL. */
#define sc_die(...) tool_die(PROG, __VA_ARGS__)

/* "NFS3_OK", "NFS3ERR_NOENT", ...: a static string. */
const char *sc_stat3_name(int st);

/* Connects c to PROGRAM v3 at PORT, or through the portmapper when PORT is 0. */
void sc_client_connect(struct client *c, const struct config *cfg, int program, int port);

/* One round of the poll loop (at most timeout_ms): replies run their callbacks. */
void sc_client_service(struct client *c, int timeout_ms);

/* Runs the loop until *flag is true; dies when nothing happens for STALL_MS. */
void sc_client_wait(struct client *c, const bool *flag);

/* Waits for R and checks its status; WHAT names the call in the error message. */
void sc_expect(struct client *c, struct res *r, int want, const char *what);
#define OK(c, r, what) sc_expect((c), (r), NFS3_OK, (what))

/* ---- nfs-scenario-calls.c: each sends one call (r borrowed until it is done: r->done,
 * then r->then runs) and counts it; a call that cannot be sent ends the run. */

/* Prepares R for a new call; the rest of R (then, arg, rbuf, names) is kept. */
void sc_res_reset(struct res *r);
void sc_op_null(struct client *c, struct res *r);
void sc_op_getattr(struct client *c, struct res *r, const struct fh *fh);
void sc_op_setattr(struct client *c, struct res *r, const struct fh *fh, const sattr3 *sa);
void sc_op_lookup(struct client *c, struct res *r, const struct fh *dir, const char *name);
void sc_op_access(struct client *c, struct res *r, const struct fh *fh);
void sc_op_readlink(struct client *c, struct res *r, const struct fh *fh);
void sc_op_read(struct client *c, struct res *r, const struct fh *fh, uint64_t off,
                uint32_t count);
void sc_op_write(struct client *c, struct res *r, const struct fh *fh, uint64_t off,
                 const char *buf, uint32_t count, stable_how stable);
void sc_op_create(struct client *c, struct res *r, const struct fh *dir, const char *name,
                  createmode3 mode);
void sc_op_mkdir(struct client *c, struct res *r, const struct fh *dir, const char *name);
void sc_op_symlink(struct client *c, struct res *r, const struct fh *dir, const char *name,
                   const char *target);
void sc_op_mknod_fifo(struct client *c, struct res *r, const struct fh *dir,
                      const char *name);
void sc_op_remove(struct client *c, struct res *r, const struct fh *dir, const char *name);
void sc_op_rmdir(struct client *c, struct res *r, const struct fh *dir, const char *name);
void sc_op_rename(struct client *c, struct res *r, const struct fh *from_dir,
                  const char *from, const struct fh *to_dir, const char *to);
void sc_op_link(struct client *c, struct res *r, const struct fh *file,
                const struct fh *dir, const char *name);
void sc_op_readdir(struct client *c, struct res *r, const struct fh *dir, bool plus,
                   uint64_t cookie, uint32_t count);
void sc_op_fsstat(struct client *c, struct res *r, const struct fh *fh);
void sc_op_fsinfo(struct client *c, struct res *r, const struct fh *fh);
void sc_op_pathconf(struct client *c, struct res *r, const struct fh *fh);
void sc_op_commit(struct client *c, struct res *r, const struct fh *fh);

/* MOUNT NULL and MNT of cfg->path on m (waited for): the export's root handle. */
void sc_mount_export(struct client *m, const struct config *cfg, struct fh *root);
/* MOUNT UMNT of cfg->path (waited for). */
void sc_unmount_export(struct client *m, const struct config *cfg);

/* ---- nfs-scenario-script.c */

/* The scripted scenario, in this order; t->root and t->topname set by the caller. */
void sc_scenario_start(struct client *c, struct tree *t);
void sc_scenario_files(struct client *c, struct tree *t);
void sc_scenario_links(struct client *c, struct tree *t);
void sc_scenario_renames(struct client *c, struct tree *t);
void sc_scenario_cleanup(struct client *c, struct tree *t);

/* Fills BUF with a pattern that depends on the file offset, so reads can be checked. */
void sc_pattern(char *buf, uint64_t off, uint32_t len);
/* MKDIR of name in parent, checked: its handle in *out. */
void sc_make_dir(struct client *c, const struct fh *parent, const char *name,
                 struct fh *out, const char *what);
/* A sattr3 that sets nothing. */
sattr3 sc_sattr_none(void);

/* ---- nfs-scenario-random.c */

/* cfg->ops random calls in cfg->inflight slots under a new directory of root. */
void sc_run_random(struct client *c, const struct fh *root, const struct config *cfg);

#endif
