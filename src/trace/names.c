/* SPDX-License-Identifier: MIT */
/*
 * Name tables of the trace module: procedure names and the catalogue rows in
 * trace terms (RFC 1813 3.3, RFC 1094 2.2, RFC 1813 Appendix I 5.2 for MOUNT;
 * all made from proto/catalogue.def), short status names (nfsstat3 RFC 1813
 * 2.6, nfsstat RFC 1094 2.3.1, mountstat3 RFC 1813 Appendix I 5.1.5; made
 * from proto/status.def with rpcgen's values), the
 * record flag and sattr mask names of the text form, and the field table
 * (docs/trace-format.md) that drives the writer, reader and text form.
 */
#include "trace/trace-int.h"

#include <string.h>

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/nfs4.h"
#include "proto/proto.h"

#define F(tag, name, kind, member)                                                                \
    [tag] = {name, TBBT__K_##kind, offsetof(struct tbbt_trace_rec, member)}

const struct tbbt__field tbbt__trace_fields[TBBT_F_NFIELDS] = {
    F(TBBT_F_FH, "fh", REF, fh),
    F(TBBT_F_NAME, "name", NAME, name),
    F(TBBT_F_FH2, "fh2", REF, fh2),
    F(TBBT_F_NAME2, "name2", NAME, name2),
    F(TBBT_F_OFFSET, "offset", U64, offset),
    F(TBBT_F_COUNT, "count", U32, count),
    F(TBBT_F_STABLE, "stable", U32, stable),
    F(TBBT_F_SATTR, "sattr", SATTR, sattr),
    F(TBBT_F_GUARD, "guard_ns", TIME, guard_ns),
    F(TBBT_F_TARGET, "target", PATH, target),
    F(TBBT_F_COOKIE, "cookie", U64, cookie),
    F(TBBT_F_COOKIEVERF, "cookieverf", VERF, cookieverf),
    F(TBBT_F_DIRCOUNT, "dircount", U32, dircount),
    F(TBBT_F_MAXCOUNT, "maxcount", U32, maxcount),
    F(TBBT_F_ACCESS, "access", U32, access),
    F(TBBT_F_CREATEMODE, "createmode", U32, createmode),
    F(TBBT_F_CREATEVERF, "createverf", VERF, createverf),
    F(TBBT_F_FTYPE, "ftype", U32, ftype),
    F(TBBT_F_RDEV, "rdev", U64, rdev),
    F(TBBT_F_DIRPATH, "dirpath", PATH, dirpath),
    F(TBBT_F_NEW_FH, "new_fh", REF, new_fh),
    F(TBBT_F_OBJ_ATTR, "obj_attr", FATTR, obj_attr),
    F(TBBT_F_OBJ_PRE, "obj_pre", WCC, obj_pre),
    F(TBBT_F_DIR_ATTR, "dir_attr", FATTR, dir_attr),
    F(TBBT_F_DIR_PRE, "dir_pre", WCC, dir_pre),
    F(TBBT_F_DIR2_ATTR, "dir2_attr", FATTR, dir2_attr),
    F(TBBT_F_DIR2_PRE, "dir2_pre", WCC, dir2_pre),
    F(TBBT_F_RES_COUNT, "res_count", U32, res_count),
    F(TBBT_F_EOF, "eof", U32, eof),
    F(TBBT_F_COMMITTED, "committed", U32, committed),
    F(TBBT_F_WRITEVERF, "writeverf", VERF, writeverf),
    F(TBBT_F_ACCESS_RES, "access_res", U32, access_res),
    F(TBBT_F_ENTRIES, "entries", ENTRIES, entries),
    F(TBBT_F_INFO, "info", INFO, info),
    F(TBBT_F_ID, "id", U64, id),
    F(TBBT_F_ID2, "id2", U64, id2),
    F(TBBT_F_ID_OBJ, "id_obj", U64, id_obj),
    F(TBBT_F_ID_OLD, "id_old", U64, id_old),
    F(TBBT_F_CRED, "cred", CRED, cred),
    F(TBBT_F_MINOR, "minor", U32, minor),
    F(TBBT_F_OPS, "ops", OPS4, ops),
    F(TBBT_F_OPS_MORE, "ops_more", OPS4X, ops),
};

#define S(type, name, kind, member, bit)                                                          \
    {name, TBBT__S_##kind, offsetof(type, member), bit}

#define FATTR_SUB(m, i, bits, name, kind, bit) S(struct tbbt_fattr, name, kind, m, bit),
#define SATTR_SUB(m, i, bits, name, kind, bit) S(struct tbbt_sattr, name, kind, m, bit),
#define WCC_SUB(m, i, bits, name, kind, bit) S(struct tbbt_wcc_pre, name, kind, m, bit),

const struct tbbt__sub tbbt__fattr_subs[] = {
    TBBT__FATTR_VALUES(FATTR_SUB)
    {NULL, 0, 0, 0},
};

const struct tbbt__sub tbbt__sattr_subs[] = {
    TBBT__SATTR_VALUES(SATTR_SUB)
    {NULL, 0, 0, 0},
};

const struct tbbt__sub tbbt__wcc_subs[] = {
    TBBT__WCC_VALUES(WCC_SUB)
    {NULL, 0, 0, 0},
};

/*
 * Procedure names and labels from the catalogue, a { value, "name" } list per program
 * (procedure numbers run from 0 without a gap, so each list ends at its first unused
 * slot, { 0, NULL }).  MOUNT v1 and v3 share their names.  Labels: NFSv3's are its
 * names, the others' are prefixed ("v2.read", "mnt3.mnt").
 */
#define LABEL_NFS3 ""
#define LABEL_NFS2 "v2."
#define LABEL_MNT1 "mnt1."
#define LABEL_MNT3 "mnt3."
#define TBBT_PROTO_PROC(key, num, name, ...) [TBBT_PROG_##key][num] = {num, #name},
static const struct tbbt__tok procs[TBBT_PROG_MNT3 + 1][TBBT_PROC_MAX + 1] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC
#define TBBT_PROTO_PROC(key, num, name, ...) [TBBT_PROG_##key][num] = {num, LABEL_##key #name},
static const struct tbbt__tok labels[TBBT_PROG_MNT3 + 1][TBBT_PROC_MAX + 1] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC

/* Short status names ("NOENT") from the one status list, proto/status.def. */
#define SKEEP(prefix, name) {prefix##name, #name},
#define SDROP(prefix, name)
#define TBBT_PROTO_STATUS_NFS3 SKEEP
#define TBBT_PROTO_STATUS_NFS2 SDROP
#define TBBT_PROTO_STATUS_MNT3 SDROP
static const struct tbbt__tok nfs3_status[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_NFS3
#undef TBBT_PROTO_STATUS_NFS2
#define TBBT_PROTO_STATUS_NFS3 SDROP
#define TBBT_PROTO_STATUS_NFS2 SKEEP
static const struct tbbt__tok nfs2_status[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_NFS2
#undef TBBT_PROTO_STATUS_MNT3
#define TBBT_PROTO_STATUS_NFS2 SDROP
#define TBBT_PROTO_STATUS_MNT3 SKEEP
static const struct tbbt__tok mnt_status[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_MNT3
#define TBBT_PROTO_STATUS_MNT3 SDROP
#define TBBT_PROTO_STATUS_NFS4 SKEEP
static const struct tbbt__tok nfs4_status[] = {
#include "proto/status.def"
    {0, NULL},
};
#undef TBBT_PROTO_STATUS_NFS3
#undef TBBT_PROTO_STATUS_NFS2
#undef TBBT_PROTO_STATUS_MNT3
#undef TBBT_PROTO_STATUS_NFS4

/* NFSv4's two procedures (RFC 7530 16.1, 16.2); its operations are in `ops`. */
static const struct tbbt__tok nfs4_procs[] = {{0, "null"}, {1, "compound"}, {0, NULL}};
static const struct tbbt__tok nfs4_labels[] = {{0, "v4.null"}, {1, "v4.compound"}, {0, NULL}};

/* The catalogue in trace terms (trace/opkind.h), indexed by program and procedure. */
#define TBBT_PROTO_F(x) (UINT64_C(1) << TBBT_F_##x)
#define TBBT_PROTO_FL(x) TBBT_PROTO_FL_##x
#define TBBT_PROTO_NS(x) TBBT_PROTO_NS_##x
#define TBBT_PROTO_PROC(key, num, name, kind, dcall, dreply, call, need, reply, flags, ns,    \
                        argtype, restype)                                                    \
    [TBBT_PROG_##key][num] = {#name, TBBT_NS_OP_##kind, flags, ns, call, need, reply},

static const struct tbbt_proc_desc proc_descs[TBBT_PROC_NPROG][TBBT_PROC_MAX] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC
#undef TBBT_PROTO_F
#undef TBBT_PROTO_FL
#undef TBBT_PROTO_NS

const struct tbbt_proc_desc *tbbt_proc_desc(int prog, int proc)
{
    const struct tbbt_proc_desc *d;

    if (prog <= TBBT_PROG_NONE || prog > TBBT_PROG_MNT3 || proc < 0 || proc >= TBBT_PROC_MAX)
        return NULL;
    d = &proc_descs[prog][proc];
    return d->name ? d : NULL;
}

#define TBBT_PROTO_FL(x) TBBT_PROTO_FL_##x
#define TBBT_PROTO_PROC(key, num, name, kind, dcall, dreply, call, need, reply, flags, ...)   \
    [TBBT_PROG_##key][num] = TBBT_NS_OP_##kind,
const uint8_t tbbt__proc_kinds[TBBT_PROC_NPROG][TBBT_PROC_MAX] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC
#define TBBT_PROTO_PROC(key, num, name, kind, dcall, dreply, call, need, reply, flags, ...)   \
    [TBBT_PROG_##key][num] = flags,
const uint8_t tbbt__proc_flags[TBBT_PROC_NPROG][TBBT_PROC_MAX] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC
#undef TBBT_PROTO_FL
_Static_assert(TBBT_PROG_MNT3 < TBBT_PROC_NPROG, "TBBT_PROC_NPROG too small");

enum tbbt_ns_op tbbt_ns_op(const struct tbbt_trace_rec *rec)
{
    return (enum tbbt_ns_op)tbbt_proc_kind(rec->prog, rec->proc);
}

const struct tbbt__tok tbbt__prog_names[] = {
    {TBBT_PROG_NFS2, "v2"}, {TBBT_PROG_NFS3, "v3"}, {TBBT_PROG_MNT1, "mnt1"},
    {TBBT_PROG_MNT3, "mnt3"}, {TBBT_PROG_NFS4, "v4"}, {0, NULL},
};

const struct tbbt__tok tbbt__rf_names[] = {
    {TBBT_RF_REPLY, "reply"},           {TBBT_RF_CALL_TRUNC, "call_trunc"},
    {TBBT_RF_REPLY_TRUNC, "reply_trunc"}, {TBBT_RF_STATUS, "status"},
    {TBBT_RF_CORRECTIVE, "corrective"}, {TBBT_RF_NO_CALL, "no_call"},
    {TBBT_RF_TCP, "tcp"},               {TBBT_RF_CALL_BAD, "call_bad"},
    {TBBT_RF_REPLY_BAD, "reply_bad"},   {0, NULL},
};

const struct tbbt__tok tbbt__sa_names[] = {
    {TBBT_SA_MODE, "mode"},   {TBBT_SA_UID, "uid"},     {TBBT_SA_GID, "gid"},
    {TBBT_SA_SIZE, "size"},   {TBBT_SA_ATIME, "atime"}, {TBBT_SA_ATIME_SERVER, "atime_server"},
    {TBBT_SA_MTIME, "mtime"}, {TBBT_SA_MTIME_SERVER, "mtime_server"}, {0, NULL},
};

const struct tbbt__tok tbbt__rpc_names[] = {
    {TBBT_RPC_SUCCESS, "success"},
    {TBBT_RPC_PROG_UNAVAIL, "prog_unavail"},
    {TBBT_RPC_PROG_MISMATCH, "prog_mismatch"},
    {TBBT_RPC_PROC_UNAVAIL, "proc_unavail"},
    {TBBT_RPC_GARBAGE_ARGS, "garbage_args"},
    {TBBT_RPC_SYSTEM_ERR, "system_err"},
    {TBBT_RPC_DENIED_MISMATCH, "denied_mismatch"},
    {TBBT_RPC_DENIED_AUTH, "denied_auth"},
    {0, NULL},
};

const char *tbbt__tok_name(const struct tbbt__tok *t, int value)
{
    for (; t->name; t++)
        if (t->value == value)
            return t->name;
    return NULL;
}

int tbbt__tok_value(const struct tbbt__tok *t, const char *name, size_t len, int *value)
{
    for (; t->name; t++) {
        if (strlen(t->name) == len && memcmp(t->name, name, len) == 0) {
            *value = t->value;
            return 0;
        }
    }
    return -1;
}

const struct tbbt__tok *tbbt__proc_tok(int prog)
{
    if (prog == TBBT_PROG_NFS4)
        return nfs4_procs;
    return prog > TBBT_PROG_NONE && prog <= TBBT_PROG_MNT3 ? procs[prog] : NULL;
}

const struct tbbt__tok *tbbt__status_tok(int prog)
{
    switch (prog) {
    case TBBT_PROG_NFS2:
        return nfs2_status;
    case TBBT_PROG_NFS3:
        return nfs3_status;
    case TBBT_PROG_MNT1:
    case TBBT_PROG_MNT3:
        return mnt_status;
    case TBBT_PROG_NFS4:
        return nfs4_status;
    default:
        return NULL;
    }
}

const char *tbbt_proc_name(int prog, int proc)
{
    const struct tbbt__tok *t = tbbt__proc_tok(prog);
    return t ? tbbt__tok_name(t, proc) : NULL;
}

static const struct tbbt__tok *label_tok(int prog)
{
    if (prog == TBBT_PROG_NFS4)
        return nfs4_labels;
    return prog > TBBT_PROG_NONE && prog <= TBBT_PROG_MNT3 ? labels[prog] : NULL;
}

const char *tbbt_proc_label(int prog, int proc, char *buf, size_t len)
{
    const struct tbbt__tok *t = label_tok(prog);
    const char *s = t ? tbbt__tok_name(t, proc) : NULL;
    const char *pn = tbbt_prog_name(prog);

    if (s || !buf)
        return s;
    const char *op = prog == TBBT_PROG_NFS4 ? tbbt_proto_nfs4_op_name((uint32_t)proc) : NULL;
    if (op && proc > 2) {       /* an operation (3..): "v4.open"; 0 and 1 are procedures */
        char *low = g_ascii_strdown(op, -1);
        g_snprintf(buf, len, "v4.%s", low);
        g_free(low);
        return buf;
    }
    if (prog == TBBT_PROG_NFS3)
        g_snprintf(buf, len, "%d", proc);
    else if (pn)
        g_snprintf(buf, len, "%s.%d", pn, proc);
    else
        g_snprintf(buf, len, "prog%d.%d", prog, proc);
    return buf;
}

const char *tbbt_rpc_stat_name(int rpc_stat)
{
    return tbbt__tok_name(tbbt__rpc_names, rpc_stat);
}

int tbbt_proc_by_name(int prog, const char *name)
{
    const struct tbbt__tok *t = tbbt__proc_tok(prog);
    int v;

    if (!t || !name || tbbt__tok_value(t, name, strlen(name), &v) < 0)
        return -1;
    return v;
}

const char *tbbt_prog_name(int prog)
{
    return tbbt__tok_name(tbbt__prog_names, prog);
}

int tbbt_prog_by_name(const char *name)
{
    int v;

    if (!name || tbbt__tok_value(tbbt__prog_names, name, strlen(name), &v) < 0)
        return -1;
    return v;
}

int tbbt_prog_nprocs(int prog)
{
    const struct tbbt__tok *t = tbbt__proc_tok(prog);
    int n = 0;

    while (t && t[n].name)
        n++;
    return n;
}

const char *tbbt_status_name(int prog, int32_t status)
{
    const struct tbbt__tok *t = tbbt__status_tok(prog);
    return t ? tbbt__tok_name(t, status) : NULL;
}

int tbbt_status_by_name(int prog, const char *name, int32_t *status)
{
    const struct tbbt__tok *t = tbbt__status_tok(prog);
    int v;

    if (!t || !name || tbbt__tok_value(t, name, strlen(name), &v) < 0)
        return -1;
    *status = v;
    return 0;
}

bool tbbt__addr_valid(const char *s, size_t len)
{
    if (len == 0 || len > TBBT__TRACE_ADDR_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '.' || c == ':' || c == '%' || c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}
