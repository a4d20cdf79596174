/* SPDX-License-Identifier: MIT */
/*
 * NFS/MOUNT argument and result decoding (decode.h): program/version mapping,
 * dispatch to the per-procedure decoders of decode-nfs3.c, decode-nfs2.c and
 * decode-mount.c, and the helpers they share (decode-int.h).  RFC 1094,
 * RFC 1813, RFC 4506 (XDR).
 *
 * Truncated or malformed?  The rpcgen routines only say that an item did not
 * decode.  When that happens in a message the capture cut short, the item is
 * decoded again from a copy of the remaining bytes followed by zeros: the cut
 * bytes of a well-formed message are thereby replaced by zeros, and a zero
 * (or a length word whose missing low-order bytes became zero, so is no
 * larger than the real one) is valid wherever XDR reads a length, a boolean
 * or a union discriminant.  If the padded copy decodes, the item was only
 * cut; if it still fails, the bytes before the cut are malformed (a length
 * over its bound, a bad discriminant).  The retry runs only on failure.
 */
#include "extract/decode.h"

#include <string.h>

#include "extract/decode-int.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "proto/xdrmem.h"
#include "util/util.h"

/* Larger than the encoding of any item decoded whole (an nfspath3 is 1028 bytes). */
#define ITEM_MAX 2048

/* The program keys of proto.h are the values of enum tbbt_prog. */
_Static_assert((int)TBBT_PROTO_NFS2 == (int)TBBT_PROG_NFS2 &&
                   (int)TBBT_PROTO_NFS3 == (int)TBBT_PROG_NFS3 &&
                   (int)TBBT_PROTO_MNT1 == (int)TBBT_PROG_MNT1 &&
                   (int)TBBT_PROTO_MNT3 == (int)TBBT_PROG_MNT3,
               "proto keys and trace programs differ");

int tbbt__decode_prog(uint32_t program, uint32_t version)
{
    return tbbt_proto_key(program, version);
}

/* The procedure tables and version types (decode-int.h), by enum tbbt_prog. */
static const struct {
    const struct tbbt__dec_proc *procs;
    const struct tbbt__dec_vers *v;
} progs[] = {
    [TBBT_PROG_NFS2] = { tbbt__dec_nfs2, &tbbt__dec_vers2 },
    [TBBT_PROG_NFS3] = { tbbt__dec_nfs3, &tbbt__dec_vers3 },
    [TBBT_PROG_MNT1] = { tbbt__dec_mnt1, NULL },
    [TBBT_PROG_MNT3] = { tbbt__dec_mnt3, NULL },
};

/* The procedure's hooks (NULL if unknown); *v its version's types. */
static const struct tbbt__dec_proc *find_proc(int prog, int proc,
                                              const struct tbbt__dec_vers **v)
{
    if (prog <= TBBT_PROG_NONE || prog > TBBT_PROG_MNT3 || proc >= TBBT__DEC_NPROCS)
        return NULL;
    *v = progs[prog].v;
    return &progs[prog].procs[proc];
}

/*
 * Decodes p[0..len), the call or (reply) the reply of rec's procedure; on
 * failure flags the record and returns the error.
 */
static int run(struct tbbt_trace_rec *rec, bool reply, const uint8_t *p, size_t len, bool trunc,
               struct tbbt_fhtab *fh, uint16_t trunc_flag, uint16_t bad_flag)
{
    const struct tbbt__dec_vers *v = NULL;
    const struct tbbt__dec_proc *op = find_proc(rec->prog, rec->proc, &v);
    tbbt__dec_fn fn = !op ? NULL : reply ? op->reply : op->call;
    struct tbbt__dec d = {
        .v = v,
        .p = p,
        .len = len > UINT32_MAX ? UINT32_MAX : (u_int)len,
        .trunc = trunc,
        .err = TBBT_E_BADREC,
        .rec = rec,
        .fht = fh,
    };

