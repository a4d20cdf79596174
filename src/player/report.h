/* SPDX-License-Identifier: MIT */
/*
 * report: the statistics of one tbbt-play run and their output (TBBT paper 4, Table 6:
 * per-operation latency and overall throughput).  It keeps latency histograms per
 * procedure and for all operations, the dispatch error of timestamp timing, a
 * per-second time series (issued, completed, failures, latency) and the replay failures
 * by kind (procedure, status the trace recorded, status the server answered).  It does
 * not count anything else: the engine's counters arrive in struct tbbt_report_counts
 * and are only printed.  Output: JSON (the --report-json contract, docs/tbbt-play.md),
 * a human table, and a CSV time series.  Under MPI each rank packs its report into bytes
 * (tbbt_report_pack()), rank 0 unpacks and merges them into one (report-pack.c).
 *
 * Threads: a report belongs to one thread at a time and takes no locks; the send and
 * receive threads each fill their own, and the tool merges them after joining.  The
 * histogram is a plain struct in caller storage with the same rule.
 *
 * Histogram layout (log-linear, as HdrHistogram with 2 significant binary digits of
 * 5 bits): values below 64 ns have one bucket each; above, every power of two
 * [2^k, 2^(k+1)) is split into 32 equal buckets, so a bucket's width is at most 1/32 of
 * its lower bound.  Values of 2^42 ns (~73 min) and more share the last bucket; count,
 * sum, min and max are kept exactly.
 */
#ifndef TBBT_PLAYER_REPORT_H
#define TBBT_PLAYER_REPORT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- latency histogram --------------------------------------------------------------- */

#define TBBT_HIST_SUB_BITS 5                          /* 32 sub-buckets per power of two */
#define TBBT_HIST_SUB (1u << TBBT_HIST_SUB_BITS)
#define TBBT_HIST_MAX_BITS 42                         /* values below 2^42 ns are bucketed */
#define TBBT_HIST_NBUCKETS ((TBBT_HIST_MAX_BITS - TBBT_HIST_SUB_BITS + 1) * TBBT_HIST_SUB)

struct tbbt_hist {
    uint64_t count;
    uint64_t sum;                   /* of the values, ns (wraps after ~584 years) */
    uint64_t min, max;              /* UINT64_MAX and 0 while empty */
    uint64_t bucket[TBBT_HIST_NBUCKETS];
};

/* Makes h empty.  h: caller storage (~9.7 KiB), no allocation, nothing to release. */
void tbbt_hist_init(struct tbbt_hist *h);
/* Adds one value (ns).  O(1); no branch but the clamp to the last bucket. */
void tbbt_hist_add(struct tbbt_hist *h, uint64_t v);
/* Adds every value of src (borrowed) to dst; dst == src doubles every count. */
void tbbt_hist_merge(struct tbbt_hist *dst, const struct tbbt_hist *src);
/*
 * The q-quantile (q in [0,1], clamped; NaN counts as 0): the value of rank ceil(q*count)
 * (at least 1), given as the midpoint of its bucket clipped to [min, max], so within
 * 1/64 of the exact value (exact below 64 ns, for q = 0 and for q = 1).  0 if empty.
 */
uint64_t tbbt_hist_quantile(const struct tbbt_hist *h, double q);
/* Exact mean (sum / count), 0 if empty. */
double tbbt_hist_mean(const struct tbbt_hist *h);
/* Smallest value, 0 if empty (h->min is UINT64_MAX then). */
uint64_t tbbt_hist_min(const struct tbbt_hist *h);

/* ---- run report ---------------------------------------------------------------------- */

/* `got` of tbbt_report_failure() for a call that never got a reply. */
#define TBBT_REPORT_NO_REPLY (-1)
/* Progs 0..5 (enum tbbt_prog: NFSv4 has NULL and COMPOUND) by procedures 0..31; anything
 * else counts as "other".  Failure kinds are not bounded: NFSv4 ones name the operation
 * (tbbt_proc_label() of the operation number). */
#define TBBT_REPORT_NPROG 6
#define TBBT_REPORT_NPROC 32
/* Time series length cap (~48 days); later events count in the last second. */
#define TBBT_REPORT_MAX_SECONDS (1u << 22)

struct tbbt_report;

/*
 * A new, empty report (given: free with tbbt_report_free()).  start_ns: CLOCK_MONOTONIC
 * time of the run's start (tbbt_now_ns()), second 0 of the time series; earlier events
 * count in second 0.
 */
