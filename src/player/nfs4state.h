/* SPDX-License-Identifier: MIT */
/*
 * The live state of NFSv4 replay: what each traced client holds on the live server,
 * and the maps from the traced values (trace format 1.2, struct tbbt_op4) to the live
 * ones.  RFC 7530 (NFSv4.0: client ids 9.1.1, owner seqids 9.1.7, stateids 9.1.3),
 * RFC 8881 (NFSv4.1: EXCHANGE_ID 18.35, sessions and slots 2.10.6), RFC 7862 (4.2).
 *
 *   clients   traced clientid -> live clientid, SETCLIENTID confirm verifier (4.0),
 *             CREATE_SESSION sequence id (4.1+), RECLAIM_COMPLETE done
 *   sessions  traced session id -> live session id and its slot table (one sequence
 *             id and one busy flag per slot; the slot count is the live server's fore
 *             channel ca_maxrequests)
 *   owners    (traced clientid, owner bytes) -> the 4.0 seqid the live server expects
 *             next, next to the one the traced client used next, so a traced seqid is
 *             sent shifted by what the live server's seqid moved differently
 *   stateids  traced `other` (12 bytes) -> the live stateid, with the traced seqid it
 *             stood for when learned (the live seqid is shifted the same way)
 *   handles   traced handle reference -> live handle bytes (from GETFH results)
 *
 * Owner bytes are sent as traced, without a prefix: the live server scopes open and
 * lock owners by the live clientid, and every traced client id gets its own live one.
 * This module does no I/O; nfs4build.h builds COMPOUNDs with it and absorbs replies.
 * Nothing here is thread-safe: one replay thread owns a state.
 */
#ifndef TBBT_PLAYER_NFS4STATE_H
#define TBBT_PLAYER_NFS4STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "proto/nfs4.h"
#include "trace/trace.h"

#define TBBT_NFS4_SLOTS_MAX 64          /* slots of a session we use at most */

/* A live file handle (bytes copied out of a reply). */
struct tbbt_nfs4_fh {
    uint32_t len;
    uint8_t data[NFS4_FHSIZE];
};

/* One traced client id and what it is on the live server. */
struct tbbt_nfs4_client {
    uint64_t traced;            /* the traced clientid (key) */
    uint64_t live;              /* the live clientid */
    uint32_t minor;
    uint8_t confirm[NFS4_VERIFIER_SIZE];   /* 4.0: live SETCLIENTID confirm verifier */
    uint64_t traced_confirm;    /* 4.0: the traced one (the trace's res_verf) */
    uint32_t cs_seq;            /* 4.1+: next live CREATE_SESSION sequence id */
    bool reclaim_complete;      /* 4.1+: RECLAIM_COMPLETE answered OK */
};

/* One traced session and its live session with the slot table. */
struct tbbt_nfs4_session {
    uint8_t traced[NFS4_SESSIONID_SIZE];   /* key */
    uint8_t live[NFS4_SESSIONID_SIZE];
    uint64_t traced_clientid;
    uint32_t nslots;
    uint32_t seq[TBBT_NFS4_SLOTS_MAX];     /* the sequence id the slot's next call sends */
    bool busy[TBBT_NFS4_SLOTS_MAX];
};

/* A 4.0 open or lock owner: the next seqid, live and traced (RFC 7530 9.1.7). */
struct tbbt_nfs4_owner {
    uint32_t live_next, traced_next;
};

/* A traced stateid's live counterpart. */
struct tbbt_nfs4_sid {
    uint8_t other[NFS4_OTHER_SIZE];    /* the traced stateid's other (key) */
    uint32_t traced_seqid;      /* the traced seqid live.seqid stands for */
    stateid4 live;
    struct tbbt_nfs4_owner *owner;     /* borrowed from the state; NULL if none */
};

struct tbbt_nfs4_state;

