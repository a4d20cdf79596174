/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the extract module's RPC header layer (rpc.c) and the
 * call/reply pairer (pair.c): hand-built RPC messages, retransmissions,
 * replies out of order, lost replies, XID-based loss estimates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <rpc/rpc.h>
#include <string.h>

#include "extract/pair.h"
#include "extract/rpc.h"
#include "trace/trace.h"
#include "util/util.h"

/* ---- RPC headers ----------------------------------------------------------- */

static size_t build_call(uint8_t *buf, size_t cap, uint32_t xid, uint32_t prog, uint32_t vers,
                         uint32_t proc, bool authsys)
{
    char credbody[MAX_AUTH_BYTES];
    gid_t gids[2] = {100, 200};
    struct authunix_parms aup = {.aup_time = 1, .aup_machname = "client", .aup_uid = 1000,
                                 .aup_gid = 100, .aup_len = 2, .aup_gids = gids};
    struct rpc_msg m;
    XDR x;
    size_t len;

    memset(&m, 0, sizeof(m));
    m.rm_xid = xid;
    m.rm_direction = CALL;
    m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
    m.rm_call.cb_prog = prog;
    m.rm_call.cb_vers = vers;
    m.rm_call.cb_proc = proc;
    m.rm_call.cb_verf.oa_flavor = AUTH_NONE;
    if (authsys) {
        xdrmem_create(&x, credbody, sizeof(credbody), XDR_ENCODE);
        assert_true(xdr_authunix_parms(&x, &aup));
        m.rm_call.cb_cred.oa_flavor = AUTH_SYS;
        m.rm_call.cb_cred.oa_base = credbody;
        m.rm_call.cb_cred.oa_length = xdr_getpos(&x);
        xdr_destroy(&x);
    }
    xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
    assert_true(xdr_callmsg(&x, &m));
    len = xdr_getpos(&x);
    xdr_destroy(&x);
    return len;
}

static bool_t no_results(XDR *x, void *where)
{
    (void)x;
    (void)where;
    return TRUE;
}

static size_t build_reply(uint8_t *buf, size_t cap, uint32_t xid, enum accept_stat stat)
{
    struct rpc_msg m;
    XDR x;
    size_t len;

    memset(&m, 0, sizeof(m));
    m.rm_xid = xid;
    m.rm_direction = REPLY;
    m.rm_reply.rp_stat = MSG_ACCEPTED;
    m.acpted_rply.ar_verf.oa_flavor = AUTH_NONE;
    m.acpted_rply.ar_stat = stat;
    m.acpted_rply.ar_results.proc = (xdrproc_t)no_results;
    xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
    assert_true(xdr_replymsg(&x, &m));
    len = xdr_getpos(&x);
    xdr_destroy(&x);
    return len;
}

static void test_rpc_call_authsys(void **state)
{
    uint8_t buf[512];
    struct tbbt__rpc_hdr h;
    size_t len = build_call(buf, sizeof(buf), 0x01020304, 100003, 3, 6, true);

    (void)state;
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), 0);
    assert_int_equal(h.dir, TBBT__RPC_CALL);
    assert_int_equal(h.xid, 0x01020304);
    assert_int_equal(h.prog, 100003);
    assert_int_equal(h.vers, 3);
    assert_int_equal(h.proc, 6);
    assert_int_equal(h.flavor, AUTH_SYS);
    assert_int_equal(h.uid, 1000);
    assert_int_equal(h.gid, 100);
    assert_int_equal(h.body_off, len);
}

static void test_rpc_call_authnone(void **state)
{
    uint8_t buf[512];
    struct tbbt__rpc_hdr h;
    size_t len = build_call(buf, sizeof(buf), 7, 100005, 3, 1, false);

    (void)state;
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), 0);
    assert_int_equal(h.flavor, AUTH_NONE);
    assert_int_equal(h.uid, 0);
    assert_int_equal(h.body_off, 40);
}

