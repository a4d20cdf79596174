/* SPDX-License-Identifier: MIT */
/*
 * Can an output file be written?  Asked by a tool before a long run (tbbt-play before it
 * talks to any server), so that an output path that cannot be written is reported at
 * once, naming the file, instead of after the work is done.  Thread-safe.
 */
#ifndef TBBT_UTIL_OUTPATH_H
#define TBBT_UTIL_OUTPATH_H

/*
 * 0 if the file at path (borrowed) can be written: it is no directory, and a new file
 * can be made in its directory (a file is created there with a unique name and removed
 * again: what a write through a temporary file and rename needs; nothing else changes),
 * or path is an existing file that opens for writing without being truncated (a device
 * such as /dev/null, or a file in a directory the caller cannot write).  Else -errno:
 * -EISDIR, -ENOENT (no such directory), -EACCES, -EROFS, ...
 */
int tbbt_output_check(const char *path);

#endif
