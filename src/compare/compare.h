/* SPDX-License-Identifier: MIT */
/*
 * tbbt-compare: an original TBBT trace against the trace of its replay, object by object
 * (docs/tbbt-compare.md).  The round trip that checks a replay: capture the original
 * clients, tbbt-convert, tbbt-init, tbbt-play with tcpdump running, tbbt-convert the
 * replay's capture, and compare the two traces.  The TBBT paper (3.1) calls an outcome
 * that differs from the trace a replay failure; this library measures those and every
 * other way a replay can differ: operations missing or extra, arguments, statuses,
 * replies, latency, timing on the wire and rate.
 *
 * The two traces number their objects independently (each conversion gives its own
 * TBBT-IDs) and carry different file handles, so the comparison goes through an
 * **object mapping**, original ID -> replay ID (objmap.c):
 *   - objects that existed at trace start, by path: the original's hierarchy map gives
 *     each start path relative to the original export root; the replay's map gives
 *     paths relative to the player's mount, where the image root R may be a
 *     subdirectory (img/tbbt-clone-0).  R is the replay directory under which most of
 *     the original's start paths exist (the player looks up every start path, so they
 *     are all in the replay's map), or, when the original has no start path but its
 *     root, the end of the chain of LOOKUPs the player sends first; or given
 *     (--root-b).  The original root maps to R;
 *   - objects made during the trace, by the operation that makes them: once a CREATE,
 *     MKDIR, SYMLINK, MKNOD, LINK or RENAME pair is matched (same mapped directory and
 *     name), its id_obj and id_old fields map; a matched LOOKUP maps its result too.
 *
 * **Matching** (match.c), one pass over both traces, in original order: each original
 * NFS operation is matched with the earliest not-yet-matched replay operation of the
 * same key: procedure, the mapped objects (id, id2), the names (name, name2), for READ
 * and WRITE the offset, and, when the original carries AUTH_SYS credentials (cred.c:
 * decided once from its first records), the credential (machine name, uid, gid, gids:
 * the whole value, hashed), so that an operation only matches one sent by the same
 * client user.  Among the candidates of one key the first with the same arguments is
 * preferred, then the first with the same uid and gid, then the first.  Only per-object
 * order is relied on: a replay in FS-dependency order may run operations on different
 * objects in another order, and reads of one object in any order.  The replay is read
 * lazily into a window of pending operations indexed by key, bounded by the frontier F
 * (the largest matched replay index): the replay is read, and candidates are taken, up
 * to F + horizon (plus 2 per original operation missing since the last match); a
 * pending replay operation leaves (extra, if unmatched) once it is `horizon` behind F
 * and was read `horizon` original operations ago.  Memory is O(objects + horizon +
 * unmatched operations within the horizon), never the whole trace; time is linear in
 * the two traces (a hash look-up per operation).
 *
 * **Extras** (classify.c) are classified by origin when the traces carry credentials:
 * the player's own calls (AUTH_SYS machine name `tbbt-play`: its MOUNT, LOOKUPs of the
 * image's paths, grace probe, --verify walk) are start-up before the first matched
 * replay operation and verify after the last one; replayed calls are retries (same key
 * as a replay operation matched before it: retransmissions, JUKEBOX retries, the LOOKUP
 * that follows a retried create) or other.  Without credentials, by phase and
 * procedure: start-up (MOUNT, NULL, LOOKUP, GETATTR, FSINFO, FSSTAT, PATHCONF, ACCESS
 * before the first matched replay operation), verify (READDIRPLUS, READDIR, LOOKUP,
 * GETATTR after the last matched one), retry, other.
 *
 * **Differences** (diff.c) of a matched pair, apart from the player's intended
 * rewrites (handles, compared through the mapping; READDIR cookies and verifiers: a
 * continuation page must continue the mapped page; write, create and cookie verifiers;
 * XIDs; the data; set-to-client times of SETATTR, counted apart): arguments by field
 * (`write.count`, `setattr.sattr.mode`, `uid`), statuses by `proc:ORIG->REPLAY`, and
 * replies where they matter for fidelity (post-op attribute type, size, nlink, mode,
 * uid, gid; READ/WRITE counts and EOF; READDIR entry counts and EOF) by `proc.field`.
 * Reply differences fall in three classes: the size and link count of a directory
 * follow entries and subdirectories the trace never saw, which the image lacks (image);
 * the reply of an original operation that overlapped another request changing the
 * object whose attributes it shows (racy.c: the player's rule, engine.c
 * writes_checked()) depends on how the traced server interleaved the two (racy); the
 * rest are the real ones.  A pair is identical when its arguments and status are.
 *
 * **Timing** (timing.c): latency per procedure on both sides; the lag of each pair,
 * (replay call - replay origin) - (original call - original origin) / speed, where the
 * origins are the calls of the pair whose original comes first; the lag per second of
 * the replay; the turnaround (a call that follows the reply of the previous call of its
 * endpoint: the time from that reply to this call); rates over the matched span.
 * The lag is split by its cause.  A replay call may go only after the replies of the
 * calls answered before its original call (the conservative rule, which fsdep relaxes):
 * its dependencies are ready at the latest of those replies in the replay.  A pair whose
 * dependencies became ready after its due time was held by the replay server (held: by
 * how long); the player's own error is its call's distance from the later of its due
 * time and that readiness (sent early: from its due time), and a held pair's reaction is
 * the time from the releasing reply to its call.  In full-speed replays every call is
 * due at once (speed very large): reaction and own error are the player's turnaround.
 *
 * Nothing here is thread-safe; one struct tbbt_compare per thread.
 */
