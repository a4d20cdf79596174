/* SPDX-License-Identifier: MIT */
/*
 * rpc-proxy: an ONC RPC proxy (RFC 5531) between an NFS client such as tbbt-play and the
 * real server.  It exists to test the player's ordering and failure handling and to
 * emulate a slower or lossy server: replies of chosen procedures are held for a while
 * (--delay) so that they leave out of order, every Nth reply is dropped (--drop-replies),
 * and so are the first N (--drop-first),
 * and a client connection can be reset after N calls (--reset-after, --reset-every).
 *
 * TCP: one server connection per accepted client connection.  Both directions are parsed
 * as RFC 5531 section 11 record marking; whole records are forwarded byte for byte (the
 * sender's fragmentation is kept).  Calls are remembered by XID per connection so that
 * each reply's program, version and procedure are known.  UDP: one listening socket and
 * one connected upstream socket per client address; each datagram is one message.
 *
 * It does not decode arguments or results, retransmit, or change what it forwards.  One
 * thread runs one ppoll() loop over non-blocking sockets; held replies wait in a queue
 * ordered by due time.  Malformed streams (a fragment over 16 MiB, a record or buffers
 * over 64 MiB) close that connection pair and are counted; the proxy carries on.
 * This file is the proxy itself; options, start-up and main() are in rpc-proxy-setup.c.
 * Options, event log format and examples: docs/rpc-proxy.md.
 * Exit status: 0 after SIGTERM/SIGINT, 1 the proxy could not start, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "onc/onc.h"
#include "rpc-proxy.h"
#include "util/buf.h"
#include "util/exit-codes.h"
#include "util/util.h"

#define MAX_FRAGMENT (16u << 20)        /* larger fragment lengths are malformed */
#define MAX_BUFFERED ((size_t)64 << 20) /* per pair: partial record + output + held bytes */
#define HIGH_WATER ((size_t)4 << 20)    /* stop reading a side while this much waits */
#define READ_CHUNK 65536
#define READS_PER_WAKEUP 8
#define ACCEPTS_PER_WAKEUP 16
#define DGRAMS_PER_WAKEUP 64
#define MAX_XIDS 65536                  /* remembered unanswered calls per connection */
#define MAX_UDP_SESSIONS 1024
#define UDP_IDLE_NS (120 * NS_PER_S)
#define ACCEPT_PAUSE_NS (100 * NS_PER_MS) /* after EMFILE and the like */
#define DRAIN_EXTRA_MS 1000             /* server closed: time left to deliver held replies */
#define RPC_HDR_LEN 24                  /* xid, msg_type, rpcvers, prog, vers, proc */

/* ------------------------------------------------------------------ small helpers */

static const char *errname(int e)
{
    const char *s = strerrorname_np(e);
    return s ? s : "EUNKNOWN";
}

static size_t bbuf_used(const struct bbuf *b)
{
    return b->end - b->start;
}

/* Returns room for n more bytes at the end (compacting or growing the buffer). */
static uint8_t *bbuf_space(struct bbuf *b, size_t n)
{
    size_t used = bbuf_used(b), cap;

    if (b->cap - b->end >= n && b->data)
        return b->data + b->end;
    if (b->start > 0) {
        memmove(b->data, b->data + b->start, used);
        b->start = 0;
        b->end = used;
    }
    if (b->cap - b->end < n || !b->data) {
        for (cap = b->cap ? b->cap : 4096; cap - used < n; cap *= 2)
            ;
        b->data = g_realloc(b->data, cap);
        b->cap = cap;
    }
    return b->data + b->end;
}

static void bbuf_append(struct bbuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(bbuf_space(b, n), p, n);
    b->end += n;
}

static void bbuf_fini(struct bbuf *b)
{
    g_free(b->data);
    memset(b, 0, sizeof(*b));
}

/* Drops n bytes from the front; an emptied large buffer gives its memory back. */
static void bbuf_consume(struct bbuf *b, size_t n)
{
    b->start += n;
    if (b->start == b->end) {
        b->start = b->end = 0;
        if (b->cap > HIGH_WATER)
            bbuf_fini(b);
    }
}

