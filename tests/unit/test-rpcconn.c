/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the RPC transport (src/onc/rpcconn.h) against a fake server in this
 * process: a loopback TCP listener or UDP socket whose accepted end the test drives by
 * hand, writing reply bytes exactly as it wants them (split at any byte, several
 * fragments, several records per write, bogus marks, resets).  Covered: call header
 * encoding (AUTH_SYS, AUTH_NONE), batching into one send(), XID matching with replies
 * out of order, partial and multi-fragment records, rpcgen result decoding, accepted
 * errors, denials, undecodable results, unmatched XIDs, bogus record marks, connection
 * reset and EOF with calls outstanding, reconnect, UDP datagrams, expiry and
 * retransmission with the same XID, SO_RCVLOWAT, the synchronous GETPORT and MNT helpers, and the
 * send-thread / receive-thread contract under load.  The real server is exercised by
 * tests/integration/060-rpcconn.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "onc/rpcconn.h"

#include <rpc/pmap_prot.h>
#include "proto/mount.h"
#include "proto/nfs3.h"
#include "util/util.h"

#define NFS_PROG 100003
#define MAXR 64

/* ------------------------------------------------------------------ fake server helpers */

struct fixture {
    int lfd;                    /* listener (TCP) or the server socket (UDP) */
    int sfd;                    /* accepted server end (TCP) */
    uint16_t port;
    struct tbbt_rpcconn *c;
    struct sockaddr_in peer;    /* UDP: the client's address */
    socklen_t peerlen;
};

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int listen_on(int type, uint16_t *port)
{
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    if (type == SOCK_STREAM)
        assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void read_full(int fd, void *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t r = read(fd, (char *)p + off, n - off);
        assert_true(r > 0);
        off += (size_t)r;
    }
}

static void write_full(int fd, const void *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t r = write(fd, (const char *)p + off, n - off);
        assert_true(r > 0);
        off += (size_t)r;
    }
}

/* Reads one call record from the TCP server end into buf; returns its length. */
static size_t srv_read_call(int fd, uint8_t *buf, size_t cap)
{
    uint8_t m[4];
    read_full(fd, m, 4);
    uint32_t mark = get32(m);
    assert_true(mark & 0x80000000u);   /* we send single-fragment records */
    size_t len = mark & 0x7fffffffu;
    assert_true(len <= cap && len >= 40);
    read_full(fd, buf, len);
    assert_int_equal(get32(buf + 4), 0);   /* CALL */
    assert_int_equal(get32(buf + 8), 2);   /* RPC version */
    return len;
}

/* Accepted-reply header (xid, REPLY, MSG_ACCEPTED, null verifier, accept_stat). */
static size_t reply_hdr(uint8_t *p, uint32_t xid, uint32_t astat)
{
    uint32_t w[] = {xid, 1, 0, 0, 0, astat};
    for (size_t i = 0; i < 6; i++)
        put32(p + 4 * i, w[i]);
    return 24;
}

/* A whole TCP record (mark + accepted SUCCESS header + body); returns its length. */
static size_t tcp_reply(uint8_t *p, uint32_t xid, const void *body, size_t blen)
{
    size_t n = reply_hdr(p + 4, xid, SUCCESS);
    if (blen)
        memcpy(p + 4 + n, body, blen);
    put32(p, 0x80000000u | (uint32_t)(n + blen));
    return 4 + n + blen;
}

/* Encodes a GETATTR3res of a directory with the given size into buf. */
static size_t getattr_body(uint8_t *buf, size_t cap, uint64_t size)
{
    GETATTR3res res;
    memset(&res, 0, sizeof(res));
    res.status = NFS3_OK;
    res.GETATTR3res_u.resok.obj_attributes.type = NF3DIR;
    res.GETATTR3res_u.resok.obj_attributes.mode = 0755;
    res.GETATTR3res_u.resok.obj_attributes.size = size;
    res.GETATTR3res_u.resok.obj_attributes.fileid = 77;
    XDR x;
    xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
    assert_true(xdr_GETATTR3res(&x, &res));
    return xdr_getpos(&x);
}

/* Polls and receives until at least want replies arrived (or the connection failed). */
static int recv_wait(struct tbbt_rpcconn *c, struct tbbt_rpcconn_reply *out, int want)
{
    int n = 0;
    uint64_t deadline = tbbt_now_ns() + 5000000000ull;
    while (n < want && tbbt_now_ns() < deadline) {
        struct pollfd p = {.fd = tbbt_rpcconn_fd(c), .events = POLLIN};
        poll(&p, 1, 100);
        int r = tbbt_rpcconn_recv(c, out + n, MAXR - n);
        if (r < 0)
            return n > 0 ? n : r;
        n += r;
    }
    return n;
}

static void queue_null(struct tbbt_rpcconn *c, void *arg, uint32_t *xid)
{
    struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3, .proc = 0, .arg = arg};
    assert_int_equal(tbbt_rpcconn_call(c, &call, xid), 0);
}

static int setup_tcp_opts(void **state, const struct tbbt_rpcconn_opts *o)
{
    struct fixture *f = calloc(1, sizeof(*f));
    f->lfd = listen_on(SOCK_STREAM, &f->port);
    f->c = tbbt_rpcconn_new(o);
    assert_int_equal(tbbt_rpcconn_connect(f->c, "127.0.0.1", f->port), 0);
    f->sfd = accept(f->lfd, NULL, NULL);
    assert_true(f->sfd >= 0);
    *state = f;
    return 0;
}

