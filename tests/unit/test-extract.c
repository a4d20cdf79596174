/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the extract module's RPC header layer (rpc.c), the
 * call/reply pairer (pair.c): hand-built RPC messages, retransmissions,
 * replies out of order, lost replies, XID-based loss estimates, many
 * exchanges at once against a simple model; and the conversion core
 * (convert.c): the committed captures converted on one thread and pipelined
 * over two must give the same trace and counts; AUTH_SYS credentials of two
 * clients (machine names, gids) become the trace's credentials and the
 * records' references, the same on one thread and two.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <rpc/rpc.h>
#include <string.h>

#include "extract/extract.h"
#include "extract/pair.h"
#include "extract/rpc.h"
#include "trace/trace.h"
#include "util/util.h"

/* ---- RPC headers ----------------------------------------------------------- */

/* A call with the AUTH_SYS credential aup, or AUTH_NONE (aup NULL). */
static size_t build_call_cred(uint8_t *buf, size_t cap, uint32_t xid, uint32_t prog,
                              uint32_t vers, uint32_t proc, struct authunix_parms *aup)
{
    char credbody[MAX_AUTH_BYTES];
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
    if (aup) {
        xdrmem_create(&x, credbody, sizeof(credbody), XDR_ENCODE);
        assert_true(xdr_authunix_parms(&x, aup));
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

static size_t build_call(uint8_t *buf, size_t cap, uint32_t xid, uint32_t prog, uint32_t vers,
                         uint32_t proc, bool authsys)
{
    gid_t gids[2] = {100, 200};
    struct authunix_parms aup = {.aup_time = 1, .aup_machname = "client", .aup_uid = 1000,
                                 .aup_gid = 100, .aup_len = 2, .aup_gids = gids};

    return build_call_cred(buf, cap, xid, prog, vers, proc, authsys ? &aup : NULL);
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
    /* the credential's bytes after the stamp: name "client", uid, gid, 2 gids */
    struct tbbt_cred c;
    assert_non_null(h.sys);
    assert_int_equal(h.sys_len, 4 + 8 + 4 + 4 + 4 + 8);
    assert_true(tbbt__rpc_authsys(h.sys, h.sys_len, &c));
    assert_int_equal(c.machine_len, 6);
    assert_string_equal(c.machine, "client");
    assert_int_equal(c.uid, 1000);
    assert_int_equal(c.gid, 100);
    assert_int_equal(c.ngids, 2);
    assert_int_equal(c.gids[0], 100);
    assert_int_equal(c.gids[1], 200);
    assert_false(tbbt__rpc_authsys(h.sys, h.sys_len - 1, &c));
    /* 16 gids and a name of 255 bytes are fine; a 17th gid makes it unusable */
    gid_t gids[16];
    char name[256];
    memset(name, 'm', 255);
    name[255] = '\0';
    for (int i = 0; i < 16; i++)
        gids[i] = (gid_t)(i + 1);
    struct authunix_parms aup = {.aup_time = 9, .aup_machname = name, .aup_uid = 7,
                                 .aup_gid = 8, .aup_len = 16, .aup_gids = gids};
    len = build_call_cred(buf, sizeof(buf), 5, 100003, 3, 1, &aup);
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), 0);
    assert_int_equal(h.flavor, AUTH_SYS);
    assert_true(tbbt__rpc_authsys(h.sys, h.sys_len, &c));
    assert_int_equal(c.machine_len, 255);
    assert_int_equal(c.ngids, 16);
    assert_int_equal(c.gids[15], 16);
    buf[32 + 4 + 4 + 256 + 8 + 3] = 17;     /* the gid count */
    assert_int_equal(tbbt__rpc_parse(buf, len, false, &h), 0);
    assert_int_equal(h.flavor, UINT32_MAX);
    assert_null(h.sys);
    assert_int_equal(h.uid, 0);
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

/* Tags are the XIDs in these tests. */
static void sink_emit(uint64_t tag, bool replied, void *arg)
{
    struct sink *s = arg;
    assert_true(s->n < 64);
    s->xids[s->n] = (uint32_t)tag;
    s->answered[s->n++] = replied;
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

static bool call(struct tbbt__pairer *p, uint32_t xid, uint64_t t)
{
    struct tbbt__pair_key k = key(xid, 800);
    bool opened = tbbt__pairer_call(p, &k, t, xid);
    tbbt__pairer_drain(p);
    return opened;
}

static bool reply(struct tbbt__pairer *p, uint32_t xid, uint64_t t)
{
    struct tbbt__pair_key k = key(xid, 800);
    uint64_t tag = UINT64_MAX;
    bool paired = tbbt__pairer_reply(p, &k, t, &tag);
    if (paired)
        assert_int_equal(tag, xid);
    tbbt__pairer_drain(p);
    return paired;
}

static void test_pair_order(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000, 100, sink_emit, &s);

    (void)state;
    call(p, 1, 10);
    call(p, 2, 11);
    call(p, 3, 12);
    assert_true(reply(p, 3, 13));   /* answered first, still waits for 1 and 2 */
    assert_int_equal(s.n, 0);
    assert_true(reply(p, 1, 14));
    assert_int_equal(s.n, 1);
    assert_true(reply(p, 2, 15));
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
    assert_true(call(p, 1, 10));
    assert_false(call(p, 1, 11));        /* retransmission while pending */
    assert_true(reply(p, 1, 12));
    assert_false(reply(p, 1, 13));       /* duplicate reply */
    assert_false(call(p, 1, 14));        /* late retransmission of an answered call */
    assert_false(reply(p, 99, 15));      /* reply without call */
    tbbt__pairer_finish(p);
    assert_int_equal(st->duplicate_calls, 2);
    assert_int_equal(st->duplicate_replies, 1);
    assert_int_equal(st->unmatched_replies, 1);
    assert_int_equal(st->pairs, 1);
    assert_int_equal(s.n, 1);
    tbbt__pairer_free(p);
}

/*
 * One client port, one XID, two services (rpcbind on 111, then NFS on 2049, as
 * a libtirpc client seen in a lab capture): two exchanges, no retransmission.
 */
static void test_pair_server_port(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000, 100, sink_emit, &s);
    const struct tbbt__pair_stats *st = tbbt__pairer_stats(p);
    struct tbbt__pair_key k111 = key(7, 653), k2049 = key(7, 653);
    uint64_t tag = 0;

    (void)state;
    k111.sport = 111;
    k2049.sport = 2049;
    assert_true(tbbt__pairer_call(p, &k111, 10, 1));
    assert_true(tbbt__pairer_reply(p, &k111, 11, &tag));
    assert_int_equal(tag, 1);
    assert_true(tbbt__pairer_call(p, &k2049, 20, 2));
    assert_true(tbbt__pairer_reply(p, &k2049, 21, &tag));
    assert_int_equal(tag, 2);
    assert_false(tbbt__pairer_call(p, &k2049, 22, 3));   /* a real retransmission */
    tbbt__pairer_drain(p);
    tbbt__pairer_finish(p);
    assert_int_equal(st->pairs, 2);
    assert_int_equal(st->duplicate_calls, 1);
    assert_int_equal(st->estimated_lost_calls, 0);
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
    assert_false(reply(p, 1, 210));      /* too late: not paired, not "new" either */
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

/* The pairer's clients are one, with these counts. */
static void assert_one_client(const struct tbbt__pairer *p, uint64_t calls, uint64_t lost)
{
    struct client_seen c = {0};

    tbbt__pairer_foreach_client(p, client_cb, &c);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.calls, calls);
    assert_int_equal(c.lost, lost);
}

