/* SPDX-License-Identifier: MIT */
/*
 * A traced NFSv4 COMPOUND rebuilt as a live one (nfs4build.h): one builder per
 * operation, from the members of its struct tbbt_op4 (which operation sets which:
 * src/extract/nfs4rec.c, docs/trace-format.md "NFSv4 operations") and the live state
 * of nfs4state.h.  Operation arguments: RFC 7530 16 (4.0), RFC 8881 18 (4.1), RFC 7862
 * 15 (4.2); attributes to set: RFC 7530 5 (a bitmap4 and the values in bit order).
 */
#include "player/nfs4build.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/proto.h"

/* What one build needs on hand. */
struct bctx {
    struct tbbt_nfs4_state *st;
    const struct tbbt_trace_rec *rec;
    struct tbbt_nfs4_call *call;
    uint32_t i;                 /* the operation being built */
};

#define ARG(a, op) (&(a)->nfs_argop4_u.op)

static int unsendable(struct bctx *b, const char *why, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);
static int unsendable(struct bctx *b, const char *why, const char *fmt, ...)
{
    va_list ap;
    int n;
    const char *name = tbbt_proto_nfs4_op_name(b->rec->ops[b->i].op);

    b->call->why = why;
    n = snprintf(b->call->detail, sizeof(b->call->detail), "op %u (%s): ", b->i + 1,
                 name ? name : "?");
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(b->call->detail))
        vsnprintf(b->call->detail + n, sizeof(b->call->detail) - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void *keep(struct bctx *b, const void *p, size_t n)
{
    void *q = p && n ? g_memdup2(p, n) : g_malloc0(n ? n : 1);

    g_ptr_array_add(b->call->mem, q);
    return q;
}

static bool has(const struct tbbt_op4 *o, int m)
{
    return (o->has >> m) & 1u;
}

/* A member the operation needs and the trace lacks. */
static int need(struct bctx *b, const struct tbbt_op4 *o, int m, const char *name)
{
    if (has(o, m))
        return 0;
    return unsendable(b, "member missing in trace", "no %s", name);
}

#define NEED(b, o, M, m) need(b, o, TBBT_O4_##M, #m)

static void put_str(struct bctx *b, const struct tbbt_str *s, u_int *len, char **val)
{
    *len = s->len;
    *val = keep(b, s->p, s->len);
}

/* A client id string: the state's tag (tbbt_nfs4_client_tag_set(), its first 64 bytes),
 * then the traced id, cut to NFS4_OPAQUE_LIMIT bytes in all. */
static void put_client_id(struct bctx *b, const struct tbbt_str *id, u_int *len, char **val)
{
    const char *tag = tbbt_nfs4_client_tag(b->st);
    size_t t = MIN(strlen(tag), (size_t)64), n = MIN((size_t)id->len, NFS4_OPAQUE_LIMIT - t);
    char *p = keep(b, NULL, t + n);

    memcpy(p, tag, t);
    if (n)
        memcpy(p + t, id->p, n);
    *len = (u_int)(t + n);
    *val = p;
}

static void put_verf(char *dst, uint64_t v)
{
    memcpy(dst, &v, NFS4_VERIFIER_SIZE);   /* the trace keeps the 8 bytes in memory order */
}

/* ------------------------------------------------------------------ attributes */

static void put32(GByteArray *a, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

    g_byte_array_append(a, x, 4);
}

static void put64(GByteArray *a, uint64_t v)
{
    put32(a, (uint32_t)(v >> 32));
    put32(a, (uint32_t)v);
}

static void put_owner(GByteArray *a, uint32_t id)
{
    char s[16];
    int n = snprintf(s, sizeof(s), "%u", id);
    static const uint8_t zero[4];

    put32(a, (uint32_t)n);
    g_byte_array_append(a, (const uint8_t *)s, (guint)n);
    g_byte_array_append(a, zero, (guint)((4 - n % 4) % 4));
}

static void put_settime(GByteArray *a, bool client, uint64_t ns)
{
    put32(a, client ? SET_TO_CLIENT_TIME4 : SET_TO_SERVER_TIME4);
    if (client) {
        put64(a, ns / 1000000000u);
        put32(a, (uint32_t)(ns % 1000000000u));
    }
}

#define BIT(n) (1u << ((n) % 32))

static void fattr_out(struct bctx *b, const uint32_t mask[2], GByteArray *vals, fattr4 *f)
{
    f->attrmask.bitmap4_len = mask[1] ? 2 : 1;
    f->attrmask.bitmap4_val = keep(b, mask, 2 * sizeof(uint32_t));
    f->attr_vals.attrlist4_len = vals->len;
    f->attr_vals.attrlist4_val = keep(b, vals->data, vals->len);
    g_byte_array_free(vals, TRUE);
}

/* struct tbbt_sattr as fattr4 (RFC 7530 5: size 4, mode 33, owner 36, owner_group 37,
 * time_access_set 48, time_modify_set 54; owners as numeric strings). */
static void sattr_fattr(struct bctx *b, const struct tbbt_sattr *s, fattr4 *f)
{
    GByteArray *v = g_byte_array_new();
    uint32_t mask[2] = { 0, 0 };

    if (s->mask & TBBT_SA_SIZE) {
        mask[0] |= BIT(FATTR4_SIZE);
        put64(v, s->size);
    }
    if (s->mask & TBBT_SA_MODE) {
        mask[1] |= BIT(FATTR4_MODE);
        put32(v, s->mode);
    }
    if (s->mask & TBBT_SA_UID) {
        mask[1] |= BIT(FATTR4_OWNER);
        put_owner(v, s->uid);
    }
    if (s->mask & TBBT_SA_GID) {
        mask[1] |= BIT(FATTR4_OWNER_GROUP);
        put_owner(v, s->gid);
    }
    if (s->mask & (TBBT_SA_ATIME | TBBT_SA_ATIME_SERVER)) {
        mask[1] |= BIT(FATTR4_TIME_ACCESS_SET);
        put_settime(v, s->mask & TBBT_SA_ATIME, s->atime_ns);
    }
    if (s->mask & (TBBT_SA_MTIME | TBBT_SA_MTIME_SERVER)) {
        mask[1] |= BIT(FATTR4_TIME_MODIFY_SET);
        put_settime(v, s->mask & TBBT_SA_MTIME, s->mtime_ns);
    }
    fattr_out(b, mask, v, f);
}

static int sattr_arg(struct bctx *b, const struct tbbt_op4 *o, fattr4 *f)
{
    static const struct tbbt_sattr none;

    if (has(o, TBBT_O4_TRUNC) && has(o, TBBT_O4_SATTR))
        return unsendable(b, "attributes cut in trace", "attributes to set not all kept");
    sattr_fattr(b, has(o, TBBT_O4_SATTR) ? &o->sattr : &none, f);
    return 0;
}

/* The traced values a VERIFY/NVERIFY compares: those the call carried (format 1.3, all
 * decoded), else the last traced GETATTR's of the current object; NULL if neither. */
static const struct tbbt_fattr *verify_values(struct bctx *b, const struct tbbt_op4 *o)
{
    const struct tbbt_nfs4_opaux *x = &b->call->aux[b->i];

    if (has(o, TBBT_O4_ATTR) && !has(o, TBBT_O4_TRUNC))
        return &o->attr;
    return x->cur_known ? tbbt_nfs4_attr_traced(b->st, x->cur) : NULL;
}

/* VERIFY/NVERIFY: the traced values of the asked attributes (verify_values(); type 1,
 * size 4, mode 33, owner 36, owner_group 37). */
static int verify_attr(struct bctx *b, const struct tbbt_op4 *o, fattr4 *f)
{
    const struct tbbt_fattr *a;
    uint32_t mask[2] = { (uint32_t)o->bitmap, (uint32_t)(o->bitmap >> 32) };
    const uint32_t ok0 = BIT(FATTR4_TYPE) | BIT(FATTR4_SIZE);
    const uint32_t ok1 = BIT(FATTR4_MODE) | BIT(FATTR4_OWNER) | BIT(FATTR4_OWNER_GROUP);
    GByteArray *v;

    if (NEED(b, o, BITMAP, bitmap) < 0)
        return -1;
    if ((mask[0] & ~ok0) || (mask[1] & ~ok1))
        return unsendable(b, "VERIFY of attributes the trace lacks",
                          "bitmap 0x%08x 0x%08x", mask[0], mask[1]);
    a = verify_values(b, o);
    if (!a)
        return unsendable(b, "VERIFY without traced attributes",
                          "no traced GETATTR of the object");
    v = g_byte_array_new();
    if (mask[0] & BIT(FATTR4_TYPE))
        put32(v, a->type);
    if (mask[0] & BIT(FATTR4_SIZE))
        put64(v, a->size);
    if (mask[1] & BIT(FATTR4_MODE))
        put32(v, a->mode);
    if (mask[1] & BIT(FATTR4_OWNER))
        put_owner(v, a->uid);
    if (mask[1] & BIT(FATTR4_OWNER_GROUP))
        put_owner(v, a->gid);
    fattr_out(b, mask, v, f);
    return 0;
}

static void bitmap_arg(struct bctx *b, uint64_t bits, bitmap4 *m)
{
    uint32_t w[2] = { (uint32_t)bits, (uint32_t)(bits >> 32) };

    m->bitmap4_len = w[1] ? 2 : 1;
    m->bitmap4_val = keep(b, w, sizeof(w));
}

/* ------------------------------------------------------------------ state */

static int live_sid(struct bctx *b, const struct tbbt_op4 *o, stateid4 *out)
{
    if (NEED(b, o, STATEID, stateid) < 0)
        return -1;
    if (tbbt_nfs4_sid_live(b->st, o->stateid, out) < 0)
        return unsendable(b, "unknown stateid", "stateid other %02x%02x%02x%02x... never learned",
                          o->stateid[4], o->stateid[5], o->stateid[6], o->stateid[7]);
    return 0;
}

static int live_clientid(struct bctx *b, uint64_t traced, clientid4 *out)
{
    if (tbbt_nfs4_clientid_live(b->st, traced, out) < 0)
        return unsendable(b, "unknown clientid", "traced clientid %016llx never learned",
                          (unsigned long long)traced);
    return 0;
}

/* 4.0: the owner of a traced stateid, and the live seqid for the traced one. */
static uint32_t sid_seqid(struct bctx *b, const struct tbbt_op4 *o)
{
    const struct tbbt_nfs4_sid *s;

    if (b->rec->minor != 0 || !(s = tbbt_nfs4_sid_get(b->st, o->stateid)) || !s->owner)
        return o->seqid;
    b->call->aux[b->i].owner = s->owner;
    return tbbt_nfs4_owner_seqid(s->owner, o->seqid);
}

static int owner_arg(struct bctx *b, const struct tbbt_op4 *o, state_owner4 *w)
{
    if (NEED(b, o, CLIENTID, clientid) < 0 || NEED(b, o, OWNER, owner) < 0 ||
        live_clientid(b, o->clientid, &w->clientid) < 0)
        return -1;
    put_str(b, &o->owner, &w->owner.owner_len, &w->owner.owner_val);
    return 0;
}

/* ------------------------------------------------------------------ per operation */

static int b_putfh(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    const struct tbbt_nfs4_fh *f;

    if (NEED(b, o, FH, fh) < 0)
        return -1;
    f = tbbt_nfs4_fh_live(b->st, o->fh);
    if (!f)
        return unsendable(b, "unknown handle", "handle %u has no live handle (no GETFH)", o->fh);
    ARG(a, opputfh)->object.nfs_fh4_len = f->len;
    ARG(a, opputfh)->object.nfs_fh4_val = keep(b, f->data, f->len);
    return 0;
}

/* A as SEQUENCE on the lowest free slot of live session sess, which call then holds
 * (released by absorb or abort).  0, or -1 when every slot is busy. */
static int take_sequence(struct tbbt_nfs4_session *sess, nfs_argop4 *a,
                         struct tbbt_nfs4_call *call)
{
    SEQUENCE4args *s = ARG(a, opsequence);
    uint32_t slot, seq, hi;

    if (tbbt_nfs4_slot_take(sess, &slot, &seq, &hi) < 0)
        return -1;
    a->argop = OP_SEQUENCE;
    memcpy(s->sa_sessionid, sess->live, NFS4_SESSIONID_SIZE);
    s->sa_sequenceid = seq;
    s->sa_slotid = slot;
    s->sa_highest_slotid = hi;
    s->sa_cachethis = FALSE;
    call->sess = sess;
    call->slot = slot;
    call->slotted = true;
    return 0;
}

static int b_sequence(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    struct tbbt_nfs4_session *sess;

    if (NEED(b, o, SESSION, session) < 0)
        return -1;
    sess = tbbt_nfs4_session_get(b->st, o->session);
    if (!sess)
        return unsendable(b, "unknown session", "traced session never created");
    if (take_sequence(sess, a, b->call) < 0)
        return unsendable(b, TBBT_NFS4_NO_SLOT, "all %u slots busy", sess->nslots);
    return 0;
}

static int b_open_how(struct bctx *b, const struct tbbt_op4 *o, OPEN4args *p)
{
    uint32_t type = o->how & 0xf, mode = (o->how >> 4) & 0xf;
    createhow4 *h = &p->openhow.openflag4_u.how;

    p->openhow.opentype = (opentype4)type;
    if (type != OPEN4_CREATE)
        return 0;
    h->mode = (createmode4)mode;
    switch (mode) {
    case UNCHECKED4:
    case GUARDED4:
        return sattr_arg(b, o, &h->createhow4_u.createattrs);
    case EXCLUSIVE4:
        put_verf(h->createhow4_u.createverf, o->verf);
        return NEED(b, o, VERF, verf);
    case EXCLUSIVE4_1:
        put_verf(h->createhow4_u.ch_createboth.cva_verf, o->verf);
        if (NEED(b, o, VERF, verf) < 0)
            return -1;
        return sattr_arg(b, o, &h->createhow4_u.ch_createboth.cva_attrs);
    default:
        return unsendable(b, "unsupported OPEN", "createmode %u", mode);
    }
}

static int b_open(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    OPEN4args *p = ARG(a, opopen);
    uint32_t claim = (o->how >> 8) & 0xff;

    if (NEED(b, o, HOW, how) < 0 || NEED(b, o, SHARE, share) < 0 ||
        NEED(b, o, SEQID, seqid) < 0 || owner_arg(b, o, &p->owner) < 0)
        return -1;
    p->share_access = o->share & 0xffff;
    p->share_deny = o->share >> 16;
    p->seqid = o->seqid;
    if (b->rec->minor == 0) {
        struct tbbt_nfs4_owner *w = tbbt_nfs4_owner_get(b->st, o->clientid, &o->owner, o->seqid);
        b->call->aux[b->i].owner = w;
        p->seqid = tbbt_nfs4_owner_seqid(w, o->seqid);
    }
    p->claim.claim = (open_claim_type4)claim;
    switch (claim) {
    case CLAIM_NULL:
        if (NEED(b, o, NAME, name) < 0)
            return -1;
        put_str(b, &o->name, &p->claim.open_claim4_u.file.utf8string_len,
                &p->claim.open_claim4_u.file.utf8string_val);
        break;
    case CLAIM_FH:
        break;
    default:
        return unsendable(b, "unsupported OPEN", "claim %u (delegations, reclaims)", claim);
    }
    return b_open_how(b, o, p);
}

static int b_lock(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    LOCK4args *l = ARG(a, oplock);
    locker4 *k = &l->locker;

    if (NEED(b, o, HOW, how) < 0 || NEED(b, o, OFFSET, offset) < 0 ||
        NEED(b, o, LENGTH, length) < 0 || NEED(b, o, SEQID, seqid) < 0)
        return -1;
    l->locktype = (nfs_lock_type4)(o->how & 0x7f);
    l->reclaim = (o->how >> 7) & 1;
    l->offset = o->offset;
    l->length = o->length;
    k->new_lock_owner = (o->how >> 8) & 1;
    if (!k->new_lock_owner) {
        k->locker4_u.lock_owner.lock_seqid = sid_seqid(b, o);
        return live_sid(b, o, &k->locker4_u.lock_owner.lock_stateid);
    }
    open_to_lock_owner4 *n = &k->locker4_u.open_owner;
    if (NEED(b, o, LOCK_SEQID, lock_seqid) < 0 || owner_arg(b, o, &n->lock_owner) < 0 ||
        live_sid(b, o, &n->open_stateid) < 0)
        return -1;
    n->open_seqid = sid_seqid(b, o);
    n->lock_seqid = o->lock_seqid;
    if (b->rec->minor == 0) {
        struct tbbt_nfs4_owner *w =
            tbbt_nfs4_owner_get(b->st, o->clientid, &o->owner, o->lock_seqid);
        b->call->aux[b->i].owner2 = w;
        n->lock_seqid = tbbt_nfs4_owner_seqid(w, o->lock_seqid);
    }
    return 0;
}

static int b_lockt(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    LOCKT4args *l = ARG(a, oplockt);

    if (NEED(b, o, HOW, how) < 0 || NEED(b, o, OFFSET, offset) < 0 ||
        NEED(b, o, LENGTH, length) < 0)
        return -1;
    l->locktype = (nfs_lock_type4)(o->how & 0x7f);
    l->offset = o->offset;
    l->length = o->length;
    return owner_arg(b, o, &l->owner);
}

static int b_locku(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    LOCKU4args *l = ARG(a, oplocku);

    if (NEED(b, o, HOW, how) < 0 || NEED(b, o, OFFSET, offset) < 0 ||
        NEED(b, o, LENGTH, length) < 0 || NEED(b, o, SEQID, seqid) < 0 ||
        live_sid(b, o, &l->lock_stateid) < 0)
        return -1;
    l->locktype = (nfs_lock_type4)(o->how & 0x7f);
    l->offset = o->offset;
    l->length = o->length;
    l->seqid = sid_seqid(b, o);
    return 0;
}

/* OPEN_CONFIRM, OPEN_DOWNGRADE, CLOSE: an open stateid and the open owner's seqid. */
static int b_openstate(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    stateid4 sid;
    uint32_t seqid;

    if (NEED(b, o, SEQID, seqid) < 0 || live_sid(b, o, &sid) < 0)
        return -1;
    seqid = sid_seqid(b, o);
    switch (a->argop) {
    case OP_OPEN_CONFIRM:
        ARG(a, opopen_confirm)->open_stateid = sid;
        ARG(a, opopen_confirm)->seqid = seqid;
        return 0;
    case OP_CLOSE:
        ARG(a, opclose)->open_stateid = sid;
        ARG(a, opclose)->seqid = seqid;
        return 0;
    default:
        if (NEED(b, o, SHARE, share) < 0)
            return -1;
        ARG(a, opopen_downgrade)->open_stateid = sid;
        ARG(a, opopen_downgrade)->seqid = seqid;
        ARG(a, opopen_downgrade)->share_access = o->share & 0xffff;
        ARG(a, opopen_downgrade)->share_deny = o->share >> 16;
        return 0;
    }
}

static void pattern(char *buf, uint64_t off, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (char)('a' + (off + i) % 26);
}

static int b_io(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    if (NEED(b, o, OFFSET, offset) < 0 || NEED(b, o, COUNT, count) < 0)
        return -1;
    switch (a->argop) {
    case OP_READ:
        ARG(a, opread)->offset = o->offset;
        ARG(a, opread)->count = o->count;
        return live_sid(b, o, &ARG(a, opread)->stateid);
    case OP_COMMIT:
        ARG(a, opcommit)->offset = o->offset;
        ARG(a, opcommit)->count = o->count;
        return 0;
    default: {
        WRITE4args *w = ARG(a, opwrite);
        if (o->count > NFS4_MAXDATA)
            return unsendable(b, "WRITE too large", "count %u", o->count);
        w->offset = o->offset;
        w->stable = has(o, TBBT_O4_HOW) ? (stable_how4)o->how : FILE_SYNC4;
        w->data.data_len = o->count;
        w->data.data_val = keep(b, NULL, o->count);
        pattern(w->data.data_val, o->offset, o->count);
        return live_sid(b, o, &w->stateid);
    }
    }
}

static int b_create(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    CREATE4args *c = ARG(a, opcreate);

    if (NEED(b, o, FTYPE, ftype) < 0 || NEED(b, o, NAME, name) < 0)
        return -1;
    c->objtype.type = (nfs_ftype4)o->ftype;
    if (o->ftype == NF4LNK) {
        if (NEED(b, o, TARGET, target) < 0)
            return -1;
        put_str(b, &o->target, &c->objtype.createtype4_u.linkdata.linktext4_len,
                &c->objtype.createtype4_u.linkdata.linktext4_val);
    }
    /* NF4BLK/NF4CHR: the trace has no device numbers; specdata 0, 0. */
    put_str(b, &o->name, &c->objname.utf8string_len, &c->objname.utf8string_val);
    return sattr_arg(b, o, &c->createattrs);
}

static int b_readdir(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    READDIR4args *r = ARG(a, opreaddir);
    const struct tbbt_nfs4_opaux *x = &b->call->aux[b->i];

    if (NEED(b, o, COOKIE, cookie) < 0 || NEED(b, o, COUNT, count) < 0 ||
        NEED(b, o, BITMAP, bitmap) < 0)
        return -1;
    r->cookie = 0;
    r->dircount = has(o, TBBT_O4_DIRCOUNT) ? o->dircount : o->count;
    r->maxcount = o->count;
    bitmap_arg(b, o->bitmap, &r->attr_request);
    if (o->cookie == 0)
        return 0;
    /* The trace keeps no entry cookies: a traced READDIR that goes on goes on from
     * where the last live READDIR of the same directory ended. */
    if (!x->cur_known || !tbbt_nfs4_dir_next(b->st, x->cur, &r->cookie, r->cookieverf))
        return unsendable(b, "READDIR cookie unknown", "no earlier listing of the directory");
    return 0;
}

static int b_name(struct bctx *b, const struct tbbt_op4 *o, u_int *len, char **val)
{
    if (NEED(b, o, NAME, name) < 0)
        return -1;
    put_str(b, &o->name, len, val);
    return 0;
}

/*
 * The traced EXCHANGE_ID flags sent again: what the client supports (referrals,
 * migration, fencing) and the non-pNFS role.  Not BIND_PRINC_STATEID (the player's
 * credentials are not the traced principals'), nor the pNFS MDS or DS roles (the
 * server would offer layouts the player does not use), nor UPD_CONFIRMED_REC_A (the
 * player's client is new to the server: each run has its own client tag), nor
 * CONFIRMED_R (a result flag).
 */
#define EXCHANGE_FLAGS_KEPT                                                             \
    (EXCHGID4_FLAG_SUPP_MOVED_REFER | EXCHGID4_FLAG_SUPP_MOVED_MIGR |                   \
     EXCHGID4_FLAG_SUPP_FENCE_OPS | EXCHGID4_FLAG_USE_NON_PNFS)

/* SETCLIENTID, SETCLIENTID_CONFIRM, EXCHANGE_ID, CREATE_SESSION, RENEW, DESTROY_*. */
static int b_client(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    const struct tbbt_nfs4_client *c;

    switch (a->argop) {
    case OP_SETCLIENTID: {
        SETCLIENTID4args *s = ARG(a, opsetclientid);
        if (NEED(b, o, VERF, verf) < 0 || NEED(b, o, OWNER, owner) < 0)
            return -1;
        put_verf(s->client.verifier, o->verf);
        put_client_id(b, &o->owner, &s->client.id.id_len, &s->client.id.id_val);
        s->callback.cb_program = has(o, TBBT_O4_CB_PROGRAM) ? o->cb_program : 0x40000000u;
        s->callback.cb_location.na_r_netid = keep(b, "tcp", 4);
        s->callback.cb_location.na_r_addr = keep(b, "127.0.0.1.0.0", 14);
        s->callback_ident = 1;
        return 0;
    }
    case OP_SETCLIENTID_CONFIRM:
        if (NEED(b, o, CLIENTID, clientid) < 0)
            return -1;
        c = tbbt_nfs4_client_get(b->st, o->clientid, false);
        if (!c)
            return live_clientid(b, o->clientid, NULL);
        ARG(a, opsetclientid_confirm)->clientid = c->live;
        memcpy(ARG(a, opsetclientid_confirm)->setclientid_confirm, c->confirm,
               NFS4_VERIFIER_SIZE);
        return 0;
    case OP_EXCHANGE_ID: {
        EXCHANGE_ID4args *e = ARG(a, opexchange_id);
        if (NEED(b, o, VERF, verf) < 0 || NEED(b, o, OWNER, owner) < 0)
            return -1;
        put_verf(e->eia_clientowner.co_verifier, o->verf);
        put_client_id(b, &o->owner, &e->eia_clientowner.co_ownerid.co_ownerid_len,
                      &e->eia_clientowner.co_ownerid.co_ownerid_val);
        e->eia_flags = has(o, TBBT_O4_FLAGS) ? o->flags & EXCHANGE_FLAGS_KEPT
                                              : EXCHGID4_FLAG_SUPP_MOVED_REFER;
        e->eia_state_protect.spa_how = SP4_NONE;
        return 0;
    }
    case OP_RENEW:
        return NEED(b, o, CLIENTID, clientid) < 0 ? -1
               : live_clientid(b, o->clientid, &ARG(a, oprenew)->clientid);
    case OP_DESTROY_CLIENTID:
        return NEED(b, o, CLIENTID, clientid) < 0 ? -1
               : live_clientid(b, o->clientid, &ARG(a, opdestroy_clientid)->dca_clientid);
    default:
        return unsendable(b, "unsupported operation", "not rebuilt");
    }
}

static void channel(channel_attrs4 *ch, count4 maxreq, count4 maxresp, count4 maxops,
                    count4 slots)
{
    ch->ca_headerpadsize = 0;
    ch->ca_maxrequestsize = maxreq;
    ch->ca_maxresponsesize = maxresp;
    ch->ca_maxresponsesize_cached = 4096;
    ch->ca_maxoperations = maxops;
    ch->ca_maxrequests = slots;
}

/* Traced member m of o (value v) if o has it, else dflt. */
static uint32_t traced_or(const struct tbbt_op4 *o, int m, uint32_t v, uint32_t dflt)
{
    return has(o, m) ? v : dflt;
}

/* The fore channel: the traced CREATE_SESSION's (o), its slots capped at
 * TBBT_NFS4_SLOTS_MAX and at least 1; what o lacks: fixed sizes, TBBT_NFS4_FORE_SLOTS. */
static void fore_channel(const struct tbbt_op4 *o, channel_attrs4 *ch)
{
    uint32_t slots = traced_or(o, TBBT_O4_FORE_SLOTS, o->fore_slots, TBBT_NFS4_FORE_SLOTS);

    channel(ch, traced_or(o, TBBT_O4_FORE_MAXREQ, o->fore_maxreq, 1049620),
            traced_or(o, TBBT_O4_FORE_MAXRESP, o->fore_maxresp, 1049480),
            traced_or(o, TBBT_O4_FORE_MAXOPS, o->fore_maxops, NFS4_MAXOPS),
            MAX(1u, MIN(slots, (uint32_t)TBBT_NFS4_SLOTS_MAX)));
    ch->ca_maxresponsesize_cached =
        traced_or(o, TBBT_O4_FORE_MAXRESP_CACHED, o->fore_maxresp_cached, 4096);
}

/* CREATE_SESSION of live client c, from the traced operation o (NULL: a session re-made
 * after a loss, with the made-up values).  Of the traced flags only PERSIST is kept:
 * never CONN_BACK_CHAN (the player takes no callbacks) nor CONN_RDMA. */
static void create_session_args(struct bctx *b, const struct tbbt_nfs4_client *c,
                                const struct tbbt_op4 *o, CREATE_SESSION4args *s)
{
    static const struct tbbt_op4 none;
    callback_sec_parms4 *sec = keep(b, NULL, sizeof(*sec));

    o = o ? o : &none;
    s->csa_clientid = c->live;
    s->csa_sequence = c->cs_seq;
    s->csa_flags = traced_or(o, TBBT_O4_FLAGS, o->flags, 0) & CREATE_SESSION4_FLAG_PERSIST;
    fore_channel(o, &s->csa_fore_chan_attrs);
    channel(&s->csa_back_chan_attrs, 4096, 4096, 2, 1);
    s->csa_cb_program = 0x40000000u;
    sec->cb_secflavor = AUTH_NONE;
    s->csa_sec_parms.csa_sec_parms_len = 1;
    s->csa_sec_parms.csa_sec_parms_val = sec;
}

static int b_session(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    const struct tbbt_nfs4_client *c;
    const struct tbbt_nfs4_session *s;

    switch (a->argop) {
    case OP_CREATE_SESSION:
        if (NEED(b, o, CLIENTID, clientid) < 0)
            return -1;
        c = tbbt_nfs4_client_get(b->st, o->clientid, false);
        if (!c)
            return live_clientid(b, o->clientid, NULL);
        create_session_args(b, c, o, ARG(a, opcreate_session));
        return 0;
    case OP_DESTROY_SESSION:
        if (NEED(b, o, SESSION, session) < 0)
            return -1;
        s = tbbt_nfs4_session_get(b->st, o->session);
        if (!s)
            return unsendable(b, "unknown session", "traced session never created");
        memcpy(ARG(a, opdestroy_session)->dsa_sessionid, s->live, NFS4_SESSIONID_SIZE);
        return 0;
    case OP_RECLAIM_COMPLETE:
        ARG(a, opreclaim_complete)->rca_one_fs = has(o, TBBT_O4_HOW) && o->how;
        return 0;
    default:
        return b_sequence(b, o, a);
    }
}

/* The operations whose arguments are a name, nothing, or a few numbers. */
static int b_simple(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    switch (a->argop) {
    case OP_PUTROOTFH: case OP_PUTPUBFH: case OP_GETFH: case OP_SAVEFH: case OP_RESTOREFH:
    case OP_LOOKUPP: case OP_READLINK:
        return 0;
    case OP_SECINFO_NO_NAME:
        *ARG(a, opsecinfo_no_name) = SECINFO_STYLE4_CURRENT_FH;
        return 0;
    case OP_ACCESS:
        ARG(a, opaccess)->access = o->access;
        return NEED(b, o, ACCESS, access);
    case OP_GETATTR:
        bitmap_arg(b, o->bitmap, &ARG(a, opgetattr)->attr_request);
        return NEED(b, o, BITMAP, bitmap);
    case OP_LOOKUP:
        return b_name(b, o, &ARG(a, oplookup)->objname.utf8string_len,
                      &ARG(a, oplookup)->objname.utf8string_val);
    case OP_REMOVE:
        return b_name(b, o, &ARG(a, opremove)->target.utf8string_len,
                      &ARG(a, opremove)->target.utf8string_val);
    case OP_LINK:
        return b_name(b, o, &ARG(a, oplink)->newname.utf8string_len,
                      &ARG(a, oplink)->newname.utf8string_val);
    case OP_SECINFO:
        return b_name(b, o, &ARG(a, opsecinfo)->name.utf8string_len,
                      &ARG(a, opsecinfo)->name.utf8string_val);
    case OP_RENAME:
        if (NEED(b, o, NAME2, name2) < 0)
            return -1;
        put_str(b, &o->name2, &ARG(a, oprename)->newname.utf8string_len,
                &ARG(a, oprename)->newname.utf8string_val);
        return b_name(b, o, &ARG(a, oprename)->oldname.utf8string_len,
                      &ARG(a, oprename)->oldname.utf8string_val);
    default:
        return unsendable(b, "unsupported operation", "not rebuilt");
    }
}

static int build_op(struct bctx *b, const struct tbbt_op4 *o, nfs_argop4 *a)
{
    a->argop = (nfs_opnum4)o->op;
    switch (o->op) {
    case OP_PUTFH: return b_putfh(b, o, a);
    case OP_OPEN: return b_open(b, o, a);
    case OP_OPEN_CONFIRM: case OP_OPEN_DOWNGRADE: case OP_CLOSE: return b_openstate(b, o, a);
    case OP_LOCK: return b_lock(b, o, a);
    case OP_LOCKT: return b_lockt(b, o, a);
    case OP_LOCKU: return b_locku(b, o, a);
    case OP_READ: case OP_WRITE: case OP_COMMIT: return b_io(b, o, a);
    case OP_CREATE: return b_create(b, o, a);
    case OP_READDIR: return b_readdir(b, o, a);
    case OP_SETATTR:
        if (live_sid(b, o, &ARG(a, opsetattr)->stateid) < 0)
            return -1;
        return sattr_arg(b, o, &ARG(a, opsetattr)->obj_attributes);
    case OP_VERIFY: return verify_attr(b, o, &ARG(a, opverify)->obj_attributes);
    case OP_NVERIFY: return verify_attr(b, o, &ARG(a, opnverify)->obj_attributes);
    case OP_FREE_STATEID: return live_sid(b, o, &ARG(a, opfree_stateid)->fsa_stateid);
    case OP_RELEASE_LOCKOWNER: return owner_arg(b, o, &ARG(a, oprelease_lockowner)->lock_owner);
    case OP_SETCLIENTID: case OP_SETCLIENTID_CONFIRM: case OP_EXCHANGE_ID: case OP_RENEW:
    case OP_DESTROY_CLIENTID:
        return b_client(b, o, a);
    case OP_CREATE_SESSION: case OP_DESTROY_SESSION: case OP_RECLAIM_COMPLETE: case OP_SEQUENCE:
        return b_session(b, o, a);
    default:
        return b_simple(b, o, a);
    }
}

/* ------------------------------------------------------------------ the current handle */

static bool sets_fh(uint32_t op)
{
    switch (op) {
    case OP_PUTFH: case OP_PUTROOTFH: case OP_PUTPUBFH: case OP_LOOKUP: case OP_LOOKUPP:
    case OP_OPEN: case OP_CREATE: case OP_RESTOREFH: case OP_OPENATTR: case OP_SECINFO:
    case OP_SECINFO_NO_NAME: case OP_GETFH:
        return true;
    default:
        return false;
    }
}

/* The traced handle the operation after i leaves current: from a PUTFH's argument or
 * the GETFH that names it before the next change. */
static bool fh_after(const struct tbbt_trace_rec *rec, uint32_t i, uint32_t *ref)
{
    const struct tbbt_op4 *o = &rec->ops[i];

    if ((o->op == OP_PUTFH || o->op == OP_GETFH) && TBBT_O4_HAS(o, FH)) {
        *ref = o->fh;
        return true;
    }
    for (uint32_t j = i + 1; j < rec->n_ops; j++) {
        if (rec->ops[j].op == OP_GETFH && TBBT_O4_HAS(&rec->ops[j], FH)) {
            *ref = rec->ops[j].fh;
            return true;
        }
        if (sets_fh(rec->ops[j].op))
            break;
    }
    return false;
}

/* aux[i].cur: the traced handle current when operation i runs. */
static void track_fh(const struct tbbt_trace_rec *rec, struct tbbt_nfs4_opaux *aux)
{
    uint32_t cur = 0, saved = 0;
    bool known = false, saved_known = false;

    for (uint32_t i = 0; i < rec->n_ops; i++) {
        uint32_t op = rec->ops[i].op;
        aux[i].cur = cur;
        aux[i].cur_known = known;
        if (op == OP_SAVEFH) {
            saved = cur;
            saved_known = known;
        } else if (op == OP_RESTOREFH) {
            cur = saved;
            known = saved_known;
        } else if (sets_fh(op)) {
            known = fh_after(rec, i, &cur);
        }
    }
}

/* ------------------------------------------------------------------ the traced exports */

/* Where the traced client walks from the pseudo root to an export (PUTROOTFH, or PUTFH of
 * the traced pseudo root, then LOOKUPs): PUTFH of the export's live directory instead,
 * for each of those operations (tbbt_nfs4_export_add()). */
static void redirect_exports(struct bctx *b)
{
    const struct tbbt_trace_rec *rec = b->rec;
    const struct tbbt_str *names[32];
    const struct tbbt_nfs4_fh *live = NULL;
    uint32_t root;

    for (uint32_t i = 0; i + 1 < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i], *next = &rec->ops[i + 1];
        if (o->op == OP_PUTROOTFH && next->op == OP_GETFH && TBBT_O4_HAS(next, FH))
            tbbt_nfs4_pseudo_root_note(b->st, next->fh);
        bool at_root = o->op == OP_PUTROOTFH ||
                       (o->op == OP_PUTFH && TBBT_O4_HAS(o, FH) &&
                        tbbt_nfs4_pseudo_root(b->st, &root) && o->fh == root);
        if (!at_root)
            continue;
        uint32_t n = 0;
        while (i + 1 + n < rec->n_ops && n < G_N_ELEMENTS(names) &&
               rec->ops[i + 1 + n].op == OP_LOOKUP && TBBT_O4_HAS(&rec->ops[i + 1 + n], NAME)) {
            names[n] = &rec->ops[i + 1 + n].name;
            n++;
        }
        bool same = false;
        uint32_t k = n ? tbbt_nfs4_export_match(b->st, names, n, &live, &same) : 0;
        if (!k || same)
            continue;
        void *fh = keep(b, live->data, live->len);
        for (uint32_t j = i; j <= i + k; j++) {
            nfs_argop4 *a = &b->call->ops[j];
            memset(a, 0, sizeof(*a));
            a->argop = OP_PUTFH;
            ARG(a, opputfh)->object.nfs_fh4_len = live->len;
            ARG(a, opputfh)->object.nfs_fh4_val = fh;
        }
        i += k;
    }
}

