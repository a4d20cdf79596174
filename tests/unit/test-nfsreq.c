/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the player's call builder (src/player/nfsreq.h): for each of the 22
 * NFSv3 procedures (RFC 1813 3.3) and the 18 NFSv2 procedures (RFC 1094 2.2), a record
 * made by hand is built into a call, encoded with xdrmem and q->xargs, decoded back with
 * the same rpcgen routine, and the key fields are checked (handles, names, offsets,
 * counts, sattr mapping, no SETATTR guard, write data).  Also: the TBBT_NFSREQ_* refusals
 * (NOT_NFS, MISSING, NO_HANDLE, UNSENDABLE), tbbt_nfsreq_needs(), set_cookie, and the
 * reply helpers new_fh and readdir on results encoded by hand and decoded with
 * q->xres.  No server is needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <glib.h>

#include "player/nfsreq.h"

#define BUF_SIZE (2u << 20)
#define ID_DIR 10       /* 24-byte handle (v3 only) */
#define ID_A 11         /* 32-byte handle */
#define ID_B 12         /* 32-byte handle */
#define ID_UNKNOWN 13   /* no handle */
#define CALL_NS 1700000000123456789ull

struct fix {
    struct tbbt_handles *h;
    struct tbbt_trace_rec rec;
    struct tbbt_nfsreq q;
    char *buf;
};

static uint8_t fh_bytes(uint64_t id, int i)
{
    return (uint8_t)(id * 16 + i + 1);
}

static uint32_t fh_len(uint64_t id)
{
    return id == ID_DIR ? 24 : 32;
}

static int setup(void **state)
{
    struct fix *f = g_new0(struct fix, 1);
    uint64_t ids[] = { ID_DIR, ID_A, ID_B };

    f->h = tbbt_handles_new();
    for (size_t k = 0; k < G_N_ELEMENTS(ids); k++) {
        uint8_t fh[TBBT_HANDLE_MAX];
        for (uint32_t i = 0; i < fh_len(ids[k]); i++)
            fh[i] = fh_bytes(ids[k], i);
        assert_true(tbbt_handles_set(f->h, ids[k], fh, fh_len(ids[k])));
    }
    tbbt_trace_rec_init(&f->rec);
    f->buf = g_malloc(BUF_SIZE);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fix *f = *state;

    tbbt_trace_rec_fini(&f->rec);
    tbbt_handles_free(f->h);
    g_free(f->buf);
    g_free(f);
    return 0;
}

/* ---- record helpers -------------------------------------------------------- */

static struct tbbt_trace_rec *rec_new(struct fix *f, int prog, int proc)
{
    struct tbbt_trace_rec *r = &f->rec;

    tbbt_trace_rec_clear(r);
    r->prog = (uint8_t)prog;
    r->proc = (uint8_t)proc;
    r->call_ns = CALL_NS;
    return r;
}

static void set_id(struct tbbt_trace_rec *r, uint64_t id)
{
    r->id = id;
    TBBT_SET(r, TBBT_F_ID);
}

static void set_id2(struct tbbt_trace_rec *r, uint64_t id)
{
    r->id2 = id;
    TBBT_SET(r, TBBT_F_ID2);
}

static void set_name(struct tbbt_trace_rec *r, const char *s)
{
    tbbt_trace_rec_set_str(r, &r->name, s, (uint32_t)strlen(s));
    TBBT_SET(r, TBBT_F_NAME);
}

static void set_name2(struct tbbt_trace_rec *r, const char *s)
{
    tbbt_trace_rec_set_str(r, &r->name2, s, (uint32_t)strlen(s));
    TBBT_SET(r, TBBT_F_NAME2);
}

static void set_target(struct tbbt_trace_rec *r, const char *s)
{
    tbbt_trace_rec_set_str(r, &r->target, s, (uint32_t)strlen(s));
    TBBT_SET(r, TBBT_F_TARGET);
}

static void set_io(struct tbbt_trace_rec *r, uint64_t offset, uint32_t count)
{
    r->offset = offset;
    r->count = count;
    TBBT_SET(r, TBBT_F_OFFSET);
    TBBT_SET(r, TBBT_F_COUNT);
}

/* mode 0640, size 4096, atime from the client, mtime from the server. */
static void set_sattr(struct tbbt_trace_rec *r)
{
    r->sattr = (struct tbbt_sattr){
        .mask = TBBT_SA_MODE | TBBT_SA_SIZE | TBBT_SA_ATIME | TBBT_SA_MTIME_SERVER,
        .mode = 0640,
        .size = 4096,
        .atime_ns = 1600000000ull * 1000000000u + 123456789u,
    };
    TBBT_SET(r, TBBT_F_SATTR);
}

/* Builds f->rec into f->q and expects success with the given program/version. */
static void build_ok(struct fix *f, uint32_t vers)
{
    uint64_t missing = 0;

    assert_int_equal(tbbt_nfsreq_build(&f->q, &f->rec, f->h, &missing), 0);
    assert_int_equal(f->q.prog, 100003);
    assert_int_equal(f->q.vers, vers);
    assert_int_equal(f->q.proc, f->rec.proc);
    assert_non_null(f->q.xargs);
}

/*
 * Encodes f->q's args with q->xargs and decodes them back with the same routine into out
 * (size bytes, zeroed first).  Returns the encoded length.  Free with xdr_free(q.xargs).
 */
static u_int roundtrip(struct fix *f, void *out, size_t size)
{
    XDR x;
    u_int len;

    xdrmem_create(&x, f->buf, BUF_SIZE, XDR_ENCODE);
    assert_true(f->q.xargs(&x, &f->q.args));
    len = xdr_getpos(&x);
    xdr_destroy(&x);
    memset(out, 0, size);
    xdrmem_create(&x, f->buf, len, XDR_DECODE);
    assert_true(f->q.xargs(&x, out));
    assert_int_equal(xdr_getpos(&x), len);
    xdr_destroy(&x);
    return len;
}

static void check_fh3(const nfs_fh3 *fh, uint64_t id)
{
    assert_int_equal(fh->data.data_len, fh_len(id));
    for (uint32_t i = 0; i < fh_len(id); i++)
        assert_int_equal((uint8_t)fh->data.data_val[i], fh_bytes(id, i));
}

static void check_fh2(const char *fh, uint64_t id)
{
    for (uint32_t i = 0; i < NFS2_FHSIZE; i++)
        assert_int_equal((uint8_t)fh[i], fh_bytes(id, i));
}

