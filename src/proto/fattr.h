/* SPDX-License-Identifier: MIT */
/*
 * The file attributes NFSv2's fattr (RFC 1094 2.3.5) and NFSv3's fattr3
 * (RFC 1813 2.5) carry alike, for the code that maps either into the trace
 * record's struct tbbt_fattr (the decoders of tbbt-convert, the player's
 * check of the server's replies).  proto sits below trace and cannot name
 * that struct: the copy is a macro over member names, which the three types
 * share.  What the versions encode differently (used, rdev, the times) is
 * each caller's to map; an NFSv3 device number has its helper here.
 */
#ifndef TBBT_PROTO_FATTR_H
#define TBBT_PROTO_FATTR_H

#include <stdint.h>

#include "proto/nfs3.h"

/*
 * Copies type, mode, nlink, uid, gid, size, fsid and fileid from *src (an
 * nfs2_fattr or fattr3) into *dst (a struct tbbt_fattr); evaluates each
 * argument more than once.
 */
#define TBBT_PROTO_FATTR_COPY(dst, src)                                                          \
    do {                                                                                         \
        (dst)->type = (src)->type;                                                               \
        (dst)->mode = (src)->mode;                                                               \
        (dst)->nlink = (src)->nlink;                                                             \
        (dst)->uid = (src)->uid;                                                                 \
        (dst)->gid = (src)->gid;                                                                 \
        (dst)->size = (src)->size;                                                               \
        (dst)->fsid = (src)->fsid;                                                               \
        (dst)->fileid = (src)->fileid;                                                           \
    } while (0)

/* An NFSv3 device number (specdata3, RFC 1813 2.5) as major << 32 | minor. */
static inline uint64_t tbbt_proto_specdata(const specdata3 *s)
{
    return (uint64_t)s->specdata1 << 32 | s->specdata2;
}

#endif
