/* SPDX-License-Identifier: MIT */
/*
 * The output-path check of outpath.h: a probe file made and removed in the target
 * directory (mkstemp), which tells what faccessat() cannot (a read-only file system
 * for root, a full inode table); an existing file is opened without O_TRUNC.
 */
#include "util/outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

int tbbt_output_check(const char *path)
{
    struct stat st;
    char *dir, *probe;
    int fd, rc = 0;

    if (!path || !*path)
        return -ENOENT;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return -EISDIR;
    dir = g_path_get_dirname(path);
    probe = g_build_filename(dir, ".tbbt-output-check-XXXXXX", NULL);
    if ((fd = mkstemp(probe)) >= 0) {
        close(fd);
        unlink(probe);
    } else {
        rc = -errno;
        /* an existing file may still be writable in place (/dev/null, a shared dir) */
        if (stat(path, &st) == 0 && (fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)) >= 0) {
            close(fd);
            rc = 0;
        }
    }
    g_free(probe);
    g_free(dir);
    return rc;
}
