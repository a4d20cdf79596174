/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the NFS/MOUNT argument and result decoders (extract/decode.h):
 * every NFSv3 procedure, a selection of NFSv2 procedures and every MOUNT v1/v3
 * procedure, truncation at every byte of a WRITE call and a READDIRPLUS
 * reply, and malformed input (absurd lengths, over-long handles, bad union
 * discriminants, bad booleans in entry lists).  RFC 1094, RFC 1813.
 *
 * Messages are built by XDR-encoding rpcgen structures (XDR_ENCODE), and
 * every decode runs twice, on an exact-size heap copy (so ASan catches a read
 * past the end) and on an unaligned copy, which must give the same record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "extract/decode.h"
#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "util/util.h"

#define ENC_MAX 65536

struct fx {
    struct tbbt_fhtab *fht;
    struct tbbt_trace_rec rec;
    XDR x;              /* encode stream of enc_begin/enc_put */
    u_int len;          /* bytes encoded */
    uint8_t enc[ENC_MAX];
};

typedef int (*dec_fn)(struct tbbt_trace_rec *, const uint8_t *, size_t, bool,
                      struct tbbt_fhtab *);

static int setup(void **state)
{
    struct fx *f = g_new0(struct fx, 1);

    f->fht = tbbt_fhtab_new();
    tbbt_trace_rec_init(&f->rec);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    tbbt_trace_rec_fini(&f->rec);
    tbbt_fhtab_free(f->fht);
    g_free(f);
    return 0;
}

/* ---- encoding -------------------------------------------------------------- */

static void enc_begin(struct fx *f)
{
    xdrmem_create(&f->x, (char *)f->enc, ENC_MAX, XDR_ENCODE);
    f->len = 0;
}

/* Appends one item; returns the message length so far. */
static u_int enc_put(struct fx *f, xdrproc_t proc, void *obj)
{
    assert_true(proc(&f->x, obj));
    f->len = xdr_getpos(&f->x);
    return f->len;
}

#define ENC(f, fn, obj) (enc_begin(f), enc_put((f), (xdrproc_t)(fn), (obj)))
#define PUT(f, fn, obj) enc_put((f), (xdrproc_t)(fn), (obj))

static u_int put_u32(struct fx *f, u_int v)
{
    return PUT(f, xdr_u_int, &v);
}

/* ---- decoding -------------------------------------------------------------- */

/*
 * Decodes the first len encoded bytes into f->rec (cleared first), from an
 * exact-size copy and from an unaligned copy; both must agree.
 */
static int run_dec(struct fx *f, dec_fn fn, int prog, int proc, u_int len, bool trunc)
{
    uint8_t *exact = g_malloc(len ? len : 1);
    uint8_t *unal = g_malloc(len + 1);
    struct tbbt_trace_rec r2;
    int ret, ret2;

    memcpy(exact, f->enc, len);
    memcpy(unal + 1, f->enc, len);
    tbbt_trace_rec_init(&r2);
    r2.prog = prog;
    r2.proc = proc;
    ret2 = fn(&r2, unal + 1, len, trunc, f->fht);
    tbbt_trace_rec_clear(&f->rec);
    f->rec.prog = prog;
    f->rec.proc = proc;
    ret = fn(&f->rec, exact, len, trunc, f->fht);
    assert_int_equal(ret, ret2);
    assert_int_equal(f->rec.present, r2.present);
    assert_int_equal(f->rec.flags, r2.flags);
    assert_int_equal(f->rec.n_entries, r2.n_entries);
    tbbt_trace_rec_fini(&r2);
    g_free(exact);
    g_free(unal);
    return ret;
}

static int dcall(struct fx *f, int prog, int proc)
{
    return run_dec(f, tbbt__decode_call, prog, proc, f->len, false);
}

static int dreply(struct fx *f, int prog, int proc)
{
    return run_dec(f, tbbt__decode_reply, prog, proc, f->len, false);
}

#define HAS(f, fld) TBBT_HAS(&(f)->rec, fld)

/* Only the listed fields are present. */
static void only(struct fx *f, uint64_t fields)
{
    assert_int_equal(f->rec.present, fields);
}

#define B(fld) ((uint64_t)1 << (fld))

/* ---- values ---------------------------------------------------------------- */

static const char FH_A[] = "handle-A-0123456789";          /* 19 bytes: padded */
static const char FH_B[] = "handle-B-01234567890123456789"; /* 29 bytes */
static const char FH_C[] = "handle-C-0123456789012345678901234567890123456789012345678901234";

static nfs_fh3 fh3(const char *s)
{
    nfs_fh3 h = { .data = { .data_len = (u_int)strlen(s), .data_val = (char *)s } };
    return h;
}

static void chk_fh(struct fx *f, uint32_t ref, const void *bytes, uint32_t len)
{
    uint32_t n = 0;
    const uint8_t *p = tbbt_fhtab_get(f->fht, ref, &n);

    assert_non_null(p);
    assert_int_equal(n, len);
    assert_memory_equal(p, bytes, len);
}

static void chk_fh3(struct fx *f, uint32_t ref, const char *s)
{
    chk_fh(f, ref, s, (uint32_t)strlen(s));
}

static void chk_str(const struct tbbt_str *s, const char *p, uint32_t len)
{
    assert_int_equal(s->len, len);
    assert_memory_equal(s->p, p, len);
}

static void chk_cstr(const struct tbbt_str *s, const char *p)
{
    chk_str(s, p, (uint32_t)strlen(p));
}

static nfstime3 t3(uint32_t s, uint32_t ns)
{
    nfstime3 t = { s, ns };
    return t;
}

static uint64_t ns3(nfstime3 t)
{
    return (uint64_t)t.seconds * 1000000000u + t.nseconds;
}

static fattr3 mk_fattr(uint32_t seed)
{
    fattr3 a = {
        .type = NF3REG + seed % 7,
        .mode = 0640 + seed,
        .nlink = 1 + seed,
        .uid = 1000 + seed,
        .gid = 2000 + seed,
        .size = 0x100000000ull * seed + 77,
        .used = 4096ull * (seed + 1),
        .rdev = { 8 + seed, 1 + seed },
        .fsid = 0xabcdef0000ull + seed,
        .fileid = 1000000ull + seed,
        .atime = t3(1600000000u + seed, 111111111),
        .mtime = t3(1600000100u + seed, 222222222),
        .ctime = t3(1600000200u + seed, 999999999),
    };
    return a;
}

static void chk_fattr(const struct tbbt_fattr *o, const fattr3 *a)
{
    assert_int_equal(o->type, a->type);
    assert_int_equal(o->mode, a->mode);
    assert_int_equal(o->nlink, a->nlink);
    assert_int_equal(o->uid, a->uid);
    assert_int_equal(o->gid, a->gid);
    assert_int_equal(o->size, a->size);
    assert_int_equal(o->used, a->used);
    assert_int_equal(o->rdev, (uint64_t)a->rdev.specdata1 << 32 | a->rdev.specdata2);
    assert_int_equal(o->fsid, a->fsid);
    assert_int_equal(o->fileid, a->fileid);
    assert_int_equal(o->atime_ns, ns3(a->atime));
    assert_int_equal(o->mtime_ns, ns3(a->mtime));
    assert_int_equal(o->ctime_ns, ns3(a->ctime));
}

static post_op_attr mk_post(uint32_t seed)
{
    post_op_attr p = { .attributes_follow = TRUE, .post_op_attr_u.attributes = mk_fattr(seed) };
    return p;
}

static wcc_data mk_wcc(uint32_t seed)
{
    wcc_data w = {
        .before = { .attributes_follow = TRUE,
                    .pre_op_attr_u.attributes = { 4096 + seed, t3(1500000000u + seed, 5),
                                                  t3(1500000001u + seed, 6) } },
        .after = mk_post(seed),
    };
    return w;
}

static void chk_wcc(const struct tbbt_wcc_pre *pre, const struct tbbt_fattr *post,
                    const wcc_data *w)
{
    const wcc_attr *b = &w->before.pre_op_attr_u.attributes;

    assert_int_equal(pre->size, b->size);
    assert_int_equal(pre->mtime_ns, ns3(b->mtime));
    assert_int_equal(pre->ctime_ns, ns3(b->ctime));
    chk_fattr(post, &w->after.post_op_attr_u.attributes);
}

/* mode set, uid not set, gid set, size set, atime server time, mtime client time. */
static sattr3 mk_sattr(void)
{
    sattr3 s = {
        .mode = { TRUE, .set_mode3_u.mode = 0755 },
        .uid = { FALSE, .set_uid3_u.uid = 0 },
        .gid = { TRUE, .set_gid3_u.gid = 42 },
        .size = { TRUE, .set_size3_u.size = 0x123456789ull },
        .atime = { SET_TO_SERVER_TIME, .set_atime_u.atime = { 0, 0 } },
        .mtime = { SET_TO_CLIENT_TIME, .set_mtime_u.mtime = { 1700000000u, 42 } },
    };
    return s;
}

static void chk_sattr(const struct tbbt_sattr *o)
{
    assert_int_equal(o->mask, TBBT_SA_MODE | TBBT_SA_GID | TBBT_SA_SIZE | TBBT_SA_ATIME_SERVER |
                                  TBBT_SA_MTIME);
    assert_int_equal(o->mode, 0755);
    assert_int_equal(o->gid, 42);
    assert_int_equal(o->size, 0x123456789ull);
    assert_int_equal(o->mtime_ns, 1700000000ull * 1000000000u + 42);
}

