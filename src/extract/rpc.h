/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: the RPC message headers of captured messages, as the
 * onc module parses them (onc/onc.h, RFC 5531 section 9), under the names the
 * converter's files use, and the AUTH_SYS credential turned into the trace's
 * struct tbbt_cred.
 */
#ifndef TBBT_EXTRACT_RPC_H
#define TBBT_EXTRACT_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onc/onc.h"

struct tbbt_cred;

enum { TBBT__RPC_CALL = TBBT_ONC_CALL, TBBT__RPC_REPLY = TBBT_ONC_REPLY };

/*
 * The header is onc's struct tbbt_onc_hdr (its rpc_stat numbers are the trace's enum
 * tbbt_rpc_stat): the alias spares a copy per message on the converter's hot path.
 */
#define tbbt__rpc_hdr tbbt_onc_hdr

/* tbbt_onc_hdr_parse(): returns 0, TBBT_E_BADREC or TBBT_E_TRUNC; see onc/onc.h. */
static inline int tbbt__rpc_parse(const uint8_t *p, size_t len, bool trunc,
                                  struct tbbt__rpc_hdr *h)
{
    return tbbt_onc_hdr_parse(p, len, trunc, h);
}

/*
 * Decodes the AUTH_SYS bytes tbbt__rpc_parse() found (h->sys, h->sys_len)
 * into *cred (whole, zero-filled past the machine name and the gids).
 * False if they do not parse (never for what tbbt__rpc_parse() returned).
 */
bool tbbt__rpc_authsys(const uint8_t *sys, uint32_t len, struct tbbt_cred *cred);

#endif
