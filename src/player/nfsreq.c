/* SPDX-License-Identifier: MIT */
/*
 * nfsreq: trace record -> NFSv2/NFSv3 call arguments, and the parts of the replies the
 * player reads (new handles, readdir positions).  RFC 1813 3.3 (NFSv3 procedures),
 * RFC 1094 2.2 (NFSv2 procedures); TBBT paper 3.4 (replay by TBBT-ID).  The replay
 * rules are in nfsreq.h.
 *
 * One table per version gives, for each procedure, the record fields the call needs,
 * which TBBT-IDs it needs handles for, its XDR encoder, the result decoder (if the
 * player reads the results) and a builder that fills the argument structure.  Nothing
 * here decodes bytes: replies are decoded by the caller with the rpcgen routine in
 * q->xres, and only decoded structures are read here.
 */
#include "player/nfsreq.h"

#include <string.h>

#include <glib.h>

#include "proto/fattr.h"
#include "proto/proto.h"

#define F(f) ((uint64_t)1 << (f))
#define NS_PER_S 1000000000u
#define V2_UNSET 0xffffffffu
#define V2_SERVER_TIME_USEC 1000000u

/* Which handles a procedure needs. */
enum { USE_ID = 1, USE_ID2 = 2 };

struct bctx {
    struct tbbt_nfsreq *q;
    const struct tbbt_trace_rec *rec;
};

struct proc_desc {
    int (*build)(struct bctx *c);   /* 0 or TBBT_NFSREQ_UNSENDABLE; NULL: void args */
    xdrproc_t xargs;
    xdrproc_t xres;
    size_t res_size;
    bool attrs_only;                /* its result is read only for the object's attributes
                                       (checked against the record's, if it has them) */
};

/* ---- synthetic write data -------------------------------------------------- */

static uint8_t write_data[TBBT_NFSREQ_WRITE_MAX3];

/* The pattern of nfsreq.h, made once; read-only afterwards. */
static char *write_pattern(void)
{
    static gsize done;

    if (g_once_init_enter(&done)) {
        for (size_t i = 0; i < sizeof(write_data); i++)
            write_data[i] = (uint8_t)(1 + i % 251);
        g_once_init_leave(&done, 1);
    }
    return (char *)write_data;
}

/* ---- value helpers --------------------------------------------------------- */

static void put_be(char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (char)(v & 0xff);
        v >>= 8;
    }
}

static uint64_t get_be(const char *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++)
        v = v << 8 | (uint8_t)p[i];
    return v;
}

/* A string field as the char * the XDR string routines take (they never write it). */
static char *str_arg(const struct tbbt_str *s)
{
    return s->p ? (char *)s->p : (char *)"";
}

/* True if s can go through xdr_string with bound max: no NUL byte, not too long. */
static bool str_ok(const struct tbbt_str *s, uint32_t max)
{
    return s->len <= max && (s->len == 0 || (s->p && !memchr(s->p, 0, s->len)));
}

static nfstime3 time3(uint64_t ns)
{
    return (nfstime3){ .seconds = (uint32)(ns / NS_PER_S), .nseconds = (uint32)(ns % NS_PER_S) };
}

static time_how time_how_of(uint32_t mask, uint32_t client, uint32_t server)
{
    if (mask & client)
        return SET_TO_CLIENT_TIME;
    return mask & server ? SET_TO_SERVER_TIME : DONT_CHANGE;
}

/* The record's sattr as sattr3; an absent sattr sets nothing. */
static void sattr3_of(sattr3 *o, const struct tbbt_trace_rec *rec)
{
    struct tbbt_sattr s = { 0 };

    if (TBBT_HAS(rec, TBBT_F_SATTR))
        s = rec->sattr;
    memset(o, 0, sizeof(*o));
    o->mode.set_it = (s.mask & TBBT_SA_MODE) != 0;
    o->mode.set_mode3_u.mode = s.mode;
    o->uid.set_it = (s.mask & TBBT_SA_UID) != 0;
    o->uid.set_uid3_u.uid = s.uid;
    o->gid.set_it = (s.mask & TBBT_SA_GID) != 0;
    o->gid.set_gid3_u.gid = s.gid;
    o->size.set_it = (s.mask & TBBT_SA_SIZE) != 0;
    o->size.set_size3_u.size = s.size;
    o->atime.set_it = time_how_of(s.mask, TBBT_SA_ATIME, TBBT_SA_ATIME_SERVER);
    o->atime.set_atime_u.atime = time3(s.atime_ns);
    o->mtime.set_it = time_how_of(s.mask, TBBT_SA_MTIME, TBBT_SA_MTIME_SERVER);
    o->mtime.set_mtime_u.mtime = time3(s.mtime_ns);
}

