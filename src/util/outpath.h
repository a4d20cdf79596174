/* SPDX-License-Identifier: MIT */
/*
 * Can an output file be written?  Asked by a tool before a long run (tbbt-play before it
 * talks to any server), so that an output path that cannot be written is reported at
 * once, naming the file, instead of after the work is done.  Thread-safe.
 */
#ifndef TBBT_UTIL_OUTPATH_H
#define TBBT_UTIL_OUTPATH_H

/*
 * 0 if the file at path (borrowed; "-" is standard output) can be written as
 * util/outfile.h writes it: after its symbolic links, the target is no directory, and
 * either a new file can be made in the target's directory (a file is created there with
 * a unique name and removed again: what a write through a temporary file and rename
 * needs; nothing else changes), or the target is written in place (a device such as
 * /dev/null, a FIFO, anything under /dev/ or /proc/) and opens for writing without being
 * truncated.  An existing regular file in a directory the caller cannot write fails:
 * the outfile could not replace it.  Else -errno: -EISDIR, -ENOENT (no such directory),
 * -EACCES, -EROFS, -ELOOP, -ENAMETOOLONG, ...
 */
int tbbt_output_check(const char *path);

#endif
