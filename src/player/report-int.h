/* SPDX-License-Identifier: MIT */
/*
 * The player report's private declarations (report.h), shared by report.c (recording,
 * merge, JSON/text/CSV output) and report-pack.c (the blob a rank of an MPI run sends
 * rank 0, the merge of counts, the "mpi" and "ranks" parts of the output).  Not for use
 * outside src/player/report*.c.  The rules of report.h hold: one owner per report, no
 * locks.
 */
#ifndef TBBT_PLAYER_REPORT_INT_H
#define TBBT_PLAYER_REPORT_INT_H

#include "player/report.h"

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

/* One second of the time series. */
struct sec {
    uint64_t issued, completed, failures;
    uint64_t lat_sum, lat_max; /* of the completed operations, ns */
    uint64_t due, lag_sum, lag_max; /* timestamp timing: requests sent, their dispatch
                                       error (ns) */
};

/*
 * One kind of replay failure (expected, got) or reply mismatch (field) of a procedure;
 * the struct is its own hash key (the fields up to count).
 */
struct kind {
    int32_t expected, got;      /* failures; 0 for mismatches */
    uint16_t prog, proc;
    const char *field;          /* mismatches: a static or interned field name; NULL for
                                   failures */
    uint64_t count;
};

struct tbbt_report {
    uint64_t start_ns;
    struct tbbt_hist *proc[TBBT_REPORT_NPROG][TBBT_REPORT_NPROC]; /* owned, lazily */
    struct tbbt_hist all, dispatch;
    struct sec *secs; /* owned, [cap], [0, nsecs) in use */
    size_t nsecs, cap;
    GHashTable *kinds; /* failure kinds: struct kind * -> itself, owned */
    uint64_t failures;
    GHashTable *mismatches; /* reply mismatch kinds: struct kind * -> itself, owned */
    uint64_t nmismatches;
    struct tbbt_report_mpi *mpi;    /* owned, NULL: no "mpi" key (tbbt_report_set_mpi()) */
    struct tbbt_report_rank *ranks; /* owned [nranks]; strings interned */
    size_t nranks;
};

/* The time series entry of second s (clamped to the cap), growing the series as needed. */
struct sec *tbbt__report_sec_at(struct tbbt_report *r, uint64_t s);
/* The histogram of slot (p, i) (p < TBBT_REPORT_NPROG, i < TBBT_REPORT_NPROC), made
 * empty if r has none yet. */
struct tbbt_hist *tbbt__report_proc_hist_at(struct tbbt_report *r, unsigned p, unsigned i);
/* Adds n to kind key (borrowed; copied when new) of tab (r->kinds or r->mismatches). */
void tbbt__report_kind_add(GHashTable *tab, const struct kind *key, uint64_t n);

/* report-pack.c: the "mpi" and "ranks" keys of the JSON, nothing when not set. */
void tbbt__report_json_mpi(struct tbbt_json *j, const struct tbbt_report *r);
/* report-pack.c: the text report's "mpi" line and one line per rank, nothing when not
 * set. */
void tbbt__report_text_mpi(FILE *out, const struct tbbt_report *r);

#endif
