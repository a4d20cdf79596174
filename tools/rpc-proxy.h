/* SPDX-License-Identifier: MIT */
/*
 * rpc-proxy's shared state (tools/rpc-proxy.c: the proxy; tools/rpc-proxy-setup.c: its
 * options, start-up and main()).  Nothing here is used outside the tool.  Ownership: a
 * struct proxy owns its pairs, held replies and descriptors; a pair owns its buffers
 * and remembered calls; struct cfg owns its strings (freed by cfg_fini()).
 */
#ifndef TBBT_TOOLS_RPC_PROXY_H
#define TBBT_TOOLS_RPC_PROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <glib.h>

#include "onc/onc.h"

#define PROG "rpc-proxy"
#define NS_PER_MS ((uint64_t)1000000)
#define NS_PER_S ((uint64_t)1000000000)
#define MAX_DELAY_MS 3600000
#define NFS_PROGRAM 100003

struct cfg {
    /* As parsed; owned, freed by cfg_fini(). */
    char *listen, *server, *log_path, *port_file, *pid_file;
    char **delays, **drop_procs;
    gboolean udp, version, verbose;
    gint delay_prog, drop_n, drop_first, reset_after, reset_every;
    gint64 seed;
    /* Derived. */
    GHashTable *delay_ms;       /* proc -> ms, for calls of delay_prog */
    int delay_all_ms;           /* 'all': every reply; -1 when not given */
    int max_delay_ms;
    GHashTable *drop_set;       /* procs whose replies count for --drop-replies; NULL: all */
    struct sockaddr_storage listen_sa, server_sa;
    socklen_t listen_len, server_len;
};

/* What the proxy knows of one message: the XID, and for a call (or a reply matched to
 * its call) the program, version and procedure. */
struct rpcinfo {
    uint32_t xid, prog, vers, proc;
    bool has_xid, has_call;
};

struct callinfo {
    struct tbbt_onc_xident x;   /* first: the XID table's link */
    uint32_t prog, vers, proc;
};

/* A byte buffer: valid bytes are data[start, end). */
struct bbuf {
    uint8_t *data;
    size_t start, end, cap;
};

struct side {
    int fd;                     /* -1 when closed; UDP: cli.fd is unused (-1) */
    struct bbuf in, out;
    struct tbbt_onc_recscan rm; /* record-marking scan of in (RFC 5531 section 11) */
};

/* One client and its server connection (TCP), or one client address (UDP). */
struct pair {
    unsigned id;
    struct side cli, srv;
    bool connecting;            /* non-blocking connect to the server in progress */
    bool closing;               /* server closed: delivering what is left to the client */
    bool reset_pending;         /* reset once the triggering call reached the server */
    bool dead;                  /* closed; freed by reap() at the end of the loop pass */
    const char *close_reason;
    uint64_t deadline;          /* closing: give up at this time */
    uint64_t last_ns;           /* UDP: last datagram either way */
    struct rpcinfo reset_ri;    /* the call that triggered reset_pending */
    struct tbbt_onc_xidtab xids; /* struct callinfo by XID: calls without a reply yet */
    size_t held_bytes;
    unsigned held_n;
    struct sockaddr_storage peer;
    socklen_t peer_len;
};

/* A reply held by --delay, waiting in proxy.held until due. */
struct held {
    uint64_t due, since;
    unsigned pair;
    struct rpcinfo ri;
    size_t len;
    uint8_t data[];
};

struct stats {
    uint64_t calls, replies, delayed, dropped, resets, conns, malformed, lost;
};

enum { SLOT_SIGNAL, SLOT_LISTEN, SLOT_CLIENT, SLOT_SERVER };

struct slot {
    struct pair *p;
    int kind;
};

struct proxy {
    const struct cfg *cfg;
    int lfd, sigfd;
    FILE *log;
    GHashTable *pairs;          /* id -> struct pair (owned), dead ones until reaped */
    GHashTable *udp_peers;      /* peer address (GBytes) -> struct pair (borrowed) */
    GPtrArray *dead;            /* pairs closed during this loop pass */
    GQueue held;                /* struct held (owned), due time ascending */
    GArray *fds, *slots;        /* this pass's pollfds and what each one is */
    unsigned next_id;
    uint64_t drop_counter, first_dropped, accept_pause_until;
    bool reset_done, stop, need_tick, pid_written;
    struct stats st;
    uint8_t dgram[65536];
};

/* rpc-proxy.c: the event loop until SIGTERM/SIGINT; returns an exit code. */
int proxy_run(struct proxy *px);
/* rpc-proxy.c: closes every pair and descriptor, removes the pid file, closes the log. */
void proxy_fini(struct proxy *px);
/* rpc-proxy.c: "ADDR:PORT" (IPv6 "[ADDR]:PORT") of sa into out[0..n). */
void proxy_addr_str(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t n);

#endif
