/* SPDX-License-Identifier: MIT */
/*
 * The proto module's tables (see proto.h): the status names, made from
 * status.def with the values of the rpcgen headers, so they always agree with
 * nfs2.x, nfs3.x and mount.x (RFC 1094 2.3.1, RFC 1813 2.6 and Appendix I);
 * and the catalogue rows (catalogue.def) with their XDR routines; and the
 * NFSv4 names: nfsstat4 (status.def) and the COMPOUND and CB_COMPOUND
 * operations (nfs4op.def), with the values of nfs4.x (RFC 7863 section 2).
 */
#include "proto/proto.h"

#include <stddef.h>

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/nfs4.h"

/* ---- status names (status.def) --------------------------------------------- */

#define KEEP(prefix, name) {prefix##name, #prefix #name},
#define DROP(prefix, name)

#define TBBT_PROTO_STATUS_NFS3 KEEP
#define TBBT_PROTO_STATUS_NFS2 DROP
#define TBBT_PROTO_STATUS_MNT3 DROP
const struct tbbt_proto_tok tbbt_proto_nfsstat3[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_NFS3
#undef TBBT_PROTO_STATUS_NFS2
#define TBBT_PROTO_STATUS_NFS3 DROP
#define TBBT_PROTO_STATUS_NFS2 KEEP
const struct tbbt_proto_tok tbbt_proto_nfsstat2[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_NFS2
#undef TBBT_PROTO_STATUS_MNT3
#define TBBT_PROTO_STATUS_NFS2 DROP
#define TBBT_PROTO_STATUS_MNT3 KEEP
const struct tbbt_proto_tok tbbt_proto_mountstat3[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_MNT3
#define TBBT_PROTO_STATUS_MNT3 DROP
#define TBBT_PROTO_STATUS_NFS4 KEEP
const struct tbbt_proto_tok tbbt_proto_nfsstat4[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_NFS3
#undef TBBT_PROTO_STATUS_NFS2
#undef TBBT_PROTO_STATUS_MNT3
#undef TBBT_PROTO_STATUS_NFS4
#undef KEEP
#undef DROP

/* ---- NFSv4 operation names (nfs4op.def) ------------------------------------- */

#define TBBT_PROTO_NFS4_OP(name, minor) {OP_##name, #name},
const struct tbbt_proto_tok tbbt_proto_nfs4_ops[] = {
#include "proto/nfs4op.def"
    {0, NULL},
};
#undef TBBT_PROTO_NFS4_OP

#define TBBT_PROTO_NFS4_CB_OP(name, minor) {OP_##name, #name},
const struct tbbt_proto_tok tbbt_proto_nfs4_cb_ops[] = {
#include "proto/nfs4op.def"
    {0, NULL},
};
#undef TBBT_PROTO_NFS4_CB_OP

/*
 * By number, for one array lookup per operation: the numbers below ILLEGAL
 * are dense (3..OP_CLONE), and ILLEGAL (10044) sits in slot 0, which no
 * operation uses.
 */
#define NFS4_SLOT(op) ((op) == OP_ILLEGAL ? 0 : (op))
#define TBBT_PROTO_NFS4_OP(name, minor) [NFS4_SLOT(OP_##name)] = {#name, minor},
static const struct {
    const char *name;
    int minor;
} nfs4_ops[OP_CLONE + 1] = {
#include "proto/nfs4op.def"
};
#undef TBBT_PROTO_NFS4_OP

const char *tbbt_proto_nfs4_op_name(uint32_t op)
{
    if (op == 0)
        return NULL;
    op = NFS4_SLOT(op);
    return op < sizeof nfs4_ops / sizeof nfs4_ops[0] ? nfs4_ops[op].name : NULL;
}

int tbbt_proto_nfs4_op_minor(uint32_t op)
{
    if (op == 0)
        return -1;
    op = NFS4_SLOT(op);
    if (op >= sizeof nfs4_ops / sizeof nfs4_ops[0] || nfs4_ops[op].name == NULL)
        return -1;
    return nfs4_ops[op].minor;
}

/* ---- the catalogue (catalogue.def) ------------------------------------------ */

#define NPROCS 32       /* above every procedure number of the catalogue */

/* Through void (*)(void): xdr_void takes no arguments, and casts straight from it warn. */
#define XDRPROC(fn) ((xdrproc_t)(void (*)(void))(fn))
#define TBBT_PROTO_FL(x) TBBT_PROTO_FL_##x
#define TBBT_PROTO_NS(x) TBBT_PROTO_NS_##x
#define TBBT_PROTO_PROC(key, num, name, kind, dcall, dreply, call, need, reply, flags, ns,    \
                        argtype, restype)                                                    \
    [TBBT_PROTO_##key][num] = {TBBT_PROTO_##key, num, flags, ns, #name,                      \
                               XDRPROC(xdr_##argtype), XDRPROC(xdr_##restype)},

static const struct tbbt_proto_proc procs[TBBT_PROTO_MNT3 + 1][NPROCS] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC
#undef TBBT_PROTO_FL
#undef TBBT_PROTO_NS

const struct tbbt_proto_proc *tbbt_proto_proc(int key, uint32_t num)
{
    if (key <= 0 || key > TBBT_PROTO_MNT3 || num >= NPROCS || procs[key][num].name == NULL)
        return NULL;
    return &procs[key][num];
}

/* Called for every message of a capture: tests, not a search. */
int tbbt_proto_key(uint32_t program, uint32_t version)
{
    if (program == TBBT_PROTO_PROG_NFS)
        return version == 3 ? TBBT_PROTO_NFS3 : version == 2 ? TBBT_PROTO_NFS2 : 0;
    if (program == TBBT_PROTO_PROG_MOUNT)
        return version == 3 ? TBBT_PROTO_MNT3 : version == 1 ? TBBT_PROTO_MNT1 : 0;
    return 0;
}

uint32_t tbbt_proto_program(int key)
{
    switch (key) {
    case TBBT_PROTO_NFS2:
    case TBBT_PROTO_NFS3:
        return TBBT_PROTO_PROG_NFS;
    case TBBT_PROTO_MNT1:
    case TBBT_PROTO_MNT3:
        return TBBT_PROTO_PROG_MOUNT;
    default:
        return 0;
    }
}

uint32_t tbbt_proto_version(int key)
{
    static const uint32_t vers[] = {0, 2, 3, 1, 3};

    return key > 0 && key <= TBBT_PROTO_MNT3 ? vers[key] : 0;
}

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