static void test_pair_loss_estimate(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000000, 100, sink_emit, &s);
    static const uint32_t xids[] = {100, 101, 104, 103, 105, 900000, 900001, 900003};

    (void)state;
    /* 102 and 902... missing; 103 arrives late and fills one of the holes. */
    for (size_t i = 0; i < sizeof(xids) / sizeof(xids[0]); i++)
        call(p, xids[i], i);
    tbbt__pairer_finish(p);
    assert_int_equal(tbbt__pairer_stats(p)->estimated_lost_calls, 2);
    assert_one_client(p, 8, 2);
    tbbt__pairer_free(p);
}

/*
 * Many exchanges at once against a model of the pairing rules: calls with
 * unique keys (a few thousand open at a time, so the ring and the open-call
 * table grow and entries leave the table in every order), replies in random
 * order, some never sent, retransmissions of open calls, timeouts and the
 * pending bound.  The model: a call opens unless its key is open, a reply
 * pairs iff its key is open, and the oldest call leaves once answered, timed
 * out or beyond max_pending.
 */
struct model_call {
    struct tbbt__pair_key k;
    uint64_t ts;
    bool done, open;
};

struct model {
    GArray *calls;       /* struct model_call, in call order */
    guint head;          /* first not yet emitted */
    GArray *emitted;     /* tags (call indices) seen from the pairer */
    GArray *replied;     /* their replied flags (gboolean) */
};

