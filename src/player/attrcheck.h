/* SPDX-License-Identifier: MIT */
/*
 * attrcheck: which post-operation attributes of a reply are checked against the traced
 * reply, the one rule of tbbt-play's reply check (engine-recv.c rx_check()) and of
 * tbbt-compare's reply differences (src/compare/diff.c).  Type, permission bits, owner
 * and group always; the size of regular files and symbolic links, and the link count
 * of everything but directories, only when both sides show the same type (another type
 * is already a difference, and the size of a device, socket or FIFO means nothing).  A
 * directory's size and link count follow entries and subdirectories the trace never
 * saw, which the image lacks: reported apart (TBBT_ATTRCHECK_DIR_*) for tbbt-compare's
 * image class, never checked by the player.
 */
#ifndef TBBT_PLAYER_ATTRCHECK_H
#define TBBT_PLAYER_ATTRCHECK_H

#include "trace/trace.h"

/* Bits of tbbt_attrcheck_diff()'s result. */
enum tbbt_attrcheck {
    TBBT_ATTRCHECK_TYPE = 1u << 0,
    TBBT_ATTRCHECK_MODE = 1u << 1,      /* permission bits (07777) */
    TBBT_ATTRCHECK_UID = 1u << 2,
    TBBT_ATTRCHECK_GID = 1u << 3,
    TBBT_ATTRCHECK_SIZE = 1u << 4,      /* regular file or symbolic link, same type */
    TBBT_ATTRCHECK_NLINK = 1u << 5,     /* same type, not a directory */
    TBBT_ATTRCHECK_DIR_SIZE = 1u << 6,  /* both directories: the image's, not checked */
    TBBT_ATTRCHECK_DIR_NLINK = 1u << 7, /* both directories: the image's, not checked */
};

/*
 * The attributes in which got (a replay's reply) differs from traced (the trace's
 * reply), as TBBT_ATTRCHECK_* bits; 0 when they agree.  Both borrowed.  Thread-safe.
 */
unsigned tbbt_attrcheck_diff(const struct tbbt_fattr *traced, const struct tbbt_fattr *got);

#endif
