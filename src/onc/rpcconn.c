/* SPDX-License-Identifier: MIT */
/*
 * rpcconn: asynchronous ONC RPC client connections (see rpcconn.h for the API and the
 * threading contract).  References: RFC 5531 sections 9 (call and reply messages) and
 * 11 (record marking), RFC 1833 (portmap GETPORT), RFC 1813 Appendix I (MOUNT v3).
 *
 * Ownership of a call (struct tbbt__onc_req), one owner at a time:
 *   send side: allocates it in tbbt_rpcconn_call() and pushes it on `pending`, a
 *     lock-free LIFO (Treiber stack), *before* its bytes enter the send queue; it never
 *     touches it again;
 *   receive side: takes the whole stack with one atomic exchange when a reply's XID is
 *     not in its XID hash table, inserts the calls there, and frees each call when it
 *     completes (reply, loss or expiry).
 * Going down: the receive side swaps `pending` to the DEAD sentinel (so later pushes
 * fail and the sender learns the connection is down, with no window where a call could
 * be pushed and never completed) and moves every outstanding call to `failq`.  The send
 * side never takes that decision itself: on a send error it records the error in
 * `tx_err` and shuts the socket down, which wakes the receive side's poll().
 *
 * The send queue is one contiguous byte buffer owned by the send side: calls are
 * encoded straight into it (TCP: behind a 4-byte record mark), so a batch leaves with
 * one send(); UDP keeps the datagram lengths beside it for sendmmsg().  The receive
 * buffer is parsed in place; a record that is split across reads or made of several
 * fragments is assembled in a second buffer.  Reply bytes are untrusted: every read
 * goes through xdrmem (bounds-checked), fragment and record sizes are capped.
 * Record marking, the reply header and the XID table are the onc module's (onc.h); the
 * synchronous helpers and the retry policy are in rpcsync.c, the connection object in
 * rpcconn-int.h.
 */
#include "onc/rpcconn.h"
#include "onc/rpcconn-int.h"

#include <assert.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <rpc/pmap_prot.h>

#include "onc/onc.h"
#include "proto/mount.h"
#include "proto/xdrmem.h"
#include "util/buf.h"
#include "util/util.h"

#define DEF_RECV_BUF (256u * 1024)
#define DEF_MAX_RECORD (1024u * 1024 + 64 * 1024)
#define DEF_CONNECT_MS 5000
#define DEF_UDP_SOCKBUF (4 * 1024 * 1024)
#define UDP_SLOT (64u * 1024)             /* largest UDP datagram */
#define SEND_CHUNK (64u * 1024)           /* first encoding attempt's room */
#define UDP_BATCH 64                      /* datagrams per sendmmsg() */
#define UDP_MAX_PAYLOAD 65507u            /* 65535 - IPv4 header (20) - UDP header (8) */
#define TAB_MIN 1024                      /* XID hash buckets, power of two */

/* Address of `dead` marks the pending stack closed. */
static struct tbbt__onc_req dead;
#define DEAD (&dead)

/* ------------------------------------------------------------------ errors */

void tbbt__rpcconn_set_error(struct tbbt_rpcconn *c, int err, const char *fmt, ...)
{
    pthread_mutex_lock(&c->err_mu);
    if (!c->err_set) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->errstr, sizeof(c->errstr), fmt, ap);
        va_end(ap);
        c->err = err;
        c->err_set = true;
    }
    pthread_mutex_unlock(&c->err_mu);
}

static int get_error(const struct tbbt_rpcconn *c, int dflt)
{
    struct tbbt_rpcconn *m = (struct tbbt_rpcconn *)c;
    pthread_mutex_lock(&m->err_mu);
    int err = m->err_set ? m->err : dflt;
    pthread_mutex_unlock(&m->err_mu);
    return err;
}

static void clear_error(struct tbbt_rpcconn *c)
{
    pthread_mutex_lock(&c->err_mu);
    c->err_set = false;
    c->err = 0;
    c->errstr[0] = '\0';
    pthread_mutex_unlock(&c->err_mu);
}

const char *tbbt_rpcconn_error(const struct tbbt_rpcconn *c)
{
    struct tbbt_rpcconn *m = (struct tbbt_rpcconn *)c;
    pthread_mutex_lock(&m->err_mu);
    const char *s = m->err_set ? m->errstr : "";
    pthread_mutex_unlock(&m->err_mu);
    return s;
}

const char *tbbt_rpcconn_status_name(int status)
{
    static const char *const names[] = {"OK", "ACCEPT_ERR", "DENIED", "GARBAGE", "LOST",
                                        "TIMEDOUT"};
    if (status < 0 || status >= (int)G_N_ELEMENTS(names))
        return "UNKNOWN";
    return names[status];
}

/* ------------------------------------------------------------------ XID table (receive side) */

_Static_assert(offsetof(struct tbbt__onc_req, x) == 0, "a call starts with its XID table entry");