/* ------------------------------------------------------------------ the COMPOUND */

/*
 * True if operation i's arguments were cut by the snap length: the call was cut and the
 * operation is marked (TBBT_O4_TRUNC also marks cut results, which do not matter
 * here).  A WRITE keeps all its arguments but the data, which is never replayed.
 */
static bool args_cut(const struct tbbt_trace_rec *rec, uint32_t i)
{
    const struct tbbt_op4 *o = &rec->ops[i];

    if (!(rec->flags & TBBT_RF_CALL_TRUNC) || !has(o, TBBT_O4_TRUNC))
        return false;
    return !(o->op == OP_WRITE && has(o, TBBT_O4_COUNT));
}

static void call_init(struct tbbt_nfs4_call *call, uint32_t n, uint32_t minor)
{
    memset(call, 0, sizeof(*call));
    call->n = n;
    call->ops = g_new0(nfs_argop4, n ? n : 1);
    call->aux = g_new0(struct tbbt_nfs4_opaux, n ? n : 1);
    call->mem = g_ptr_array_new_with_free_func(g_free);
    call->args.minorversion = minor;
    call->args.argarray.argarray_len = n;
    call->args.argarray.argarray_val = call->ops;
}

int tbbt_nfs4_build(struct tbbt_nfs4_state *st, const struct tbbt_trace_rec *rec,
                    struct tbbt_nfs4_call *call)
{
    struct bctx b = { .st = st, .rec = rec, .call = call };