struct tbbt_report *tbbt_report_new(uint64_t start_ns);
/* Frees r and all it holds; NULL is a no-op. */
void tbbt_report_free(struct tbbt_report *r);
/*
 * Adds everything src (borrowed, != dst) holds to dst, exactly: histograms bucket by
 * bucket (count, sum, min, max too), failure and mismatch kinds by kind, the time series
 * second by second.  Time series are aligned on dst's start (src's seconds are shifted by
 * the difference of the starts, whole seconds, rounded toward zero: reports with equal
 * starts align exactly).  The MPI parts (tbbt_report_set_mpi()) are not merged: dst keeps
 * its own.  Neither may be in use by another thread.
 */
void tbbt_report_merge(struct tbbt_report *dst, const struct tbbt_report *src);

/*
 * A completed operation: a reply to (prog, proc) came at done_ns (CLOCK_MONOTONIC),
 * latency_ns after its call was sent.  Hot path of the receive thread: ~10-20 ns, it
 * allocates only the first time a procedure is seen and when the time series grows.
 */
void tbbt_report_op(struct tbbt_report *r, int prog, int proc, uint64_t latency_ns,
                    uint64_t done_ns);
/* An operation sent at when_ns (issued per second).  Send thread. */
void tbbt_report_issued(struct tbbt_report *r, uint64_t when_ns);
/*
 * A replay failure at when_ns: the trace recorded status `expected`, the server
 * answered `got` (NFS/MOUNT status numbers), or got = TBBT_REPORT_NO_REPLY for a call
 * that got no reply (timed out, lost with its connection).  Counted by kind
 * (tbbt_report_failure_kind()) and per second.
 */
void tbbt_report_failure(struct tbbt_report *r, int prog, int proc, int32_t expected,
                         int32_t got, uint64_t when_ns);
/* Dispatch error of one request in timestamp timing: actual - scheduled send time, ns
 * (negative counts as 0), sent at when_ns (the time series' lag per second).  The
 * thread that sent it. */
void tbbt_report_dispatch(struct tbbt_report *r, int64_t err_ns, uint64_t when_ns);
/*
 * A reply that differs from the traced reply in a way the image or the server should
 * not have changed (engine.c: post-operation type, size, link count, mode, owner;
 * READDIR(PLUS) entry count and EOF): counted as "<proc label>.<field>" (e.g.
 * "getattr.size", "readdirplus.entries").  field: a static or interned string (the
 * report keeps the pointer, also through tbbt_report_merge()).  Receive thread.
 */
void tbbt_report_mismatch(struct tbbt_report *r, int prog, int proc, const char *field);
/* Total reply mismatches. */
uint64_t tbbt_report_mismatches(const struct tbbt_report *r);

/*
 * The name of a failure kind (given: g_free()): "<proc>:<EXPECTED>-><GOT>" with the
 * names of tbbt_proc_name()/tbbt_status_name(), decimal numbers where unknown and
 * "NO_REPLY" for TBBT_REPORT_NO_REPLY; procedures of other programs than NFSv3 are
 * prefixed with the program ("v2.lookup:OK->NOENT", "mnt3.mnt:OK->ACCES").
 */
char *tbbt_report_failure_kind(int prog, int proc, int32_t expected, int32_t got);
/*
 * The name under which (prog, proc) is reported (given: g_free()): "getattr" for
 * NFSv3, "v2.getattr", "mnt3.mnt", "other" for a prog/proc out of range.
 */
char *tbbt_report_proc_label(int prog, int proc);

/* Accessors (borrowed results, valid until r changes or is freed). */
/* The latency histogram of (prog, proc), NULL if no operation of it completed. */
const struct tbbt_hist *tbbt_report_proc_hist(const struct tbbt_report *r, int prog, int proc);
/* Latency of all completed operations. */
const struct tbbt_hist *tbbt_report_all_hist(const struct tbbt_report *r);
/* Dispatch errors (ns). */
const struct tbbt_hist *tbbt_report_dispatch_hist(const struct tbbt_report *r);
/* Total replay failures, and those of one kind. */
uint64_t tbbt_report_failures(const struct tbbt_report *r);
uint64_t tbbt_report_failure_count(const struct tbbt_report *r, int prog, int proc,
                                   int32_t expected, int32_t got);
/* Seconds in the time series (last second with activity + 1; 0 if none). */
uint64_t tbbt_report_seconds(const struct tbbt_report *r);

