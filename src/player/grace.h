/* SPDX-License-Identifier: MIT */
/*
 * grace: asks whether an NFS server is in its grace period before a replay starts.
 *
 * After a restart a server gives the clients that held state time to reclaim it (the
 * grace period, RFC 7530 9.6.2 for NFSv4; NFS-Ganesha applies it to NFSv3 too): calls
 * that change state are answered NFS3ERR_JUKEBOX ("try again later", RFC 1813 2.6)
 * until it ends.  A replay that started then would measure the wait, not the server.
 * NFSv3 has no call that asks; the probe is a SETATTR of the image root that sets its
 * mode to the mode it has (GETATTR first): nothing changes but the root's ctime, and a
 * server in grace answers JUKEBOX.
 *
 * Not thread-safe: the connection is used exclusively for the call.
 */
#ifndef TBBT_PLAYER_GRACE_H
#define TBBT_PLAYER_GRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "onc/rpcconn.h"

/* What one probe found. */
enum tbbt_grace_state {
    TBBT_GRACE_NO = 0,      /* the SETATTR went through: not in grace */
    TBBT_GRACE_YES = 1,     /* the server answered NFS3ERR_JUKEBOX */
    TBBT_GRACE_UNKNOWN = 2, /* another answer (PERM under root squash, NFSv2, ...) */
};

/*
 * Probes the server behind c (an NFS connection, used exclusively during the call) with
 * the object root (borrowed): GETATTR, then SETATTR of its own mode.  vers is the NFS
 * version (2: always UNKNOWN, no call is sent).  Waits at most timeout_ms per call.
 * Returns 0 with *state set, or a negative error with a one-line reason in err (no
 * reply, connection lost).
 */
int tbbt_grace_probe(struct tbbt_rpcconn *c, uint32_t vers, const struct tbbt_rpcconn_fh *root,
                     int timeout_ms, enum tbbt_grace_state *state, char *err, size_t errlen);

/* The state's name in the report ("no", "yes", "unknown"). */
const char *tbbt_grace_state_name(enum tbbt_grace_state st);

#endif