    call_init(call, rec->n_ops, rec->minor);
    if (rec->prog != TBBT_PROG_NFS4 || rec->proc != 1) {
        call->why = "not a COMPOUND";
        return -1;
    }
    if (rec->flags & TBBT_RF_CALL_BAD) {
        call->why = "call did not decode";
        return -1;
    }
    track_fh(rec, call->aux);
    for (b.i = 0; b.i < rec->n_ops; b.i++) {
        if (args_cut(rec, b.i)) {
            tbbt_nfs4_call_abort(call);
            return unsendable(&b, "arguments cut in trace", "snap length");
        }
        if (build_op(&b, &rec->ops[b.i], &call->ops[b.i]) < 0) {
            tbbt_nfs4_call_abort(call);
            return -1;
        }
    }
    redirect_exports(&b);
    return 0;
}

int tbbt_nfs4_build_resession(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_session *s,
                              struct tbbt_nfs4_call *call)
{
    struct bctx b = { .st = st, .call = call };
    const struct tbbt_nfs4_client *c = tbbt_nfs4_client_get(st, s->traced_clientid, false);

    call_init(call, 1, c ? c->minor : 1);
    if (!c) {
        call->why = "unknown clientid";
        return -1;
    }
    call->ops[0].argop = OP_CREATE_SESSION;
    create_session_args(&b, c, NULL, ARG(&call->ops[0], opcreate_session));
    return 0;
}