static void model_emit(uint64_t tag, bool replied, void *arg)
{
    struct model *m = arg;
    gboolean r = replied;

    g_array_append_val(m->emitted, tag);
    g_array_append_val(m->replied, r);
}

/* What the model says leaves after an operation, checked against the pairer. */
static void model_drain(struct model *m, uint64_t now, uint64_t timeout, guint max_pending)
{
    while (m->head < m->calls->len) {
        struct model_call *c = &g_array_index(m->calls, struct model_call, m->head);
        if (!c->done && c->ts + timeout >= now && m->calls->len - m->head <= max_pending)
            break;
        assert_true(m->head < m->emitted->len);
        assert_int_equal(g_array_index(m->emitted, uint64_t, m->head), m->head);
        assert_int_equal(g_array_index(m->replied, gboolean, m->head), c->done);
        c->open = false;
        m->head++;
    }
    assert_int_equal(m->emitted->len, m->head);
}

static void run_model(uint64_t timeout, guint max_pending, guint32 seed)
{
    struct model m = {g_array_new(FALSE, TRUE, sizeof(struct model_call)), 0,
                      g_array_new(FALSE, FALSE, sizeof(uint64_t)),
                      g_array_new(FALSE, FALSE, sizeof(gboolean))};
    struct tbbt__pairer *p = tbbt__pairer_new(timeout, max_pending, model_emit, &m);
    GRand *g = g_rand_new_with_seed(seed);
    uint32_t xid[64] = {0};
    uint64_t now = 1, seen = 1, pairs = 0;   /* seen: the latest time the pairer saw */

    for (int step = 0; step < 60000; step++) {
        now += (uint64_t)g_rand_int_range(g, 0, 3);
        guint open_from = m.head;
        int op = g_rand_int_range(g, 0, 10);
        if (op < 5 || m.calls->len == open_from) {          /* a new call */
            struct model_call c = {.ts = now, .open = true};
            int port = g_rand_int_range(g, 0, 64);
            c.k = key(xid[port] += (uint32_t)g_rand_int_range(g, 1, 3), (uint16_t)(900 + port));
            c.k.caddr[2] = (uint8_t)(port & 3);   /* a few client addresses */
            assert_true(tbbt__pairer_call(p, &c.k, now, m.calls->len));
            seen = now;
            g_array_append_val(m.calls, c);
        } else {
            guint i = open_from + (guint)g_rand_int_range(g, 0, (gint32)(m.calls->len - open_from));
            struct model_call *c = &g_array_index(m.calls, struct model_call, i);
            uint64_t tag = UINT64_MAX;
            if (op == 5) {            /* a retransmitted call (of a completed one: maybe
                                       * forgotten already, so not tried) */
                if (c->open && !c->done) {
                    assert_false(tbbt__pairer_call(p, &c->k, now, 0));
                    seen = now;
                }
            } else if (op < 9) {                              /* a reply */
                bool open = c->open && !c->done;
                assert_int_equal(tbbt__pairer_reply(p, &c->k, now, &tag), open);
                seen = now;
                if (open) {
                    assert_int_equal(tag, i);
                    c->done = true;
                    pairs++;
                }
            }                                                 /* op 9: a reply never sent */
        }
        tbbt__pairer_drain(p);
        model_drain(&m, seen, timeout, max_pending);
    }
    tbbt__pairer_finish(p);
    model_drain(&m, UINT64_MAX / 2, 0, 0);
    assert_int_equal(m.head, m.calls->len);
    assert_int_equal(tbbt__pairer_stats(p)->pairs, pairs);
    assert_int_equal(tbbt__pairer_stats(p)->unmatched_calls, m.calls->len - pairs);
    tbbt__pairer_free(p);
    g_rand_free(g);
    g_array_free(m.calls, TRUE);
    g_array_free(m.emitted, TRUE);
    g_array_free(m.replied, TRUE);
}