/* The sattr of set_sattr() as sattr3. */
static void check_sattr3(const sattr3 *s)
{
    assert_true(s->mode.set_it);
    assert_int_equal(s->mode.set_mode3_u.mode, 0640);
    assert_false(s->uid.set_it);
    assert_false(s->gid.set_it);
    assert_true(s->size.set_it);
    assert_int_equal(s->size.set_size3_u.size, 4096);
    assert_int_equal(s->atime.set_it, SET_TO_CLIENT_TIME);
    assert_int_equal(s->atime.set_atime_u.atime.seconds, 1600000000u);
    assert_int_equal(s->atime.set_atime_u.atime.nseconds, 123456789u);
    assert_int_equal(s->mtime.set_it, SET_TO_SERVER_TIME);
}

static void check_sattr3_empty(const sattr3 *s)
{
    assert_false(s->mode.set_it);
    assert_false(s->uid.set_it);
    assert_false(s->gid.set_it);
    assert_false(s->size.set_it);
    assert_int_equal(s->atime.set_it, DONT_CHANGE);
    assert_int_equal(s->mtime.set_it, DONT_CHANGE);
}

/* The sattr of set_sattr() as an NFSv2 sattr. */
static void check_sattr2(const nfs2_sattr *s)
{
    assert_int_equal(s->mode, 0640);
    assert_int_equal(s->uid, 0xffffffffu);
    assert_int_equal(s->gid, 0xffffffffu);
    assert_int_equal(s->size, 4096);
    assert_int_equal(s->atime.seconds, 1600000000u);
    assert_int_equal(s->atime.useconds, 123456u);
    assert_int_equal(s->mtime.seconds, (u_int)(CALL_NS / 1000000000u));
    assert_int_equal(s->mtime.useconds, 1000000u);
}

static void check_sattr2_empty(const nfs2_sattr *s)
{
    assert_int_equal(s->mode, 0xffffffffu);
    assert_int_equal(s->uid, 0xffffffffu);
    assert_int_equal(s->gid, 0xffffffffu);
    assert_int_equal(s->size, 0xffffffffu);
    assert_int_equal(s->atime.seconds, 0xffffffffu);
    assert_int_equal(s->atime.useconds, 0xffffffffu);
    assert_int_equal(s->mtime.seconds, 0xffffffffu);
    assert_int_equal(s->mtime.useconds, 0xffffffffu);
}

static void check_data(const char *p, u_int len)
{
    for (u_int i = 0; i < len; i++) {
        if ((uint8_t)p[i] != (uint8_t)(1 + i % 251))
            fail_msg("write data byte %u is %u", i, (uint8_t)p[i]);
    }
}

/* ---- NFSv3 ----------------------------------------------------------------- */

static void test_v3_null(void **state)
{
    struct fix *f = *state;
    char out[4];

    rec_new(f, TBBT_PROG_NFS3, NFSPROC3_NULL);
    build_ok(f, 3);
    assert_null(f->q.xres);
    assert_int_equal(roundtrip(f, out, sizeof(out)), 0);
}

/* The record carries the traced reply's object attributes (the player checks them). */
static void set_attrs(struct tbbt_trace_rec *r)
{
    r->obj_attr.type = 1;
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
}

/* GETATTR, READLINK, FSSTAT, FSINFO, PATHCONF: just the object's handle. */
static void test_v3_obj(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC3_GETATTR, NFSPROC3_READLINK, NFSPROC3_FSSTAT,
                          NFSPROC3_FSINFO, NFSPROC3_PATHCONF };

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        GETATTR3args out;

        set_id(rec_new(f, TBBT_PROG_NFS3, procs[i]), ID_A);
        build_ok(f, 3);
        assert_null(f->q.xres);       /* no traced attributes: nothing to decode */
        set_attrs(&f->rec);
        build_ok(f, 3);
        assert_non_null(f->q.xres);   /* the object's attributes are checked */
        roundtrip(f, &out, sizeof(out));
        check_fh3(&out.object, ID_A);
        xdr_free(f->q.xargs, &out);
    }
}

static void test_v3_setattr(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_SETATTR);
    SETATTR3args out;

    set_id(r, ID_DIR);
    set_sattr(r);
    r->guard_ns = 5000000000ull;
    TBBT_SET(r, TBBT_F_GUARD);
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.object, ID_DIR);
    check_sattr3(&out.new_attributes);
    assert_false(out.guard.check);
    xdr_free(f->q.xargs, &out);
}

/* LOOKUP, REMOVE, RMDIR: diropargs3. */
static void test_v3_dirop(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC3_LOOKUP, NFSPROC3_REMOVE, NFSPROC3_RMDIR };

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, procs[i]);
        LOOKUP3args out;

        set_id(r, ID_DIR);
        set_name(r, "file.txt");
        build_ok(f, 3);
        if (procs[i] == NFSPROC3_LOOKUP) {
            assert_non_null(f->q.xres);   /* decodes up to the handle (nfsreq.c) */
            assert_int_equal(f->q.res_size, sizeof(LOOKUP3res));
        } else {
            assert_null(f->q.xres);
        }
        roundtrip(f, &out, sizeof(out));
        check_fh3(&out.what.dir, ID_DIR);
        assert_string_equal(out.what.name, "file.txt");
        xdr_free(f->q.xargs, &out);
    }
}

static void test_v3_access(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_ACCESS);
    ACCESS3args out;

    set_id(r, ID_A);
    r->access = ACCESS3_READ | ACCESS3_LOOKUP;
    TBBT_SET(r, TBBT_F_ACCESS);
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.object, ID_A);
    assert_int_equal(out.access, ACCESS3_READ | ACCESS3_LOOKUP);
    xdr_free(f->q.xargs, &out);
}

/* READ and COMMIT: file, offset, count. */
static void test_v3_read_commit(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC3_READ, NFSPROC3_COMMIT };

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, procs[i]);
        READ3args out;

        set_id(r, ID_A);
        set_io(r, 0x123456789ull, 32768);
        build_ok(f, 3);
        roundtrip(f, &out, sizeof(out));
        check_fh3(&out.file, ID_A);
        assert_int_equal(out.offset, 0x123456789ull);
        assert_int_equal(out.count, 32768);
        xdr_free(f->q.xargs, &out);
    }
}

static void test_v3_write(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_WRITE);
    WRITE3args out;

    /* No stable field: UNSTABLE. */
    set_id(r, ID_A);
    set_io(r, 8192, 5000);
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.file, ID_A);
    assert_int_equal(out.offset, 8192);
    assert_int_equal(out.count, 5000);
    assert_int_equal(out.stable, UNSTABLE);
    assert_int_equal(out.data.data_len, 5000);
    check_data(out.data.data_val, out.data.data_len);
    xdr_free(f->q.xargs, &out);

    /* FILE_SYNC from the record; a 3 MiB count is sent as 1 MiB. */
    r->stable = FILE_SYNC;
    TBBT_SET(r, TBBT_F_STABLE);
    r->count = 3u << 20;
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.stable, FILE_SYNC);
    assert_int_equal(out.count, TBBT_NFSREQ_WRITE_MAX3);
    assert_int_equal(out.data.data_len, TBBT_NFSREQ_WRITE_MAX3);
    check_data(out.data.data_val, out.data.data_len);
    xdr_free(f->q.xargs, &out);

    /* Count 0: an empty write. */
    r->count = 0;
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.count, 0);
    assert_int_equal(out.data.data_len, 0);
    xdr_free(f->q.xargs, &out);
}

