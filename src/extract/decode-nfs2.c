/* SPDX-License-Identifier: MIT */
/*
 * NFSv2 call arguments and reply results of all 18 procedures (RFC 1094
 * 2.2.0-2.2.17, NULL to STATFS with the obsolete ROOT and WRITECACHE) into
 * trace record fields, one XDR item at a time with the rpcgen routines of
 * nfs2.x (see decode-int.h for the conventions, decode-nfs3.c for the field
 * mapping, which is the same).
 *
 * Version 2 values are mapped into the version 3 shaped record: fattr types
 * NFNON..NFLNK keep their numbers (they equal NF3REG..NF3LNK), `used` is
 * blocks * blocksize, times are seconds * 1e9 + useconds * 1000; a sattr
 * field of all ones (0xffffffff) is not set, and a time whose useconds is
 * 1000000 means "the server's time" (the Sun convention Linux also follows).
 * READ and WRITE data are skipped: WRITE count and READ res_count are the
 * data lengths.  The readdir cookie (4 opaque bytes) becomes their big-endian
 * value.  STATFS info[] is tsize, bsize, blocks, bfree, bavail.
 */
#include <string.h>

#include "extract/decode-int.h"
#include "proto/fattr.h"
#include "proto/nfs2.h"
#include "proto/proto.h"

#define ITEM(d, fn, obj) tbbt__dec_item((d), (xdrproc_t)(fn), (obj))
#define UNSET 0xffffffffu
#define SERVER_TIME_USEC 1000000u

/* ---- basic types ----------------------------------------------------------- */

static uint64_t time_ns(const nfs2_timeval *t)
{
    return (uint64_t)t->seconds * 1000000000u + (uint64_t)t->useconds * 1000u;
}

#define NFS2_FTYPE_MAX 8u    /* NFFIFO */

static void map_fattr(struct tbbt_fattr *o, const nfs2_fattr *a)
{
    TBBT_PROTO_FATTR_COPY(o, a);
    o->used = (uint64_t)a->blocks * a->blocksize;
    o->rdev = a->rdev;
    o->atime_ns = time_ns(&a->atime);
    o->mtime_ns = time_ns(&a->mtime);
    o->ctime_ns = time_ns(&a->ctime);
}

static void map_stime(uint32_t *mask, uint64_t *ns, const nfs2_timeval *t, uint32_t client,
                      uint32_t server)
{
    if (t->seconds == UNSET || t->useconds == UNSET)
        return;
    if (t->useconds == SERVER_TIME_USEC) {
        *mask |= server;
        return;
    }
    *mask |= client;
    *ns = time_ns(t);
}

/* A sattr value: bit into *mask and the value, or 0 if it is not set (all ones). */
static uint32_t map_sval(uint32_t *mask, uint32_t bit, uint32_t v)
{
    if (v == UNSET)
        return 0;
    *mask |= bit;
    return v;
}

static void map_sattr(struct tbbt_sattr *o, const nfs2_sattr *s)
{
    memset(o, 0, sizeof(*o));
    o->mode = map_sval(&o->mask, TBBT_SA_MODE, s->mode);
    o->uid = map_sval(&o->mask, TBBT_SA_UID, s->uid);
    o->gid = map_sval(&o->mask, TBBT_SA_GID, s->gid);
    o->size = map_sval(&o->mask, TBBT_SA_SIZE, s->size);
    map_stime(&o->mask, &o->atime_ns, &s->atime, TBBT_SA_ATIME, TBBT_SA_ATIME_SERVER);
    map_stime(&o->mask, &o->mtime_ns, &s->mtime, TBBT_SA_MTIME, TBBT_SA_MTIME_SERVER);
}

static bool dec_fh(struct tbbt__dec *d, uint32_t *dst, int field)
{
    nfs2_fhandle fh;

    if (!ITEM(d, xdr_nfs2_fhandle, fh))
        return false;
    tbbt__dec_set_fh(d, fh, NFS2_FHSIZE, dst, field);
    return true;
}

static bool dec_attr(struct tbbt__dec *d, struct tbbt_fattr *dst, int field)
{
    nfs2_fattr a;

    /* RFC 1094 2.3.2's NFNON..NFLNK and the NFSOCK, NFBAD, NFFIFO (6-8) servers send */
    if (!ITEM(d, xdr_nfs2_fattr, &a) || !tbbt__dec_range(d, a.type, NFS2_FTYPE_MAX))
        return false;
    map_fattr(dst, &a);
    TBBT_SET(d->rec, field);
    return true;
}

static bool dec_sattr(struct tbbt__dec *d)
{
    nfs2_sattr s;

    if (!ITEM(d, xdr_nfs2_sattr, &s))
        return false;
    map_sattr(&d->rec->sattr, &s);
    TBBT_SET(d->rec, TBBT_F_SATTR);
    return true;
}

/*
 * What v2 decodes its own way in the shapes it shares with v3.  Any status value
 * is kept (closed false): v2 servers send Unix errno values outside RFC 1094
 * 2.3.1's list (EXDEV 18, EINVAL 22, EMLINK 31), where v3's list is closed.
 */
const struct tbbt__dec_vers tbbt__dec_vers2 = {
    dec_fh, (xdrproc_t)xdr_nfs2_filename, (xdrproc_t)xdr_nfs2_path, dec_attr, TBBT_PROTO_NFS2,
    false,
};

