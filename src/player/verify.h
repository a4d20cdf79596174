/* SPDX-License-Identifier: MIT */
/*
 * verify: tbbt-play --verify.  After the replay, walks the server's tree of one clone and
 * compares the names, types and sizes of the live objects with the end state the trace
 * implies (TBBT paper 3.2-3.4: the hierarchy map gives every object's final path; the
 * trace's reply attributes give the last size the traced server showed).  It tells
 * whether a replay reproduced the namespace the trace ended with, and where not.
 *
 * What it does not do: compare contents, modes, owners, times or link counts; repair
 * anything; look at objects outside the directories the end state contains.
 *
 * Threading: a struct tbbt_verify_sizes belongs to one thread at a time (the player's
 * reader thread notes sizes; the main thread verifies after the replay).
 */
#ifndef TBBT_PLAYER_VERIFY_H
#define TBBT_PLAYER_VERIFY_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onc/rpcconn.h"
#include "trace/trace.h"

/* TBBT-ID -> the last size the trace showed for the object (regular files only). */
struct tbbt_verify_sizes;

/* A new, empty table.  Given: tbbt_verify_sizes_free().  Never fails. */
struct tbbt_verify_sizes *tbbt_verify_sizes_new(void);
/* Frees s; NULL is a no-op. */
void tbbt_verify_sizes_free(struct tbbt_verify_sizes *s);

/*
 * Notes the sizes that rec's reply attributes show (call for every record, in trace
 * order: the last size wins).  rec is borrowed for the call.  obj_attr is the object of
 * rec->id for GETATTR, SETATTR, READ, WRITE, COMMIT, ACCESS, READLINK, LINK (and the
 * other procedures of the model's ATTR kind: FSSTAT, FSINFO, PATHCONF, STATFS), and the
 * object of rec->id_obj for LOOKUP, CREATE, MKDIR, SYMLINK and MKNOD; readdirplus entries
 * with TBBT_ENT_ATTR and TBBT_ENT_ID give entries[i].id.  Only attributes of regular
 * files (type 1) count; IDs of 0 or >= 2^32 are ignored.  O(1) per attribute set, memory
 * 8 bytes per ID up to the largest noted (in 32 KiB pages made on use).
 */
void tbbt_verify_sizes_note(struct tbbt_verify_sizes *s, const struct tbbt_trace_rec *rec);

/* The size noted for id: true and *size, or false if none. */
bool tbbt_verify_sizes_get(const struct tbbt_verify_sizes *s, uint64_t id, uint64_t *size);

#define TBBT_VERIFY_DETAILS 50  /* mismatches kept as text */

/* Result of tbbt_verify_run(); caller storage, released with tbbt_verify_result_fini(). */
struct tbbt_verify_result {
    bool ok;                /* no mismatch */
    uint64_t checked;       /* expected objects found on the server and compared */
    uint64_t mismatches;    /* missing + unexpected + wrong_type + wrong_size */
    uint64_t missing;       /* expected at a path, not there */
    uint64_t unexpected;    /* there, not expected (a name the end state does not have) */
    uint64_t wrong_type;    /* there with another type */
    uint64_t wrong_size;    /* a regular file whose size is not the trace's last */
    uint64_t dirs;          /* directories read */
    uint64_t calls;         /* RPCs made */
    GPtrArray *details;     /* char *: the first TBBT_VERIFY_DETAILS mismatches, one line
                               each, paths relative to the clone directory, escaped as in
                               the map: "missing: a/b", "size: a/c is 10, trace says 4096",
                               "type: a/d is file, trace says directory", "unexpected: a/x";
                               owned (freed by _fini) */
};

/* Frees what r holds (details) and zeroes it; safe on a zeroed or finished result. */
void tbbt_verify_result_fini(struct tbbt_verify_result *r);

/*
 * Compares the tree under clone_root (borrowed: the clone directory's handle) on c, a
 * connection to the NFS server used by nobody else meanwhile (synchronous calls; v3:
 * READDIRPLUS with cookies until eof, LOOKUP for entries without handle or attributes;
 * v2: READDIR + LOOKUP), with the end state of the map at map_path (borrowed): every
 * map entry without a delete time is expected at its final path with its type (f, d,
 * l, o: regular file, directory, symbolic link, anything else) and, for regular files
 * with a size in s (may be NULL), that size.  Only directories that the end state
 * contains are read.  Names not in the end state are unexpected, except tbbt-init's
 * own: names starting with "tbbt-syn-" anywhere and, in the clone directory itself,
 * ".tbbt-init", "lost+found" and "tbbt-clone-*".
 *
 * want (may be NULL: all) restricts the check to some objects (spatial scale-down):
 * entries of unwanted objects are neither expected nor unexpected (at their start and
 * final paths), and directories on the way to wanted ones are walked.
 *
 * res (caller storage) is initialized by the call.  Returns 0 with res filled (res->ok
 * when nothing differs), or a negative error with the reason in err: the map did not
 * read (its error), an RPC failed (-ETIMEDOUT, the connection's error, -EPROTO for an
 * RPC-level refusal) or a directory could not be read (-EIO, with the NFS status); res
 * then holds what was compared so far and must still be finished.
 */
int tbbt_verify_run(struct tbbt_rpcconn *c, uint32_t vers,
                    const struct tbbt_rpcconn_fh *clone_root, const char *map_path,
                    const struct tbbt_verify_sizes *s, bool (*want)(uint64_t id, void *arg),
                    void *want_arg, struct tbbt_verify_result *res, char *err, size_t errlen);

#endif