static void test_v3_create(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_CREATE);
    CREATE3args out;

    set_id(r, ID_DIR);
    set_name(r, "new");
    r->createmode = UNCHECKED;
    TBBT_SET(r, TBBT_F_CREATEMODE);
    set_sattr(r);
    build_ok(f, 3);
    assert_non_null(f->q.xres);   /* decodes up to the handle (nfsreq.c) */
    assert_int_equal(f->q.res_size, sizeof(CREATE3res));
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.where.dir, ID_DIR);
    assert_string_equal(out.where.name, "new");
    assert_int_equal(out.how.mode, UNCHECKED);
    check_sattr3(&out.how.createhow3_u.obj_attributes);
    xdr_free(f->q.xargs, &out);

    /* GUARDED without sattr: an empty sattr. */
    r->createmode = GUARDED;
    r->present &= ~((uint64_t)1 << TBBT_F_SATTR);
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.how.mode, GUARDED);
    check_sattr3_empty(&out.how.createhow3_u.obj_attributes);
    xdr_free(f->q.xargs, &out);

    /* EXCLUSIVE: the verifier, big-endian. */
    r->createmode = EXCLUSIVE;
    r->createverf = 0x0102030405060708ull;
    TBBT_SET(r, TBBT_F_CREATEVERF);
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.how.mode, EXCLUSIVE);
    assert_memory_equal(out.how.createhow3_u.verf, "\1\2\3\4\5\6\7\10", 8);
    xdr_free(f->q.xargs, &out);
}

static void test_v3_mkdir(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_MKDIR);
    MKDIR3args out;

    set_id(r, ID_DIR);
    set_name(r, "sub");
    set_sattr(r);
    build_ok(f, 3);
    assert_non_null(f->q.xres);   /* decodes up to the handle (nfsreq.c) */
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.where.dir, ID_DIR);
    assert_string_equal(out.where.name, "sub");
    check_sattr3(&out.attributes);
    xdr_free(f->q.xargs, &out);
}

static void test_v3_symlink(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_SYMLINK);
    SYMLINK3args out;

    set_id(r, ID_DIR);
    set_name(r, "ln");
    set_target(r, "../some/where");
    build_ok(f, 3);
    assert_non_null(f->q.xres);   /* decodes up to the handle (nfsreq.c) */
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.where.dir, ID_DIR);
    assert_string_equal(out.where.name, "ln");
    assert_string_equal(out.symlink.symlink_data, "../some/where");
    check_sattr3_empty(&out.symlink.symlink_attributes);
    xdr_free(f->q.xargs, &out);
}

static void test_v3_mknod(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_MKNOD);
    MKNOD3args out;

    set_id(r, ID_DIR);
    set_name(r, "dev");
    r->ftype = NF3CHR;
    TBBT_SET(r, TBBT_F_FTYPE);
    r->rdev = (uint64_t)136 << 32 | 5;
    TBBT_SET(r, TBBT_F_RDEV);
    set_sattr(r);
    build_ok(f, 3);
    assert_non_null(f->q.xres);   /* decodes up to the handle (nfsreq.c) */
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.where.dir, ID_DIR);
    assert_string_equal(out.where.name, "dev");
    assert_int_equal(out.what.type, NF3CHR);
    assert_int_equal(out.what.mknoddata3_u.device.spec.specdata1, 136);
    assert_int_equal(out.what.mknoddata3_u.device.spec.specdata2, 5);
    check_sattr3(&out.what.mknoddata3_u.device.dev_attributes);
    xdr_free(f->q.xargs, &out);

    r->ftype = NF3FIFO;
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.what.type, NF3FIFO);
    check_sattr3(&out.what.mknoddata3_u.pipe_attributes);
    xdr_free(f->q.xargs, &out);

    /* A regular file through MKNOD is sent as traced (the server says BADTYPE). */
    r->ftype = NF3REG;
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.what.type, NF3REG);
    xdr_free(f->q.xargs, &out);
}

static void test_v3_rename(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_RENAME);
    RENAME3args out;

    set_id(r, ID_DIR);
    set_name(r, "old");
    set_id2(r, ID_A);
    set_name2(r, "new");
    build_ok(f, 3);
    assert_null(f->q.xres);
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.from.dir, ID_DIR);
    assert_string_equal(out.from.name, "old");
    check_fh3(&out.to.dir, ID_A);
    assert_string_equal(out.to.name, "new");
    xdr_free(f->q.xargs, &out);
}

static void test_v3_link(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_LINK);
    LINK3args out;

    set_id(r, ID_A);
    set_id2(r, ID_DIR);
    set_name2(r, "hard");
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.file, ID_A);
    check_fh3(&out.link.dir, ID_DIR);
    assert_string_equal(out.link.name, "hard");
    xdr_free(f->q.xargs, &out);
}

static void set_cookie_fields(struct tbbt_trace_rec *r)
{
    r->cookie = 42;
    TBBT_SET(r, TBBT_F_COOKIE);
    r->cookieverf = 0x1122334455667788ull;
    TBBT_SET(r, TBBT_F_COOKIEVERF);
}

static void test_v3_readdir(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_READDIR);
    READDIR3args out;

    set_id(r, ID_DIR);
    set_cookie_fields(r);
    r->count = 4096;
    TBBT_SET(r, TBBT_F_COUNT);
    build_ok(f, 3);
    assert_ptr_equal(f->q.xres, (xdrproc_t)xdr_READDIR3res);
    assert_int_equal(f->q.res_size, sizeof(READDIR3res));
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.dir, ID_DIR);
    assert_int_equal(out.cookie, 42);
    assert_memory_equal(out.cookieverf, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
    assert_int_equal(out.count, 4096);
    xdr_free(f->q.xargs, &out);

    tbbt_nfsreq_set_cookie(&f->q, 777, 0x0807060504030201ull);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.cookie, 777);
    assert_memory_equal(out.cookieverf, "\10\7\6\5\4\3\2\1", 8);
    assert_int_equal(out.count, 4096);
    xdr_free(f->q.xargs, &out);

    /* No cookieverf in the record: zero. */
    r->present &= ~((uint64_t)1 << TBBT_F_COOKIEVERF);
    build_ok(f, 3);
    roundtrip(f, &out, sizeof(out));
    assert_memory_equal(out.cookieverf, "\0\0\0\0\0\0\0\0", 8);
    xdr_free(f->q.xargs, &out);
}