static int setup_tcp(void **state)
{
    struct tbbt_rpcconn_opts o = {.transport = TBBT_RPCCONN_TCP,
                                  .flavor = TBBT_RPCCONN_AUTH_SYS, .uid = 1234, .gid = 5678,
                                  .machine = "tbbt-test", .recv_buf = 4096};
    return setup_tcp_opts(state, &o);
}

static int setup_udp(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    f->lfd = listen_on(SOCK_DGRAM, &f->port);
    f->sfd = -1;
    struct tbbt_rpcconn_opts o = {.transport = TBBT_RPCCONN_UDP};
    f->c = tbbt_rpcconn_new(&o);
    assert_int_equal(tbbt_rpcconn_connect(f->c, "127.0.0.1", f->port), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tbbt_rpcconn_free(f->c);
    if (f->sfd >= 0)
        close(f->sfd);
    close(f->lfd);
    free(f);
    return 0;
}

/* ------------------------------------------------------------------ TCP tests */

/* One NULL call: header fields, AUTH_SYS credential, reply matched, timestamps. */
static void test_null_roundtrip(void **state)
{
    struct fixture *f = *state;
    uint8_t buf[1024], out[256];
    uint32_t xid;
    int cookie;
    queue_null(f->c, &cookie, &xid);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 1);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    size_t len = srv_read_call(f->sfd, buf, sizeof(buf));
    assert_int_equal(get32(buf), xid);
    assert_int_equal(get32(buf + 12), NFS_PROG);
    assert_int_equal(get32(buf + 16), 3);
    assert_int_equal(get32(buf + 20), 0);
    assert_int_equal(get32(buf + 24), AUTH_UNIX);
    uint32_t clen = get32(buf + 28);
    const uint8_t *cred = buf + 32;
    assert_int_equal(get32(cred + 4), 9);                 /* machine name length */
    assert_memory_equal(cred + 8, "tbbt-test", 9);
    assert_int_equal(get32(cred + 20), 1234);             /* uid after padded name */
    assert_int_equal(get32(cred + 24), 5678);
    assert_int_equal(len, 32 + clen + 8);                 /* + AUTH_NONE verifier */
    write_full(f->sfd, out, tcp_reply(out, xid, NULL, 0));

    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(recv_wait(f->c, r, 1), 1);
    assert_int_equal(r[0].xid, xid);
    assert_int_equal(r[0].status, TBBT_RPCCONN_OK);
    assert_int_equal(r[0].res_status, -1);
    assert_ptr_equal(r[0].arg, &cookie);
    assert_true(r[0].recv_ns >= r[0].queued_ns);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 0);
    assert_int_equal(tbbt_rpcconn_recv(f->c, r, MAXR), 0);
}

/* Calls queued together leave in one send(); XIDs are consecutive. */
static void test_batching(void **state)
{
    struct fixture *f = *state;
    uint32_t xid[10];
    uint8_t buf[256];
    for (int i = 0; i < 10; i++)
        queue_null(f->c, NULL, &xid[i]);
    for (int i = 1; i < 10; i++)
        assert_int_equal(xid[i], xid[i - 1] + 1);
    assert_true(tbbt_rpcconn_sendq_bytes(f->c) > 0);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    assert_int_equal(tbbt_rpcconn_sendq_bytes(f->c), 0);
    struct tbbt_rpcconn_stats st;
    tbbt_rpcconn_stats(f->c, &st);
    assert_int_equal(st.calls, 10);
    assert_int_equal(st.send_syscalls, 1);
    for (int i = 0; i < 10; i++) {
        srv_read_call(f->sfd, buf, sizeof(buf));
        assert_int_equal(get32(buf), xid[i]);
    }
}

/* SO_RCVLOWAT: the socket polls readable only once two replies are buffered. */
static void test_recv_lowat(void **state)
{
    struct fixture *f = *state;
    uint32_t xid[2];
    uint8_t buf[256], out[64];
    queue_null(f->c, NULL, &xid[0]);
    queue_null(f->c, NULL, &xid[1]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    srv_read_call(f->sfd, buf, sizeof(buf));
    srv_read_call(f->sfd, buf, sizeof(buf));
    assert_int_equal(tbbt_rpcconn_set_recv_lowat(f->c, 2 * 28), 0);
    write_full(f->sfd, out, tcp_reply(out, xid[0], NULL, 0));
    struct pollfd p = {.fd = tbbt_rpcconn_fd(f->c), .events = POLLIN};
    assert_int_equal(poll(&p, 1, 50), 0);
    write_full(f->sfd, out, tcp_reply(out, xid[1], NULL, 0));
    assert_int_equal(poll(&p, 1, 1000), 1);
    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(tbbt_rpcconn_recv(f->c, r, MAXR), 2);
}

/* Replies in reverse order, all in one write, come back to the right cookies. */
static void test_out_of_order(void **state)
{
    struct fixture *f = *state;
    enum { N = 20 };
    uint32_t xid[N];
    int cookies[N];
    uint8_t buf[256], out[N * 64];
    size_t olen = 0;
    for (int i = 0; i < N; i++)
        queue_null(f->c, &cookies[i], &xid[i]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    for (int i = 0; i < N; i++)
        srv_read_call(f->sfd, buf, sizeof(buf));
    for (int i = N - 1; i >= 0; i--)
        olen += tcp_reply(out + olen, xid[i], NULL, 0);
    write_full(f->sfd, out, olen);
    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(recv_wait(f->c, r, N), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].xid, xid[N - 1 - i]);
        assert_ptr_equal(r[i].arg, &cookies[N - 1 - i]);
        assert_int_equal(r[i].status, TBBT_RPCCONN_OK);
    }
}