static const char VERF[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
#define VERF_U64 0x0102030405060708ull

/* ---- NFSv3 ----------------------------------------------------------------- */

#define V3 TBBT_PROG_NFS3

static void test_nfs3_null(void **state)
{
    struct fx *f = *state;

    f->len = 0;
    assert_int_equal(dcall(f, V3, NFSPROC3_NULL), 0);
    assert_int_equal(dreply(f, V3, NFSPROC3_NULL), 0);
    only(f, 0);
    assert_int_equal(f->rec.flags, 0);
}

static void test_nfs3_getattr(void **state)
{
    struct fx *f = *state;
    GETATTR3args a = { fh3(FH_A) };
    GETATTR3res r = { NFS3_OK, .GETATTR3res_u.resok.obj_attributes = mk_fattr(1) };

    ENC(f, xdr_GETATTR3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_GETATTR), 0);
    only(f, B(TBBT_F_FH));
    chk_fh3(f, f->rec.fh, FH_A);

    ENC(f, xdr_GETATTR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_GETATTR), 0);
    assert_true(f->rec.flags & TBBT_RF_STATUS);
    assert_int_equal(f->rec.status, NFS3_OK);
    only(f, B(TBBT_F_OBJ_ATTR));
    chk_fattr(&f->rec.obj_attr, &r.GETATTR3res_u.resok.obj_attributes);

    r.status = NFS3ERR_STALE;
    ENC(f, xdr_GETATTR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_GETATTR), 0);
    assert_int_equal(f->rec.status, NFS3ERR_STALE);
    only(f, 0);
}

static void test_nfs3_setattr(void **state)
{
    struct fx *f = *state;
    SETATTR3args a = { fh3(FH_A), mk_sattr(), { TRUE, .sattrguard3_u.obj_ctime = t3(7, 8) } };
    SETATTR3res r = { NFS3_OK, .SETATTR3res_u.resok.obj_wcc = mk_wcc(2) };

    ENC(f, xdr_SETATTR3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_SETATTR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_SATTR) | B(TBBT_F_GUARD));
    chk_fh3(f, f->rec.fh, FH_A);
    chk_sattr(&f->rec.sattr);
    assert_int_equal(f->rec.guard_ns, 7000000008ull);

    a.guard.check = FALSE;
    ENC(f, xdr_SETATTR3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_SETATTR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_SATTR));

    ENC(f, xdr_SETATTR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_SETATTR), 0);
    only(f, B(TBBT_F_OBJ_PRE) | B(TBBT_F_OBJ_ATTR));
    chk_wcc(&f->rec.obj_pre, &f->rec.obj_attr, &r.SETATTR3res_u.resok.obj_wcc);

    /* resfail: wcc with no before attributes */
    r.status = NFS3ERR_PERM;
    r.SETATTR3res_u.resfail.obj_wcc.before.attributes_follow = FALSE;
    ENC(f, xdr_SETATTR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_SETATTR), 0);
    assert_int_equal(f->rec.status, NFS3ERR_PERM);
    only(f, B(TBBT_F_OBJ_ATTR));
}

static void test_nfs3_lookup(void **state)
{
    struct fx *f = *state;
    LOOKUP3args a = { { fh3(FH_A), "name.txt" } };
    LOOKUP3res r = { NFS3_OK, .LOOKUP3res_u.resok = { fh3(FH_B), mk_post(3), mk_post(4) } };

    ENC(f, xdr_LOOKUP3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_LOOKUP), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));
    chk_fh3(f, f->rec.fh, FH_A);
    chk_cstr(&f->rec.name, "name.txt");

    ENC(f, xdr_LOOKUP3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_LOOKUP), 0);
    only(f, B(TBBT_F_NEW_FH) | B(TBBT_F_OBJ_ATTR) | B(TBBT_F_DIR_ATTR));
    chk_fh3(f, f->rec.new_fh, FH_B);
    chk_fattr(&f->rec.obj_attr, &r.LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes);
    chk_fattr(&f->rec.dir_attr, &r.LOOKUP3res_u.resok.dir_attributes.post_op_attr_u.attributes);

    r.status = NFS3ERR_NOENT;
    r.LOOKUP3res_u.resfail.dir_attributes = mk_post(5);
    ENC(f, xdr_LOOKUP3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_LOOKUP), 0);
    assert_int_equal(f->rec.status, NFS3ERR_NOENT);
    only(f, B(TBBT_F_DIR_ATTR));
    chk_fattr(&f->rec.dir_attr, &r.LOOKUP3res_u.resfail.dir_attributes.post_op_attr_u.attributes);
}

static void test_nfs3_access(void **state)
{
    struct fx *f = *state;
    ACCESS3args a = { fh3(FH_A), ACCESS3_READ | ACCESS3_LOOKUP };
    ACCESS3res r = { NFS3_OK, .ACCESS3res_u.resok = { mk_post(6), ACCESS3_READ } };

    ENC(f, xdr_ACCESS3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_ACCESS), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_ACCESS));
    assert_int_equal(f->rec.access, ACCESS3_READ | ACCESS3_LOOKUP);

    ENC(f, xdr_ACCESS3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_ACCESS), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_ACCESS_RES));
    assert_int_equal(f->rec.access_res, ACCESS3_READ);

    r.status = NFS3ERR_ACCES;
    r.ACCESS3res_u.resfail.obj_attributes.attributes_follow = FALSE;
    ENC(f, xdr_ACCESS3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_ACCESS), 0);
    only(f, 0);
    assert_int_equal(f->rec.status, NFS3ERR_ACCES);
}

static void test_nfs3_readlink(void **state)
{
    struct fx *f = *state;
    READLINK3args a = { fh3(FH_C) };
    READLINK3res r = { NFS3_OK, .READLINK3res_u.resok = { mk_post(7), "../some/where" } };

    ENC(f, xdr_READLINK3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_READLINK), 0);
    only(f, B(TBBT_F_FH));
    chk_fh3(f, f->rec.fh, FH_C);

    ENC(f, xdr_READLINK3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READLINK), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_TARGET));
    chk_cstr(&f->rec.target, "../some/where");

    r.status = NFS3ERR_INVAL;
    ENC(f, xdr_READLINK3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READLINK), 0);
    only(f, B(TBBT_F_OBJ_ATTR));
}

static void test_nfs3_read(void **state)
{
    struct fx *f = *state;
    char data[101];
    READ3args a = { fh3(FH_A), 0x1122334455ull, 8192 };
    READ3res r = { NFS3_OK, .READ3res_u.resok = { mk_post(8), 101, TRUE, { 101, data } } };

    memset(data, 'x', sizeof(data));
    ENC(f, xdr_READ3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_READ), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT));
    assert_int_equal(f->rec.offset, 0x1122334455ull);
    assert_int_equal(f->rec.count, 8192);

    ENC(f, xdr_READ3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READ), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_RES_COUNT) | B(TBBT_F_EOF));
    assert_int_equal(f->rec.res_count, 101);
    assert_int_equal(f->rec.eof, 1);

    /* The data cut by the snap length: a truncated reply that keeps its fields. */
    assert_int_equal(run_dec(f, tbbt__decode_reply, V3, NFSPROC3_READ, f->len - 50, true),
                     TBBT_E_TRUNC);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_RES_COUNT) | B(TBBT_F_EOF));
    assert_true(f->rec.flags & TBBT_RF_REPLY_TRUNC);

    r.status = NFS3ERR_IO;
    ENC(f, xdr_READ3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READ), 0);
    only(f, B(TBBT_F_OBJ_ATTR));
}

static void test_nfs3_write(void **state)
{
    struct fx *f = *state;
    char data[37];
    WRITE3args a = { fh3(FH_B), 1ull << 40, 37, DATA_SYNC, { 37, data } };
    WRITE3res r = { NFS3_OK, .WRITE3res_u.resok = { mk_wcc(9), 37, FILE_SYNC, { 0 } } };

    memset(data, 'w', sizeof(data));
    memcpy(r.WRITE3res_u.resok.verf, VERF, 8);
    ENC(f, xdr_WRITE3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_WRITE), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT) | B(TBBT_F_STABLE));
    chk_fh3(f, f->rec.fh, FH_B);
    assert_int_equal(f->rec.offset, 1ull << 40);
    assert_int_equal(f->rec.count, 37);
    assert_int_equal(f->rec.stable, DATA_SYNC);

    ENC(f, xdr_WRITE3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_WRITE), 0);
    only(f, B(TBBT_F_OBJ_PRE) | B(TBBT_F_OBJ_ATTR) | B(TBBT_F_RES_COUNT) | B(TBBT_F_COMMITTED) |
                B(TBBT_F_WRITEVERF));
    chk_wcc(&f->rec.obj_pre, &f->rec.obj_attr, &r.WRITE3res_u.resok.file_wcc);
    assert_int_equal(f->rec.res_count, 37);
    assert_int_equal(f->rec.committed, FILE_SYNC);
    assert_int_equal(f->rec.writeverf, VERF_U64);

    r.status = NFS3ERR_NOSPC;
    ENC(f, xdr_WRITE3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_WRITE), 0);
    only(f, B(TBBT_F_OBJ_PRE) | B(TBBT_F_OBJ_ATTR));
}