static void test_v3_readdirplus(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_READDIRPLUS);
    READDIRPLUS3args out;

    set_id(r, ID_DIR);
    set_cookie_fields(r);
    r->dircount = 1024;
    r->maxcount = 8192;
    TBBT_SET(r, TBBT_F_DIRCOUNT);
    TBBT_SET(r, TBBT_F_MAXCOUNT);
    build_ok(f, 3);
    assert_ptr_equal(f->q.xres, (xdrproc_t)xdr_READDIRPLUS3res);
    roundtrip(f, &out, sizeof(out));
    check_fh3(&out.dir, ID_DIR);
    assert_int_equal(out.cookie, 42);
    assert_memory_equal(out.cookieverf, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
    assert_int_equal(out.dircount, 1024);
    assert_int_equal(out.maxcount, 8192);
    xdr_free(f->q.xargs, &out);

    tbbt_nfsreq_set_cookie(&f->q, 9, 3);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.cookie, 9);
    assert_memory_equal(out.cookieverf, "\0\0\0\0\0\0\0\3", 8);
    assert_int_equal(out.maxcount, 8192);
    xdr_free(f->q.xargs, &out);
}

/* ---- NFSv2 ----------------------------------------------------------------- */

static void test_v2_null_root_writecache(void **state)
{
    struct fix *f = *state;
    char out[4];

    rec_new(f, TBBT_PROG_NFS2, NFSPROC_NULL);
    build_ok(f, 2);
    assert_int_equal(roundtrip(f, out, sizeof(out)), 0);

    set_id(rec_new(f, TBBT_PROG_NFS2, NFSPROC_ROOT), ID_A);
    assert_int_equal(tbbt_nfsreq_build(&f->q, &f->rec, f->h, NULL), TBBT_NFSREQ_NOT_NFS);
    set_id(rec_new(f, TBBT_PROG_NFS2, NFSPROC_WRITECACHE), ID_A);
    assert_int_equal(tbbt_nfsreq_build(&f->q, &f->rec, f->h, NULL), TBBT_NFSREQ_NOT_NFS);
}

/* GETATTR, READLINK, STATFS: a bare fhandle. */
static void test_v2_obj(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC_GETATTR, NFSPROC_READLINK, NFSPROC_STATFS };

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        nfs2_fhandle out;

        set_id(rec_new(f, TBBT_PROG_NFS2, procs[i]), ID_B);
        build_ok(f, 2);
        assert_null(f->q.xres);
        assert_int_equal(roundtrip(f, out, sizeof(out)), NFS2_FHSIZE);
        check_fh2(out, ID_B);
    }
}

static void test_v2_setattr(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_SETATTR);
    nfs2_sattrargs out;

    set_id(r, ID_A);
    set_sattr(r);
    build_ok(f, 2);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.file, ID_A);
    check_sattr2(&out.attributes);
    xdr_free(f->q.xargs, &out);
}

/* LOOKUP, REMOVE, RMDIR: diropargs. */
static void test_v2_dirop(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC_LOOKUP, NFSPROC_REMOVE, NFSPROC_RMDIR };

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, procs[i]);
        nfs2_diropargs out;

        set_id(r, ID_A);
        set_name(r, "x y");
        build_ok(f, 2);
        if (procs[i] == NFSPROC_LOOKUP) {
            assert_ptr_equal(f->q.xres, (xdrproc_t)xdr_nfs2_diropres);
            assert_int_equal(f->q.res_size, sizeof(nfs2_diropres));
        } else {
            assert_null(f->q.xres);
        }
        roundtrip(f, &out, sizeof(out));
        check_fh2(out.dir, ID_A);
        assert_string_equal(out.name, "x y");
        xdr_free(f->q.xargs, &out);
    }
}

static void test_v2_read(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_READ);
    nfs2_readargs out;

    set_id(r, ID_B);
    set_io(r, 65536, 8192);
    build_ok(f, 2);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.file, ID_B);
    assert_int_equal(out.offset, 65536);
    assert_int_equal(out.count, 8192);
    xdr_free(f->q.xargs, &out);
}

static void test_v2_write(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_WRITE);
    nfs2_writeargs out;

    set_id(r, ID_B);
    set_io(r, 4096, 1000);
    build_ok(f, 2);
    assert_null(f->q.xres);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.file, ID_B);
    assert_int_equal(out.offset, 4096);
    assert_int_equal(out.data.data_len, 1000);
    check_data(out.data.data_val, out.data.data_len);
    xdr_free(f->q.xargs, &out);

    /* Over the v2 limit: sent as 8 KiB. */
    r->count = 10000;
    build_ok(f, 2);
    roundtrip(f, &out, sizeof(out));
    assert_int_equal(out.data.data_len, TBBT_NFSREQ_WRITE_MAX2);
    check_data(out.data.data_val, out.data.data_len);
    xdr_free(f->q.xargs, &out);
}

/* CREATE and MKDIR: createargs. */
static void test_v2_create_mkdir(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC_CREATE, NFSPROC_MKDIR };

    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, procs[i]);
        nfs2_createargs out;

        set_id(r, ID_A);
        set_name(r, "made");
        set_sattr(r);
        build_ok(f, 2);
        assert_ptr_equal(f->q.xres, (xdrproc_t)xdr_nfs2_diropres);
        roundtrip(f, &out, sizeof(out));
        check_fh2(out.where.dir, ID_A);
        assert_string_equal(out.where.name, "made");
        check_sattr2(&out.attributes);
        xdr_free(f->q.xargs, &out);

        r->present &= ~((uint64_t)1 << TBBT_F_SATTR);
        build_ok(f, 2);
        roundtrip(f, &out, sizeof(out));
        check_sattr2_empty(&out.attributes);
        xdr_free(f->q.xargs, &out);
    }
}

static void test_v2_rename(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_RENAME);
    nfs2_renameargs out;

    set_id(r, ID_A);
    set_name(r, "from");
    set_id2(r, ID_B);
    set_name2(r, "to");
    build_ok(f, 2);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.from.dir, ID_A);
    assert_string_equal(out.from.name, "from");
    check_fh2(out.to.dir, ID_B);
    assert_string_equal(out.to.name, "to");
    xdr_free(f->q.xargs, &out);
}

static void test_v2_link(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_LINK);
    nfs2_linkargs out;

    set_id(r, ID_B);
    set_id2(r, ID_A);
    set_name2(r, "alias");
    build_ok(f, 2);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.from, ID_B);
    check_fh2(out.to.dir, ID_A);
    assert_string_equal(out.to.name, "alias");
    xdr_free(f->q.xargs, &out);
}