/*
 * Records split at every possible byte: three GETATTR replies written in chunks of
 * 1, 2, 3, ... bytes with a receive after each chunk; the 4 KiB receive buffer also
 * makes records straddle reads.  Results decode through xdr_GETATTR3res.
 */
static void test_split_records(void **state)
{
    struct fixture *f = *state;
    enum { N = 3 };
    uint32_t xid[N];
    GETATTR3res res[N];
    uint8_t buf[256], body[256], out[N * 256];
    size_t olen = 0;
    for (int i = 0; i < N; i++) {
        struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3, .proc = 1,
                                         .xres = (xdrproc_t)xdr_GETATTR3res, .res = &res[i],
                                         .res_size = sizeof(res[i])};
        assert_int_equal(tbbt_rpcconn_call(f->c, &call, &xid[i]), 0);
    }
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    for (int i = 0; i < N; i++) {
        srv_read_call(f->sfd, buf, sizeof(buf));
        size_t blen = getattr_body(body, sizeof(body), 1000u + (unsigned)i);
        olen += tcp_reply(out + olen, xid[i], body, blen);
    }
    struct tbbt_rpcconn_reply r[MAXR];
    int got = 0;
    size_t chunk = 1;
    for (size_t off = 0; off < olen; off += chunk, chunk++) {
        size_t k = chunk < olen - off ? chunk : olen - off;
        write_full(f->sfd, out + off, k);
        usleep(1000);
        int n = tbbt_rpcconn_recv(f->c, r + got, MAXR - got);
        assert_true(n >= 0);
        got += n;
    }
    got += recv_wait(f->c, r + got, N - got);
    assert_int_equal(got, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(r[i].xid, xid[i]);
        assert_int_equal(r[i].status, TBBT_RPCCONN_OK);
        assert_int_equal(r[i].res_status, NFS3_OK);
        GETATTR3res *g = r[i].res;
        assert_ptr_equal(g, &res[i]);
        assert_int_equal(g->GETATTR3res_u.resok.obj_attributes.type, NF3DIR);
        assert_int_equal(g->GETATTR3res_u.resok.obj_attributes.size, 1000 + i);
        xdr_free((xdrproc_t)xdr_GETATTR3res, g);
    }
}

/* One reply sent as four fragments (the last one empty), then a normal reply. */
static void test_multi_fragment(void **state)
{
    struct fixture *f = *state;
    uint32_t xid[2];
    GETATTR3res res;
    uint8_t buf[256], rec[256], out[512];
    struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3, .proc = 1,
                                     .xres = (xdrproc_t)xdr_GETATTR3res, .res = &res,
                                     .res_size = sizeof(res)};
    assert_int_equal(tbbt_rpcconn_call(f->c, &call, &xid[0]), 0);
    queue_null(f->c, NULL, &xid[1]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    srv_read_call(f->sfd, buf, sizeof(buf));
    srv_read_call(f->sfd, buf, sizeof(buf));
    size_t rlen = reply_hdr(rec, xid[0], SUCCESS);
    rlen += getattr_body(rec + rlen, sizeof(rec) - rlen, 4242);
    size_t cut[] = {0, 5, 30, rlen, rlen};   /* fragments [0,5) [5,30) [30,rlen) [] */
    size_t olen = 0;
    for (int i = 0; i < 4; i++) {
        size_t fl = cut[i + 1] - cut[i];
        put32(out + olen, (i == 3 ? 0x80000000u : 0) | (uint32_t)fl);
        memcpy(out + olen + 4, rec + cut[i], fl);
        olen += 4 + fl;
    }
    olen += tcp_reply(out + olen, xid[1], NULL, 0);
    /* a byte at a time, a receive after each: every mark inside the record is split
     * across reads (a mark cut short once left the fragment state unset) */
    struct tbbt_rpcconn_reply r[MAXR];
    int got = 0;
    for (size_t off = 0; off < olen; off++) {
        write_full(f->sfd, out + off, 1);
        usleep(200);
        int n = tbbt_rpcconn_recv(f->c, r + got, MAXR - got);
        assert_true(n >= 0);
        got += n;
    }
    got += recv_wait(f->c, r + got, 2 - got);
    assert_int_equal(got, 2);
    assert_int_equal(r[0].xid, xid[0]);
    assert_int_equal(r[0].status, TBBT_RPCCONN_OK);
    assert_int_equal(res.GETATTR3res_u.resok.obj_attributes.size, 4242);
    assert_int_equal(res.GETATTR3res_u.resok.obj_attributes.fileid, 77);
    assert_int_equal(r[1].xid, xid[1]);
    xdr_free((xdrproc_t)xdr_GETATTR3res, &res);
}