static void test_rpc_reply(void **state)
{
    uint8_t buf[128];
    struct tbbt__rpc_hdr h;
    size_t len = build_reply(buf, sizeof(buf), 9, SUCCESS);

    (void)state;
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), 0);
    assert_int_equal(h.dir, TBBT__RPC_REPLY);
    assert_int_equal(h.rpc_stat, TBBT_RPC_SUCCESS);
    assert_int_equal(h.body_off, 24);
    len = build_reply(buf, sizeof(buf), 9, PROC_UNAVAIL);
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), 0);
    assert_int_equal(h.rpc_stat, TBBT_RPC_PROC_UNAVAIL);
}

static void test_rpc_denied(void **state)
{
    /* xid, REPLY, MSG_DENIED, AUTH_ERROR, AUTH_BADCRED */
    static const uint8_t msg[] = {0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    struct tbbt__rpc_hdr h;

    (void)state;
    assert_int_equal(tbbt__rpc_parse(msg, sizeof(msg), false, &h), 0);
    assert_int_equal(h.rpc_stat, TBBT_RPC_DENIED_AUTH);
}

static void test_rpc_malformed(void **state)
{
    uint8_t buf[512];
    struct tbbt__rpc_hdr h;
    size_t len = build_call(buf, sizeof(buf), 1, 100003, 3, 1, true);

    (void)state;
    /* Every cut inside the header: malformed without the truncation flag; with it,
     * truncation before proc and a partial header (xid..proc kept) after. */
    for (size_t cut = 0; cut < len; cut++) {
        assert_int_equal(tbbt__rpc_parse(buf, cut, false, &h), TBBT_E_BADREC);
        if (cut < 24) {
            assert_int_equal(tbbt__rpc_parse(buf, cut, true, &h), TBBT_E_TRUNC);
            continue;
        }
        assert_int_equal(tbbt__rpc_parse(buf, cut, true, &h), 0);
        assert_true(h.partial);
        assert_int_equal(h.xid, 1);
        assert_int_equal(h.prog, 100003);
        assert_int_equal(h.vers, 3);
        assert_int_equal(h.proc, 1);
        assert_int_equal(h.body_off, cut);
    }
    /* Not a message type. */
    buf[7] = 5;
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), TBBT_E_BADREC);
    buf[7] = 0;
    /* RPC version 3. */
    buf[11] = 3;
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), TBBT_E_BADREC);
    buf[11] = 2;
    /* A credential longer than MAX_AUTH_BYTES. */
    buf[28] = 0x7f;
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), TBBT_E_BADREC);
}

/* ---- pairing ---------------------------------------------------------------- */

struct sink {
    uint32_t xids[64];
    bool answered[64];
    int n;
};

static void sink_emit(struct tbbt_trace_rec *rec, void *arg)
{
    struct sink *s = arg;
    assert_true(s->n < 64);
    s->xids[s->n] = rec->xid;
    s->answered[s->n++] = (rec->flags & TBBT_RF_REPLY) != 0;
}

static struct tbbt__pair_key key(uint32_t xid, uint16_t port)
{
    struct tbbt__pair_key k;
    memset(&k, 0, sizeof(k));
    k.af = 4;
    k.caddr[0] = 10;
    k.caddr[3] = 1;
    k.saddr[0] = 10;
    k.saddr[3] = 2;
    k.cport = port;
    k.xid = xid;
    return k;
}

static struct tbbt_trace_rec *call(struct tbbt__pairer *p, uint32_t xid, uint64_t t)
{
    struct tbbt__pair_key k = key(xid, 800);
    struct tbbt_trace_rec *r = tbbt__pairer_call(p, &k, t);
    if (r)
        r->prog = TBBT_PROG_NFS3;
    tbbt__pairer_drain(p);
    return r;
}

static struct tbbt_trace_rec *reply(struct tbbt__pairer *p, uint32_t xid, uint64_t t)
{
    struct tbbt__pair_key k = key(xid, 800);
    struct tbbt_trace_rec *r = tbbt__pairer_reply(p, &k, t);
    tbbt__pairer_drain(p);
    return r;
}

