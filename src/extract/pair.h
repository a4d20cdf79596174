/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: pairing RPC replies with their calls and
 * emitting the paired records in call order (TBBT paper 3.1).
 *
 * A call opens a pending record keyed by (client address and port, server
 * address, XID); its reply completes it.  Records leave in the order their
 * calls arrived, once complete, or as "no reply" when their call is older
 * than the reply timeout (capture time) or too many calls are pending.
 * Retransmitted calls and replies are recognized (also shortly after the
 * exchange completed) and dropped.  Loss is estimated per client stream from
 * the progression of XIDs.  Memory is bounded by the pending calls, not by
 * the length of the input.
 */
#ifndef TBBT_EXTRACT_PAIR_H
#define TBBT_EXTRACT_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

/* Identity of an RPC exchange. Addresses are 16 bytes (IPv4 in the first 4). */
struct tbbt__pair_key {
    uint8_t caddr[16];
    uint8_t saddr[16];
    uint32_t xid;
    uint16_t cport;
    uint8_t af;
    uint8_t pad;
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

/* Called for every record leaving the pairer, in call order (rec borrowed). */
typedef void (*tbbt__pair_emit_cb)(struct tbbt_trace_rec *rec, void *arg);

struct tbbt__pairer;

/* timeout_ns: capture time a call waits for its reply; max_pending: bound on open calls. */
struct tbbt__pairer *tbbt__pairer_new(uint64_t timeout_ns, uint32_t max_pending,
                                      tbbt__pair_emit_cb emit, void *arg);
void tbbt__pairer_free(struct tbbt__pairer *p);

/*
 * A call arrived at ts_ns.  Returns a cleared record (owned by the pairer,
 * valid until the next pairer call) for the caller to fill, or NULL if the
 * call is a retransmission.
 */
struct tbbt_trace_rec *tbbt__pairer_call(struct tbbt__pairer *p, const struct tbbt__pair_key *k,
                                         uint64_t ts_ns);
/*
 * A reply arrived at ts_ns.  Returns the record of its call (for the caller
 * to add the results to; reply_ns and TBBT_RF_REPLY are set), or NULL if it
 * has no call or is a duplicate.  The record stays owned by the pairer.
 */
struct tbbt_trace_rec *tbbt__pairer_reply(struct tbbt__pairer *p, const struct tbbt__pair_key *k,
                                          uint64_t ts_ns);
/* Emits every record that can leave now (after the caller filled the last one). */
void tbbt__pairer_drain(struct tbbt__pairer *p);
/* End of input: emits everything pending (unanswered calls). */
void tbbt__pairer_finish(struct tbbt__pairer *p);
const struct tbbt__pair_stats *tbbt__pairer_stats(const struct tbbt__pairer *p);

/* Per-client loss estimate: calls seen and calls estimated lost, per client address. */
typedef void (*tbbt__pair_client_cb)(uint8_t af, const uint8_t *addr, uint64_t calls,
                                     uint64_t lost, void *arg);
void tbbt__pairer_foreach_client(const struct tbbt__pairer *p, tbbt__pair_client_cb cb,
                                 void *arg);

#endif
