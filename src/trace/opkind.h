/* SPDX-License-Identifier: MIT */
/*
 * The operation kind of a trace record and the catalogue row of its
 * procedure, beside the trace record (trace.h includes this header).  Both
 * come from the protocol catalogue (src/proto/catalogue.def,
 * docs/protocol-catalogue.md): NFSv2 (RFC 1094), NFSv3 (RFC 1813) and MOUNT
 * v1/v3.  The player, stats, aging and the namespace model read the kind
 * through here, without linking the namespace model.  Constant data: every
 * function here is thread-safe.
 */
#ifndef TBBT_TRACE_OPKIND_H
#define TBBT_TRACE_OPKIND_H

#include <stdint.h>

struct tbbt_trace_rec;

/* What an NFSv2/v3 or MOUNT procedure does (the kind column of the catalogue). */
enum tbbt_ns_op {
    TBBT_NS_OP_NONE, TBBT_NS_OP_ATTR, TBBT_NS_OP_SETATTR, TBBT_NS_OP_LOOKUP,
    TBBT_NS_OP_READLINK, TBBT_NS_OP_READ, TBBT_NS_OP_WRITE, TBBT_NS_OP_CREATE,
    TBBT_NS_OP_MKDIR, TBBT_NS_OP_SYMLINK, TBBT_NS_OP_MKNOD, TBBT_NS_OP_REMOVE,
    TBBT_NS_OP_RMDIR, TBBT_NS_OP_RENAME, TBBT_NS_OP_LINK, TBBT_NS_OP_READDIR,
    TBBT_NS_OP_READDIRPLUS, TBBT_NS_OP_MNT,
};

/*
 * One catalogue row in trace terms.  Field masks are sets of 1 << TBBT_F_*:
 * call = the fields the call carries, need = those a replayed call cannot do
 * without, reply = those the reply carries on the wire (listing counts
 * aside).  flags and ns are TBBT_PROTO_FL_* and TBBT_PROTO_NS_* (proto/proto.h).
 */
struct tbbt_proc_desc {
    const char *name;           /* "getattr"; NULL in an unused slot */
    uint8_t kind;               /* enum tbbt_ns_op */
    uint8_t flags;              /* TBBT_PROTO_FL_* */
    uint8_t ns;                 /* TBBT_PROTO_NS_* */
    uint64_t call, need, reply;
};

/* Above every procedure number of the catalogue; above every enum tbbt_prog. */
#define TBBT_PROC_MAX 32
#define TBBT_PROC_NPROG 5

/*
 * Compact copies of the kind and flags columns for the per-record paths, by
 * [prog][proc] (0 in unused slots); use tbbt_proc_kind() and tbbt_proc_flags().
 */
extern const uint8_t tbbt__proc_kinds[TBBT_PROC_NPROG][TBBT_PROC_MAX];
extern const uint8_t tbbt__proc_flags[TBBT_PROC_NPROG][TBBT_PROC_MAX];

/* The kind (enum tbbt_ns_op) of procedure proc of prog: TBBT_NS_OP_NONE if unknown. */
static inline int tbbt_proc_kind(int prog, int proc)
{
    return (unsigned)prog < TBBT_PROC_NPROG && (unsigned)proc < TBBT_PROC_MAX
               ? tbbt__proc_kinds[prog][proc] : 0;
}

/* The catalogue flags (TBBT_PROTO_FL_*) of procedure proc of prog: 0 if unknown. */
static inline unsigned tbbt_proc_flags(int prog, int proc)
{
    return (unsigned)prog < TBBT_PROC_NPROG && (unsigned)proc < TBBT_PROC_MAX
               ? tbbt__proc_flags[prog][proc] : 0;
}

/*
 * The row of procedure proc of prog (enum tbbt_prog), NULL if the catalogue
 * has none.  Borrowed constant data.
 */
const struct tbbt_proc_desc *tbbt_proc_desc(int prog, int proc);

/* The operation kind of rec's procedure (TBBT_NS_OP_NONE if unknown). */
enum tbbt_ns_op tbbt_ns_op(const struct tbbt_trace_rec *rec);

#endif