/*
 * Flow numbers: one per addresses and ports, whatever the XID, the same for
 * the pairer's life; the flow API pairs as the key API does; a flow seen only
 * in replies is no client, and a reply first does not shift its flow's XIDs.
 */
static void test_pair_flows(void **state)
{
    struct sink s = {0};
    struct tbbt__pairer *p = tbbt__pairer_new(1000000, 100, sink_emit, &s);
    struct tbbt__pair_key a = key(5, 800), a2 = key(6, 800), b = key(5, 801), r = key(7, 802);
    struct tbbt__pair_key other = key(3, 800);
    uint64_t tag = 0;
    uint32_t fa, fb;

    (void)state;
    fa = tbbt__pairer_flow(p, &a);
    fb = tbbt__pairer_flow(p, &b);
    assert_true(fa > 0 && fb > 0 && fa != fb);
    assert_int_equal(tbbt__pairer_flow(p, &a2), fa);
    assert_int_equal(tbbt__pairer_flow(p, &b), fb);
    assert_false(tbbt__pairer_reply(p, &r, 1, &tag));           /* no call: unmatched */
    assert_true(tbbt__pairer_call_flow(p, fa, 5, 2, 5));
    assert_false(tbbt__pairer_call(p, &a, 3, 5));               /* the same exchange */
    assert_true(tbbt__pairer_call(p, &b, 4, 6));                /* another port */
    assert_true(tbbt__pairer_reply(p, &a, 5, &tag));
    assert_int_equal(tag, 5);
    assert_true(tbbt__pairer_reply_flow(p, fb, 5, 6, &tag));
    assert_int_equal(tag, 6);
    assert_false(tbbt__pairer_reply_flow(p, fa, 5, 7, &tag));   /* a duplicate reply */
    assert_true(tbbt__pairer_call(p, &r, 8, 7));                /* numbered by its reply */
    other.caddr[3] = 9;                                          /* another client */
    assert_false(tbbt__pairer_reply(p, &other, 9, &tag));        /* replies only */
    tbbt__pairer_finish(p);
    assert_int_equal(tbbt__pairer_stats(p)->unmatched_replies, 2);
    assert_int_equal(tbbt__pairer_stats(p)->duplicate_replies, 1);
    assert_int_equal(tbbt__pairer_stats(p)->duplicate_calls, 1);
    assert_int_equal(tbbt__pairer_stats(p)->estimated_lost_calls, 0);
    assert_one_client(p, 3, 0);   /* the flow seen only in replies is no client */
    tbbt__pairer_free(p);
}

static void test_pair_model(void **state)
{
    (void)state;
    run_model(UINT64_MAX / 4, 1u << 20, 1);   /* only replies release calls: thousands open */
    run_model(3000, 1u << 20, 2);             /* timeouts */
    run_model(UINT64_MAX / 4, 50, 3);         /* the pending bound */
}

/* ---- conversion: one thread and two ------------------------------------------ */

static char *read_all(const char *path, gsize *len)
{
    char *data = NULL;

    assert_true(g_file_get_contents(path, &data, len, NULL));
    return data;
}

/* The summary up to its timing keys (which differ from run to run). */
static char *summary_counts(const char *path)
{
    char *s = NULL;
    const char *t;

    assert_true(g_file_get_contents(path, &s, NULL, NULL));
    t = strstr(s, "\"elapsed_seconds\"");
    assert_non_null(t);
    s[t - s] = '\0';
    return s;
}

