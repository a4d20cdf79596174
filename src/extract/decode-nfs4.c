/* SPDX-License-Identifier: MIT */
/*
 * NFSv4 COMPOUND and CB_COMPOUND messages of a capture, walked operation by
 * operation (decode-nfs4.h).  COMPOUND4args/res: RFC 7530 16.2, RFC 5661 16.2;
 * CB_COMPOUND4args/res: RFC 7530 15.2, RFC 5661 20.2; each operation through
 * the rpcgen routine of its arm of nfs_argop4, nfs_resop4, nfs_cb_argop4 or
 * nfs_cb_resop4 (src/proto/nfs4.x).
 *
 * Three arms are read here field by field instead: WRITE's arguments and
 * READ's results (the data is skipped, not copied) and READDIR's results (the
 * entry list, which rpcgen decodes by recursion).  Every arm of a result
 * starts with its nfsstat4, which is read before the arm.
 *
 * When an operation of a truncated message does not decode, it is decoded
 * again on a probe stream that notes whether it ran out of bytes: if it did,
 * the operation was cut by the snap length (kept, marked truncated); if not,
 * it is malformed.
 *
 * The same walk serves the counts (tbbt__nfs4_decode(): operation numbers and
 * statuses) and the trace records (tbbt__nfs4_decode_rec(): each decoded arm
 * handed to nfs4rec.c, the three arms above stored here).
 */
#include "extract/decode-nfs4.h"

#include "extract/nfs4rec.h"

#include <glib.h>
#include <rpc/rpc.h>
#include <stddef.h>
#include <string.h>

#include "proto/nfs4.h"
#include "proto/proto.h"
#include "proto/xdrmem.h"
#include "util/util.h"

_Static_assert(TBBT__NFS4_MAXOPS == NFS4_MAXOPS, "decode-nfs4.h's bound is nfs4.x's");

/*
 * Where a decoded operation's arguments or results go (tbbt__nfs4_decode_rec):
 * its entry in the record, or nowhere (o NULL: counting, the probe, or a reply
 * whose operation is not the call's).
 */
struct sink {
    struct tbbt_trace_rec *rec;
    struct tbbt_fhtab *fht;
    struct tbbt_op4 *o;
};

/* The walk over one message. */
struct walk {
    XDR x;
    const uint8_t *p;
    u_int len;
    bool trunc;
    enum tbbt__nfs4_msg kind;
    struct tbbt__nfs4_compound *out;
    struct sink sink;
};

/* ---- the probe stream: did decoding run out of bytes? ----------------------- */

/*
 * tbbt_xdrmem's operations, except that running out of bytes sets x_handy
 * (which tbbt_xdrmem does not use).  Not the fast stream: the inline
 * primitives of xdrmem.h call libtirpc's, which call these.
 */
static bool_t probe_getlong(XDR *x, long *lp)
{
    if (tbbt_xdrmem_ops.x_getlong(x, lp))
        return TRUE;
    x->x_handy = 1;
    return FALSE;
}

static bool_t probe_getbytes(XDR *x, char *addr, u_int len)
{
    if (tbbt_xdrmem_ops.x_getbytes(x, addr, len))
        return TRUE;
    x->x_handy = 1;
    return FALSE;
}

static bool_t probe_setpostn(XDR *x, u_int pos)
{
    if (tbbt_xdrmem_ops.x_setpostn(x, pos))
        return TRUE;
    x->x_handy = 1;
    return FALSE;
}

static const struct xdr_ops *probe_ops(void)
{
    static struct xdr_ops ops;
    static gsize once;

    if (g_once_init_enter(&once)) {
        ops = tbbt_xdrmem_ops;
        ops.x_getlong = probe_getlong;
        ops.x_getbytes = probe_getbytes;
        ops.x_setpostn = probe_setpostn;
        g_once_init_leave(&once, 1);
    }
    return &ops;
}

/* ---- arms read field by field ------------------------------------------------ */

/* Skips n opaque bytes and their padding. */
static bool skip_opaque(XDR *x, u_int n)
{
    u_int pos = xdr_getpos(x);
    u_int padded = (n + 3u) & ~3u;

    if (padded < n)
        return false;
    return pos + padded >= pos && xdr_setpos(x, pos + padded);
}