static void chk_create_reply(struct fx *f, int proc)
{
    CREATE3res r = { NFS3_OK, .CREATE3res_u.resok = { { TRUE, .post_op_fh3_u.handle = fh3(FH_C) },
                                                      mk_post(10), mk_wcc(11) } };

    /* CREATE3res, MKDIR3res, SYMLINK3res and MKNOD3res have the same shape. */
    ENC(f, xdr_CREATE3res, &r);
    assert_int_equal(dreply(f, V3, proc), 0);
    only(f, B(TBBT_F_NEW_FH) | B(TBBT_F_OBJ_ATTR) | B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR));
    chk_fh3(f, f->rec.new_fh, FH_C);
    chk_fattr(&f->rec.obj_attr, &r.CREATE3res_u.resok.obj_attributes.post_op_attr_u.attributes);
    chk_wcc(&f->rec.dir_pre, &f->rec.dir_attr, &r.CREATE3res_u.resok.dir_wcc);

    r.CREATE3res_u.resok.obj.handle_follows = FALSE;
    ENC(f, xdr_CREATE3res, &r);
    assert_int_equal(dreply(f, V3, proc), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR));

    r.status = NFS3ERR_EXIST;
    r.CREATE3res_u.resfail.dir_wcc = mk_wcc(12);
    ENC(f, xdr_CREATE3res, &r);
    assert_int_equal(dreply(f, V3, proc), 0);
    assert_int_equal(f->rec.status, NFS3ERR_EXIST);
    only(f, B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR));
    chk_wcc(&f->rec.dir_pre, &f->rec.dir_attr, &r.CREATE3res_u.resfail.dir_wcc);
}

static void test_nfs3_create(void **state)
{
    struct fx *f = *state;
    CREATE3args a = { { fh3(FH_A), "new" },
                      { GUARDED, .createhow3_u.obj_attributes = mk_sattr() } };

    ENC(f, xdr_CREATE3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_CREATE), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_CREATEMODE) | B(TBBT_F_SATTR));
    assert_int_equal(f->rec.createmode, GUARDED);
    chk_sattr(&f->rec.sattr);

    a.how.mode = EXCLUSIVE;
    memcpy(a.how.createhow3_u.verf, VERF, 8);
    ENC(f, xdr_CREATE3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_CREATE), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_CREATEMODE) | B(TBBT_F_CREATEVERF));
    assert_int_equal(f->rec.createmode, EXCLUSIVE);
    assert_int_equal(f->rec.createverf, VERF_U64);

    chk_create_reply(f, NFSPROC3_CREATE);
}

static void test_nfs3_mkdir(void **state)
{
    struct fx *f = *state;
    MKDIR3args a = { { fh3(FH_A), "dir" }, mk_sattr() };

    ENC(f, xdr_MKDIR3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_MKDIR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_SATTR));
    chk_cstr(&f->rec.name, "dir");
    chk_sattr(&f->rec.sattr);
    chk_create_reply(f, NFSPROC3_MKDIR);
}

static void test_nfs3_symlink(void **state)
{
    struct fx *f = *state;
    SYMLINK3args a = { { fh3(FH_A), "link" }, { mk_sattr(), "/target/path" } };

    ENC(f, xdr_SYMLINK3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_SYMLINK), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_SATTR) | B(TBBT_F_TARGET));
    chk_cstr(&f->rec.target, "/target/path");
    chk_create_reply(f, NFSPROC3_SYMLINK);
}

static void test_nfs3_mknod(void **state)
{
    struct fx *f = *state;
    MKNOD3args a = { { fh3(FH_A), "dev" },
                     { NF3CHR, .mknoddata3_u.device = { mk_sattr(), { 4, 64 } } } };

    ENC(f, xdr_MKNOD3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_MKNOD), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_FTYPE) | B(TBBT_F_SATTR) | B(TBBT_F_RDEV));
    assert_int_equal(f->rec.ftype, NF3CHR);
    assert_int_equal(f->rec.rdev, 4ull << 32 | 64);
    chk_sattr(&f->rec.sattr);

    a.what.type = NF3FIFO;
    a.what.mknoddata3_u.pipe_attributes = mk_sattr();
    ENC(f, xdr_MKNOD3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_MKNOD), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_FTYPE) | B(TBBT_F_SATTR));
    assert_int_equal(f->rec.ftype, NF3FIFO);

    a.what.type = NF3REG;   /* default: void */
    ENC(f, xdr_MKNOD3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_MKNOD), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_FTYPE));
    chk_create_reply(f, NFSPROC3_MKNOD);
}

static void chk_remove(struct fx *f, int proc)
{
    REMOVE3args a = { { fh3(FH_B), "victim" } };
    REMOVE3res r = { NFS3_OK, .REMOVE3res_u.resok.dir_wcc = mk_wcc(13) };

    ENC(f, xdr_REMOVE3args, &a);
    assert_int_equal(dcall(f, V3, proc), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));
    chk_fh3(f, f->rec.fh, FH_B);
    chk_cstr(&f->rec.name, "victim");

    ENC(f, xdr_REMOVE3res, &r);
    assert_int_equal(dreply(f, V3, proc), 0);
    only(f, B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR));
    chk_wcc(&f->rec.dir_pre, &f->rec.dir_attr, &r.REMOVE3res_u.resok.dir_wcc);

    r.status = NFS3ERR_NOTEMPTY;
    ENC(f, xdr_REMOVE3res, &r);
    assert_int_equal(dreply(f, V3, proc), 0);
    assert_int_equal(f->rec.status, NFS3ERR_NOTEMPTY);
    only(f, B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR));
}

static void test_nfs3_remove_rmdir(void **state)
{
    chk_remove(*state, NFSPROC3_REMOVE);
    chk_remove(*state, NFSPROC3_RMDIR);
}

static void test_nfs3_rename(void **state)
{
    struct fx *f = *state;
    RENAME3args a = { { fh3(FH_A), "old" }, { fh3(FH_B), "new" } };
    RENAME3res r = { NFS3_OK, .RENAME3res_u.resok = { mk_wcc(14), mk_wcc(15) } };

    ENC(f, xdr_RENAME3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_RENAME), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_FH2) | B(TBBT_F_NAME2));
    chk_fh3(f, f->rec.fh, FH_A);
    chk_cstr(&f->rec.name, "old");
    chk_fh3(f, f->rec.fh2, FH_B);
    chk_cstr(&f->rec.name2, "new");

    ENC(f, xdr_RENAME3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_RENAME), 0);
    only(f, B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR) | B(TBBT_F_DIR2_PRE) | B(TBBT_F_DIR2_ATTR));
    chk_wcc(&f->rec.dir_pre, &f->rec.dir_attr, &r.RENAME3res_u.resok.fromdir_wcc);
    chk_wcc(&f->rec.dir2_pre, &f->rec.dir2_attr, &r.RENAME3res_u.resok.todir_wcc);

    r.status = NFS3ERR_XDEV;
    ENC(f, xdr_RENAME3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_RENAME), 0);
    only(f, B(TBBT_F_DIR_PRE) | B(TBBT_F_DIR_ATTR) | B(TBBT_F_DIR2_PRE) | B(TBBT_F_DIR2_ATTR));
}

static void test_nfs3_link(void **state)
{
    struct fx *f = *state;
    LINK3args a = { fh3(FH_C), { fh3(FH_A), "hard" } };
    LINK3res r = { NFS3_OK, .LINK3res_u.resok = { mk_post(16), mk_wcc(17) } };

    ENC(f, xdr_LINK3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_LINK), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_FH2) | B(TBBT_F_NAME2));
    chk_fh3(f, f->rec.fh, FH_C);
    chk_fh3(f, f->rec.fh2, FH_A);
    chk_cstr(&f->rec.name2, "hard");

    ENC(f, xdr_LINK3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_LINK), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_DIR2_PRE) | B(TBBT_F_DIR2_ATTR));
    chk_fattr(&f->rec.obj_attr, &r.LINK3res_u.resok.file_attributes.post_op_attr_u.attributes);
    chk_wcc(&f->rec.dir2_pre, &f->rec.dir2_attr, &r.LINK3res_u.resok.linkdir_wcc);

    r.status = NFS3ERR_MLINK;
    ENC(f, xdr_LINK3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_LINK), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_DIR2_PRE) | B(TBBT_F_DIR2_ATTR));
}

/* A name holding a NUL byte and a '/': names are data. */
static const char ODD_NAME[] = { 'a', 0, '/', 'b' };