static void test_v2_symlink(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_SYMLINK);
    nfs2_symlinkargs out;

    set_id(r, ID_A);
    set_name(r, "sl");
    set_target(r, "/abs/target");
    set_sattr(r);
    build_ok(f, 2);
    assert_null(f->q.xres);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.from.dir, ID_A);
    assert_string_equal(out.from.name, "sl");
    assert_string_equal(out.to, "/abs/target");
    check_sattr2(&out.attributes);
    xdr_free(f->q.xargs, &out);
}

static void test_v2_readdir(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_READDIR);
    nfs2_readdirargs out;

    set_id(r, ID_A);
    r->cookie = 0x01020304;
    TBBT_SET(r, TBBT_F_COOKIE);
    r->count = 1024;
    TBBT_SET(r, TBBT_F_COUNT);
    build_ok(f, 2);
    assert_ptr_equal(f->q.xres, (xdrproc_t)xdr_nfs2_readdirres);
    roundtrip(f, &out, sizeof(out));
    check_fh2(out.dir, ID_A);
    assert_memory_equal(out.cookie, "\1\2\3\4", 4);
    assert_int_equal(out.count, 1024);
    xdr_free(f->q.xargs, &out);

    /* v2 cookies are 32 bits: the low word is sent. */
    tbbt_nfsreq_set_cookie(&f->q, 0x100000005ull, 99);
    roundtrip(f, &out, sizeof(out));
    assert_memory_equal(out.cookie, "\0\0\0\5", 4);
    xdr_free(f->q.xargs, &out);
}

/* ---- refusals -------------------------------------------------------------- */

static int build_rc(struct fix *f, uint64_t *missing)
{
    return tbbt_nfsreq_build(&f->q, &f->rec, f->h, missing);
}

static void test_not_nfs(void **state)
{
    struct fix *f = *state;
    uint64_t ids[2];

    set_id(rec_new(f, TBBT_PROG_MNT3, 1), ID_A);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NOT_NFS);
    assert_int_equal(tbbt_nfsreq_needs(&f->rec, ids), 0);
    rec_new(f, TBBT_PROG_MNT1, 0);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NOT_NFS);
    set_id(rec_new(f, TBBT_PROG_NFS3, 22), ID_A);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NOT_NFS);
    set_id(rec_new(f, TBBT_PROG_NFS2, 18), ID_A);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NOT_NFS);
    rec_new(f, TBBT_PROG_NONE, 1);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NOT_NFS);
}

static void test_missing(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r;

    /* No TBBT-ID, and ID 0. */
    rec_new(f, TBBT_PROG_NFS3, NFSPROC3_GETATTR);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
    set_id(&f->rec, 0);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);

    /* LOOKUP without a name (a call cut short). */
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_LOOKUP), ID_DIR);
    f->rec.flags |= TBBT_RF_CALL_TRUNC;
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);

    /* RENAME without id2; LINK without name2. */
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_RENAME);
    set_id(r, ID_DIR);
    set_name(r, "a");
    set_name2(r, "b");
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
    r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_LINK);
    set_id(r, ID_A);
    set_id2(r, ID_B);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);

    /* WRITE without offset; SETATTR without sattr; READDIR without cookie. */
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_WRITE), ID_A);
    f->rec.count = 10;
    TBBT_SET(&f->rec, TBBT_F_COUNT);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
    set_id(rec_new(f, TBBT_PROG_NFS2, NFSPROC_SETATTR), ID_A);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_READDIR), ID_DIR);
    f->rec.count = 10;
    TBBT_SET(&f->rec, TBBT_F_COUNT);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);

    /* CREATE without createmode; EXCLUSIVE without verifier; MKNOD CHR without rdev. */
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_CREATE);
    set_id(r, ID_DIR);
    set_name(r, "c");
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
    r->createmode = EXCLUSIVE;
    TBBT_SET(r, TBBT_F_CREATEMODE);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_MKNOD);
    set_id(r, ID_DIR);
    set_name(r, "d");
    r->ftype = NF3BLK;
    TBBT_SET(r, TBBT_F_FTYPE);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);

    /* MISSING wins over NO_HANDLE: the record can never be sent. */
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_LOOKUP), ID_UNKNOWN);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_MISSING);
}

static void test_no_handle(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r;
    uint64_t missing = 0, ids[2];

    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_GETATTR), ID_UNKNOWN);
    assert_int_equal(build_rc(f, &missing), TBBT_NFSREQ_NO_HANDLE);
    assert_int_equal(missing, ID_UNKNOWN);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NO_HANDLE);

    /* RENAME: the target directory's handle is unknown. */
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_RENAME);
    set_id(r, ID_DIR);
    set_name(r, "a");
    set_id2(r, ID_UNKNOWN);
    set_name2(r, "b");
    missing = 0;
    assert_int_equal(build_rc(f, &missing), TBBT_NFSREQ_NO_HANDLE);
    assert_int_equal(missing, ID_UNKNOWN);
    assert_int_equal(tbbt_nfsreq_needs(r, ids), 2);
    assert_int_equal(ids[0], ID_DIR);
    assert_int_equal(ids[1], ID_UNKNOWN);

    /* A PENDING handle is not KNOWN. */
    tbbt_handles_slot(f->h, 14)->state = TBBT_HANDLE_PENDING;
    set_id(rec_new(f, TBBT_PROG_NFS2, NFSPROC_GETATTR), 14);
    assert_int_equal(build_rc(f, &missing), TBBT_NFSREQ_NO_HANDLE);
    assert_int_equal(missing, 14);
}

static void test_unsendable(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r;

    /* A name holding a NUL byte cannot go through xdr_string. */
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_LOOKUP);
    set_id(r, ID_DIR);
    tbbt_trace_rec_set_str(r, &r->name, "a\0b", 3);
    TBBT_SET(r, TBBT_F_NAME);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_UNSENDABLE);

    /* An unknown createmode. */
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_CREATE);
    set_id(r, ID_DIR);
    set_name(r, "c");
    r->createmode = 3;
    TBBT_SET(r, TBBT_F_CREATEMODE);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_UNSENDABLE);

    /* A v2 call with a 24-byte handle; a v2 offset past 4 GiB. */
    set_id(rec_new(f, TBBT_PROG_NFS2, NFSPROC_GETATTR), ID_DIR);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_UNSENDABLE);
    set_id(rec_new(f, TBBT_PROG_NFS2, NFSPROC_READ), ID_A);
    set_io(&f->rec, (uint64_t)1 << 32, 10);
    assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_UNSENDABLE);
}

