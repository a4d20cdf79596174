/* SPDX-License-Identifier: MIT */
/*
 * NFSv3 call arguments and reply results of all 22 procedures (RFC 1813
 * 3.3.0-3.3.21) into trace record fields, one XDR item at a time with the
 * rpcgen routines of nfs3.x (see decode-int.h for the conventions).
 *
 * Field mapping (see enum tbbt_field):
 * - calls: fh = the object, or the directory of a directory operation with
 *   name = the entry; rename from -> fh/name, to -> fh2/name2; link: fh = the
 *   file, fh2/name2 = the new link's directory and name;
 * - replies: wcc or post-op attributes of the object -> obj_pre/obj_attr,
 *   of the directory -> dir_pre/dir_attr, rename's todir and link's linkdir
 *   -> dir2_pre/dir2_attr; a new handle -> new_fh; readdir(plus) entries ->
 *   rec->entries, their number -> res_count;
 * - info[] in RFC order: FSSTAT tbytes, fbytes, abytes, tfiles, ffiles,
 *   afiles, invarsec; FSINFO rtmax, rtpref, rtmult, wtmax, wtpref, wtmult,
 *   dtpref, maxfilesize, time_delta (ns), properties; PATHCONF linkmax,
 *   name_max, no_trunc, chown_restricted, case_insensitive, case_preserving.
 * READ and WRITE data are skipped, never copied.  The READDIR(PLUS) reply's
 * cookie verifier has no record field and is dropped.
 */
#include <string.h>

#include "extract/decode-int.h"
#include "proto/fattr.h"
#include "proto/nfs3.h"
#include "proto/proto.h"

#define ITEM(d, fn, obj) tbbt__dec_item((d), (xdrproc_t)(fn), (obj))

/* ---- basic types ----------------------------------------------------------- */

static uint64_t time_ns(const nfstime3 *t)
{
    return (uint64_t)t->seconds * 1000000000u + t->nseconds;
}

static void map_fattr(struct tbbt_fattr *o, const fattr3 *a)
{
    TBBT_PROTO_FATTR_COPY(o, a);
    o->used = a->used;
    o->rdev = tbbt_proto_specdata(&a->rdev);
    o->atime_ns = time_ns(&a->atime);
    o->mtime_ns = time_ns(&a->mtime);
    o->ctime_ns = time_ns(&a->ctime);
}

static void map_time_how(uint32_t *mask, uint64_t *ns, time_how how, const nfstime3 *t,
                         uint32_t client, uint32_t server)
{
    if (how == SET_TO_CLIENT_TIME) {
        *mask |= client;
        *ns = time_ns(t);
    } else if (how == SET_TO_SERVER_TIME) {
        *mask |= server;
    }
}

/*
 * A 32-bit sattr3 value (set_mode3, set_uid3, set_gid3): bit into *mask and *v when
 * set, else 0 (*v is not read: the union arm was not decoded).
 */
static uint32_t map_set32(uint32_t *mask, uint32_t bit, bool_t set, const uint32 *v)
{
    if (!set)
        return 0;
    *mask |= bit;
    return *v;
}

static void map_sattr(struct tbbt_sattr *o, const sattr3 *s)
{
    memset(o, 0, sizeof(*o));
    o->mode = map_set32(&o->mask, TBBT_SA_MODE, s->mode.set_it, &s->mode.set_mode3_u.mode);
    o->uid = map_set32(&o->mask, TBBT_SA_UID, s->uid.set_it, &s->uid.set_uid3_u.uid);
    o->gid = map_set32(&o->mask, TBBT_SA_GID, s->gid.set_it, &s->gid.set_gid3_u.gid);
    if (s->size.set_it) {
        o->mask |= TBBT_SA_SIZE;
        o->size = s->size.set_size3_u.size;
    }
    map_time_how(&o->mask, &o->atime_ns, s->atime.set_it, &s->atime.set_atime_u.atime,
                 TBBT_SA_ATIME, TBBT_SA_ATIME_SERVER);
    map_time_how(&o->mask, &o->mtime_ns, s->mtime.set_it, &s->mtime.set_mtime_u.mtime,
                 TBBT_SA_MTIME, TBBT_SA_MTIME_SERVER);
}

