/* SPDX-License-Identifier: MIT */
/*
 * The fast XDR decode stream (src/proto/xdrmem.h) against libtirpc's
 * xdrmem stream: every rpcgen type the converter decodes is decoded from the
 * same bytes by both, many times over random and mutated inputs biased to
 * small words (so that union arms, optional data and list links are taken);
 * both must agree on success, on the position reached, and on the value
 * (compared by re-encoding it with libtirpc).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-rand.h"

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/xdrmem.h"

#define BUF 1024
#define ROUNDS 4000

struct type {
    const char *name;
    xdrproc_t proc;
    size_t size;
};

#define T(t) {#t, (xdrproc_t)xdr_##t, sizeof(t)}
static const struct type types[] = {
    T(fattr3), T(post_op_attr), T(wcc_data), T(sattr3), T(nfs_fh3), T(diropargs3),
    T(GETATTR3res), T(SETATTR3args), T(SETATTR3res), T(LOOKUP3res), T(ACCESS3res),
    T(READLINK3res), T(READ3args), T(READ3res), T(WRITE3args), T(WRITE3res),
    T(CREATE3args), T(CREATE3res), T(MKDIR3res), T(SYMLINK3args), T(SYMLINK3res),
    T(MKNOD3args), T(MKNOD3res), T(REMOVE3res), T(RENAME3args), T(RENAME3res),
    T(LINK3args), T(LINK3res), T(READDIR3args), T(READDIR3res), T(READDIRPLUS3args),
    T(READDIRPLUS3res), T(FSSTAT3res), T(FSINFO3res), T(PATHCONF3res), T(COMMIT3args),
    T(COMMIT3res), T(nfs2_attrstat), T(nfs2_diropres), T(nfs2_readres),
    T(nfs2_writeargs), T(nfs2_readdirres), T(nfs2_statfsres), T(nfs2_sattrargs),
    T(mountres3), T(fhstatus), T(exports),
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
    return (uint32_t)(test_rand_next(&rng) >> 32);
}

/* A word biased to what XDR reads as discriminants, booleans and lengths. */
static uint32_t word(void)
{
    uint32_t r = next() % 10;

    if (r < 5)
        return next() % 3;
    if (r < 7)
        return next() % 70;
    return next();
}

static void fill(uint8_t *b, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t w = word();
        b[i] = (uint8_t)(w >> 24);
        b[i + 1] = (uint8_t)(w >> 16);
        b[i + 2] = (uint8_t)(w >> 8);
        b[i + 3] = (uint8_t)w;
    }
}

/* Re-encodes obj with libtirpc; returns the length, or -1 if it does not encode. */
static int encode(const struct type *t, void *obj, uint8_t *out)
{
    XDR x;
    int n = -1;

    xdrmem_create(&x, (char *)out, 4 * BUF, XDR_ENCODE);
    if (t->proc(&x, obj))
        n = (int)xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

/* Both streams over buf[0..len): libtirpc's (xa) and ours (xb). */
static void open_both(XDR *xa, XDR *xb, const uint8_t *buf, u_int len)
{
    xdrmem_create(xa, (char *)(uintptr_t)buf, len, XDR_DECODE);
    tbbt_xdrmem_create(xb, buf, len);
}

/* Returns whether the bytes decoded. */
static bool compare(const struct type *t, const uint8_t *buf, u_int len)
{
    static uint8_t enc_a[4 * BUF], enc_b[4 * BUF];
    void *a = calloc(1, t->size), *b = calloc(1, t->size);
    XDR xa, xb;
    bool_t ra, rb;

    assert_non_null(a);
    assert_non_null(b);
    open_both(&xa, &xb, buf, len);
    ra = t->proc(&xa, a);
    rb = t->proc(&xb, b);
    if (ra != rb || (ra && xdr_getpos(&xa) != xdr_getpos(&xb)))
        fail_msg("%s: libtirpc %d at %u, tbbt_xdrmem %d at %u (len %u)", t->name, ra,
                 xdr_getpos(&xa), rb, xdr_getpos(&xb), len);
    if (ra) {
        int na = encode(t, a, enc_a), nb = encode(t, b, enc_b);
        assert_int_equal(na, nb);
        if (na > 0)
            assert_memory_equal(enc_a, enc_b, (size_t)na);
    }
    xdr_free(t->proc, a);
    xdr_free(t->proc, b);
    xdr_destroy(&xa);
    free(a);
    free(b);
    return ra;
}

static void test_random(void **state)
{
    static uint32_t words[BUF / 4];   /* word-aligned, as a received message */
    uint8_t *buf = (uint8_t *)words;

    (void)state;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        int ok = 0;
        for (int r = 0; r < ROUNDS; r++) {
            u_int len = next() % BUF;
            fill(buf, BUF);
            ok += compare(&types[i], buf, len);
            /* the same bytes at an odd position: no aligned fast path may be taken */
            if (len > 1) {
                static uint8_t odd[BUF + 1];
                memcpy(odd + 1, buf, len - 1);
                compare(&types[i], odd + 1, len - 1);
            }
        }
        /* the inputs reach the success paths, not only the failures */
        if (ok < ROUNDS / 100)
            fail_msg("%s decoded only %d times of %d", types[i].name, ok, ROUNDS);
    }
}

