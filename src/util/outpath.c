/* SPDX-License-Identifier: MIT */
/*
 * The output-path check of outpath.h, made to agree with how outfile.h writes: the
 * path's symbolic links are followed to the final target first; a regular or missing
 * target needs a new file in the target's directory (a probe file, named like the
 * outfile's temporary, made with mkstemp and removed: it tells what faccessat() cannot,
 * a read-only file system for root, a full inode table, a name too long); a target
 * written in place (a device, a FIFO, anything under /dev/ or /proc/) needs to open
 * for writing, without O_TRUNC and without blocking.
 */
#include "util/outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "util/outfile.h"

/* A new file can be made beside target, as outfile.c's temporary. */
static int probe_dir(const char *target)
{
    char *probe = tbbt_outfile_temp_template(target);
    int fd = g_mkstemp_full(probe, O_RDWR | O_CLOEXEC, 0600), rc = 0;

    if (fd >= 0) {
        close(fd);
        unlink(probe);
    } else {
        rc = -errno;
    }
    g_free(probe);
    return rc;
}

/* A target written in place opens for writing (a FIFO without a reader counts). */
static int probe_in_place(const char *target)
{
    int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0)
        return errno == ENXIO ? 0 : -errno;
    close(fd);
    return 0;
}

int tbbt_output_check(const char *path)
{
    struct stat st;
    char *target;
    bool exists, special;
    int rc = 0;

    if (!path || !*path)
        return -ENOENT;
    if (strcmp(path, "-") == 0)
        return 0;                       /* standard output */
    if (!(target = tbbt_outfile_resolve(path, &rc)))
        return rc;
    exists = stat(target, &st) == 0;
    special = g_str_has_prefix(target, "/dev/") || g_str_has_prefix(target, "/proc/");
    if (exists && S_ISDIR(st.st_mode))
        rc = -EISDIR;
    else if (special || (exists && !S_ISREG(st.st_mode)))
        rc = probe_in_place(target);
    else
        rc = probe_dir(target);
    g_free(target);
    return rc;
}
