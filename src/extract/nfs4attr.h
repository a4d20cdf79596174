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
/*
 * tbbt__nfs4_fattr(), and the FILEHANDLE attribute's bytes into fh (NFS4_FHSIZE
 * bytes) with their length in *fh_len, UINT32_MAX when f has none.
 */
bool tbbt__nfs4_fattr_fh(const fattr4 *f, struct tbbt_fattr *out, uint8_t *fh, uint32_t *fh_len);
/*
 * True if attribute bitmap b (words 0 and 1) names every attribute struct tbbt_fattr
 * needs to stand for the object as NFSv3's fattr3 does: type, size, fileid, mode,
 * numlinks, owner and owner_group (the namespace model takes them as exact).
 */
static inline bool tbbt__nfs4_attrs_whole(uint64_t b)
{
    const uint64_t need = UINT64_C(1) << FATTR4_TYPE | UINT64_C(1) << FATTR4_SIZE |
                          UINT64_C(1) << FATTR4_FILEID | UINT64_C(1) << FATTR4_MODE |
                          UINT64_C(1) << FATTR4_NUMLINKS | UINT64_C(1) << FATTR4_OWNER |
                          UINT64_C(1) << FATTR4_OWNER_GROUP;
    return (b & need) == need;
}

/* Words 0 and 1 of a bitmap4 as one value (word 1 in the high half). */
uint64_t tbbt__nfs4_bitmap(const bitmap4 *b);
/* The id of an owner or owner_group string s[0..len) (see above). */
uint32_t tbbt__nfs4_owner_id(const char *s, uint32_t len);

#endif
