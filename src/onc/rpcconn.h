/* SPDX-License-Identifier: MIT */
/*
 * rpcconn: asynchronous ONC RPC client connections for tbbt-play (TBBT paper 3.4, 4:
 * the player talks to the server under test with user-level asynchronous RPC, no NFS
 * client) and tbbt-init --server.  One struct tbbt_rpcconn is one TCP or UDP socket to
 * one server port.
 *
 * What it does: encodes calls (RPC call header of RFC 5531 section 9 with AUTH_SYS or
 * AUTH_NONE, then the arguments through an rpcgen/libtirpc xdrproc_t) into a send
 * queue; sends everything queued with one send()/sendmmsg(); reads replies in large
 * recv()/recvmmsg() buffers, splits the TCP byte stream into records (RFC 5531
 * section 11 record marking: partial and multi-fragment records, through onc.h's
 * reassembler), matches replies to calls by XID and decodes the reply header
 * (accepted/denied, accept_stat: onc.h's header parser) and the results (an xdr_*res
 * routine).  A broken connection fails every outstanding call.
 * Helpers on top: PMAPPROC_GETPORT (RFC 1833 portmap v2) and MOUNT v3 MNT (RFC 1813
 * Appendix I), synchronous.
 *
 * Retransmission and reconnection: a connection may carry a policy (struct
 * tbbt_rpcconn_retry: per-call timeout, resends, how long a server may stay away),
 * which the synchronous helpers follow (a call without a reply within its timeout is
 * sent again with the same XID, a connection that fails is reconnected and the call
 * sent again with the same XID) and which the asynchronous users read back
 * (tbbt_rpcconn_get_retry()) and apply with tbbt_rpcconn_retry_step() and
 * tbbt_rpcconn_revive(), so that every user of a connection resends and reconnects
 * the same way.  The asynchronous side itself never resends on its own:
 * tbbt_rpcconn_expire() hands back calls older than a deadline and a lost connection
 * hands back its calls as LOST; what to do with them is the caller's (NFS semantics,
 * such as duplicate requests, are the caller's too).  No RPCSEC_GSS.
 *
 * THREADING CONTRACT.  A connection has two sides, each used by at most one thread at
 * a time (the same thread may use both):
 *   - the SEND side: tbbt_rpcconn_call(), tbbt_rpcconn_flush(), tbbt_rpcconn_sendq_bytes();
 *   - the RECEIVE side: tbbt_rpcconn_recv(), tbbt_rpcconn_expire(),
 *     tbbt_rpcconn_set_recv_lowat().
 * The send side and the receive side may run concurrently on two threads without any
 * locking by the caller.  A call is registered with the receive side (lock-free
 * hand-off) before its bytes can reach the socket, so its reply always finds it.
 * Any thread, any time: tbbt_rpcconn_fd(), tbbt_rpcconn_outstanding(),
 * tbbt_rpcconn_error(), tbbt_rpcconn_stats(), tbbt_rpcconn_is_up(),
 * tbbt_rpcconn_get_retry(), tbbt_rpcconn_retry_step().
 * EXCLUSIVE (no other call on this connection may be running on any thread):
 * tbbt_rpcconn_new(), tbbt_rpcconn_connect(), tbbt_rpcconn_reconnect(),
 * tbbt_rpcconn_revive(), tbbt_rpcconn_set_retry(), tbbt_rpcconn_free() and the
 * synchronous helpers (tbbt_rpcconn_call_sync(), tbbt_rpcconn_getport(),
 * tbbt_rpcconn_mnt3()).
 * The descriptor of tbbt_rpcconn_fd() may be polled by both threads at once (POLLOUT by
 * the sender when tbbt_rpcconn_flush() returned -EAGAIN, POLLIN by the receiver), or
 * registered in two different epoll sets; it changes on connect/reconnect.
 *
 * Failure: when the receive side sees EOF, a reset, a send error reported by the send
 * side, or a malformed record stream, the connection goes down: tbbt_rpcconn_call()
 * fails from then on, and tbbt_rpcconn_recv() returns every outstanding call as a
 * reply with status TBBT_RPCCONN_LOST, then returns the error.  tbbt_rpcconn_error()
 * says why.  tbbt_rpcconn_reconnect() (exclusive) opens a new socket to the same
 * address.
 */