/* The call an XID table entry is in (its first member). */
static inline struct tbbt__onc_req *req_of(struct tbbt_onc_xident *x)
{
    return (struct tbbt__onc_req *)x;
}

/* The entry of a call, or NULL for no call. */
static inline struct tbbt_onc_xident *xent(struct tbbt__onc_req *e)
{
    return (struct tbbt_onc_xident *)e;
}

static inline struct tbbt__onc_req *req_next(const struct tbbt__onc_req *e)
{
    return req_of(e->x.next);
}

/* Moves the calls the send side handed over into the table; returns how many. */
static size_t drain_pending(struct tbbt_rpcconn *c)
{
    struct tbbt__onc_req *l = atomic_exchange_explicit(&c->pending, NULL, memory_order_acquire);
    size_t n = 0;
    assert(l != DEAD);
    for (struct tbbt__onc_req *next; l; l = next, n++) {
        next = req_next(l);
        tbbt_onc_xidtab_insert(&c->tab, &l->x);
    }
    return n;
}

static struct tbbt__onc_req *take_req(struct tbbt_rpcconn *c, uint32_t xid)
{
    struct tbbt__onc_req *e = req_of(tbbt_onc_xidtab_remove(&c->tab, xid));
    if (e || drain_pending(c) == 0)
        return e;
    return req_of(tbbt_onc_xidtab_remove(&c->tab, xid));
}

/* ------------------------------------------------------------------ going down */

static void failq_add_list(struct tbbt_rpcconn *c, struct tbbt__onc_req *l)
{
    for (struct tbbt__onc_req *next; l && l != DEAD; l = next) {
        next = req_next(l);
        l->x.next = xent(c->failq);
        c->failq = l;
    }
}

/*
 * Receive side or exclusive: the connection is unusable.  Records the reason, closes
 * the hand-off (later calls fail) and moves every outstanding call to failq.
 */
static void __attribute__((format(printf, 3, 4)))
go_down(struct tbbt_rpcconn *c, int err, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tbbt__rpcconn_set_error(c, err, "%s", msg);
    if (c->rx_down)
        return;
    c->rx_down = true;
    c->lost_err = get_error(c, err);
    atomic_store(&c->down, true);
    if (c->fd >= 0)
        shutdown(c->fd, SHUT_RDWR);
    failq_add_list(c, atomic_exchange_explicit(&c->pending, DEAD, memory_order_acquire));
    failq_add_list(c, req_of(tbbt_onc_xidtab_take_all(&c->tab)));
}

static void complete(struct tbbt__onc_req *e, struct tbbt_rpcconn_reply *r, int status,
                     int32_t detail, uint64_t now)
{
    r->xid = e->x.xid;
    r->status = status;
    r->detail = detail;
    r->res_status = -1;
    r->queued_ns = e->queued_ns;
    r->recv_ns = now;
    r->arg = e->arg;
    r->res = e->res;
}

static void release(struct tbbt_rpcconn *c, struct tbbt__onc_req *e)
{
    g_free(e);
    atomic_fetch_sub_explicit(&c->outstanding, 1, memory_order_relaxed);
}

/* Returns failed calls in out[n..max); returns the new n. */
static int emit_failed(struct tbbt_rpcconn *c, struct tbbt_rpcconn_reply *out, int n, int max)
{
    if (!c->failq)
        return n;
    uint64_t now = tbbt_now_ns();
    while (n < max && c->failq) {
        struct tbbt__onc_req *e = c->failq;
        c->failq = req_next(e);
        complete(e, &out[n++], TBBT_RPCCONN_LOST, c->lost_err, now);
        release(c, e);
        TBBT__ONC_STAT_ADD(c, lost, 1);
    }
    return n;
}

/* ------------------------------------------------------------------ lifecycle */

/* The AUTH_SYS body (RFC 5531 appendix A) of machine, stamped now, into buf. */
static uint32_t encode_authsys(const char *machine, uint32_t uid, uint32_t gid, uint32_t ngids,
                               const uint32_t *gidv, uint8_t *buf)
{
    return tbbt_rpcconn_encode_authsys(buf, (uint32_t)time(NULL), machine, strlen(machine), uid,
                                       gid, ngids, gidv);
}

static void encode_cred(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_opts *o)
{
    c->cred_flavor = AUTH_NONE;
    c->cred_len = 0;
    if (o->flavor != TBBT_RPCCONN_AUTH_SYS)
        return;
    if (o->machine) {
        g_strlcpy(c->machine, o->machine, sizeof(c->machine));
    } else if (gethostname(c->machine, sizeof(c->machine)) != 0) {
        g_strlcpy(c->machine, "tbbt", sizeof(c->machine));
    }
    c->machine[MAX_MACHINE_NAME] = '\0';
    c->cred_len = encode_authsys(c->machine, o->uid, o->gid, o->ngids, o->gids, c->cred);
    c->cred_flavor = AUTH_UNIX;
}