static bool dec_fh(struct tbbt__dec *d, uint32_t *dst, int field)
{
    char buf[NFS3_FHSIZE];
    nfs_fh3 fh = { .data = { .data_len = 0, .data_val = buf } };

    if (!ITEM(d, xdr_nfs_fh3, &fh))
        return false;
    tbbt__dec_set_fh(d, buf, fh.data.data_len, dst, field);
    return true;
}

/* Discriminants of the optional items (RFC 1813 2.5, 2.6, 3.3.2): bools, time_how. */
static const struct tbbt__dec_arm BOOL_ATTR = {1, 1, 84};     /* post_op_attr (of an entry) */
static const struct tbbt__dec_arm BOOL_TIME = {1, 1, 8};      /* sattrguard3 */
static const struct tbbt__dec_arm BOOL_FH = {1, 0, 0};        /* post_op_fh3 (checked alone) */
static const struct tbbt__dec_arm SATTR3[6] = {
    {1, 1, 4}, {1, 1, 4}, {1, 1, 4}, {1, 1, 8},   /* set_mode3, set_uid3, set_gid3, set_size3 */
    {SET_TO_CLIENT_TIME, SET_TO_CLIENT_TIME, 8},  /* set_atime */
    {SET_TO_CLIENT_TIME, SET_TO_CLIENT_TIME, 8},  /* set_mtime */
};

/* An ftype3 in NF3REG..NF3FIFO. */
static bool ftype_ok(struct tbbt__dec *d, ftype3 t)
{
    return t >= NF3REG && tbbt__dec_range(d, t, NF3FIFO);
}

static bool dec_attr(struct tbbt__dec *d, struct tbbt_fattr *dst, int field)
{
    fattr3 a;

    if (!ITEM(d, xdr_fattr3, &a) || !ftype_ok(d, a.type))
        return false;
    map_fattr(dst, &a);
    TBBT_SET(d->rec, field);
    return true;
}

/* wcc_attr: size and times before the operation. */
static bool dec_wcc_attr(struct tbbt__dec *d, struct tbbt_wcc_pre *dst, int field)
{
    wcc_attr a;

    if (!ITEM(d, xdr_wcc_attr, &a))
        return false;
    dst->size = a.size;
    dst->mtime_ns = time_ns(&a.mtime);
    dst->ctime_ns = time_ns(&a.ctime);
    TBBT_SET(d->rec, field);
    return true;
}

/*
 * post_op_attr and pre_op_attr: "attributes follow" (0 or 1), then the
 * attributes when they do.
 */
static bool dec_post_attr(struct tbbt__dec *d, struct tbbt_fattr *dst, int field)
{
    bool follows;

    return tbbt__dec_follows(d, &follows) && (!follows || dec_attr(d, dst, field));
}

static bool dec_pre_attr(struct tbbt__dec *d, struct tbbt_wcc_pre *dst, int field)
{
    bool follows;

    return tbbt__dec_follows(d, &follows) && (!follows || dec_wcc_attr(d, dst, field));
}

/* wcc_data: before and after, each kept once it decoded. */
static bool dec_wcc(struct tbbt__dec *d, struct tbbt_wcc_pre *pre, int pre_field,
                    struct tbbt_fattr *post, int post_field)
{
    return dec_pre_attr(d, pre, pre_field) && dec_post_attr(d, post, post_field);
}

static bool dec_sattr(struct tbbt__dec *d)
{
    sattr3 s;

    if (!tbbt__dec_bools_ok(d, SATTR3, 6) || !ITEM(d, xdr_sattr3, &s))
        return false;
    map_sattr(&d->rec->sattr, &s);
    TBBT_SET(d->rec, TBBT_F_SATTR);
    return true;
}

