/* SPDX-License-Identifier: MIT */
/*
 * creds: the traced AUTH_SYS credentials of tbbt-play's calls, each encoded once
 * (RFC 5531 9.2, tbbt_rpcconn_encode_authsys()) with the run's stamp, kept by trace
 * credential reference.  Both engines (engine-read.c, engine4.c) send a record with the
 * credential its `cred` field names.  One thread makes entries; an entry never changes
 * once made, so others may read it through the pointer they were given.
 */
#ifndef TBBT_PLAYER_CREDS_H
#define TBBT_PLAYER_CREDS_H

#include <stdint.h>

#include <glib.h>

#include "onc/rpcconn.h"
#include "trace/trace.h"

/* A traced AUTH_SYS credential body, encoded. */
struct tbbt_play_cred {
    uint32_t len;
    uint8_t body[TBBT_RPCCONN_AUTH_MAX];
};

struct tbbt_play_creds {
    GPtrArray *enc;             /* struct tbbt_play_cred * by credential reference */
    uint32_t stamp;             /* AUTH_SYS stamp of every credential */
};

void tbbt_play_creds_init(struct tbbt_play_creds *c);
void tbbt_play_creds_fini(struct tbbt_play_creds *c);
/* The encoded credential of rec's `cred` in table t (made on first use), or NULL when
 * rec has none or t lacks it. */
const struct tbbt_play_cred *tbbt_play_cred_of(struct tbbt_play_creds *c,
                                               const struct tbbt_credtab *t,
                                               const struct tbbt_trace_rec *rec);

#endif