static void test_nfs3_readdir(void **state)
{
    struct fx *f = *state;
    READDIR3args a = { fh3(FH_A), 12345, { 0 }, 4096 };
    entry3 e[3] = {
        { 100, ".", 1, &e[1] },
        { 101, "..", 2, &e[2] },
        { 102, "file", 3, NULL },
    };
    READDIR3res r = { NFS3_OK, .READDIR3res_u.resok = { mk_post(18), { 0 }, { e, TRUE } } };

    memcpy(a.cookieverf, VERF, 8);
    ENC(f, xdr_READDIR3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_READDIR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_COOKIE) | B(TBBT_F_COOKIEVERF) | B(TBBT_F_COUNT));
    assert_int_equal(f->rec.cookie, 12345);
    assert_int_equal(f->rec.cookieverf, VERF_U64);
    assert_int_equal(f->rec.count, 4096);

    ENC(f, xdr_READDIR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READDIR), 0);
    only(f, B(TBBT_F_DIR_ATTR) | B(TBBT_F_ENTRIES) | B(TBBT_F_RES_COUNT) | B(TBBT_F_EOF));
    assert_int_equal(f->rec.n_entries, 3);
    assert_int_equal(f->rec.res_count, 3);
    assert_int_equal(f->rec.eof, 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(f->rec.entries[i].fileid, e[i].fileid);
        assert_int_equal(f->rec.entries[i].cookie, e[i].cookie);
        assert_int_equal(f->rec.entries[i].flags, 0);
        chk_cstr(&f->rec.entries[i].name, e[i].name);
    }

    /* An empty directory listing: entries present, none of them. */
    r.READDIR3res_u.resok.reply.entries = NULL;
    r.READDIR3res_u.resok.reply.eof = FALSE;
    ENC(f, xdr_READDIR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READDIR), 0);
    only(f, B(TBBT_F_DIR_ATTR) | B(TBBT_F_ENTRIES) | B(TBBT_F_RES_COUNT) | B(TBBT_F_EOF));
    assert_int_equal(f->rec.n_entries, 0);
    assert_int_equal(f->rec.eof, 0);

    r.status = NFS3ERR_BAD_COOKIE;
    ENC(f, xdr_READDIR3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_READDIR), 0);
    only(f, B(TBBT_F_DIR_ATTR));
    assert_int_equal(f->rec.status, NFS3ERR_BAD_COOKIE);
}

/* A READDIRPLUS reply built piece by piece; ends[i] = length after entry i. */
static u_int build_rdplus(struct fx *f, u_int ends[3], u_int *hdr_attr, u_int *list_end)
{
    nfsstat3 st = NFS3_OK;
    post_op_attr dattr = mk_post(19);
    cookieverf3 verf;
    entryplus3 e[3] = {
        { 200, "alpha", 10, mk_post(20), { TRUE, .post_op_fh3_u.handle = fh3(FH_A) }, NULL },
        { 201, "beta", 11, { .attributes_follow = FALSE }, { .handle_follows = FALSE }, NULL },
        { 202, "", 12, mk_post(22), { TRUE, .post_op_fh3_u.handle = fh3(FH_C) }, NULL },
    };
    bool_t eof = TRUE;

    memcpy(verf, VERF, 8);
    enc_begin(f);
    PUT(f, xdr_nfsstat3, &st);
    *hdr_attr = PUT(f, xdr_post_op_attr, &dattr);
    PUT(f, xdr_cookieverf3, verf);
    for (int i = 0; i < 3; i++) {
        put_u32(f, 1);
        PUT(f, xdr_fileid3, &e[i].fileid);
        if (i == 2) {
            /* xdr_string stops at a NUL: put the odd name by hand */
            u_int n = sizeof(ODD_NAME);
            char pad[4];
            memcpy(pad, ODD_NAME, 4);
            put_u32(f, n);
            assert_true(xdr_opaque(&f->x, pad, n));
        } else {
            PUT(f, xdr_filename3, &e[i].name);
        }
        PUT(f, xdr_cookie3, &e[i].cookie);
        PUT(f, xdr_post_op_attr, &e[i].name_attributes);
        ends[i] = PUT(f, xdr_post_op_fh3, &e[i].name_handle);
    }
    *list_end = put_u32(f, 0);
    return PUT(f, xdr_bool, &eof);
}

static void chk_rdplus_entry(struct fx *f, uint32_t i)
{
    const struct tbbt_entry *e = &f->rec.entries[i];
    fattr3 a;

    assert_int_equal(e->fileid, 200 + i);
    assert_int_equal(e->cookie, 10 + i);
    switch (i) {
    case 0:
        chk_cstr(&e->name, "alpha");
        assert_int_equal(e->flags, TBBT_ENT_FH | TBBT_ENT_ATTR);
        chk_fh3(f, e->fh, FH_A);
        a = mk_fattr(20);
        chk_fattr(&e->attr, &a);
        break;
    case 1:
        chk_cstr(&e->name, "beta");
        assert_int_equal(e->flags, 0);
        break;
    default:
        chk_str(&e->name, ODD_NAME, sizeof(ODD_NAME));
        assert_int_equal(e->flags, TBBT_ENT_FH | TBBT_ENT_ATTR);
        chk_fh3(f, e->fh, FH_C);
        a = mk_fattr(22);
        chk_fattr(&e->attr, &a);
        break;
    }
}

static void test_nfs3_readdirplus(void **state)
{
    struct fx *f = *state;
    READDIRPLUS3args a = { fh3(FH_B), 0, { 0 }, 1024, 8192 };
    u_int ends[3], hdr_attr, list_end;

    ENC(f, xdr_READDIRPLUS3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_READDIRPLUS), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_COOKIE) | B(TBBT_F_COOKIEVERF) | B(TBBT_F_DIRCOUNT) |
                B(TBBT_F_MAXCOUNT));
    assert_int_equal(f->rec.dircount, 1024);
    assert_int_equal(f->rec.maxcount, 8192);

    build_rdplus(f, ends, &hdr_attr, &list_end);
    assert_int_equal(dreply(f, V3, NFSPROC3_READDIRPLUS), 0);
    only(f, B(TBBT_F_DIR_ATTR) | B(TBBT_F_ENTRIES) | B(TBBT_F_RES_COUNT) | B(TBBT_F_EOF));
    assert_int_equal(f->rec.n_entries, 3);
    for (uint32_t i = 0; i < 3; i++)
        chk_rdplus_entry(f, i);
}

static void test_nfs3_fsstat(void **state)
{
    struct fx *f = *state;
    FSSTAT3args a = { fh3(FH_A) };
    FSSTAT3res r = { NFS3_OK, .FSSTAT3res_u.resok = { mk_post(23), 1ull << 40, 2, 3, 4, 5, 6, 7 } };

    ENC(f, xdr_FSSTAT3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_FSSTAT), 0);
    only(f, B(TBBT_F_FH));

    ENC(f, xdr_FSSTAT3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_FSSTAT), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_INFO));
    assert_int_equal(f->rec.n_info, 7);
    assert_int_equal(f->rec.info[0], 1ull << 40);
    for (int i = 1; i < 7; i++)
        assert_int_equal(f->rec.info[i], i + 1);

    r.status = NFS3ERR_IO;
    ENC(f, xdr_FSSTAT3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_FSSTAT), 0);
    only(f, B(TBBT_F_OBJ_ATTR));
}

static void test_nfs3_fsinfo(void **state)
{
    struct fx *f = *state;
    FSINFO3args a = { fh3(FH_A) };
    FSINFO3res r = { NFS3_OK, .FSINFO3res_u.resok = { mk_post(24), 1, 2, 3, 4, 5, 6, 7, 1ull << 62,
                                                      { 0, 1000 }, FSF3_LINK | FSF3_SYMLINK } };
    const uint64_t want[10] = { 1, 2, 3, 4, 5, 6, 7, 1ull << 62, 1000, 3 };

    ENC(f, xdr_FSINFO3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_FSINFO), 0);
    only(f, B(TBBT_F_FH));

    ENC(f, xdr_FSINFO3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_FSINFO), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_INFO));
    assert_int_equal(f->rec.n_info, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(f->rec.info[i], want[i]);

    r.status = NFS3ERR_STALE;
    r.FSINFO3res_u.resfail.obj_attributes.attributes_follow = FALSE;
    ENC(f, xdr_FSINFO3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_FSINFO), 0);
    only(f, 0);
}

static void test_nfs3_pathconf(void **state)
{
    struct fx *f = *state;
    PATHCONF3args a = { fh3(FH_A) };
    PATHCONF3res r = {
        NFS3_OK, .PATHCONF3res_u.resok = { mk_post(25), 32000, 255, TRUE, TRUE, FALSE, TRUE }
    };
    const uint64_t want[6] = { 32000, 255, 1, 1, 0, 1 };

    ENC(f, xdr_PATHCONF3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_PATHCONF), 0);
    only(f, B(TBBT_F_FH));

    ENC(f, xdr_PATHCONF3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_PATHCONF), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_INFO));
    assert_int_equal(f->rec.n_info, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(f->rec.info[i], want[i]);
}

static void test_nfs3_commit(void **state)
{
    struct fx *f = *state;
    COMMIT3args a = { fh3(FH_B), 4096, 65536 };
    COMMIT3res r = { NFS3_OK, .COMMIT3res_u.resok = { mk_wcc(26), { 0 } } };

    memcpy(r.COMMIT3res_u.resok.verf, VERF, 8);
    ENC(f, xdr_COMMIT3args, &a);
    assert_int_equal(dcall(f, V3, NFSPROC3_COMMIT), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT));
    assert_int_equal(f->rec.offset, 4096);
    assert_int_equal(f->rec.count, 65536);

    ENC(f, xdr_COMMIT3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_COMMIT), 0);
    only(f, B(TBBT_F_OBJ_PRE) | B(TBBT_F_OBJ_ATTR) | B(TBBT_F_WRITEVERF));
    assert_int_equal(f->rec.writeverf, VERF_U64);

    r.status = NFS3ERR_IO;
    ENC(f, xdr_COMMIT3res, &r);
    assert_int_equal(dreply(f, V3, NFSPROC3_COMMIT), 0);
    only(f, B(TBBT_F_OBJ_PRE) | B(TBBT_F_OBJ_ATTR));
}