static uint32_t v2_field(uint32_t mask, uint32_t bit, uint64_t v)
{
    return mask & bit ? (uint32_t)v : V2_UNSET;
}

static nfs2_timeval time2(uint32_t mask, uint32_t client, uint32_t server, uint64_t ns,
                          uint64_t call_ns)
{
    if (mask & client)
        return (nfs2_timeval){ (u_int)(ns / NS_PER_S), (u_int)(ns % NS_PER_S / 1000) };
    if (mask & server)
        return (nfs2_timeval){ (u_int)(call_ns / NS_PER_S), V2_SERVER_TIME_USEC };
    return (nfs2_timeval){ V2_UNSET, V2_UNSET };
}

/* The record's sattr as an NFSv2 sattr (RFC 1094 2.3.6: -1 = do not set). */
static void sattr2_of(nfs2_sattr *o, const struct tbbt_trace_rec *rec)
{
    struct tbbt_sattr s = { 0 };

    if (TBBT_HAS(rec, TBBT_F_SATTR))
        s = rec->sattr;
    o->mode = v2_field(s.mask, TBBT_SA_MODE, s.mode);
    o->uid = v2_field(s.mask, TBBT_SA_UID, s.uid);
    o->gid = v2_field(s.mask, TBBT_SA_GID, s.gid);
    o->size = v2_field(s.mask, TBBT_SA_SIZE, s.size);
    o->atime = time2(s.mask, TBBT_SA_ATIME, TBBT_SA_ATIME_SERVER, s.atime_ns, rec->call_ns);
    o->mtime = time2(s.mask, TBBT_SA_MTIME, TBBT_SA_MTIME_SERVER, s.mtime_ns, rec->call_ns);
}

/* ---- handles --------------------------------------------------------------- */

static nfs_fh3 fh3(struct bctx *c, int slot)
{
    return (nfs_fh3){ .data = { .data_len = c->q->fh_len[slot],
                                .data_val = (char *)c->q->fh[slot] } };
}

/* Copies the v2 handle of slot into dst; UNSENDABLE unless it is NFS2_FHSIZE bytes. */
static int fh2(struct bctx *c, int slot, char *dst)
{
    if (c->q->fh_len[slot] != NFS2_FHSIZE)
        return TBBT_NFSREQ_UNSENDABLE;
    memcpy(dst, c->q->fh[slot], NFS2_FHSIZE);
    return 0;
}

static diropargs3 dirop3(struct bctx *c)
{
    return (diropargs3){ .dir = fh3(c, 0), .name = str_arg(&c->rec->name) };
}

/* ---- NFSv3 builders -------------------------------------------------------- */

/* GETATTR, READLINK, FSSTAT, FSINFO, PATHCONF: one nfs_fh3, the first member of each. */
static int b3_obj(struct bctx *c)
{
    c->q->args.getattr3.object = fh3(c, 0);
    return 0;
}

static int b3_setattr(struct bctx *c)
{
    SETATTR3args *a = &c->q->args.setattr3;

    a->object = fh3(c, 0);
    sattr3_of(&a->new_attributes, c->rec);
    a->guard.check = FALSE;
    return 0;
}

/* LOOKUP, REMOVE, RMDIR: one diropargs3. */
static int b3_dirop(struct bctx *c)
{
    c->q->args.lookup3.what = dirop3(c);
    return 0;
}

static int b3_access(struct bctx *c)
{
    c->q->args.access3 = (ACCESS3args){ .object = fh3(c, 0), .access = c->rec->access };
    return 0;
}

/* READ and COMMIT: file, offset, count. */
static int b3_read(struct bctx *c)
{
    c->q->args.read3 = (READ3args){ fh3(c, 0), c->rec->offset, c->rec->count };
    return 0;
}

static int b3_write(struct bctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    WRITE3args *a = &c->q->args.write3;
    uint32_t n = MIN(r->count, TBBT_NFSREQ_WRITE_MAX3);

    a->file = fh3(c, 0);
    a->offset = r->offset;
    a->count = n;
    a->stable = TBBT_HAS(r, TBBT_F_STABLE) ? (stable_how)r->stable : UNSTABLE;
    a->data.data_len = n;
    a->data.data_val = write_pattern();
    return 0;
}

static int b3_create(struct bctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    CREATE3args *a = &c->q->args.create3;

    a->where = dirop3(c);
    a->how.mode = (createmode3)r->createmode;
    switch (r->createmode) {
    case UNCHECKED:
    case GUARDED:
        sattr3_of(&a->how.createhow3_u.obj_attributes, r);
        return 0;
    case EXCLUSIVE:
        put_be(a->how.createhow3_u.verf, r->createverf, NFS3_CREATEVERFSIZE);
        return 0;
    default:
        return TBBT_NFSREQ_UNSENDABLE;
    }
}