static void alloc_recv(struct tbbt_rpcconn *c, size_t recv_buf)
{
    if (!c->udp) {
        c->rcap = MAX(recv_buf, 4096);
        c->rbuf = g_malloc(c->rcap);
        return;
    }
    c->nslots = MAX(recv_buf / UDP_SLOT, 1);
    c->rcap = c->nslots * UDP_SLOT;
    c->rbuf = g_malloc(c->rcap);
    c->rmsg = g_new0(struct mmsghdr, c->nslots);
    c->riov = g_new0(struct iovec, c->nslots);
    for (size_t i = 0; i < c->nslots; i++) {
        c->riov[i].iov_base = c->rbuf + i * UDP_SLOT;
        c->riov[i].iov_len = UDP_SLOT;
        c->rmsg[i].msg_hdr.msg_iov = &c->riov[i];
        c->rmsg[i].msg_hdr.msg_iovlen = 1;
    }
}

struct tbbt_rpcconn *tbbt_rpcconn_new(const struct tbbt_rpcconn_opts *opts)
{
    static const struct tbbt_rpcconn_opts defaults;
    const struct tbbt_rpcconn_opts *o = opts ? opts : &defaults;
    struct tbbt_rpcconn *c = g_new0(struct tbbt_rpcconn, 1);
    c->magic = TBBT__RPCCONN_MAGIC;
    c->udp = o->transport == TBBT_RPCCONN_UDP;
    c->max_record = o->max_record ? o->max_record : DEF_MAX_RECORD;
    if (c->udp)   /* a call is one datagram: at most the largest UDP payload */
        c->max_record = MIN(c->max_record, UDP_MAX_PAYLOAD);
    if (c->max_record > TBBT_ONC_FRAG_MAX)
        c->max_record = TBBT_ONC_FRAG_MAX;
    tbbt_onc_recasm_init(&c->rec, c->max_record);
    c->connect_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : DEF_CONNECT_MS;
    c->sock_buf = o->sock_buf > 0 ? o->sock_buf : (c->udp ? DEF_UDP_SOCKBUF : 0);
    c->reserved_port = o->reserved_port;
    c->fd = -1;
    encode_cred(c, o);
    atomic_init(&c->pending, DEAD);
    atomic_init(&c->down, true);
    pthread_mutex_init(&c->err_mu, NULL);
    c->rx_down = true;
    tbbt_onc_xidtab_init(&c->tab, TAB_MIN);
    c->next_xid = g_random_int();
    alloc_recv(c, o->recv_buf ? o->recv_buf : DEF_RECV_BUF);
    return c;
}

/* Frees every call the connection still holds, without completing them. */
static void drop_all(struct tbbt_rpcconn *c)
{
    struct tbbt__onc_req *l = atomic_exchange(&c->pending, DEAD);
    failq_add_list(c, l);
    failq_add_list(c, req_of(tbbt_onc_xidtab_take_all(&c->tab)));
    while (c->failq) {
        struct tbbt__onc_req *e = c->failq;
        c->failq = req_next(e);
        g_free(e);
    }
}

void tbbt_rpcconn_free(struct tbbt_rpcconn *c)
{
    if (!c)
        return;
    assert(c->magic == TBBT__RPCCONN_MAGIC);
    if (c->fd >= 0)
        close(c->fd);
    drop_all(c);
    pthread_mutex_destroy(&c->err_mu);
    tbbt_onc_xidtab_fini(&c->tab);
    g_free(c->sbuf);
    g_free(c->dglen);
    g_free(c->rbuf);
    tbbt_onc_recasm_fini(&c->rec);
    g_free(c->rmsg);
    g_free(c->riov);
    c->magic = 0;
    g_free(c);
}