#ifndef TBBT_ONC_RPCCONN_H
#define TBBT_ONC_RPCCONN_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <rpc/rpc.h>

struct tbbt_rpcconn;

enum tbbt_rpcconn_transport {
    TBBT_RPCCONN_TCP = 0,
    TBBT_RPCCONN_UDP = 1,
};

/* Credential flavor of every call on a connection. */
enum tbbt_rpcconn_flavor {
    TBBT_RPCCONN_AUTH_NONE = 0,
    TBBT_RPCCONN_AUTH_SYS = 1,
};

#define TBBT_RPCCONN_MAX_GIDS 16   /* RFC 5531 authsys_parms gids<16> */

/* Connection options; zeroed fields take the defaults given. */
struct tbbt_rpcconn_opts {
    enum tbbt_rpcconn_transport transport;  /* default TCP */
    enum tbbt_rpcconn_flavor flavor;        /* default AUTH_NONE */
    uint32_t uid, gid;                      /* AUTH_SYS */
    const char *machine;                    /* AUTH_SYS machine name (borrowed during
                                               _new only); NULL: gethostname() */
    uint32_t ngids;                         /* AUTH_SYS auxiliary gids, <= 16 */
    const uint32_t *gids;                   /* borrowed during _new only */
    size_t recv_buf;        /* receive buffer bytes, default 256 KiB (UDP: rounded to
                               64 KiB datagram slots, at least one) */
    size_t max_record;      /* largest reply record accepted, default 1 MiB + 64 KiB;
                               a larger TCP record mark closes the connection; also the
                               largest call (UDP: at most 65507 bytes, one datagram) */
    int connect_timeout_ms; /* default 5000 */
    int sock_buf;           /* SO_SNDBUF/SO_RCVBUF if > 0 (UDP default 4 MiB) */
    bool reserved_port;     /* bind a local port below 1024 first, as kernel NFS clients
                               do (bindresvport(3); needs root or CAP_NET_BIND_SERVICE:
                               connecting fails with -EACCES otherwise) */
};

/*
 * Retransmission and reconnection policy (tbbt_rpcconn_set_retry()), the same for every
 * user of a connection: tbbt-play's start-up, replay and --verify.
 */
struct tbbt_rpcconn_retry {
    int timeout_ms;         /* how long a call waits for its reply before it is sent
                               again with the same XID (> 0) */
    unsigned retrans;       /* resends of one call after timeouts (then its outcome
                               is unknown) */
    unsigned relost;        /* resends of one call after losing its connection (then
                               its outcome is unknown) */
    int dead_ms;            /* a connection that cannot be reconnected for this long is
                               given up (> 0) */
};

/* What the caller does with a call that timed out or was lost (tbbt_rpcconn_retry_step()). */
enum tbbt_rpcconn_next {
    TBBT_RPCCONN_RESEND = 0,    /* send it again with the same XID (after a reconnect if
                                   the connection is down) */
    TBBT_RPCCONN_GIVE_UP,       /* its retransmissions are exhausted: outcome unknown */
};