/* accept_stat errors, denial, undecodable results and an unknown XID. */
static void test_reply_kinds(void **state)
{
    struct fixture *f = *state;
    uint32_t xid[4];
    GETATTR3res res;
    uint8_t buf[256], out[512];
    size_t olen = 0, n;
    queue_null(f->c, NULL, &xid[0]);
    queue_null(f->c, NULL, &xid[1]);
    struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3, .proc = 1,
                                     .xres = (xdrproc_t)xdr_GETATTR3res, .res = &res,
                                     .res_size = sizeof(res)};
    assert_int_equal(tbbt_rpcconn_call(f->c, &call, &xid[2]), 0);
    queue_null(f->c, NULL, &xid[3]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    for (int i = 0; i < 4; i++)
        srv_read_call(f->sfd, buf, sizeof(buf));
    /* PROC_UNAVAIL */
    n = reply_hdr(out + olen + 4, xid[0], PROC_UNAVAIL);
    put32(out + olen, 0x80000000u | (uint32_t)n);
    olen += 4 + n;
    /* MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK */
    uint32_t denied[] = {0x80000000u | 20, xid[1], 1, 1, AUTH_ERROR, AUTH_TOOWEAK};
    for (size_t i = 0; i < 6; i++)
        put32(out + olen + 4 * i, denied[i]);
    olen += 24;
    /* GETATTR reply cut after status NFS3_OK: results do not decode */
    uint8_t body[4];
    put32(body, NFS3_OK);
    olen += tcp_reply(out + olen, xid[2], body, 4);
    /* a reply nobody asked for, then the last real one */
    olen += tcp_reply(out + olen, 0xdeadbeef, NULL, 0);
    olen += tcp_reply(out + olen, xid[3], NULL, 0);
    write_full(f->sfd, out, olen);
    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(recv_wait(f->c, r, 4), 4);
    assert_int_equal(r[0].status, TBBT_RPCCONN_ACCEPT_ERR);
    assert_int_equal(r[0].detail, PROC_UNAVAIL);
    assert_int_equal(r[1].status, TBBT_RPCCONN_DENIED);
    assert_int_equal(r[1].detail, AUTH_ERROR << 16 | AUTH_TOOWEAK);
    assert_int_equal(r[2].status, TBBT_RPCCONN_GARBAGE);
    assert_int_equal(r[3].status, TBBT_RPCCONN_OK);
    struct tbbt_rpcconn_stats st;
    tbbt_rpcconn_stats(f->c, &st);
    assert_int_equal(st.unmatched, 1);
    assert_int_equal(st.garbage, 1);
    assert_int_equal(st.replies, 4);
    assert_true(tbbt_rpcconn_is_up(f->c));
}

/* Accepts the client's new connection after a reconnect and checks a NULL call works. */
static void check_after_reconnect(struct fixture *f)
{
    uint8_t buf[256], out[64];
    uint32_t xid;
    assert_int_equal(tbbt_rpcconn_reconnect(f->c), 0);
    assert_true(tbbt_rpcconn_is_up(f->c));
    assert_string_equal(tbbt_rpcconn_error(f->c), "");
    close(f->sfd);
    f->sfd = accept(f->lfd, NULL, NULL);
    assert_true(f->sfd >= 0);
    queue_null(f->c, NULL, &xid);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    srv_read_call(f->sfd, buf, sizeof(buf));
    write_full(f->sfd, out, tcp_reply(out, xid, NULL, 0));
    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(recv_wait(f->c, r, 1), 1);
    assert_int_equal(r[0].status, TBBT_RPCCONN_OK);
}

/* Expects every call of xid[0..n) back as LOST, then the error err from recv. */
static void expect_all_lost(struct fixture *f, const uint32_t *xid, int n, int err)
{
    struct tbbt_rpcconn_reply r[MAXR];
    int got = recv_wait(f->c, r, n);
    assert_int_equal(got, n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(r[i].status, TBBT_RPCCONN_LOST);
        assert_int_equal(r[i].detail, err);
        bool found = false;
        for (int j = 0; j < n; j++)
            found |= r[i].xid == xid[j];
        assert_true(found);
    }
    assert_int_equal(tbbt_rpcconn_recv(f->c, r, MAXR), err);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 0);
    assert_false(tbbt_rpcconn_is_up(f->c));
    uint32_t x;
    struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3};
    assert_int_equal(tbbt_rpcconn_call(f->c, &call, &x), -EPIPE);
}

/* A record mark announcing 2 GiB: connection goes down with a clear reason. */
static void test_bogus_mark(void **state)
{
    struct fixture *f = *state;
    uint32_t xid[3];
    uint8_t buf[256], out[64];
    for (int i = 0; i < 3; i++)
        queue_null(f->c, NULL, &xid[i]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    for (int i = 0; i < 3; i++)
        srv_read_call(f->sfd, buf, sizeof(buf));
    size_t olen = tcp_reply(out, xid[1], NULL, 0);   /* one good reply first */
    put32(out + olen, 0xffffffffu);
    write_full(f->sfd, out, olen + 4);
    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(recv_wait(f->c, r, 3), 3);
    assert_int_equal(r[0].xid, xid[1]);
    assert_int_equal(r[0].status, TBBT_RPCCONN_OK);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(r[i].status, TBBT_RPCCONN_LOST);
        assert_int_equal(r[i].detail, TBBT_E_BADREC);
        assert_true(r[i].xid == xid[0] || r[i].xid == xid[2]);
    }
    assert_int_equal(tbbt_rpcconn_recv(f->c, r, MAXR), TBBT_E_BADREC);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 0);
    assert_non_null(strstr(tbbt_rpcconn_error(f->c), "bogus record mark 0xffffffff"));
    check_after_reconnect(f);
}