/* WRITE4args (RFC 7530 16.36.1): stateid, offset, stable, data (into o if any). */
static bool write_args(XDR *x, struct tbbt_op4 *o)
{
    stateid4 sid;
    offset4 off;
    stable_how4 st;
    u_int n;

    if (!xdr_stateid4(x, &sid) || !xdr_offset4(x, &off) || !xdr_stable_how4(x, &st) ||
        !tbbt_xdr_u_int(x, &n) || n > NFS4_MAXDATA)
        return false;
    if (o) {    /* the arguments are complete before the data, which a capture may cut */
        tbbt__nfs4rec_stateid(o->stateid, &sid);
        o->offset = off;
        o->how = (uint32_t)st;
        o->count = n;
        o->has |= 1u << TBBT_O4_STATEID | 1u << TBBT_O4_OFFSET | 1u << TBBT_O4_HOW |
                  1u << TBBT_O4_COUNT;
    }
    return skip_opaque(x, n);
}

/* READ4res (RFC 7530 16.23.2): status; when OK eof and data. */
static bool read_res(XDR *x, struct tbbt_op4 *o)
{
    nfsstat4 st;
    bool_t eof;
    u_int n;

    if (!xdr_nfsstat4(x, &st))
        return false;
    if (st != NFS4_OK)
        return true;
    if (!tbbt_xdr_bool(x, &eof) || !tbbt_xdr_u_int(x, &n) || n > NFS4_MAXDATA)
        return false;
    if (o) {
        o->eof = eof != 0;
        o->res_count = n;
        o->has |= 1u << TBBT_O4_AT_EOF | 1u << TBBT_O4_RES_COUNT;
    }
    return skip_opaque(x, n);
}

/*
 * One entry4 without its next pointer: cookie, name, attributes; into the
 * record's entries when rec is given (a name over the trace's bound is left out).
 */
static bool dir_entry(XDR *x, struct tbbt_trace_rec *rec, struct tbbt_fhtab *fht)
{
    entry4 e;
    bool ok;

    memset(&e, 0, sizeof(e));
    ok = xdr_nfs_cookie4(x, &e.cookie) && xdr_component4(x, &e.name) &&
         xdr_fattr4(x, &e.attrs);
    if (ok && rec && e.name.utf8string_len <= TBBT_NAME_MAX)
        tbbt__nfs4rec_entry(rec, e.cookie, &e.name, &e.attrs, fht);
    xdr_free((xdrproc_t)xdr_component4, (char *)&e.name);
    xdr_free((xdrproc_t)xdr_fattr4, (char *)&e.attrs);
    return ok;
}

/*
 * READDIR4res (RFC 7530 16.24.2): status; when OK the verifier, entries, eof.
 * The entries of a record's first READDIR go into its `entries` field.
 */
static bool readdir_res(XDR *x, const struct sink *k)
{
    struct tbbt_op4 *o = k ? k->o : NULL;
    struct tbbt_trace_rec *rec = o && !TBBT_HAS(k->rec, TBBT_F_ENTRIES) ? k->rec : NULL;
    nfsstat4 st;
    verifier4 verf;
    bool_t more, eof;
    uint32_t n = 0;

    if (!xdr_nfsstat4(x, &st))
        return false;
    if (st != NFS4_OK)
        return true;
    if (!xdr_verifier4(x, verf))
        return false;
    for (;; n++) {
        if (!tbbt_xdr_bool(x, &more))
            return false;
        if (!more)
            break;
        if (!dir_entry(x, rec, rec ? k->fht : NULL))
            return false;
    }
    if (!tbbt_xdr_bool(x, &eof))
        return false;
    if (rec)
        TBBT_SET(rec, TBBT_F_ENTRIES);      /* this READDIR's, even if empty */
    if (o) {
        memcpy(&o->res_verf, verf, 8);
        o->res_count = n;
        o->eof = eof != 0;
        o->has |= 1u << TBBT_O4_RES_VERF | 1u << TBBT_O4_RES_COUNT | 1u << TBBT_O4_AT_EOF;
    }
    return true;
}

/* ---- one operation ------------------------------------------------------------ */

/*
 * A whole arm through its union routine, what it gives into the sink's entry
 * (if any); what it allocated is freed.
 */
static bool generic_op(XDR *x, enum tbbt__nfs4_msg kind, const struct sink *k)
{
    union {
        nfs_argop4 a;
        nfs_resop4 r;
        nfs_cb_argop4 cba;
        nfs_cb_resop4 cbr;
    } u;
    static const xdrproc_t procs[] = {
        [TBBT__NFS4_CALL] = (xdrproc_t)xdr_nfs_argop4,
        [TBBT__NFS4_REPLY] = (xdrproc_t)xdr_nfs_resop4,
        [TBBT__NFS4_CB_CALL] = (xdrproc_t)xdr_nfs_cb_argop4,
        [TBBT__NFS4_CB_REPLY] = (xdrproc_t)xdr_nfs_cb_resop4,
    };
    bool ok;

    memset(&u, 0, sizeof(u));
    ok = procs[kind](x, &u);
    if (ok && k && k->o && kind == TBBT__NFS4_CALL)
        tbbt__nfs4rec_call(k->rec, k->o, &u.a, k->fht);
    if (ok && k && k->o && kind == TBBT__NFS4_REPLY)
        tbbt__nfs4rec_res(k->rec, k->o, &u.r, k->fht);
    xdr_free(procs[kind], (char *)&u);
    return ok;
}