static void test_needs(void **state)
{
    struct fix *f = *state;
    struct tbbt_trace_rec *r;
    uint64_t ids[2] = { 0, 0 };

    rec_new(f, TBBT_PROG_NFS3, NFSPROC3_NULL);
    assert_int_equal(tbbt_nfsreq_needs(&f->rec, ids), 0);
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_READ), ID_A);
    assert_int_equal(tbbt_nfsreq_needs(&f->rec, ids), 1);
    assert_int_equal(ids[0], ID_A);
    /* LINK: the file (id), then the new link's directory (id2). */
    r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_LINK);
    set_id(r, ID_B);
    set_id2(r, ID_A);
    assert_int_equal(tbbt_nfsreq_needs(r, ids), 2);
    assert_int_equal(ids[0], ID_B);
    assert_int_equal(ids[1], ID_A);
    /* An id2 on a procedure that does not use it is not needed; a missing id is left out. */
    r = rec_new(f, TBBT_PROG_NFS3, NFSPROC3_LOOKUP);
    set_id2(r, ID_A);
    assert_int_equal(tbbt_nfsreq_needs(r, ids), 0);
}

static void test_set_cookie_noop(void **state)
{
    struct fix *f = *state;
    union tbbt_nfsreq_args before;

    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_GETATTR), ID_A);
    build_ok(f, 3);
    before = f->q.args;
    tbbt_nfsreq_set_cookie(&f->q, 1, 2);
    assert_memory_equal(&before, &f->q.args, sizeof(before));
}

/* ---- results --------------------------------------------------------------- */

/* Encodes obj with enc into f->buf, then decodes it with f->q.xres into res. */
static void encode_decode_res(struct fix *f, xdrproc_t enc, void *obj, union tbbt_nfsreq_res *res)
{
    XDR x;
    u_int len;

    xdrmem_create(&x, f->buf, BUF_SIZE, XDR_ENCODE);
    assert_true(enc(&x, obj));
    len = xdr_getpos(&x);
    xdr_destroy(&x);
    assert_non_null(f->q.xres);
    assert_true(f->q.res_size <= sizeof(*res));
    memset(res, 0, sizeof(*res));
    xdrmem_create(&x, f->buf, len, XDR_DECODE);
    assert_true(f->q.xres(&x, res));
    xdr_destroy(&x);
}

static void build_dirop3(struct fix *f, int proc)
{
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, proc);

    set_id(r, ID_DIR);
    set_name(r, "n");
    set_target(r, "t");
    r->createmode = UNCHECKED;
    TBBT_SET(r, TBBT_F_CREATEMODE);
    r->ftype = NF3FIFO;
    TBBT_SET(r, TBBT_F_FTYPE);
    build_ok(f, 3);
}

static void test_new_fh_v3(void **state)
{
    struct fix *f = *state;
    char h[20];
    uint8_t fh[TBBT_HANDLE_MAX];
    union tbbt_nfsreq_res res;
    LOOKUP3res lk = { .status = NFS3_OK };
    CREATE3res cr = { .status = NFS3_OK };
    const int creators[] = { NFSPROC3_CREATE, NFSPROC3_MKDIR, NFSPROC3_SYMLINK,
                             NFSPROC3_MKNOD };

    for (size_t i = 0; i < sizeof(h); i++)
        h[i] = (char)(0x40 + i);
    lk.LOOKUP3res_u.resok.object.data.data_len = sizeof(h);
    lk.LOOKUP3res_u.resok.object.data.data_val = h;
    /* attributes after the handle: left undecoded */
    lk.LOOKUP3res_u.resok.obj_attributes.attributes_follow = TRUE;
    lk.LOOKUP3res_u.resok.dir_attributes.attributes_follow = TRUE;
    build_dirop3(f, NFSPROC3_LOOKUP);
    encode_decode_res(f, (xdrproc_t)xdr_LOOKUP3res, &lk, &res);
    memset(fh, 0, sizeof(fh));
    assert_int_equal(tbbt_nfsreq_new_fh(3, NFSPROC3_LOOKUP, &res, fh), sizeof(h));
    assert_memory_equal(fh, h, sizeof(h));
    xdr_free(f->q.xres, &res);

    /* LOOKUP failed: no handle. */
    lk = (LOOKUP3res){ .status = NFS3ERR_NOENT };
    encode_decode_res(f, (xdrproc_t)xdr_LOOKUP3res, &lk, &res);
    assert_int_equal(tbbt_nfsreq_new_fh(3, NFSPROC3_LOOKUP, &res, fh), 0);
    xdr_free(f->q.xres, &res);

    /* CREATE, MKDIR, SYMLINK, MKNOD share the resok layout: one encoding for all four. */
    cr.CREATE3res_u.resok.obj.handle_follows = TRUE;
    cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle.data.data_len = sizeof(h);
    cr.CREATE3res_u.resok.obj.post_op_fh3_u.handle.data.data_val = h;
    cr.CREATE3res_u.resok.obj_attributes.attributes_follow = TRUE;
    for (size_t i = 0; i < G_N_ELEMENTS(creators); i++) {
        build_dirop3(f, creators[i]);
        encode_decode_res(f, (xdrproc_t)xdr_CREATE3res, &cr, &res);
        memset(fh, 0, sizeof(fh));
        assert_int_equal(tbbt_nfsreq_new_fh(3, creators[i], &res, fh), sizeof(h));
        assert_memory_equal(fh, h, sizeof(h));
        xdr_free(f->q.xres, &res);
    }

    /* OK without a handle (post_op_fh3 FALSE), and a failure. */
    cr.CREATE3res_u.resok.obj.handle_follows = FALSE;
    build_dirop3(f, NFSPROC3_CREATE);
    encode_decode_res(f, (xdrproc_t)xdr_CREATE3res, &cr, &res);
    assert_int_equal(tbbt_nfsreq_new_fh(3, NFSPROC3_CREATE, &res, fh), 0);
    xdr_free(f->q.xres, &res);
    cr = (CREATE3res){ .status = NFS3ERR_EXIST };
    encode_decode_res(f, (xdrproc_t)xdr_CREATE3res, &cr, &res);
    assert_int_equal(tbbt_nfsreq_new_fh(3, NFSPROC3_CREATE, &res, fh), 0);
    xdr_free(f->q.xres, &res);

    /* A procedure without a new handle. */
    memset(&res, 0, sizeof(res));
    assert_int_equal(tbbt_nfsreq_new_fh(3, NFSPROC3_GETATTR, &res, fh), 0);
}