    if (fn == NULL) {
        rec->flags |= bad_flag;
        return TBBT_E_BADREC;
    }
    tbbt_xdrmem_create(&d.xdr, p, d.len);
    if (fn(&d))
        return 0;
    if (d.err == TBBT_E_TRUNC && trunc) {
        rec->flags |= trunc_flag;
        return TBBT_E_TRUNC;
    }
    rec->flags |= bad_flag;
    return TBBT_E_BADREC;
}

int tbbt__decode_call(struct tbbt_trace_rec *rec, const uint8_t *p, size_t len, bool trunc,
                      struct tbbt_fhtab *fh)
{
    return run(rec, false, p, len, trunc, fh, TBBT_RF_CALL_TRUNC, TBBT_RF_CALL_BAD);
}

int tbbt__decode_reply(struct tbbt_trace_rec *rec, const uint8_t *p, size_t len, bool trunc,
                       struct tbbt_fhtab *fh)
{
    return run(rec, true, p, len, trunc, fh, TBBT_RF_REPLY_TRUNC, TBBT_RF_REPLY_BAD);
}

bool tbbt__dec_void(struct tbbt__dec *d)
{
    (void)d;
    return true;
}

/*
 * Why the item at pos did not decode: TBBT_E_TRUNC or TBBT_E_BADREC (see top).
 * The padded copy lives in a per-thread buffer that is all zeros between
 * calls (decoding only reads it): only the rem bytes copied in are cleared
 * again, instead of zeroing 2 KiB per truncated message.  ITEM_MAX zeros after
 * them suffice: an item that decodes reads fewer than ITEM_MAX bytes.
 */
__attribute__((noinline, cold))
static int classify(struct tbbt__dec *d, u_int pos, xdrproc_t proc, void *obj)
{
    static _Thread_local uint8_t pad[2 * ITEM_MAX];
    u_int rem = d->len - pos;
    XDR x;
    bool_t ok;

    if (!d->trunc || rem >= ITEM_MAX)
        return TBBT_E_BADREC;
    memcpy(pad, d->p + pos, rem);
    tbbt_xdrmem_create(&x, pad, rem + ITEM_MAX);
    ok = proc(&x, obj);
    memset(pad, 0, rem);
    return ok ? TBBT_E_TRUNC : TBBT_E_BADREC;
}

/* ---- the call shapes NFSv2 and NFSv3 share -------------------------------- */

/* Buffers of the largest filename and path of both versions. */
#define NAME_BUF (NFS3_MAXNAMLEN + 1)
#define PATH_BUF (NFS3_MAXPATHLEN + 1)
_Static_assert(NFS2_MAXNAMLEN <= NFS3_MAXNAMLEN && NFS2_MAXPATHLEN <= NFS3_MAXPATHLEN,
               "v2 names or paths longer than v3's");

/* A string of routine proc into the record with field bit; buf holds its bound + 1 bytes. */
static inline bool dec_str(struct tbbt__dec *d, xdrproc_t proc, char *buf,
                           struct tbbt_str *dst, int field)
{
    uint32_t len;

    if (!tbbt__dec_string(d, proc, buf, &len))
        return false;
    tbbt__dec_set_str(d, buf, len, dst, field);
    return true;
}

bool tbbt__dec_name(struct tbbt__dec *d, struct tbbt_str *dst, int field)
{
    char buf[NAME_BUF];

    return dec_str(d, d->v->name, buf, dst, field);
}

bool tbbt__dec_path(struct tbbt__dec *d, struct tbbt_str *dst, int field)
{
    char buf[PATH_BUF];

    return dec_str(d, d->v->path, buf, dst, field);
}

bool tbbt__dec_obj(struct tbbt__dec *d)
{
    return d->v->fh(d, &d->rec->fh, TBBT_F_FH);
}