int tbbt_nfs4_build_renew(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_client *c,
                          struct tbbt_nfs4_call *call)
{
    struct tbbt_nfs4_session *s;

    call_init(call, 1, c->minor);
    if (c->minor == 0) {
        call->ops[0].argop = OP_RENEW;
        ARG(&call->ops[0], oprenew)->clientid = c->live;
        return 0;
    }
    s = tbbt_nfs4_session_of(st, c->traced);
    if (!s || take_sequence(s, &call->ops[0], call) < 0) {
        call->why = "no session to renew with";
        return -1;
    }
    return 0;
}

int tbbt_nfs4_build_delegreturn(struct tbbt_nfs4_state *st, const struct tbbt_nfs4_call *orig,
                                const struct tbbt_nfs4_deleg *d, struct tbbt_nfs4_call *call)
{
    struct bctx b = { .st = st, .call = call };
    uint32_t minor = orig->args.minorversion, k = 0;
    struct tbbt_nfs4_session *s = minor ? orig->sess : NULL;

    call_init(call, minor ? 3 : 2, minor);
    if (!d->fh_known || (minor && !s)) {
        call->why = "no handle or session to return the delegation with";
        return -1;
    }
    if (s && take_sequence(s, &call->ops[k++], call) < 0) {
        call->why = TBBT_NFS4_NO_SLOT;
        return -1;
    }
    call->ops[k].argop = OP_PUTFH;
    ARG(&call->ops[k], opputfh)->object.nfs_fh4_len = d->fh.len;
    ARG(&call->ops[k], opputfh)->object.nfs_fh4_val = keep(&b, d->fh.data, d->fh.len);
    k++;
    call->ops[k].argop = OP_DELEGRETURN;
    ARG(&call->ops[k], opdelegreturn)->deleg_stateid = d->stateid;
    return 0;
}

void tbbt_nfs4_call_abort(struct tbbt_nfs4_call *call)
{
    if (call->slotted)
        tbbt_nfs4_slot_release(call->sess, call->slot, false);
    call->slotted = false;
}

void tbbt_nfs4_call_fini(struct tbbt_nfs4_call *call)
{
    tbbt_nfs4_call_abort(call);
    g_free(call->ops);
    g_free(call->aux);
    if (call->mem)
        g_ptr_array_free(call->mem, TRUE);
    call->ops = NULL;
    call->aux = NULL;
    call->mem = NULL;
}
