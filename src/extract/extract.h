/* SPDX-License-Identifier: MIT */
/*
 * tbbt-convert's engine: captured NFS traffic in, TBBT trace out (TBBT paper
 * 3.1).  Reads the inputs through the capture module, parses RPC headers,
 * pairs calls with replies, decodes NFS and MOUNT arguments and results,
 * interns handles and endpoints, and writes the binary trace.  It also
 * produces the counts of --summary-json.  With capture inputs the work can
 * be split over two threads (struct tbbt_convert_opts.threads); the trace is
 * the same either way.
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
    uint64_t reply_timeout_ns;   /* capture time a call waits for its reply */
    uint32_t max_pending;        /* bound on calls waiting for replies */
    bool progress;               /* draw a progress line on stderr */
    int threads;                 /* 1: all on the calling thread; 2 (or more): capture
                                  * inputs are read and paired on the calling thread and
                                  * the records decoded and written on a second one;
                                  * 0: 2 if the machine has several cores, else 1 */
    uint32_t batch_bytes;        /* with 2 threads: size of the batches handed over
                                  * (0: the default, 128 KiB; tests use small ones) */
};

/* Fills the defaults (30 s reply timeout, 262144 pending calls, threads 0). */
void tbbt_convert_opts_init(struct tbbt_convert_opts *o);

/*
 * Runs the conversion.  Returns 0 on success; on failure a negative error and
 * a one-line reason (naming the file) in errbuf.  With TBBT_E_TRUNC (a capture
 * file ends inside a packet) the trace and summary of what was read are still
 * written.
 */
int tbbt_convert_run(const struct tbbt_convert_opts *o, char *errbuf, size_t errlen);

#endif