bool tbbt__dec_dirop(struct tbbt__dec *d)
{
    return d->v->fh(d, &d->rec->fh, TBBT_F_FH) && tbbt__dec_name(d, &d->rec->name, TBBT_F_NAME);
}

bool tbbt__dec_dirop2(struct tbbt__dec *d)
{
    return d->v->fh(d, &d->rec->fh2, TBBT_F_FH2) &&
           tbbt__dec_name(d, &d->rec->name2, TBBT_F_NAME2);
}

bool tbbt__dec_rename(struct tbbt__dec *d)
{
    return tbbt__dec_dirop(d) && tbbt__dec_dirop2(d);
}

bool tbbt__dec_link(struct tbbt__dec *d)
{
    return tbbt__dec_obj(d) && tbbt__dec_dirop2(d);
}

bool tbbt__dec_status(struct tbbt__dec *d, bool *ok)
{
    uint32_t v;     /* an nfsstat3 or nfsstat: an XDR enum, a signed 32-bit word */
    int32_t st;

    if (!tbbt__dec_u32(d, &v))
        return false;
    st = (int32_t)v;
    /* v3: a status not in RFC 1813 2.6 is malformed, and the record gets no status */
    if (d->v->closed && !tbbt_proto_status_name(d->v->key, st))
        return tbbt__dec_range(d, 1, 0);
    tbbt__dec_set_status(d, st);
    *ok = st == 0;  /* NFS3_OK, NFS_OK */
    return true;
}

bool tbbt__dec_attrstat(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && (!ok || d->v->attr(d, &d->rec->obj_attr, TBBT_F_OBJ_ATTR));
}

bool tbbt__dec_dirlist(struct tbbt__dec *d, bool (*entry)(struct tbbt__dec *d, bool plus),
                       bool plus)
{
    struct tbbt_trace_rec *r = d->rec;
    bool follows, eof;

    for (;;) {
        if (!tbbt__dec_follows(d, &follows))
            return false;
        if (!follows)
            break;
        if (!entry(d, plus))
            return false;
    }
    TBBT_SET(r, TBBT_F_ENTRIES);
    r->res_count = r->n_entries;
    TBBT_SET(r, TBBT_F_RES_COUNT);
    if (!tbbt__dec_follows(d, &eof))    /* 0 or 1: xdr_bool would take any value */
        return false;
    r->eof = eof;
    TBBT_SET(r, TBBT_F_EOF);
    return true;
}

/* ---- helpers shared by the procedure decoders (decode-int.h) -------------- */

bool tbbt__dec_item(struct tbbt__dec *d, xdrproc_t proc, void *obj)
{
    u_int pos = tbbt_xdr_getpos(&d->xdr);

    if (proc(&d->xdr, obj))
        return true;
    d->err = classify(d, pos, proc, obj);
    return false;
}

bool tbbt__dec_u32(struct tbbt__dec *d, uint32_t *v)
{
    u_int pos = tbbt_xdr_getpos(&d->xdr), x;

    if (!tbbt_xdr_u_int(&d->xdr, &x)) {
        d->err = classify(d, pos, (xdrproc_t)xdr_u_int, &x);
        return false;
    }
    *v = x;
    return true;
}