/* What v3 decodes its own way in the shapes it shares with v2 (a closed status list). */
const struct tbbt__dec_vers tbbt__dec_vers3 = {
    dec_fh, (xdrproc_t)xdr_filename3, (xdrproc_t)xdr_nfspath3, dec_attr, TBBT_PROTO_NFS3, true,
};

/* ---- shorthands for the record fields -------------------------------------- */

static bool dec_offset(struct tbbt__dec *d)
{
    return tbbt__dec_u64_field(d, &d->rec->offset, TBBT_F_OFFSET);
}

static bool dec_count(struct tbbt__dec *d)
{
    return tbbt__dec_u32_field(d, &d->rec->count, TBBT_F_COUNT);
}

static bool dec_obj_attr(struct tbbt__dec *d)
{
    return dec_post_attr(d, &d->rec->obj_attr, TBBT_F_OBJ_ATTR);
}

static bool dec_dir_attr(struct tbbt__dec *d)
{
    return dec_post_attr(d, &d->rec->dir_attr, TBBT_F_DIR_ATTR);
}

static bool dec_obj_wcc(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;

    return dec_wcc(d, &r->obj_pre, TBBT_F_OBJ_PRE, &r->obj_attr, TBBT_F_OBJ_ATTR);
}

static bool dec_dir_wcc(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;

    return dec_wcc(d, &r->dir_pre, TBBT_F_DIR_PRE, &r->dir_attr, TBBT_F_DIR_ATTR);
}

static bool dec_dir2_wcc(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;

    return dec_wcc(d, &r->dir2_pre, TBBT_F_DIR2_PRE, &r->dir2_attr, TBBT_F_DIR2_ATTR);
}

/* ---- calls ----------------------------------------------------------------- */

static bool setattr_call(struct tbbt__dec *d)
{
    sattrguard3 g;

    if (!tbbt__dec_obj(d) || !dec_sattr(d) || !tbbt__dec_bools_ok(d, &BOOL_TIME, 1) ||
        !ITEM(d, xdr_sattrguard3, &g))
        return false;
    if (g.check) {
        d->rec->guard_ns = time_ns(&g.sattrguard3_u.obj_ctime);
        TBBT_SET(d->rec, TBBT_F_GUARD);
    }
    return true;
}

static bool access_call(struct tbbt__dec *d)
{
    return tbbt__dec_obj(d) &&
           tbbt__dec_u32_field(d, &d->rec->access, TBBT_F_ACCESS);
}

/* READ and COMMIT: file, offset, count. */
static bool read_call(struct tbbt__dec *d)
{
    return tbbt__dec_obj(d) && dec_offset(d) && dec_count(d);
}

/* A stable_how (WRITE stable, committed). */
static bool dec_stable(struct tbbt__dec *d, uint32_t *dst, int field)
{
    stable_how v;

    if (!ITEM(d, xdr_stable_how, &v) || !tbbt__dec_range(d, v, FILE_SYNC))
        return false;
    *dst = v;
    TBBT_SET(d->rec, field);
    return true;
}

static bool write_call(struct tbbt__dec *d)
{
    uint32_t len;

    return read_call(d) && dec_stable(d, &d->rec->stable, TBBT_F_STABLE) &&
           tbbt__dec_opaque_len(d, NFS3_MAXDATA, &len) && tbbt__dec_skip(d, len);
}

/* The createhow3 mode at the current position (0 if the message ends first). */
static uint32_t peek_mode(struct tbbt__dec *d)
{
    uint32_t v = 0;

    (void)tbbt__dec_peek(d, 0, &v);
    return v;
}

/* The sattr3 after a createhow3 mode: its discriminants in range. */
static bool sattr_ahead_ok(struct tbbt__dec *d)
{
    static const struct tbbt__dec_arm arms[7] = {
        {EXCLUSIVE, EXCLUSIVE, 8},
        {1, 1, 4}, {1, 1, 4}, {1, 1, 4}, {1, 1, 8},
        {SET_TO_CLIENT_TIME, SET_TO_CLIENT_TIME, 8},
        {SET_TO_CLIENT_TIME, SET_TO_CLIENT_TIME, 8},
    };
    return tbbt__dec_bools_ok(d, arms, 7);
}