static int b3_mkdir(struct bctx *c)
{
    MKDIR3args *a = &c->q->args.mkdir3;

    a->where = dirop3(c);
    sattr3_of(&a->attributes, c->rec);
    return 0;
}

static int b3_symlink(struct bctx *c)
{
    SYMLINK3args *a = &c->q->args.symlink3;

    a->where = dirop3(c);
    sattr3_of(&a->symlink.symlink_attributes, c->rec);
    a->symlink.symlink_data = str_arg(&c->rec->target);
    return 0;
}

static int b3_mknod(struct bctx *c)
{
    const struct tbbt_trace_rec *r = c->rec;
    MKNOD3args *a = &c->q->args.mknod3;
    devicedata3 *dev = &a->what.mknoddata3_u.device;

    a->where = dirop3(c);
    a->what.type = (ftype3)r->ftype;
    switch (r->ftype) {
    case NF3CHR:
    case NF3BLK:
        sattr3_of(&dev->dev_attributes, r);
        dev->spec.specdata1 = (uint32)(r->rdev >> 32);
        dev->spec.specdata2 = (uint32)r->rdev;
        return 0;
    case NF3SOCK:
    case NF3FIFO:
        sattr3_of(&a->what.mknoddata3_u.pipe_attributes, r);
        return 0;
    default:
        return 0;   /* sent as traced: the server answers BADTYPE */
    }
}

static int b3_rename(struct bctx *c)
{
    RENAME3args *a = &c->q->args.rename3;

    a->from = dirop3(c);
    a->to = (diropargs3){ .dir = fh3(c, 1), .name = str_arg(&c->rec->name2) };
    return 0;
}

static int b3_link(struct bctx *c)
{
    LINK3args *a = &c->q->args.link3;

    a->file = fh3(c, 0);
    a->link = (diropargs3){ .dir = fh3(c, 1), .name = str_arg(&c->rec->name2) };
    return 0;
}

/* What READDIR and READDIRPLUS ask alike: the directory, where to start, the verifier. */
static void readdir3_from(struct bctx *c, nfs_fh3 *dir, cookie3 *cookie, cookieverf3 verf)
{
    const struct tbbt_trace_rec *r = c->rec;

    *dir = fh3(c, 0);
    *cookie = r->cookie;
    put_be(verf, TBBT_HAS(r, TBBT_F_COOKIEVERF) ? r->cookieverf : 0, NFS3_COOKIEVERFSIZE);
}

static int b3_readdir(struct bctx *c)
{
    READDIR3args *a = &c->q->args.readdir3;

    readdir3_from(c, &a->dir, &a->cookie, a->cookieverf);
    a->count = c->rec->count;
    return 0;
}

static int b3_readdirplus(struct bctx *c)
{
    READDIRPLUS3args *a = &c->q->args.readdirplus3;

    readdir3_from(c, &a->dir, &a->cookie, a->cookieverf);
    a->dircount = c->rec->dircount;
    a->maxcount = c->rec->maxcount;
    return 0;
}

/* ---- NFSv2 builders -------------------------------------------------------- */

static int dirop2(struct bctx *c, nfs2_diropargs *d, int slot, const struct tbbt_str *name)
{
    d->name = str_arg(name);
    return fh2(c, slot, d->dir);
}

/* GETATTR, READLINK, STATFS: a bare fhandle. */
static int b2_obj(struct bctx *c)
{
    return fh2(c, 0, c->q->args.fhandle2);
}

static int b2_setattr(struct bctx *c)
{
    sattr2_of(&c->q->args.sattr2.attributes, c->rec);
    return fh2(c, 0, c->q->args.sattr2.file);
}

/* LOOKUP, REMOVE, RMDIR. */
static int b2_dirop(struct bctx *c)
{
    return dirop2(c, &c->q->args.dirop2, 0, &c->rec->name);
}

static int b2_read(struct bctx *c)
{
    nfs2_readargs *a = &c->q->args.read2;

    a->offset = (u_int)c->rec->offset;
    a->count = c->rec->count;
    a->totalcount = c->rec->count;   /* unused (RFC 1094 2.2.7) */
    return fh2(c, 0, a->file);
}

/* beginoffset and totalcount are unused (RFC 1094 2.2.9); sent as Linux does. */
static int b2_write(struct bctx *c)
{
    nfs2_writeargs *a = &c->q->args.write2;
    uint32_t n = MIN(c->rec->count, TBBT_NFSREQ_WRITE_MAX2);

    a->beginoffset = (u_int)c->rec->offset;
    a->offset = (u_int)c->rec->offset;
    a->totalcount = n;
    a->data.data_len = n;
    a->data.data_val = write_pattern();
    return fh2(c, 0, a->file);
}

