/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the onc module's record marking (RFC 5531 section 11: onc/recmark.c)
 * and RPC header parser (RFC 5531 section 9: onc/hdr.c), without sockets: fragment
 * marks, reassembly fed whole, byte by byte and in fragments, size limits, the
 * proxy's scanner; call and reply headers of every reply kind, cuts at every byte
 * with and without the truncation flag, and hostile lengths and mutations; the table
 * of outstanding calls by XID (onc/xidtab.c).
 * The client transport has its own tests (test-rpcconn.c); the converter's view of
 * the header (extract/rpc.h) is tested in test-extract.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "onc/onc.h"
#include "util/util.h"

/* ------------------------------------------------------------------ helpers */

struct msg {
    uint8_t b[2048];
    size_t n;
};

static void put(struct msg *m, uint32_t v)
{
    assert_true(m->n + 4 <= sizeof(m->b));
    m->b[m->n++] = (uint8_t)(v >> 24);
    m->b[m->n++] = (uint8_t)(v >> 16);
    m->b[m->n++] = (uint8_t)(v >> 8);
    m->b[m->n++] = (uint8_t)v;
}

static void put_bytes(struct msg *m, const void *p, size_t n)
{
    assert_true(m->n + n <= sizeof(m->b));
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

/* A call to prog/vers/proc with an AUTH_SYS credential (machine "client", uid 1000,
 * gid 100, gids 100 and 200) and an AUTH_NONE verifier, then 8 bytes of arguments. */
static void call_authsys(struct msg *m, uint32_t xid)
{
    m->n = 0;
    put(m, xid);
    put(m, TBBT_ONC_CALL);
    put(m, 2);
    put(m, 100003);
    put(m, 3);
    put(m, 6);
    put(m, TBBT_ONC_AUTH_SYS);
    put(m, 4 + 4 + 8 + 4 + 4 + 4 + 8);    /* stamp, name, uid, gid, gids */
    put(m, 77);                           /* stamp */
    put(m, 6);
    put_bytes(m, "client\0\0", 8);
    put(m, 1000);
    put(m, 100);
    put(m, 2);
    put(m, 100);
    put(m, 200);
    put(m, 0);                            /* verifier AUTH_NONE, empty */
    put(m, 0);
    put(m, 0xaaaaaaaa);                   /* arguments */
    put(m, 0xbbbbbbbb);
}

/* An accepted reply with accept_stat stat (and its mismatch words if PROG_MISMATCH). */
static void reply_accepted(struct msg *m, uint32_t xid, uint32_t stat)
{
    m->n = 0;
    put(m, xid);
    put(m, TBBT_ONC_REPLY);
    put(m, 0);                            /* MSG_ACCEPTED */
    put(m, 0);                            /* verifier */
    put(m, 0);
    put(m, stat);
    if (stat == TBBT_ONC_PROG_MISMATCH) {
        put(m, 2);
        put(m, 4);
    }
}

/* ------------------------------------------------------------------ marks */

static void test_mark_codec(void **state)
{
    uint8_t p[4];
    bool last;

    (void)state;
    tbbt_onc_mark_put(p, 0x1234, true);
    assert_memory_equal(p, "\x80\x00\x12\x34", 4);
    assert_int_equal(tbbt_onc_mark_get(p, &last), 0x1234);
    assert_true(last);
    tbbt_onc_mark_put(p, TBBT_ONC_FRAG_MAX, false);
    assert_memory_equal(p, "\x7f\xff\xff\xff", 4);
    assert_int_equal(tbbt_onc_mark_get(p, &last), TBBT_ONC_FRAG_MAX);
    assert_false(last);
    tbbt_onc_mark_put(p, 0, true);
    assert_int_equal(tbbt_onc_mark_get(p, &last), 0);
    assert_true(last);
}

/* ------------------------------------------------------------------ reassembly */

/* Records of sizes 1..n (bytes i, i+1, ...), each split into fragments of at most
 * frag bytes (0: one fragment), marks included, into out; returns the length. */
static size_t make_stream(uint8_t *out, size_t cap, int n, size_t frag)
{
    size_t o = 0;

    for (int r = 1; r <= n; r++) {
        size_t len = (size_t)r, done = 0;
        do {
            size_t f = frag && len - done > frag ? frag : len - done;
            assert_true(o + 4 + f <= cap);
            tbbt_onc_mark_put(out + o, (uint32_t)f, done + f == len);
            o += 4;
            for (size_t i = 0; i < f; i++)
                out[o++] = (uint8_t)(r + done + i);
            done += f;
        } while (done < len);
    }
    return o;
}

/* Feeds stream[0..len) to a reassembler step bytes at a time (the unused bytes are
 * offered again with the next ones, as a socket buffer would); checks the records. */
static void feed(const uint8_t *stream, size_t len, size_t step, int nrec)
{
    struct tbbt_onc_recasm a;
    size_t head = 0, tail = 0;
    int got = 0;

    tbbt_onc_recasm_init(&a, 1 << 20);
    while (head < len) {
        const uint8_t *rec;
        size_t used, rlen;
        int rc;

        tail = tail + step > len ? len : tail + step;
        while ((rc = tbbt_onc_recasm_next(&a, stream + head, tail - head, &used, &rec,
                                          &rlen)) == 1) {
            head += used;
            got++;
            assert_int_equal(rlen, got);
            for (size_t i = 0; i < rlen; i++)
                assert_int_equal(rec[i], (uint8_t)(got + i));
        }
        assert_int_equal(rc, 0);
        head += used;
        if (tail == len && head < len)
            fail_msg("bytes left over at the end of the stream");
    }
    assert_int_equal(got, nrec);
    assert_false(tbbt_onc_recasm_busy(&a));
    tbbt_onc_recasm_fini(&a);
}

static void test_recasm_feeds(void **state)
{
    static uint8_t stream[1 << 16];
    static const size_t frags[] = {0, 1, 3, 7, 64};
    static const size_t steps[] = {1, 2, 3, 5, 17, 4096, sizeof(stream)};

    (void)state;
    for (size_t f = 0; f < G_N_ELEMENTS(frags); f++) {
        size_t len = make_stream(stream, sizeof(stream), 100, frags[f]);
        for (size_t s = 0; s < G_N_ELEMENTS(steps); s++)
            feed(stream, len, steps[s], 100);
    }
}

static void test_recasm_in_place(void **state)
{
    uint8_t s[16];
    const uint8_t *rec;
    size_t used, len;
    struct tbbt_onc_recasm a;

    (void)state;
    tbbt_onc_recasm_init(&a, 64);
    tbbt_onc_mark_put(s, 4, true);
    memcpy(s + 4, "abcd", 4);
    tbbt_onc_mark_put(s + 8, 0, false);   /* an empty fragment, then an empty last one */
    tbbt_onc_mark_put(s + 12, 0, true);
    assert_int_equal(tbbt_onc_recasm_next(&a, s, sizeof(s), &used, &rec, &len), 1);
    assert_ptr_equal(rec, s + 4);         /* one whole fragment: not copied */
    assert_int_equal(len, 4);
    assert_int_equal(used, 8);
    assert_int_equal(tbbt_onc_recasm_next(&a, s + 8, 8, &used, &rec, &len), 1);
    assert_int_equal(len, 0);
    assert_int_equal(used, 8);
    /* Three bytes of a mark are left for later. */
    assert_int_equal(tbbt_onc_recasm_next(&a, s, 3, &used, &rec, &len), 0);
    assert_int_equal(used, 0);
    assert_false(tbbt_onc_recasm_busy(&a));
    tbbt_onc_recasm_fini(&a);
}

static void test_recasm_limits(void **state)
{
    uint8_t s[64];
    const uint8_t *rec;
    size_t used, len;
    struct tbbt_onc_recasm a;

    (void)state;
    tbbt_onc_recasm_init(&a, 16);
    /* A fragment over the limit: refused before any byte of it is taken. */
    tbbt_onc_mark_put(s, 17, true);
    assert_int_equal(tbbt_onc_recasm_next(&a, s, 4, &used, &rec, &len), TBBT_E_BADREC);
    assert_int_equal(a.bad_mark, 0x80000011u);
    assert_int_equal(used, 0);
    /* The hostile maximum. */
    memset(s, 0xff, 4);
    tbbt_onc_recasm_reset(&a);
    assert_int_equal(tbbt_onc_recasm_next(&a, s, 4, &used, &rec, &len), TBBT_E_BADREC);
    /* Fragments within the limit that add up to more: refused at the mark too many. */
    tbbt_onc_recasm_reset(&a);
    tbbt_onc_mark_put(s, 10, false);
    memset(s + 4, 'x', 10);
    tbbt_onc_mark_put(s + 14, 7, true);
    assert_int_equal(tbbt_onc_recasm_next(&a, s, 18, &used, &rec, &len), TBBT_E_RANGE);
    assert_int_equal(used, 14);
    /* Up to the limit exactly is fine. */
    tbbt_onc_recasm_reset(&a);
    tbbt_onc_mark_put(s + 14, 6, true);
    memset(s + 18, 'y', 6);
    assert_int_equal(tbbt_onc_recasm_next(&a, s, 24, &used, &rec, &len), 1);
    assert_int_equal(len, 16);
    assert_memory_equal(rec, "xxxxxxxxxxyyyyyy", 16);
    /* A limit over what a mark can say is cut to it. */
    tbbt_onc_recasm_fini(&a);
    tbbt_onc_recasm_init(&a, SIZE_MAX);
    assert_int_equal(a.max_record, TBBT_ONC_FRAG_MAX);
    tbbt_onc_recasm_fini(&a);
}

/* ------------------------------------------------------------------ scanning */

static void test_recscan(void **state)
{
    static uint8_t stream[4096];
    struct tbbt_onc_recscan sc = {0};
    uint8_t hdr[8];
    size_t len, off = 0, rlen;
    int n = 0;

    (void)state;
    len = make_stream(stream, sizeof(stream), 30, 4);
    /* Offered a growing buffer: each record found once, marks included. */
    for (size_t have = 0; have <= len; have++) {
        while (tbbt_onc_recscan_next(&sc, stream + off, have - off, 1000, 1000, &rlen) == 1) {
            n++;
            assert_int_equal(tbbt_onc_rec_payload(stream + off, rlen, hdr, sizeof(hdr)),
                             n < 8 ? (size_t)n : 8);
            assert_int_equal(hdr[0], (uint8_t)n);
            assert_int_equal(rlen, (size_t)n + 4 * (((size_t)n + 3) / 4));
            off += rlen;
            sc.frag = 0;
        }
    }
    assert_int_equal(n, 30);
    assert_int_equal(off, len);
    /* A fragment over max_frag; a record over max_record. */
    memset(&sc, 0, sizeof(sc));
    tbbt_onc_mark_put(stream, 100, true);
    assert_int_equal(tbbt_onc_recscan_next(&sc, stream, 4, 99, 1000, &rlen), TBBT_E_BADREC);
    assert_int_equal(tbbt_onc_recscan_next(&sc, stream, 4, 100, 103, &rlen), TBBT_E_RANGE);
    assert_int_equal(tbbt_onc_recscan_next(&sc, stream, 4, 100, 104, &rlen), 0);
}

static void test_rec_payload_short(void **state)
{
    uint8_t rec[12], out[8];

    (void)state;
    /* A mark saying more than the bytes given: only what is there is copied. */
    tbbt_onc_mark_put(rec, 100, true);
    memcpy(rec + 4, "abcdefgh", 8);
    assert_int_equal(tbbt_onc_rec_payload(rec, sizeof(rec), out, 4), 4);
    assert_int_equal(tbbt_onc_rec_payload(rec, 6, out, sizeof(out)), 2);
    assert_int_equal(tbbt_onc_rec_payload(rec, 3, out, sizeof(out)), 0);
}

/* ------------------------------------------------------------------ headers */

static void test_hdr_call(void **state)
{
    struct msg m;
    struct tbbt_onc_hdr h;
    struct tbbt_onc_authsys a;
    uint32_t xid, type;

    (void)state;
    call_authsys(&m, 0x01020304);
    assert_int_equal(tbbt_onc_hdr_parse(m.b, m.n, false, &h), 0);
    assert_int_equal(h.dir, TBBT_ONC_CALL);
    assert_int_equal(h.xid, 0x01020304);
    assert_int_equal(h.prog, 100003);
    assert_int_equal(h.vers, 3);
    assert_int_equal(h.proc, 6);
    assert_int_equal(h.flavor, TBBT_ONC_AUTH_SYS);
    assert_int_equal(h.uid, 1000);
    assert_int_equal(h.gid, 100);
    assert_false(h.partial);
    assert_int_equal(h.body_off, m.n - 8);
    assert_ptr_equal(h.sys, m.b + 36);
    assert_true(tbbt_onc_authsys(h.sys, h.sys_len, &a));
    assert_int_equal(a.machine_len, 6);
    assert_memory_equal(a.machine, "client", 6);
    assert_int_equal(a.ngids, 2);
    assert_int_equal(a.gids[1], 200);
    assert_int_equal(a.gids[2], 0);
    assert_true(tbbt_onc_peek(m.b, m.n, &xid, &type));
    assert_int_equal(xid, 0x01020304);
    assert_int_equal(type, TBBT_ONC_CALL);
    assert_false(tbbt_onc_peek(m.b, 7, &xid, &type));
    assert_true(tbbt_onc_plausible(m.b));
    m.b[11] = 3;                          /* rpcvers 3 */
    assert_false(tbbt_onc_plausible(m.b));
    assert_int_equal(tbbt_onc_hdr_parse(m.b, m.n, false, &h), TBBT_E_BADREC);
}

static void test_hdr_replies(void **state)
{
    /* xid 5, REPLY, MSG_DENIED, then RPC_MISMATCH 2..3 or AUTH_ERROR AUTH_TOOWEAK */
    static const uint8_t mismatch[] = {0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0,
                                       0, 0, 0, 2, 0, 0, 0, 3};
    static const uint8_t autherr[] = {0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,
                                      0, 0, 0, 5};
    static const uint8_t rejbad[] = {0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2,
                                     0, 0, 0, 5};
    struct msg m;
    struct tbbt_onc_hdr h;

    (void)state;
    for (uint32_t stat = 0; stat <= 5; stat++) {
        reply_accepted(&m, 9, stat);
        assert_int_equal(tbbt_onc_hdr_parse(m.b, m.n, false, &h), 0);
        assert_int_equal(h.dir, TBBT_ONC_REPLY);
        assert_int_equal(h.rpc_stat, stat);
        assert_int_equal(h.body_off, m.n);
        if (stat == TBBT_ONC_PROG_MISMATCH) {
            assert_int_equal(h.low, 2);
            assert_int_equal(h.high, 4);
            /* without its version words */
            assert_int_equal(tbbt_onc_hdr_parse(m.b, m.n - 4, false, &h), TBBT_E_BADREC);
        }
    }
    reply_accepted(&m, 9, 6);             /* no such accept_stat: libtirpc refuses it */
    assert_int_equal(tbbt_onc_hdr_parse(m.b, m.n, false, &h), TBBT_E_BADREC);
    assert_int_equal(tbbt_onc_hdr_parse(mismatch, sizeof(mismatch), false, &h), 0);
    assert_int_equal(h.rpc_stat, TBBT_ONC_DENIED);
    assert_int_equal(h.low, 2);
    assert_int_equal(h.high, 3);
    assert_int_equal(tbbt_onc_hdr_parse(autherr, sizeof(autherr), false, &h), 0);
    assert_int_equal(h.rpc_stat, TBBT_ONC_DENIED + 1);
    assert_int_equal(h.auth_stat, 5);
    assert_int_equal(tbbt_onc_hdr_parse(rejbad, sizeof(rejbad), false, &h), TBBT_E_BADREC);
}

/* Every cut of a call and of a reply: malformed unless flagged as truncated; then
 * TBBT_E_TRUNC before the fixed part, a partial header after it. */
static void test_hdr_cuts(void **state)
{
    struct msg m;
    struct tbbt_onc_hdr h;
    size_t full;

    (void)state;
    call_authsys(&m, 1);
    full = m.n - 8;                       /* the header without the arguments */
    for (size_t cut = 0; cut < full; cut++) {
        assert_int_equal(tbbt_onc_hdr_parse(m.b, cut, false, &h), TBBT_E_BADREC);
        int rc = tbbt_onc_hdr_parse(m.b, cut, true, &h);
        if (cut < 24) {
            assert_int_equal(rc, TBBT_E_TRUNC);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(h.partial);
        assert_int_equal(h.proc, 6);
        assert_int_equal(h.flavor, UINT32_MAX);
        assert_int_equal(h.body_off, cut);
    }
    reply_accepted(&m, 2, 0);
    for (size_t cut = 0; cut < m.n; cut++) {
        assert_int_equal(tbbt_onc_hdr_parse(m.b, cut, false, &h), TBBT_E_BADREC);
        int rc = tbbt_onc_hdr_parse(m.b, cut, true, &h);
        assert_int_equal(rc, cut < 12 ? TBBT_E_TRUNC : 0);
        if (rc == 0) {
            assert_true(h.partial);
            assert_int_equal(h.rpc_stat, TBBT_ONC_SUCCESS);
        }
    }
}

static void test_hdr_hostile(void **state)
{
    struct msg m;
    struct tbbt_onc_hdr h;
    uint32_t seed = 12345;

    (void)state;
    /* Credential lengths past the bound and near UINT32_MAX (no wrap in the padding). */
    call_authsys(&m, 3);
    static const uint32_t lens[] = {401, 0x7fffffffu, 0xfffffffdu, 0xffffffffu};
    for (size_t i = 0; i < G_N_ELEMENTS(lens); i++) {
        struct msg c = m;
        c.n = 28;
        put(&c, lens[i]);
        c.n = m.n;
        assert_int_equal(tbbt_onc_hdr_parse(c.b, c.n, false, &h), TBBT_E_BADREC);
    }
    /* A machine name past 255 bytes and a gid count past 16: the call stays, its
     * credential is unusable. */
    struct msg c = m;
    c.n = 36;
    put(&c, 0xffffffffu);
    c.n = m.n;
    assert_int_equal(tbbt_onc_hdr_parse(c.b, c.n, false, &h), 0);
    assert_int_equal(h.flavor, UINT32_MAX);
    assert_null(h.sys);
    assert_false(tbbt_onc_authsys(c.b + 36, 40, &(struct tbbt_onc_authsys){0}));
    /* Random mutations: whatever is accepted stays within the message. */
    for (int i = 0; i < 200000; i++) {
        c = m;
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            c.b[(seed >> 8) % m.n] ^= (uint8_t)(seed >> 24);
        }
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 8) % (m.n + 1);
        bool trunc = seed & 1;
        if (tbbt_onc_hdr_parse(c.b, len, trunc, &h) != 0)
            continue;
        assert_true(h.body_off <= len);
        if (h.sys) {
            struct tbbt_onc_authsys a;
            assert_true(h.sys >= c.b && h.sys + h.sys_len <= c.b + len);
            assert_true(tbbt_onc_authsys(h.sys, h.sys_len, &a));
            assert_int_equal(a.uid, h.uid);
            assert_true(a.machine + a.machine_len <= h.sys + h.sys_len);
        }
    }
}