static void test_new_fh_v2(void **state)
{
    struct fix *f = *state;
    const int procs[] = { NFSPROC_LOOKUP, NFSPROC_CREATE, NFSPROC_MKDIR };
    nfs2_diropres dr = { .status = NFS_OK };
    union tbbt_nfsreq_res res;
    uint8_t fh[TBBT_HANDLE_MAX];

    for (int i = 0; i < NFS2_FHSIZE; i++)
        dr.nfs2_diropres_u.diropok.file[i] = (char)(0x80 + i);
    dr.nfs2_diropres_u.diropok.attributes.type = NFREG;
    for (size_t i = 0; i < G_N_ELEMENTS(procs); i++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, procs[i]);

        set_id(r, ID_A);
        set_name(r, "n");
        build_ok(f, 2);
        encode_decode_res(f, (xdrproc_t)xdr_nfs2_diropres, &dr, &res);
        memset(fh, 0, sizeof(fh));
        assert_int_equal(tbbt_nfsreq_new_fh(2, procs[i], &res, fh), NFS2_FHSIZE);
        assert_memory_equal(fh, dr.nfs2_diropres_u.diropok.file, NFS2_FHSIZE);
        xdr_free(f->q.xres, &res);
    }
    dr = (nfs2_diropres){ .status = NFSERR_NOENT };
    encode_decode_res(f, (xdrproc_t)xdr_nfs2_diropres, &dr, &res);
    assert_int_equal(tbbt_nfsreq_new_fh(2, NFSPROC_MKDIR, &res, fh), 0);
    xdr_free(f->q.xres, &res);
}

static void build_readdir3(struct fix *f, int proc)
{
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, proc);

    set_id(r, ID_DIR);
    set_cookie_fields(r);
    r->count = r->dircount = r->maxcount = 4096;
    TBBT_SET(r, TBBT_F_COUNT);
    TBBT_SET(r, TBBT_F_DIRCOUNT);
    TBBT_SET(r, TBBT_F_MAXCOUNT);
    build_ok(f, 3);
}

/* The object's post-operation attributes out of decoded v3 results (reply checks). */
static void test_post_attr(void **state)
{
    struct fix *f = *state;
    union tbbt_nfsreq_res res;
    struct tbbt_fattr a;
    char h[8] = "handle!", data[16] = "0123456789abcdef";
    fattr3 fa = { .type = NF3REG, .mode = 0100640, .nlink = 2, .uid = 1001, .gid = 2002,
                  .size = 4711, .fileid = 99 };

    /* LOOKUP: handle, object attributes (decoded), directory attributes (not). */
    LOOKUP3res lr = { .status = NFS3_OK };
    lr.LOOKUP3res_u.resok.object.data.data_len = sizeof(h);
    lr.LOOKUP3res_u.resok.object.data.data_val = h;
    lr.LOOKUP3res_u.resok.obj_attributes.attributes_follow = TRUE;
    lr.LOOKUP3res_u.resok.obj_attributes.post_op_attr_u.attributes = fa;
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_LOOKUP), ID_A);
    set_name(&f->rec, "n");
    build_ok(f, 3);
    encode_decode_res(f, (xdrproc_t)xdr_LOOKUP3res, &lr, &res);
    assert_true(tbbt_nfsreq_post_attr(3, NFSPROC3_LOOKUP, &res, &a));
    assert_int_equal(a.type, NF3REG);
    assert_int_equal(a.mode, 0100640);
    assert_int_equal(a.nlink, 2);
    assert_int_equal(a.uid, 1001);
    assert_int_equal(a.gid, 2002);
    assert_int_equal(a.size, 4711);
    xdr_free(f->q.xres, &res);

    /* READ: attributes decoded, the data not. */
    READ3res rr = { .status = NFS3_OK };
    rr.READ3res_u.resok.file_attributes.attributes_follow = TRUE;
    rr.READ3res_u.resok.file_attributes.post_op_attr_u.attributes = fa;
    rr.READ3res_u.resok.count = sizeof(data);
    rr.READ3res_u.resok.data.data_len = sizeof(data);
    rr.READ3res_u.resok.data.data_val = data;
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_READ), ID_A);
    set_io(&f->rec, 0, 16);
    set_attrs(&f->rec);
    build_ok(f, 3);
    encode_decode_res(f, (xdrproc_t)xdr_READ3res, &rr, &res);
    assert_true(tbbt_nfsreq_post_attr(3, NFSPROC3_READ, &res, &a));
    assert_int_equal(a.size, 4711);
    assert_null(res.read3.READ3res_u.resok.data.data_val);
    xdr_free(f->q.xres, &res);

    /* WRITE: the wcc "after"; absent attributes: false. */
    WRITE3res wr = { .status = NFS3_OK };
    wr.WRITE3res_u.resok.file_wcc.after.attributes_follow = TRUE;
    wr.WRITE3res_u.resok.file_wcc.after.post_op_attr_u.attributes = fa;
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_WRITE), ID_A);
    set_io(&f->rec, 0, 16);
    set_attrs(&f->rec);
    build_ok(f, 3);
    encode_decode_res(f, (xdrproc_t)xdr_WRITE3res, &wr, &res);
    assert_true(tbbt_nfsreq_post_attr(3, NFSPROC3_WRITE, &res, &a));
    assert_int_equal(a.uid, 1001);
    xdr_free(f->q.xres, &res);
    wr.WRITE3res_u.resok.file_wcc.after.attributes_follow = FALSE;
    encode_decode_res(f, (xdrproc_t)xdr_WRITE3res, &wr, &res);
    assert_false(tbbt_nfsreq_post_attr(3, NFSPROC3_WRITE, &res, &a));
    xdr_free(f->q.xres, &res);

    /* GETATTR not OK: nothing. */
    GETATTR3res gr = { .status = NFS3ERR_STALE };
    set_id(rec_new(f, TBBT_PROG_NFS3, NFSPROC3_GETATTR), ID_A);
    set_attrs(&f->rec);
    build_ok(f, 3);
    encode_decode_res(f, (xdrproc_t)xdr_GETATTR3res, &gr, &res);
    assert_false(tbbt_nfsreq_post_attr(3, NFSPROC3_GETATTR, &res, &a));
    xdr_free(f->q.xres, &res);
}

static void test_readdir_tail_v3(void **state)
{
    struct fix *f = *state;
    entry3 e[3] = {
        { 100, "a", 1, &e[1] }, { 101, "b", 2, &e[2] }, { 102, "c", 0x7777, NULL }
    };
    READDIR3res rd = { .status = NFS3_OK };
    union tbbt_nfsreq_res res;
    struct tbbt_nfsreq_listing l;

    memcpy(rd.READDIR3res_u.resok.cookieverf, "\0\0\0\0\0\0\1\2", 8);
    rd.READDIR3res_u.resok.reply.entries = e;
    rd.READDIR3res_u.resok.reply.eof = TRUE;
    build_readdir3(f, NFSPROC3_READDIR);
    encode_decode_res(f, (xdrproc_t)xdr_READDIR3res, &rd, &res);
    assert_true(tbbt_nfsreq_readdir(3, NFSPROC3_READDIR, &res, &l));
    assert_int_equal(l.n, 3);
    assert_int_equal(l.last_cookie, 0x7777);
    assert_int_equal(l.verf, 0x0102);
    assert_true(l.eof);
    xdr_free(f->q.xres, &res);

    /* No entries: true, no entries, verf and eof reported. */
    rd.READDIR3res_u.resok.reply.entries = NULL;
    rd.READDIR3res_u.resok.reply.eof = FALSE;
    encode_decode_res(f, (xdrproc_t)xdr_READDIR3res, &rd, &res);
    assert_true(tbbt_nfsreq_readdir(3, NFSPROC3_READDIR, &res, &l));
    assert_int_equal(l.n, 0);
    assert_int_equal(l.verf, 0x0102);
    assert_false(l.eof);
    xdr_free(f->q.xres, &res);

    /* Not OK. */
    rd = (READDIR3res){ .status = NFS3ERR_BAD_COOKIE };
    encode_decode_res(f, (xdrproc_t)xdr_READDIR3res, &rd, &res);
    assert_false(tbbt_nfsreq_readdir(3, NFSPROC3_READDIR, &res, &l));
    xdr_free(f->q.xres, &res);
}