/* Converts inputs with opts and returns the trace and the summary's counts. */
static void convert(const char *const *inputs, int n, int threads, uint32_t batch,
                    uint32_t max_pending, uint64_t timeout, const char *dir, char **trace,
                    gsize *trace_len, char **counts)
{
    struct tbbt_convert_opts o;
    char err[512] = "", *out = g_build_filename(dir, "t.tbbt", NULL);
    char *sum = g_build_filename(dir, "t.json", NULL);
    int rc;

    tbbt_convert_opts_init(&o);
    o.inputs = inputs;
    o.n_inputs = n;
    o.output = out;
    o.summary_json = sum;
    o.threads = threads;
    o.batch_bytes = batch;
    if (max_pending)
        o.max_pending = max_pending;
    if (timeout)
        o.reply_timeout_ns = timeout;
    rc = tbbt_convert_run(&o, err, sizeof(err));
    if (rc != 0)
        fail_msg("conversion failed: %s", err);
    *trace = read_all(out, trace_len);
    *counts = summary_counts(sum);
    g_unlink(out);
    g_unlink(sum);
    g_free(out);
    g_free(sum);
}

/* The committed captures (traces/ of the source tree), NULL-terminated. */
static GPtrArray *committed_captures(void)
{
    char *unit = g_path_get_dirname(__FILE__);
    char *dir = g_build_filename(unit, "..", "..", "traces", NULL);
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;

    assert_non_null(d);
    while ((name = g_dir_read_name(d)))
        if (g_str_has_suffix(name, ".pcap") || g_str_has_suffix(name, ".pcapng"))
            g_ptr_array_add(a, g_build_filename(dir, name, NULL));
    g_dir_close(d);
    g_ptr_array_sort(a, (GCompareFunc)(void (*)(void))g_strcmp0);
    g_free(dir);
    g_free(unit);
    return a;
}

/* One input set: --threads 2 (default and tiny batches) must equal --threads 1. */
static void check_threads(const char *const *inputs, int n, uint32_t max_pending,
                          uint64_t timeout, const char *dir)
{
    static const uint32_t batches[] = {0, 1024, 64};
    char *t1, *c1;
    gsize l1;

    convert(inputs, n, 1, 0, max_pending, timeout, dir, &t1, &l1, &c1);
    assert_true(l1 > 0);
    for (size_t i = 0; i < G_N_ELEMENTS(batches); i++) {
        char *t2, *c2;
        gsize l2;

        convert(inputs, n, 2, batches[i], max_pending, timeout, dir, &t2, &l2, &c2);
        if (l1 != l2)
            fail_msg("%s (%d inputs), max_pending %u, timeout %llu, batch %u: %zu != %zu bytes",
                     inputs[0], n, max_pending, (unsigned long long)timeout, batches[i],
                     (size_t)l1, (size_t)l2);
        assert_memory_equal(t1, t2, l1);
        assert_string_equal(c1, c2);
        g_free(t2);
        g_free(c2);
    }
    g_free(t1);
    g_free(c1);
}

static void test_convert_threads(void **state)
{
    GPtrArray *caps = committed_captures();
    char *dir = g_dir_make_tmp("tbbt-extract-XXXXXX", NULL);

    (void)state;
    assert_non_null(dir);
    assert_true(caps->len >= 3);
    for (guint i = 0; i < caps->len; i++)
        check_threads((const char *const *)&caps->pdata[i], 1, 0, 0, dir);
    /* All merged (the same traffic twice: retransmissions everywhere), then with
     * calls pushed out unanswered by the pending bound and the timeout. */
    check_threads((const char *const *)caps->pdata, (int)caps->len, 0, 0, dir);
    check_threads((const char *const *)caps->pdata, (int)caps->len, 3, 0, dir);
    check_threads((const char *const *)caps->pdata, (int)caps->len, 0, 1000, dir);
    g_rmdir(dir);
    g_free(dir);
    g_ptr_array_free(caps, TRUE);
}

/* ---- credentials through the conversion --------------------------------------- */

/* A classic pcap (LINKTYPE_RAW: IPv4 packets) being written. */
struct rawcap {
    GByteArray *b;
    uint64_t t;
};

static void le32_put(GByteArray *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    g_byte_array_append(b, x, 4);
}