/* A record that is not a reply (stream out of sync) also takes the connection down. */
static void test_not_a_reply(void **state)
{
    struct fixture *f = *state;
    uint32_t xid;
    uint8_t buf[256], out[16];
    queue_null(f->c, NULL, &xid);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    srv_read_call(f->sfd, buf, sizeof(buf));
    put32(out, 0x80000000u | 6);
    memcpy(out + 4, "garbag", 6);
    write_full(f->sfd, out, 10);
    expect_all_lost(f, &xid, 1, TBBT_E_BADREC);
    assert_non_null(strstr(tbbt_rpcconn_error(f->c), "not an RPC reply"));
}

/* Server resets the connection (RST) with calls outstanding, one half-received. */
static void test_reset_outstanding(void **state)
{
    struct fixture *f = *state;
    enum { N = 5 };
    uint32_t xid[N];
    uint8_t buf[256], out[64];
    for (int i = 0; i < N; i++)
        queue_null(f->c, NULL, &xid[i]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    for (int i = 0; i < N; i++)
        srv_read_call(f->sfd, buf, sizeof(buf));
    size_t olen = tcp_reply(out, xid[0], NULL, 0);
    write_full(f->sfd, out, olen - 3);   /* a partial record, then the reset */
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(f->sfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(f->sfd);
    f->sfd = -1;
    struct tbbt_rpcconn_reply r[MAXR];
    int got = recv_wait(f->c, r, N);
    assert_int_equal(got, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(r[i].status, TBBT_RPCCONN_LOST);
    int err = tbbt_rpcconn_recv(f->c, r, MAXR);
    assert_true(err == -ECONNRESET);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 0);
    f->sfd = dup(f->lfd);   /* check_after_reconnect closes sfd */
    check_after_reconnect(f);
}

/* Orderly EOF with calls outstanding; sends after it fail and are reported too. */
static void test_eof_outstanding(void **state)
{
    struct fixture *f = *state;
    uint32_t xid[2];
    uint8_t buf[256];
    queue_null(f->c, NULL, &xid[0]);
    queue_null(f->c, NULL, &xid[1]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    srv_read_call(f->sfd, buf, sizeof(buf));
    shutdown(f->sfd, SHUT_WR);
    expect_all_lost(f, xid, 2, -ECONNRESET);
    assert_non_null(strstr(tbbt_rpcconn_error(f->c), "closed by server"));
}

/* Receive buffer limit: one reply larger than max_record. */
static void test_record_too_big(void **state)
{
    struct fixture *f = *state;
    uint32_t xid;
    uint8_t buf[256], out[8];
    queue_null(f->c, NULL, &xid);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    srv_read_call(f->sfd, buf, sizeof(buf));
    /* 1 MiB + 64 KiB is the default limit: three non-last fragments of 512 KiB pass
       the per-fragment check but not the record total. */
    static uint8_t frag[512 * 1024];
    struct tbbt_rpcconn_reply r[MAXR];
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++) {
        put32(out, (uint32_t)sizeof(frag));
        write_full(f->sfd, out, 4);
        if (i == 0) {       /* a reply's header, so that only its size is wrong */
            put32(frag, xid);
            put32(frag + 4, 1);
        }
        write_full(f->sfd, frag, sizeof(frag));
        rc = tbbt_rpcconn_recv(f->c, r, MAXR);
    }
    if (rc > 0) {   /* the whole record was in by the last recv: the call came back LOST */
        assert_int_equal(rc, 1);
        assert_int_equal(r[0].status, TBBT_RPCCONN_LOST);
        assert_int_equal(r[0].detail, TBBT_E_BADREC);
        assert_int_equal(r[0].xid, xid);
        assert_int_equal(tbbt_rpcconn_recv(f->c, r, MAXR), TBBT_E_BADREC);
        assert_false(tbbt_rpcconn_is_up(f->c));
    } else {
        expect_all_lost(f, &xid, 1, TBBT_E_BADREC);
    }
    if (!strstr(tbbt_rpcconn_error(f->c), "more than"))
        fail_msg("error: %s", tbbt_rpcconn_error(f->c));
}

/* ------------------------------------------------------------------ UDP tests */

static size_t udp_recv_call(struct fixture *f, uint8_t *buf, size_t cap)
{
    f->peerlen = sizeof(f->peer);
    ssize_t r = recvfrom(f->lfd, buf, cap, 0, (struct sockaddr *)&f->peer, &f->peerlen);
    assert_true(r >= 40);
    assert_int_equal(get32(buf + 4), 0);
    return (size_t)r;
}

static void udp_reply(struct fixture *f, uint32_t xid)
{
    uint8_t out[64];
    size_t n = reply_hdr(out, xid, SUCCESS);
    assert_int_equal(sendto(f->lfd, out, n, 0, (struct sockaddr *)&f->peer, f->peerlen),
                     (ssize_t)n);
}

/* Datagrams: one per call, batched in one sendmmsg(); replies out of order; a stray
   datagram is counted, not fatal; expiry and retransmission with the same XID. */
/* Arguments larger than any UDP datagram (WRITE3args with 70,000 bytes of data). */
static void big_write(WRITE3args *a, uint8_t *data, size_t len)
{
    memset(a, 0, sizeof(*a));
    a->count = (count3)len;
    a->data.data_len = (u_int)len;
    a->data.data_val = (char *)data;
}

static void test_udp(void **state)
{
    struct fixture *f = *state;
    enum { N = 8 };
    uint32_t xid[N];
    uint8_t buf[256];
    for (int i = 0; i < N; i++)
        queue_null(f->c, (void *)(intptr_t)i, &xid[i]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    struct tbbt_rpcconn_stats st;
    tbbt_rpcconn_stats(f->c, &st);
    assert_int_equal(st.send_syscalls, 1);
    for (int i = 0; i < N; i++) {
        udp_recv_call(f, buf, sizeof(buf));
        assert_int_equal(get32(buf), xid[i]);
        assert_int_equal(get32(buf + 24), AUTH_NONE);
    }
    assert_int_equal(sendto(f->lfd, "junk", 4, 0, (struct sockaddr *)&f->peer, f->peerlen), 4);
    for (int i = N - 2; i >= 0; i--)   /* the last call gets no reply */
        udp_reply(f, xid[i]);
    struct tbbt_rpcconn_reply r[MAXR];
    assert_int_equal(recv_wait(f->c, r, N - 1), N - 1);
    for (int i = 0; i < N - 1; i++) {
        assert_int_equal(r[i].xid, xid[N - 2 - i]);
        assert_int_equal((intptr_t)r[i].arg, N - 2 - i);
    }
    tbbt_rpcconn_stats(f->c, &st);
    assert_int_equal(st.garbage, 1);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 1);

    /* Not yet old enough, then expired. */
    assert_int_equal(tbbt_rpcconn_expire(f->c, r[0].queued_ns - 1000000000ull, r, MAXR), 0);
    assert_int_equal(tbbt_rpcconn_expire(f->c, tbbt_now_ns() + 1, r, MAXR), 1);
    assert_int_equal(r[0].status, TBBT_RPCCONN_TIMEDOUT);
    assert_int_equal(r[0].xid, xid[N - 1]);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 0);
    struct tbbt_rpcconn_call again = {.prog = NFS_PROG, .vers = 3, .flags = TBBT_RPCCONN_CALL_XID,
                                      .xid = xid[N - 1]};
    uint32_t x2;
    assert_int_equal(tbbt_rpcconn_call(f->c, &again, &x2), 0);
    assert_int_equal(x2, xid[N - 1]);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    udp_recv_call(f, buf, sizeof(buf));
    assert_int_equal(get32(buf), xid[N - 1]);
    udp_reply(f, xid[N - 1]);
    udp_reply(f, xid[N - 1]);   /* duplicate: unmatched */
    assert_int_equal(recv_wait(f->c, r, 1), 1);
    assert_int_equal(r[0].status, TBBT_RPCCONN_OK);
    usleep(20000);
    assert_int_equal(tbbt_rpcconn_recv(f->c, r, MAXR), 0);
    tbbt_rpcconn_stats(f->c, &st);
    assert_int_equal(st.unmatched, 1);

    /* A call that cannot be one datagram is refused, and the connection stays usable. */
    static uint8_t data[70000];
    WRITE3args wa;
    big_write(&wa, data, sizeof(data));
    struct tbbt_rpcconn_call big = {.prog = NFS_PROG, .vers = 3, .proc = 7,
                                    .xargs = (xdrproc_t)xdr_WRITE3args, .args = &wa};
    assert_int_equal(tbbt_rpcconn_call(f->c, &big, &x2), -EINVAL);
    assert_int_equal(tbbt_rpcconn_outstanding(f->c), 0);
    assert_true(tbbt_rpcconn_is_up(f->c));
    queue_null(f->c, NULL, &x2);
    assert_int_equal(tbbt_rpcconn_flush(f->c), 0);
    udp_recv_call(f, buf, sizeof(buf));
    assert_int_equal(get32(buf), x2);
}

/* ------------------------------------------------------------------ synchronous helpers */

/* A one-shot server thread: answers each call on a TCP connection with a fixed body. */
struct oneshot {
    int lfd;
    int ncalls;
    uint8_t body[256];
    size_t blen;
    uint32_t proc[4], prog[4];
};

static void *oneshot_main(void *arg)
{
    struct oneshot *o = arg;
    int fd = accept(o->lfd, NULL, NULL);
    uint8_t buf[1024], out[512];
    for (int i = 0; i < o->ncalls; i++) {
        srv_read_call(fd, buf, sizeof(buf));
        o->prog[i] = get32(buf + 12);
        o->proc[i] = get32(buf + 20);
        write_full(fd, out, tcp_reply(out, get32(buf), o->body, o->blen));
    }
    close(fd);
    return NULL;
}

static void test_getport_and_mnt(void **state)
{
    (void)state;
    struct oneshot o = {.ncalls = 1};
    uint16_t port;
    o.lfd = listen_on(SOCK_STREAM, &port);
    put32(o.body, 2049);
    o.blen = 4;
    pthread_t t;
    pthread_create(&t, NULL, oneshot_main, &o);
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(NULL);
    assert_int_equal(tbbt_rpcconn_connect(c, "localhost", port), 0);
    uint16_t got = 0;
    assert_int_equal(tbbt_rpcconn_getport(c, NFS_PROG, 3, IPPROTO_TCP, 2000, &got), 0);
    assert_int_equal(got, 2049);
    pthread_join(t, NULL);
    assert_int_equal(o.prog[0], PMAPPROG);
    assert_int_equal(o.proc[0], PMAPPROC_GETPORT);
    tbbt_rpcconn_free(c);

    /* MNT: a mountres3 with an 8-byte handle and one flavor. */
    mountres3 mr;
    memset(&mr, 0, sizeof(mr));
    char h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int flav = AUTH_UNIX;
    mr.fhs_status = MNT3_OK;
    mr.mountres3_u.mountinfo.fhandle.fhandle3_len = 8;
    mr.mountres3_u.mountinfo.fhandle.fhandle3_val = h;
    mr.mountres3_u.mountinfo.auth_flavors.auth_flavors_len = 1;
    mr.mountres3_u.mountinfo.auth_flavors.auth_flavors_val = &flav;
    XDR x;
    xdrmem_create(&x, (char *)o.body, sizeof(o.body), XDR_ENCODE);
    assert_true(xdr_mountres3(&x, &mr));
    o.blen = xdr_getpos(&x);
    pthread_create(&t, NULL, oneshot_main, &o);
    c = tbbt_rpcconn_new(NULL);
    assert_int_equal(tbbt_rpcconn_connect(c, "127.0.0.1", port), 0);
    struct tbbt_rpcconn_fh fh;
    int mstat = -1;
    assert_int_equal(tbbt_rpcconn_mnt3(c, "/export", 2000, &mstat, &fh), 0);
    assert_int_equal(mstat, MNT3_OK);
    assert_int_equal(fh.len, 8);
    assert_memory_equal(fh.data, h, 8);
    pthread_join(t, NULL);
    assert_int_equal(o.prog[0], MOUNT_PROGRAM);
    assert_int_equal(o.proc[0], MOUNTPROC3_MNT);
    tbbt_rpcconn_free(c);
    close(o.lfd);
}

/* A synchronous call to a port nobody listens on, and one that gets no reply. */
static void test_sync_errors(void **state)
{
    (void)state;
    uint16_t port;
    int lfd = listen_on(SOCK_STREAM, &port);
    close(lfd);
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(NULL);
    assert_int_equal(tbbt_rpcconn_connect(c, "127.0.0.1", port), -ECONNREFUSED);
    assert_non_null(strstr(tbbt_rpcconn_error(c), "cannot connect"));
    struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3};
    assert_int_equal(tbbt_rpcconn_call(c, &call, NULL), -ENOTCONN);
    tbbt_rpcconn_free(c);

    lfd = listen_on(SOCK_STREAM, &port);
    c = tbbt_rpcconn_new(NULL);
    assert_int_equal(tbbt_rpcconn_connect(c, "127.0.0.1", port), 0);
    struct tbbt_rpcconn_reply rep;
    assert_int_equal(tbbt_rpcconn_call_sync(c, &call, 200, &rep), -ETIMEDOUT);
    assert_int_equal(tbbt_rpcconn_outstanding(c), 0);
    tbbt_rpcconn_free(c);
    close(lfd);
}