/* ---- truncation ------------------------------------------------------------ */

/* A WRITE call cut at every byte: the fields before the cut stay. */
static void test_trunc_write_call(void **state)
{
    struct fx *f = *state;
    char data[37];
    WRITE3args a = { fh3(FH_A), 0x0102030405ull, 37, FILE_SYNC, { 37, data } };
    const u_int fh_end = 4 + 20, off_end = fh_end + 8, cnt_end = off_end + 4;
    const u_int st_end = cnt_end + 4, total = st_end + 4 + 40;

    memset(data, 'd', sizeof(data));
    ENC(f, xdr_WRITE3args, &a);
    assert_int_equal(f->len, total);
    for (u_int cut = 0; cut <= total; cut++) {
        uint64_t want = 0;

        if (cut >= fh_end)
            want |= B(TBBT_F_FH);
        if (cut >= off_end)
            want |= B(TBBT_F_OFFSET);
        if (cut >= cnt_end)
            want |= B(TBBT_F_COUNT);
        if (cut >= st_end)
            want |= B(TBBT_F_STABLE);

        assert_int_equal(run_dec(f, tbbt__decode_call, V3, NFSPROC3_WRITE, cut, true),
                         cut == total ? 0 : TBBT_E_TRUNC);
        only(f, want);
        assert_int_equal(f->rec.flags, cut == total ? 0 : TBBT_RF_CALL_TRUNC);
        if (cut >= fh_end)
            chk_fh3(f, f->rec.fh, FH_A);
        if (cut >= off_end)
            assert_int_equal(f->rec.offset, 0x0102030405ull);
        if (cut >= cnt_end)
            assert_int_equal(f->rec.count, 37);
        if (cut >= st_end)
            assert_int_equal(f->rec.stable, FILE_SYNC);

        /* Not marked truncated: running out of bytes is malformed. */
        assert_int_equal(run_dec(f, tbbt__decode_call, V3, NFSPROC3_WRITE, cut, false),
                         cut == total ? 0 : TBBT_E_BADREC);
        only(f, want);
        assert_int_equal(f->rec.flags, cut == total ? 0 : TBBT_RF_CALL_BAD);
    }
}

/* A READDIRPLUS reply cut at every byte: complete entries stay. */
static void test_trunc_readdirplus_reply(void **state)
{
    struct fx *f = *state;
    u_int ends[3], hdr_attr, list_end;
    u_int total = build_rdplus(f, ends, &hdr_attr, &list_end);

    for (u_int cut = 0; cut <= total; cut++) {
        uint32_t n = 0;
        uint64_t want = 0;

        for (int i = 0; i < 3; i++)
            n += cut >= ends[i];
        if (cut >= hdr_attr)
            want |= B(TBBT_F_DIR_ATTR);
        if (n > 0 || cut >= list_end)
            want |= B(TBBT_F_ENTRIES);
        if (cut >= list_end)
            want |= B(TBBT_F_RES_COUNT);
        if (cut == total)
            want |= B(TBBT_F_EOF);

        assert_int_equal(run_dec(f, tbbt__decode_reply, V3, NFSPROC3_READDIRPLUS, cut, true),
                         cut == total ? 0 : TBBT_E_TRUNC);
        only(f, want);
        assert_int_equal(!!(f->rec.flags & TBBT_RF_STATUS), cut >= 4);
        assert_int_equal(!!(f->rec.flags & TBBT_RF_REPLY_TRUNC), cut < total);
        assert_false(f->rec.flags & TBBT_RF_REPLY_BAD);
        assert_int_equal(f->rec.n_entries, n);
        for (uint32_t i = 0; i < n; i++)
            chk_rdplus_entry(f, i);

        assert_int_equal(run_dec(f, tbbt__decode_reply, V3, NFSPROC3_READDIRPLUS, cut, false),
                         cut == total ? 0 : TBBT_E_BADREC);
        assert_int_equal(f->rec.n_entries, n);
        assert_int_equal(!!(f->rec.flags & TBBT_RF_REPLY_BAD), cut < total);
    }
}

/* ---- malformed input ------------------------------------------------------- */

/* Decodes the encoded message both as cut short and as complete: must be malformed. */
static void chk_bad(struct fx *f, dec_fn fn, int prog, int proc, uint16_t bad_flag)
{
    assert_int_equal(run_dec(f, fn, prog, proc, f->len, true), TBBT_E_BADREC);
    assert_true(f->rec.flags & bad_flag);
    assert_int_equal(run_dec(f, fn, prog, proc, f->len, false), TBBT_E_BADREC);
    assert_true(f->rec.flags & bad_flag);
}

static void test_bad_lengths(void **state)
{
    struct fx *f = *state;
    nfs_fh3 h = fh3(FH_A);
    char big[70];

    /* LOOKUP with an absurd name length: the handle stays. */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    put_u32(f, 0xfffffff0u);
    put_u32(f, 0x41414141u);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_LOOKUP, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH));

    /* A name one byte over its bound (256 bytes). */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    put_u32(f, 256);
    for (int i = 0; i < 64; i++)
        put_u32(f, 0x61616161u);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_LOOKUP, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH));

    /* A handle longer than 64 bytes. */
    memset(big, 'h', sizeof(big));
    enc_begin(f);
    put_u32(f, 65);
    assert_true(xdr_opaque(&f->x, big, 65));
    f->len = xdr_getpos(&f->x);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_GETATTR, TBBT_RF_CALL_BAD);
    only(f, 0);

    /* WRITE data longer than the maximum transfer. */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    put_u32(f, 0);
    put_u32(f, 0);
    put_u32(f, 100);
    put_u32(f, UNSTABLE);
    put_u32(f, NFS3_MAXDATA + 1);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_WRITE, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT) | B(TBBT_F_STABLE));

    /* A READLINK result path with an absurd length. */
    enc_begin(f);
    put_u32(f, NFS3_OK);
    put_u32(f, FALSE);
    put_u32(f, 0x7fffffffu);
    chk_bad(f, tbbt__decode_reply, V3, NFSPROC3_READLINK, TBBT_RF_REPLY_BAD);
    assert_true(f->rec.flags & TBBT_RF_STATUS);
}

static void test_bad_discriminant(void **state)
{
    struct fx *f = *state;
    nfs_fh3 h = fh3(FH_A);
    filename3 name = "x";

    /* CREATE with createmode 7. */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    PUT(f, xdr_filename3, &name);
    put_u32(f, 7);
    for (int i = 0; i < 20; i++)
        put_u32(f, 0);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_CREATE, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));

    /* ...even in a message cut right after the bad discriminant. */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    PUT(f, xdr_filename3, &name);
    put_u32(f, 3);
    assert_int_equal(run_dec(f, tbbt__decode_call, V3, NFSPROC3_CREATE, f->len, true),
                     TBBT_E_BADREC);

    /* ...while a good one cut there is only truncated. */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    PUT(f, xdr_filename3, &name);
    put_u32(f, EXCLUSIVE);
    assert_int_equal(run_dec(f, tbbt__decode_call, V3, NFSPROC3_CREATE, f->len, true),
                     TBBT_E_TRUNC);

    /* A bad set_it (xdr_bool would take it as TRUE) and a bad time_how (the
     * union's "default: void") are malformed too: test_out_of_range. */
}

static nfs2_fattr mk_fattr2(uint32_t seed);

/* SETATTR arguments with the given words for sattr3's six discriminants and the guard. */
static void enc_setattr(struct fx *f, const uint32_t set[6], uint32_t guard)
{
    nfs_fh3 h = fh3(FH_A);

    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    for (int i = 0; i < 6; i++) {
        put_u32(f, set[i]);
        if (set[i] == (i < 4 ? 1u : 2u))
            for (int k = 0; k < (i < 3 ? 1 : 2); k++)
                put_u32(f, 0644);
    }
    put_u32(f, guard);
    if (guard == 1) {
        put_u32(f, 1);
        put_u32(f, 2);
    }
}

/*
 * Values outside the protocol's range are malformed and never become trace
 * fields: ftype3 past NF3FIFO, stable_how past FILE_SYNC, bools other than
 * 0/1 (set_it, attributes_follow, check, eof), time_how past
 * SET_TO_CLIENT_TIME, a status not in RFC 1813's list; v2's ftype.
 */