/* The two decodes agree on the result and, if they succeeded, on the position. */
static void assert_agree(bool_t ra, bool_t rb, XDR *xa, XDR *xb)
{
    assert_int_equal(ra, rb);
    if (ra)
        assert_int_equal(xdr_getpos(xa), xdr_getpos(xb));
}

/*
 * xdr_bytes and xdr_string into buffers the caller gives (the converter's
 * way; the random test above leaves the pointers NULL, so libtirpc
 * allocates there): the same results, sizes and bytes from both streams.
 */
static void test_caller_buffers(void **state)
{
    static uint32_t words[BUF / 4];
    uint8_t *buf = (uint8_t *)words;

    (void)state;
    for (int r = 0; r < 20000; r++) {
        u_int len = next() % 200;
        char fa[NFS3_FHSIZE + 8], fb[NFS3_FHSIZE + 8], sa[NFS3_MAXNAMLEN + 1], sb[NFS3_MAXNAMLEN + 1];
        nfs_fh3 ha = {.data = {.data_len = 77, .data_val = fa}};
        nfs_fh3 hb = {.data = {.data_len = 77, .data_val = fb}};
        char *pa = sa, *pb = sb;
        XDR xa, xb;
        bool_t ra, rb;

        fill(buf, BUF);
        if (r & 1)          /* a plausible length word first */
            words[0] = htonl(next() % 80);
        memset(fa, 0, sizeof fa);
        memset(fb, 0, sizeof fb);
        open_both(&xa, &xb, buf, len);
        ra = xdr_nfs_fh3(&xa, &ha);
        rb = xdr_nfs_fh3(&xb, &hb);
        assert_agree(ra, rb, &xa, &xb);
        assert_int_equal(ha.data.data_len, hb.data.data_len);
        assert_memory_equal(fa, fb, sizeof fa);
        memset(sa, 1, sizeof sa);
        memset(sb, 1, sizeof sb);
        open_both(&xa, &xb, buf, len);
        ra = xdr_filename3(&xa, &pa);
        rb = xdr_filename3(&xb, &pb);
        assert_agree(ra, rb, &xa, &xb);
        assert_memory_equal(sa, sb, sizeof sa);
    }
}

/* Positions, setpos and the libtirpc routines that go through the operations table. */
static void test_stream(void **state)
{
    static const uint8_t b[16] = {0, 0, 0, 3, 'a', 'b', 'c', 0, 0xff, 0xff, 0xff, 0xff,
                                  0, 0, 0, 2};
    char s[8], *sp = s;
    u_int u;
    bool_t yes;
    XDR x;

    (void)state;
    tbbt_xdrmem_create(&x, b, sizeof b);
    assert_true(xdr_string(&x, &sp, sizeof s));
    assert_string_equal(s, "abc");
    assert_int_equal(xdr_getpos(&x), 8);
    assert_true(tbbt_xdr_u_int(&x, &u));
    assert_int_equal(u, 0xffffffffu);
    assert_true(tbbt_xdr_bool(&x, &yes));
    assert_int_equal(yes, TRUE);          /* 2 is TRUE, as in libtirpc */
    assert_false(tbbt_xdr_u_int(&x, &u));
    assert_false(xdr_setpos(&x, 17));
    assert_true(xdr_setpos(&x, 4));
    assert_int_equal(xdr_getpos(&x), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_caller_buffers),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
