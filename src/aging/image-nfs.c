/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init's NFS backend (image-int.h): not written yet; opening it fails.
 */
#include "aging/image-int.h"

#include <errno.h>

#include "util/util.h"

static struct tbbt__image_be *n_open(const struct tbbt_image_opts *o, struct tbbt_image_stats *st,
                                     char *errbuf, size_t errlen, int *rc)
{
    (void)o;
    (void)st;
    tbbt_errbuf(errbuf, errlen, "building through NFS is not implemented yet");
    *rc = -ENOSYS;
    return NULL;
}

const struct tbbt__image_backend_ops tbbt__image_nfs_ops = {
    .name = "nfs",
    .version = 0,
    .open = n_open,
};