/*
 * Decodes the operation at x's position (its number included) on any stream;
 * the sink k (NULL on the probe) gets what it hands over.
 */
static bool decode_op(XDR *x, enum tbbt__nfs4_msg kind, uint32_t op, const struct sink *k)
{
    struct tbbt_op4 *o = k ? k->o : NULL;
    u_int num;

    if (kind == TBBT__NFS4_CALL && op == OP_WRITE)
        return tbbt_xdr_u_int(x, &num) && write_args(x, o);
    if (kind == TBBT__NFS4_REPLY && op == OP_READ)
        return tbbt_xdr_u_int(x, &num) && read_res(x, o);
    if (kind == TBBT__NFS4_REPLY && op == OP_READDIR)
        return tbbt_xdr_u_int(x, &num) && readdir_res(x, k);
    return generic_op(x, kind, k);
}

/* True if nfs4.x has operation number op in messages of kind. */
static bool known_op(enum tbbt__nfs4_msg kind, uint32_t op)
{
    if (kind == TBBT__NFS4_CALL || kind == TBBT__NFS4_REPLY)
        return tbbt_proto_nfs4_op_name(op) != NULL;
    return op != 0 && tbbt_proto_tok_name(tbbt_proto_nfs4_cb_ops, (int)op) != NULL;
}

/* A probe stream over w's message at pos (false if pos is past its end). */
static bool probe_at(const struct walk *w, u_int pos, XDR *x)
{
    tbbt_xdrmem_create(x, w->p, w->len);
    x->x_ops = probe_ops();
    return xdr_setpos(x, pos);
}

/*
 * Why the operation at pos did not decode: TBBT_E_TRUNC if the message is
 * truncated and decoding it again ran out of bytes, else TBBT_E_BADREC.
 */
__attribute__((cold))
static int classify(const struct walk *w, u_int pos, uint32_t op)
{
    XDR x;

    if (!w->trunc || !probe_at(w, pos, &x))
        return TBBT_E_BADREC;
    if (decode_op(&x, w->kind, op, NULL))
        return TBBT_E_BADREC;      /* cannot happen: it failed on the same bytes */
    return x.x_handy ? TBBT_E_TRUNC : TBBT_E_BADREC;
}

/* The status word after the operation number at pos, or -1 if cut before it. */
static int32_t peek_status(const struct walk *w, u_int pos)
{
    uint32_t v;

    if (w->len - pos < 8)
        return -1;
    memcpy(&v, w->p + pos + 4, 4);
    return (int32_t)__builtin_bswap32(v);
}

/*
 * Points the sink at operation i's entry in the record: a new entry for a
 * call's operation; for a reply's, the call's i-th if it is the same operation
 * (a new one past the call's last), else none.  Its status, when read, is set.
 */
static void sink_op(struct walk *w, uint32_t i, uint32_t num)
{
    struct tbbt_trace_rec *rec = w->sink.rec;
    struct tbbt_op4 *o = NULL;

    w->sink.o = NULL;
    if (!rec || (w->kind != TBBT__NFS4_CALL && w->kind != TBBT__NFS4_REPLY))
        return;
    if (w->kind == TBBT__NFS4_REPLY && i < rec->n_ops)
        o = rec->ops[i].op == num ? &rec->ops[i] : NULL;
    else if (i == rec->n_ops)
        o = tbbt_trace_rec_add_op4(rec);
    if (!o)
        return;
    o->op = num;
    if (w->out->ops[i].status >= 0) {
        o->status = (uint32_t)w->out->ops[i].status;
        o->has |= 1u << TBBT_O4_STATUS;
    }
    w->sink.o = o;
}

/* Decodes operation i; 0 or the error that ends the walk. */
static int walk_op(struct walk *w, uint32_t i)
{
    struct tbbt__nfs4_op *o = &w->out->ops[i];
    bool reply = w->kind == TBBT__NFS4_REPLY || w->kind == TBBT__NFS4_CB_REPLY;
    u_int pos = tbbt_xdr_getpos(&w->x);
    u_int num;
    int err;

    if (!tbbt_xdr_u_int(&w->x, &num))
        return w->trunc ? TBBT_E_TRUNC : TBBT_E_BADREC;
    if (!known_op(w->kind, num)) {
        w->out->unknown_op = true;
        return TBBT_E_BADREC;
    }
    o->op = num;
    o->status = reply ? peek_status(w, pos) : -1;
    w->out->nops = i + 1;
    if (!xdr_setpos(&w->x, pos))
        return TBBT_E_BADREC;
    sink_op(w, i, num);
    if (decode_op(&w->x, w->kind, num, &w->sink))
        return 0;
    err = classify(w, pos, num);
    o->trunc = err == TBBT_E_TRUNC;
    if (w->sink.o)
        w->sink.o->has |= 1u << TBBT_O4_TRUNC;
    return err;
}

