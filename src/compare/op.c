/* SPDX-License-Identifier: MIT */
/*
 * tbbt-compare's view of one trace record (compare-int.h, struct tbbt__cmp_op): the
 * header, the ID fields, the arguments that are compared and the reply fields that
 * matter for fidelity, but no handles, entries, pre-op attributes or verifiers.  Also the
 * matching key (procedure, objects, names, READ/WRITE offset, credential: compare.h) and
 * its hash, and the labels of procedures and outcomes used as difference keys.
 */
#include "compare/compare-int.h"

#include <string.h>

#include "ns/ns.h"
#include "player/fsdep.h"
#include "util/hash.h"

static void fill_strs(struct tbbt__cmp_op *op, const struct tbbt_trace_rec *rec, bool own)
{
    const struct tbbt_str *s[3] = {&rec->name, &rec->name2, &rec->target};
    const int f[3] = {TBBT_F_NAME, TBBT_F_NAME2, TBBT_F_TARGET};
    const char **dst[3] = {&op->name, &op->name2, &op->target};
    uint16_t *len[3] = {&op->name_len, &op->name2_len, &op->target_len};
    size_t total = 0;
    char *p;

    for (int i = 0; i < 3; i++) {
        bool has = TBBT_HAS(rec, f[i]) && s[i]->p;
        *len[i] = has ? (uint16_t)MIN(s[i]->len, (uint32_t)UINT16_MAX) : 0;
        *dst[i] = has ? s[i]->p : NULL;
        total += *len[i];
    }
    op->own = NULL;
    if (!own || total == 0)
        return;
    op->own = p = g_malloc(total);
    for (int i = 0; i < 3; i++) {
        if (!*dst[i])
            continue;
        memcpy(p, *dst[i], *len[i]);
        *dst[i] = p;
        p += *len[i];
    }
}

static void fill_attr(struct tbbt__cmp_attr *a, const struct tbbt_fattr *f)
{
    a->type = f->type;
    a->mode = f->mode;
    a->nlink = f->nlink;
    a->uid = f->uid;
    a->gid = f->gid;
    a->size = f->size;
}

/* The CMP_K_* parts of op's key (after fill_strs). */
static uint8_t key_parts(const struct tbbt__cmp_op *op)
{
    uint8_t has = 0;

    if (op->present & (UINT64_C(1) << TBBT_F_ID))
        has |= CMP_K_ID;
    if (op->present & (UINT64_C(1) << TBBT_F_ID2))
        has |= CMP_K_ID2;
    if (op->name)
        has |= CMP_K_NAME;
    if (op->name2)
        has |= CMP_K_NAME2;
    if ((op->kind == TBBT_NS_OP_READ || op->kind == TBBT_NS_OP_WRITE) &&
        (op->present & (UINT64_C(1) << TBBT_F_OFFSET)))
        has |= CMP_K_OFFSET;
    return has;
}

void tbbt__cmp_op_fill(struct tbbt__cmp_op *op, const struct tbbt_trace_rec *rec, uint64_t seq,
                       bool own)
{
    memset(op, 0, sizeof(*op));
    op->seq = seq;
    op->call_ns = rec->call_ns;
    op->reply_ns = rec->reply_ns;
    op->present = rec->present;
    op->id = rec->id;
    op->id2 = rec->id2;
    op->id_obj = rec->id_obj;
    op->id_old = rec->id_old;
    op->offset = rec->offset;
    op->cookie = rec->cookie;
    op->rdev = rec->rdev;
    if (TBBT_HAS(rec, TBBT_F_ENTRIES) && rec->n_entries > 0)
        op->last_cookie = rec->entries[rec->n_entries - 1].cookie;
    op->turn_ns = CMP_NO_TURN;
    op->sattr = rec->sattr;
    if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR))
        fill_attr(&op->attr, &rec->obj_attr);
    op->uid = rec->uid;
    op->gid = rec->gid;
    op->status = rec->status;
    op->count = rec->count;
    op->stable = rec->stable;
    op->dircount = rec->dircount;
    op->maxcount = rec->maxcount;
    op->access = rec->access;
    op->createmode = rec->createmode;
    op->ftype = rec->ftype;
    op->res_count = rec->res_count;
    op->eof = rec->eof;
    op->committed = rec->committed;
    op->access_res = rec->access_res;
    op->flags = rec->flags;
    op->prog = rec->prog;
    op->proc = rec->proc;
    op->rpc_stat = rec->rpc_stat;
    op->kind = (uint8_t)tbbt_ns_op(rec);
    fill_strs(op, rec, own);
    op->khas = key_parts(op);
    op->shown = tbbt_fsdep_shown(rec);
}

