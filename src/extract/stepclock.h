/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: clocks for an input whose order is the
 * order of events but whose times may step back or jump forward (nfsdump
 * text traces: concatenated or merged files, a tracing host whose clock was
 * set).  There is no RFC for this; the rule and its reasons are in
 * docs/nfsdump-format.md, "Clock steps".
 *
 * From the input's times t[0], t[1], ... in input order come two clocks,
 * both non-decreasing:
 *
 *  - The output clock keeps each interval between consecutive messages,
 *    except that a step back counts as 0:
 *        out[0] = t[0],  out[i] = out[i-1] + max(0, t[i] - t[i-1]).
 *    After a step back of d every later time is shifted d later, so the
 *    intervals within each stretch between steps are the input's.  Forward
 *    jumps are kept: nothing tells a clock set forward from a quiet spell.
 *  - The wait clock, on which the pairer's reply timeout runs (pair.h), is
 *    the output clock less the forward gaps longer than jump_ns (the reply
 *    timeout): such a gap is not time a call waited for its reply, and
 *    counting it would expire every pending call at once.  It starts at 0.
 *
 * Both saturate at UINT64_MAX instead of wrapping.  Caller storage, no
 * allocation; not thread-safe.
 */
#ifndef TBBT_EXTRACT_STEPCLOCK_H
#define TBBT_EXTRACT_STEPCLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct tbbt__stepclock_stats {
    uint64_t steps_back;            /* times t[i] < t[i-1] */
    uint64_t step_back_max_ns;      /* the largest t[i-1] - t[i] */
    uint64_t shift_ns;              /* sum of the steps back: out - t of the latest message */
    uint64_t shifted;               /* messages whose output time is not their input time */
    uint64_t jumps_forward;         /* times t[i] - t[i-1] > jump_ns */
    uint64_t jump_forward_max_ns;   /* the largest of those gaps */
};

struct tbbt__stepclock {
    uint64_t jump_ns;               /* forward gaps above this do not advance the wait clock */
    uint64_t n;                     /* messages seen */
    uint64_t last_in;               /* the latest message's time as the input gives it */
    uint64_t out, wait;             /* the latest message's times on the two clocks */
    struct tbbt__stepclock_stats st;
};

/* Starts the clocks; jump_ns as above (the reply timeout). */
void tbbt__stepclock_init(struct tbbt__stepclock *k, uint64_t jump_ns);

/*
 * The next message, at input time t_ns.  Returns its output time and puts
 * its wait-clock time in *wait_ns.
 */
uint64_t tbbt__stepclock_next(struct tbbt__stepclock *k, uint64_t t_ns, uint64_t *wait_ns);

/* The counts (borrowed, valid while k is). */
const struct tbbt__stepclock_stats *tbbt__stepclock_stats(const struct tbbt__stepclock *k);

#endif
