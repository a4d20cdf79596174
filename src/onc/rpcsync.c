/* SPDX-License-Identifier: MIT */
/*
 * rpcconn's synchronous helpers and retry policy (see rpcconn.h): a call sent and waited
 * for on a connection the caller holds exclusively, resent with the same XID and
 * reconnected under the connection's struct tbbt_rpcconn_retry, and on top of it
 * PMAPPROC_GETPORT (RFC 1833 portmap v2) and MOUNT v3 MNT (RFC 1813 Appendix I).  The
 * asynchronous side (rpcconn.c) never resends on its own; this file does it for the
 * synchronous users only, through the public calls.
 */
#include "onc/rpcconn.h"
#include "onc/rpcconn-int.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <rpc/pmap_prot.h>

#include "proto/mount.h"
#include "util/util.h"

/* ------------------------------------------------------------------ synchronous helpers */

/* Waits for events on the fd until deadline_ns; returns poll()'s result. */
static int wait_fd(struct tbbt_rpcconn *c, short events, uint64_t deadline_ns)
{
    uint64_t now = tbbt_now_ns();
    int ms = deadline_ns > now ? (int)((deadline_ns - now + 999999) / 1000000) : 0;
    struct pollfd p = {.fd = c->fd, .events = events};
    return poll(&p, 1, ms);
}

/* Drops whatever is outstanding (the synchronous helpers own the connection). */
static void expire_all(struct tbbt_rpcconn *c)
{
    struct tbbt_rpcconn_reply tmp[16];
    while (tbbt_rpcconn_expire(c, UINT64_MAX, tmp, 16) > 0) {
    }
}

/* ------------------------------------------------------------------ retry policy */

void tbbt_rpcconn_set_retry(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_retry *p)
{
    c->has_retry = p != NULL;
    if (!p)
        return;
    c->retry.timeout_ms = MAX(p->timeout_ms, 1);
    c->retry.retrans = MIN(p->retrans, 1000u);
    c->retry.relost = MIN(p->relost, 1000u);
    c->retry.dead_ms = MAX(p->dead_ms, 1);
}

bool tbbt_rpcconn_get_retry(const struct tbbt_rpcconn *c, struct tbbt_rpcconn_retry *p)
{
    if (c->has_retry)
        *p = c->retry;
    return c->has_retry;
}

enum tbbt_rpcconn_next tbbt_rpcconn_retry_step(const struct tbbt_rpcconn_retry *p,
                                               unsigned timeouts, unsigned losses)
{
    return timeouts <= p->retrans && losses <= p->relost ? TBBT_RPCCONN_RESEND
                                                         : TBBT_RPCCONN_GIVE_UP;
}

int tbbt_rpcconn_revive(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_retry *p,
                        uint64_t down_since_ns)
{
    if (tbbt_rpcconn_is_up(c))
        return 0;
    int rc = tbbt_rpcconn_reconnect(c);
    if (rc == 0) {
        TBBT__ONC_STAT_ADD(c, reconnects, 1);
        return 0;
    }
    uint64_t now = tbbt_now_ns();
    if (now - MIN(now, down_since_ns) < (uint64_t)p->dead_ms * 1000000u)
        return -EAGAIN;
    return rc == -EAGAIN ? -ETIMEDOUT : rc;
}

/* Takes whatever the connection still reports (LOST calls, then its error). */
static void drain_lost(struct tbbt_rpcconn *c)
{
    struct tbbt_rpcconn_reply tmp[16];
    while (tbbt_rpcconn_recv(c, tmp, 16) > 0) {
    }
}

/* Reconnects c under the policy, waiting between attempts; 0 or the error. */
static int revive_wait(struct tbbt_rpcconn *c, uint64_t down_since_ns)
{
    drain_lost(c);
    for (;;) {
        int rc = tbbt_rpcconn_revive(c, &c->retry, down_since_ns);
        if (rc != -EAGAIN)
            return rc;
        g_usleep(200000);
    }
}

/*
 * One send of a call under the policy and the wait for its reply: 0 with *rep,
 * -ETIMEDOUT (no reply within the timeout; the call was handed back), -ECONNRESET (the
 * connection went down or refused the call), or another error.
 */