static bool create_call(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    createhow3 how;

    /* createhow3's own routine refuses a mode past EXCLUSIVE; UNCHECKED/GUARDED's sattr3 */
    if (!tbbt__dec_dirop(d) || !tbbt__dec_range(d, peek_mode(d), EXCLUSIVE) ||
        (peek_mode(d) != EXCLUSIVE && !sattr_ahead_ok(d)) || !ITEM(d, xdr_createhow3, &how))
        return false;
    r->createmode = how.mode;
    TBBT_SET(r, TBBT_F_CREATEMODE);
    if (how.mode == EXCLUSIVE) {
        r->createverf = tbbt__dec_be(how.createhow3_u.verf, NFS3_CREATEVERFSIZE);
        TBBT_SET(r, TBBT_F_CREATEVERF);
    } else {
        map_sattr(&r->sattr, &how.createhow3_u.obj_attributes);
        TBBT_SET(r, TBBT_F_SATTR);
    }
    return true;
}

static bool mkdir_call(struct tbbt__dec *d)
{
    return tbbt__dec_dirop(d) && dec_sattr(d);
}

static bool symlink_call(struct tbbt__dec *d)
{
    return tbbt__dec_dirop(d) && dec_sattr(d) &&
           tbbt__dec_path(d, &d->rec->target, TBBT_F_TARGET);
}

/*
 * mknoddata3's type and, for the types that have one (NF3CHR, NF3BLK: devicedata3
 * starts with it; NF3SOCK, NF3FIFO), its sattr3's discriminants.
 */
static bool mknod_ahead_ok(struct tbbt__dec *d)
{
    static const struct tbbt__dec_arm arms[7] = {
        {NF3FIFO, 0, 0},
        {1, 1, 4}, {1, 1, 4}, {1, 1, 4}, {1, 1, 8},
        {SET_TO_CLIENT_TIME, SET_TO_CLIENT_TIME, 8},
        {SET_TO_CLIENT_TIME, SET_TO_CLIENT_TIME, 8},
    };
    uint32_t t = peek_mode(d);
    bool sattr = t == NF3CHR || t == NF3BLK || t == NF3SOCK || t == NF3FIFO;

    return tbbt__dec_bools_ok(d, arms, sattr ? 7 : 1);
}

static bool mknod_call(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    mknoddata3 m;

    if (!tbbt__dec_dirop(d) || !mknod_ahead_ok(d) || !ITEM(d, xdr_mknoddata3, &m) ||
        !ftype_ok(d, m.type))
        return false;
    r->ftype = m.type;
    TBBT_SET(r, TBBT_F_FTYPE);
    switch (m.type) {
    case NF3CHR:
    case NF3BLK:
        map_sattr(&r->sattr, &m.mknoddata3_u.device.dev_attributes);
        TBBT_SET(r, TBBT_F_SATTR);
        r->rdev = tbbt_proto_specdata(&m.mknoddata3_u.device.spec);
        TBBT_SET(r, TBBT_F_RDEV);
        break;
    case NF3SOCK:
    case NF3FIFO:
        map_sattr(&r->sattr, &m.mknoddata3_u.pipe_attributes);
        TBBT_SET(r, TBBT_F_SATTR);
        break;
    default:
        break;
    }
    return true;
}

static bool dec_cookie(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;

    return tbbt__dec_u64_field(d, &r->cookie, TBBT_F_COOKIE) &&
           tbbt__dec_u64_field(d, &r->cookieverf, TBBT_F_COOKIEVERF);
}

static bool readdir_call(struct tbbt__dec *d)
{
    return tbbt__dec_obj(d) && dec_cookie(d) && dec_count(d);
}

static bool readdirplus_call(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;

    return tbbt__dec_obj(d) && dec_cookie(d) &&
           tbbt__dec_u32_field(d, &r->dircount, TBBT_F_DIRCOUNT) &&
           tbbt__dec_u32_field(d, &r->maxcount, TBBT_F_MAXCOUNT);
}

/* ---- replies --------------------------------------------------------------- */

