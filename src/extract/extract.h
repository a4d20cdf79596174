/* SPDX-License-Identifier: MIT */
/*
 * tbbt-convert's engine: captured NFS traffic in, TBBT trace out (TBBT paper
 * 3.1).  Reads the inputs through the capture module, parses RPC headers,
 * pairs calls with replies, decodes NFS and MOUNT arguments and results,
 * interns handles and endpoints, and writes the binary trace.  It also
 * produces the counts of --summary-json.  With capture inputs the work can
 * be split over two threads (struct tbbt_convert_opts.threads); the trace is
 * the same either way.  That is pass A, which hands its records on through a
 * temporary file (trace/spill.h); pass B
 * (hier.c, correct.c) gives every object its TBBT-ID, writes the hierarchy
 * map, and runs the pre-play that inserts corrective records (paper 3.1, 3.2).
 */
#ifndef TBBT_EXTRACT_EXTRACT_H
#define TBBT_EXTRACT_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tbbt_convert_opts {
    const char *const *inputs;   /* capture files (borrowed) */
    int n_inputs;
    const char *filter;          /* BPF expression or NULL */
    const char *output;          /* trace path */
    const char *summary_json;    /* path or NULL */
    uint64_t reply_timeout_ns;   /* capture time a call waits for its reply (nfsdump: on a
                                  * clock without its steps, docs/nfsdump-format.md) */
    uint32_t max_pending;        /* bound on calls waiting for replies */
    bool progress;               /* draw a progress line on stderr */
    int threads;                 /* 1: all on the calling thread; 2 (or more): capture
                                  * inputs are read and paired on the calling thread and
                                  * the records decoded and written on a second one;
                                  * 0: 2 if the machine has several cores, else 1 */
    uint32_t batch_bytes;        /* with 2 threads: size of the batches handed over
                                  * (0: the default, 128 KiB; tests use small ones) */
    const char *map;             /* hierarchy map path; NULL: "<output>.map" (none when
                                  * the trace goes to stdout) */
    bool correct;                /* insert corrective records (pre-play correction) */
    bool check;                  /* check mode: no correction; after conversion, the
                                  * closed-world check of the result against its map;
                                  * output may be NULL (nothing kept) */
    bool quiet;                  /* check mode: do not print the one-line result */
    uint64_t seed;               /* corrective timestamps */
    const char *const *v4_exports;  /* NULL-terminated "PSEUDO=PATH" (--v4-export,
                                  * tbbt_ns_add_v4_export()), or NULL (borrowed) */
};

/* Fills the defaults (30 s reply timeout, 262144 pending calls, threads 0, correct on,
 * seed 1). */
void tbbt_convert_opts_init(struct tbbt_convert_opts *o);

/*
 * Runs the conversion.  Returns 0 on success; on failure a negative error and
 * a one-line reason (naming the file) in errbuf.  With TBBT_E_TRUNC (an input
 * ends inside a packet or line) or TBBT_E_DAMAGED (bad records or lines were
 * skipped, compressed data is corrupt) the trace and summary of what could be
 * read are still written; errbuf then holds the first problem, or is empty
 * when the reader already logged a warning line per damaged file.
 */
int tbbt_convert_run(const struct tbbt_convert_opts *o, char *errbuf, size_t errlen);

/*
 * Pass B alone, for a program that writes its own raw trace (tbbt-synth): reads
 * raw_trace, writes final_trace with the TBBT-IDs and the hierarchy map at map_path
 * (paths written as given: write to temporary names and rename), no correction.
 * *map_entries (may be NULL) gets the number of map entries.  0, or a negative error
 * with a one-line reason naming the file in errbuf.
 */
int tbbt_convert_ids(const char *raw_trace, const char *final_trace, const char *map_path,
                     uint64_t *map_entries, char *errbuf, size_t errlen);

/* True if the file at path starts like a TBBT trace. */
bool tbbt_convert_is_trace(const char *path);

/*
 * --check of a finished TBBT trace: loads the start state of its hierarchy
 * map (map, or "<trace>.map" if NULL), replays every record through the
 * model and counts the records whose recorded outcome the model
 * contradicts.  Prints one line (unless quiet) and writes summary_json if
 * not NULL.  Returns 0 whatever it found, or a negative error with a
 * one-line reason.
 */
int tbbt_convert_check(const char *trace, const char *map, const char *summary_json, bool quiet,
                       char *errbuf, size_t errlen);

#endif