/* CREATE and MKDIR. */
static int b2_create(struct bctx *c)
{
    sattr2_of(&c->q->args.create2.attributes, c->rec);
    return dirop2(c, &c->q->args.create2.where, 0, &c->rec->name);
}

static int b2_rename(struct bctx *c)
{
    nfs2_renameargs *a = &c->q->args.rename2;
    int rc = dirop2(c, &a->from, 0, &c->rec->name);

    return rc ? rc : dirop2(c, &a->to, 1, &c->rec->name2);
}

static int b2_link(struct bctx *c)
{
    nfs2_linkargs *a = &c->q->args.link2;
    int rc = fh2(c, 0, a->from);

    return rc ? rc : dirop2(c, &a->to, 1, &c->rec->name2);
}

static int b2_symlink(struct bctx *c)
{
    nfs2_symlinkargs *a = &c->q->args.symlink2;

    a->to = str_arg(&c->rec->target);
    sattr2_of(&a->attributes, c->rec);
    return dirop2(c, &a->from, 0, &c->rec->name);
}

static int b2_readdir(struct bctx *c)
{
    nfs2_readdirargs *a = &c->q->args.readdir2;

    put_be(a->cookie, c->rec->cookie, NFS2_COOKIESIZE);
    a->count = c->rec->count;
    return fh2(c, 0, a->dir);
}

/* ---- procedure tables ------------------------------------------------------ */

/* The encoder of void arguments (NULL): writes nothing.  libtirpc's xdr_void takes no
 * arguments, so it cannot be cast to xdrproc_t cleanly. */
static bool_t encode_void(XDR *x, void *p)
{
    (void)x;
    (void)p;
    return TRUE;
}

/*
 * Result decoders that stop after what the player reads: the status and, on success,
 * the handle of the object found or made (the first member of LOOKUP3resok and of the
 * CREATE-like resoks, RFC 1813 3.3.3, 3.3.8-3.3.11).  The attributes and wcc data after
 * it are left undecoded (the RPC layer ignores a reply's trailing bytes): decoding two
 * fattr3 per LOOKUP was a tenth of the player's user time.  They are built from the
 * rpcgen routines, so xdr_free() releases what they allocated.
 */
static bool_t xdr_lookup3_fh(XDR *x, LOOKUP3res *r)
{
    if (!xdr_nfsstat3(x, &r->status))
        return FALSE;
    return r->status != NFS3_OK || (xdr_nfs_fh3(x, &r->LOOKUP3res_u.resok.object) &&
                                     xdr_post_op_attr(x, &r->LOOKUP3res_u.resok.obj_attributes));
}

#define MADE3_FH(name, type, member)                                                  \
    static bool_t name(XDR *x, type *r)                                                \
    {                                                                                  \
        if (!xdr_nfsstat3(x, &r->status))                                              \
            return FALSE;                                                              \
        return r->status != NFS3_OK || (xdr_post_op_fh3(x, &r->member.resok.obj) &&    \
                                         xdr_post_op_attr(x, &r->member.resok.obj_attributes)); \
    }

/*
 * READLINK and READ: the status and the object's attributes, which both arms of the
 * result start with; the link text and the data are left undecoded.
 */
static bool_t xdr_readlink3_attr(XDR *x, READLINK3res *r)
{
    return xdr_nfsstat3(x, &r->status) &&
           xdr_post_op_attr(x, &r->READLINK3res_u.resok.symlink_attributes);
}

static bool_t xdr_read3_attr(XDR *x, READ3res *r)
{
    return xdr_nfsstat3(x, &r->status) &&
           xdr_post_op_attr(x, &r->READ3res_u.resok.file_attributes);
}
MADE3_FH(xdr_create3_fh, CREATE3res, CREATE3res_u)
MADE3_FH(xdr_mkdir3_fh, MKDIR3res, MKDIR3res_u)
MADE3_FH(xdr_symlink3_fh, SYMLINK3res, SYMLINK3res_u)
MADE3_FH(xdr_mknod3_fh, MKNOD3res, MKNOD3res_u)

#define X(fn) ((xdrproc_t)(fn))
#define RES(fn, member) X(fn), sizeof(((union tbbt_nfsreq_res *)0)->member)
#define ATTRS(fn, member) RES(fn, member), true
#define NONE NULL, 0, false

/*
 * The procedure tables are made from the catalogue (proto/catalogue.def): a row's
 * call shape dcall names its builder (b3_##dcall, b2_##dcall), its argument type the
 * encoder, and its reply shape what the player decodes of the result (R3_ and R2_
 * below).  The fields each procedure needs are the catalogue's need column (fh as
 * the TBBT-ID, fh2 as id2; need_of()); beyond these: CREATE EXCLUSIVE needs
 * createverf, MKNOD CHR/BLK needs rdev.  Optional, with their defaults: sattr (set
 * nothing; SETATTR needs it), WRITE stable (UNSTABLE), readdir cookieverf (0).
 *
 * Decoders: every NFSv3 result the player reads the object's post-operation attributes
 * of (checked against the trace, tbbt_nfsreq_post_attr()), its new handle or its
 * directory positions.  Results of REMOVE, RMDIR and RENAME (directory attributes only)
 * are not decoded, nor those read only for the object's attributes (ATTRS) when the
 * record has none to check them against.
 */