/* An unsigned hyper is two words, the high one first (RFC 4506 4.5). */
bool tbbt__dec_u64(struct tbbt__dec *d, uint64_t *v)
{
    uint32_t hi, lo;

    if (!tbbt__dec_u32(d, &hi) || !tbbt__dec_u32(d, &lo))
        return false;
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

bool tbbt__dec_u32_field(struct tbbt__dec *d, uint32_t *dst, int field)
{
    if (!tbbt__dec_u32(d, dst))
        return false;
    TBBT_SET(d->rec, field);
    return true;
}

bool tbbt__dec_u64_field(struct tbbt__dec *d, uint64_t *dst, int field)
{
    if (!tbbt__dec_u64(d, dst))
        return false;
    TBBT_SET(d->rec, field);
    return true;
}

bool tbbt__dec_follows(struct tbbt__dec *d, bool *follows)
{
    uint32_t v;

    if (!tbbt__dec_u32(d, &v))
        return false;
    if (v > 1) {
        d->err = TBBT_E_BADREC;
        return false;
    }
    *follows = v == 1;
    return true;
}

bool tbbt__dec_range(struct tbbt__dec *d, uint32_t v, uint32_t max)
{
    if (v <= max)
        return true;
    d->err = TBBT_E_BADREC;
    return false;
}

bool tbbt__dec_peek(struct tbbt__dec *d, u_int ahead, uint32_t *v)
{
    u_int pos = tbbt_xdr_getpos(&d->xdr);

    if (pos > d->len || ahead > d->len - pos || d->len - pos - ahead < 4)
        return false;
    *v = (uint32_t)d->p[pos + ahead] << 24 | (uint32_t)d->p[pos + ahead + 1] << 16 |
         (uint32_t)d->p[pos + ahead + 2] << 8 | d->p[pos + ahead + 3];
    return true;
}

bool tbbt__dec_bools_ok(struct tbbt__dec *d, const struct tbbt__dec_arm *arms, int n)
{
    u_int ahead = 0;
    uint32_t v;

    for (int i = 0; i < n && tbbt__dec_peek(d, ahead, &v); i++) {
        if (v > arms[i].max) {
            d->err = TBBT_E_BADREC;
            return false;
        }
        ahead += 4 + (v == arms[i].arm ? arms[i].len : 0);
    }
    return true;
}

bool tbbt__dec_string(struct tbbt__dec *d, xdrproc_t proc, char *buf, uint32_t *len)
{
    u_int pos = tbbt_xdr_getpos(&d->xdr);
    char *s = buf;

    if (!tbbt__dec_item(d, proc, &s))
        return false;
    /* The length word decoded, so it lies within p[0..len). */
    *len = (uint32_t)tbbt__dec_be(d->p + pos, 4);
    return true;
}

bool tbbt__dec_opaque_len(struct tbbt__dec *d, uint32_t bound, uint32_t *len)
{
    if (!tbbt__dec_u32(d, len))
        return false;
    if (*len > bound) {
        d->err = TBBT_E_BADREC;
        return false;
    }
    return true;
}

bool tbbt__dec_skip(struct tbbt__dec *d, uint32_t len)
{
    u_int pos = tbbt_xdr_getpos(&d->xdr);
    uint64_t padded = ((uint64_t)len + 3) & ~(uint64_t)3;

    if (padded > d->len - pos) {
        d->err = d->trunc ? TBBT_E_TRUNC : TBBT_E_BADREC;
        return false;
    }
    return xdr_setpos(&d->xdr, pos + (u_int)padded);
}

void tbbt__dec_set_status(struct tbbt__dec *d, int32_t status)
{
    d->rec->status = status;
    d->rec->flags |= TBBT_RF_STATUS;
}

void tbbt__dec_set_fh(struct tbbt__dec *d, const void *fh, uint32_t len, uint32_t *dst,
                      int field)
{
    *dst = tbbt_fhtab_intern(d->fht, fh, len);
    TBBT_SET(d->rec, field);
}

void tbbt__dec_set_str(struct tbbt__dec *d, const char *s, uint32_t len, struct tbbt_str *dst,
                       int field)
{
    tbbt_trace_rec_set_str(d->rec, dst, s, len);
    TBBT_SET(d->rec, field);
}

void tbbt__dec_add_info(struct tbbt__dec *d, uint64_t v)
{
    struct tbbt_trace_rec *rec = d->rec;

    if (rec->n_info < TBBT_INFO_MAX)
        rec->info[rec->n_info++] = v;
    TBBT_SET(rec, TBBT_F_INFO);
}

uint64_t tbbt__dec_be(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++)
        v = v << 8 | b[i];
    return v;
}