static void test_readdir_tail_v3plus(void **state)
{
    struct fix *f = *state;
    char h[8] = "handle!";
    entryplus3 e[2] = { { .fileid = 7, .name = "x", .cookie = 10, .nextentry = &e[1] },
                        { .fileid = 8, .name = "y", .cookie = 20, .nextentry = NULL } };
    READDIRPLUS3res rd = { .status = NFS3_OK };
    union tbbt_nfsreq_res res;
    struct tbbt_nfsreq_listing l;

    e[1].name_handle.handle_follows = TRUE;
    e[1].name_handle.post_op_fh3_u.handle.data.data_len = sizeof(h);
    e[1].name_handle.post_op_fh3_u.handle.data.data_val = h;
    memcpy(rd.READDIRPLUS3res_u.resok.cookieverf, "\xff\0\0\0\0\0\0\0", 8);
    rd.READDIRPLUS3res_u.resok.reply.entries = e;
    build_readdir3(f, NFSPROC3_READDIRPLUS);
    encode_decode_res(f, (xdrproc_t)xdr_READDIRPLUS3res, &rd, &res);
    assert_true(tbbt_nfsreq_readdir(3, NFSPROC3_READDIRPLUS, &res, &l));
    assert_int_equal(l.n, 2);
    assert_int_equal(l.last_cookie, 20);
    assert_int_equal(l.verf, 0xff00000000000000ull);
    assert_false(l.eof);
    /* Not a readdir procedure: false. */
    assert_false(tbbt_nfsreq_readdir(3, NFSPROC3_LOOKUP, &res, &l));
    xdr_free(f->q.xres, &res);
}

static void test_readdir_tail_v2(void **state)
{
    struct fix *f = *state;
    nfs2_entry e[2] = { { 1, "p", "\0\0\0\1", &e[1] }, { 2, "q", "\0\1\0\2", NULL } };
    nfs2_readdirres rd = { .status = NFS_OK };
    struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, NFSPROC_READDIR);
    union tbbt_nfsreq_res res;
    struct tbbt_nfsreq_listing l;

    set_id(r, ID_A);
    r->count = 1024;
    TBBT_SET(r, TBBT_F_COUNT);
    TBBT_SET(r, TBBT_F_COOKIE);
    build_ok(f, 2);
    rd.nfs2_readdirres_u.readdirok.entries = e;
    rd.nfs2_readdirres_u.readdirok.eof = TRUE;
    encode_decode_res(f, (xdrproc_t)xdr_nfs2_readdirres, &rd, &res);
    assert_true(tbbt_nfsreq_readdir(2, NFSPROC_READDIR, &res, &l));
    assert_int_equal(l.n, 2);
    assert_int_equal(l.last_cookie, 0x00010002);
    assert_int_equal(l.verf, 0);
    assert_true(l.eof);
    xdr_free(f->q.xres, &res);

    rd = (nfs2_readdirres){ .status = NFSERR_STALE };
    encode_decode_res(f, (xdrproc_t)xdr_nfs2_readdirres, &rd, &res);
    assert_false(tbbt_nfsreq_readdir(2, NFSPROC_READDIR, &res, &l));
    xdr_free(f->q.xres, &res);
}

/* Every procedure that builds has an encoder, and only the listed ones a decoder (those
 * read only for the object's attributes when the record has traced attributes). */
static void test_xres_only_where_needed(void **state)
{
    struct fix *f = *state;
    int decoded3 = 0, plain3 = 0, decoded2 = 0;

    for (int p = 0; p < 22; p++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS3, p);

        set_id(r, ID_DIR);
        set_id2(r, ID_A);
        set_name(r, "n");
        set_name2(r, "m");
        set_target(r, "t");
        set_io(r, 0, 512);
        set_sattr(r);
        set_cookie_fields(r);
        r->present |= (uint64_t)1 << TBBT_F_ACCESS | (uint64_t)1 << TBBT_F_CREATEMODE |
                      (uint64_t)1 << TBBT_F_FTYPE | (uint64_t)1 << TBBT_F_DIRCOUNT |
                      (uint64_t)1 << TBBT_F_MAXCOUNT;
        r->ftype = NF3SOCK;
        build_ok(f, 3);
        plain3 += f->q.xres != NULL;
        set_attrs(r);
        build_ok(f, 3);
        if (f->q.xres) {
            decoded3++;
            assert_true(f->q.res_size > 0 && f->q.res_size <= sizeof(union tbbt_nfsreq_res));
        }
    }
    for (int p = 0; p < 18; p++) {
        struct tbbt_trace_rec *r = rec_new(f, TBBT_PROG_NFS2, p);

        set_id(r, ID_A);
        set_id2(r, ID_B);
        set_name(r, "n");
        set_name2(r, "m");
        set_target(r, "t");
        set_io(r, 0, 512);
        set_sattr(r);
        set_cookie_fields(r);
        if (p == NFSPROC_ROOT || p == NFSPROC_WRITECACHE) {
            assert_int_equal(build_rc(f, NULL), TBBT_NFSREQ_NOT_NFS);
            continue;
        }
        build_ok(f, 2);
        decoded2 += f->q.xres != NULL;
    }
    assert_int_equal(decoded3, 18);   /* all but NULL, REMOVE, RMDIR, RENAME */
    assert_int_equal(plain3, 7);      /* without traced attributes: LOOKUP, the four
                                         creates, READDIR, READDIRPLUS */
    assert_int_equal(decoded2, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v3_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_obj, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_attr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_setattr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_dirop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_access, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_read_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_mkdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_mknod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_readdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v3_readdirplus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_null_root_writecache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_obj, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_setattr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_dirop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_create_mkdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2_readdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_nfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_handle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsendable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_needs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_cookie_noop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_fh_v3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_fh_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readdir_tail_v3, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readdir_tail_v3plus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readdir_tail_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xres_only_where_needed, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