static void test_pair_order(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000, 100, sink_emit, &s);

    (void)state;
    call(p, 1, 10);
    call(p, 2, 11);
    call(p, 3, 12);
    assert_non_null(reply(p, 3, 13));   /* answered first, still waits for 1 and 2 */
    assert_int_equal(s.n, 0);
    assert_non_null(reply(p, 1, 14));
    assert_int_equal(s.n, 1);
    assert_non_null(reply(p, 2, 15));
    assert_int_equal(s.n, 3);
    assert_int_equal(s.xids[0], 1);
    assert_int_equal(s.xids[1], 2);
    assert_int_equal(s.xids[2], 3);
    assert_int_equal(tbbt__pairer_stats(p)->pairs, 3);
    tbbt__pairer_finish(p);
    assert_int_equal(tbbt__pairer_stats(p)->estimated_lost_calls, 0);
    tbbt__pairer_free(p);
}

static void test_pair_duplicates(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000, 100, sink_emit, &s);
    const struct tbbt__pair_stats *st = tbbt__pairer_stats(p);

    (void)state;
    assert_non_null(call(p, 1, 10));
    assert_null(call(p, 1, 11));        /* retransmission while pending */
    assert_non_null(reply(p, 1, 12));
    assert_null(reply(p, 1, 13));       /* duplicate reply */
    assert_null(call(p, 1, 14));        /* late retransmission of an answered call */
    assert_null(reply(p, 99, 15));      /* reply without call */
    tbbt__pairer_finish(p);
    assert_int_equal(st->duplicate_calls, 2);
    assert_int_equal(st->duplicate_replies, 1);
    assert_int_equal(st->unmatched_replies, 1);
    assert_int_equal(st->pairs, 1);
    assert_int_equal(s.n, 1);
    tbbt__pairer_free(p);
}

static void test_pair_timeout(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(100, 100, sink_emit, &s);
    const struct tbbt__pair_stats *st = tbbt__pairer_stats(p);

    (void)state;
    call(p, 1, 10);     /* its reply is lost */
    call(p, 2, 20);
    reply(p, 2, 30);
    assert_int_equal(s.n, 0);           /* 1 still within its timeout */
    call(p, 3, 200);                    /* capture time moves past 1's timeout */
    assert_int_equal(s.n, 2);
    assert_false(s.answered[0]);
    assert_true(s.answered[1]);
    assert_null(reply(p, 1, 210));      /* too late: not paired, not "new" either */
    tbbt__pairer_finish(p);
    assert_int_equal(s.n, 3);
    assert_int_equal(st->unmatched_calls, 2);
    tbbt__pairer_free(p);
}

static void test_pair_max_pending(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000000, 4, sink_emit, &s);

    (void)state;
    for (uint32_t x = 1; x <= 6; x++)
        call(p, x, x);
    assert_int_equal(s.n, 2);           /* the two oldest were pushed out unanswered */
    tbbt__pairer_finish(p);
    assert_int_equal(s.n, 6);
    tbbt__pairer_free(p);
}

struct client_seen {
    uint64_t calls, lost;
    int n;
};

static void client_cb(uint8_t af, const uint8_t *addr, uint64_t calls, uint64_t lost, void *arg)
{
    struct client_seen *c = arg;
    (void)af;
    (void)addr;
    c->calls = calls;
    c->lost = lost;
    c->n++;
}

static void test_pair_loss_estimate(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000000, 100, sink_emit, &s);
    struct client_seen c = {0};
    static const uint32_t xids[] = {100, 101, 104, 103, 105, 900000, 900001, 900003};

    (void)state;
    /* 102 and 902... missing; 103 arrives late and fills one of the holes. */
    for (size_t i = 0; i < sizeof(xids) / sizeof(xids[0]); i++)
        call(p, xids[i], i);
    tbbt__pairer_finish(p);
    assert_int_equal(tbbt__pairer_stats(p)->estimated_lost_calls, 2);
    tbbt__pairer_foreach_client(p, client_cb, &c);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.calls, 8);
    assert_int_equal(c.lost, 2);
    tbbt__pairer_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rpc_call_authsys),
        cmocka_unit_test(test_rpc_call_authnone),
        cmocka_unit_test(test_rpc_reply),
        cmocka_unit_test(test_rpc_denied),
        cmocka_unit_test(test_rpc_malformed),
        cmocka_unit_test(test_pair_order),
        cmocka_unit_test(test_pair_duplicates),
        cmocka_unit_test(test_pair_timeout),
        cmocka_unit_test(test_pair_max_pending),
        cmocka_unit_test(test_pair_loss_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
