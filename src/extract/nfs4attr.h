/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: NFSv4 attributes (fattr4, RFC 7530 5.5-5.7,
 * RFC 5661 5.6-5.8) as the trace keeps them (nfs4attr.c).
 *
 * What is kept: into struct tbbt_fattr the type (nfs_ftype4: 1..7 are
 * ftype3's numbers), mode, numlinks, owner and owner_group (as ids, see
 * below), size, space_used, rawdev, fsid (major << 32 ^ minor), fileid and the
 * access, modify and metadata (ctime) times; into struct tbbt_sattr the size,
 * mode, owner, owner_group and the two time_*_set attributes.  Owners are
 * strings on the wire: "1234" or "1234@domain" is id 1234, "root" or
 * "root@domain" 0, any other name TBBT_NFS4_NOBODY (the capture does not say
 * how the server maps names).
 */
#ifndef TBBT_EXTRACT_NFS4ATTR_H
#define TBBT_EXTRACT_NFS4ATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/nfs4.h"
#include "trace/trace.h"

#define TBBT_NFS4_NOBODY 65534u

/*
 * f's values into *out (zeroed first).  False if they do not all decode or an
 * attribute number is past nfs4.x's (what was read before is kept).
 */
bool tbbt__nfs4_fattr(const fattr4 *f, struct tbbt_fattr *out);
bool tbbt__nfs4_sattr(const fattr4 *f, struct tbbt_sattr *out);
/* Words 0 and 1 of a bitmap4 as one value (word 1 in the high half). */
uint64_t tbbt__nfs4_bitmap(const bitmap4 *b);
/* The id of an owner or owner_group string s[0..len) (see above). */
uint32_t tbbt__nfs4_owner_id(const char *s, uint32_t len);

#endif
