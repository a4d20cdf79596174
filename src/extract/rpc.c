/* SPDX-License-Identifier: MIT */
/*
 * AUTH_SYS credentials of captured calls (RFC 5531 appendix A) as the trace stores
 * them: onc's decoding (onc/hdr.c) copied into struct tbbt_cred.  The RPC header
 * parser itself is onc's; see rpc.h.
 */
#include "extract/rpc.h"

#include <string.h>

#include "trace/trace.h"

_Static_assert(TBBT_ONC_MACHINE_MAX == TBBT_MACHINE_MAX, "AUTH_SYS machine name bound");
_Static_assert(TBBT_ONC_GIDS_MAX == TBBT_CRED_GIDS_MAX, "AUTH_SYS gids bound");
_Static_assert((int)TBBT_ONC_DENIED == (int)TBBT_RPC_DENIED_MISMATCH &&
               (int)TBBT_ONC_DENIED + 1 == (int)TBBT_RPC_DENIED_AUTH &&
               (int)TBBT_ONC_SYSTEM_ERR == (int)TBBT_RPC_SYSTEM_ERR,
               "onc's reply outcomes are the trace's rpc_stat");

bool tbbt__rpc_authsys(const uint8_t *sys, uint32_t len, struct tbbt_cred *cred)
{
    struct tbbt_onc_authsys a;

    memset(cred, 0, sizeof(*cred));
    if (!tbbt_onc_authsys(sys, len, &a))
        return false;
    cred->uid = a.uid;
    cred->gid = a.gid;
    cred->ngids = a.ngids;
    memcpy(cred->gids, a.gids, sizeof(cred->gids));
    cred->machine_len = a.machine_len;
    memcpy(cred->machine, a.machine, a.machine_len);
    return true;
}