/* Waits for a non-blocking connect() to finish; returns 0 or -errno. */
static int wait_connected(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r;
    do {
        r = poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return -errno;
    if (r == 0)
        return -ETIMEDOUT;
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        return -errno;
    return -soerr;
}

static int open_socket(struct tbbt_rpcconn *c, int *fdp)
{
    int fd = socket(c->addr.ss_family, (c->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    if (!c->udp)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (c->sock_buf > 0) {
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &c->sock_buf, sizeof(c->sock_buf));
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &c->sock_buf, sizeof(c->sock_buf));
    }
    int rc = 0;
    if (c->reserved_port && c->addr.ss_family == AF_INET &&
        bindresvport(fd, NULL) < 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    if (connect(fd, (struct sockaddr *)&c->addr, c->addrlen) < 0)
        rc = errno == EINPROGRESS ? wait_connected(fd, c->connect_ms) : -errno;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    *fdp = fd;
    return 0;
}

/* Exclusive: forgets queued bytes and parser state. */
static void reset_streams(struct tbbt_rpcconn *c)
{
    c->slen = c->soff = 0;
    c->dgn = c->dgi = 0;
    c->rhead = c->rtail = 0;
    tbbt_onc_recasm_reset(&c->rec);
    c->slot_i = c->slot_n = 0;
}

static int do_connect(struct tbbt_rpcconn *c)
{
    char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
    int fd = -1, rc = open_socket(c, &fd);
    if (rc < 0) {
        getnameinfo((struct sockaddr *)&c->addr, c->addrlen, host, sizeof(host), serv,
                    sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
        tbbt__rpcconn_set_error(c, rc, "cannot connect to %s port %s (%s): %s", host, serv,
                                c->udp ? "udp" : "tcp", tbbt_strerror(rc));
        return rc;
    }
    reset_streams(c);
    c->fd = fd;
    c->rx_down = false;
    c->lost_err = 0;
    atomic_store(&c->tx_err, 0);
    atomic_store(&c->down, false);
    atomic_store_explicit(&c->pending, NULL, memory_order_release);
    return 0;
}

/* Exclusive: closes the socket (its calls fail as LOST, for the reason given). */
static void close_for(struct tbbt_rpcconn *c, const char *why)
{
    if (c->fd >= 0) {
        if (!c->rx_down)
            go_down(c, -ECONNABORTED, "connection closed for %s", why);
        close(c->fd);
        c->fd = -1;
    }
    clear_error(c);
}

int tbbt_rpcconn_connect(struct tbbt_rpcconn *c, const char *host, uint16_t port)
{
    assert(c->magic == TBBT__RPCCONN_MAGIC);
    close_for(c, "a new connect");
    char serv[8];
    snprintf(serv, sizeof(serv), "%u", port);
    struct addrinfo hints = {.ai_socktype = c->udp ? SOCK_DGRAM : SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host, serv, &hints, &ai);
    if (g != 0) {
        tbbt__rpcconn_set_error(c, -EHOSTUNREACH, "cannot resolve '%s': %s", host, gai_strerror(g));
        return -EHOSTUNREACH;
    }
    /* every address the name has, in order ("localhost" may be ::1 first, the server on
     * 127.0.0.1 only); the first that connects is kept for reconnects */
    int rc = -EHOSTUNREACH;
    for (struct addrinfo *p = ai; p; p = p->ai_next) {
        if (p->ai_addrlen > sizeof(c->addr))
            continue;
        memcpy(&c->addr, p->ai_addr, p->ai_addrlen);
        c->addrlen = p->ai_addrlen;
        if (p != ai)
            clear_error(c);
        if ((rc = do_connect(c)) == 0)
            break;
    }
    freeaddrinfo(ai);
    return rc;
}

int tbbt_rpcconn_reconnect(struct tbbt_rpcconn *c)
{
    assert(c->magic == TBBT__RPCCONN_MAGIC);
    if (c->addrlen == 0) {
        tbbt__rpcconn_set_error(c, -ENOTCONN, "reconnect before any connect");
        return -ENOTCONN;
    }
    close_for(c, "reconnect");
    return do_connect(c);
}

int tbbt_rpcconn_fd(const struct tbbt_rpcconn *c)
{
    return c->fd;
}

bool tbbt_rpcconn_is_up(const struct tbbt_rpcconn *c)
{
    return c->fd >= 0 && !atomic_load(&c->down);
}

unsigned tbbt_rpcconn_outstanding(const struct tbbt_rpcconn *c)
{
    return atomic_load_explicit(&c->outstanding, memory_order_relaxed);
}

void tbbt_rpcconn_stats(const struct tbbt_rpcconn *c, struct tbbt_rpcconn_stats *s)
{
#define GET(f) s->f = atomic_load_explicit(&c->st.f, memory_order_relaxed)
    GET(calls);
    GET(send_syscalls);
    GET(bytes_sent);
    GET(replies);
    GET(recv_syscalls);
    GET(bytes_recv);
    GET(unmatched);
    GET(garbage);
    GET(lost);
    GET(timedout);
    GET(retransmits);
    GET(reconnects);
#undef GET
}

/* ------------------------------------------------------------------ send side */

/* Makes room for at least `need` more bytes at the end of the send queue. */
static void sq_reserve(struct tbbt_rpcconn *c, size_t need)
{
    if (c->soff == c->slen) {
        c->soff = c->slen = 0;
        c->dgi = c->dgn = 0;
    } else if (c->soff > c->scap / 2) {
        memmove(c->sbuf, c->sbuf + c->soff, c->slen - c->soff);
        c->slen -= c->soff;
        c->soff = 0;
        if (c->udp) {
            memmove(c->dglen, c->dglen + c->dgi, (c->dgn - c->dgi) * sizeof(*c->dglen));
            c->dgn -= c->dgi;
            c->dgi = 0;
        }
    }
    if (c->scap - c->slen >= need)
        return;
    c->scap = MAX(c->scap * 2, c->slen + need);
    c->sbuf = g_realloc(c->sbuf, c->scap);
}

uint32_t tbbt_rpcconn_encode_authsys(uint8_t *buf, uint32_t stamp, const void *machine,
                                     size_t machine_len, uint32_t uid, uint32_t gid,
                                     uint32_t ngids, const uint32_t *gids)
{
    u_int mlen = (u_int)MIN(machine_len, 255u), n = MIN(ngids, TBBT_RPCCONN_MAX_GIDS);
    XDR x;
    bool ok;

    xdrmem_create(&x, (char *)buf, TBBT_RPCCONN_AUTH_MAX, XDR_ENCODE);
    ok = xdr_u_int(&x, &stamp) && xdr_u_int(&x, &mlen) &&
         xdr_opaque(&x, (char *)machine, mlen) && xdr_u_int(&x, &uid) && xdr_u_int(&x, &gid) &&
         xdr_u_int(&x, &n);
    for (u_int i = 0; ok && i < n; i++) {
        uint32_t g = gids[i];
        ok = xdr_u_int(&x, &g);
    }
    assert(ok);   /* 255-byte name + 16 gids always fit 400 bytes */
    (void)ok;
    uint32_t len = xdr_getpos(&x);
    xdr_destroy(&x);
    return len;
}

/* The credential body of call: the connection's, or a per-call AUTH_SYS one (cached). */
static const uint8_t *call_cred(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call,
                                uint32_t *len)
{
    if ((call->flags & TBBT_RPCCONN_CALL_RAWCRED) && c->cred_flavor == AUTH_UNIX &&
        call->cred_len <= TBBT_RPCCONN_AUTH_MAX) {
        *len = call->cred_len;
        return call->cred;
    }
    if (!(call->flags & TBBT_RPCCONN_CALL_CRED) || c->cred_flavor != AUTH_UNIX) {
        *len = c->cred_len;
        return c->cred;
    }
    if (c->ocred_len == 0 || c->ocred_uid != call->uid || c->ocred_gid != call->gid) {
        c->ocred_len = encode_authsys(c->machine, call->uid, call->gid, 1, &call->gid, c->ocred);
        c->ocred_uid = call->uid;
        c->ocred_gid = call->gid;
    }
    *len = c->ocred_len;
    return c->ocred;
}

static bool encode_call(struct tbbt_rpcconn *c, XDR *x, uint32_t xid,
                        const struct tbbt_rpcconn_call *call)
{
    uint32_t cred_len;
    const uint8_t *cred = call_cred(c, call, &cred_len);
    struct rpc_msg m = {
        .rm_xid = xid,
        .rm_direction = CALL,
        .rm_call = {
            .cb_rpcvers = RPC_MSG_VERSION,
            .cb_prog = call->prog,
            .cb_vers = call->vers,
            .cb_proc = call->proc,
            .cb_cred = {.oa_flavor = c->cred_flavor, .oa_base = (caddr_t)cred,
                        .oa_length = cred_len},
            .cb_verf = {.oa_flavor = AUTH_NONE, .oa_base = (caddr_t)c->cred, .oa_length = 0},
        },
    };
    if (!xdr_callmsg(x, &m))
        return false;
    return !call->xargs || call->xargs(x, (void *)call->args);
}

/* Encodes the call at the end of the queue (not yet committed); returns its length. */
static int encode_into_queue(struct tbbt_rpcconn *c, uint32_t xid,
                             const struct tbbt_rpcconn_call *call, size_t *len)
{
    size_t mark = c->udp ? 0 : 4;
    for (size_t want = SEND_CHUNK;; want *= 2) {
        want = MIN(want, c->max_record);
        sq_reserve(c, mark + want);
        XDR x;
        xdrmem_create(&x, (char *)c->sbuf + c->slen + mark, (u_int)want, XDR_ENCODE);
        bool ok = encode_call(c, &x, xid, call);
        *len = xdr_getpos(&x);
        xdr_destroy(&x);
        if (ok)
            return 0;
        if (want >= c->max_record)
            return -EINVAL;
    }
}

/* Pushes e on the pending stack; false when the connection is down. */
static bool push_pending(struct tbbt_rpcconn *c, struct tbbt__onc_req *e)
{
    struct tbbt__onc_req *old = atomic_load_explicit(&c->pending, memory_order_relaxed);
    do {
        if (old == DEAD)
            return false;
        e->x.next = xent(old);
    } while (!atomic_compare_exchange_weak_explicit(&c->pending, &old, e, memory_order_release,
                                                    memory_order_relaxed));
    return true;
}

int tbbt_rpcconn_call(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call,
                      uint32_t *xidp)
{
    assert(c->magic == TBBT__RPCCONN_MAGIC);
    if (atomic_load_explicit(&c->pending, memory_order_relaxed) == DEAD)
        return c->fd < 0 ? -ENOTCONN : -EPIPE;
    uint32_t xid = (call->flags & TBBT_RPCCONN_CALL_XID) ? call->xid : c->next_xid;
    size_t len;
    if (encode_into_queue(c, xid, call, &len) < 0)
        return -EINVAL;
    struct tbbt__onc_req *e = g_new(struct tbbt__onc_req, 1);
    *e = (struct tbbt__onc_req){.x.xid = xid, .queued_ns = tbbt_now_ns(), .xres = call->xres,
                      .res = call->res, .res_size = call->res_size, .arg = call->arg};
    if (xidp)
        *xidp = xid;    /* before the hand-over: the reply may be read at once */
    atomic_fetch_add_explicit(&c->outstanding, 1, memory_order_relaxed);
    if (!push_pending(c, e)) {
        atomic_fetch_sub_explicit(&c->outstanding, 1, memory_order_relaxed);
        g_free(e);
        return -EPIPE;
    }
    if (!(call->flags & TBBT_RPCCONN_CALL_XID))
        c->next_xid++;
    if (c->udp) {
        if (c->dgn == c->dgcap) {
            c->dgcap = MAX(c->dgcap * 2, 64);
            c->dglen = g_renew(uint32_t, c->dglen, c->dgcap);
        }
        c->dglen[c->dgn++] = (uint32_t)len;
    } else {
        tbbt_onc_mark_put(c->sbuf + c->slen, (uint32_t)len, true);
        len += 4;
    }
    c->slen += len;
    TBBT__ONC_STAT_ADD(c, calls, 1);
    return 0;
}

/* Send side: the socket failed; let the receive side take the connection down. */
static int send_failed(struct tbbt_rpcconn *c, int err)
{
    tbbt__rpcconn_set_error(c, err, "send to server failed: %s", tbbt_strerror(err));
    atomic_store(&c->tx_err, err);
    shutdown(c->fd, SHUT_RDWR);
    return err;
}

/* After a send that failed with errno: 1 to try again (EINTR), -EAGAIN (the socket is
 * full), or the connection's failure (send_failed()). */
static int send_errno(struct tbbt_rpcconn *c)
{
    if (errno == EINTR)
        return 1;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return -EAGAIN;
    return send_failed(c, -errno);
}

static int flush_tcp(struct tbbt_rpcconn *c)
{
    while (c->soff < c->slen) {
        ssize_t r = send(c->fd, c->sbuf + c->soff, c->slen - c->soff,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r < 0 && (r = send_errno(c)) > 0)
            continue;
        if (r < 0)
            return (int)r;
        c->soff += (size_t)r;
        TBBT__ONC_STAT_ADD(c, send_syscalls, 1);
        TBBT__ONC_STAT_ADD(c, bytes_sent, (uint64_t)r);
    }
    c->soff = c->slen = 0;
    return 0;
}

static int flush_udp(struct tbbt_rpcconn *c)
{
    struct mmsghdr m[UDP_BATCH];
    struct iovec iov[UDP_BATCH];
    while (c->dgi < c->dgn) {
        size_t k = MIN(c->dgn - c->dgi, (size_t)UDP_BATCH), off = c->soff;
        for (size_t i = 0; i < k; i++) {
            iov[i] = (struct iovec){.iov_base = c->sbuf + off, .iov_len = c->dglen[c->dgi + i]};
            m[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
            off += iov[i].iov_len;
        }
        int r = sendmmsg(c->fd, m, (unsigned)k, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r < 0 && (r = send_errno(c)) > 0)
            continue;
        if (r < 0)
            return (int)r;
        for (int i = 0; i < r; i++) {
            c->soff += iov[i].iov_len;
            TBBT__ONC_STAT_ADD(c, bytes_sent, iov[i].iov_len);
        }
        c->dgi += (size_t)r;
        TBBT__ONC_STAT_ADD(c, send_syscalls, 1);
    }
    c->soff = c->slen = 0;
    c->dgi = c->dgn = 0;
    return 0;
}

int tbbt_rpcconn_flush(struct tbbt_rpcconn *c)
{
    assert(c->magic == TBBT__RPCCONN_MAGIC);
    if (c->soff == c->slen)
        return 0;
    if (c->fd < 0)
        return -ENOTCONN;
    int tx = atomic_load_explicit(&c->tx_err, memory_order_relaxed);
    if (tx < 0)
        return tx;
    return c->udp ? flush_udp(c) : flush_tcp(c);
}

size_t tbbt_rpcconn_sendq_bytes(const struct tbbt_rpcconn *c)
{
    return c->slen - c->soff;
}

/* ------------------------------------------------------------------ receive side: replies */

/*
 * The outcome of the reply header h into r: status and detail (rpcconn.h).  True for
 * SUCCESS, whose results follow at h->body_off.
 */
static bool reply_outcome(const struct tbbt_onc_hdr *h, struct tbbt_rpcconn_reply *r)
{
    if (h->rpc_stat >= TBBT_ONC_DENIED) {
        uint32_t rj = (uint32_t)h->rpc_stat - TBBT_ONC_DENIED;
        r->status = TBBT_RPCCONN_DENIED;
        r->detail = (int32_t)(rj << 16 | (h->auth_stat & 0xffff));
        return false;
    }
    if (h->rpc_stat != TBBT_ONC_SUCCESS) {
        r->status = TBBT_RPCCONN_ACCEPT_ERR;
        r->detail = h->rpc_stat;
        return false;
    }
    return true;
}

/*
 * Decodes the reply rec[0..len) (its header already parsed into h) into r and, on
 * SUCCESS, the results into e->res.  Returns false when the results do not decode.
 */
static bool decode_results(const uint8_t *rec, size_t len, const struct tbbt_onc_hdr *h,
                           struct tbbt__onc_req *e, struct tbbt_rpcconn_reply *r)
{
    XDR x;
    if (!reply_outcome(h, r))
        return true;
    if (len - h->body_off >= 4)
        r->res_status = (int32_t)tbbt_be32(rec + h->body_off);
    if (e->xres && e->res) {
        tbbt_xdrmem_create(&x, rec + h->body_off, (u_int)(len - h->body_off));
        memset(e->res, 0, e->res_size);
        if (!e->xres(&x, e->res)) {
            xdr_free(e->xres, e->res);
            memset(e->res, 0, e->res_size);
            return false;
        }
    }
    r->status = TBBT_RPCCONN_OK;
    return true;
}

/*
 * One reply record (len bytes at rec, untrusted).  A record that is not an RPC reply
 * means a desynchronized TCP stream (the connection goes down) or a stray UDP datagram
 * (counted).  Returns the new n.
 */
static int handle_record(struct tbbt_rpcconn *c, const uint8_t *rec, size_t len,
                         struct tbbt_rpcconn_reply *out, int n)
{
    struct tbbt_onc_hdr h;
    uint32_t xid, mtype;
    if (!tbbt_onc_peek(rec, len, &xid, &mtype) || mtype != TBBT_ONC_REPLY) {
        if (c->udp)
            TBBT__ONC_STAT_ADD(c, garbage, 1);
        else
            go_down(c, TBBT_E_BADREC,
                    "bogus record from server: %zu bytes, not an RPC reply (stream out of sync)",
                    len);
        return n;
    }
    struct tbbt__onc_req *e = take_req(c, xid);
    if (!e) {
        TBBT__ONC_STAT_ADD(c, unmatched, 1);
        return n;
    }
    struct tbbt_rpcconn_reply *r = &out[n];
    complete(e, r, TBBT_RPCCONN_GARBAGE, 0, c->recv_ns);
    if (tbbt_onc_hdr_parse(rec, len, false, &h) != 0 || !decode_results(rec, len, &h, e, r)) {
        r->status = TBBT_RPCCONN_GARBAGE;
        r->res_status = -1;
        TBBT__ONC_STAT_ADD(c, garbage, 1);
    }
    TBBT__ONC_STAT_ADD(c, replies, 1);
    release(c, e);
    return n + 1;
}

/* ------------------------------------------------------------------ receive side: TCP records */

/* The stream broke the record-marking rules (code from tbbt_onc_recasm_next()). */
static void bad_stream(struct tbbt_rpcconn *c, int rc)
{
    if (rc == TBBT_E_BADREC)
        go_down(c, TBBT_E_BADREC,
                "bogus record mark 0x%08x: fragment of %u bytes exceeds the %zu-byte limit",
                c->rec.bad_mark, c->rec.bad_mark & TBBT_ONC_FRAG_MAX, c->max_record);
    else
        go_down(c, TBBT_E_BADREC, "bogus record from server: more than %zu bytes in fragments",
                c->max_record);
}

static int parse_tcp(struct tbbt_rpcconn *c, struct tbbt_rpcconn_reply *out, int n, int max)
{
    while (n < max && !c->rx_down) {
        const uint8_t *rec;
        size_t used, len;
        int rc = tbbt_onc_recasm_next(&c->rec, c->rbuf + c->rhead, c->rtail - c->rhead, &used,
                                      &rec, &len);
        c->rhead += used;
        if (rc < 0)
            bad_stream(c, rc);
        if (rc != 1)
            break;
        n = handle_record(c, rec, len, out, n);
    }
    return n;
}

static int parse_udp(struct tbbt_rpcconn *c, struct tbbt_rpcconn_reply *out, int n, int max)
{
    while (n < max && c->slot_i < c->slot_n) {
        struct mmsghdr *m = &c->rmsg[c->slot_i++];
        if (m->msg_hdr.msg_flags & MSG_TRUNC) {
            TBBT__ONC_STAT_ADD(c, garbage, 1);
            continue;
        }
        n = handle_record(c, m->msg_hdr.msg_iov->iov_base, m->msg_len, out, n);
    }
    return n;
}

/* Reads once; returns 1 if it got bytes and the socket may hold more, 0 if not, -1 down. */
static int read_tcp(struct tbbt_rpcconn *c)
{
    if (c->rhead == c->rtail) {
        c->rhead = c->rtail = 0;
    } else if (c->rhead > 0 && c->rcap - c->rtail < c->rcap / 4) {
        memmove(c->rbuf, c->rbuf + c->rhead, c->rtail - c->rhead);
        c->rtail -= c->rhead;
        c->rhead = 0;
    }
    size_t room = c->rcap - c->rtail;
    ssize_t r;
    do {
        r = recv(c->fd, c->rbuf + c->rtail, room, MSG_DONTWAIT);
    } while (r < 0 && errno == EINTR);
    if (r > 0) {
        c->rtail += (size_t)r;
        c->recv_ns = tbbt_now_ns();
        TBBT__ONC_STAT_ADD(c, recv_syscalls, 1);
        TBBT__ONC_STAT_ADD(c, bytes_recv, (uint64_t)r);
        return (size_t)r == room;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (r == 0)
        go_down(c, -ECONNRESET, "connection closed by server%s",
                tbbt_onc_recasm_busy(&c->rec) || c->rhead != c->rtail
                    ? " in the middle of a record"
                    : "");
    else
        go_down(c, -errno, "receive from server failed: %s", tbbt_strerror(-errno));
    return -1;
}

static int read_udp(struct tbbt_rpcconn *c)
{
    int r;
    do {
        r = recvmmsg(c->fd, c->rmsg, (unsigned)c->nslots, MSG_DONTWAIT, NULL);
    } while (r < 0 && errno == EINTR);
    if (r > 0) {
        c->slot_i = 0;
        c->slot_n = (size_t)r;
        c->recv_ns = tbbt_now_ns();
        TBBT__ONC_STAT_ADD(c, recv_syscalls, 1);
        for (int i = 0; i < r; i++)
            TBBT__ONC_STAT_ADD(c, bytes_recv, c->rmsg[i].msg_len);
        return (size_t)r == c->nslots;
    }
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    int err = r < 0 ? -errno : -ECONNRESET;
    go_down(c, err, "receive from server failed: %s", tbbt_strerror(err));
    return -1;
}

int tbbt_rpcconn_recv(struct tbbt_rpcconn *c, struct tbbt_rpcconn_reply *out, int max)
{
    assert(c->magic == TBBT__RPCCONN_MAGIC);
    int tx = atomic_load_explicit(&c->tx_err, memory_order_relaxed);
    if (tx < 0 && !c->rx_down)
        go_down(c, tx, "send to server failed: %s", tbbt_strerror(tx));
    int n = emit_failed(c, out, 0, max);
    bool more = true;
    while (n < max && !c->rx_down) {
        n = c->udp ? parse_udp(c, out, n, max) : parse_tcp(c, out, n, max);
        if (n == max || c->rx_down || !more)
            break;
        more = (c->udp ? read_udp(c) : read_tcp(c)) > 0;
        if (c->udp ? c->slot_i == c->slot_n : c->rhead == c->rtail)
            break;   /* nothing new was read */
    }
    if (c->rx_down)
        n = emit_failed(c, out, n, max);
    if (n == 0 && c->rx_down)
        return get_error(c, -ENOTCONN);
    return n;
}

int tbbt_rpcconn_set_recv_lowat(struct tbbt_rpcconn *c, int bytes)
{
    if (c->udp)
        return -EOPNOTSUPP;
    if (c->fd < 0)
        return -ENOTCONN;
    bytes = MAX(bytes, 1);
    return setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) < 0 ? -errno : 0;
}

/* tbbt_onc_xidtab_take_if(): calls queued before the deadline at *arg. */
static bool queued_before(const struct tbbt_onc_xident *x, void *arg)
{
    return ((const struct tbbt__onc_req *)x)->queued_ns < *(const uint64_t *)arg;
}

int tbbt_rpcconn_expire(struct tbbt_rpcconn *c, uint64_t deadline_ns,
                        struct tbbt_rpcconn_reply *out, int max)
{
    int n = 0;
    if (!c->rx_down)
        drain_pending(c);
    if (max <= 0)
        return 0;
    uint64_t now = tbbt_now_ns();
    struct tbbt__onc_req *l = req_of(tbbt_onc_xidtab_take_if(&c->tab, queued_before, &deadline_ns,
                                                   (size_t)max));
    for (struct tbbt__onc_req *next; l; l = next) {
        next = req_next(l);
        complete(l, &out[n++], TBBT_RPCCONN_TIMEDOUT, -ETIMEDOUT, now);
        release(c, l);
        TBBT__ONC_STAT_ADD(c, timedout, 1);
    }
    return n;
}

