/* SPDX-License-Identifier: MIT */
/*
 * resolve: the player's start-up (TBBT paper 3.4: before the replay, the player learns
 * the server's handle of every object of the initial image by looking up the paths that
 * tbbt-init made).  Three parts:
 *   - tbbt_manifest_load(): reads and validates the manifest tbbt-init wrote
 *     (docs/tbbt-init.md, "The manifest"): the clone directories and, per TBBT-ID, the
 *     path of the object relative to each clone directory;
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

#include "player/handles.h"
#include "onc/rpcconn.h"

/* One `obj` line of the manifest. */
struct tbbt_manifest_obj {
    uint64_t id;        /* TBBT-ID, > 0 */
    char *path;         /* unescaped, relative to a clone directory; "." = the clone
                           directory itself; components joined by '/', each valid
                           (tbbt_ns_name_ok()); NUL-terminated; owned by the manifest */
    size_t len;         /* bytes of path */
};

/* A loaded manifest.  Given by tbbt_manifest_load(): free with tbbt_manifest_free(). */
struct tbbt_manifest {
    char *root, *map;       /* from the root/map lines (unescaped; NULL if absent) */
    char *server;           /* from the server line: the image was built through NFS
                               (tbbt-init --server) on this host; NULL if absent.
                               tbbt-play's default --server */
    char *export_path;      /* from the export line (with server): the export it mounted;
                               root is then a server path under it.  Default --export */
    GPtrArray *clones;      /* char *: clone directories relative to the root ("." for
                               one clone), in manifest order */
    GArray *objs;           /* struct tbbt_manifest_obj, in manifest order (parents
                               first) */
    bool complete;          /* status complete (always true after a successful load) */
    int version;            /* 1 (no checksum line: read with a warning) or 2 */
    uint32_t crc;           /* version 2: the checksum line's value */
    bool have_map_crc;      /* map_crc holds the map-crc32 line: the checksum of the map
                               the image was built from */
    uint32_t map_crc;
    GStringChunk *strings;  /* private: holds the obj paths */
};

/*
 * Loads and validates the manifest at path (borrowed).  Strict: the first line must be
 * `# tbbt-manifest 2` (its last line is then a checksum line, util/textsum.h, checked
 * before any other line is read: TBBT_E_TRUNC without it, TBBT_E_CHECKSUM when it does
 * not match) or `# tbbt-manifest 1` (no checksum; read with one warning); every line
 * must be one of map, map-crc32, root, server, export, seed,
 * clones, scope, appends, classes, fill, clone, made, obj, stats, status with its fields (tab
 * separated, paths escaped as in the map); a path component that is empty, ".", "..",
 * longer than 255 bytes, or holds '/' (also escaped) or NUL is refused; the number of
 * clone lines must match `clones`; the last line must be `status complete`.  Returns 0
 * and *out (given: tbbt_manifest_free()), or a negative error (TBBT_E_SYNTAX for a bad
 * line, TBBT_E_MAGIC for a missing header, TBBT_E_TRUNC for a manifest without status,
 * -EIO for `status failed`, -errno) with the one-line reason "manifest 'F' line N: ..."
 * in err (errlen bytes, may be 0).  *out is untouched on error.
 */
int tbbt_manifest_load(const char *path, struct tbbt_manifest **out, char *err, size_t errlen);

/* Frees m and everything it holds; NULL is a no-op. */
void tbbt_manifest_free(struct tbbt_manifest *m);

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