/* Given: free with tbbt_nfs4_state_free() (NULL is a no-op). */
struct tbbt_nfs4_state *tbbt_nfs4_state_new(void);
void tbbt_nfs4_state_free(struct tbbt_nfs4_state *st);

/* ---- the replay's own client id strings ---- */
/*
 * Client id strings (SETCLIENTID's id, EXCHANGE_ID's co_ownerid) are sent with tag in
 * front (copied; NULL or "": as traced), so that a server that served an earlier replay
 * of the same trace (the same traced client ids) takes this replay's clients for new
 * ones rather than for the earlier ones, whose open owners' seqids have moved on.
 */
void tbbt_nfs4_client_tag_set(struct tbbt_nfs4_state *st, const char *tag);
const char *tbbt_nfs4_client_tag(const struct tbbt_nfs4_state *st);   /* "" if none */

/* ---- the traced exports (tbbt-play) ---- */
/*
 * The traced exports are replayed in the image: a traced PUTROOTFH (or a PUTFH of the
 * handle a GETFH right after a PUTROOTFH returned: the traced pseudo root) followed by
 * LOOKUPs of an export's pseudo path components becomes PUTFH of the export's live
 * directory, once for the PUTROOTFH and once for each of those LOOKUPs: as many
 * operations as traced, so the results still pair with the traced ones; unless the
 * walk names the live directory's own pseudo path (then it goes as traced).  An export
 * added with comps NULL stands for any one component (a trace that does not say its
 * exports' paths); the longest match wins.  Without exports, PUTROOTFH and its LOOKUPs
 * go as traced (nfs4-replay against the traced export).
 */
void tbbt_nfs4_export_add(struct tbbt_nfs4_state *st, char *const *comps,
                          char *const *live_comps, const struct tbbt_nfs4_fh *live);
/* How many of names[0..n) (LOOKUP names after the pseudo root) the longest matching
 * export's components cover (0: none), with its *live handle (borrowed) and *same: the
 * names covered are the live directory's own pseudo path (live_comps of _add(), the
 * path the live handle was looked up by): the walk may go as traced. */
uint32_t tbbt_nfs4_export_match(const struct tbbt_nfs4_state *st,
                                const struct tbbt_str *const *names, uint32_t n,
                                const struct tbbt_nfs4_fh **live, bool *same);
/* The traced pseudo root's handle reference: noted, and asked (true with *ref). */
void tbbt_nfs4_pseudo_root_note(struct tbbt_nfs4_state *st, uint32_t ref);
bool tbbt_nfs4_pseudo_root(const struct tbbt_nfs4_state *st, uint32_t *ref);

/* ---- handles ---- */
/* Learns the live bytes (copied; cut to NFS4_FHSIZE) of traced handle ref. */
void tbbt_nfs4_fh_learn(struct tbbt_nfs4_state *st, uint32_t ref, const void *fh, uint32_t len);
/* The live handle of ref (borrowed, valid until the next learn of ref), or NULL. */
const struct tbbt_nfs4_fh *tbbt_nfs4_fh_live(const struct tbbt_nfs4_state *st, uint32_t ref);

/* ---- clients ---- */
/* The client of a traced clientid, created (zeroed, live = traced) if add is true. */
struct tbbt_nfs4_client *tbbt_nfs4_client_get(struct tbbt_nfs4_state *st, uint64_t traced,
                                              bool add);
/* Calls cb for every client (in no particular order); cb must not add or remove any. */
void tbbt_nfs4_client_foreach(struct tbbt_nfs4_state *st,
                              void (*cb)(struct tbbt_nfs4_client *c, void *arg), void *arg);
/* A session of the traced client (borrowed), or NULL. */
struct tbbt_nfs4_session *tbbt_nfs4_session_of(const struct tbbt_nfs4_state *st,
                                               uint64_t traced_clientid);
/* The live clientid of a traced one: 0 and *live, or -1 when unknown. */
int tbbt_nfs4_clientid_live(const struct tbbt_nfs4_state *st, uint64_t traced,
                            uint64_t *live);