/*
 * A server that loses replies: on its first connection it reads a call and its
 * retransmission (same XID expected) without answering, then resets the connection; on
 * the second it reads the call again and answers it.
 */
struct lossy {
    int lfd;
    uint32_t xid[3];
};

static void *lossy_main(void *arg)
{
    struct lossy *l = arg;
    uint8_t buf[1024], out[256];
    int fd = accept(l->lfd, NULL, NULL);
    srv_read_call(fd, buf, sizeof(buf));
    l->xid[0] = get32(buf);
    srv_read_call(fd, buf, sizeof(buf));
    l->xid[1] = get32(buf);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
    fd = accept(l->lfd, NULL, NULL);
    srv_read_call(fd, buf, sizeof(buf));
    l->xid[2] = get32(buf);
    write_full(fd, out, tcp_reply(out, l->xid[2], NULL, 0));
    srv_read_call(fd, buf, sizeof(buf));   /* the give-up case: never answered */
    usleep(400000);                         /* (a close would be a lost connection) */
    close(fd);
    return NULL;
}

/*
 * The retransmission policy of the synchronous helpers: a timeout resends with the same
 * XID on the same connection, a reset reconnects and resends with the same XID; the
 * policy gives up after retrans resends.
 */
static void test_sync_retry(void **state)
{
    (void)state;
    struct lossy l = {0};
    uint16_t port;
    l.lfd = listen_on(SOCK_STREAM, &port);
    pthread_t t;
    pthread_create(&t, NULL, lossy_main, &l);
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(NULL);
    assert_int_equal(tbbt_rpcconn_connect(c, "127.0.0.1", port), 0);
    struct tbbt_rpcconn_retry p = {.timeout_ms = 200, .retrans = 3, .relost = 1,
                                   .dead_ms = 2000}, got;
    assert_false(tbbt_rpcconn_get_retry(c, &got));
    tbbt_rpcconn_set_retry(c, &p);
    assert_true(tbbt_rpcconn_get_retry(c, &got));
    assert_int_equal(got.retrans, 3);
    assert_int_equal(tbbt_rpcconn_retry_step(&p, 3, 1), TBBT_RPCCONN_RESEND);
    assert_int_equal(tbbt_rpcconn_retry_step(&p, 4, 0), TBBT_RPCCONN_GIVE_UP);
    assert_int_equal(tbbt_rpcconn_retry_step(&p, 0, 2), TBBT_RPCCONN_GIVE_UP);
    struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3};
    struct tbbt_rpcconn_reply rep;
    assert_int_equal(tbbt_rpcconn_call_sync(c, &call, 1, &rep), 0);
    assert_int_equal(rep.status, TBBT_RPCCONN_OK);
    assert_int_equal(l.xid[1], l.xid[0]);
    assert_int_equal(l.xid[2], l.xid[0]);
    assert_int_equal(rep.xid, l.xid[0]);
    struct tbbt_rpcconn_stats st;
    tbbt_rpcconn_stats(c, &st);
    assert_int_equal(st.retransmits, 2);
    assert_int_equal(st.reconnects, 1);

    p.retrans = 0;      /* one send, no resend: gives up after its timeout */
    tbbt_rpcconn_set_retry(c, &p);
    uint64_t t0 = tbbt_now_ns();
    assert_int_equal(tbbt_rpcconn_call_sync(c, &call, 1, &rep), -ETIMEDOUT);
    assert_true(tbbt_now_ns() - t0 >= 200000000ull);
    assert_non_null(strstr(tbbt_rpcconn_error(c), "after 1 sends"));
    assert_int_equal(tbbt_rpcconn_outstanding(c), 0);
    pthread_join(t, NULL);
    tbbt_rpcconn_free(c);
    close(l.lfd);
}