static bool setattr_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && dec_obj_wcc(d);
}

static bool lookup_reply(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    bool ok;

    if (!tbbt__dec_status(d, &ok))
        return false;
    if (ok && (!dec_fh(d, &r->new_fh, TBBT_F_NEW_FH) || !dec_obj_attr(d)))
        return false;
    return dec_dir_attr(d);
}

static bool access_reply(struct tbbt__dec *d)
{
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_obj_attr(d))
        return false;
    return !ok || tbbt__dec_u32_field(d, &d->rec->access_res, TBBT_F_ACCESS_RES);
}

static bool readlink_reply(struct tbbt__dec *d)
{
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_obj_attr(d))
        return false;
    return !ok || tbbt__dec_path(d, &d->rec->target, TBBT_F_TARGET);
}

static bool dec_eof(struct tbbt__dec *d)
{
    bool eof;

    if (!tbbt__dec_follows(d, &eof))    /* 0 or 1: xdr_bool would take any value */
        return false;
    d->rec->eof = eof;
    TBBT_SET(d->rec, TBBT_F_EOF);
    return true;
}

static bool read_reply(struct tbbt__dec *d)
{
    uint32_t len;
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_obj_attr(d))
        return false;
    return !ok || (tbbt__dec_u32_field(d, &d->rec->res_count, TBBT_F_RES_COUNT) && dec_eof(d) &&
                   tbbt__dec_opaque_len(d, NFS3_MAXDATA, &len) && tbbt__dec_skip(d, len));
}

static bool write_reply(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_obj_wcc(d))
        return false;
    return !ok || (tbbt__dec_u32_field(d, &r->res_count, TBBT_F_RES_COUNT) &&
                   dec_stable(d, &r->committed, TBBT_F_COMMITTED) &&
                   tbbt__dec_u64_field(d, &r->writeverf, TBBT_F_WRITEVERF));
}

/* CREATE, MKDIR, SYMLINK and MKNOD: new handle and attributes, directory wcc. */
static bool create_reply(struct tbbt__dec *d)
{
    char buf[NFS3_FHSIZE];
    post_op_fh3 fh = { .post_op_fh3_u.handle.data.data_val = buf };
    bool ok;

    if (!tbbt__dec_status(d, &ok))
        return false;
    if (ok) {
        if (!tbbt__dec_bools_ok(d, &BOOL_FH, 1) || !ITEM(d, xdr_post_op_fh3, &fh))
            return false;
        if (fh.handle_follows) {
            tbbt__dec_set_fh(d, buf, fh.post_op_fh3_u.handle.data.data_len, &d->rec->new_fh,
                             TBBT_F_NEW_FH);
        }
        if (!dec_obj_attr(d))
            return false;
    }
    return dec_dir_wcc(d);
}

/* REMOVE and RMDIR. */
static bool remove_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && dec_dir_wcc(d);
}

static bool rename_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && dec_dir_wcc(d) && dec_dir2_wcc(d);
}

static bool link_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && dec_obj_attr(d) && dec_dir2_wcc(d);
}

/* One entry3 or entryplus3 (without its nextentry pointer); kept only when complete. */
static bool dec_entry(struct tbbt__dec *d, bool plus)
{
    char name[NFS3_MAXNAMLEN + 1], fhbuf[NFS3_FHSIZE];
    post_op_fh3 fh = { .post_op_fh3_u.handle.data.data_val = fhbuf };
    post_op_attr attr = { .attributes_follow = FALSE };
    struct tbbt_entry *e;
    struct tbbt_str s;
    fileid3 fileid;
    cookie3 cookie;
    uint32_t len;

    if (!ITEM(d, xdr_fileid3, &fileid) ||
        !tbbt__dec_string(d, (xdrproc_t)xdr_filename3, name, &len) ||
        !ITEM(d, xdr_cookie3, &cookie))
        return false;
    if (plus && (!tbbt__dec_bools_ok(d, &BOOL_ATTR, 1) || !ITEM(d, xdr_post_op_attr, &attr) ||
                 (attr.attributes_follow && !ftype_ok(d, attr.post_op_attr_u.attributes.type)) ||
                 !tbbt__dec_bools_ok(d, &BOOL_FH, 1) || !ITEM(d, xdr_post_op_fh3, &fh)))
        return false;
    tbbt_trace_rec_set_str(d->rec, &s, name, len);
    e = tbbt_trace_rec_add_entry(d->rec);
    e->fileid = fileid;
    e->cookie = cookie;
    e->name = s;
    if (attr.attributes_follow) {
        map_fattr(&e->attr, &attr.post_op_attr_u.attributes);
        e->flags |= TBBT_ENT_ATTR;
    }
    if (fh.handle_follows) {
        e->fh = tbbt_fhtab_intern(d->fht, fhbuf, fh.post_op_fh3_u.handle.data.data_len);
        e->flags |= TBBT_ENT_FH;
    }
    TBBT_SET(d->rec, TBBT_F_ENTRIES);
    return true;
}