static void test_out_of_range(void **state)
{
    struct fx *f = *state;
    nfs_fh3 h = fh3(FH_A);
    fattr3 a = mk_fattr(1);
    nfs2_attrstat r2 = { NFS_OK, .nfs2_attrstat_u.attributes = mk_fattr2(1) };
    static const uint32_t ok_set[6] = {1, 0, 0, 0, 2, 1};
    static const uint32_t bad_bool[6] = {2, 0, 0, 0, 0, 0};
    static const uint32_t bad_how[6] = {0, 0, 0, 0, 3, 0};
    filename3 name = "x";

    /* the good SETATTR first: the encoding is right */
    enc_setattr(f, ok_set, 1);
    assert_int_equal(dcall(f, V3, NFSPROC3_SETATTR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_SATTR) | B(TBBT_F_GUARD));
    enc_setattr(f, bad_bool, 0);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_SETATTR, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH));
    enc_setattr(f, bad_how, 0);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_SETATTR, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH));
    enc_setattr(f, ok_set, 2);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_SETATTR, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH) | B(TBBT_F_SATTR));

    /* GETATTR reply: ftype 1111638594 ("BBBB"), then a status of 12345 */
    a.type = (ftype3)1111638594;
    enc_begin(f);
    put_u32(f, NFS3_OK);
    PUT(f, xdr_fattr3, &a);
    chk_bad(f, tbbt__decode_reply, V3, NFSPROC3_GETATTR, TBBT_RF_REPLY_BAD);
    only(f, 0);
    assert_int_equal(f->rec.status, NFS3_OK);
    enc_begin(f);
    put_u32(f, 12345);
    chk_bad(f, tbbt__decode_reply, V3, NFSPROC3_GETATTR, TBBT_RF_REPLY_BAD);
    assert_false(f->rec.flags & TBBT_RF_STATUS);

    /* ACCESS reply: attributes_follow 2 */
    enc_begin(f);
    put_u32(f, NFS3_OK);
    put_u32(f, 2);
    PUT(f, xdr_fattr3, &a);
    put_u32(f, 1);
    chk_bad(f, tbbt__decode_reply, V3, NFSPROC3_ACCESS, TBBT_RF_REPLY_BAD);
    only(f, 0);

    /* WRITE call: stable_how 3 */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    put_u32(f, 0);
    put_u32(f, 0);
    put_u32(f, 4);
    put_u32(f, 3);
    put_u32(f, 4);
    put_u32(f, 0x61616161u);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_WRITE, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT));

    /* READ reply: eof 2 */
    enc_begin(f);
    put_u32(f, NFS3_OK);
    put_u32(f, 0);
    put_u32(f, 4);
    put_u32(f, 2);
    put_u32(f, 4);
    put_u32(f, 0x61616161u);
    chk_bad(f, tbbt__decode_reply, V3, NFSPROC3_READ, TBBT_RF_REPLY_BAD);
    assert_false(HAS(f, TBBT_F_EOF));

    /* MKNOD: type 9 */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    PUT(f, xdr_filename3, &name);
    put_u32(f, 9);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_MKNOD, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));

    /* MKNOD of a block device (NF3BLK has a sattr3 too): set_mode3 2 */
    enc_begin(f);
    PUT(f, xdr_nfs_fh3, &h);
    PUT(f, xdr_filename3, &name);
    put_u32(f, NF3BLK);
    for (int i = 0; i < 6; i++)
        put_u32(f, i == 0 ? 2 : 0);
    put_u32(f, 4);
    put_u32(f, 64);
    chk_bad(f, tbbt__decode_call, V3, NFSPROC3_MKNOD, TBBT_RF_CALL_BAD);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));

    /* MOUNT v3: a mountstat3 of 12345 */
    enc_begin(f);
    put_u32(f, 12345);
    chk_bad(f, tbbt__decode_reply, TBBT_PROG_MNT3, MOUNTPROC3_MNT, TBBT_RF_REPLY_BAD);
    assert_false(f->rec.flags & TBBT_RF_STATUS);

    /* v2: an ftype past NFFIFO (8); a stat not in RFC 1094 is kept (servers send errnos) */
    r2.nfs2_attrstat_u.attributes.type = (nfs2_ftype)9;
    ENC(f, xdr_nfs2_attrstat, &r2);
    chk_bad(f, tbbt__decode_reply, TBBT_PROG_NFS2, NFSPROC_GETATTR, TBBT_RF_REPLY_BAD);
    only(f, 0);
    enc_begin(f);
    put_u32(f, 22);
    assert_int_equal(dreply(f, TBBT_PROG_NFS2, NFSPROC_GETATTR), 0);
    assert_int_equal(f->rec.status, 22);
}

static void test_bad_entry_bool(void **state)
{
    struct fx *f = *state;
    post_op_attr none = { .attributes_follow = FALSE };
    cookieverf3 verf = { 0 };
    fileid3 id = 5;
    cookie3 ck = 6;
    filename3 name = "ok";

    enc_begin(f);
    put_u32(f, NFS3_OK);
    PUT(f, xdr_post_op_attr, &none);
    PUT(f, xdr_cookieverf3, verf);
    put_u32(f, 1);
    PUT(f, xdr_fileid3, &id);
    PUT(f, xdr_filename3, &name);
    PUT(f, xdr_cookie3, &ck);
    put_u32(f, 2);              /* value follows: neither TRUE nor FALSE */
    put_u32(f, 0);
    put_u32(f, 1);
    chk_bad(f, tbbt__decode_reply, V3, NFSPROC3_READDIR, TBBT_RF_REPLY_BAD);
    assert_int_equal(f->rec.n_entries, 1);
    chk_cstr(&f->rec.entries[0].name, "ok");
}

static void test_bad_proc(void **state)
{
    struct fx *f = *state;

    f->len = 0;
    assert_int_equal(dcall(f, V3, 22), TBBT_E_BADREC);
    assert_true(f->rec.flags & TBBT_RF_CALL_BAD);
    assert_int_equal(dreply(f, TBBT_PROG_NFS2, 18), TBBT_E_BADREC);
    assert_true(f->rec.flags & TBBT_RF_REPLY_BAD);
    assert_int_equal(dcall(f, TBBT_PROG_MNT3, 6), TBBT_E_BADREC);
    assert_int_equal(dcall(f, TBBT_PROG_NONE, 0), TBBT_E_BADREC);

    /* Nothing at all of a GETATTR call. */
    assert_int_equal(run_dec(f, tbbt__decode_call, V3, NFSPROC3_GETATTR, 0, true), TBBT_E_TRUNC);
    assert_int_equal(f->rec.flags, TBBT_RF_CALL_TRUNC);
    assert_int_equal(dcall(f, V3, NFSPROC3_GETATTR), TBBT_E_BADREC);
    assert_int_equal(f->rec.flags, TBBT_RF_CALL_BAD);
}

static void test_prog(void **state)
{
    (void)state;
    assert_int_equal(tbbt__decode_prog(100003, 2), TBBT_PROG_NFS2);
    assert_int_equal(tbbt__decode_prog(100003, 3), TBBT_PROG_NFS3);
    assert_int_equal(tbbt__decode_prog(100003, 4), TBBT_PROG_NONE);
    assert_int_equal(tbbt__decode_prog(100005, 1), TBBT_PROG_MNT1);
    assert_int_equal(tbbt__decode_prog(100005, 2), TBBT_PROG_NONE);
    assert_int_equal(tbbt__decode_prog(100005, 3), TBBT_PROG_MNT3);
    assert_int_equal(tbbt__decode_prog(100000, 2), TBBT_PROG_NONE);
    assert_string_equal(tbbt_proto_status_name(TBBT_PROTO_NFS3, NFS3ERR_JUKEBOX),
                        "NFS3ERR_JUKEBOX");
    assert_string_equal(tbbt_proto_status_name(TBBT_PROTO_NFS2, NFSERR_WFLUSH), "NFSERR_WFLUSH");
    assert_string_equal(tbbt_proto_status_name(TBBT_PROTO_MNT3, MNT3ERR_ACCES), "MNT3ERR_ACCES");
    assert_string_equal(tbbt_proto_status_name(TBBT_PROTO_MNT1, 0), "MNT3_OK");
    assert_null(tbbt_proto_status_name(TBBT_PROTO_NFS3, 12345));
    assert_null(tbbt_proto_status_name(9, 0));
}

/* ---- NFSv2 ----------------------------------------------------------------- */

#define V2 TBBT_PROG_NFS2

static void fh2(nfs2_fhandle h, char c)
{
    memset(h, c, NFS2_FHSIZE);
    h[0] = 'v';
}

static nfs2_fattr mk_fattr2(uint32_t seed)
{
    nfs2_fattr a = { NFDIR, 040755, 2 + seed, 10, 20, 4096 + seed, 512, 0x0801, 8 + seed,
                     77, 9000 + seed, { 1000, 1 }, { 2000, 999999 }, { 3000, 0 } };
    return a;
}

static void chk_fattr2(const struct tbbt_fattr *o, const nfs2_fattr *a)
{
    assert_int_equal(o->type, NF3DIR);
    assert_int_equal(o->mode, a->mode);
    assert_int_equal(o->nlink, a->nlink);
    assert_int_equal(o->uid, a->uid);
    assert_int_equal(o->gid, a->gid);
    assert_int_equal(o->size, a->size);
    assert_int_equal(o->used, (uint64_t)a->blocks * a->blocksize);
    assert_int_equal(o->rdev, a->rdev);
    assert_int_equal(o->fsid, a->fsid);
    assert_int_equal(o->fileid, a->fileid);
    assert_int_equal(o->atime_ns, 1000000001000ull);
    assert_int_equal(o->mtime_ns, 2000999999000ull);
    assert_int_equal(o->ctime_ns, 3000000000000ull);
}

static void test_nfs2_void(void **state)
{
    struct fx *f = *state;
    const int procs[] = { NFSPROC_NULL, NFSPROC_ROOT, NFSPROC_WRITECACHE };

    f->len = 0;
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
        assert_int_equal(dcall(f, V2, procs[i]), 0);
        assert_int_equal(dreply(f, V2, procs[i]), 0);
        only(f, 0);
    }
}

