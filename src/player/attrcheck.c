/* SPDX-License-Identifier: MIT */
/*
 * The post-operation attribute rule of reply checks (attrcheck.h), shared by tbbt-play
 * and tbbt-compare.  Attribute types are ftype3 numbers (trace.h, struct tbbt_fattr;
 * NFSv2's ftype shares 1, 2 and 5 for regular files, directories and symbolic links).
 */
#include "player/attrcheck.h"

#define FT_REG 1u
#define FT_DIR 2u
#define FT_LNK 5u

unsigned tbbt_attrcheck_diff(const struct tbbt_fattr *traced, const struct tbbt_fattr *got)
{
    unsigned d = 0;
    bool same = traced->type == got->type;
    bool dir = same && traced->type == FT_DIR;
    bool sized = same && (traced->type == FT_REG || traced->type == FT_LNK);

    if (!same)
        d |= TBBT_ATTRCHECK_TYPE;
    if ((traced->mode & 07777u) != (got->mode & 07777u))
        d |= TBBT_ATTRCHECK_MODE;
    if (traced->uid != got->uid)
        d |= TBBT_ATTRCHECK_UID;
    if (traced->gid != got->gid)
        d |= TBBT_ATTRCHECK_GID;
    if (traced->size != got->size)
        d |= dir ? TBBT_ATTRCHECK_DIR_SIZE : (sized ? TBBT_ATTRCHECK_SIZE : 0);
    if (traced->nlink != got->nlink)
        d |= dir ? TBBT_ATTRCHECK_DIR_NLINK : (same ? TBBT_ATTRCHECK_NLINK : 0);
    return d;
}
