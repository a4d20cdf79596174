/* SPDX-License-Identifier: MIT */
/*
 * Output files that are never destroyed by a failed run.  An output whose target
 * is (or will be) a regular file is written to a temporary file in the target's
 * directory and renamed over the target only when the caller commits; symbolic
 * links are followed to their final target first, so the link stays a link and
 * a dangling link's target is created.  Other targets (character and block
 * devices, FIFOs, sockets, anything under /dev/ or /proc/ such as /dev/stdout,
 * and "-" for standard output) are written in place.  A replaced regular file
 * keeps its permission bits; a new one gets 0666 less the umask.  Owner and
 * group are not carried over (a temporary belongs to whoever runs the tool).
 *
 * Writers either use the stream of tbbt_outfile_stream() or open the path of
 * tbbt_outfile_path() themselves (and check their own writes and close).
 * tbbt_outfile_commit() flushes, syncs and closes what it owns, checking every
 * step, then renames; tbbt_outfile_abort() removes the temporary and leaves the
 * existing target as it was.  Not thread-safe: one thread per outfile.
 */
#ifndef TBBT_UTIL_OUTFILE_H
#define TBBT_UTIL_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct tbbt_outfile;

enum {
    /*
     * The caller re-reads what it wrote before committing: an in-place target
     * (a FIFO, a device) is then written to a temporary in the temporary
     * directory, whose bytes tbbt_outfile_commit() copies to the target.
     */
    TBBT_OUTFILE_SPOOL = 1u << 0,
};

/*
 * Prepares the output path (borrowed; copied).  For a regular target it creates
 * the temporary now (so a directory that cannot take it fails here, before any
 * work).  Returns the outfile (given: tbbt_outfile_commit() or tbbt_outfile_abort()
 * frees it), or NULL with -errno in *rc and a one-line reason naming path in err.
 */
struct tbbt_outfile *tbbt_outfile_new(const char *path, unsigned flags, int *rc, char *err,
                                      size_t errlen);

/*
 * Where the writer writes: the temporary, the target itself when written in
 * place, or "-" for standard output.  Borrowed: valid until commit or abort.
 */
const char *tbbt_outfile_path(const struct tbbt_outfile *o);

/* The path the user gave (borrowed, valid until commit or abort), for messages. */
const char *tbbt_outfile_name(const struct tbbt_outfile *o);

/* True when the output is written in place (not renamed at commit). */
bool tbbt_outfile_in_place(const struct tbbt_outfile *o);

/*
 * A stdio stream on tbbt_outfile_path() (stdout for "-"), opened on first call.
 * Borrowed: the outfile closes it; the caller never fcloses it.  NULL with
 * -errno in *rc and the reason in err when the target cannot be opened.
 */
FILE *tbbt_outfile_stream(struct tbbt_outfile *o, int *rc, char *err, size_t errlen);

/*
 * Finishes the output: flushes and closes the stream (if any), copies a spooled
 * temporary to its target, syncs and renames the temporary over the target, and
 * syncs the target's directory so that the rename survives a crash.
 * Each step is checked; on failure the temporary is removed, the target is left
 * as it was (or partly written, when written in place), and -errno comes back
 * with a one-line reason naming the file in err.  Always frees o (NULL: 0).
 */
int tbbt_outfile_commit(struct tbbt_outfile *o, char *err, size_t errlen);

/* Drops the output: closes the stream, removes the temporary, frees o.  NULL is a no-op. */
void tbbt_outfile_abort(struct tbbt_outfile *o);

/*
 * The file an output to path would write: path after its symbolic links (relative
 * links resolved against their own directory), which need not exist.  Given
 * (g_free), or NULL with -errno in *rc (ELOOP past 40 links).  "-" gives "-".
 */
char *tbbt_outfile_resolve(const char *path, int *rc);

/*
 * The mkstemp() template of the temporary written beside target (a path after its
 * links): "DIR/.NAME.tmp-XXXXXX", NAME cut to its first 200 bytes so that any name the
 * file system takes also takes its temporary.  Given (g_free).
 */
char *tbbt_outfile_temp_template(const char *target);

/*
 * Writes the bytes text[0..len) to path through an outfile (a whole small file:
 * a JSON document, a figure's script).  0, or -errno with the reason in err.
 */
int tbbt_outfile_write_all(const char *path, const void *text, size_t len, char *err,
                           size_t errlen);

#endif