/* One UDP datagram from a.b.c.ca:cport to a.b.c.sa:sport (or back, reply) with msg. */
static void rawcap_udp(struct rawcap *rc, uint8_t ca, uint16_t cport, bool reply,
                       const uint8_t *msg, size_t len)
{
    uint8_t h[28] = {0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 0, 10, 0, 0, 0};
    uint8_t src = reply ? 9 : ca, dst = reply ? ca : 9;
    uint16_t sp = reply ? 2049 : cport, dp = reply ? cport : 2049;

    h[2] = (uint8_t)((28 + len) >> 8);
    h[3] = (uint8_t)(28 + len);
    h[15] = src;
    h[19] = dst;
    h[20] = (uint8_t)(sp >> 8);
    h[21] = (uint8_t)sp;
    h[22] = (uint8_t)(dp >> 8);
    h[23] = (uint8_t)dp;
    h[24] = (uint8_t)((8 + len) >> 8);
    h[25] = (uint8_t)(8 + len);
    rc->t += 1000;                               /* 1 ms apart */
    le32_put(rc->b, (uint32_t)(rc->t / 1000000));
    le32_put(rc->b, (uint32_t)(rc->t % 1000000));
    le32_put(rc->b, (uint32_t)(28 + len));
    le32_put(rc->b, (uint32_t)(28 + len));
    g_byte_array_append(rc->b, h, 28);
    g_byte_array_append(rc->b, msg, (guint)len);
}

/* An NFSv3 NULL call from client 10.0.0.ca:cport with credential aup (NULL: none), and
 * its reply; msg_patch, if not NULL, edits the call before it is written. */
static void rawcap_null(struct rawcap *rc, uint8_t ca, uint16_t cport, uint32_t xid,
                        struct authunix_parms *aup, void (*msg_patch)(uint8_t *msg))
{
    uint8_t msg[512];
    size_t len = build_call_cred(msg, sizeof(msg), xid, 100003, 3, 0, aup);

    if (msg_patch)
        msg_patch(msg);
    rawcap_udp(rc, ca, cport, false, msg, len);
    len = build_reply(msg, sizeof(msg), xid, SUCCESS);
    rawcap_udp(rc, ca, cport, true, msg, len);
}

/* The gid count of a call whose credential has a 5-byte machine name: 1 more than there are. */
static void one_gid_too_many(uint8_t *msg)
{
    msg[32 + 4 + 4 + 8 + 8 + 3]++;
}

/*
 * Two clients: "alpha" (10.0.0.1) and "beta" (10.0.0.2), with their gids; a
 * credential seen again (other stamp, other flow, after AUTH_NONE) keeps its
 * reference; an unusable body gives none.
 */
static char *write_cred_capture(const char *dir)
{
    gid_t ga[3] = {100, 4, 27}, gb[2] = {100, 44};
    struct authunix_parms a = {.aup_time = 1, .aup_machname = "alpha", .aup_uid = 1000,
                               .aup_gid = 100, .aup_len = 3, .aup_gids = ga};
    struct authunix_parms b = {.aup_time = 2, .aup_machname = "beta", .aup_uid = 1001,
                               .aup_gid = 100, .aup_len = 2, .aup_gids = gb};
    struct authunix_parms root = {.aup_time = 1, .aup_machname = "alpha"};
    struct rawcap rc = {g_byte_array_new(), 1700000000ull * 1000000};
    char *path = g_build_filename(dir, "cred.pcap", NULL);

    le32_put(rc.b, 0xa1b2c3d4);                 /* microsecond pcap, version 2.4 */
    le32_put(rc.b, 2 | 4u << 16);
    le32_put(rc.b, 0);
    le32_put(rc.b, 0);
    le32_put(rc.b, 65535);
    le32_put(rc.b, 101);                        /* LINKTYPE_RAW */
    rawcap_null(&rc, 1, 800, 1, &a, NULL);      /* record 0: cred 0 */
    rawcap_null(&rc, 2, 801, 1, &b, NULL);      /* 1: cred 1 */
    rawcap_null(&rc, 1, 800, 2, &a, NULL);      /* 2: cred 0 */
    a.aup_time = 77;
    rawcap_null(&rc, 1, 800, 3, &a, NULL);      /* 3: cred 0 (another stamp) */
    rawcap_null(&rc, 2, 801, 2, NULL, NULL);    /* 4: AUTH_NONE */
    rawcap_null(&rc, 1, 800, 4, &root, NULL);   /* 5: cred 2 */
    rawcap_null(&rc, 2, 801, 3, &b, NULL);      /* 6: cred 1 */
    rawcap_null(&rc, 1, 802, 5, &b, NULL);      /* 7: cred 1 (another client's flow) */
    rawcap_null(&rc, 1, 800, 6, &a, one_gid_too_many);   /* 8: none (unusable) */
    rawcap_null(&rc, 1, 800, 7, &a, NULL);      /* 9: cred 0 */
    assert_true(g_file_set_contents(path, (const char *)rc.b->data, rc.b->len, NULL));
    g_byte_array_free(rc.b, TRUE);
    return path;
}