void tbbt__cmp_op_free(struct tbbt__cmp_op *op)
{
    if (!op)
        return;
    g_free(op->own);
    g_free(op);
}

bool tbbt__cmp_is_nfs(int prog)
{
    return prog == TBBT_PROG_NFS2 || prog == TBBT_PROG_NFS3;
}

void tbbt__cmp_key_own(struct tbbt__cmp_key *k, const struct tbbt__cmp_op *op)
{
    memset(k, 0, sizeof(*k));
    k->prog = op->prog;
    k->proc = op->proc;
    k->cred = op->cred;
    k->has = op->khas;
    if (k->has & CMP_K_ID)
        k->id = op->id;
    if (k->has & CMP_K_ID2)
        k->id2 = op->id2;
    if (k->has & CMP_K_NAME) {
        k->name = op->name;
        k->name_len = op->name_len;
    }
    if (k->has & CMP_K_NAME2) {
        k->name2 = op->name2;
        k->name2_len = op->name2_len;
    }
    if (k->has & CMP_K_OFFSET)
        k->offset = op->offset;
}

uint64_t tbbt__cmp_key_hash(const struct tbbt__cmp_key *k)
{
    struct {
        uint64_t id, id2, offset, cred;
        uint8_t prog, proc, has, pad[5];
    } fixed = {k->id, k->id2, k->offset, k->cred, k->prog, k->proc, k->has, {0}};
    uint64_t h = tbbt_hash(&fixed, sizeof(fixed), 0);

    if (k->has & CMP_K_NAME)
        h = tbbt_hash(k->name, k->name_len, h);
    if (k->has & CMP_K_NAME2)
        h = tbbt_hash(k->name2, k->name2_len, h ^ 0x9e3779b97f4a7c15ull);
    return h;
}

static bool same_bytes(const char *a, uint16_t alen, const char *b, uint16_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

bool tbbt__cmp_key_equal(const struct tbbt__cmp_key *k, const struct tbbt__cmp_op *op)
{
    uint8_t has = op->khas;

    return k->prog == op->prog && k->proc == op->proc && k->has == has && k->cred == op->cred &&
           (!(has & CMP_K_ID) || k->id == op->id) && (!(has & CMP_K_ID2) || k->id2 == op->id2) &&
           (!(has & CMP_K_OFFSET) || k->offset == op->offset) &&
           (!(has & CMP_K_NAME) || same_bytes(k->name, k->name_len, op->name, op->name_len)) &&
           (!(has & CMP_K_NAME2) || same_bytes(k->name2, k->name2_len, op->name2, op->name2_len));
}

const char *tbbt__cmp_proc_label(int prog, int proc)
{
    const char *s = tbbt_proc_label(prog, proc, NULL, 0);

    return s ? s : "other";
}

void tbbt__cmp_status_label(const struct tbbt__cmp_op *op, char *buf, size_t len)
{
    const char *s;

    if (!(op->flags & TBBT_RF_REPLY)) {
        g_strlcpy(buf, "noreply", len);
    } else if (op->rpc_stat != TBBT_RPC_SUCCESS) {
        s = tbbt_rpc_stat_name(op->rpc_stat);
        if (s)
            g_strlcpy(buf, s, len);
        else
            g_snprintf(buf, len, "rpc%u", op->rpc_stat);
    } else if (!(op->flags & TBBT_RF_STATUS)) {
        g_strlcpy(buf, "OK", len);
    } else if ((s = tbbt_status_name(op->prog, op->status)) != NULL) {
        g_strlcpy(buf, s, len);
    } else {
        g_snprintf(buf, len, "%d", (int)op->status);
    }
}

bool tbbt__cmp_makes_object(const struct tbbt__cmp_op *op)
{
    return op->kind == TBBT_NS_OP_CREATE || op->kind == TBBT_NS_OP_MKDIR ||
           op->kind == TBBT_NS_OP_SYMLINK || op->kind == TBBT_NS_OP_MKNOD;
}