static int sync_try(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call, uint32_t *xid,
                    struct tbbt_rpcconn_reply *rep)
{
    int rc = tbbt_rpcconn_call(c, call, xid);
    if (rc == -EPIPE || rc == -ENOTCONN)
        return -ECONNRESET;
    if (rc < 0)
        return rc;
    uint64_t deadline = tbbt_now_ns() + (uint64_t)c->retry.timeout_ms * 1000000u;
    for (;;) {
        rc = tbbt_rpcconn_flush(c);
        wait_fd(c, POLLIN | (rc == -EAGAIN ? POLLOUT : 0), deadline);
        struct tbbt_rpcconn_reply r[8];
        int n = tbbt_rpcconn_recv(c, r, 8);
        if (n < 0)
            return -ECONNRESET;
        for (int i = 0; i < n; i++) {
            if (r[i].xid != *xid)
                continue;
            if (r[i].status == TBBT_RPCCONN_LOST)
                return -ECONNRESET;
            *rep = r[i];
            return 0;
        }
        if (tbbt_now_ns() >= deadline) {
            expire_all(c);
            return -ETIMEDOUT;
        }
    }
}

/* tbbt_rpcconn_call_sync() under the connection's policy. */
static int call_retry(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call,
                      struct tbbt_rpcconn_reply *rep)
{
    struct tbbt_rpcconn_call again = *call;
    uint32_t xid = 0;
    unsigned timeouts = 0, losses = 0;
    for (unsigned sends = 1;; sends++) {
        if (!tbbt_rpcconn_is_up(c)) {
            int rc = revive_wait(c, tbbt_now_ns());
            if (rc < 0)
                return rc;
        }
        int rc = sync_try(c, sends == 1 ? call : &again, &xid, rep);
        if (rc == 0)
            return 0;
        if (rc != -ETIMEDOUT && rc != -ECONNRESET)
            return rc;
        again.flags |= TBBT_RPCCONN_CALL_XID;
        again.xid = xid;
        timeouts += rc == -ETIMEDOUT;
        losses += rc == -ECONNRESET;
        if (tbbt_rpcconn_retry_step(&c->retry, timeouts, losses) == TBBT_RPCCONN_GIVE_UP) {
            if (rc == -ETIMEDOUT)
                tbbt__rpcconn_set_error(c, -ETIMEDOUT,
                                        "no reply from server after %u sends, %d ms each", sends,
                                        c->retry.timeout_ms);
            return rc;
        }
        TBBT__ONC_STAT_ADD(c, retransmits, 1);
    }
}

int tbbt_rpcconn_call_sync(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call,
                           int timeout_ms, struct tbbt_rpcconn_reply *rep)
{
    if (c->has_retry)
        return call_retry(c, call, rep);
    uint32_t xid;
    int rc = tbbt_rpcconn_call(c, call, &xid);
    if (rc < 0)
        return rc;
    struct tbbt_rpcconn_call again = *call;
    again.flags |= TBBT_RPCCONN_CALL_XID;
    again.xid = xid;
    uint64_t now = tbbt_now_ns(), deadline = now + (uint64_t)timeout_ms * 1000000;
    uint64_t retx = now + 1000000000u;
    for (;;) {
        rc = tbbt_rpcconn_flush(c);
        wait_fd(c, POLLIN | (rc == -EAGAIN ? POLLOUT : 0), c->udp ? MIN(deadline, retx) : deadline);
        struct tbbt_rpcconn_reply r[8];
        int n = tbbt_rpcconn_recv(c, r, 8);
        if (n < 0)
            return n;
        for (int i = 0; i < n; i++) {
            if (r[i].xid != xid)
                continue;
            if (r[i].status == TBBT_RPCCONN_LOST)
                return r[i].detail < 0 ? r[i].detail : -ECONNRESET;
            *rep = r[i];
            return 0;
        }
        now = tbbt_now_ns();
        if (now >= deadline) {
            expire_all(c);
            tbbt__rpcconn_set_error(c, -ETIMEDOUT, "no reply from server within %d ms", timeout_ms);
            return -ETIMEDOUT;
        }
        if (c->udp && now >= retx) {   /* retransmit with the same XID */
            expire_all(c);
            if ((rc = tbbt_rpcconn_call(c, &again, NULL)) < 0)
                return rc;
            retx = now + 1000000000u;
        }
    }
}

/*
 * A synchronous call whose reply must be OK.  Returns 0, the call's error, or -EPROTO
 * with the reason "<what> failed: <status> (detail <d>)" recorded.
 */
static int call_ok(struct tbbt_rpcconn *c, const struct tbbt_rpcconn_call *call, int timeout_ms,
                   const char *what)
{
    struct tbbt_rpcconn_reply rep;
    int rc = tbbt_rpcconn_call_sync(c, call, timeout_ms, &rep);
    if (rc < 0)
        return rc;
    if (rep.status != TBBT_RPCCONN_OK) {
        char why[96];
        tbbt__rpcconn_set_error(c, -EPROTO, "%s failed: %s", what,
                                tbbt_rpcconn_reply_why(&rep, why, sizeof(why)));
        return -EPROTO;
    }
    return 0;
}

