/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario's connections (nfs-scenario-int.h): connecting to MOUNT and NFS through
 * libnfs's raw asynchronous API, the poll() loop that runs its callbacks, the stall
 * check (no reply for STALL_MS: the server is gone), waiting for a reply and checking
 * its status, and the way out (sc_die()).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs-scenario-int.h"

/* Time of the last call sent or reply received, for the stall check. */
gint64 sc_last_activity;

const char *sc_stat3_name(int st)
{
    return st == NFS3_OK ? "NFS3_OK" : nfsstat3_to_str(st);
}

/* ------------------------------------------------------------------ poll loop */

void sc_client_service(struct client *c, int timeout_ms)
{
    struct pollfd pfd = { .fd = rpc_get_fd(c->rpc), .events = rpc_which_events(c->rpc) };
    int n = poll(&pfd, 1, timeout_ms);

    if (n < 0 && errno != EINTR)
        sc_die("poll: %s", strerror(errno));
    if (rpc_service(c->rpc, n > 0 ? pfd.revents : 0) < 0)
        sc_die("%s connection failed: %s", c->what, rpc_get_error(c->rpc));
}

/* Runs the loop until *flag is true; dies when nothing happens for STALL_MS. */
void sc_client_wait(struct client *c, const bool *flag)
{
    sc_last_activity = g_get_monotonic_time();
    while (!*flag) {
        sc_client_service(c, 100);
        if (!*flag && g_get_monotonic_time() - sc_last_activity > (gint64)STALL_MS * 1000)
            sc_die("%s server stopped answering for %d s", c->what, STALL_MS / 1000);
    }
}

static void connect_cb(struct rpc_context *rpc, int status, void *data, void *arg)
{
    struct res *r = arg;

    (void)rpc;
    r->rpc_status = status;
    if (status != RPC_STATUS_SUCCESS && data)
        g_strlcpy(r->err, data, sizeof(r->err));
    r->done = true;
}

/* Connects to PROGRAM v3 at PORT, or through the portmapper when PORT is 0. */
void sc_client_connect(struct client *c, const struct config *cfg, int program, int port)
{
    struct res r = { 0 };
    int rc;

    c->rpc = rpc_init_context();
    if (!c->rpc)
        sc_die("cannot create an RPC context");
    if (port)
        rc = rpc_connect_async(c->rpc, cfg->server, port, connect_cb, &r);
    else
        rc = rpc_connect_program_async(c->rpc, cfg->server, program, 3, connect_cb, &r);
    if (rc < 0)
        sc_die("cannot connect to %s %s: %s", c->what, cfg->server, rpc_get_error(c->rpc));
    sc_client_wait(c, &r.done);
    if (r.rpc_status != RPC_STATUS_SUCCESS)
        sc_die("cannot connect to %s on %s: %s", c->what, cfg->server, r.err);
}

/* Waits for R and checks its status; WHAT names the call in the error message. */
void sc_expect(struct client *c, struct res *r, int want, const char *what)
{
    sc_client_wait(c, &r->done);
    if (r->rpc_status != RPC_STATUS_SUCCESS)
        sc_die("%s: RPC failed: %s", what, r->err);
    if (r->status != want)
        sc_die("%s: expected %s, got %s", what, sc_stat3_name(want), sc_stat3_name(r->status));
}