#define b3_void NULL
#define b2_void NULL
#define R3_void(name, restype) NONE
#define R3_attrstat(name, restype) ATTRS(xdr_##restype, name##3)
#define R3_setattr R3_attrstat
#define R3_access R3_attrstat
#define R3_write R3_attrstat
#define R3_link R3_attrstat
#define R3_fsstat R3_attrstat
#define R3_fsinfo R3_attrstat
#define R3_pathconf R3_attrstat
#define R3_commit R3_attrstat
#define R3_readlink(name, restype) ATTRS(xdr_##name##3_attr, name##3)
#define R3_read R3_readlink
#define R3_lookup(name, restype) RES(xdr_##name##3_fh, name##3), false
#define R3_create R3_lookup
#define R3_remove R3_void
#define R3_rename R3_void
#define R3_readdir(name, restype) RES(xdr_##restype, name##3), false
#define R3_readdirplus R3_readdir
#define R2_void(name, restype) NONE
#define R2_attrstat R2_void
#define R2_stat R2_void
#define R2_readlink R2_void
#define R2_read R2_void
#define R2_statfs R2_void
#define R2_diropres(name, restype) RES(xdr_##restype, dirop2), false
#define R2_readdir(name, restype) RES(xdr_##restype, readdir2), false

/* void arguments (NULL) are written by encode_void; OBSOLETE rows get no encoder. */
#define XARGS(flags, dcall, argtype)                                                              \
    ((flags) & TBBT_PROTO_FL_OBSOLETE ? NULL : ARGS_##dcall(argtype))
#define ARGS_void(argtype) X(encode_void)
#define ARGS(argtype) X(xdr_##argtype)
#define ARGS_obj ARGS
#define ARGS_setattr ARGS
#define ARGS_dirop ARGS
#define ARGS_access ARGS
#define ARGS_read ARGS
#define ARGS_write ARGS
#define ARGS_create ARGS
#define ARGS_mkdir ARGS
#define ARGS_symlink ARGS
#define ARGS_mknod ARGS
#define ARGS_rename ARGS
#define ARGS_link ARGS
#define ARGS_readdir ARGS
#define ARGS_readdirplus ARGS

#define TBBT_PROTO_FL(x) TBBT_PROTO_FL_##x
#define TBBT_PROTO_PROC(key, num, name, kind, dcall, dreply, call, need, reply, flags, ns,    \
                        argtype, restype)                                                    \
    ROW_##key(num, name, dcall, dreply, flags, argtype, restype)
