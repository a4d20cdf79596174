/* SPDX-License-Identifier: MIT */
/*
 * Private to the conversion core (convert.c: the pairing and record halves
 * and their hand-over; convert-summary.c: the summary; convert-run.c:
 * tbbt_convert_run(), its passes and --check).  The input readers see only
 * conv-int.h.  Every function here is called from the thread that runs the
 * conversion (the reader's thread in pass A, the same thread afterwards),
 * never from the writer thread; pointers are borrowed for the call.
 */
#ifndef TBBT_EXTRACT_CONVERT_INT_H
#define TBBT_EXTRACT_CONVERT_INT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extract/conv-int.h"

#define MAXPROCS 32
#define NPROGS 6             /* enum tbbt_prog up to TBBT_PROG_NFS4 */

struct pipe;

/*
 * Records by number: [head, head + n) at seq & mask.  Records that left wait on
 * a stack for reuse: the next record is the one that left last, still in the
 * cache, whatever the ring's size (it grows to the most records ever open at
 * once, and a record is 784 bytes).
 */
struct tbbt__conv_recs {
    struct tbbt_trace_rec **slot;
    uint64_t mask, head, n;
    struct tbbt_trace_rec **spare; /* records for reuse, the last one to leave on top */
    uint64_t n_spare, spare_cap;
};

/*
 * The halves write to separate cache lines (pad): a line written by one
 * thread and read by the other moves between the cores at every write.
 */
struct tbbt__conv {
    /* set up before the run, then only read */
    const struct tbbt_convert_opts *o;
    const struct tbbt__source_ops *src;
    void *src_state;
    uint64_t started_ns;
    int threads;                   /* used by this run */
    struct pipe *pipe;             /* NULL: the record half runs on the reader's thread */
    uint8_t nprocs[NPROGS];
    char pad0[64];

    /* pairing half: the reader's thread */
    struct tbbt__pairer *pairer;
    uint64_t next_rec;             /* number of the next record */
    uint64_t emitted;              /* records that left the pairer */
    uint64_t last_progress_ns;
    uint64_t rpc_calls, rpc_replies, nfs_calls, bad_procs, other_prog_calls, other_prog_pairs;
    uint64_t truncated_calls, truncated_replies;
    uint64_t pairs[NPROGS][MAXPROCS];
    GArray *announced;             /* pipelined: gboolean [(flow - 1) * 2 + tcp], sent with
                                    * EVF_KEY */
    struct tbbt_credtab *cred;     /* the credentials of the calls that open records */
    GArray *cred_memo;             /* struct cred_memo [(flow - 1) * 2 + tcp] */
    char pad1[64];

    /* record half: the writer thread when pipelined (the owner after the join) */
    struct tbbt__conv_recs recs;
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_spill_writer *w;   /* pass A's records, for pass B (trace/spill.h) */
    GArray *ep_by_flow;            /* guint32 [(flow - 1) * 2 + tcp]: endpoint ref + 1, 0 unknown */
    uint8_t *zeros;                /* kept bytes of a body, then zeros (zeros_len) */
    size_t zeros_len;
    int write_err;
    uint32_t ncred;                /* credentials that records seen so far refer to */
    uint64_t records;
    struct tbbt_ns *ns;            /* identity scan of pass B, fed as records are written */
    char pad2[64];

    /* after pass A: the main thread */
    char *raw_path;                /* pass A's raw trace (temporary) */
    char *final_tmp, *map_tmp;     /* pass B writes here; renamed when complete */
    struct tbbt_outfile *out, *map_out;   /* own final_tmp and map_tmp when set */
    char *map_path;                /* where the map goes (NULL: nowhere) */
    struct tbbt__corr *corr;       /* pre-play of pass B */
    struct tbbt__corr *check;      /* --check: the closed-world pass over the result */
    char *tmp_dir;                 /* a private temporary directory, or NULL */
    bool keep_raw;                 /* raw_path is the user's input trace */
    uint64_t pass_a_ns, pass_b_ns, check_ns;
    uint64_t cpu0_ns;              /* the reader's thread CPU time at the start */
    uint64_t reader_cpu_ns, writer_cpu_ns;   /* pass A's, per thread */
};

/*
 * The core's tables, pairer and model, empty, for a run with options o
 * (c->src and c->threads already picked); tbbt__conv_fini() frees them (and
 * ends the writer thread if one runs), whatever the run did.
 */
void tbbt__conv_tables_init(struct tbbt__conv *c, const struct tbbt_convert_opts *o);
void tbbt__conv_fini(struct tbbt__conv *c);

/*
 * Starts the writer thread of a pipelined run (c->pipe set up, batches
 * empty); the reader's thread then hands events over until _stop.
 */
void tbbt__conv_pipe_start(struct tbbt__conv *c);

/* Ends the writer thread after everything handed over is applied.  No-op without one. */
void tbbt__conv_pipe_stop(struct tbbt__conv *c);

/*
 * The summary of a finished run as JSON text (secs: wall time, bytes: the
 * input's size); given: the caller frees it with g_free().  After pass B.
 */
char *tbbt__conv_summary_text(struct tbbt__conv *c, double secs, uint64_t bytes);

#endif