/* Status of one completed call (struct tbbt_rpcconn_reply.status). */
enum tbbt_rpcconn_status {
    TBBT_RPCCONN_OK = 0,        /* MSG_ACCEPTED, SUCCESS; results decoded into res */
    TBBT_RPCCONN_ACCEPT_ERR,    /* MSG_ACCEPTED with accept_stat != SUCCESS; detail =
                                   accept_stat (PROG_UNAVAIL, PROC_UNAVAIL, ...; one
                                   over SYSTEM_ERR makes the reply GARBAGE) */
    TBBT_RPCCONN_DENIED,        /* MSG_DENIED; detail = reject_stat << 16 | auth_stat */
    TBBT_RPCCONN_GARBAGE,       /* reply matched by XID but its header or results did
                                   not decode (results freed, res zeroed) */
    TBBT_RPCCONN_LOST,          /* connection went down before the reply; detail =
                                   the connection error (negative, see _error()) */
    TBBT_RPCCONN_TIMEDOUT,      /* handed back by tbbt_rpcconn_expire() */
};

/* Returns "OK", "ACCEPT_ERR", ...: a static string; any thread. */
const char *tbbt_rpcconn_status_name(int status);

/* One call to queue.  All pointers are borrowed as stated. */
struct tbbt_rpcconn_call {
    uint32_t prog, vers, proc;
    xdrproc_t xargs;        /* encoder of args, NULL for void */
    const void *args;       /* borrowed during tbbt_rpcconn_call() only */
    xdrproc_t xres;         /* decoder of the results, NULL: do not decode */
    void *res;              /* borrowed until the call completes: zeroed and decoded into
                               by the receive side; after OK the caller releases it with
                               xdr_free(xres, res) */
    size_t res_size;        /* bytes of *res, zeroed before decoding */
    void *arg;              /* caller's cookie, handed back in the reply */
    uint32_t flags;         /* TBBT_RPCCONN_CALL_* */
    uint32_t xid;           /* with TBBT_RPCCONN_CALL_XID: the XID to use */
    uint32_t uid, gid;      /* with TBBT_RPCCONN_CALL_CRED: AUTH_SYS uid and gid (gids = [gid]) */
    const uint8_t *cred;    /* with TBBT_RPCCONN_CALL_RAWCRED: an AUTH_SYS body as
                               tbbt_rpcconn_encode_authsys() makes it (borrowed during
                               tbbt_rpcconn_call() only) */
    uint32_t cred_len;
};

/* Use call->xid instead of the next XID of the connection (UDP retransmission). */
#define TBBT_RPCCONN_CALL_XID 1u
/*
 * On an AUTH_SYS connection, send this call with call->uid and call->gid (and the
 * connection's machine name) instead of the connection's credential (the player replays
 * each record with the credentials of the trace).  Ignored on AUTH_NONE connections.
 */
#define TBBT_RPCCONN_CALL_CRED 2u
/*
 * On an AUTH_SYS connection, send this call with the whole credential call->cred (the
 * player replays each record with the machine name, uid, gid and supplementary gids
 * the trace recorded).  Wins over TBBT_RPCCONN_CALL_CRED.  Ignored on AUTH_NONE.
 */
#define TBBT_RPCCONN_CALL_RAWCRED 4u

#define TBBT_RPCCONN_AUTH_MAX 400  /* RFC 5531 MAX_AUTH_BYTES: longest credential body */

/*
 * Encodes an AUTH_SYS credential body (RFC 5531 appendix A, authsys_parms: stamp,
 * machine name, uid, gid, gids) into buf (TBBT_RPCCONN_AUTH_MAX bytes) and returns its
 * length.  machine[0..machine_len) may hold any bytes; it is cut to 255 bytes, gids to
 * 16.  Thread-safe.
 */
uint32_t tbbt_rpcconn_encode_authsys(uint8_t *buf, uint32_t stamp, const void *machine,
                                     size_t machine_len, uint32_t uid, uint32_t gid,
                                     uint32_t ngids, const uint32_t *gids);