static void set_nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void proxy_addr_str(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t n)
{
    char host[NI_MAXHOST], port[NI_MAXSERV];

    if (getnameinfo((const struct sockaddr *)sa, len, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        g_strlcpy(out, "?", n);
    else if (sa->ss_family == AF_INET6)
        g_snprintf(out, n, "[%s]:%s", host, port);
    else
        g_snprintf(out, n, "%s:%s", host, port);
}

/* ------------------------------------------------------------------ event log */

/* Writes one event line: time, connection, event, xid, prog, vers, proc, detail. */
static void ev(struct proxy *px, unsigned conn, const char *event, const struct rpcinfo *ri,
               const char *detail)
{
    uint64_t now;

    if (!px->log)
        return;
    now = tbbt_now_ns();
    fprintf(px->log, "%" PRIu64 ".%06" PRIu64 " %u %s", now / NS_PER_S,
            (now % NS_PER_S) / 1000, conn, event);
    if (ri && ri->has_xid)
        fprintf(px->log, " %08" PRIx32, ri->xid);
    else
        fputs(" -", px->log);
    if (ri && ri->has_call)
        fprintf(px->log, " %" PRIu32 " %" PRIu32 " %" PRIu32, ri->prog, ri->vers, ri->proc);
    else
        fputs(" - - -", px->log);
    if (detail)
        fprintf(px->log, " %s", detail);
    fputc('\n', px->log);
}

/* ------------------------------------------------------------------ RPC headers */

/* Decodes what a message's first bytes say (RFC 5531 section 9, onc.h's parser): the
 * XID always, and for a call with rpcvers 2 the program, version and procedure. */
static struct rpcinfo parse_call(const uint8_t *hdr, size_t len)
{
    struct rpcinfo ri = {0};
    struct tbbt_onc_hdr h;

    ri.has_xid = len >= 4;
    if (ri.has_xid)
        ri.xid = tbbt_be32(hdr);
    if (tbbt_onc_hdr_parse(hdr, len, true, &h) == 0 && h.dir == TBBT_ONC_CALL) {
        ri.prog = h.prog;
        ri.vers = h.vers;
        ri.proc = h.proc;
        ri.has_call = true;
    }
    return ri;
}

/* Frees every remembered call of p. */
static void forget_calls(struct pair *p)
{
    for (struct tbbt_onc_xident *x = tbbt_onc_xidtab_take_all(&p->xids), *next; x; x = next) {
        next = x->next;
        g_free(x);
    }
}

static void remember_call(struct pair *p, const struct rpcinfo *ri)
{
    struct callinfo *ci = (struct callinfo *)tbbt_onc_xidtab_remove(&p->xids, ri->xid);

    if (!ci && tbbt_onc_xidtab_count(&p->xids) >= MAX_XIDS)
        forget_calls(p);                    /* a client that never gets replies */
    if (!ci)                                /* else a resent call: the entry is reused */
        ci = g_new(struct callinfo, 1);
    ci->x.xid = ri->xid;
    ci->prog = ri->prog;
    ci->vers = ri->vers;
    ci->proc = ri->proc;
    tbbt_onc_xidtab_insert(&p->xids, &ci->x);
}

/* Matches a reply to its call by XID (and forgets the call). */
static struct rpcinfo match_reply(struct pair *p, const uint8_t *hdr, size_t len)
{
    struct rpcinfo ri = {0};
    struct callinfo *ci;
    uint32_t type;

    ri.has_xid = len >= 4;
    if (ri.has_xid)
        ri.xid = tbbt_be32(hdr);
    if (!tbbt_onc_peek(hdr, len, &ri.xid, &type) || type != TBBT_ONC_REPLY)
        return ri;
    ci = (struct callinfo *)tbbt_onc_xidtab_remove(&p->xids, ri.xid);
    if (!ci)
        return ri;
    ri.prog = ci->prog;
    ri.vers = ci->vers;
    ri.proc = ci->proc;
    ri.has_call = true;
    g_free(ci);
    return ri;
}

/* ------------------------------------------------------------------ pairs */

static struct pair *pair_new(struct proxy *px, const struct sockaddr_storage *sa, socklen_t len)
{
    struct pair *p = g_new0(struct pair, 1);
    char name[INET6_ADDRSTRLEN + 16], detail[INET6_ADDRSTRLEN + 32];

    p->id = ++px->next_id;
    p->cli.fd = p->srv.fd = -1;
    tbbt_onc_xidtab_init(&p->xids, 64);
    memcpy(&p->peer, sa, len);
    p->peer_len = len;
    p->last_ns = tbbt_now_ns();
    g_hash_table_insert(px->pairs, GUINT_TO_POINTER(p->id), p);
    px->st.conns++;
    proxy_addr_str(sa, len, name, sizeof(name));
    g_snprintf(detail, sizeof(detail), "client=%s", name);
    ev(px, p->id, "open", NULL, detail);
    tbbt_log(TBBT_LOG_INFO, "connection %u from %s", p->id, name);
    return p;
}

static void pair_free(struct pair *p)
{
    bbuf_fini(&p->cli.in);
    bbuf_fini(&p->cli.out);
    bbuf_fini(&p->srv.in);
    bbuf_fini(&p->srv.out);
    forget_calls(p);
    tbbt_onc_xidtab_fini(&p->xids);
    g_free(p);
}

static size_t pair_buffered(const struct pair *p)
{
    return bbuf_used(&p->cli.in) + bbuf_used(&p->cli.out) + bbuf_used(&p->srv.in) +
           bbuf_used(&p->srv.out) + p->held_bytes;
}

/* Frees the held replies of a pair that is going away. */
static void purge_held(struct proxy *px, struct pair *p)
{
    GList *l = px->held.head, *next;

    for (; l && p->held_n > 0; l = next) {
        struct held *h = l->data;
        next = l->next;
        if (h->pair != p->id)
            continue;
        p->held_n--;
        p->held_bytes -= h->len;
        g_queue_delete_link(&px->held, l);
        g_free(h);
    }
}

/* Closes both sides (the client with an RST when reset), logs the reason, drops what
 * the pair still holds.  The pair itself is freed by reap() after this loop pass. */
static void pair_close(struct proxy *px, struct pair *p, const char *reason, bool reset)
{
    char detail[96];

    if (p->dead)
        return;
    p->dead = true;
    g_snprintf(detail, sizeof(detail), "reason=%s", reason);
    ev(px, p->id, "close", NULL, detail);
    tbbt_log(TBBT_LOG_INFO, "connection %u closed: %s", p->id, reason);
    if (p->cli.fd >= 0) {
        if (reset) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            (void)setsockopt(p->cli.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        close(p->cli.fd);
        p->cli.fd = -1;
    }
    if (p->srv.fd >= 0) {
        close(p->srv.fd);
        p->srv.fd = -1;
    }
    purge_held(px, p);
    if (px->cfg->udp) {
        GBytes *key = g_bytes_new_static(&p->peer, p->peer_len);
        g_hash_table_remove(px->udp_peers, key);
        g_bytes_unref(key);
    }
    g_ptr_array_add(px->dead, p);
}

/* Closes a pair after an I/O error on one side: reason "WHAT-SIDE:ERRNAME". */
static void pair_fail(struct proxy *px, struct pair *p, const char *what, bool client, int err)
{
    char reason[64];

    g_snprintf(reason, sizeof(reason), "%s-%s:%s", what, client ? "client" : "server",
               errname(err));
    pair_close(px, p, reason, false);
}

static void reap(struct proxy *px)
{
    for (guint i = 0; i < px->dead->len; i++) {
        struct pair *p = g_ptr_array_index(px->dead, i);
        g_hash_table_remove(px->pairs, GUINT_TO_POINTER(p->id));
        pair_free(p);
    }
    g_ptr_array_set_size(px->dead, 0);
}

/* Writes what s->out holds until the socket is full.  Returns 0 or -errno. */
static int flush_out(struct side *s)
{
    while (bbuf_used(&s->out) > 0) {
        ssize_t n = send(s->fd, s->out.data + s->out.start, bbuf_used(&s->out),
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            bbuf_consume(&s->out, (size_t)n);
        else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        else
            return n < 0 ? -errno : -EIO;
    }
    return 0;
}

static void do_reset(struct proxy *px, struct pair *p)
{
    char detail[48];

    px->st.resets++;
    g_snprintf(detail, sizeof(detail), "after_calls=%" PRIu64, px->st.calls);
    ev(px, p->id, "reset", &p->reset_ri, detail);
    pair_close(px, p, "reset", true);
}

/* Finishes what waits on output: a pending reset once the call reached the server, a
 * closing pair once the client has everything. */
static void settle(struct proxy *px, struct pair *p)
{
    if (p->dead)
        return;
    if (p->reset_pending &&
        (p->srv.fd < 0 || (!p->connecting && bbuf_used(&p->srv.out) == 0)))
        do_reset(px, p);
    else if (p->closing && bbuf_used(&p->cli.out) == 0 && p->held_n == 0)
        pair_close(px, p, p->close_reason, false);
}

/* Writes one side's output (TCP); closes the pair on a write error. */
static void side_flush(struct proxy *px, struct pair *p, struct side *s)
{
    int rc;

    if (p->dead || s->fd < 0 || (s == &p->srv && p->connecting))
        return;
    if ((rc = flush_out(s)) < 0) {
        pair_fail(px, p, "send", s == &p->cli, -rc);
        return;
    }
    settle(px, p);
}

/* ------------------------------------------------------------------ calls and replies */

static void maybe_reset(struct proxy *px, struct pair *p, const struct rpcinfo *ri)
{
    const struct cfg *c = px->cfg;
    bool once = c->reset_after > 0 && !px->reset_done &&
                px->st.calls == (uint64_t)c->reset_after;
    bool every = c->reset_every > 0 && px->st.calls % (uint64_t)c->reset_every == 0;

    if (!once && !every)
        return;
    px->reset_done = true;
    p->reset_pending = true;
    p->reset_ri = *ri;
}

/* A call record (TCP, marks included) or datagram from the client. */
static void on_call(struct proxy *px, struct pair *p, const uint8_t *rec, size_t len,
                    const uint8_t *hdr, size_t hdr_len)
{
    struct rpcinfo ri = parse_call(hdr, hdr_len);

    px->st.calls++;
    if (ri.has_call)
        remember_call(p, &ri);
    else
        px->st.malformed++;
    ev(px, p->id, "call", &ri, ri.has_call ? NULL : "bad-header");
    if (!px->cfg->udp) {
        bbuf_append(&p->srv.out, rec, len);
        maybe_reset(px, p, &ri);
    } else if (send(p->srv.fd, rec, len, MSG_DONTWAIT) < 0) {
        px->st.lost++;
        tbbt_log(TBBT_LOG_DEBUG, "connection %u: send to server: %s", p->id, strerror(errno));
    }
}

/* Passes a reply on to the client now. */
static void deliver(struct proxy *px, struct pair *p, const struct rpcinfo *ri,
                    const uint8_t *rec, size_t len, const char *detail)
{
    ev(px, p->id, "reply", ri, detail);
    if (!px->cfg->udp) {
        bbuf_append(&p->cli.out, rec, len);
        return;
    }
    if (sendto(px->lfd, rec, len, MSG_DONTWAIT, (const struct sockaddr *)&p->peer,
               p->peer_len) < 0) {
        px->st.lost++;
        tbbt_log(TBBT_LOG_DEBUG, "connection %u: send to client: %s", p->id, strerror(errno));
    }
}

/* Queues a copy of a reply until now + ms, after the replies due no later. */
static void hold(struct proxy *px, struct pair *p, const struct rpcinfo *ri, const uint8_t *rec,
                 size_t len, int ms)
{
    struct held *h = g_malloc(sizeof(*h) + len);
    GList *l;

    h->since = tbbt_now_ns();
    h->due = h->since + (uint64_t)ms * NS_PER_MS;
    h->pair = p->id;
    h->ri = *ri;
    h->len = len;
    memcpy(h->data, rec, len);
    for (l = px->held.tail; l && ((struct held *)l->data)->due > h->due; l = l->prev)
        ;
    if (l)
        g_queue_insert_after(&px->held, l, h);
    else
        g_queue_push_head(&px->held, h);
    p->held_n++;
    p->held_bytes += len;
}

static bool counts_for_drop(const struct cfg *c, const struct rpcinfo *ri)
{
    if (!c->drop_set)
        return true;
    return ri->has_call && ri->prog == (uint32_t)c->delay_prog &&
           g_hash_table_contains(c->drop_set, GUINT_TO_POINTER(ri->proc));
}

/* Milliseconds to hold a reply, 0 for none. */
static int delay_for(const struct cfg *c, const struct rpcinfo *ri)
{
    gpointer ms;

    if (ri->has_call && ri->prog == (uint32_t)c->delay_prog &&
        g_hash_table_lookup_extended(c->delay_ms, GUINT_TO_POINTER(ri->proc), NULL, &ms))
        return GPOINTER_TO_INT(ms);
    return c->delay_all_ms > 0 ? c->delay_all_ms : 0;
}

/* A reply record (TCP, marks included) or datagram from the server. */
static void on_reply(struct proxy *px, struct pair *p, const uint8_t *rec, size_t len,
                     const uint8_t *hdr, size_t hdr_len)
{
    const struct cfg *c = px->cfg;
    struct rpcinfo ri = match_reply(p, hdr, hdr_len);
    char detail[32];
    int ms;

    px->st.replies++;
    bool counts = counts_for_drop(c, &ri);
    bool first = counts && px->first_dropped < (uint64_t)c->drop_first;
    px->first_dropped += first;
    if (first || (c->drop_n > 0 && counts && ++px->drop_counter % c->drop_n == 0)) {
        px->st.dropped++;
        ev(px, p->id, "drop", &ri, NULL);
        return;
    }
    if ((ms = delay_for(c, &ri)) > 0) {
        hold(px, p, &ri, rec, len, ms);
        px->st.delayed++;
        g_snprintf(detail, sizeof(detail), "ms=%d", ms);
        ev(px, p->id, "delay", &ri, detail);
        return;
    }
    deliver(px, p, &ri, rec, len, ri.has_call ? NULL : "unmatched");
}

/* Sends the held replies that are due, in due order. */
static void release_due(struct proxy *px, uint64_t now)
{
    struct held *h;
    char detail[48];

    while ((h = g_queue_peek_head(&px->held)) && h->due <= now) {
        struct pair *p = g_hash_table_lookup(px->pairs, GUINT_TO_POINTER(h->pair));
        g_queue_pop_head(&px->held);
        if (p && !p->dead) {
            p->held_n--;
            p->held_bytes -= h->len;
            g_snprintf(detail, sizeof(detail), "held_ms=%.1f", (double)(now - h->since) / 1e6);
            deliver(px, p, &h->ri, h->data, h->len, detail);
            if (!px->cfg->udp)
                side_flush(px, p, &p->cli);
        }
        g_free(h);
    }
}

/* ------------------------------------------------------------------ TCP */

static int connect_server(struct proxy *px, struct pair *p)
{
    const struct cfg *c = px->cfg;
    int fd = socket(c->server_sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    p->srv.fd = fd;
    set_nodelay(fd);
    if (connect(fd, (const struct sockaddr *)&c->server_sa, c->server_len) == 0)
        return 0;
    if (errno != EINPROGRESS)
        return -errno;
    p->connecting = true;
    return 0;
}

static void connect_done(struct proxy *px, struct pair *p)
{
    int err = 0;
    socklen_t len = sizeof(err);

    if (getsockopt(p->srv.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err) {
        pair_fail(px, p, "connect", false, err);
        return;
    }
    p->connecting = false;
    side_flush(px, p, &p->srv);
}

static void tcp_accept(struct proxy *px)
{
    for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        struct pair *p;
        int fd = accept4(px->lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        int rc;

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                tbbt_log(TBBT_LOG_WARN, "accept: %s; pausing", strerror(errno));
                px->accept_pause_until = tbbt_now_ns() + ACCEPT_PAUSE_NS;
            }
            return;
        }
        set_nodelay(fd);
        p = pair_new(px, &sa, len);
        p->cli.fd = fd;
        if ((rc = connect_server(px, p)) < 0)
            pair_fail(px, p, "connect", false, -rc);
    }
}

/* Forwards the complete records at the front of s->in.  Returns 0 or a negative
 * TBBT_E_* when the stream is malformed. */
static int scan_records(struct proxy *px, struct pair *p, struct side *s)
{
    size_t len;
    int rc;

    while (!p->dead && !p->reset_pending &&
           (rc = tbbt_onc_recscan_next(&s->rm, s->in.data + s->in.start, bbuf_used(&s->in),
                                       MAX_FRAGMENT, MAX_BUFFERED, &len)) == 1) {
        const uint8_t *rec = s->in.data + s->in.start;
        uint8_t hdr[RPC_HDR_LEN];
        size_t hdr_len = tbbt_onc_rec_payload(rec, len, hdr, sizeof(hdr));
        if (s == &p->cli)
            on_call(px, p, rec, len, hdr, hdr_len);
        else
            on_reply(px, p, rec, len, hdr, hdr_len);
        bbuf_consume(&s->in, len);
        memset(&s->rm, 0, sizeof(s->rm));
    }
    return p->dead || p->reset_pending ? 0 : rc;
}

/* Reads from one side (bounded per wake-up).  Returns 1 at end of stream, 0 otherwise;
 * closes the pair itself on an error. */
static int read_side(struct proxy *px, struct pair *p, struct side *s)
{
    for (int i = 0; i < READS_PER_WAKEUP; i++) {
        ssize_t n = recv(s->fd, bbuf_space(&s->in, READ_CHUNK), READ_CHUNK, 0);
        if (n == 0)
            return 1;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0) {
            pair_fail(px, p, "recv", s == &p->cli, errno);
            return 0;
        }
        s->in.end += (size_t)n;
        if ((size_t)n < READ_CHUNK)
            return 0;
    }
    return 0;
}

static void malformed(struct proxy *px, struct pair *p, bool client, int rc)
{
    char reason[48];

    px->st.malformed++;
    g_snprintf(reason, sizeof(reason), "%s-%s",
               rc == TBBT_E_BADREC ? "fragment-too-long" : "record-too-long",
               client ? "client" : "server");
    pair_close(px, p, reason, false);
}

/* Data or end of stream on one side of a TCP pair. */
static void tcp_input(struct proxy *px, struct pair *p, bool client)
{
    struct side *s = client ? &p->cli : &p->srv, *peer = client ? &p->srv : &p->cli;
    int eof = read_side(px, p, s), rc;

    if (p->dead)
        return;
    if ((rc = scan_records(px, p, s)) < 0) {
        malformed(px, p, client, rc);
        return;
    }
    if (pair_buffered(p) > MAX_BUFFERED) {
        px->st.malformed++;
        pair_close(px, p, "buffer-overflow", false);
        return;
    }
    side_flush(px, p, peer);
    if (p->dead || !eof)
        return;
    if (client) {
        pair_close(px, p, "client-eof", false);
        return;
    }
    close(p->srv.fd);
    p->srv.fd = -1;
    p->closing = true;
    p->close_reason = "server-eof";
    p->deadline = tbbt_now_ns() + (uint64_t)(px->cfg->max_delay_ms + DRAIN_EXTRA_MS) * NS_PER_MS;
    settle(px, p);
}

static void tcp_event(struct proxy *px, struct pair *p, bool client, short rev)
{
    struct side *s = client ? &p->cli : &p->srv;

    if (!client && p->connecting) {
        if (rev & (POLLOUT | POLLERR | POLLHUP))
            connect_done(px, p);
        return;
    }
    if (client && p->closing) {
        /* Not reading any more: only a gone client matters. */
        if (rev & (POLLERR | POLLHUP))
            pair_close(px, p, "client-hangup", false);
        else if (rev & POLLOUT)
            side_flush(px, p, s);
        return;
    }
    if (rev & POLLOUT)
        side_flush(px, p, s);
    if (!p->dead && (rev & (POLLIN | POLLHUP | POLLERR)))
        tcp_input(px, p, client);
}

/* ------------------------------------------------------------------ UDP */

static struct pair *udp_session(struct proxy *px, const struct sockaddr_storage *sa,
                                socklen_t len)
{
    const struct cfg *c = px->cfg;
    GBytes *key = g_bytes_new(sa, len);
    struct pair *p = g_hash_table_lookup(px->udp_peers, key);
    int fd;

    if (p || g_hash_table_size(px->udp_peers) >= MAX_UDP_SESSIONS) {
        g_bytes_unref(key);
        return p;
    }
    fd = socket(c->server_sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)&c->server_sa, c->server_len) < 0) {
        tbbt_log(TBBT_LOG_WARN, "upstream UDP socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        g_bytes_unref(key);
        return NULL;
    }
    p = pair_new(px, sa, len);
    p->srv.fd = fd;
    g_hash_table_insert(px->udp_peers, key, p);
    return p;
}

static void udp_from_client(struct proxy *px)
{
    for (int i = 0; i < DGRAMS_PER_WAKEUP; i++) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        struct pair *p;
        ssize_t n = recvfrom(px->lfd, px->dgram, sizeof(px->dgram), MSG_TRUNC,
                             (struct sockaddr *)&sa, &len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if ((size_t)n > sizeof(px->dgram)) {
            px->st.malformed++;
            continue;
        }
        if (!(p = udp_session(px, &sa, len))) {
            px->st.lost++;
            continue;
        }
        p->last_ns = tbbt_now_ns();
        on_call(px, p, px->dgram, (size_t)n, px->dgram, MIN((size_t)n, RPC_HDR_LEN));
    }
}

static void udp_from_server(struct proxy *px, struct pair *p)
{
    for (int i = 0; i < DGRAMS_PER_WAKEUP && !p->dead; i++) {
        ssize_t n = recv(p->srv.fd, px->dgram, sizeof(px->dgram), MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)    /* ICMP: nobody at the port */
                tbbt_log(TBBT_LOG_DEBUG, "connection %u: %s", p->id, strerror(errno));
            return;
        }
        if ((size_t)n > sizeof(px->dgram)) {
            px->st.malformed++;
            continue;
        }
        p->last_ns = tbbt_now_ns();
        on_reply(px, p, px->dgram, (size_t)n, px->dgram, MIN((size_t)n, RPC_HDR_LEN));
    }
}

/* ------------------------------------------------------------------ event loop */

static void add_slot(struct proxy *px, int fd, short events, struct pair *p, int kind)
{
    struct pollfd pfd = {.fd = fd, .events = events};
    struct slot s = {.p = p, .kind = kind};

    g_array_append_val(px->fds, pfd);
    g_array_append_val(px->slots, s);
}

static void add_pair_slots(struct proxy *px, struct pair *p)
{
    short ce = 0, se = 0;

    if (px->cfg->udp) {
        add_slot(px, p->srv.fd, POLLIN, p, SLOT_SERVER);
        return;
    }
    if (bbuf_used(&p->cli.out) > 0)
        ce |= POLLOUT;
    if (!p->closing && !p->reset_pending && bbuf_used(&p->srv.out) < HIGH_WATER)
        ce |= POLLIN;
    add_slot(px, p->cli.fd, ce, p, SLOT_CLIENT);
    if (p->srv.fd < 0)
        return;
    if (p->connecting || bbuf_used(&p->srv.out) > 0)
        se |= POLLOUT;
    if (!p->connecting && bbuf_used(&p->cli.out) < HIGH_WATER && p->held_bytes < HIGH_WATER)
        se |= POLLIN;
    add_slot(px, p->srv.fd, se, p, SLOT_SERVER);
}

static void build_poll(struct proxy *px, uint64_t now)
{
    GHashTableIter it;
    gpointer v;

    g_array_set_size(px->fds, 0);
    g_array_set_size(px->slots, 0);
    px->need_tick = false;
    add_slot(px, px->sigfd, POLLIN, NULL, SLOT_SIGNAL);
    if (now >= px->accept_pause_until)
        add_slot(px, px->lfd, POLLIN, NULL, SLOT_LISTEN);
    g_hash_table_iter_init(&it, px->pairs);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct pair *p = v;
        if (p->dead)
            continue;
        add_pair_slots(px, p);
        px->need_tick |= p->closing || px->cfg->udp;
    }
}