#define ROW(v, num, name, dcall, dreply, flags, argtype, restype)                                 \
    [num] = { b##v##_##dcall, XARGS(flags, dcall, argtype), R##v##_##dreply(name, restype) },
#define ROW3(...) ROW(3, __VA_ARGS__)
#define ROW2(...) ROW(2, __VA_ARGS__)
#define SKIP(...)

#define ROW_NFS3 ROW3
#define ROW_NFS2 SKIP
#define ROW_MNT1 SKIP
#define ROW_MNT3 SKIP
static const struct proc_desc procs3[TBBT_PROC_MAX] = {
#include "proto/catalogue.def"
};
#undef ROW_NFS3
#undef ROW_NFS2
#define ROW_NFS3 SKIP
#define ROW_NFS2 ROW2
static const struct proc_desc procs2[TBBT_PROC_MAX] = {
#include "proto/catalogue.def"
};
#undef TBBT_PROTO_PROC
#undef TBBT_PROTO_FL

/* The record's procedure, or NULL if it has nothing to replay; *vers set. */
static const struct proc_desc *proc_of(const struct tbbt_trace_rec *rec, uint32_t *vers)
{
    const struct proc_desc *d = NULL;

    if (rec->proc >= TBBT_PROC_MAX)
        return NULL;
    if (rec->prog == TBBT_PROG_NFS3) {
        d = &procs3[rec->proc];
        *vers = 3;
    } else if (rec->prog == TBBT_PROG_NFS2) {
        d = &procs2[rec->proc];
        *vers = 2;
    }
    return d && d->xargs ? d : NULL;
}

/* ---- building -------------------------------------------------------------- */

/* The catalogue's need column of rec's procedure, fh and fh2 as the TBBT-IDs id, id2. */
static uint64_t base_need(const struct tbbt_trace_rec *rec)
{
    const struct tbbt_proc_desc *p = tbbt_proc_desc(rec->prog, rec->proc);
    uint64_t n = p ? p->need : 0;
    uint64_t fhs = F(TBBT_F_FH) | F(TBBT_F_FH2);

    return (n & ~fhs) | ((n & F(TBBT_F_FH)) ? F(TBBT_F_ID) : 0) |
           ((n & F(TBBT_F_FH2)) ? F(TBBT_F_ID2) : 0);
}

/* Which handles rec's procedure needs: USE_ID | USE_ID2. */
static unsigned use_of(const struct tbbt_trace_rec *rec)
{
    uint64_t n = base_need(rec);

    return ((n & F(TBBT_F_ID)) ? USE_ID : 0) | ((n & F(TBBT_F_ID2)) ? USE_ID2 : 0);
}

/* base_need(), and fields needed depending on a value: CREATE EXCLUSIVE's verifier,
 * MKNOD CHR/BLK's rdev. */
static uint64_t need_of(const struct tbbt_trace_rec *rec, uint32_t vers)
{
    uint64_t need = base_need(rec);

    if (vers == 3 && rec->proc == NFSPROC3_CREATE && rec->createmode == EXCLUSIVE)
        need |= F(TBBT_F_CREATEVERF);
    if (vers == 3 && rec->proc == NFSPROC3_MKNOD &&
        (rec->ftype == NF3CHR || rec->ftype == NF3BLK))
        need |= F(TBBT_F_RDEV);
    return need;
}

/* MISSING or UNSENDABLE from the record alone, else 0. */
static int check_fields(const struct tbbt_trace_rec *rec, uint32_t vers)
{
    uint64_t need = need_of(rec, vers);
    unsigned use = use_of(rec);

    if ((rec->present & need) != need)
        return TBBT_NFSREQ_MISSING;
    if (((use & USE_ID) && rec->id == 0) || ((use & USE_ID2) && rec->id2 == 0))
        return TBBT_NFSREQ_MISSING;
    if (vers == 3 && rec->proc == NFSPROC3_CREATE && rec->createmode > EXCLUSIVE)
        return TBBT_NFSREQ_UNSENDABLE;
    if ((need & F(TBBT_F_NAME)) && !str_ok(&rec->name, NFS3_MAXNAMLEN))
        return TBBT_NFSREQ_UNSENDABLE;
    if ((need & F(TBBT_F_NAME2)) && !str_ok(&rec->name2, NFS3_MAXNAMLEN))
        return TBBT_NFSREQ_UNSENDABLE;
    if ((need & F(TBBT_F_TARGET)) && !str_ok(&rec->target, NFS3_MAXPATHLEN))
        return TBBT_NFSREQ_UNSENDABLE;
    if (vers == 2 && (need & F(TBBT_F_OFFSET)) && rec->offset > UINT32_MAX)
        return TBBT_NFSREQ_UNSENDABLE;
    return 0;
}

/* Copies the KNOWN handle of id into q->fh[slot]; NO_HANDLE (and *missing) if unknown. */
static int take_handle(struct tbbt_nfsreq *q, int slot, const struct tbbt_handles *h,
                       uint64_t id, uint64_t *missing)
{
    const struct tbbt_handle *k = tbbt_handles_known(h, id);

    if (!k || k->len == 0 || k->len > TBBT_HANDLE_MAX) {
        if (missing)
            *missing = id;
        return TBBT_NFSREQ_NO_HANDLE;
    }
    memcpy(q->fh[slot], k->data, k->len);
    q->fh_len[slot] = k->len;
    return 0;
}

int tbbt_nfsreq_build(struct tbbt_nfsreq *q, const struct tbbt_trace_rec *rec,
                      const struct tbbt_handles *h, uint64_t *missing)
{
    struct bctx c = { .q = q, .rec = rec };
    const struct proc_desc *d;
    uint32_t vers = 0;
    int rc;

    d = proc_of(rec, &vers);
    if (!d)
        return TBBT_NFSREQ_NOT_NFS;
    rc = check_fields(rec, vers);
    if (rc)
        return rc;
    memset(q->fh_len, 0, sizeof(q->fh_len));
    if ((use_of(rec) & USE_ID) && (rc = take_handle(q, 0, h, rec->id, missing)) != 0)
        return rc;
    if ((use_of(rec) & USE_ID2) && (rc = take_handle(q, 1, h, rec->id2, missing)) != 0)
        return rc;
    memset(&q->args, 0, sizeof(q->args));
    if (d->build && (rc = d->build(&c)) != 0)
        return rc;
    q->prog = TBBT_NFSREQ_PROG;
    q->vers = vers;
    q->proc = rec->proc;
    q->xargs = d->xargs;
    q->xres = d->xres;
    q->res_size = d->res_size;
    if (d->attrs_only && !TBBT_HAS(rec, TBBT_F_OBJ_ATTR)) {
        q->xres = NULL;     /* nothing to check the result against: its status will do */
        q->res_size = 0;
    }
    return 0;
}

int tbbt_nfsreq_needs(const struct tbbt_trace_rec *rec, uint64_t ids[2])
{
    uint32_t vers = 0;
    const struct proc_desc *d = proc_of(rec, &vers);
    int n = 0;

    if (!d)
        return 0;
    if ((use_of(rec) & USE_ID) && TBBT_HAS(rec, TBBT_F_ID) && rec->id != 0)
        ids[n++] = rec->id;
    if ((use_of(rec) & USE_ID2) && TBBT_HAS(rec, TBBT_F_ID2) && rec->id2 != 0)
        ids[n++] = rec->id2;
    return n;
}

void tbbt_nfsreq_set_cookie(struct tbbt_nfsreq *q, uint64_t cookie, uint64_t verf)
{
    if (q->vers == 3 && q->proc == NFSPROC3_READDIR) {
        q->args.readdir3.cookie = cookie;
        put_be(q->args.readdir3.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    } else if (q->vers == 3 && q->proc == NFSPROC3_READDIRPLUS) {
        q->args.readdirplus3.cookie = cookie;
        put_be(q->args.readdirplus3.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    } else if (q->vers == 2 && q->proc == NFSPROC_READDIR) {
        put_be(q->args.readdir2.cookie, cookie, NFS2_COOKIESIZE);
    }
}

/* ---- results --------------------------------------------------------------- */

static uint32_t copy_fh(uint8_t fh[TBBT_HANDLE_MAX], const char *p, u_int len)
{
    if (len == 0 || len > TBBT_HANDLE_MAX)
        return 0;
    memcpy(fh, p, len);
    return len;
}

/* post_op_fh3 of a v3 CREATE-like resok. */
static uint32_t copy_post_fh(uint8_t fh[TBBT_HANDLE_MAX], const post_op_fh3 *p)
{
    const nfs_fh3 *h = &p->post_op_fh3_u.handle;

    if (!p->handle_follows)
        return 0;
    return copy_fh(fh, h->data.data_val, h->data.data_len);
}

static uint32_t new_fh3(uint32_t proc, const union tbbt_nfsreq_res *r, uint8_t *fh)
{
    switch (proc) {
    case NFSPROC3_LOOKUP:
        if (r->lookup3.status != NFS3_OK)
            return 0;
        return copy_fh(fh, r->lookup3.LOOKUP3res_u.resok.object.data.data_val,
                       r->lookup3.LOOKUP3res_u.resok.object.data.data_len);
    case NFSPROC3_CREATE:
        return r->create3.status == NFS3_OK ? copy_post_fh(fh, &r->create3.CREATE3res_u.resok.obj)
                                            : 0;
    case NFSPROC3_MKDIR:
        return r->mkdir3.status == NFS3_OK ? copy_post_fh(fh, &r->mkdir3.MKDIR3res_u.resok.obj)
                                           : 0;
    case NFSPROC3_SYMLINK:
        return r->symlink3.status == NFS3_OK
                   ? copy_post_fh(fh, &r->symlink3.SYMLINK3res_u.resok.obj)
                   : 0;
    case NFSPROC3_MKNOD:
        return r->mknod3.status == NFS3_OK ? copy_post_fh(fh, &r->mknod3.MKNOD3res_u.resok.obj)
                                           : 0;
    default:
        return 0;
    }
}

xdrproc_t tbbt_nfsreq_lookup_xres(uint32_t vers, size_t *res_size)
{
    const struct proc_desc *d = vers == 3 ? &procs3[NFSPROC3_LOOKUP] : &procs2[NFSPROC_LOOKUP];
    *res_size = d->res_size;
    return d->xres;
}

uint32_t tbbt_nfsreq_new_fh(uint32_t vers, uint32_t proc, const union tbbt_nfsreq_res *res,
                            uint8_t fh[TBBT_HANDLE_MAX])
{
    if (vers == 3)
        return new_fh3(proc, res, fh);
    if (vers != 2 || (proc != NFSPROC_LOOKUP && proc != NFSPROC_CREATE && proc != NFSPROC_MKDIR))
        return 0;
    if (res->dirop2.status != NFS_OK)
        return 0;
    return copy_fh(fh, res->dirop2.nfs2_diropres_u.diropok.file, NFS2_FHSIZE);
}

/* What READDIR3resok and READDIRPLUS3resok end with alike: the verifier, EOF. */
static void listing3_end(struct tbbt_nfsreq_listing *l, const char *verf, bool_t eof)
{
    l->verf = get_be(verf, NFS3_COOKIEVERFSIZE);
    l->eof = eof != 0;
}

bool tbbt_nfsreq_readdir(uint32_t vers, uint32_t proc, const union tbbt_nfsreq_res *res,
                         struct tbbt_nfsreq_listing *l)
{
    memset(l, 0, sizeof(*l));
    if (vers == 3 && proc == NFSPROC3_READDIR && res->readdir3.status == NFS3_OK) {
        const READDIR3resok *ok = &res->readdir3.READDIR3res_u.resok;
        for (const entry3 *e = ok->reply.entries; e; e = e->nextentry, l->n++)
            l->last_cookie = e->cookie;
        listing3_end(l, ok->cookieverf, ok->reply.eof);
    } else if (vers == 3 && proc == NFSPROC3_READDIRPLUS && res->readdirplus3.status == NFS3_OK) {
        const READDIRPLUS3resok *ok = &res->readdirplus3.READDIRPLUS3res_u.resok;
        for (const entryplus3 *e = ok->reply.entries; e; e = e->nextentry, l->n++)
            l->last_cookie = e->cookie;
        listing3_end(l, ok->cookieverf, ok->reply.eof);
    } else if (vers == 2 && proc == NFSPROC_READDIR && res->readdir2.status == NFS_OK) {
        const nfs2_readdirok *ok = &res->readdir2.nfs2_readdirres_u.readdirok;
        for (const nfs2_entry *e = ok->entries; e; e = e->nextentry, l->n++)
            l->last_cookie = get_be(e->cookie, NFS2_COOKIESIZE);
        l->eof = ok->eof != 0;
    } else {
        return false;
    }
    return true;
}

/* The object's post-operation attributes of a decoded NFSv3 result, or NULL. */
static const post_op_attr *post_attr3(uint32_t proc, const union tbbt_nfsreq_res *r)
{
    switch (proc) {
    case NFSPROC3_SETATTR: return &r->setattr3.SETATTR3res_u.resok.obj_wcc.after;
    case NFSPROC3_LOOKUP:
        return r->lookup3.status == NFS3_OK ? &r->lookup3.LOOKUP3res_u.resok.obj_attributes
                                            : NULL;
    case NFSPROC3_ACCESS: return &r->access3.ACCESS3res_u.resok.obj_attributes;
    case NFSPROC3_READLINK: return &r->readlink3.READLINK3res_u.resok.symlink_attributes;
    case NFSPROC3_READ: return &r->read3.READ3res_u.resok.file_attributes;
    case NFSPROC3_WRITE: return &r->write3.WRITE3res_u.resok.file_wcc.after;
    case NFSPROC3_CREATE:
        return r->create3.status == NFS3_OK ? &r->create3.CREATE3res_u.resok.obj_attributes
                                            : NULL;
    case NFSPROC3_MKDIR:
        return r->mkdir3.status == NFS3_OK ? &r->mkdir3.MKDIR3res_u.resok.obj_attributes : NULL;
    case NFSPROC3_SYMLINK:
        return r->symlink3.status == NFS3_OK
                   ? &r->symlink3.SYMLINK3res_u.resok.obj_attributes : NULL;
    case NFSPROC3_MKNOD:
        return r->mknod3.status == NFS3_OK ? &r->mknod3.MKNOD3res_u.resok.obj_attributes : NULL;
    case NFSPROC3_LINK: return &r->link3.LINK3res_u.resok.file_attributes;
    case NFSPROC3_FSSTAT: return &r->fsstat3.FSSTAT3res_u.resok.obj_attributes;
    case NFSPROC3_FSINFO: return &r->fsinfo3.FSINFO3res_u.resok.obj_attributes;
    case NFSPROC3_PATHCONF: return &r->pathconf3.PATHCONF3res_u.resok.obj_attributes;
    case NFSPROC3_COMMIT: return &r->commit3.COMMIT3res_u.resok.file_wcc.after;
    default: return NULL;
    }
}

static void fattr_of(const fattr3 *a, struct tbbt_fattr *out)
{
    memset(out, 0, sizeof(*out));
    TBBT_PROTO_FATTR_COPY(out, a);
    out->used = a->used;
    out->rdev = tbbt_proto_specdata(&a->rdev);
}

bool tbbt_nfsreq_post_attr(uint32_t vers, uint32_t proc, const union tbbt_nfsreq_res *res,
                           struct tbbt_fattr *out)
{
    if (vers != 3)
        return false;
    if (proc == NFSPROC3_GETATTR) {
        if (res->getattr3.status != NFS3_OK)
            return false;
        fattr_of(&res->getattr3.GETATTR3res_u.resok.obj_attributes, out);
        return true;
    }
    const post_op_attr *p = post_attr3(proc, res);
    if (!p || !p->attributes_follow)
        return false;
    fattr_of(&p->post_op_attr_u.attributes, out);
    return true;
}