/* ---- the message header and the walk ------------------------------------------- */

/* A tag (utf8str_cs, at most NFS4_MAXUTF8 bytes), skipped. */
static bool skip_tag(XDR *x)
{
    u_int n;

    return tbbt_xdr_u_int(x, &n) && n <= NFS4_MAXUTF8 && skip_opaque(x, n);
}

/* The header before the operations; sets out->numops (and minor, status). */
static bool header(struct walk *w)
{
    struct tbbt__nfs4_compound *o = w->out;
    XDR *x = &w->x;
    u_int st, ident;

    switch (w->kind) {
    case TBBT__NFS4_CALL:
        return skip_tag(x) && tbbt_xdr_u_int(x, &o->minor) && tbbt_xdr_u_int(x, &o->numops);
    case TBBT__NFS4_CB_CALL:
        return skip_tag(x) && tbbt_xdr_u_int(x, &o->minor) && tbbt_xdr_u_int(x, &ident) &&
               tbbt_xdr_u_int(x, &o->numops);
    default:
        if (!tbbt_xdr_u_int(x, &st))
            return false;
        o->status = (int32_t)st;
        return skip_tag(x) && tbbt_xdr_u_int(x, &o->numops);
    }
}

static int run(struct walk *w);

/* A walk of p[0..len) of kind into out (no record). */
static struct walk walk_of(enum tbbt__nfs4_msg kind, const uint8_t *p, size_t len, bool trunc,
                           struct tbbt__nfs4_compound *out)
{
    return (struct walk){
        .p = p,
        .len = len > UINT32_MAX ? UINT32_MAX : (u_int)len,
        .trunc = trunc,
        .kind = kind,
        .out = out,
    };
}

int tbbt__nfs4_decode(enum tbbt__nfs4_msg kind, const uint8_t *p, size_t len, bool trunc,
                      struct tbbt__nfs4_compound *out)
{
    struct walk w = walk_of(kind, p, len, trunc, out);

    return run(&w);
}

int tbbt__nfs4_decode_rec(enum tbbt__nfs4_msg kind, const uint8_t *p, size_t len, bool trunc,
                          struct tbbt_trace_rec *rec, struct tbbt_fhtab *fht,
                          struct tbbt__nfs4_compound *out)
{
    struct walk w = walk_of(kind, p, len, trunc, out);
    bool reply = kind == TBBT__NFS4_REPLY;
    int rc;

    w.sink = (struct sink){.rec = rec, .fht = fht};
    rc = run(&w);

    if (!reply && (rc == 0 || out->numops > 0)) {     /* the minor version was read */
        rec->minor = out->minor;
        TBBT_SET(rec, TBBT_F_MINOR);
    }
    if (rec->n_ops > 0)
        TBBT_SET(rec, TBBT_F_OPS);
    if (reply && out->status >= 0) {
        rec->status = out->status;
        rec->flags |= TBBT_RF_STATUS;
    }
    if (rc == TBBT_E_TRUNC)
        rec->flags |= reply ? TBBT_RF_REPLY_TRUNC : TBBT_RF_CALL_TRUNC;
    else if (rc != 0)
        rec->flags |= reply ? TBBT_RF_REPLY_BAD : TBBT_RF_CALL_BAD;
    return rc;
}

/* Walks the message of w; tbbt__nfs4_decode()'s results. */
static int run(struct walk *w)
{
    struct tbbt__nfs4_compound *out = w->out;
    bool trunc = w->trunc;

    memset(out, 0, offsetof(struct tbbt__nfs4_compound, ops));
    out->status = -1;
    tbbt_xdrmem_create(&w->x, w->p, w->len);
    if (!header(w)) {
        /* as classify(): the header again on a probe stream */
        if (!trunc || !probe_at(w, 0, &w->x) || header(w))
            return TBBT_E_BADREC;
        return w->x.x_handy ? TBBT_E_TRUNC : TBBT_E_BADREC;
    }
    if (out->numops > TBBT__NFS4_MAXOPS)
        return TBBT_E_BADREC;
    for (uint32_t i = 0; i < out->numops; i++) {
        int err;

        out->ops[i] = (struct tbbt__nfs4_op){.status = -1};
        err = walk_op(w, i);
        if (err)
            return err;
    }
    return 0;
}