/* Counters and facts of the run that the engine keeps (plain struct the caller fills). */
struct tbbt_report_counts {
    uint64_t trace_ops;        /* op records read from the trace (after --subset filtering) */
    uint64_t ops_issued, ops_completed, ops_skipped, ops_unknown; /* unknown: no reply */
    uint64_t skipped_no_handle, skipped_dependency, skipped_not_nfs, skipped_incomplete,
        skipped_unsendable, skipped_filtered;
    uint64_t skipped_stopped;  /* read from the trace, never sent: the run stopped first */
    uint64_t corrective_ops;   /* corrective records of the trace that were replayed */
    uint64_t retries, reconnects, timeouts, unchecked; /* unchecked: no outcome to compare */
    uint64_t retransmits;      /* same-XID resends after a timeout or a reconnect */
    uint64_t retransmit_dup_ok; /* resent non-idempotent requests whose EXIST/NOENT/NOT_SYNC
                                   answer was taken as done (their first send went through) */
    uint64_t window_stalls, peak_outstanding;
    uint64_t reordered_reads;  /* --reorder: swaps of two reads made by the reader */
    uint64_t client_stalls;    /* --client-outstanding: requests held back at the limit */
    uint64_t read_bytes;       /* bytes of the READs answered OK as in the trace (the
                                  trace's count of bytes returned) */
    /* NFS3ERR_JUKEBOX, "try again later" (a grace period, an HSM recall): waited out */
    uint64_t jukebox_replies;  /* JUKEBOX replies received */
    uint64_t jukebox_ops;      /* operations that got at least one */
    uint64_t jukebox_gave_up;  /* ... and still got one when --jukebox-wait ran out */
    double jukebox_wait_seconds;      /* summed over those operations: first JUKEBOX to
                                         the final reply */
    double jukebox_wait_max_seconds;  /* the longest of them */
    uint64_t replies_racy;     /* replies not checked against the trace's: the request
                                  overlapped in the trace with one that changes one of its
                                  objects (their order on the traced server is unknown) */
    const char *grace;         /* the probe before the replay (grace.h): "no", "yes",
                                  "unknown"; NULL: not probed (borrowed) */
    double grace_wait_seconds; /* waited before the replay for the grace period to end */
    double wall_seconds;       /* replay time */
    double cpu_user_seconds, cpu_system_seconds;    /* the player's, over the replay
                                                       (start-up and --verify not included) */
    double trace_seconds;      /* span of the trace's call times */
    double speed;              /* --speed (1 for full speed's "trace rate x speed" line) */
    const char *order, *timing, *transport; /* "conservative"/"fsdep", "full"/"timestamp",
                                               "tcp"/"udp" (borrowed, NULL: unknown) */
    uint32_t clones, connections, window, max_outstanding;
    double causal_slack_us;    /* conservative order's causal slack (0: none); NAN: fsdep */
    bool finished;             /* the replay ran to the end */
    const char *error;         /* why not (borrowed), or NULL */
    const char *stop_reason;   /* why the run stopped before its end (borrowed): "signal
                                  SIGTERM", "server dead", ... (the replay, or a --verify
                                  after a finished one); NULL: it did not */
};

/* The optional --verify result. */
struct tbbt_report_verify {
    bool ok;
    uint64_t checked, mismatches;
};

/* ---- MPI runs: one report merged from every rank's (docs/mpi.md) -------------------- */

/*
 * Each rank's part in an MPI run, for the merged report's "ranks" array and the text
 * report's rank lines; also carried in the rank's blob (tbbt_report_pack()).  Strings
 * are borrowed by the functions that take the struct; tbbt_report_unpack() fills them
 * with interned strings (g_intern_string(): valid as long as the process).
 */
struct tbbt_report_rank {
    uint32_t rank;              /* MPI rank, 0 .. ranks - 1 */
    const char *host;           /* its host name (NULL: unknown) */
    const char *what;           /* its share of the replay: "images 0,4" (--distribute
                                   clones), "clients 3" (--distribute clients); NULL */
    uint64_t ops_issued, ops_completed, replay_failures; /* its own counts */
    double throughput_ops;      /* its ops_completed / its wall_seconds (NAN: none) */
    double wall_seconds;        /* from the common start S0 to its end */
    double cpu_user_seconds, cpu_system_seconds; /* its player's, over the replay */
    double offset_us;           /* its CLOCK_MONOTONIC minus rank 0's (Cristian) */
    double rtt_us;              /* the shortest round trip of that measurement: the
                                   offset is known within rtt_us / 2 */
    double start_late_us;       /* its real start minus S0, in rank 0's clock */
    double drift_us;            /* its offset measured after the replay minus before */
    uint64_t cross_rank_deps;   /* own requests held back by another rank's (--distribute
                                   clients) */
    double cross_rank_wait_seconds; /* time the next request waited on other ranks only */
    uint64_t notices_sent;      /* completion notices it sent (--distribute clients) */
    bool finished;              /* its replay ran to the end */
    const char *error;          /* why not, or NULL */
    /* Its --verify, carried to rank 0 for the merged "verify" (not a key of "ranks"): */
    bool verified;              /* it ran --verify to the end: verify holds the result */
    bool verify_failed;         /* its --verify could not run to the end */
    struct tbbt_report_verify verify;
};