#ifndef TBBT_COMPARE_COMPARE_H
#define TBBT_COMPARE_COMPARE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TBBT_COMPARE_HORIZON 32768      /* default --horizon (operations) */
#define TBBT_COMPARE_SHOW 2             /* default --show (examples per difference) */

struct tbbt_compare_opts {
    const char *trace_a;        /* the original trace (borrowed; a file: opened up to 3 times) */
    const char *trace_b;        /* the replay's trace (a file: opened up to 4 times) */
    const char *map_a, *map_b;  /* hierarchy maps; NULL: TRACE.map */
    const char *root_b;         /* image root in the replay's map; NULL: automatic */
    double speed;               /* the replay's --speed (timestamp timing), > 0 */
    uint64_t horizon;           /* how far the replay may run ahead or behind, >= 1 */
    uint32_t show;              /* examples kept per difference (0: none, no second pass) */
};

/* Defaults: no paths, speed 1, horizon TBBT_COMPARE_HORIZON, show TBBT_COMPARE_SHOW. */
void tbbt_compare_opts_init(struct tbbt_compare_opts *o);

/* Classes of the replay's extra operations. */
enum tbbt_compare_extra {
    TBBT_COMPARE_STARTUP = 0,   /* the player's MOUNT, image LOOKUPs and probes */
    TBBT_COMPARE_VERIFY,        /* the --verify walk after the replay */
    TBBT_COMPARE_RETRY,         /* a repeated call of a matched operation */
    TBBT_COMPARE_OTHER,
    TBBT_COMPARE_NEXTRA
};

/* Tables of counted differences (keys are strings, see docs/tbbt-compare.md). */
enum tbbt_compare_kind {
    TBBT_COMPARE_ARG = 0,       /* argument field: "write.count", "uid" */
    TBBT_COMPARE_STATUS,        /* "setattr:OK->JUKEBOX" */
    TBBT_COMPARE_REPLY,         /* "read.res_count", "getattr.attr.size" */
    TBBT_COMPARE_CLIENT_TIME,   /* "setattr.sattr.mtime": set-to-client times */
    TBBT_COMPARE_MISSING,       /* by procedure: original operations not replayed */
    TBBT_COMPARE_EXTRA_RETRY,   /* by procedure */
    TBBT_COMPARE_EXTRA_OTHER,   /* by procedure */
    TBBT_COMPARE_REPLY_IMAGE,   /* "lookup.attr.nlink": a directory's size or link count */
    TBBT_COMPARE_REPLY_RACY,    /* "getattr.attr.size": the reply of a racy operation */
    TBBT_COMPARE_NKINDS
};