/* A completed call, filled by tbbt_rpcconn_recv() / tbbt_rpcconn_expire(). */
struct tbbt_rpcconn_reply {
    uint32_t xid;
    int status;             /* enum tbbt_rpcconn_status */
    int32_t detail;         /* see enum tbbt_rpcconn_status */
    int32_t res_status;     /* first 32-bit word of the results when OK and present (the
                               nfsstat3 / mountstat3 of every NFSv3 and MNT procedure but
                               NULL), else -1 */
    uint64_t queued_ns;     /* CLOCK_MONOTONIC when tbbt_rpcconn_call() queued it */
    uint64_t recv_ns;       /* CLOCK_MONOTONIC when the reply's bytes were read (or the
                               loss/timeout was detected) */
    void *arg;              /* the call's cookie */
    void *res;              /* the call's result storage */
};

/* Counters; each is written by one side only, readable from any thread. */
struct tbbt_rpcconn_stats {
    uint64_t calls;          /* queued */
    uint64_t send_syscalls;  /* send()/sendmmsg() calls that moved data */
    uint64_t bytes_sent;
    uint64_t replies;        /* matched replies returned (any status but LOST/TIMEDOUT) */
    uint64_t recv_syscalls;  /* recv()/recvmmsg() calls that returned data */
    uint64_t bytes_recv;
    uint64_t unmatched;      /* replies whose XID is not outstanding (late, duplicate) */
    uint64_t garbage;        /* malformed replies (UDP datagrams, undecodable bodies) */
    uint64_t lost;           /* calls failed by a connection loss */
    uint64_t timedout;       /* calls handed back by tbbt_rpcconn_expire() */
    uint64_t retransmits;    /* same-XID resends by the synchronous helpers */
    uint64_t reconnects;     /* reconnects by tbbt_rpcconn_revive() */
};

/*
 * Allocates an unconnected connection (exclusive).  opts may be NULL (TCP, AUTH_NONE).
 * Never fails (out of memory aborts).  Free with tbbt_rpcconn_free().
 */
struct tbbt_rpcconn *tbbt_rpcconn_new(const struct tbbt_rpcconn_opts *opts);

/*
 * Frees c (NULL is a no-op), closing its socket (exclusive).  Calls still outstanding
 * are dropped without a reply; their res storage is not touched.
 */
void tbbt_rpcconn_free(struct tbbt_rpcconn *c);

/*
 * Resolves host (name or numeric, borrowed) and connects to host:port with a
 * non-blocking socket, waiting at most connect_timeout_ms (exclusive).  Returns 0, or
 * a negative errno with the reason in tbbt_rpcconn_error().  The address is kept for
 * tbbt_rpcconn_reconnect().
 */
int tbbt_rpcconn_connect(struct tbbt_rpcconn *c, const char *host, uint16_t port);

/*
 * Closes the socket (failing outstanding calls: the next tbbt_rpcconn_recv() returns
 * them as LOST), drops unsent bytes and connects again to the same address (exclusive).
 * Returns 0 or a negative errno (reason in tbbt_rpcconn_error()).
 */
int tbbt_rpcconn_reconnect(struct tbbt_rpcconn *c);

/* Socket to poll, -1 when not connected.  Any thread; changes on (re)connect. */
int tbbt_rpcconn_fd(const struct tbbt_rpcconn *c);

/* True while connected and not gone down.  Any thread. */
bool tbbt_rpcconn_is_up(const struct tbbt_rpcconn *c);

/*
 * Encodes call into the send queue (send side).  Nothing is written to the socket:
 * queue a batch, then tbbt_rpcconn_flush().  Stores the XID in *xid (may be NULL)
 * before the call is handed to the receive side (whose thread may read its reply as soon
 * as any thread flushes; *xid may be written on failure too) and returns 0: from then
 * on the call completes exactly once through
 * tbbt_rpcconn_recv() or tbbt_rpcconn_expire().  On failure returns -EPIPE/-ENOTCONN
 * (connection down; the error says why) or -EINVAL (arguments did not encode within
 * max_record); the call is not queued and never completes.
 */
int tbbt_rpcconn_call(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call,
                      uint32_t *xid);

