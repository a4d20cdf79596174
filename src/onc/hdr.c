/* SPDX-License-Identifier: MIT */
/*
 * RPC call and reply headers (RFC 5531 section 9, AUTH_SYS in section
 * 8.2 / RFC 1831 9.2) read with the bounds-checked cursor of util/buf.h: the one
 * parser of the converter (captured messages, maybe cut by the snap length) and of
 * the client transport (replies from the server under test).
 *
 * The header is a fixed sequence of words and two opaque_auth items, so it
 * is parsed by hand rather than through libtirpc's xdr_callmsg() and
 * xdr_replymsg(): those go through an indirect call per word and copy the
 * credential and verifier bodies, and were the largest cost of reading a
 * capture (~18% of the reader thread).  The parser accepts and rejects
 * exactly what those routines did (checked against them differentially on
 * millions of generated and mutated headers): rpcvers must be 2, an opaque_auth body at most
 * MAX_AUTH_BYTES (400) and present with its XDR padding, reply_stat and
 * reject_stat known, PROG_MISMATCH and RPC_MISMATCH with their two version
 * words, AUTH_ERROR with its auth_stat; an accept_stat over SYSTEM_ERR is
 * refused here.  AUTH_SYS bodies follow xdr_authunix_parms(): stamp,
 * machine name up to 255 bytes, uid, gid, up to 16 gids (RFC 5531 appendix
 * A); the header keeps where the credential's bytes after the stamp are, so
 * that the caller can tell a credential it saw before by its bytes and
 * decode only new ones (tbbt_onc_authsys()).  Arguments and results are
 * not parsed here (rpcgen's routines do).
 */
#include "onc/onc.h"

#include <string.h>

#include "util/buf.h"
#include "util/util.h"

#define ACCEPTED 0u               /* reply_stat MSG_ACCEPTED; 1 is MSG_DENIED */
#define ACC_PROG_MISMATCH 2u
#define ACC_SYSTEM_ERR 5u
#define REJ_RPC_MISMATCH 0u       /* reject_stat; 1 is AUTH_ERROR */
#define REJ_AUTH_ERROR 1u

/* XDR length of n opaque bytes with their padding (n <= TBBT_ONC_AUTH_MAX here). */
static size_t padded(uint32_t n)
{
    return ((size_t)n + 3) & ~(size_t)3;
}

/*
 * An opaque_auth (flavor, body<400>) at b: the body and its padding must be
 * there.  Sets *flavor and body/len (borrowed from b's bytes); false if not.
 */
static bool get_auth(struct tbbt_buf *b, uint32_t *flavor, const uint8_t **body, uint32_t *len)
{
    *flavor = tbbt_buf_get_be32(b);
    *len = tbbt_buf_get_be32(b);
    if (b->trunc || *len > TBBT_ONC_AUTH_MAX)
        return false;
    *body = b->p;
    return tbbt_buf_skip(b, padded(*len));
}

/*
 * The AUTH_SYS credential after its stamp (machine name, uid, gid, gids; RFC 5531
 * appendix A) at sys[0..len): false if it does not parse.  Sets *uid, *gid and *used
 * (bytes up to the last gid); fills *cred too when cred is not NULL.
 */
static bool walk_authsys(const uint8_t *sys, uint32_t len, uint32_t *uid, uint32_t *gid,
                         size_t *used, struct tbbt_onc_authsys *cred)
{
    struct tbbt_buf b;
    const uint8_t *name;
    uint32_t n;

    tbbt_buf_init(&b, sys, len);
    n = tbbt_buf_get_be32(&b);            /* machine name */
    if (b.trunc || n > TBBT_ONC_MACHINE_MAX || !(name = tbbt_buf_get(&b, n)) ||
        !tbbt_buf_skip(&b, padded(n) - n))
        return false;
    if (cred) {
        cred->machine = name;
        cred->machine_len = n;
    }
    *uid = tbbt_buf_get_be32(&b);
    *gid = tbbt_buf_get_be32(&b);
    n = tbbt_buf_get_be32(&b);            /* gids */
    if (b.trunc || n > TBBT_ONC_GIDS_MAX)
        return false;
    if (cred) {
        for (uint32_t i = 0; i < n; i++)
            cred->gids[i] = tbbt_buf_get_be32(&b);
        cred->ngids = n;
    } else {
        tbbt_buf_skip(&b, (size_t)n * 4);
    }
    *used = (size_t)(b.p - sys);
    return !b.trunc;
}

/* The AUTH_SYS credential body of a call (stamp first): uid, gid and where its fields are. */
static bool parse_authsys(const uint8_t *p, uint32_t len, struct tbbt_onc_hdr *h)
{
    size_t used;
    uint32_t uid, gid;

    if (len < 4 || !walk_authsys(p + 4, len - 4, &uid, &gid, &used, NULL))
        return false;
    h->uid = uid;
    h->gid = gid;
    h->sys = p + 4;                       /* up to the last gid: not any bytes after */
    h->sys_len = (uint32_t)used;
    return true;
}

bool tbbt_onc_authsys(const uint8_t *sys, uint32_t len, struct tbbt_onc_authsys *cred)
{
    size_t used;

    memset(cred, 0, sizeof(*cred));
    return walk_authsys(sys, len, &cred->uid, &cred->gid, &used, cred);
}