int tbbt_rpcconn_getport(struct tbbt_rpcconn *c, uint32_t prog, uint32_t vers, uint32_t prot,
                         int timeout_ms, uint16_t *port)
{
    struct pmap pm = {.pm_prog = prog, .pm_vers = vers, .pm_prot = prot, .pm_port = 0};
    u_long res = 0;
    struct tbbt_rpcconn_call call = {
        .prog = PMAPPROG, .vers = PMAPVERS, .proc = PMAPPROC_GETPORT,
        .xargs = (xdrproc_t)xdr_pmap, .args = &pm,
        .xres = (xdrproc_t)xdr_u_long, .res = &res, .res_size = sizeof(res),
    };
    char what[64];
    snprintf(what, sizeof(what), "portmap GETPORT(%u, %u)", prog, vers);
    int rc = call_ok(c, &call, timeout_ms, what);
    if (rc < 0)
        return rc;
    if (res > 65535) {
        tbbt__rpcconn_set_error(c, -EPROTO, "%s failed: port %lu", what, res);
        return -EPROTO;
    }
    *port = (uint16_t)res;
    return 0;
}

const char *tbbt_rpcconn_reply_why(const struct tbbt_rpcconn_reply *rep, char *buf,
                                   size_t len)
{
    static const char *const accept[] = { "SUCCESS", "PROG_UNAVAIL", "PROG_MISMATCH",
                                          "PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR" };

    if (rep->status == TBBT_RPCCONN_ACCEPT_ERR && rep->detail > 0 &&
        rep->detail < (int32_t)G_N_ELEMENTS(accept))
        snprintf(buf, len, "the server's RPC layer says %s", accept[rep->detail]);
    else if (rep->status == TBBT_RPCCONN_DENIED)
        snprintf(buf, len, "the server denied the call (AUTH_SYS as root refused?)");
    else
        snprintf(buf, len, "%s (detail %" PRId32 ")", tbbt_rpcconn_status_name(rep->status),
                 rep->detail);
    return buf;
}

/* MNT of MOUNT version vers (1: fhstatus, 3: mountres3) for the two functions below. */
static int mnt(struct tbbt_rpcconn *c, uint32_t vers, const char *path, int timeout_ms,
               int *mstat, struct tbbt_rpcconn_fh *fh)
{
    _Static_assert(MOUNTPROC_MNT == MOUNTPROC3_MNT, "MNT is procedure 1 of both versions");
    dirpath dp = (char *)path;
    union {
        fhstatus v1;
        mountres3 v3;
    } res;
    xdrproc_t xres = vers == MOUNTVERS ? (xdrproc_t)xdr_fhstatus : (xdrproc_t)xdr_mountres3;
    struct tbbt_rpcconn_call call = {
        .prog = MOUNT_PROGRAM, .vers = vers, .proc = MOUNTPROC3_MNT,
        .xargs = (xdrproc_t)xdr_dirpath, .args = &dp, .xres = xres, .res = &res,
        .res_size = vers == MOUNTVERS ? sizeof(res.v1) : sizeof(res.v3),
    };
    char *what = g_strdup_printf(vers == MOUNTVERS ? "MOUNT v1 MNT '%s'" : "MOUNT MNT '%s'",
                                 path);
    int rc = call_ok(c, &call, timeout_ms, what);
    g_free(what);
    if (rc < 0)
        return rc;
    if (vers == MOUNTVERS) {
        *mstat = (int)res.v1.status;
        if (res.v1.status == 0) {
            fh->len = FHSIZE;
            memcpy(fh->data, res.v1.fhstatus_u.directory, FHSIZE);
        }
    } else {
        *mstat = res.v3.fhs_status;
        if (res.v3.fhs_status == MNT3_OK) {
            fhandle3 *h = &res.v3.mountres3_u.mountinfo.fhandle;
            fh->len = MIN(h->fhandle3_len, (u_int)sizeof(fh->data));   /* bounded by the .x */
            memcpy(fh->data, h->fhandle3_val, fh->len);
        }
    }
    xdr_free(xres, (char *)&res);
    return 0;
}

int tbbt_rpcconn_mnt1(struct tbbt_rpcconn *c, const char *path, int timeout_ms, int *mstat,
                      struct tbbt_rpcconn_fh *fh)
{
    return mnt(c, MOUNTVERS, path, timeout_ms, mstat, fh);
}

int tbbt_rpcconn_mnt3(struct tbbt_rpcconn *c, const char *path, int timeout_ms, int *mstat,
                      struct tbbt_rpcconn_fh *fh)
{
    return mnt(c, MOUNT_V3, path, timeout_ms, mstat, fh);
}