/* Nanoseconds until something is due, or -1 for none. */
static int64_t next_wait(const struct proxy *px, uint64_t now)
{
    const struct held *h = px->held.head ? px->held.head->data : NULL;
    int64_t wait = -1;

    if (h)
        wait = h->due > now ? (int64_t)(h->due - now) : 0;
    if (px->accept_pause_until > now && (wait < 0 || (uint64_t)wait > px->accept_pause_until - now))
        wait = (int64_t)(px->accept_pause_until - now);
    if (px->need_tick && (wait < 0 || wait > (int64_t)NS_PER_S))
        wait = NS_PER_S;
    return wait;
}

static void on_signal(struct proxy *px)
{
    struct signalfd_siginfo si;

    if (read(px->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        px->stop = true;
}

static void dispatch(struct proxy *px)
{
    for (guint i = 0; i < px->fds->len; i++) {
        short rev = g_array_index(px->fds, struct pollfd, i).revents;
        struct slot *s = &g_array_index(px->slots, struct slot, i);

        if (!rev || (s->p && s->p->dead))
            continue;
        switch (s->kind) {
        case SLOT_SIGNAL:
            on_signal(px);
            break;
        case SLOT_LISTEN:
            if (px->cfg->udp)
                udp_from_client(px);
            else
                tcp_accept(px);
            break;
        case SLOT_CLIENT:
            tcp_event(px, s->p, true, rev);
            break;
        case SLOT_SERVER:
            if (px->cfg->udp)
                udp_from_server(px, s->p);
            else
                tcp_event(px, s->p, false, rev);
            break;
        }
    }
}

/* Gives up draining pairs past their deadline and forgets idle UDP clients. */
static void housekeeping(struct proxy *px, uint64_t now)
{
    GHashTableIter it;
    gpointer v;

    g_hash_table_iter_init(&it, px->pairs);
    while (g_hash_table_iter_next(&it, NULL, &v)) {
        struct pair *p = v;
        if (p->dead)
            continue;
        if (p->closing && now >= p->deadline)
            pair_close(px, p, "drain-timeout", false);
        else if (px->cfg->udp && p->held_n == 0 && now - p->last_ns > UDP_IDLE_NS)
            pair_close(px, p, "idle", false);
    }
}

int proxy_run(struct proxy *px)
{
    while (!px->stop) {
        uint64_t now = tbbt_now_ns();
        struct timespec ts, *tsp = NULL;
        int64_t wait;

        build_poll(px, now);
        if ((wait = next_wait(px, now)) >= 0) {
            ts.tv_sec = wait / (int64_t)NS_PER_S;
            ts.tv_nsec = wait % (int64_t)NS_PER_S;
            tsp = &ts;
        }
        if (ppoll((struct pollfd *)px->fds->data, px->fds->len, tsp, NULL) < 0) {
            if (errno == EINTR)
                continue;
            tbbt_log(TBBT_LOG_ERROR, "poll: %s", strerror(errno));
            return TBBT_EXIT_FAIL;
        }
        dispatch(px);
        now = tbbt_now_ns();
        release_due(px, now);
        housekeeping(px, now);
        reap(px);
    }
    return TBBT_EXIT_OK;
}

/* ------------------------------------------------------------------ shutdown */

void proxy_fini(struct proxy *px)
{
    GHashTableIter it;
    gpointer v;

    g_hash_table_iter_init(&it, px->pairs);
    while (g_hash_table_iter_next(&it, NULL, &v))
        pair_close(px, v, "proxy-exit", false);
    reap(px);
    g_queue_clear_full(&px->held, g_free);
    g_hash_table_destroy(px->pairs);
    g_hash_table_destroy(px->udp_peers);
    g_ptr_array_free(px->dead, TRUE);
    g_array_free(px->fds, TRUE);
    g_array_free(px->slots, TRUE);
    if (px->lfd >= 0)
        close(px->lfd);
    if (px->sigfd >= 0)
        close(px->sigfd);
    if (px->pid_written)
        (void)unlink(px->cfg->pid_file);
    if (px->log && px->log != stdout)
        fclose(px->log);
    else if (px->log)
        fflush(px->log);
}
