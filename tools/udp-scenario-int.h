/* SPDX-License-Identifier: MIT */
/*
 * udp-scenario: what its files share (the tool itself: udp-scenario.c's comment).
 *
 *   udp-scenario.c        the command line, MOUNT (v3, or v1 with --v2), the run, the counts
 *   udp-scenario-conn.c   UDP clients, the check of each call and status, the data pattern
 *   udp-scenario-v3.c     the NFSv3 calls, the scripted scenario, --ops random file calls
 *   udp-scenario-v2.c     the NFSv2 scenario and its calls (--v2)
 *
 * One call at a time, on one thread: nothing here is thread-safe.  Every failed call or
 * unexpected reply ends the process (us_die(), tool-die.h: exit code 1).  A test helper, built in
 * the build tree and never installed.
 */
#ifndef TBBT_TOOLS_UDP_SCENARIO_INT_H
#define TBBT_TOOLS_UDP_SCENARIO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "util/exit-codes.h"
#include "tool-die.h"

#define PROG "udp-scenario"
#define NPROC 22               /* procedure numbers 0..21 (NFSv2 uses 0..17) */
#define CHUNK 8192             /* READ/WRITE size: the classic UDP transfer size */

struct config {
    char *server;
    char *path;
    int nfs_port;            /* 0: ask rpcbind */
    int mount_port;
    gint64 ops;
    gint64 seed;
    bool v2;
    bool verbose;
};

/* One UDP client handle with per-procedure call counts. */
struct conn {
    CLIENT *clnt;
    const char *what;
    uint64_t calls[NPROC];
};

/* A file handle of either version (v2 handles are always NFS2_FHSIZE bytes). */
struct fh {
    u_int len;
    char data[NFS3_FHSIZE];
};

/* The tree of the scenario (both versions). */
struct tree {
    struct fh root, top, a, b, f1, f2, f3, sym;
    char topname[64];
};

/* ---- udp-scenario-conn.c */

/* Prints "udp-scenario: " and the message to stderr and exits with TBBT_EXIT_FAIL. */
#define us_die(...) tool_die(PROG, __VA_ARGS__)

/* Opens c: a UDP client of PROG/VERS at PORT (0: ask the portmapper) with AUTH_SYS. */
void us_conn_open(struct conn *c, const struct config *cfg, rpcprog_t prog, rpcvers_t vers,
                  int port);
void us_conn_close(struct conn *c);

/* Dies unless the RPC itself succeeded; counts the call. */
void us_rpc_ok(struct conn *c, int proc, enum clnt_stat st, const char *what);

/* Names a status of protocol PROG (TBBT_PROTO_*); BUF holds the number if unknown. */
const char *us_status_name(int prog, int st, char *buf, size_t size);

/* Checks an NFS status against the expected one (both versions). */
void us_want_status(bool v2, int got, int want, const char *what);

/* Fills BUF with a pattern that depends on the file offset, so reads can be checked. */
void us_pattern(char *buf, uint64_t off, uint32_t len);

/* ---- udp-scenario-v3.c, udp-scenario-v2.c: the scenario under t->root (t->topname set
 * by the caller); v3 then runs cfg->ops random calls. */
void us_v3_run(struct conn *c, struct tree *t, const struct config *cfg);
void us_v2_run(struct conn *c, struct tree *t);

#endif
