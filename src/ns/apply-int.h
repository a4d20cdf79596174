/* SPDX-License-Identifier: MIT */
/*
 * Private to the ns module's record application (apply*.c): the context of
 * one record being applied, and the helpers the operation files share.
 * apply.c holds the entry points, what attributes tell and the placing of
 * names; apply-ops.c the effect of each operation kind; apply-mount.c the
 * export root and MOUNT; apply-scan.c the identity scan before replay.
 * Every function here works on the one model of c->ns from the thread that
 * owns it; pointers are borrowed for the call.
 */
#ifndef TBBT_NS_APPLY_INT_H
#define TBBT_NS_APPLY_INT_H

#include <string.h>

#include "ns/ns-int.h"

/* One record being applied: borrowed from tbbt_ns_apply*() for its duration. */
struct tbbt__ns_ctx {
    struct tbbt_ns *ns;
    struct tbbt_trace_rec *rec;
    uint64_t t;         /* event time: call time, made monotonic, >= 1 */
    int op;
    bool replied;       /* an NFS/MOUNT status is known */
    bool ok;
    int32_t status;
    uint32_t dir, dir2; /* objects of fh and fh2, 0 if none */
};

/* Sets ID field field of rec to id, unless id is 0. */
static inline void ns_set_id(struct tbbt_trace_rec *rec, int field, uint32_t id)
{
    if (!id)
        return;
    TBBT_SET(rec, field);
    switch (field) {
    case TBBT_F_ID: rec->id = id; break;
    case TBBT_F_ID2: rec->id2 = id; break;
    case TBBT_F_ID_OBJ: rec->id_obj = id; break;
    default: rec->id_old = id; break;
    }
}

/* Creation time of a name first seen now in dir over a record l (negative/deleted) or none. */
static inline uint64_t ns_sighting_time(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t l)
{
    return l || ns_obj(c->ns, dir)->create_ns ? c->t : 0;
}

/* "." (n 1) or ".." (n 2). */
static inline bool ns_is_dots(const struct tbbt_str *s, size_t n)
{
    return s->len == n && memcmp(s->p, "..", n) == 0;
}

/* ---- apply.c: evidence and names ---------------------------------------------------- */

/* The pool ref of a name that may be a component; 0 (counted) if it cannot be one. */
uint32_t tbbt__ns_comp(struct tbbt__ns_ctx *c, const struct tbbt_str *s);

/* A size seen for o: exact (the size at trace start) or a lower bound. */
void tbbt__ns_size_evidence(struct ns_obj *o, uint64_t size, bool exact);

/* What attributes a (any status) tell of object id (0: nothing): type, links, size, mode, key. */
void tbbt__ns_learn(struct tbbt__ns_ctx *c, uint32_t id, const struct tbbt_fattr *a);

/* tbbt__ns_learn() if the record carries attribute field field. */
void tbbt__ns_learn_field(struct tbbt__ns_ctx *c, uint32_t id, int field,
                          const struct tbbt_fattr *a);

/* An operation that may change the size of id happened (or may have: no reply). */
void tbbt__ns_size_change(struct tbbt__ns_ctx *c, uint32_t id, uint64_t write_end);

/* A symlink's target: the first one seen; one holding NUL cannot be (counted as hostile). */
void tbbt__ns_set_target(struct tbbt__ns_ctx *c, uint32_t id, const struct tbbt_str *s);

/* Directory dir is in directory parent (a ".." or a mount told it). */
void tbbt__ns_set_parent(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t parent);

/*
 * Object id is at (dir, name), where the model has no live link (l: what the
 * table holds there, or 0).  A directory, or a file whose link count says it
 * has no other name, moved (a lost rename); anything else gains a name.
 */
void tbbt__ns_place(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, uint32_t id, uint32_t l);

/* A new object named (dir, name) that the model did not know of. */
uint32_t tbbt__ns_new_named(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, int type);

/* (dir, name) is absent now. */
void tbbt__ns_absent(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name);

/* (dir, name) holds something now; returns it. */
uint32_t tbbt__ns_present(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, int type);

/* The name's object was replaced by id (evidence the model had missed). */
void tbbt__ns_rebind(struct tbbt__ns_ctx *c, uint32_t l, uint32_t dir, uint32_t name, uint32_t id);

/*
 * A reply says (dir, name) is handle ref (attributes a, may be NULL).  The
 * handle's own object wins; a handle that has none takes the name's.
 */
uint32_t tbbt__ns_bind_handle(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, uint32_t ref,
                              const struct tbbt_fattr *a);

/* By ID (a trace whose IDs are final): a reply says (dir, name) is object id. */
void tbbt__ns_bind_id(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, uint32_t id);

/* A readdir entry without a handle: (dir, name) has fileid in dir's file system. */
uint32_t tbbt__ns_bind_fileid(struct tbbt__ns_ctx *c, uint32_t dir, uint32_t name, bool have_fsid,
                              uint64_t fsid, uint64_t fileid);

/* ---- apply-ops.c: one function per operation kind (c->op) ---------------------------- */

/*
 * The effect of c->rec on the model by its kind; c->dir and c->dir2 are the
 * objects of fh and fh2 already resolved, the ID fields set by the caller.
 */
void tbbt__ns_op_attr(struct tbbt__ns_ctx *c);
void tbbt__ns_op_setattr(struct tbbt__ns_ctx *c);
void tbbt__ns_op_write(struct tbbt__ns_ctx *c);
void tbbt__ns_op_read(struct tbbt__ns_ctx *c);
void tbbt__ns_op_readlink(struct tbbt__ns_ctx *c);
void tbbt__ns_op_lookup(struct tbbt__ns_ctx *c);
void tbbt__ns_op_create(struct tbbt__ns_ctx *c);
void tbbt__ns_op_remove(struct tbbt__ns_ctx *c);
void tbbt__ns_op_rename(struct tbbt__ns_ctx *c);
void tbbt__ns_op_link(struct tbbt__ns_ctx *c);
void tbbt__ns_op_readdir(struct tbbt__ns_ctx *c);

/* ---- apply-mount.c: MOUNT and the export root ---------------------------------------- */

/*
 * Before the first record: the export root's depth, the components every mounted path
 * shares; without MOUNT traffic, the root from the hints (infer_root()).
 */
void tbbt__ns_mounts_prepare(struct tbbt_ns *ns);

/* A MNT: the mounted directory's handle gets its place under the export root. */
void tbbt__ns_op_mnt(struct tbbt__ns_ctx *c);

#endif