/* ---- sessions and slots ---- */
/*
 * Adds (or replaces) the session traced -> live with nslots slots (cut to
 * TBBT_NFS4_SLOTS_MAX, at least 1), each at sequence id 1.  Borrowed result.
 */
struct tbbt_nfs4_session *tbbt_nfs4_session_add(struct tbbt_nfs4_state *st,
                                                const uint8_t *traced, const uint8_t *live,
                                                uint32_t nslots, uint64_t traced_clientid);
struct tbbt_nfs4_session *tbbt_nfs4_session_get(const struct tbbt_nfs4_state *st,
                                                const uint8_t *traced);
void tbbt_nfs4_session_forget(struct tbbt_nfs4_state *st, const uint8_t *traced);
/*
 * Takes the lowest free slot: 0 with *slot, *seq (its sequence id) and *highest (the
 * highest slot id in use, this one included), or -1 when all are busy.
 */
int tbbt_nfs4_slot_take(struct tbbt_nfs4_session *s, uint32_t *slot, uint32_t *seq,
                        uint32_t *highest);
/* Frees slot; advance: its SEQUENCE was answered (any status but a SEQUENCE error). */
void tbbt_nfs4_slot_release(struct tbbt_nfs4_session *s, uint32_t slot, bool advance);

/* ---- owners (4.0 seqids) ---- */
/*
 * The owner (traced clientid, bytes), created with both next seqids = traced_seqid
 * when new.  Borrowed, valid while st lives.
 */
struct tbbt_nfs4_owner *tbbt_nfs4_owner_get(struct tbbt_nfs4_state *st, uint64_t clientid,
                                            const struct tbbt_str *bytes,
                                            uint32_t traced_seqid);
/* The live seqid to send for a traced seqid of owner o: the live server's next one,
 * shifted back for a traced seqid the owner used before (a retransmission).  A traced
 * seqid ahead of the next one the trace showed means the owner's calls in between were
 * lost with the capture: the owner's traced count skips to it (seqids are regenerated in
 * order per live owner). */
uint32_t tbbt_nfs4_owner_seqid(struct tbbt_nfs4_owner *o, uint32_t traced_seqid);
/* True if a seqid-mutating operation answered status advances the owner's seqid. */
bool tbbt_nfs4_seqid_bumps(nfsstat4 status);

/* ---- stateids ---- */
/* Learns traced (16 bytes: seqid BE + other) -> live; owner may be NULL (kept if so). */
void tbbt_nfs4_sid_learn(struct tbbt_nfs4_state *st, const uint8_t *traced,
                         const stateid4 *live, struct tbbt_nfs4_owner *owner);
/* The entry of a traced stateid's other, or NULL. */
struct tbbt_nfs4_sid *tbbt_nfs4_sid_get(const struct tbbt_nfs4_state *st,
                                        const uint8_t *traced);
/*
 * The live stateid to send for traced: special stateids (other all zeros or all ones)
 * as traced; a learned one with its seqid shifted (4.1+: a traced seqid 0 stays 0).
 * 0, or -1 when the stateid was never learned.
 */
int tbbt_nfs4_sid_live(const struct tbbt_nfs4_state *st, const uint8_t *traced,
                       stateid4 *out);

/* ---- traced attributes and listings (for VERIFY and READDIR) ---- */
void tbbt_nfs4_attr_note(struct tbbt_nfs4_state *st, uint32_t ref, const struct tbbt_fattr *a);
const struct tbbt_fattr *tbbt_nfs4_attr_traced(const struct tbbt_nfs4_state *st, uint32_t ref);
/* The live cookie and verifier where the last live READDIR of dir ref ended. */
void tbbt_nfs4_dir_note(struct tbbt_nfs4_state *st, uint32_t ref, uint64_t cookie,
                        const char *verf);
bool tbbt_nfs4_dir_next(const struct tbbt_nfs4_state *st, uint32_t ref, uint64_t *cookie,
                        char *verf);

#endif
