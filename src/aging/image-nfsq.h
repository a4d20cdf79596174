/* SPDX-License-Identifier: MIT */
/*
 * The request engine of tbbt-init's NFS backend (image-nfs.c): NFSv3 calls (RFC 1813)
 * on one or more rpcconn connections, pipelined.  A request names the objects it needs
 * (a directory for a name, a file for data) by their index in the namespace; a request
 * whose objects have no handle yet waits on the first of them and is sent as soon as
 * the reply that makes it (MKDIR, CREATE, ...) gives the handle.  At most `outstanding`
 * calls and 16 MiB of WRITE data are in flight; the caller (the thread that builds the
 * image, the only thread here) runs ahead of the server by up to 16384 requests and is
 * held back only then.
 *
 * The namespace: objects by path (relative to the current base directory: the root
 * before the clones, then each clone directory), each with its handle once known, its
 * type, the bytes appended so far, and counters of the requests still working on it.
 * Replies do the follow-up work themselves: a COMMIT once a file's UNSTABLE WRITEs
 * are answered (the server's write verifier is checked), the rest of a short WRITE, a
 * LOOKUP when a create reply has no handle, a retry after NFS3ERR_JUKEBOX.
 *
 * Errors: the first NFS error (other than those a request asks to see itself), RPC
 * error, lost connection or reply overdue by `timeout_ms` stops everything: its one-line
 * reason goes to the error buffer (`CREATE 'a/b': NFS3ERR_NOSPC`) and every later call
 * returns the error.  Nothing here is thread-safe.
 */
#ifndef TBBT_AGING_IMAGE_NFSQ_H
#define TBBT_AGING_IMAGE_NFSQ_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "aging/image-int.h"
#include "proto/nfs3.h"
#include "onc/rpcconn.h"
#include "util/dlist.h"

#define TBBT__NFSQ_NONE UINT32_MAX

enum tbbt__nfsq_kind {
    TBBT__NFSQ_MKDIR, TBBT__NFSQ_CREATE, TBBT__NFSQ_SYMLINK, TBBT__NFSQ_MKNOD,
    TBBT__NFSQ_LINK, TBBT__NFSQ_WRITE, TBBT__NFSQ_COMMIT, TBBT__NFSQ_SETATTR,
    TBBT__NFSQ_REMOVE, TBBT__NFSQ_RMDIR, TBBT__NFSQ_LOOKUP, TBBT__NFSQ_GETATTR,
    TBBT__NFSQ_FSSTAT, TBBT__NFSQ_FSINFO, TBBT__NFSQ_READ, TBBT__NFSQ_READDIR,
    TBBT__NFSQ_KINDS
};

/* Request flags. */
#define TBBT__NFSQ_WAIT 1u      /* the caller waits for it (tbbt__nfsq_run()) and frees it */
#define TBBT__NFSQ_QUIET 2u     /* an NFS error is the caller's to handle, not fatal */
#define TBBT__NFSQ_FORCE 4u     /* --force removal: NOENT is fine, other errors fatal */
#define TBBT__NFSQ_DONE 8u      /* answered (status set) */
#define TBBT__NFSQ_NOCOUNT 16u  /* WRITE: not image data (the marker): not in the stats */

/* The results a request may decode into (the one of its kind). */
union tbbt__nfsq_res {
    CREATE3res create;
    MKDIR3res mkdir;
    SYMLINK3res symlink;
    MKNOD3res mknod;
    WRITE3res write;
    COMMIT3res commit;
    LOOKUP3res lookup;
    GETATTR3res getattr;
    FSSTAT3res fsstat;
    FSINFO3res fsinfo;
    READ3res read;
    READDIR3res readdir;
};

/* One NFS call.  Given by tbbt__nfsq_req(); owned by the engine once submitted, except
 * with TBBT__NFSQ_WAIT (the caller frees it with tbbt__nfsq_req_free()). */
struct tbbt__nfsq_req {
    struct tbbt_dlink link;     /* in a struct tbbt_dlist of requests (a queue) */
    uint8_t kind;               /* enum tbbt__nfsq_kind */
    uint8_t stable;             /* WRITE: stable_how */
    uint8_t flags;
    bool set_size;              /* SETATTR: the size (else the mode and owner of a) */
    uint32_t obj;               /* the object made or worked on, or NONE */
    uint32_t dir;               /* the directory of name, or NONE */
    uint32_t type;              /* MKNOD: ftype3 */
    const char *name;           /* the name in dir (borrowed: an interned path's tail or own) */
    char *own;                  /* owned: SYMLINK's target, a name */
    struct tbbt__image_attrs a; /* CREATE, MKDIR, SYMLINK, MKNOD, SETATTR */
    uint32_t dflt_mode;         /* the mode when a is not known */
    uint64_t offset;            /* WRITE, READ, SETATTR size; READDIR: the cookie */
    uint32_t count;             /* WRITE, READ */
    const void *data;           /* WRITE: count bytes (borrowed until answered) */
    uint8_t cookieverf[NFS3_COOKIEVERFSIZE];   /* READDIR */
    uint64_t due_ns;            /* JUKEBOX: not before */
    int status;                 /* when DONE: nfsstat3, or a negative error */
    union tbbt__nfsq_res res;   /* when DONE with status 0 and a decoded kind */
};


/* An object of the namespace. */
struct tbbt__nfsq_obj {
    const char *path;           /* interned, relative to the base ("." for the base) */
    uint32_t fh;                /* offset of its handle in fhs, when known */
    uint8_t fh_len;
    bool known;                 /* the handle is there */
    bool dirty;                 /* UNSTABLE data not committed yet */
    uint8_t type;               /* ftype3 (what it was made as, or the server said) */
    uint32_t busy;              /* requests on it (or, for a directory, removals in it)
                                 * not answered yet */
    uint32_t writes;            /* UNSTABLE WRITEs not answered yet */
    uint64_t size;              /* bytes appended: the next WRITE's offset */
    struct tbbt_dlist wait;         /* requests waiting for its handle */
};

