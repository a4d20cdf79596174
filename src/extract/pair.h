/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: pairing RPC replies with their calls and
 * emitting the exchanges in call order (TBBT paper 3.1).
 *
 * A call opens a pending exchange keyed by (client address and port, server
 * address and port, XID); its reply completes it.  The pairer numbers the
 * address-and-port part, the flow, on first sight (1, 2, ...; the numbers
 * hold for the pairer's life), and keys exchanges by flow number and XID: a
 * caller that knows a message's flow number (a TCP stream remembers it) gives
 * it with tbbt__pairer_call_flow() and _reply_flow() and so spares the look-up
 * of its addresses.  Exchanges leave in the order their
 * calls arrived, once complete, or as "no reply" when their call is older
 * than the reply timeout or too many calls are pending.  A call's age is
 * the latest time given to the pairer less the call's time, so the times
 * must not step: after a step back the new calls look older than they are
 * and leave before their replies come, while the calls before it look new
 * until the clock catches up.  A capture's times are given as they are
 * (merged by time, they go back by microseconds at most); an nfsdump
 * trace's go through stepclock.h first.
 * Retransmitted calls and replies are recognized (also shortly after the
 * exchange completed) and dropped.  Loss is estimated per client stream from
 * the progression of XIDs.  Memory is bounded by the pending calls, not by
 * the length of the input.
 *
 * The pairer knows nothing of records: each exchange carries a 64-bit tag of
 * the caller's (conv.c stores its record's sequence number and procedure in
 * it), handed back with the reply and when the exchange leaves.  Not
 * thread-safe: one thread drives a pairer.
 */
#ifndef TBBT_EXTRACT_PAIR_H
#define TBBT_EXTRACT_PAIR_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Identity of an RPC exchange: client address and port, server address and
 * port, XID.  The server port counts: a client may use one port and one XID
 * sequence for several services (rpcbind, MOUNT, NFS), and two calls with the
 * same XID to two services are two exchanges, not a retransmission.
 * Addresses are 16 bytes (IPv4 in the first 4).  Packed, compared and hashed
 * bytewise: unused bytes (pad, address tails) must be 0.
 */
struct tbbt__pair_key {
    uint8_t caddr[16];
    uint8_t saddr[16];
    uint32_t xid;
    uint16_t cport;
    uint16_t sport;
    uint8_t af;
    uint8_t pad[7];
};

struct tbbt__pair_stats {
    uint64_t calls;             /* calls offered (incl. retransmissions) */
    uint64_t replies;           /* replies offered (incl. duplicates) */
    uint64_t pairs;             /* calls answered */
    uint64_t unmatched_calls;   /* calls that never got a reply */
    uint64_t unmatched_replies; /* replies with no call */
    uint64_t duplicate_calls;   /* retransmitted calls dropped */
    uint64_t duplicate_replies; /* repeated replies dropped */
    uint64_t late_replies;      /* replies after their call timed out (also unmatched) */
    uint64_t estimated_lost_calls;
};

/* Called for every exchange leaving the pairer, in call order: its tag, and whether
 * its reply was seen. */
typedef void (*tbbt__pair_emit_cb)(uint64_t tag, bool replied, void *arg);

struct tbbt__pairer;

/* timeout_ns: time a call waits for its reply (on the clock of the ts_ns given below);
 * max_pending: bound on open calls.
 * Given: free with tbbt__pairer_free(). */
struct tbbt__pairer *tbbt__pairer_new(uint64_t timeout_ns, uint32_t max_pending,
                                      tbbt__pair_emit_cb emit, void *arg);
/* Frees without emitting what is pending.  NULL is a no-op. */
void tbbt__pairer_free(struct tbbt__pairer *p);

/* The flow number (> 0) of k's addresses and ports (its XID is ignored). */
uint32_t tbbt__pairer_flow(struct tbbt__pairer *p, const struct tbbt__pair_key *k);
/*
 * A call arrived at ts_ns.  Opens its exchange with the caller's tag and
 * returns true, or returns false if the call is a retransmission.  Emits
 * nothing (see tbbt__pairer_drain()).
 */
bool tbbt__pairer_call(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t ts_ns,
                       uint64_t tag);
/* The same for a call of flow number flow (from tbbt__pairer_flow()) with XID xid. */
bool tbbt__pairer_call_flow(struct tbbt__pairer *p, uint32_t flow, uint32_t xid, uint64_t ts_ns,
                            uint64_t tag);
/*
 * A reply arrived at ts_ns.  Returns true and its call's tag in *tag when it
 * completes an open exchange; false if it has no call or is a duplicate.
 */
bool tbbt__pairer_reply(struct tbbt__pairer *p, const struct tbbt__pair_key *k, uint64_t ts_ns,
                        uint64_t *tag);
/* The same for a reply of flow number flow (the flow of its call's key) with XID xid. */
bool tbbt__pairer_reply_flow(struct tbbt__pairer *p, uint32_t flow, uint32_t xid,
                             uint64_t ts_ns, uint64_t *tag);
/* Emits every exchange that can leave now (call it after each call or reply). */
void tbbt__pairer_drain(struct tbbt__pairer *p);
/* End of input: emits everything pending (unanswered calls). */
void tbbt__pairer_finish(struct tbbt__pairer *p);
/* Counts (borrowed, valid until free); estimated_lost_calls is set by finish. */
const struct tbbt__pair_stats *tbbt__pairer_stats(const struct tbbt__pairer *p);

/* Per-client loss estimate: calls seen and calls estimated lost, per client address. */
typedef void (*tbbt__pair_client_cb)(uint8_t af, const uint8_t *addr, uint64_t calls,
                                     uint64_t lost, void *arg);
void tbbt__pairer_foreach_client(const struct tbbt__pairer *p, tbbt__pair_client_cb cb,
                                 void *arg);

#endif
