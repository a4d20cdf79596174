/* SPDX-License-Identifier: MIT */
/*
 * engine4: tbbt-play's replay of NFSv4 traces (docs/nfsv4.md).  The trace's COMPOUND
 * records go to the server over one TCP connection per traced client endpoint, rebuilt
 * with live state by the replay core (nfs4build.h: client ids, sessions and slots,
 * stateids, 4.0 owner seqids, handles) and answered asynchronously: one thread, an
 * epoll loop over the connections, a lookahead window of records (memory bounded by the
 * window, not by the trace).
 *
 * Ordering.  Every record is admitted with the keys it reads and writes: the handles it
 * puts and gets, the (directory, name) entries it looks up, opens, makes or removes,
 * the stateids it uses or changes, the 4.0 owners whose seqids it moves, its client
 * and session (lifecycle operations write them, every other COMPOUND of the client
 * reads them); an operation on an object the record cannot name (after LOOKUPP, say)
 * makes it a barrier.  A record depends on the live earlier holders its keys conflict
 * with (a write with any, a read with a write).  FSDEP sends a record once its
 * dependencies have completed, lowest sequence first; CONSERVATIVE sends in trace order,
 * each once its dependencies have completed and no record in flight has a traced reply
 * at or before its traced call (TBBT paper 3.4.1).  Timing: FULL speed, or TIMESTAMP
 * (call times divided by speed).
 *
 * State.  NFS4ERR_DELAY and NFS4ERR_GRACE are retried with back-off (20 ms doubling, at
 * most 1 s, 128 tries); BADSESSION and DEADSESSION make the session again and resend; a
 * record whose session has no free slot waits for a reply of that session; every
 * client's lease is renewed (RENEW, or a lone SEQUENCE) when its connection has sent
 * nothing for renew_ms, so idle gaps in timestamp timing and long waits keep it.
 * Every other status that differs from the trace is a replay failure, counted by
 * operation ("v4.open:NFS4_OK->NFS4ERR_BAD_SEQID").  A record that cannot be rebuilt
 * (unsendable, with the reason on stderr with verbose) is skipped.
 *
 * The image: each traced export (the pseudo path a client walks from PUTROOTFH) is
 * replayed in the image directory that stands for it (tbbt_nfs4_export_add()).
 *
 * Mixed traces: with handles, NFSv2/v3 records go too, on their own connections, built
 * by nfsreq.h on the image's handles (a create binds the handle it made), ordered with
 * the COMPOUNDs in one key space: both name objects by the trace's handle references.
 * MOUNT and NULL records are skipped (not_nfs): the start-up made the mounts.
 */
#ifndef TBBT_PLAYER_ENGINE4_H
#define TBBT_PLAYER_ENGINE4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "player/handles.h"
#include "player/nfs4state.h"
#include "player/report.h"

/* A traced export: its pseudo path's components (NULL-terminated; NULL: any one
 * component) and the live directory of the image that stands for it
 * (tbbt_nfs4_export_add()). */
struct tbbt_engine4_export {
    char **comps;
    char **live_comps;          /* the pseudo path the live directory was looked up by */
    struct tbbt_nfs4_fh live;
};

struct tbbt_engine4_opts {
    const char *trace_path;
    const char *server;
    uint16_t port;
    bool fsdep;                 /* else conservative */
    bool timestamp;             /* else full speed */
    double speed;               /* timestamp: > 0 */
    unsigned window;            /* records held at once, >= 1 */
    unsigned max_outstanding;   /* records in flight at most (0: no limit) */
    unsigned timeout_ms;        /* a call without a reply this long: unknown outcome */
    unsigned renew_ms;          /* lease renewal of an idle client */
    unsigned jukebox_wait_ms;   /* NFSv3 records: how long JUKEBOX answers are waited out */
    const char *client_tag;     /* in front of every client id string (NULL: as traced;
                                   tbbt_nfs4_client_tag_set()) */
    bool fixed_creds;           /* every call with uid/gid instead of the traced credential */
    bool reserved_ports;        /* bind each connection to a port below 1024 */
    uint32_t uid, gid;
    const struct tbbt_engine4_export *exports;  /* the traced exports in the image */
    unsigned nexports;
    struct tbbt_handles *handles;   /* NFSv2/v3 records (a mixed trace): the image's
                                       handles by TBBT-ID, bound as creates answer;
                                       NULL: they are skipped as not_nfs */
    int stop_fd;                /* readable: stop (-1: none) */
    bool verbose;               /* each failure and unsendable record on stderr */
};

/*
 * Replays the trace.  0 with *rep (given: tbbt_report_free()) and *cn filled (strings
 * static), or a negative errno with a one-line reason in err (*rep may still be set:
 * what was done), -EINTR when stop_fd stopped it.
 */
int tbbt_engine4_run(const struct tbbt_engine4_opts *o, struct tbbt_report **rep,
                     struct tbbt_report_counts *cn, char *err, size_t errlen);

/*
 * Start-up: the live handle of the pseudo-file-system path comps (NULL-terminated; may
 * be empty: the pseudo root) on server:port, by one NFSv4.0 COMPOUND (PUTROOTFH, LOOKUP
 * each, GETFH).  0, or -1 with the reason in err.
 */
int tbbt_engine4_lookup(const char *server, uint16_t port, char *const *comps,
                        struct tbbt_nfs4_fh *out, char *err, size_t errlen);

#endif
