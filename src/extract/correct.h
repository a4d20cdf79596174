/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: the pre-play of TBBT paper 3.1 ("trace
 * correction"), and the --check pass.  Records go through a namespace model
 * (src/ns) in trace order; before each is applied, the model predicts the
 * status a replay would get (tbbt_ns_predict()), and a prediction that
 * differs from the status the trace recorded is a replay failure.  With
 * repair on, a table of rules (docs/correction.md; the paper's Table 2 and
 * the cases our captures showed) turns each kind of failure into corrective
 * records, which are applied to the model and written before the record.
 *
 * Records without a recorded outcome (lost reply, RPC error) are applied
 * with the outcome the model predicts (a replay will send them to a server
 * in the model's state), or as successes when it cannot tell; the player
 * does not check them.
 *
 * One corrector serves one pass: pass B of tbbt-convert (extraction model,
 * open world, handles) or the check pass (a model loaded from the map with
 * tbbt_ns_load_start(): closed world, by ID).  Not thread-safe.
 */
#ifndef TBBT_EXTRACT_CORRECT_H
#define TBBT_EXTRACT_CORRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns/ns.h"
#include "trace/trace.h"
#include "util/json.h"

struct tbbt__corr;

/*
 * A new corrector.  repair: insert corrective records (else only count).
 * seed: the choice of corrective timestamps (same seed, same trace: same
 * output).  Given: free with tbbt__corr_free().
 */
struct tbbt__corr *tbbt__corr_new(bool repair, uint64_t seed);
void tbbt__corr_free(struct tbbt__corr *k);

/*
 * One record of the pre-play, in trace order: predicts, compares, repairs,
 * and applies rec to ns (which fills rec's ID fields).  prev_ns is the call
 * time of the record written before rec (0 for the first): corrective
 * records get call times in [prev_ns, rec's call time], so the trace stays
 * in call order.  Returns the number of corrective records to write before
 * rec, and *out their array (owned by k, valid until the next call); each
 * is already applied to ns.
 */
size_t tbbt__corr_step(struct tbbt__corr *k, struct tbbt_ns *ns, struct tbbt_trace_rec *rec,
                       uint64_t prev_ns, struct tbbt_trace_rec *const **out);

struct tbbt__corr_stats {
    uint64_t records;           /* records stepped (corrective ones not included) */
    uint64_t checked;           /* records whose recorded outcome was compared */
    uint64_t unchecked;         /* records without a recorded outcome */
    uint64_t undecided;         /* recorded statuses the namespace does not decide (ACCES ...) */
    uint64_t failures;          /* replay failures found (before repair) */
    uint64_t remaining;         /* failures no rule repaired */
    uint64_t corrective;        /* corrective records inserted */
};
void tbbt__corr_stats(const struct tbbt__corr *k, struct tbbt__corr_stats *st);

/*
 * Writes the summary keys into an open JSON object: replay_failures,
 * remaining_mismatches, corrective_ops {kind: count}, corrective_share,
 * checked_records, unchecked_records, undecided_records, and replay_failure_kinds /
 * remaining_mismatch_kinds {"proc TRACE->REPLAY": count}.  With check (the
 * corrector of a --check pass over k's output; may be NULL) the remaining
 * mismatches are the failures that pass found.
 */
void tbbt__corr_summary(const struct tbbt__corr *k, const struct tbbt__corr *check,
                        struct tbbt_json *j);

/*
 * The --check pass over a finished trace: loads map_path's start state,
 * steps every record of trace_path without repair, and returns 0 with the
 * corrector (counts) in *out, or a negative error with a one-line reason in
 * errbuf.
 */
int tbbt__check_run(const char *trace_path, const char *map_path, struct tbbt__corr **out,
                    char *errbuf, size_t errlen);

#endif