static void test_nfs2_getattr_setattr(void **state)
{
    struct fx *f = *state;
    nfs2_fhandle h;
    nfs2_sattrargs s;
    nfs2_attrstat r = { NFS_OK, .nfs2_attrstat_u.attributes = mk_fattr2(1) };
    const uint32_t unset = 0xffffffffu;

    fh2(h, 'a');
    assert_int_equal(ENC(f, xdr_nfs2_fhandle, h), 32);
    assert_int_equal(dcall(f, V2, NFSPROC_GETATTR), 0);
    only(f, B(TBBT_F_FH));
    chk_fh(f, f->rec.fh, h, 32);

    ENC(f, xdr_nfs2_attrstat, &r);
    assert_int_equal(dreply(f, V2, NFSPROC_GETATTR), 0);
    only(f, B(TBBT_F_OBJ_ATTR));
    chk_fattr2(&f->rec.obj_attr, &r.nfs2_attrstat_u.attributes);

    r.status = NFSERR_STALE;
    ENC(f, xdr_nfs2_attrstat, &r);
    assert_int_equal(dreply(f, V2, NFSPROC_SETATTR), 0);
    assert_int_equal(f->rec.status, NFSERR_STALE);
    only(f, 0);

    /* mode and size set, uid/gid not, atime the server's, mtime not set */
    memcpy(s.file, h, 32);
    s.attributes = (nfs2_sattr){ 0600, unset, unset, 0, { 5, 1000000 }, { unset, unset } };
    ENC(f, xdr_nfs2_sattrargs, &s);
    assert_int_equal(dcall(f, V2, NFSPROC_SETATTR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_SATTR));
    assert_int_equal(f->rec.sattr.mask, TBBT_SA_MODE | TBBT_SA_SIZE | TBBT_SA_ATIME_SERVER);
    assert_int_equal(f->rec.sattr.mode, 0600);
    assert_int_equal(f->rec.sattr.size, 0);

    s.attributes = (nfs2_sattr){ unset, 7, 8, unset, { 9, 10 }, { 11, 12 } };
    ENC(f, xdr_nfs2_sattrargs, &s);
    assert_int_equal(dcall(f, V2, NFSPROC_SETATTR), 0);
    assert_int_equal(f->rec.sattr.mask,
                     TBBT_SA_UID | TBBT_SA_GID | TBBT_SA_ATIME | TBBT_SA_MTIME);
    assert_int_equal(f->rec.sattr.uid, 7);
    assert_int_equal(f->rec.sattr.gid, 8);
    assert_int_equal(f->rec.sattr.atime_ns, 9000010000ull);
    assert_int_equal(f->rec.sattr.mtime_ns, 11000012000ull);
}

static void test_nfs2_lookup_create(void **state)
{
    struct fx *f = *state;
    nfs2_createargs c;
    nfs2_diropres r = { .status = NFS_OK };

    fh2(c.where.dir, 'd');
    c.where.name = "file2";
    c.attributes = (nfs2_sattr){ 0644, 0xffffffffu, 0xffffffffu, 0xffffffffu,
                                 { 0xffffffffu, 0xffffffffu }, { 0xffffffffu, 0xffffffffu } };
    ENC(f, xdr_nfs2_diropargs, &c.where);
    assert_int_equal(dcall(f, V2, NFSPROC_LOOKUP), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));
    chk_fh(f, f->rec.fh, c.where.dir, 32);
    chk_cstr(&f->rec.name, "file2");

    ENC(f, xdr_nfs2_createargs, &c);
    assert_int_equal(dcall(f, V2, NFSPROC_CREATE), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_SATTR));
    assert_int_equal(f->rec.sattr.mask, TBBT_SA_MODE);
    assert_int_equal(dcall(f, V2, NFSPROC_MKDIR), 0);

    fh2(r.nfs2_diropres_u.diropok.file, 'n');
    r.nfs2_diropres_u.diropok.attributes = mk_fattr2(2);
    ENC(f, xdr_nfs2_diropres, &r);
    assert_int_equal(dreply(f, V2, NFSPROC_CREATE), 0);
    only(f, B(TBBT_F_NEW_FH) | B(TBBT_F_OBJ_ATTR));
    chk_fh(f, f->rec.new_fh, r.nfs2_diropres_u.diropok.file, 32);
    chk_fattr2(&f->rec.obj_attr, &r.nfs2_diropres_u.diropok.attributes);

    r.status = NFSERR_NOENT;
    ENC(f, xdr_nfs2_diropres, &r);
    assert_int_equal(dreply(f, V2, NFSPROC_LOOKUP), 0);
    assert_int_equal(f->rec.status, NFSERR_NOENT);
    only(f, 0);
}

static void test_nfs2_read_write(void **state)
{
    struct fx *f = *state;
    char data[10];
    nfs2_readargs ra;
    nfs2_writeargs wa;
    nfs2_readres rr = { .status = NFS_OK };

    memset(data, 'r', sizeof(data));
    fh2(ra.file, 'f');
    ra.offset = 8192;
    ra.count = 4096;
    ra.totalcount = 0;
    ENC(f, xdr_nfs2_readargs, &ra);
    assert_int_equal(dcall(f, V2, NFSPROC_READ), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT));
    assert_int_equal(f->rec.offset, 8192);
    assert_int_equal(f->rec.count, 4096);

    rr.nfs2_readres_u.reply.attributes = mk_fattr2(3);
    rr.nfs2_readres_u.reply.data.data_len = 10;
    rr.nfs2_readres_u.reply.data.data_val = data;
    ENC(f, xdr_nfs2_readres, &rr);
    assert_int_equal(dreply(f, V2, NFSPROC_READ), 0);
    only(f, B(TBBT_F_OBJ_ATTR) | B(TBBT_F_RES_COUNT));
    assert_int_equal(f->rec.res_count, 10);

    memcpy(wa.file, ra.file, 32);
    wa.beginoffset = 1;
    wa.offset = 16384;
    wa.totalcount = 3;
    wa.data.data_len = 10;
    wa.data.data_val = data;
    ENC(f, xdr_nfs2_writeargs, &wa);
    assert_int_equal(dcall(f, V2, NFSPROC_WRITE), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT));
    assert_int_equal(f->rec.offset, 16384);
    assert_int_equal(f->rec.count, 10);

    /* cut inside the data: still a WRITE of 10 bytes at 16384 */
    assert_int_equal(run_dec(f, tbbt__decode_call, V2, NFSPROC_WRITE, f->len - 4, true),
                     TBBT_E_TRUNC);
    only(f, B(TBBT_F_FH) | B(TBBT_F_OFFSET) | B(TBBT_F_COUNT));

    /* data over NFS2_MAXDATA */
    enc_begin(f);
    PUT(f, xdr_nfs2_fhandle, wa.file);
    put_u32(f, 0);
    put_u32(f, 0);
    put_u32(f, 0);
    put_u32(f, NFS2_MAXDATA + 1);
    chk_bad(f, tbbt__decode_call, V2, NFSPROC_WRITE, TBBT_RF_CALL_BAD);
}

static void test_nfs2_dirops(void **state)
{
    struct fx *f = *state;
    nfs2_renameargs rn;
    nfs2_linkargs ln;
    nfs2_symlinkargs sl;
    nfs2_stat st = NFSERR_NOTEMPTY;

    fh2(rn.from.dir, '1');
    rn.from.name = "a";
    fh2(rn.to.dir, '2');
    rn.to.name = "b";
    ENC(f, xdr_nfs2_renameargs, &rn);
    assert_int_equal(dcall(f, V2, NFSPROC_RENAME), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_FH2) | B(TBBT_F_NAME2));
    chk_fh(f, f->rec.fh2, rn.to.dir, 32);
    chk_cstr(&f->rec.name2, "b");

    fh2(ln.from, '3');
    ln.to = rn.to;
    ENC(f, xdr_nfs2_linkargs, &ln);
    assert_int_equal(dcall(f, V2, NFSPROC_LINK), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_FH2) | B(TBBT_F_NAME2));
    chk_fh(f, f->rec.fh, ln.from, 32);

    sl.from = rn.from;
    sl.to = "dest";
    sl.attributes = (nfs2_sattr){ 0777, 0xffffffffu, 0xffffffffu, 0xffffffffu,
                                  { 0xffffffffu, 0 }, { 0xffffffffu, 0 } };
    ENC(f, xdr_nfs2_symlinkargs, &sl);
    assert_int_equal(dcall(f, V2, NFSPROC_SYMLINK), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME) | B(TBBT_F_TARGET) | B(TBBT_F_SATTR));
    chk_cstr(&f->rec.target, "dest");
    assert_int_equal(f->rec.sattr.mask, TBBT_SA_MODE);

    ENC(f, xdr_nfs2_diropargs, &rn.from);
    assert_int_equal(dcall(f, V2, NFSPROC_REMOVE), 0);
    assert_int_equal(dcall(f, V2, NFSPROC_RMDIR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_NAME));

    ENC(f, xdr_nfs2_stat, &st);
    for (int p = NFSPROC_REMOVE; p <= NFSPROC_SYMLINK; p++) {
        assert_int_equal(dreply(f, V2, p), 0);
        assert_int_equal(f->rec.status, NFSERR_NOTEMPTY);
        only(f, 0);
    }
    assert_int_equal(dreply(f, V2, NFSPROC_RMDIR), 0);
}

static void test_nfs2_readlink(void **state)
{
    struct fx *f = *state;
    nfs2_readlinkres r = { NFS_OK, .nfs2_readlinkres_u.data = "/x/y" };

    ENC(f, xdr_nfs2_readlinkres, &r);
    assert_int_equal(dreply(f, V2, NFSPROC_READLINK), 0);
    only(f, B(TBBT_F_TARGET));
    chk_cstr(&f->rec.target, "/x/y");
}