/* ------------------------------------------------------------------ two threads */

/* Echo server: answers every NULL call, in batches, until EOF. */
static void *echo_main(void *arg)
{
    int fd = *(int *)arg;
    static _Thread_local uint8_t in[256 * 1024], out[256 * 1024];
    size_t have = 0;
    for (;;) {
        ssize_t r = read(fd, in + have, sizeof(in) - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        size_t off = 0, olen = 0;
        while (have - off >= 4) {
            size_t len = get32(in + off) & 0x7fffffffu;
            if (have - off < 4 + len)
                break;
            olen += tcp_reply(out + olen, get32(in + off + 4), NULL, 0);
            off += 4 + len;
        }
        memmove(in, in + off, have - off);
        have -= off;
        write_full(fd, out, olen);
    }
    close(fd);
    return NULL;
}

struct threaded {
    struct tbbt_rpcconn *c;
    atomic_int received;
    int total, window;
    atomic_bool done;
    atomic_int bad;
};

static void *receiver_main(void *arg)
{
    struct threaded *t = arg;
    struct tbbt_rpcconn_reply r[MAXR];
    uint32_t last = 0;
    uintptr_t seq = 0;
    bool first = true;
    while (atomic_load(&t->received) < t->total) {
        struct pollfd p = {.fd = tbbt_rpcconn_fd(t->c), .events = POLLIN};
        poll(&p, 1, 100);
        int n = tbbt_rpcconn_recv(t->c, r, MAXR);
        if (n < 0) {
            atomic_fetch_add(&t->bad, 1);
            break;
        }
        for (int i = 0; i < n; i++) {
            /* Single connection, FIFO server: XIDs come back in order. */
            if (r[i].status != TBBT_RPCCONN_OK || (!first && r[i].xid != last + 1) ||
                (uintptr_t)r[i].arg != ++seq)
                atomic_fetch_add(&t->bad, 1);
            last = r[i].xid;
            first = false;
        }
        atomic_fetch_add(&t->received, n);
    }
    atomic_store(&t->done, true);
    return NULL;
}

/* Sender and receiver on two threads, a window of 32 calls, 50,000 calls. */
static void test_two_threads(void **state)
{
    (void)state;
    uint16_t port;
    int lfd = listen_on(SOCK_STREAM, &port);
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(NULL);
    assert_int_equal(tbbt_rpcconn_connect(c, "127.0.0.1", port), 0);
    int sfd = accept(lfd, NULL, NULL);
    pthread_t echo, recv_t;
    pthread_create(&echo, NULL, echo_main, &sfd);
    struct threaded t = {.c = c, .total = 50000, .window = 32};
    pthread_create(&recv_t, NULL, receiver_main, &t);
    int sent = 0;
    while (sent < t.total && !atomic_load(&t.done)) {
        int batch = 0;
        while (sent < t.total && sent - atomic_load(&t.received) < t.window) {
            /* The cookie is the call's sequence number, checked by the receiver. */
            struct tbbt_rpcconn_call call = {.prog = NFS_PROG, .vers = 3,
                                             .arg = (void *)(uintptr_t)(sent + 1)};
            assert_int_equal(tbbt_rpcconn_call(c, &call, NULL), 0);
            sent++;
            batch++;
        }
        if (batch == 0) {
            usleep(10);
            continue;
        }
        int rc;
        while ((rc = tbbt_rpcconn_flush(c)) == -EAGAIN) {
            struct pollfd p = {.fd = tbbt_rpcconn_fd(c), .events = POLLOUT};
            poll(&p, 1, 100);
        }
        assert_int_equal(rc, 0);
    }
    pthread_join(recv_t, NULL);
    assert_int_equal(atomic_load(&t.bad), 0);
    assert_int_equal(atomic_load(&t.received), t.total);
    assert_int_equal(tbbt_rpcconn_outstanding(c), 0);
    tbbt_rpcconn_free(c);
    pthread_join(echo, NULL);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_null_roundtrip, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_batching, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_recv_lowat, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_split_records, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_multi_fragment, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_reply_kinds, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_bogus_mark, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_reply, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_reset_outstanding, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_eof_outstanding, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_record_too_big, setup_tcp, teardown),
        cmocka_unit_test_setup_teardown(test_udp, setup_udp, teardown),
        cmocka_unit_test(test_getport_and_mnt),
        cmocka_unit_test(test_sync_errors),
        cmocka_unit_test(test_sync_retry),
        cmocka_unit_test(test_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