/*
 * Sends what is queued, as far as the socket takes it without blocking (send side):
 * TCP with one send() of the whole queue, UDP with one sendmmsg() per 64 datagrams (one
 * datagram per call).  Returns 0 when the queue is empty, -EAGAIN when bytes remain
 * (poll the fd for POLLOUT and flush again), or another negative errno when the socket
 * failed: the connection then goes down and the receive side reports the outstanding
 * calls.
 */
int tbbt_rpcconn_flush(struct tbbt_rpcconn *c);

/* Bytes queued but not yet sent (send side). */
size_t tbbt_rpcconn_sendq_bytes(const struct tbbt_rpcconn *c);

/*
 * Receive side.  Fills out[0..max) with completed calls and returns their number: it
 * first returns calls failed by a connection loss, then parses bytes already buffered,
 * then reads from the socket (non-blocking) while out has room and the socket has
 * data; a read that does not fill the buffer is taken to have emptied the socket, so
 * poll level-triggered (poll(), or epoll without EPOLLET).  Returns 0 when nothing is
 * ready (poll the fd for POLLIN), or, once the connection is down and every
 * outstanding call was returned, the negative error (-ECONNRESET for EOF or reset,
 * TBBT_E_BADREC for a bogus record stream, ...; the reason is in tbbt_rpcconn_error()).
 * Replies whose XID is not outstanding are counted and dropped.  The res pointers in
 * out are the callers' own (see struct tbbt_rpcconn_call).
 */
int tbbt_rpcconn_recv(struct tbbt_rpcconn *c, struct tbbt_rpcconn_reply *out, int max);

/*
 * Receive side.  Sets SO_RCVLOWAT (TCP): poll() then reports the socket readable only
 * when at least bytes are buffered (or on EOF/error), so that several small replies are
 * read with one wake-up.  The caller must lower it (1 is the default) when fewer bytes
 * can still arrive, e.g. to the reply size times the calls outstanding, or poll with a
 * timeout.  Returns 0 or a negative errno; UDP: -EOPNOTSUPP.
 */
int tbbt_rpcconn_set_recv_lowat(struct tbbt_rpcconn *c, int bytes);

/*
 * Receive side.  Removes up to max outstanding calls queued before deadline_ns
 * (CLOCK_MONOTONIC) and returns them in out with status TIMEDOUT; a reply arriving
 * later counts as unmatched.  For UDP retransmission: queue the call again with
 * TBBT_RPCCONN_CALL_XID and the same XID.  Returns the number returned.
 */
int tbbt_rpcconn_expire(struct tbbt_rpcconn *c, uint64_t deadline_ns,
                        struct tbbt_rpcconn_reply *out, int max);

/* Calls queued and not yet completed.  Any thread (a relaxed snapshot). */
unsigned tbbt_rpcconn_outstanding(const struct tbbt_rpcconn *c);

/*
 * One-line reason of the last failure ("connection reset by server: Connection reset
 * by peer", "bogus record mark: fragment of 2147483647 bytes exceeds the 1114112-byte
 * limit", ...), "" if none.  Any thread; the string stays valid until the next
 * connect/reconnect/free.
 */
const char *tbbt_rpcconn_error(const struct tbbt_rpcconn *c);

/* Copies the counters into *st.  Any thread. */
void tbbt_rpcconn_stats(const struct tbbt_rpcconn *c, struct tbbt_rpcconn_stats *st);

/*
 * Sets the connection's retransmission and reconnection policy (exclusive); p is
 * copied; NULL removes it.  Fields out of range are clamped (timeout and dead time at
 * least 1 ms, retrans at most 1000).
 */
void tbbt_rpcconn_set_retry(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_retry *p);

/* Copies the policy into *p and returns true, or returns false if none is set.  Any thread. */
bool tbbt_rpcconn_get_retry(const struct tbbt_rpcconn *c, struct tbbt_rpcconn_retry *p);

/*
 * The policy's decision for a call that timed out `timeouts` times and lost its
 * connection `losses` times so far (this time included): RESEND while timeouts <=
 * p->retrans and losses <= p->relost, else GIVE_UP.  Thread-safe.
 */
