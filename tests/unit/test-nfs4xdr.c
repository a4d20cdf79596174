/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the NFSv4 XDR (src/proto/nfs4.x, rpcgen's nfs4.h and
 * nfs4_xdr.c) and of the NFSv4 name tables (nfs4op.def, status.def):
 *
 *  - a COMPOUND4args (SEQUENCE, PUTFH, OPEN with UNCHECKED4 create and
 *    attributes, GETFH, GETATTR) and a COMPOUND4res with a status per
 *    operation encode and decode back equal, through libtirpc's memory
 *    stream and through the fast decode stream of xdrmem.h;
 *  - hostile bytes (an operation count of 2^31, counts and opaque lengths
 *    past the bound or past the buffer) fail cleanly, and xdr_free() then
 *    leaves nothing allocated (the sanitizer build's LeakSanitizer checks);
 *  - random and mutated messages decode the same through both streams
 *    (success, position, value), as test-xdrmem.c checks for v2/v3;
 *  - the name tables cover every value of nfs_opnum4, nfs_cb_opnum4 and
 *    nfsstat4 as nfs4.x declares them, and nothing else.
 *
 * The four generated headers are included together: that they compile in
 * one translation unit is part of the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-rand.h"

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/nfs4.h"
#include "proto/proto.h"
#include "proto/xdrmem.h"

#define BUF 4096

/* ---- helpers ---------------------------------------------------------------- */

/* Encodes obj with proc into out (BUF bytes); returns the length. */
static u_int encode(xdrproc_t proc, void *obj, char *out)
{
    XDR x;
    u_int n;

    xdrmem_create(&x, out, BUF, XDR_ENCODE);
    assert_true(proc(&x, obj));
    n = xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

/* Decodes buf[0..len) into obj (zeroed first) with libtirpc's stream (fast false) or ours. */
static bool_t decode(xdrproc_t proc, void *obj, size_t size, const char *buf, u_int len, int fast)
{
    XDR x;
    bool_t ok;

    memset(obj, 0, size);
    if (fast)
        tbbt_xdrmem_create(&x, buf, len);
    else
        xdrmem_create(&x, (char *)(uintptr_t)buf, len, XDR_DECODE);
    ok = proc(&x, obj);
    if (ok)
        assert_int_equal(tbbt_xdr_getpos(&x), len);
    return ok;
}

/*
 * Decodes what obj encodes with both streams, and checks each decode
 * re-encodes to the same bytes; back keeps libtirpc's decode for the caller
 * to inspect and xdr_free().
 */
static void roundtrip(xdrproc_t proc, void *obj, void *back, size_t size)
{
    static char a[BUF], b[BUF];
    u_int n = encode(proc, obj, a);

    for (int fast = 1; fast >= 0; fast--) {
        assert_true(decode(proc, back, size, a, n, fast));
        assert_int_equal(encode(proc, back, b), n);
        assert_memory_equal(a, b, n);
        if (fast)
            xdr_free(proc, back);
    }
}

static void set_str(utf8string *s, const char *v)
{
    s->utf8string_len = (u_int)strlen(v);
    s->utf8string_val = (char *)(uintptr_t)v;
}

/* A big-endian word writer over a byte buffer, for hostile messages. */
struct words {
    char b[BUF];
    u_int n;
};

static void put(struct words *w, uint32_t v)
{
    assert_true(w->n + 4 <= sizeof w->b);
    w->b[w->n++] = (char)(v >> 24);
    w->b[w->n++] = (char)(v >> 16);
    w->b[w->n++] = (char)(v >> 8);
    w->b[w->n++] = (char)v;
}

/* Decodes w with both streams: must fail, and xdr_free() must release what was allocated. */
static void must_fail(xdrproc_t proc, size_t size, const struct words *w)
{
    void *obj = malloc(size);

    assert_non_null(obj);
    for (int fast = 0; fast < 2; fast++) {
        assert_false(decode(proc, obj, size, w->b, w->n, fast));
        xdr_free(proc, obj);
    }
    free(obj);
}

/* ---- COMPOUND4args ------------------------------------------------------------ */

static const char fh_bytes[] = "\x01\x00\x07\x00\x2a\x00\x00\x00\x11\x22\x33\x44";
static const char sessionid[NFS4_SESSIONID_SIZE] = "0123456789abcdef";

/* The attributes of the OPEN: size 0 (attribute 4) and mode 0644 (attribute 33). */
static uint32_t create_mask[2] = {1u << FATTR4_SIZE, 1u << (FATTR4_MODE - 32)};

static u_int create_vals(char *out)
{
    XDR x;
    fattr4_size size = 0;
    fattr4_mode mode = 0644;
    u_int n;

    xdrmem_create(&x, out, 64, XDR_ENCODE);
    assert_true(xdr_fattr4_size(&x, &size));
    assert_true(xdr_fattr4_mode(&x, &mode));
    n = xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

static uint32_t getattr_mask[2] = {1u << FATTR4_TYPE | 1u << FATTR4_SIZE,
                                   1u << (FATTR4_MODE - 32)};
static char create_attr_vals[64];

/* The call: SEQUENCE, PUTFH, OPEN (create, UNCHECKED4, size and mode), GETFH, GETATTR. */
static void make_args(COMPOUND4args *args_out, nfs_argop4 ops[5])
{
    COMPOUND4args args;
    char *vals = create_attr_vals;
    OPEN4args *open = &ops[2].nfs_argop4_u.opopen;
    createhow4 *how;

    memset(ops, 0, 5 * sizeof ops[0]);
    memset(&args, 0, sizeof args);
    set_str(&args.tag, "tbbt");
    args.minorversion = 2;
    args.argarray.argarray_len = 5;
    args.argarray.argarray_val = ops;

    ops[0].argop = OP_SEQUENCE;
    memcpy(ops[0].nfs_argop4_u.opsequence.sa_sessionid, sessionid, sizeof sessionid);
    ops[0].nfs_argop4_u.opsequence.sa_sequenceid = 7;
    ops[0].nfs_argop4_u.opsequence.sa_slotid = 1;
    ops[0].nfs_argop4_u.opsequence.sa_highest_slotid = 3;

    ops[1].argop = OP_PUTFH;
    ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_len = sizeof fh_bytes - 1;
    ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_val = (char *)(uintptr_t)fh_bytes;

    ops[2].argop = OP_OPEN;
    open->seqid = 0;
    open->share_access = OPEN4_SHARE_ACCESS_BOTH | OPEN4_SHARE_ACCESS_WANT_NO_DELEG;
    open->share_deny = OPEN4_SHARE_DENY_NONE;
    open->owner.clientid = 0x1122334455667788ull;
    open->owner.owner.owner_len = 8;
    open->owner.owner.owner_val = (char *)(uintptr_t)"open id:";
    open->openhow.opentype = OPEN4_CREATE;
    how = &open->openhow.openflag4_u.how;
    how->mode = UNCHECKED4;
    how->createhow4_u.createattrs.attrmask.bitmap4_len = 2;
    how->createhow4_u.createattrs.attrmask.bitmap4_val = create_mask;
    how->createhow4_u.createattrs.attr_vals.attrlist4_len = create_vals(vals);
    how->createhow4_u.createattrs.attr_vals.attrlist4_val = vals;
    open->claim.claim = CLAIM_NULL;
    set_str(&open->claim.open_claim4_u.file, "new-file.txt");

    ops[3].argop = OP_GETFH;

    ops[4].argop = OP_GETATTR;
    ops[4].nfs_argop4_u.opgetattr.attr_request.bitmap4_len = 2;
    ops[4].nfs_argop4_u.opgetattr.attr_request.bitmap4_val = getattr_mask;
    *args_out = args;
}

static void test_compound_args(void **state)
{
    char *vals = create_attr_vals;
    nfs_argop4 ops[5];
    COMPOUND4args args, back;

    (void)state;
    make_args(&args, ops);
    roundtrip((xdrproc_t)xdr_COMPOUND4args, &args, &back, sizeof back);

    /* The decoded call, field by field where it matters to a replay. */
    assert_int_equal(back.minorversion, 2);
    assert_int_equal(back.tag.utf8string_len, 4);
    assert_memory_equal(back.tag.utf8string_val, "tbbt", 4);
    assert_int_equal(back.argarray.argarray_len, 5);
    nfs_argop4 *b = back.argarray.argarray_val;
    assert_int_equal(b[0].argop, OP_SEQUENCE);
    assert_memory_equal(b[0].nfs_argop4_u.opsequence.sa_sessionid, sessionid, sizeof sessionid);
    assert_int_equal(b[0].nfs_argop4_u.opsequence.sa_sequenceid, 7);
    assert_int_equal(b[1].argop, OP_PUTFH);
    assert_int_equal(b[1].nfs_argop4_u.opputfh.object.nfs_fh4_len, sizeof fh_bytes - 1);
    assert_memory_equal(b[1].nfs_argop4_u.opputfh.object.nfs_fh4_val, fh_bytes,
                        sizeof fh_bytes - 1);
    assert_int_equal(b[2].argop, OP_OPEN);
    OPEN4args *bo = &b[2].nfs_argop4_u.opopen;
    assert_int_equal(bo->owner.clientid, 0x1122334455667788ull);
    assert_int_equal(bo->openhow.opentype, OPEN4_CREATE);
    createhow4 *bh = &bo->openhow.openflag4_u.how;
    assert_int_equal(bh->mode, UNCHECKED4);
    assert_int_equal(bh->createhow4_u.createattrs.attrmask.bitmap4_len, 2);
    assert_memory_equal(bh->createhow4_u.createattrs.attrmask.bitmap4_val, create_mask,
                        sizeof create_mask);
    assert_int_equal(bh->createhow4_u.createattrs.attr_vals.attrlist4_len, 12);
    assert_memory_equal(bh->createhow4_u.createattrs.attr_vals.attrlist4_val, vals, 12);
    assert_int_equal(bo->claim.claim, CLAIM_NULL);
    assert_int_equal(bo->claim.open_claim4_u.file.utf8string_len, 12);
    assert_memory_equal(bo->claim.open_claim4_u.file.utf8string_val, "new-file.txt", 12);
    assert_int_equal(b[3].argop, OP_GETFH);
    assert_int_equal(b[4].argop, OP_GETATTR);
    assert_memory_equal(b[4].nfs_argop4_u.opgetattr.attr_request.bitmap4_val, getattr_mask,
                        sizeof getattr_mask);
    xdr_free((xdrproc_t)xdr_COMPOUND4args, &back);
}

/* ---- COMPOUND4res ------------------------------------------------------------- */

/*
 * The status of result op: every nfs_resop4 arm is a struct or union whose
 * first member is its nfsstat4 (RFC 7863 section 2), so the arm's address is
 * its status's.
 */
static nfsstat4 op_status(const nfs_resop4 *op)
{
    return *(const nfsstat4 *)&op->nfs_resop4_u;
}

/* The reply: SEQUENCE, PUTFH, OPEN, GETFH succeed, GETATTR fails with NFS4ERR_DELAY. */
static void make_res(COMPOUND4res *out, nfs_resop4 res[5])
{
    COMPOUND4res reply;
    OPEN4resok *ok;

    memset(res, 0, 5 * sizeof res[0]);
    memset(&reply, 0, sizeof reply);
    reply.status = NFS4ERR_DELAY;   /* the status of the last operation */
    set_str(&reply.tag, "tbbt");
    reply.resarray.resarray_len = 5;
    reply.resarray.resarray_val = res;

    res[0].resop = OP_SEQUENCE;
    res[0].nfs_resop4_u.opsequence.sr_status = NFS4_OK;
    SEQUENCE4resok *seq = &res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4;
    memcpy(seq->sr_sessionid, sessionid, sizeof sessionid);
    seq->sr_sequenceid = 7;
    seq->sr_highest_slotid = 3;
    seq->sr_target_highest_slotid = 3;

    res[1].resop = OP_PUTFH;
    res[1].nfs_resop4_u.opputfh.status = NFS4_OK;

    res[2].resop = OP_OPEN;
    res[2].nfs_resop4_u.opopen.status = NFS4_OK;
    ok = &res[2].nfs_resop4_u.opopen.OPEN4res_u.resok4;
    ok->stateid.seqid = 1;
    memcpy(ok->stateid.other, "stateid-othr", NFS4_OTHER_SIZE);
    ok->cinfo.atomic = TRUE;
    ok->cinfo.before = 10;
    ok->cinfo.after = 11;
    ok->rflags = OPEN4_RESULT_LOCKTYPE_POSIX;
    ok->attrset.bitmap4_len = 2;
    ok->attrset.bitmap4_val = create_mask;
    ok->delegation.delegation_type = OPEN_DELEGATE_NONE_EXT;
    ok->delegation.open_delegation4_u.od_whynone.ond_why = WND4_NOT_WANTED;

    res[3].resop = OP_GETFH;
    res[3].nfs_resop4_u.opgetfh.status = NFS4_OK;
    res[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_len = sizeof fh_bytes - 1;
    res[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_val =
        (char *)(uintptr_t)fh_bytes;

    res[4].resop = OP_GETATTR;
    res[4].nfs_resop4_u.opgetattr.status = NFS4ERR_DELAY;
    *out = reply;
}

static void test_compound_res(void **state)
{
    nfs_resop4 res[5];
    COMPOUND4res reply, back;

    (void)state;
    make_res(&reply, res);
    roundtrip((xdrproc_t)xdr_COMPOUND4res, &reply, &back, sizeof back);

    static const nfsstat4 want[5] = {NFS4_OK, NFS4_OK, NFS4_OK, NFS4_OK, NFS4ERR_DELAY};
    static const nfs_opnum4 wantop[5] = {OP_SEQUENCE, OP_PUTFH, OP_OPEN, OP_GETFH, OP_GETATTR};
    assert_int_equal(back.status, NFS4ERR_DELAY);
    assert_int_equal(back.resarray.resarray_len, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(back.resarray.resarray_val[i].resop, wantop[i]);
        assert_int_equal(op_status(&back.resarray.resarray_val[i]), want[i]);
    }
    OPEN4resok *bo = &back.resarray.resarray_val[2].nfs_resop4_u.opopen.OPEN4res_u.resok4;
    assert_int_equal(bo->stateid.seqid, 1);
    assert_memory_equal(bo->stateid.other, "stateid-othr", NFS4_OTHER_SIZE);
    assert_int_equal(bo->cinfo.after, 11);
    assert_int_equal(bo->delegation.delegation_type, OPEN_DELEGATE_NONE_EXT);
    GETFH4resok *fh = &back.resarray.resarray_val[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4;
    assert_memory_equal(fh->object.nfs_fh4_val, fh_bytes, sizeof fh_bytes - 1);
    assert_string_equal(tbbt_proto_tok_name(tbbt_proto_nfsstat4, (int)back.status),
                        "NFS4ERR_DELAY");
    xdr_free((xdrproc_t)xdr_COMPOUND4res, &back);
}

/* ---- hostile input ------------------------------------------------------------- */

/* The header of a COMPOUND4args: tag "tbbt", minor version 1, then the operation count. */
static void args_header(struct words *w, uint32_t count)
{
    memset(w, 0, sizeof *w);
    put(w, 4);
    put(w, 0x74626274);   /* "tbbt" */
    put(w, 1);
    put(w, count);
}

static void putfh(struct words *w, uint32_t len)
{
    put(w, OP_PUTFH);
    put(w, len);
    for (u_int i = 0; i < len / 4 && i < 32; i++)
        put(w, 0x01020304);
}

static void test_hostile_counts(void **state)
{
    struct words w;

    (void)state;
    /* 2^31 operations, and one more than the bound, with one operation's bytes. */
    args_header(&w, 0x80000000u);
    putfh(&w, 8);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);
    args_header(&w, NFS4_MAXOPS + 1);
    putfh(&w, 8);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);
    args_header(&w, 0xffffffffu);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* Within the bound, but the bytes run out after two decoded operations (each allocated). */
    args_header(&w, 3);
    putfh(&w, 8);
    putfh(&w, 16);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* An unknown operation number ends decoding (the union has no default arm). */
    args_header(&w, 2);
    putfh(&w, 8);
    put(&w, 2);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* A reply with 2^31 results. */
    memset(&w, 0, sizeof w);
    put(&w, NFS4_OK);
    put(&w, 0);
    put(&w, 0x80000000u);
    put(&w, OP_PUTFH);
    put(&w, NFS4_OK);
    must_fail((xdrproc_t)xdr_COMPOUND4res, sizeof(COMPOUND4res), &w);
}

static void test_hostile_lengths(void **state)
{
    struct words w;

    (void)state;
    /* A tag of 2^31 bytes. */
    memset(&w, 0, sizeof w);
    put(&w, 0x80000000u);
    put(&w, 0);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* A handle past NFS4_FHSIZE, after a good operation. */
    args_header(&w, 2);
    putfh(&w, 8);
    putfh(&w, NFS4_FHSIZE + 4);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* A handle within its bound but past the end of the buffer. */
    args_header(&w, 1);
    put(&w, OP_PUTFH);
    put(&w, 64);
    put(&w, 0x01020304);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* WRITE data of 1 MiB (the bound) with 8 bytes present: libtirpc allocates, then fails. */
    args_header(&w, 1);
    put(&w, OP_WRITE);
    for (int i = 0; i < 4; i++)
        put(&w, 0);           /* stateid */
    put(&w, 0);
    put(&w, 0);               /* offset */
    put(&w, FILE_SYNC4);
    put(&w, NFS4_MAXDATA);
    put(&w, 0x61626364);
    put(&w, 0x65666768);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* OPEN with create attributes whose attrlist4 runs past the buffer (nested in unions). */
    args_header(&w, 1);
    put(&w, OP_OPEN);
    put(&w, 0);               /* seqid */
    put(&w, OPEN4_SHARE_ACCESS_BOTH);
    put(&w, OPEN4_SHARE_DENY_NONE);
    put(&w, 0);
    put(&w, 1);               /* clientid */
    put(&w, 4);
    put(&w, 0x6f776e72);      /* owner "ownr" */
    put(&w, OPEN4_CREATE);
    put(&w, GUARDED4);
    put(&w, 2);
    put(&w, create_mask[0]);
    put(&w, create_mask[1]);
    put(&w, 4096);            /* attr_vals length */
    put(&w, 0);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);

    /* A bitmap of 2^31 words. */
    args_header(&w, 1);
    put(&w, OP_GETATTR);
    put(&w, 0x80000000u);
    put(&w, 0);
    must_fail((xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args), &w);
}

/* ---- both streams on random and mutated bytes ------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
    return (uint32_t)(test_rand_next(&rng) >> 32);
}

/* A word biased to what XDR reads as discriminants, booleans, lengths and op numbers. */
static uint32_t word(void)
{
    uint32_t r = next() % 10;

    if (r < 4)
        return next() % 3;
    if (r < 6)
        return next() % 72;
    if (r < 7)
        return 10000 + next() % 100;
    return next();
}

/* Decodes buf with both streams; they must agree on success, position and value. */
static void same_both(xdrproc_t proc, size_t size, const char *buf, u_int len)
{
    static char ea[BUF * 4], eb[BUF * 4];
    void *a = calloc(1, size), *b = calloc(1, size);
    XDR xa, xb;
    bool_t ra, rb;

    assert_non_null(a);
    assert_non_null(b);
    xdrmem_create(&xa, (char *)(uintptr_t)buf, len, XDR_DECODE);
    tbbt_xdrmem_create(&xb, buf, len);
    ra = proc(&xa, a);
    rb = proc(&xb, b);
    assert_int_equal(ra, rb);
    if (ra) {
        XDR x;
        u_int na, nb;

        assert_int_equal(xdr_getpos(&xa), tbbt_xdr_getpos(&xb));
        xdrmem_create(&x, ea, sizeof ea, XDR_ENCODE);
        assert_true(proc(&x, a));
        na = xdr_getpos(&x);
        xdrmem_create(&x, eb, sizeof eb, XDR_ENCODE);
        assert_true(proc(&x, b));
        nb = xdr_getpos(&x);
        assert_int_equal(na, nb);
        assert_memory_equal(ea, eb, na);
    }
    xdr_free(proc, a);
    xdr_free(proc, b);
    free(a);
    free(b);
}

static void test_random_both_streams(void **state)
{
    static uint32_t words[BUF / 4];
    static const struct {
        xdrproc_t proc;
        size_t size;
    } types[] = {
        {(xdrproc_t)xdr_COMPOUND4args, sizeof(COMPOUND4args)},
        {(xdrproc_t)xdr_COMPOUND4res, sizeof(COMPOUND4res)},
        {(xdrproc_t)xdr_CB_COMPOUND4args, sizeof(CB_COMPOUND4args)},
        {(xdrproc_t)xdr_CB_COMPOUND4res, sizeof(CB_COMPOUND4res)},
    };
    char *buf = (char *)words;
    static char good[2][BUF];
    u_int good_len[2];
    nfs_argop4 ops[5];
    nfs_resop4 res[5];
    COMPOUND4args args;
    COMPOUND4res reply;

    (void)state;
    /* The sample call and reply with one to three words changed, whole or cut short. */
    make_args(&args, ops);
    good_len[0] = encode((xdrproc_t)xdr_COMPOUND4args, &args, good[0]);
    make_res(&reply, res);
    good_len[1] = encode((xdrproc_t)xdr_COMPOUND4res, &reply, good[1]);
    for (size_t t = 0; t < 2; t++) {
        for (int r = 0; r < 3000; r++) {
            u_int len = good_len[t], nw = len / 4;

            memcpy(buf, good[t], len);
            for (uint32_t k = 1 + next() % 3; k > 0; k--)
                words[next() % nw] = __builtin_bswap32(word());
            if (next() % 4 == 0)
                len = next() % len;
            same_both(types[t].proc, types[t].size, buf, len);
        }
    }
    /* Noise after a COMPOUND header that decodes (empty tag, a few operations). */
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (int r = 0; r < 3000; r++) {
            u_int len = next() % BUF;

            /* A COMPOUND header that decodes (empty tag, a few operations), then noise. */
            words[0] = 0;
            words[1] = __builtin_bswap32(next() % 3);
            words[2] = __builtin_bswap32(1 + next() % 4);
            for (size_t i = 3; i < BUF / 4; i++)
                words[i] = __builtin_bswap32(word());
            same_both(types[t].proc, types[t].size, buf, len);
        }
    }
}

/* ---- name tables ----------------------------------------------------------------- */

struct enum_row {
    char name[64];
    long value;
};

/*
 * Reads the rows of `enum <name> {` from nfs4.x (TBBT_NFS4_X, the source the
 * header was generated from) into rows; returns their number.
 */
static int read_enum(const char *name, struct enum_row *rows, int max)
{
    FILE *f = fopen(TBBT_NFS4_X, "r");
    char line[256], head[128];
    int n = 0, in = 0;

    assert_non_null(f);
    snprintf(head, sizeof head, "enum %s {", name);
    while (fgets(line, sizeof line, f) != NULL) {
        if (!in) {
            in = strncmp(line, head, strlen(head)) == 0;
            continue;
        }
        if (strncmp(line, "};", 2) == 0)
            break;
        assert_true(n < max);
        if (sscanf(line, " %63[A-Z0-9_] = %li", rows[n].name, &rows[n].value) == 2)
            n++;
    }
    fclose(f);
    assert_true(in);
    return n;
}

/* Table t has exactly the rows of enum name, with name prefix removed (OP_) or kept. */
static void table_is_enum(const struct tbbt_proto_tok *t, const char *name, size_t strip)
{
    static struct enum_row rows[256];
    int n = read_enum(name, rows, 256), k = 0;

    assert_true(n > 0);
    for (; t[k].name != NULL; k++) {
        assert_true(k < n);
        assert_int_equal(t[k].value, rows[k].value);
        assert_string_equal(t[k].name, rows[k].name + strip);
    }
    assert_int_equal(k, n);
}

static void test_names_cover_enums(void **state)
{
    (void)state;
    table_is_enum(tbbt_proto_nfs4_ops, "nfs_opnum4", strlen("OP_"));
    table_is_enum(tbbt_proto_nfs4_cb_ops, "nfs_cb_opnum4", strlen("OP_"));
    table_is_enum(tbbt_proto_nfsstat4, "nfsstat4", 0);
}

/*
 * The fast lookup names exactly the operations the XDR decodes: a result
 * whose words after the operation number are all zero decodes for every
 * arm of nfs_resop4 (NFS4_OK, empty lists, void union arms), so a number
 * decodes if and only if it is an operation.
 */
static void test_op_lookup(void **state)
{
    static char zero[256];
    int named = 0;

    (void)state;
    for (uint32_t op = 0; op <= 10100; op++) {
        const char *name = tbbt_proto_nfs4_op_name(op);
        uint32_t be = __builtin_bswap32(op);
        nfs_resop4 r;
        XDR x;
        bool_t ok;

        memcpy(zero, &be, 4);
        memset(&r, 0, sizeof r);
        tbbt_xdrmem_create(&x, zero, sizeof zero);
        ok = xdr_nfs_resop4(&x, &r);
        xdr_free((xdrproc_t)xdr_nfs_resop4, &r);
        assert_int_equal(ok, name != NULL);
        assert_int_equal(tbbt_proto_nfs4_op_minor(op) >= 0, name != NULL);
        if (name != NULL) {
            assert_string_equal(name, tbbt_proto_tok_name(tbbt_proto_nfs4_ops, (int)op));
            named++;
        }
    }
    assert_int_equal(named, 70);    /* ACCESS (3) .. CLONE (71), and ILLEGAL */
    assert_string_equal(tbbt_proto_nfs4_op_name(OP_OPEN), "OPEN");
    assert_string_equal(tbbt_proto_nfs4_op_name(OP_ILLEGAL), "ILLEGAL");
    assert_null(tbbt_proto_nfs4_op_name(0));
    assert_null(tbbt_proto_nfs4_op_name(OP_CLONE + 1));
    assert_int_equal(tbbt_proto_nfs4_op_minor(OP_OPEN), 0);
    assert_int_equal(tbbt_proto_nfs4_op_minor(OP_SEQUENCE), 1);
    assert_int_equal(tbbt_proto_nfs4_op_minor(OP_CLONE), 2);
    assert_string_equal(tbbt_proto_tok_name(tbbt_proto_nfs4_cb_ops, OP_CB_SEQUENCE),
                        "CB_SEQUENCE");
    assert_string_equal(tbbt_proto_tok_name(tbbt_proto_nfsstat4, NFS4ERR_BADSESSION),
                        "NFS4ERR_BADSESSION");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compound_args),
        cmocka_unit_test(test_compound_res),
        cmocka_unit_test(test_hostile_counts),
        cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_random_both_streams),
        cmocka_unit_test(test_names_cover_enums),
        cmocka_unit_test(test_op_lookup),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
