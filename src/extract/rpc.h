/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: ONC RPC message headers (RFC 5531 section 9)
 * decoded with libtirpc's own XDR routines (xdr_callmsg, xdr_replymsg,
 * xdr_authunix_parms) over the captured bytes, without heap allocation.
 */
#ifndef TBBT_EXTRACT_RPC_H
#define TBBT_EXTRACT_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tbbt_cred;

enum { TBBT__RPC_CALL = 0, TBBT__RPC_REPLY = 1 };

struct tbbt__rpc_hdr {
    uint32_t xid;
    int dir;            /* TBBT__RPC_CALL or TBBT__RPC_REPLY */
    /* call */
    uint32_t prog, vers, proc;
    uint32_t flavor;    /* credential flavor (AUTH_NONE 0, AUTH_SYS 1, ...) */
    uint32_t uid, gid;  /* AUTH_SYS only */
    const uint8_t *sys; /* AUTH_SYS only: the credential body after its stamp, machine name
                         * through the last gid (borrowed from the message), or NULL */
    uint32_t sys_len;
    /* reply */
    uint8_t rpc_stat;   /* enum tbbt_rpc_stat */
    size_t body_off;    /* offset of arguments/results in the message */
    bool partial;       /* the snap length cut the header: fields after proc (call) or
                         * after the reply status (reply) are unknown; body_off = len */
};

/*
 * Parses the RPC header at p[0..len).  Returns 0 on success, TBBT_E_BADREC if
 * it is not an RPC message, or TBBT_E_TRUNC instead when `trunc` (the message
 * was cut short by the snap length) and not even the fixed part of the header
 * (a call's xid..proc, a reply's xid and reply_stat) was captured.  A cut
 * header whose fixed part is there is returned with `partial` set.
 * A call with an unusable AUTH_SYS body is still returned (uid/gid 0) but
 * flavor is set to UINT32_MAX.
 */
int tbbt__rpc_parse(const uint8_t *p, size_t len, bool trunc, struct tbbt__rpc_hdr *h);

/*
 * Decodes the AUTH_SYS bytes tbbt__rpc_parse() found (h->sys, h->sys_len)
 * into *cred (whole, zero-filled past the machine name and the gids).
 * False if they do not parse (never for what tbbt__rpc_parse() returned).
 */
bool tbbt__rpc_authsys(const uint8_t *sys, uint32_t len, struct tbbt_cred *cred);

#endif