/* ---- calls ----------------------------------------------------------------- */

static bool setattr_call(struct tbbt__dec *d)
{
    return tbbt__dec_obj(d) && dec_sattr(d);
}

static bool read_call(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    uint32_t offset, totalcount;

    if (!tbbt__dec_obj(d) || !tbbt__dec_u32(d, &offset))
        return false;
    r->offset = offset;
    TBBT_SET(r, TBBT_F_OFFSET);
    return tbbt__dec_u32_field(d, &r->count, TBBT_F_COUNT) && tbbt__dec_u32(d, &totalcount);
}

/* beginoffset and totalcount are unused (RFC 1094 2.2.9); count is the data length. */
static bool write_call(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    uint32_t beginoffset, offset, totalcount, len;

    if (!tbbt__dec_obj(d) || !tbbt__dec_u32(d, &beginoffset) || !tbbt__dec_u32(d, &offset))
        return false;
    r->offset = offset;
    TBBT_SET(r, TBBT_F_OFFSET);
    if (!tbbt__dec_u32(d, &totalcount) || !tbbt__dec_opaque_len(d, NFS2_MAXDATA, &len))
        return false;
    r->count = len;
    TBBT_SET(r, TBBT_F_COUNT);
    return tbbt__dec_skip(d, len);
}

/* CREATE and MKDIR. */
static bool create_call(struct tbbt__dec *d)
{
    return tbbt__dec_dirop(d) && dec_sattr(d);
}

static bool symlink_call(struct tbbt__dec *d)
{
    return tbbt__dec_dirop(d) && tbbt__dec_path(d, &d->rec->target, TBBT_F_TARGET) && dec_sattr(d);
}

static bool readdir_call(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    nfs2_cookie cookie;

    if (!tbbt__dec_obj(d) || !ITEM(d, xdr_nfs2_cookie, cookie))
        return false;
    r->cookie = tbbt__dec_be(cookie, NFS2_COOKIESIZE);
    TBBT_SET(r, TBBT_F_COOKIE);
    return tbbt__dec_u32_field(d, &r->count, TBBT_F_COUNT);
}

/* ---- replies --------------------------------------------------------------- */

/* diropres: LOOKUP, CREATE, MKDIR. */
static bool diropres_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && (!ok || (dec_fh(d, &d->rec->new_fh, TBBT_F_NEW_FH) &&
                                                dec_attr(d, &d->rec->obj_attr, TBBT_F_OBJ_ATTR)));
}

/* A bare stat: REMOVE, RENAME, LINK, SYMLINK, RMDIR. */
static bool stat_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok);
}

static bool readlink_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && (!ok || tbbt__dec_path(d, &d->rec->target, TBBT_F_TARGET));
}

static bool read_reply(struct tbbt__dec *d)
{
    struct tbbt_trace_rec *r = d->rec;
    uint32_t len;
    bool ok;

    if (!tbbt__dec_status(d, &ok))
        return false;
    if (!ok)
        return true;
    if (!dec_attr(d, &r->obj_attr, TBBT_F_OBJ_ATTR) ||
        !tbbt__dec_opaque_len(d, NFS2_MAXDATA, &len))
        return false;
    r->res_count = len;
    TBBT_SET(r, TBBT_F_RES_COUNT);
    return tbbt__dec_skip(d, len);
}

/* One entry (without its nextentry pointer); kept only when complete.  v2 has no plus. */
static bool dec_entry(struct tbbt__dec *d, bool plus)
{
    char name[NFS2_MAXNAMLEN + 1];
    struct tbbt_entry *e;
    struct tbbt_str s;
    nfs2_cookie cookie;
    uint32_t fileid, len;

    if (!tbbt__dec_u32(d, &fileid) ||
        !tbbt__dec_string(d, (xdrproc_t)xdr_nfs2_filename, name, &len) ||
        !ITEM(d, xdr_nfs2_cookie, cookie))
        return false;
    (void)plus;
    tbbt_trace_rec_set_str(d->rec, &s, name, len);
    e = tbbt_trace_rec_add_entry(d->rec);
    e->fileid = fileid;
    e->cookie = tbbt__dec_be(cookie, NFS2_COOKIESIZE);
    e->name = s;
    TBBT_SET(d->rec, TBBT_F_ENTRIES);
    return true;
}

static bool readdir_reply(struct tbbt__dec *d)
{
    bool ok;

    return tbbt__dec_status(d, &ok) && (!ok || tbbt__dec_dirlist(d, dec_entry, false));
}

static bool statfs_reply(struct tbbt__dec *d)
{
    uint32_t v;
    bool ok;

    if (!tbbt__dec_status(d, &ok))
        return false;
    for (int i = 0; ok && i < 5; i++) {     /* tsize bsize blocks bfree bavail */
        if (!tbbt__dec_u32(d, &v))
            return false;
        tbbt__dec_add_info(d, v);
    }
    return true;
}


#undef TBBT__DEC_NFS2
#define TBBT__DEC_NFS2 TBBT__DEC_ROW
const struct tbbt__dec_proc tbbt__dec_nfs2[TBBT__DEC_NPROCS] = {
#include "proto/catalogue.def"
};