/* The run's MPI facts, the merged report's "mpi" object. */
struct tbbt_report_mpi {
    unsigned ranks;             /* MPI ranks (processes) */
    const char *distribute;     /* "clones" or "clients" (NULL: unknown) */
    double start_skew_us;       /* largest minus smallest start of the ranks, rank 0's clock */
    double offset_error_us;     /* the largest round trip / 2: the offsets' error bound */
    uint64_t cross_rank_deps;   /* sums of the ranks' figures of the same names */
    double cross_rank_wait_seconds;
    uint64_t notices_sent;
};

/*
 * Sets the MPI parts of r: m (borrowed, NULL: no "mpi" key) and ranks[nranks] (borrowed,
 * NULL when nranks is 0: no "ranks" key) are copied, their strings interned
 * (g_intern_string()); a second call replaces the first.  Without a call the JSON and
 * text are exactly those of a single-process run.
 */
void tbbt_report_set_mpi(struct tbbt_report *r, const struct tbbt_report_mpi *m,
                         const struct tbbt_report_rank *ranks, size_t nranks);

/* Blob format (report-pack.c), and the longest string it carries. */
#define TBBT_REPORT_PACK_MAGIC UINT32_C(0x54425250)    /* "TBRP" */
#define TBBT_REPORT_PACK_VERSION 1u
#define TBBT_REPORT_PACK_STR_MAX 65536u

/*
 * One rank's report as a versioned big-endian blob (given: g_bytes_unref()), to gather
 * at rank 0: r's start_ns, every histogram (all, dispatch, each procedure's), the
 * failure kinds, the mismatch kinds (by procedure and field name), the time series,
 * every member of c and ri (strings up to TBBT_REPORT_PACK_STR_MAX bytes; longer ones
 * are cut, NULL stays NULL), and a CRC-32.  r, c and ri borrowed; ri may be NULL (a
 * rank info of zeros).  Layout: the comment atop report-pack.c.  Any thread that owns r.
 */
GBytes *tbbt_report_pack(const struct tbbt_report *r, const struct tbbt_report_counts *c,
                         const struct tbbt_report_rank *ri);
/*
 * Reads a blob of tbbt_report_pack() (b borrowed, not NULL; any thread).  shift_ns is subtracted from the
 * start_ns it holds: pass the rank's clock offset (its CLOCK_MONOTONIC minus rank 0's)
 * to get the start in rank 0's clock.  On success 0, *r a new report (given: free with
 * tbbt_report_free()), *c and *ri (either may be NULL: not wanted) filled, their
 * strings and the mismatch field names interned (valid as long as the process).  On
 * failure *r is NULL, *c and *ri are left alone, err (errlen bytes, may be NULL) holds a
 * one-line reason and the result is TBBT_E_MAGIC, TBBT_E_VERSION, TBBT_E_TRUNC,
 * TBBT_E_CHECKSUM, TBBT_E_BADREC (a count, length or value out of bounds, trailing
 * bytes) or TBBT_E_RANGE (the shifted start out of range).  Every length and count is
 * checked against the bytes left before use: a hostile blob is refused and never read
 * out of bounds; the largest allocation is a time series of the seconds it declares (at
 * most TBBT_REPORT_MAX_SECONDS, 256 MiB), and only when it holds that last second.
 */
int tbbt_report_unpack(GBytes *b, int64_t shift_ns, struct tbbt_report **r,
                       struct tbbt_report_counts *c, struct tbbt_report_rank *ri, char *err,
                       size_t errlen);
