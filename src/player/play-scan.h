/* SPDX-License-Identifier: MIT */
/*
 * play-scan: tbbt-play's one pass over the trace before the replay, record headers only
 * (every optional field skipped).  It learns the trace's NFS version (that of its first
 * NFS record, 3 if none), with --causal-slack auto the slack (twice the 1st percentile
 * of the traced clients' reactions to their own replies), for --connections client the
 * connection of each trace endpoint (the traced client connections, client address,
 * port and transport, of its NFS records, numbered in order of first use; beyond
 * TBBT_ENGINE_MAX_CONNS they share round robin), and for --distribute clients how many
 * client addresses the trace has and how many records each client (address, or address
 * and port) sends; and whether it has NFSv2/v3 records and NFSv4 ones (engine4.h).  Not
 * the replay's reader (engine-read.c).
 */
#ifndef TBBT_PLAYER_PLAY_SCAN_H
#define TBBT_PLAYER_PLAY_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

struct tbbt_play_scan {
    /* what to learn */
    bool stop_at_version;       /* no connection map (--connections N): the version, the
                                   NFSv4 records and what the two below want */
    bool want_slack;            /* causal_slack_ns */
    bool want_addrs;            /* naddrs */
    /* what it learnt */
    uint32_t vers;              /* 2 or 3 */
    bool has_v23;               /* the trace has an NFSv2 or NFSv3 record */
    uint64_t nv4;               /* NFSv4 records */
    uint64_t causal_slack_ns;   /* 0 unless want_slack */
    unsigned nclients;          /* traced client connections (0 with stop_at_version) */
    unsigned naddrs;            /* traced client addresses (0 unless want_addrs) */
    GHashTable *addr_load;      /* want_addrs: client address -> its records (every
                                   program's), as GSIZE_TO_POINTER (given: destroy) */
    GHashTable *conn_load;      /* ... "address:port" (a client connection) -> records */
    uint16_t *conn_map;         /* trace endpoint -> connection (given: g_free()); no
                                   entries with stop_at_version */
    uint32_t conn_map_len;
};

/* One pass over the trace at path.  0, or -1 with a one-line reason in err. */
int tbbt_play_scan(const char *path, struct tbbt_play_scan *sc, char *err, size_t errlen);

#endif