struct tbbt__nfsq {
    struct tbbt_rpcconn **c;
    unsigned nc;
    const char *server;         /* borrowed: for messages */
    char *errbuf;               /* the build's error buffer */
    size_t errlen;
    struct tbbt_image_stats *st;    /* bytes, appends */
    uint64_t *done_bytes;
    unsigned max_out;
    uint64_t timeout_ns;
    /* the namespace */
    GArray *objs;               /* struct tbbt__nfsq_obj; 0 is the base directory */
    GHashTable *by_path;        /* interned path -> index + 1 */
    GStringChunk *strings;
    GByteArray *fhs;
    char *prefix;               /* shown before paths in messages ("" or "tbbt-clone-K/") */
    /* the requests */
    struct tbbt_dlist ready, delayed;
    unsigned queued;            /* submitted, not answered: waiting, ready, delayed, in flight */
    unsigned inflight;          /* handed to a connection */
    unsigned unflushed;         /* of them, not yet flushed */
    uint64_t wbytes;            /* WRITE data in flight */
    unsigned since_recv;
    uint64_t next_expire_ns;
    bool have_verf;
    uint8_t verf[NFS3_WRITEVERFSIZE];
    int fatal;                  /* the error that stopped everything, 0 */
};

/* Initializes q (caller storage) over the connections c[0..nc) (taken: freed by
 * tbbt__nfsq_fini()). */
void tbbt__nfsq_init(struct tbbt__nfsq *q, struct tbbt_rpcconn **c, unsigned nc,
                     const char *server, unsigned max_out, int timeout_ms, char *errbuf,
                     size_t errlen, struct tbbt_image_stats *st, uint64_t *done_bytes);

/* Drops everything in flight (no waiting), the namespace and the connections. */
void tbbt__nfsq_fini(struct tbbt__nfsq *q);

/* A new, empty namespace whose base directory (object 0, ".") has handle fh; prefix
 * (borrowed) goes before paths in messages.  Nothing may be outstanding. */
void tbbt__nfsq_ns_reset(struct tbbt__nfsq *q, const struct tbbt_rpcconn_fh *fh,
                         const char *prefix);

/* The object at path, or NONE. */
uint32_t tbbt__nfsq_find(struct tbbt__nfsq *q, const char *path);

/* A new object at path (interned), of type ftype3, without a handle; its index. */
uint32_t tbbt__nfsq_obj_new(struct tbbt__nfsq *q, const char *path, uint32_t type);

/* Another path of object i (a hard link); forgets a path (removed). */
void tbbt__nfsq_alias(struct tbbt__nfsq *q, const char *path, uint32_t i);
void tbbt__nfsq_forget(struct tbbt__nfsq *q, const char *path);

/* Object i gets handle fh (len bytes) and type; its waiting requests become ready. */
void tbbt__nfsq_bind(struct tbbt__nfsq *q, uint32_t i, const void *fh, uint32_t len,
                     uint32_t type);

static inline struct tbbt__nfsq_obj *tbbt__nfsq_obj(struct tbbt__nfsq *q, uint32_t i)
{
    return &g_array_index(q->objs, struct tbbt__nfsq_obj, i);
}

/* The handle of object i (known) as an nfs_fh3 (valid until the next bind). */
void tbbt__nfsq_fh(struct tbbt__nfsq *q, uint32_t i, nfs_fh3 *fh);

/* A zeroed request of kind (given: submit it, or free it with tbbt__nfsq_req_free()). */
struct tbbt__nfsq_req *tbbt__nfsq_req(enum tbbt__nfsq_kind kind, uint32_t obj, uint32_t dir,
                                      const char *name);

/* Frees r and its decoded results. */
void tbbt__nfsq_req_free(struct tbbt__nfsq_req *r);

/*
 * Submits r (taken, unless TBBT__NFSQ_WAIT): sent when its objects have handles and
 * there is room.  May wait for replies first (flow control).  Returns 0, or the fatal
 * error (r then freed, unless WAIT).
 */
int tbbt__nfsq_submit(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r);

/*
 * Submits r with TBBT__NFSQ_WAIT and waits for its reply.  Returns 0 with r->status
 * (nfsstat3: only an error with TBBT__NFSQ_QUIET) and r->res, or the fatal error.  The
 * caller frees r either way.
 */
int tbbt__nfsq_run(struct tbbt__nfsq *q, struct tbbt__nfsq_req *r);

/* Waits until nothing is outstanding; 0 or the fatal error. */
int tbbt__nfsq_barrier(struct tbbt__nfsq *q);

/* Waits until no request works on object i; 0 or the fatal error. */
int tbbt__nfsq_idle(struct tbbt__nfsq *q, uint32_t i);

/* Queues WRITEs of len bytes (data: wsize bytes or more, borrowed until answered) at the
 * end of file i, of at most wsize each, stable as given, except that UNSTABLE data that
 * fits in one WRITE goes FILE_SYNC (the same as the WRITE and the file's COMMIT, one
 * call fewer); counts one append session. */
int tbbt__nfsq_write(struct tbbt__nfsq *q, uint32_t i, uint64_t len, stable_how stable,
                     const uint8_t *data, uint32_t wsize);

/* -errno for an nfsstat3. */
int tbbt__nfsq_errno(int status);

/* "NFS3ERR_NOSPC", ...: a static string. */
const char *tbbt__nfsq_status_name(int status);

#endif