/*
 * Adds the counts of one rank, src (borrowed), to dst, member by member:
 *  - counters (operations, skipped reasons, retries, stalls, read_bytes, jukebox counts
 *    and jukebox_wait_seconds, replies_racy, ...): summed;
 *  - peak_outstanding, jukebox_wait_max_seconds: the larger (the ranks' peaks need not
 *    coincide, so the true peak of the run lies between this and the sum);
 *  - wall_seconds: the larger: every rank counts from the common start S0, so the merged
 *    figure is the common window from S0 to the last rank's end (and throughput_ops =
 *    all completed / that window);
 *  - cpu_user_seconds, cpu_system_seconds: summed (cpu.us_per_op = all ranks' CPU / all
 *    issued);
 *  - trace_seconds, grace_wait_seconds: the larger (every rank reads the same trace and
 *    probes the same server, concurrently);
 *  - clones: summed (each rank replays its own clones in --distribute clones; in
 *    --distribute clients every rank replays all of them, so the caller sets it back);
 *    connections: summed (each rank opens its own);
 *  - settings: speed, order, timing, transport, window, max_outstanding,
 *    causal_slack_us: dst's (the same options on every rank; window and max_outstanding
 *    are per rank);
 *  - grace: the more telling of the two ("yes" over "unknown" over "no" over NULL);
 *  - finished: true only if both are; error, stop_reason: dst's, or src's if dst has none.
 * Strings are borrowed from src as they were.
 */
void tbbt_report_counts_merge(struct tbbt_report_counts *dst,
                              const struct tbbt_report_counts *src);

/*
 * The report as JSON text (given: g_free()).  r and c borrowed; v borrowed or NULL (then
 * no "verify" key).  Keys, a contract: ops_issued, ops_completed, ops_skipped,
 * ops_unknown, corrective_ops, skipped_by_reason {no_handle, dependency, not_nfs,
 * incomplete, unsendable, filtered, stopped}, replay_failures, replay_failures_by_kind
 * {kind: n} (by count), retries, reconnects, timeouts, retransmits, retransmit_dup_ok,
 * unchecked, window_stalls, peak_outstanding,
 * reordered_reads, client_stalls, read_bytes, read_mb_per_s, trace_ops,
 * trace_seconds, wall_seconds, cpu {user_seconds, system_seconds, us_per_op (user +
 * system over ops_issued)} (the replay, without start-up and verify), throughput_ops
 * (completed / wall), trace_rate_ops
 * (trace_ops / trace_seconds), target_rate_ops (trace rate x speed, null in full-speed
 * timing), speed, order, timing, transport, clones, connections, window,
 * max_outstanding, causal_slack_us (conservative order, else null), finished, error,
 * stop_reason (null unless stopped), dispatch_error_us {count, p50, p99, max},
 * all {count, mean_us, p50_us, p90_us, p99_us, max_us}, procedures {label: {same}} (by
 * count), verify {ok, mismatches, checked}, reply_mismatches,
 * reply_mismatches_by_kind {kind: n}, jukebox {replies, ops, gave_up, wait_seconds,
 * wait_max_seconds}, replies_racy, grace {state, waited_seconds} (state null when not probed), lag
 * (timestamp timing only, else null) {seconds_behind: seconds whose largest dispatch
 * error exceeds 1 ms, first_behind_second (null if none), series: [[second, mean_us,
 * max_us], ...] for every second with dispatches}.  Undefined numbers (a rate over 0 seconds,
 * dispatch quantiles without samples) are null.  After tbbt_report_set_mpi(), last:
 * mpi {ranks, distribute, start_skew_us, offset_error_us, cross_rank_deps,
 * cross_rank_wait_seconds, notices_sent} and ranks [{rank, host, what, ops_issued,
 * ops_completed, replay_failures, throughput_ops, wall_seconds, cpu {user_seconds,
 * system_seconds, us_per_op}, offset_us, rtt_us, start_late_us, drift_us,
 * cross_rank_deps, cross_rank_wait_seconds, notices_sent, finished, error}], each only
 * when set.
 */
char *tbbt_report_json(const struct tbbt_report *r, const struct tbbt_report_counts *c,
                       const struct tbbt_report_verify *v);
/*
 * The human report, in the style of the paper's Table 6, written to out (borrowed): a
 * header (settings, wall time, throughput against the trace's own rate x speed,
 * operation counts, failures, retries, reconnects, dispatch error, peak outstanding,
 * window stalls, verify), the per-procedure latency table in ms (count, mean, p50, p90,
 * p99, max; by count) and the top 20 replay failure kinds.  After tbbt_report_set_mpi()
 * an "mpi" line and one line per rank follow the header.
 */
void tbbt_report_text(FILE *out, const struct tbbt_report *r, const struct tbbt_report_counts *c,
                      const struct tbbt_report_verify *v);
/*
 * Writes the per-second time series as CSV to path ("-": stdout): header
 * "second,issued,completed,failures,mean_latency_us,max_latency_us,mean_lag_us,
 * max_lag_us", one row per second from 0 to the last second with activity, zeros for
 * idle seconds (the lag: timestamp timing's dispatch error of the requests sent in that
 * second).  0 or -errno.
 */
int tbbt_report_timeseries_csv(const struct tbbt_report *r, const char *path);

#endif