enum tbbt_rpcconn_next tbbt_rpcconn_retry_step(const struct tbbt_rpcconn_retry *p,
                                               unsigned timeouts, unsigned losses);

/*
 * Brings a connection that went down back up (exclusive): one reconnect attempt.
 * Returns 0 when up (already or now; the reconnects counter counts the latter),
 * -EAGAIN when this attempt failed but the connection has been down for less than
 * p->dead_ms since down_since_ns (CLOCK_MONOTONIC; try again a little later, e.g.
 * 200 ms), or the connect error once it has been down that long (reason in
 * tbbt_rpcconn_error()).  Calls outstanding at the loss must have been taken with
 * tbbt_rpcconn_recv() (as LOST) before; unsent bytes are dropped.
 */
int tbbt_rpcconn_revive(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_retry *p,
                        uint64_t down_since_ns);

/*
 * Synchronous call (exclusive; no other call may be outstanding): queues call, sends
 * it and waits for its reply.  Without a policy (tbbt_rpcconn_set_retry()) it waits at
 * most timeout_ms, UDP retransmitting with the same XID every second, and a lost
 * connection fails the call.  With a policy, timeout_ms is ignored: each send waits
 * p->timeout_ms, then the call is sent again with the same XID, up to p->retrans times;
 * a lost connection is reconnected (tbbt_rpcconn_revive(), for at most p->dead_ms) and
 * the call sent again with the same XID, up to p->relost times.  Returns 0
 * with the reply in *rep (status may be any of OK, ACCEPT_ERR, DENIED, GARBAGE),
 * -ETIMEDOUT, or the connection error.
 */
int tbbt_rpcconn_call_sync(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call,
                           int timeout_ms, struct tbbt_rpcconn_reply *rep);

/*
 * PMAPPROC_GETPORT (portmap v2, program 100000) on c, a connection to port 111
 * (exclusive).  prot is IPPROTO_TCP or IPPROTO_UDP.  Returns 0 with *port set (0 means
 * not registered), or a negative error (reason in tbbt_rpcconn_error()).
 */
int tbbt_rpcconn_getport(struct tbbt_rpcconn *c, uint32_t prog, uint32_t vers,
                         uint32_t prot, int timeout_ms, uint16_t *port);

/* An NFSv3 file handle (RFC 1813 2.5 nfs_fh3), caller storage. */
struct tbbt_rpcconn_fh {
    uint32_t len;
    uint8_t data[64];
};

/*
 * MOUNTPROC3_MNT of path (borrowed) on c, a connection to the MOUNT v3 server
 * (exclusive).  Returns 0 when the server answered: *mstat is its mountstat3, and *fh
 * the root handle when *mstat is MNT3_OK (0).  Otherwise a negative error (reason in
 * tbbt_rpcconn_error()).
 */
int tbbt_rpcconn_mnt3(struct tbbt_rpcconn *c, const char *path, int timeout_ms,
                      int *mstat, struct tbbt_rpcconn_fh *fh);

/*
 * MOUNTPROC_MNT of MOUNT v1 (RFC 1094 appendix A, for NFSv2), as tbbt_rpcconn_mnt3():
 * *mstat is the fhstatus status, *fh the 32-byte handle when it is 0.
 */
int tbbt_rpcconn_mnt1(struct tbbt_rpcconn *c, const char *path, int timeout_ms,
                      int *mstat, struct tbbt_rpcconn_fh *fh);

/*
 * Why the reply rep (status not TBBT_RPCCONN_OK) failed, for an error line, into buf
 * (len bytes, truncated): "the server's RPC layer says PROC_UNAVAIL" (RFC 5531
 * accept_stat), "the server denied the call (...)", or "STATUS (detail D)".  Returns buf.
 */
const char *tbbt_rpcconn_reply_why(const struct tbbt_rpcconn_reply *rep, char *buf,
                                   size_t len);

#endif
