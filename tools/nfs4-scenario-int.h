/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario: what its files share (the tool itself: nfs4-scenario.c's comment).
 *
 *   nfs4-scenario.c          the command line, the clients' round-robin run, the counts
 *   nfs4-scenario-conn.c     TCP clients with AUTH_SYS, COMPOUND building, the call and
 *                            the check of every operation's status, attribute encoding
 *   nfs4-scenario-ops.c      one helper per operation that appends it to a COMPOUND
 *   nfs4-scenario-state.c    client ids and sessions: SETCLIENTID(_CONFIRM), RENEW,
 *                            EXCHANGE_ID, CREATE_SESSION, SEQUENCE slots, RECLAIM_COMPLETE,
 *                            DESTROY_SESSION, DESTROY_CLIENTID
 *   nfs4-scenario-script.c   the scripted scenario, as steps each client runs in turn:
 *                            state, OPEN, WRITE, READ, locks, SETATTR, CLOSE
 *   nfs4-scenario-tree.c     its steps on names: the working directory, CREATE,
 *                            LOOKUP(P), RENAME, LINK, READLINK, READDIR, REMOVE
 *
 * RFC 7530 (NFSv4.0), RFC 8881 (NFSv4.1), RFC 7862 (NFSv4.2); XDR from src/proto/nfs4.x.
 * One call at a time, on one thread: nothing here is thread-safe.  Every failed call or
 * unexpected status ends the process (n4_die(), tool-die.h: exit code 1).  A test helper,
 * built in the build tree and never installed.
 */
#ifndef TBBT_TOOLS_NFS4_SCENARIO_INT_H
#define TBBT_TOOLS_NFS4_SCENARIO_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "proto/nfs4.h"
#include "proto/proto.h"
#include "util/exit-codes.h"
#include "tool-die.h"

#define PROG "nfs4-scenario"
#define N4_MAXOPS 12            /* operations in one of our COMPOUNDs */
#define N4_NOPS (OP_CLONE + 1)  /* operation numbers counted: 0 .. OP_CLONE */
#define N4_CHUNK 1024           /* READ/WRITE size: keeps the captures small */
#define N4_FHMAX NFS4_FHSIZE

/* Prints "nfs4-scenario: " and the message to stderr and exits with TBBT_EXIT_FAIL. */
#define n4_die(...) tool_die(PROG, __VA_ARGS__)

struct config {
    char *server;
    int port;
    int minor;
    int clients;
    int rounds;                 /* --rounds: runs of the steps between first and last */
    char *path;
    gint64 seed;
    bool serial;
    bool verbose;
};

/* A file handle (copied out of a reply). */
struct n4fh {
    u_int len;
    char data[N4_FHMAX];
};

/* An open file: its handle, its open stateid, and its lock stateid once locked. */
struct n4file {
    struct n4fh fh;
    stateid4 open;
    stateid4 lock;
    bool locked;
};

/* One client: a TCP connection, its credentials and its NFSv4 state. */
struct client {
    int index;
    int minor;
    bool verbose;
    CLIENT *clnt;
    uint32_t uid, gid;
    char name[64];              /* client owner string (SETCLIENTID, EXCHANGE_ID) */
    char host[16];              /* AUTH_SYS machine name (short, like a host name) */
    verifier4 verf;
    clientid4 clientid;
    /* 4.1+: the session and its one slot (slot 0). */
    sessionid4 session;
    sequenceid4 slot_seq;
    sequenceid4 cs_seq;         /* CREATE_SESSION's sequence id (from EXCHANGE_ID) */
    uint32_t seq_flags;         /* the last SEQUENCE reply's sr_status_flags */
    /* 4.0: seqids of the open owner and of the lock owner (RFC 7530 9.1.7). */
    seqid4 oo_seqid;
    seqid4 lo_seqid;
    char oowner[32], lowner[32], towner[32];
    /* The tree under the working path. */
    struct n4fh base, dir, sub1, sub2, link;  /* --path, client<N>, in it */
    struct n4file f1, f2, f3, f4;
    uint64_t ops[N4_NOPS];      /* operations sent, by number */
    uint64_t compounds;
};

/* A COMPOUND being built, sent and checked; everything it allocates is in mem. */
struct c4 {
    struct client *cl;
    const char *what;
    COMPOUND4args args;
    nfs_argop4 ops[N4_MAXOPS];
    nfsstat4 want[N4_MAXOPS];
    COMPOUND4res res;
    bool have_res;
    GPtrArray *mem;
};

/* ---- nfs4-scenario-conn.c */

/* Connects client CL (index, uid, gid, host set) to the server over TCP with AUTH_SYS. */
void n4_connect(struct client *cl, const struct config *cfg);
void n4_disconnect(struct client *cl);

/* Starts a COMPOUND of CL named WHAT (static string, for messages); with a session,
 * SEQUENCE comes first.  End it with n4_c4_run() and n4_c4_done(). */
void n4_c4_init(struct c4 *c, struct client *cl, const char *what);
/* Starts a COMPOUND without SEQUENCE (4.0 calls, and the 4.1 calls that may stand alone). */
void n4_c4_init_bare(struct c4 *c, struct client *cl, const char *what);
/* Appends an operation of number OP; returns its argument union to fill in. */
nfs_argop4 *n4_c4_add(struct c4 *c, nfs_opnum4 op);
/* The last operation added must fail with status WANT (the server stops there). */
void n4_c4_expect(struct c4 *c, nfsstat4 want);
/* Memory that lives until n4_c4_done(): a copy of N bytes of P, or N zero bytes. */
void *n4_c4_keep(struct c4 *c, const void *p, size_t n);
/* Sends the COMPOUND and checks every status (dies on any difference); counts the
 * operations; advances the slot's sequence id after a SEQUENCE that succeeded. */
void n4_c4_run(struct c4 *c);
/* The result of operation I (0-based, counting SEQUENCE), after n4_c4_run(). */
nfs_resop4 *n4_c4_res(struct c4 *c, u_int i);
/* Frees the results and everything kept. */
void n4_c4_done(struct c4 *c);

/* Names a status (NFS4ERR_NOENT); BUF holds the number if unknown. */
const char *n4_status_name(nfsstat4 st, char *buf, size_t size);

/* Fills BUF with a pattern that depends on the file offset, so reads can be checked. */
void n4_pattern(char *buf, uint64_t off, uint32_t len);

/* Attributes the scenario sets and reads (RFC 7530 5.8). */
struct n4attr {
    uint32_t mask[2];           /* FATTR4_* bits of the attributes present */
    uint32_t type;
    uint64_t change, size, fileid;
    uint32_t mode;
    char owner[64], group[64];
};
/* Encodes A's size and mode (those whose bits are in A->mask) into a fattr4 kept by C. */
void n4_attr_encode(struct c4 *c, const struct n4attr *a, fattr4 *out);
/* Decodes type, change, size, fileid, mode, owner, owner_group from F into A; returns
 * false if F is malformed or holds other attributes. */
bool n4_attr_decode(const fattr4 *f, struct n4attr *a);
/* A bitmap4 kept by C asking for the attributes the scenario reads. */
void n4_attr_request(struct c4 *c, bitmap4 *out);

/* ---- nfs4-scenario-ops.c: each appends one operation to C; names and data are copied. */
void n4_putrootfh(struct c4 *c);
void n4_putfh(struct c4 *c, const struct n4fh *fh);
void n4_getfh(struct c4 *c);
void n4_getattr(struct c4 *c);
void n4_lookup(struct c4 *c, const char *name);
void n4_lookupp(struct c4 *c);
void n4_access(struct c4 *c, uint32_t bits);
void n4_savefh(struct c4 *c);
void n4_restorefh(struct c4 *c);
void n4_create(struct c4 *c, nfs_ftype4 type, const char *name, const char *target);
void n4_remove(struct c4 *c, const char *name);
void n4_rename(struct c4 *c, const char *from, const char *to);
void n4_link(struct c4 *c, const char *name);
void n4_readlink(struct c4 *c);
void n4_readdir(struct c4 *c, nfs_cookie4 cookie, const verifier4 verf, count4 dircount,
                count4 maxcount);
void n4_open_create(struct c4 *c, const char *name, createmode4 how);
void n4_open_nocreate(struct c4 *c, const char *name, uint32_t access);
void n4_open_fh(struct c4 *c, uint32_t access);
void n4_open_confirm(struct c4 *c, const stateid4 *sid);
void n4_close(struct c4 *c, const stateid4 *sid);
void n4_write(struct c4 *c, const stateid4 *sid, uint64_t off, uint32_t len, stable_how4 how);
void n4_read(struct c4 *c, const stateid4 *sid, uint64_t off, uint32_t len);
void n4_commit(struct c4 *c);
void n4_setattr(struct c4 *c, const stateid4 *sid, const struct n4attr *a);
void n4_verify(struct c4 *c, bool negate, const struct n4attr *a);
void n4_lock_new(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len,
                 const stateid4 *open);
void n4_lock_existing(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len,
                      const stateid4 *lock);
void n4_lockt(struct c4 *c, nfs_lock_type4 type, uint64_t off, uint64_t len);
void n4_locku(struct c4 *c, uint64_t off, uint64_t len, const stateid4 *lock);
void n4_secinfo_no_name(struct c4 *c);

/* Copies the handle of a GETFH result (operation I of C) into FH. */
void n4_res_fh(struct c4 *c, u_int i, struct n4fh *fh);
/* Decodes the attributes of a GETATTR result (operation I of C) into A. */
void n4_res_attr(struct c4 *c, u_int i, struct n4attr *a);

/* ---- nfs4-scenario-state.c */

/* 4.0: SETCLIENTID + SETCLIENTID_CONFIRM; 4.1+: EXCHANGE_ID, CREATE_SESSION (no
 * back channel), RECLAIM_COMPLETE. */
void n4_state_begin(struct client *cl);
/* 4.0: RENEW; 4.1+: a SEQUENCE alone (the lease is renewed by every SEQUENCE). */
void n4_state_renew(struct client *cl);
/* 4.1+: DESTROY_SESSION + DESTROY_CLIENTID; 4.0: nothing (the lease expires). */
void n4_state_end(struct client *cl);
/* 4.0: the open owner's seqid after an operation that used it; 4.1+: no-op. */
void n4_state_oo_bump(struct client *cl);
void n4_state_lo_bump(struct client *cl);

/* ---- nfs4-scenario-script.c: the scenario as steps; client i runs step s before any
 * client runs step s + 1 (unless --serial).  Returns the number of steps. */
typedef void (*n4_step_fn)(struct client *cl, const struct config *cfg);
size_t n4_script_steps(const n4_step_fn **steps);
/* Dies unless A's size is WANT. */
void n4s_check_size(struct client *cl, const struct n4attr *a, uint64_t want, const char *what);

/* ---- nfs4-scenario-tree.c: the steps on names. */
void n4s_st_dir(struct client *cl, const struct config *cfg);
void n4s_st_names(struct client *cl, const struct config *cfg);
void n4s_st_rename_link(struct client *cl, const struct config *cfg);
void n4s_st_readdir(struct client *cl, const struct config *cfg);
void n4s_st_remove(struct client *cl, const struct config *cfg);

#endif