static bool dec_readdir_reply(struct tbbt__dec *d, bool plus)
{
    cookieverf3 verf;
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_dir_attr(d))
        return false;
    return !ok || (ITEM(d, xdr_cookieverf3, verf) && tbbt__dec_dirlist(d, dec_entry, plus));
}

static bool readdir_reply(struct tbbt__dec *d)
{
    return dec_readdir_reply(d, false);
}

static bool readdirplus_reply(struct tbbt__dec *d)
{
    return dec_readdir_reply(d, true);
}

/*
 * info[] values of FSSTAT, FSINFO and PATHCONF, one letter per value in RFC order:
 * L a uint64 (size3), I a uint32, B a bool (0 or 1: xdr_bool would take any value),
 * T an nfstime3 (as ns).
 */
static bool dec_info_value(struct tbbt__dec *d, char kind)
{
    uint64_t v = 0;
    nfstime3 t;
    uint32 u;
    size3 l;
    bool b;

    switch (kind) {
    case 'L':
        if (!ITEM(d, xdr_size3, &l))
            return false;
        v = l;
        break;
    case 'I':
        if (!ITEM(d, xdr_uint32, &u))
            return false;
        v = u;
        break;
    case 'B':
        if (!tbbt__dec_follows(d, &b))
            return false;
        v = b;
        break;
    default:
        if (!ITEM(d, xdr_nfstime3, &t))
            return false;
        v = time_ns(&t);
        break;
    }
    tbbt__dec_add_info(d, v);
    return true;
}

/* Status, the object's attributes and, when OK, the info[] values of kinds. */
static bool dec_info_reply(struct tbbt__dec *d, const char *kinds)
{
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_obj_attr(d))
        return false;
    for (; ok && *kinds; kinds++) {
        if (!dec_info_value(d, *kinds))
            return false;
    }
    return true;
}

/* tbytes fbytes abytes tfiles ffiles afiles invarsec */
static bool fsstat_reply(struct tbbt__dec *d)
{
    return dec_info_reply(d, "LLLLLLI");
}

/* rtmax rtpref rtmult wtmax wtpref wtmult dtpref maxfilesize time_delta properties */
static bool fsinfo_reply(struct tbbt__dec *d)
{
    return dec_info_reply(d, "IIIIIIILTI");
}

/* linkmax name_max no_trunc chown_restricted case_insensitive case_preserving */
static bool pathconf_reply(struct tbbt__dec *d)
{
    return dec_info_reply(d, "IIBBBB");
}

static bool commit_reply(struct tbbt__dec *d)
{
    bool ok;

    if (!tbbt__dec_status(d, &ok) || !dec_obj_wcc(d))
        return false;
    return !ok || tbbt__dec_u64_field(d, &d->rec->writeverf, TBBT_F_WRITEVERF);
}


#undef TBBT__DEC_NFS3
#define TBBT__DEC_NFS3 TBBT__DEC_ROW
const struct tbbt__dec_proc tbbt__dec_nfs3[TBBT__DEC_NPROCS] = {
#include "proto/catalogue.def"
};
