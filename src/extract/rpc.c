/* SPDX-License-Identifier: MIT */
/*
 * RPC call and reply headers (RFC 5531 section 9) through libtirpc's XDR
 * routines.  Credential and verifier bodies are decoded into stack buffers
 * (at most MAX_AUTH_BYTES), so nothing is allocated per message.
 */
#include "extract/rpc.h"

#include <rpc/rpc.h>
#include <string.h>

#include "trace/trace.h"
#include "util/buf.h"
#include "util/util.h"

/* Stands in for the results routine: we only want the header's length. */
static bool_t skip_results(XDR *xdrs, void *where)
{
    (void)xdrs;
    (void)where;
    return TRUE;
}

static void parse_authsys(const struct opaque_auth *cred, struct tbbt__rpc_hdr *h)
{
    char machname[MAX_MACHINE_NAME + 1];
    gid_t gids[NGRPS];
    struct authunix_parms aup = {.aup_machname = machname, .aup_gids = gids};
    XDR x;

    xdrmem_create(&x, cred->oa_base, cred->oa_length, XDR_DECODE);
    if (xdr_authunix_parms(&x, &aup)) {
        h->uid = aup.aup_uid;
        h->gid = aup.aup_gid;
    } else {
        h->flavor = UINT32_MAX;
    }
    xdr_destroy(&x);
}

static int parse_call(XDR *x, uint32_t xid, struct tbbt__rpc_hdr *h)
{
    char credbuf[MAX_AUTH_BYTES], verfbuf[MAX_AUTH_BYTES];
    struct rpc_msg m;

    memset(&m, 0, sizeof(m));
    m.rm_call.cb_cred.oa_base = credbuf;
    m.rm_call.cb_verf.oa_base = verfbuf;
    if (!xdr_callmsg(x, &m))
        return TBBT_E_BADREC;
    if (m.rm_xid != xid || m.rm_direction != CALL)
        return TBBT_E_BADREC;
    h->prog = (uint32_t)m.rm_call.cb_prog;
    h->vers = (uint32_t)m.rm_call.cb_vers;
    h->proc = (uint32_t)m.rm_call.cb_proc;
    h->flavor = (uint32_t)m.rm_call.cb_cred.oa_flavor;
    if (h->flavor == AUTH_SYS)
        parse_authsys(&m.rm_call.cb_cred, h);
    return 0;
}

static int parse_reply(XDR *x, struct tbbt__rpc_hdr *h)
{
    char verfbuf[MAX_AUTH_BYTES];
    struct rpc_msg m;

    memset(&m, 0, sizeof(m));
    m.acpted_rply.ar_verf.oa_base = verfbuf;
    m.acpted_rply.ar_results.where = NULL;
    m.acpted_rply.ar_results.proc = (xdrproc_t)skip_results;
    if (!xdr_replymsg(x, &m) || m.rm_direction != REPLY)
        return TBBT_E_BADREC;
    if (m.rm_reply.rp_stat == MSG_ACCEPTED) {
        if ((unsigned)m.acpted_rply.ar_stat > SYSTEM_ERR)
            return TBBT_E_BADREC;
        h->rpc_stat = (uint8_t)m.acpted_rply.ar_stat;
    } else {
        h->rpc_stat = m.rjcted_rply.rj_stat == RPC_MISMATCH ? TBBT_RPC_DENIED_MISMATCH
                                                            : TBBT_RPC_DENIED_AUTH;
    }
    return 0;
}

/*
 * Keeps what a header cut by the snap length still says (RFC 5531 9: the fixed
 * words before the credentials).  Returns 0 or TBBT_E_TRUNC.
 */
static int parse_partial(const uint8_t *p, size_t len, struct tbbt__rpc_hdr *h)
{
    struct tbbt_buf b;

    tbbt_buf_init(&b, p, len);
    tbbt_buf_skip(&b, 8);
    if (h->dir == TBBT__RPC_CALL) {
        if (tbbt_buf_get_be32(&b) != RPC_MSG_VERSION)
            return TBBT_E_TRUNC;
        h->prog = tbbt_buf_get_be32(&b);
        h->vers = tbbt_buf_get_be32(&b);
        h->proc = tbbt_buf_get_be32(&b);
        h->flavor = UINT32_MAX;
    } else {
        /* Without the accept status we cannot know: assume the usual SUCCESS. */
        h->rpc_stat = tbbt_buf_get_be32(&b) == MSG_ACCEPTED ? TBBT_RPC_SUCCESS
                                                            : TBBT_RPC_DENIED_AUTH;
    }
    if (b.trunc)
        return TBBT_E_TRUNC;
    h->partial = true;
    h->body_off = len;
    return 0;
}

int tbbt__rpc_parse(const uint8_t *p, size_t len, bool trunc, struct tbbt__rpc_hdr *h)
{
    XDR x;
    int rc;

    memset(h, 0, sizeof(*h));
    if (len < 8)
        return trunc ? TBBT_E_TRUNC : TBBT_E_BADREC;
    h->xid = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    h->dir = p[7] == 1 && !p[4] && !p[5] && !p[6] ? TBBT__RPC_REPLY : TBBT__RPC_CALL;
    if (p[4] || p[5] || p[6] || p[7] > 1)
        return TBBT_E_BADREC;
    /* The XDR routines take a mutable pointer but only read in XDR_DECODE. */
    xdrmem_create(&x, (char *)(uintptr_t)p, (u_int)(len > UINT32_MAX ? UINT32_MAX : len),
                  XDR_DECODE);
    rc = h->dir == TBBT__RPC_CALL ? parse_call(&x, h->xid, h) : parse_reply(&x, h);
    if (rc == 0)
        h->body_off = xdr_getpos(&x);
    xdr_destroy(&x);
    /* XDR cannot tell "ran out" from "bad"; a cut message gets the benefit of the doubt. */
    if (rc != 0 && trunc)
        rc = parse_partial(p, len, h);
    return rc;
}