/* ------------------------------------------------------------------ XID table */

struct call {
    struct tbbt_onc_xident x;
    int id;
};

static bool odd_id(const struct tbbt_onc_xident *x, void *arg)
{
    (void)arg;
    return ((const struct call *)x)->id % 2 == 1;
}

static void test_xidtab(void **state)
{
    static struct call calls[5000];
    struct tbbt_onc_xidtab t;
    struct tbbt_onc_xident *l;
    size_t n = 0;

    (void)state;
    tbbt_onc_xidtab_init(&t, 3);          /* 4 buckets: grows many times */
    assert_int_equal(t.mask, 3);
    for (int i = 0; i < 5000; i++) {
        calls[i].x.xid = (uint32_t)i * 0x10000u;   /* the same low bits: one chain */
        calls[i].id = i;
        tbbt_onc_xidtab_insert(&t, &calls[i].x);
    }
    assert_int_equal(tbbt_onc_xidtab_count(&t), 5000);
    assert_ptr_equal(tbbt_onc_xidtab_remove(&t, 7 * 0x10000u), &calls[7].x);
    assert_null(tbbt_onc_xidtab_remove(&t, 7 * 0x10000u));
    assert_null(tbbt_onc_xidtab_remove(&t, 1));
    /* Odd ids, 100 at a time. */
    for (;;) {
        size_t k = 0;
        if (!(l = tbbt_onc_xidtab_take_if(&t, odd_id, NULL, 100)))
            break;
        for (; l; l = l->next, k++)
            assert_int_equal(((struct call *)l)->id % 2, 1);
        assert_true(k <= 100);
        n += k;
    }
    assert_int_equal(n, 2499);            /* 2500 odd ids less id 7 */
    assert_int_equal(tbbt_onc_xidtab_count(&t), 2500);
    /* The same XID twice: the last inserted comes out first. */
    calls[7].x.xid = 0;
    tbbt_onc_xidtab_insert(&t, &calls[7].x);
    assert_ptr_equal(tbbt_onc_xidtab_remove(&t, 0), &calls[7].x);
    assert_ptr_equal(tbbt_onc_xidtab_remove(&t, 0), &calls[0].x);
    for (n = 0, l = tbbt_onc_xidtab_take_all(&t); l; l = l->next)
        n++;
    assert_int_equal(n, 2499);
    assert_int_equal(tbbt_onc_xidtab_count(&t), 0);
    assert_null(tbbt_onc_xidtab_take_all(&t));
    tbbt_onc_xidtab_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_codec),
        cmocka_unit_test(test_recasm_feeds),
        cmocka_unit_test(test_recasm_in_place),
        cmocka_unit_test(test_recasm_limits),
        cmocka_unit_test(test_recscan),
        cmocka_unit_test(test_rec_payload_short),
        cmocka_unit_test(test_hdr_call),
        cmocka_unit_test(test_hdr_replies),
        cmocka_unit_test(test_hdr_cuts),
        cmocka_unit_test(test_hdr_hostile),
        cmocka_unit_test(test_xidtab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
