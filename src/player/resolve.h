/* SPDX-License-Identifier: MIT */
/*
 * resolve: the player's start-up (TBBT paper 3.4: before the replay, the player learns
 * the server's handle of every object of the initial image by looking up the paths that
 * tbbt-init made, as its manifest lists them: ns/manifest.h, tbbt_manifest_load(),
 * included here for the callers).  Two parts:
 *   - tbbt_resolve_mount(): the export's root handle, MOUNT v3 MNT (NFSv3) or MOUNT v1
 *     MNT (NFSv2, RFC 1094 Appendix A);
 *   - tbbt_resolve_run(): LOOKUPs of every wanted object of one clone, pipelined (up to
 *     max_outstanding in flight, each as soon as its directory's handle is known), into
 *     the player's TBBT-ID -> handle table (handles.h).
 *
 * What it does not do: read the hierarchy map (the caller passes the root's TBBT-ID),
 * build images, replay.  Objects tbbt-init made but the trace makes during the replay
 * are not in the manifest and are not looked up.
 *
 * Threading: nothing here is thread-safe; a manifest, once loaded, is read-only and may
 * be read by several threads.  tbbt_resolve_run() uses its connection exclusively.
 */
#ifndef TBBT_PLAYER_RESOLVE_H
#define TBBT_PLAYER_RESOLVE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns/manifest.h"
#include "player/handles.h"
#include "onc/rpcconn.h"

/*
 * The path of the manifest's image root relative to the export export_path (both
 * absolute server paths, borrowed): "" when they are the same directory, "a/b" when the
 * root lies at export_path/a/b (for tbbt_resolve_opts.root_path).  Pure string work, no
 * symlinks resolved; "." and empty components are skipped, ".." is refused.  Returns 0
 * and *rel (given: g_free()), or -EINVAL with the reason in err when root is not
 * under export_path.
 */
int tbbt_resolve_relpath(const char *export_path, const char *root, char **rel, char *err,
                         size_t errlen);

/*
 * Mounts path (borrowed) on c, a connection to the MOUNT server (exclusive use of c):
 * MOUNT v3 MNT (tbbt_rpcconn_mnt3()) when nfs_vers is 3, MOUNT v1 MNT (fhstatus, a
 * 32-byte handle) when it is 2.  Waits at most timeout_ms (<= 0: 10 s), or, when c has
 * a retransmission policy (tbbt_rpcconn_set_retry()), resends and reconnects by it.
 * Returns 0 with
 * *root set, or a negative error with the reason in err: -EACCES, -ENOENT, ... for a
 * refusal ("MNT '/x': permission denied (MNT3ERR_ACCES)"), -EINVAL for another nfs_vers,
 * or the connection's error ("MNT '/x': no reply from server within 10000 ms").
 */
int tbbt_resolve_mount(struct tbbt_rpcconn *c, uint32_t nfs_vers, const char *path,
                       int timeout_ms, struct tbbt_rpcconn_fh *root, char *err, size_t errlen);

/* Options of tbbt_resolve_run(); zeroed fields take the defaults given. */
struct tbbt_resolve_opts {
    uint32_t vers;              /* NFS version, 3 (default) or 2 */
    unsigned max_outstanding;   /* LOOKUPs in flight, default 64 */
    int timeout_ms;             /* how long one LOOKUP may go unanswered, default 10000;
                                   UDP retransmits (same XID) every timeout_ms / 8,
                                   clamped to 50..1000 ms, until then.  Ignored when the
                                   connection has a retransmission policy
                                   (tbbt_rpcconn_set_retry()): then every LOOKUP waits
                                   its timeout, is resent with the same XID and the
                                   connection reconnected as the policy says */
    bool (*want)(uint64_t id, void *arg);  /* the objects to resolve; NULL: all */
    void *want_arg;
    const char *root_path;      /* the image root relative to the export root, looked up
                                   before the clone directory (tbbt_resolve_relpath());
                                   NULL or "": the export root is the image root.
                                   Borrowed during the call. */
};

/* What tbbt_resolve_run() did. */
struct tbbt_resolve_stats {
    uint64_t objects;       /* wanted objects (with the clone directory's root ID) */
    uint64_t lookups;       /* LOOKUP calls sent, retransmissions included */
    uint64_t resolved;      /* TBBT-IDs bound in the handle table */
    uint64_t missing;       /* wanted objects not found (NOENT, or a directory on the way
                               is missing or failed) */
    uint64_t errors;        /* LOOKUPs that failed otherwise (NFS error, RPC error) */
    uint64_t retransmits;   /* same-XID resends (timeouts; after reconnects) */
    uint64_t reconnects;    /* connections re-established (retry policy) */
    uint64_t ns;            /* wall time of the run */
};

/*
 * Resolves clone number `clone` of m (borrowed): LOOKUPs from export_root (borrowed)
 * through opts->root_path and the clone directory, component by component, then of every
 * wanted object by (its directory's handle, last component); directories on the way to
 * a wanted object are looked up even if not wanted.  Pipelined: up to max_outstanding
 * LOOKUPs in flight on c, each queued as soon as its directory's handle is known.
 * Binds every TBBT-ID found in h (borrowed): the clone directory gets the ID of the
 * manifest's "." object if it has one, else root_id (if not 0); wanted objects that are
 * missing or failed get TBBT_HANDLE_FAILED.  Unwanted objects whose path was looked up
 * on the way are bound too.
 *
 * c must be connected to the NFS server (TCP or UDP) and used by nobody else during
 * the call; nothing is outstanding on it on return.  o may be NULL (defaults); st may
 * be NULL.  Returns 0 when every wanted object was found.  Otherwise a negative error
 * with the one-line reason in err: -ENOENT when objects are missing (the reason names
 * the first missing path, in manifest order, relative to the clone directory, and how
 * many are missing), -EIO when LOOKUPs failed with an NFS error, -ETIMEDOUT, or the
 * connection's error (the run stops at once on a lost connection or timeout).
 * TBBT_E_RANGE if clone is not a clone of m or an ID exceeds the handle table.
 */
int tbbt_resolve_run(struct tbbt_rpcconn *c, const struct tbbt_manifest *m, uint32_t clone,
                     const struct tbbt_rpcconn_fh *export_root, uint64_t root_id,
                     const struct tbbt_resolve_opts *o, struct tbbt_handles *h,
                     struct tbbt_resolve_stats *st, char *err, size_t errlen);

#endif