/* After xid and msg_type CALL: rpcvers, prog, vers, proc, cred, verf. */
static int parse_call(struct tbbt_buf *b, struct tbbt_onc_hdr *h)
{
    const uint8_t *cred, *verf;
    uint32_t cred_len, verf_len, verf_flavor;

    if (tbbt_buf_get_be32(b) != TBBT_ONC_RPCVERS)
        return TBBT_E_BADREC;
    h->prog = tbbt_buf_get_be32(b);
    h->vers = tbbt_buf_get_be32(b);
    h->proc = tbbt_buf_get_be32(b);
    if (!get_auth(b, &h->flavor, &cred, &cred_len) ||
        !get_auth(b, &verf_flavor, &verf, &verf_len))
        return TBBT_E_BADREC;
    if (h->flavor == TBBT_ONC_AUTH_SYS && !parse_authsys(cred, cred_len, h))
        h->flavor = UINT32_MAX;
    return 0;
}

/* After xid and msg_type REPLY: reply_stat and the accepted or rejected reply. */
static int parse_reply(struct tbbt_buf *b, struct tbbt_onc_hdr *h)
{
    const uint8_t *verf;
    uint32_t stat, verf_flavor, verf_len;

    stat = tbbt_buf_get_be32(b);
    if (b->trunc)
        return TBBT_E_BADREC;
    if (stat == ACCEPTED) {
        if (!get_auth(b, &verf_flavor, &verf, &verf_len))
            return TBBT_E_BADREC;
        stat = tbbt_buf_get_be32(b);      /* accept_stat */
        if (stat == ACC_PROG_MISMATCH) {
            h->low = tbbt_buf_get_be32(b);
            h->high = tbbt_buf_get_be32(b);
        }
        if (b->trunc || stat > ACC_SYSTEM_ERR)
            return TBBT_E_BADREC;
        h->rpc_stat = (uint8_t)stat;
        return 0;
    }
    if (stat != ACCEPTED + 1)
        return TBBT_E_BADREC;             /* neither MSG_ACCEPTED nor MSG_DENIED */
    stat = tbbt_buf_get_be32(b);          /* reject_stat */
    if (stat == REJ_RPC_MISMATCH) {
        h->low = tbbt_buf_get_be32(b);
        h->high = tbbt_buf_get_be32(b);
    } else if (stat == REJ_AUTH_ERROR) {
        h->auth_stat = tbbt_buf_get_be32(b);
    } else {
        return TBBT_E_BADREC;
    }
    if (b->trunc)
        return TBBT_E_BADREC;
    h->rpc_stat = (uint8_t)(TBBT_ONC_DENIED + stat);
    return 0;
}

/*
 * Keeps what a header cut by the snap length still says (RFC 5531 9: the fixed
 * words before the credentials).  Returns 0 or TBBT_E_TRUNC.
 */
static int parse_partial(const uint8_t *p, size_t len, struct tbbt_onc_hdr *h)
{
    struct tbbt_buf b;

    tbbt_buf_init(&b, p, len);
    tbbt_buf_skip(&b, 8);
    if (h->dir == TBBT_ONC_CALL) {
        if (tbbt_buf_get_be32(&b) != TBBT_ONC_RPCVERS)
            return TBBT_E_TRUNC;
        h->prog = tbbt_buf_get_be32(&b);
        h->vers = tbbt_buf_get_be32(&b);
        h->proc = tbbt_buf_get_be32(&b);
        h->flavor = UINT32_MAX;
    } else {
        /* Without the accept status we cannot know: assume the usual SUCCESS. */
        h->rpc_stat = tbbt_buf_get_be32(&b) == ACCEPTED ? TBBT_ONC_SUCCESS
                                                        : TBBT_ONC_DENIED + REJ_AUTH_ERROR;
    }
    if (b.trunc)
        return TBBT_E_TRUNC;
    h->partial = true;
    h->body_off = len;
    return 0;
}

int tbbt_onc_hdr_parse(const uint8_t *p, size_t len, bool trunc, struct tbbt_onc_hdr *h)
{
    struct tbbt_buf b;
    int rc;

    memset(h, 0, sizeof(*h));
    if (len < 8)
        return trunc ? TBBT_E_TRUNC : TBBT_E_BADREC;
    h->xid = tbbt_be32(p);
    h->dir = p[7] == 1 && !p[4] && !p[5] && !p[6] ? TBBT_ONC_REPLY : TBBT_ONC_CALL;
    if (p[4] || p[5] || p[6] || p[7] > 1)
        return TBBT_E_BADREC;
    /* The XDR routines this stands in for work on at most UINT32_MAX bytes. */
    tbbt_buf_init(&b, p + 8, (len > UINT32_MAX ? UINT32_MAX : len) - 8);
    rc = h->dir == TBBT_ONC_CALL ? parse_call(&b, h) : parse_reply(&b, h);
    if (rc == 0)
        h->body_off = (size_t)(b.p - p);
    /* A header that does not parse in a cut message gets the benefit of the doubt. */
    if (rc != 0 && trunc)
        rc = parse_partial(p, len, h);
    return rc;
}
