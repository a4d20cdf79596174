/* SPDX-License-Identifier: MIT */
/*
 * Status name tables of the proto module (see proto.h).  The values come from
 * the rpcgen headers, so they always agree with nfs2.x, nfs3.x and mount.x:
 * RFC 1094 2.3.1, RFC 1813 2.6 and Appendix I.
 */
#include "proto/proto.h"

#include <stddef.h>

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"

#define TOK(v) { v, #v }

const struct tbbt_proto_tok tbbt_proto_nfsstat3[] = {
    TOK(NFS3_OK),
    TOK(NFS3ERR_PERM),
    TOK(NFS3ERR_NOENT),
    TOK(NFS3ERR_IO),
    TOK(NFS3ERR_NXIO),
    TOK(NFS3ERR_ACCES),
    TOK(NFS3ERR_EXIST),
    TOK(NFS3ERR_XDEV),
    TOK(NFS3ERR_NODEV),
    TOK(NFS3ERR_NOTDIR),
    TOK(NFS3ERR_ISDIR),
    TOK(NFS3ERR_INVAL),
    TOK(NFS3ERR_FBIG),
    TOK(NFS3ERR_NOSPC),
    TOK(NFS3ERR_ROFS),
    TOK(NFS3ERR_MLINK),
    TOK(NFS3ERR_NAMETOOLONG),
    TOK(NFS3ERR_NOTEMPTY),
    TOK(NFS3ERR_DQUOT),
    TOK(NFS3ERR_STALE),
    TOK(NFS3ERR_REMOTE),
    TOK(NFS3ERR_BADHANDLE),
    TOK(NFS3ERR_NOT_SYNC),
    TOK(NFS3ERR_BAD_COOKIE),
    TOK(NFS3ERR_NOTSUPP),
    TOK(NFS3ERR_TOOSMALL),
    TOK(NFS3ERR_SERVERFAULT),
    TOK(NFS3ERR_BADTYPE),
    TOK(NFS3ERR_JUKEBOX),
    { 0, NULL },
};

const struct tbbt_proto_tok tbbt_proto_nfsstat2[] = {
    TOK(NFS_OK),
    TOK(NFSERR_PERM),
    TOK(NFSERR_NOENT),
    TOK(NFSERR_IO),
    TOK(NFSERR_NXIO),
    TOK(NFSERR_ACCES),
    TOK(NFSERR_EXIST),
    TOK(NFSERR_NODEV),
    TOK(NFSERR_NOTDIR),
    TOK(NFSERR_ISDIR),
    TOK(NFSERR_FBIG),
    TOK(NFSERR_NOSPC),
    TOK(NFSERR_ROFS),
    TOK(NFSERR_NAMETOOLONG),
    TOK(NFSERR_NOTEMPTY),
    TOK(NFSERR_DQUOT),
    TOK(NFSERR_STALE),
    TOK(NFSERR_WFLUSH),
    { 0, NULL },
};

const struct tbbt_proto_tok tbbt_proto_mountstat3[] = {
    TOK(MNT3_OK),
    TOK(MNT3ERR_PERM),
    TOK(MNT3ERR_NOENT),
    TOK(MNT3ERR_IO),
    TOK(MNT3ERR_ACCES),
    TOK(MNT3ERR_NOTDIR),
    TOK(MNT3ERR_INVAL),
    TOK(MNT3ERR_NAMETOOLONG),
    TOK(MNT3ERR_NOTSUPP),
    TOK(MNT3ERR_SERVERFAULT),
    { 0, NULL },
};

const char *tbbt_proto_tok_name(const struct tbbt_proto_tok *t, int value)
{
    for (; t->name != NULL; t++) {
        if (t->value == value)
            return t->name;
    }
    return NULL;
}

const char *tbbt_proto_status_name(int prog, int status)
{
    switch (prog) {
    case TBBT_PROTO_NFS2:
        return tbbt_proto_tok_name(tbbt_proto_nfsstat2, status);
    case TBBT_PROTO_NFS3:
        return tbbt_proto_tok_name(tbbt_proto_nfsstat3, status);
    case TBBT_PROTO_MNT1:
    case TBBT_PROTO_MNT3:
        return tbbt_proto_tok_name(tbbt_proto_mountstat3, status);
    default:
        return NULL;
    }
}