static void test_convert_creds(void **state)
{
    static const int want_ref[] = {0, 1, 0, 0, -1, 2, 1, 1, -1, 0};
    char *dir = g_dir_make_tmp("tbbt-extract-XXXXXX", NULL);
    char *cap = write_cred_capture(dir), *trace, *counts, *path;
    struct tbbt_trace_reader *r;
    struct tbbt_trace_rec rec;
    const struct tbbt_credtab *t;
    const struct tbbt_cred *c;
    gsize len;
    int err = 0, n = 0;

    (void)state;
    convert((const char *const *)&cap, 1, 1, 0, 0, 0, dir, &trace, &len, &counts);
    assert_non_null(strstr(counts, "\"credentials\":3,\"machines\":2,"));
    assert_non_null(strstr(counts, "\"other_auth_flavors\":1,"));
    path = g_build_filename(dir, "t2.tbbt", NULL);
    assert_true(g_file_set_contents(path, trace, (gssize)len, NULL));
    r = tbbt_trace_reader_open(path, &err);
    assert_non_null(r);
    tbbt_trace_rec_init(&rec);
    while (tbbt_trace_reader_next(r, &rec) == 1) {
        assert_true(n < 10);
        if (want_ref[n] < 0) {
            assert_false(TBBT_HAS(&rec, TBBT_F_CRED));
        } else {
            assert_true(TBBT_HAS(&rec, TBBT_F_CRED));
            assert_int_equal(rec.cred, want_ref[n]);
        }
        assert_int_equal(rec.uid, n == 5 || want_ref[n] < 0 ? 0 : want_ref[n] == 1 ? 1001 : 1000);
        n++;
    }
    assert_int_equal(n, 10);
    t = tbbt_trace_reader_credtab(r);
    assert_int_equal(tbbt_credtab_count(t), 3);
    c = tbbt_credtab_get(t, 0);
    assert_string_equal(c->machine, "alpha");
    assert_int_equal(c->uid, 1000);
    assert_int_equal(c->ngids, 3);
    assert_int_equal(c->gids[2], 27);
    c = tbbt_credtab_get(t, 1);
    assert_string_equal(c->machine, "beta");
    assert_int_equal(c->uid, 1001);
    assert_int_equal(c->ngids, 2);
    assert_int_equal(c->gids[1], 44);
    c = tbbt_credtab_get(t, 2);
    assert_string_equal(c->machine, "alpha");
    assert_int_equal(c->uid, 0);
    assert_int_equal(c->ngids, 0);
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    /* the same trace pipelined, with any batch size */
    check_threads((const char *const *)&cap, 1, 0, 0, dir);
    /* the trace as input (pass B alone, from the trace reader): the same bytes again,
     * definitions where they were, on one thread and two */
    for (int threads = 1; threads <= 2; threads++) {
        char *again, *c2;
        gsize len2;
        convert((const char *const *)&path, 1, threads, 0, 0, 0, dir, &again, &len2, &c2);
        assert_int_equal(len2, len);
        assert_memory_equal(again, trace, len);
        g_free(again);
        g_free(c2);
    }
    g_unlink(path);
    g_unlink(cap);
    g_rmdir(dir);
    g_free(path);
    g_free(cap);
    g_free(dir);
    g_free(trace);
    g_free(counts);
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
        cmocka_unit_test(test_pair_server_port),
        cmocka_unit_test(test_pair_timeout),
        cmocka_unit_test(test_pair_max_pending),
        cmocka_unit_test(test_pair_loss_estimate),
        cmocka_unit_test(test_pair_flows),
        cmocka_unit_test(test_pair_model),
        cmocka_unit_test(test_convert_threads),
        cmocka_unit_test(test_convert_creds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