static void test_nfs2_readdir_statfs(void **state)
{
    struct fx *f = *state;
    nfs2_readdirargs a;
    nfs2_entry e[2] = { { 1, "one", { 0, 0, 0, 1 }, &e[1] }, { 2, "two", { 0, 0, 1, 0 }, NULL } };
    nfs2_readdirres r = { NFS_OK, .nfs2_readdirres_u.readdirok = { e, TRUE } };
    nfs2_statfsres s = { NFS_OK, .nfs2_statfsres_u.info = { 8192, 4096, 1000, 500, 400 } };

    fh2(a.dir, 'r');
    memcpy(a.cookie, "\x00\x01\x02\x03", 4);
    a.count = 1024;
    ENC(f, xdr_nfs2_readdirargs, &a);
    assert_int_equal(dcall(f, V2, NFSPROC_READDIR), 0);
    only(f, B(TBBT_F_FH) | B(TBBT_F_COOKIE) | B(TBBT_F_COUNT));
    assert_int_equal(f->rec.cookie, 0x010203);
    assert_int_equal(f->rec.count, 1024);

    ENC(f, xdr_nfs2_readdirres, &r);
    assert_int_equal(dreply(f, V2, NFSPROC_READDIR), 0);
    only(f, B(TBBT_F_ENTRIES) | B(TBBT_F_RES_COUNT) | B(TBBT_F_EOF));
    assert_int_equal(f->rec.n_entries, 2);
    assert_int_equal(f->rec.entries[1].fileid, 2);
    assert_int_equal(f->rec.entries[1].cookie, 256);
    chk_cstr(&f->rec.entries[1].name, "two");

    ENC(f, xdr_nfs2_statfsres, &s);
    assert_int_equal(dreply(f, V2, NFSPROC_STATFS), 0);
    only(f, B(TBBT_F_INFO));
    assert_int_equal(f->rec.n_info, 5);
    assert_int_equal(f->rec.info[0], 8192);
    assert_int_equal(f->rec.info[4], 400);
}

/* ---- MOUNT ----------------------------------------------------------------- */

static void test_mount_calls(void **state)
{
    struct fx *f = *state;
    dirpath p = "/export/home";

    f->len = 0;
    for (int prog = TBBT_PROG_MNT1; prog <= TBBT_PROG_MNT3; prog++) {
        for (int proc = 0; proc < 6; proc++) {
            if (proc == MOUNTPROC_MNT || proc == MOUNTPROC_UMNT)
                continue;
            f->len = 0;
            assert_int_equal(dcall(f, prog, proc), 0);
            only(f, 0);
        }
        ENC(f, xdr_dirpath, &p);
        assert_int_equal(dcall(f, prog, MOUNTPROC_MNT), 0);
        only(f, B(TBBT_F_DIRPATH));
        chk_cstr(&f->rec.dirpath, "/export/home");
        assert_int_equal(dcall(f, prog, MOUNTPROC_UMNT), 0);
        only(f, B(TBBT_F_DIRPATH));

        f->len = 0;
        assert_int_equal(dreply(f, prog, MOUNTPROC_NULL), 0);
        assert_int_equal(dreply(f, prog, MOUNTPROC_UMNT), 0);
        assert_int_equal(dreply(f, prog, MOUNTPROC_UMNTALL), 0);
        only(f, 0);
    }

    /* a dirpath over MNTPATHLEN */
    enc_begin(f);
    put_u32(f, MNTPATHLEN + 1);
    chk_bad(f, tbbt__decode_call, TBBT_PROG_MNT3, MOUNTPROC3_MNT, TBBT_RF_CALL_BAD);
}

static void test_mount_mnt_reply(void **state)
{
    struct fx *f = *state;
    fhstatus r1 = { 0 };
    int flav[2] = { 1, 6 };
    mountres3 r3 = { MNT3_OK, .mountres3_u.mountinfo = { { 28, (char *)FH_B }, { 2, flav } } };

    memset(r1.fhstatus_u.directory, 'm', FHSIZE);
    ENC(f, xdr_fhstatus, &r1);
    assert_int_equal(dreply(f, TBBT_PROG_MNT1, MOUNTPROC_MNT), 0);
    only(f, B(TBBT_F_NEW_FH));
    assert_int_equal(f->rec.status, 0);
    chk_fh(f, f->rec.new_fh, r1.fhstatus_u.directory, FHSIZE);

    r1.status = 13;
    ENC(f, xdr_fhstatus, &r1);
    assert_int_equal(dreply(f, TBBT_PROG_MNT1, MOUNTPROC_MNT), 0);
    assert_int_equal(f->rec.status, 13);
    only(f, 0);

    ENC(f, xdr_mountres3, &r3);
    assert_int_equal(dreply(f, TBBT_PROG_MNT3, MOUNTPROC3_MNT), 0);
    only(f, B(TBBT_F_NEW_FH));
    chk_fh(f, f->rec.new_fh, FH_B, 28);

    /* flavors cut off: the handle stays */
    assert_int_equal(run_dec(f, tbbt__decode_reply, TBBT_PROG_MNT3, MOUNTPROC3_MNT, f->len - 4,
                             true),
                     TBBT_E_TRUNC);
    only(f, B(TBBT_F_NEW_FH));

    r3.fhs_status = MNT3ERR_ACCES;
    ENC(f, xdr_mountres3, &r3);
    assert_int_equal(dreply(f, TBBT_PROG_MNT3, MOUNTPROC3_MNT), 0);
    assert_int_equal(f->rec.status, MNT3ERR_ACCES);
    only(f, 0);

    /* a v3 handle over FHSIZE3 */
    enc_begin(f);
    put_u32(f, MNT3_OK);
    put_u32(f, FHSIZE3 + 1);
    for (int i = 0; i < 20; i++)
        put_u32(f, 0);
    chk_bad(f, tbbt__decode_reply, TBBT_PROG_MNT3, MOUNTPROC3_MNT, TBBT_RF_REPLY_BAD);
}

static void test_mount_lists(void **state)
{
    struct fx *f = *state;
    mountbody mb[2] = { { "client1", "/a", &mb[1] }, { "client2", "/b", NULL } };
    mountlist ml = mb;
    groupnode g[2] = { { "g1", &g[1] }, { "g2", NULL } };
    exportnode ex[3] = { { "/a", g, &ex[1] }, { "/b", NULL, &ex[2] }, { "/c", &g[1], NULL } };
    exports el = ex;

    for (int prog = TBBT_PROG_MNT1; prog <= TBBT_PROG_MNT3; prog++) {
        ENC(f, xdr_mountlist, &ml);
        assert_int_equal(dreply(f, prog, MOUNTPROC_DUMP), 0);
        only(f, B(TBBT_F_RES_COUNT));
        assert_int_equal(f->rec.res_count, 2);

        ENC(f, xdr_exports, &el);
        assert_int_equal(dreply(f, prog, MOUNTPROC_EXPORT), 0);
        only(f, B(TBBT_F_RES_COUNT));
        assert_int_equal(f->rec.res_count, 3);

        assert_int_equal(run_dec(f, tbbt__decode_reply, prog, MOUNTPROC_EXPORT, f->len - 4, true),
                         TBBT_E_TRUNC);
        only(f, 0);
    }

    ml = NULL;
    ENC(f, xdr_mountlist, &ml);
    assert_int_equal(dreply(f, TBBT_PROG_MNT3, MOUNTPROC3_DUMP), 0);
    assert_int_equal(f->rec.res_count, 0);

    /* a bad bool in the groups list */
    enc_begin(f);
    put_u32(f, 1);
    PUT(f, xdr_dirpath, &ex[0].ex_dir);
    put_u32(f, 3);
    chk_bad(f, tbbt__decode_reply, TBBT_PROG_MNT3, MOUNTPROC3_EXPORT, TBBT_RF_REPLY_BAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(test_nfs3_null),
        T(test_nfs3_getattr),
        T(test_nfs3_setattr),
        T(test_nfs3_lookup),
        T(test_nfs3_access),
        T(test_nfs3_readlink),
        T(test_nfs3_read),
        T(test_nfs3_write),
        T(test_nfs3_create),
        T(test_nfs3_mkdir),
        T(test_nfs3_symlink),
        T(test_nfs3_mknod),
        T(test_nfs3_remove_rmdir),
        T(test_nfs3_rename),
        T(test_nfs3_link),
        T(test_nfs3_readdir),
        T(test_nfs3_readdirplus),
        T(test_nfs3_fsstat),
        T(test_nfs3_fsinfo),
        T(test_nfs3_pathconf),
        T(test_nfs3_commit),
        T(test_trunc_write_call),
        T(test_trunc_readdirplus_reply),
        T(test_bad_lengths),
        T(test_bad_discriminant),
        T(test_bad_entry_bool),
        T(test_out_of_range),
        T(test_bad_proc),
        T(test_prog),
        T(test_nfs2_void),
        T(test_nfs2_getattr_setattr),
        T(test_nfs2_lookup_create),
        T(test_nfs2_read_write),
        T(test_nfs2_dirops),
        T(test_nfs2_readlink),
        T(test_nfs2_readdir_statfs),
        T(test_mount_calls),
        T(test_mount_mnt_reply),
        T(test_mount_lists),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