struct tbbt_compare_counts {
    uint64_t ops_original;      /* op records of the original */
    uint64_t original_not_nfs;  /* ... of MOUNT (never replayed): not matched, not missing */
    uint64_t ops_replay;        /* op records of the replay */
    uint64_t matched, identical;
    uint64_t missing;           /* ops_original = original_not_nfs + matched + missing */
    uint64_t missing_unmapped;  /* ... of them naming an object without a replay counterpart */
    uint64_t extra[TBBT_COMPARE_NEXTRA];    /* ops_replay = matched + sum(extra) */
    uint64_t pairs_arg_diff;    /* matched pairs with an argument difference */
    uint64_t pairs_status_diff; /* ... with a status difference */
    uint64_t pairs_reply_diff;  /* ... with a (real) reply difference */
    uint64_t pairs_reply_image; /* ... with a directory size or link count difference */
    uint64_t pairs_reply_racy;  /* ... with a reply difference of a racy original */
    uint64_t status_unchecked;  /* matched pairs whose original has no reply */
    uint64_t objects_mapped;    /* original objects with a replay counterpart */
    uint64_t objects_unmapped;  /* original objects its NFS operations name, without one */
    uint64_t objects_by_path;   /* mapped from the maps' start paths */
    uint64_t mapping_conflicts; /* a matched pair that would map an object a second way */
    uint64_t objects_remapped;  /* ... and a create or LOOKUP that proved the new way */
    uint64_t objects_ambiguous; /* start paths naming different replay objects */
    bool credentials;           /* the key held the credential (both traces carry them) */
};

/* Lag and turnaround summary (ns; lag figures are of |lag|). */
struct tbbt_compare_timing {
    uint64_t lag_count;
    uint64_t lag_p50, lag_p99, lag_max;
    uint64_t turn_count[2];     /* [0] original, [1] replay */
    uint64_t turn_p50[2], turn_p99[2];
    /* The lag split by its cause (conservative rule, see "Timing" above): the pairs held
     * past their due time by replies they had to wait for (count; by how long), the
     * player's own error (|lag| beyond that), and the reaction (held pairs' call after
     * the reply that released them). */
    uint64_t held_count, held_p50, held_p99, held_max;
    uint64_t own_count, own_p50, own_p99, own_max;
    uint64_t react_count, react_p50, react_p99, react_max;
    double rate[2];             /* matched operations per second over the matched span */
};

struct tbbt_compare;

/* A comparison with options o (copied; the strings are borrowed and must outlive it). */
struct tbbt_compare *tbbt_compare_new(const struct tbbt_compare_opts *o);
/* Frees c; NULL is a no-op. */
void tbbt_compare_free(struct tbbt_compare *c);

/*
 * Runs the comparison: loads both maps, finds the image root, reads both traces once
 * in full and again for the examples when opts.show > 0.  Each trace is opened anew
 * for each read, so both must be files: the original for its first records'
 * credentials (cred.c), the match and the examples (up to 3 times); the replay for its
 * start-up (objmap.c; twice when the traces carry credentials but the scan by origin
 * finds none), the match and the examples (up to 4 times); the examples pass reads
 * each side only up to its last example, and not at all when it has none.  0, or a
 * negative error (a trace or
 * map that cannot be read: -errno or TBBT_E_*; TBBT_E_RANGE for a --root-b path that is
 * not in the replay's map) with a one-line reason in err.  Call once.
 */
int tbbt_compare_run(struct tbbt_compare *c, char *err, size_t errlen);

/* Results, valid after a successful run (borrowed: valid while c lives). */
const struct tbbt_compare_counts *tbbt_compare_counts(const struct tbbt_compare *c);
void tbbt_compare_get_timing(const struct tbbt_compare *c, struct tbbt_compare_timing *t);
/* The count of one difference ("write.count" in TBBT_COMPARE_ARG), 0 if none. */
uint64_t tbbt_compare_diff(const struct tbbt_compare *c, enum tbbt_compare_kind kind,
                           const char *key);
/* The image root found in (or given for) the replay's map, "." for its root. */
const char *tbbt_compare_root_b(const struct tbbt_compare *c);

/* The JSON document (docs/tbbt-compare.md "JSON"); given: g_free(). */
char *tbbt_compare_json(const struct tbbt_compare *c);
/* The text summary with examples; write errors are the caller's to check (ferror). */
void tbbt_compare_print(const struct tbbt_compare *c, FILE *out);
/*
 * Figures into dir (created): lag over time, latency per procedure (.dat, .gp, .png,
 * .svg; util/gnuplot.h).  0, or a negative error with a one-line reason in err.
 */
int tbbt_compare_plot(const struct tbbt_compare *c, const char *dir, char *err, size_t errlen);

#endif
