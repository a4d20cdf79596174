/* SPDX-License-Identifier: MIT */
/*
 * The grace-period probe of tbbt-play (grace.h): NFSv3 GETATTR (RFC 1813 3.3.1) of the
 * image root, then SETATTR (3.3.2) of the mode it has, unguarded.  JUKEBOX means the
 * server is in grace.
 */
#include "player/grace.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "proto/nfs3.h"
#include "proto/proto.h"
#include "trace/trace.h"
#include "util/util.h"

/* One synchronous NFSv3 call; 0 with *status, or a negative error with the reason. */
static int call3(struct tbbt_rpcconn *c, uint32_t proc, xdrproc_t xa, const void *a,
                 xdrproc_t xr, void *res, size_t res_size, int timeout_ms, int32_t *status,
                 char *err, size_t errlen)
{
    struct tbbt_rpcconn_call call = {.prog = NFS3_PROGRAM, .vers = 3, .proc = proc,
                                     .xargs = xa, .args = a, .xres = xr, .res = res,
                                     .res_size = res_size};
    struct tbbt_rpcconn_reply rep;
    int rc = tbbt_rpcconn_call_sync(c, &call, timeout_ms, &rep);
    if (rc < 0) {
        tbbt_errbuf(err, errlen, "grace probe %s: %s", tbbt_proc_name(TBBT_PROG_NFS3, (int)proc),
                    rc == -ETIMEDOUT ? "no reply" : tbbt_rpcconn_error(c));
        return rc;
    }
    *status = rep.status == TBBT_RPCCONN_OK ? rep.res_status : -1;
    return 0;
}

int tbbt_grace_probe(struct tbbt_rpcconn *c, uint32_t vers, const struct tbbt_rpcconn_fh *root,
                     int timeout_ms, enum tbbt_grace_state *state, char *err, size_t errlen)
{
    *state = TBBT_GRACE_UNKNOWN;
    if (vers != 3)
        return 0;
    nfs_fh3 fh = {.data = {.data_len = root->len, .data_val = (char *)root->data}};
    GETATTR3args ga = {.object = fh};
    GETATTR3res gr;
    int32_t st;
    int rc = call3(c, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, &ga,
                   (xdrproc_t)xdr_GETATTR3res, &gr, sizeof(gr), timeout_ms, &st, err, errlen);
    if (rc < 0)
        return rc;
    if (st != NFS3_OK) {
        if (st >= 0)
            xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&gr);
        return 0;
    }
    uint32_t mode = gr.GETATTR3res_u.resok.obj_attributes.mode & 07777u;
    xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&gr);
    SETATTR3args sa;
    memset(&sa, 0, sizeof(sa));
    sa.object = fh;
    sa.new_attributes.mode.set_it = TRUE;
    sa.new_attributes.mode.set_mode3_u.mode = mode;
    SETATTR3res sr;
    rc = call3(c, NFSPROC3_SETATTR, (xdrproc_t)xdr_SETATTR3args, &sa,
               (xdrproc_t)xdr_SETATTR3res, &sr, sizeof(sr), timeout_ms, &st, err, errlen);
    if (rc < 0)
        return rc;
    if (st >= 0)
        xdr_free((xdrproc_t)xdr_SETATTR3res, (char *)&sr);
    *state = st == NFS3_OK ? TBBT_GRACE_NO
             : st == NFS3ERR_JUKEBOX ? TBBT_GRACE_YES : TBBT_GRACE_UNKNOWN;
    return 0;
}

const char *tbbt_grace_state_name(enum tbbt_grace_state st)
{
    static const char *const names[] = {"no", "yes", "unknown"};
    return (unsigned)st < G_N_ELEMENTS(names) ? names[st] : "unknown";
}
