/* SPDX-License-Identifier: MIT */
/*
 * tbbt-stats: streaming analyses of a TBBT trace (docs/tbbt-stats.md).  One pass over the
 * op records feeds every analysis; memory follows the files (handles) and clients of the
 * trace, never its length:
 *
 *   mix.c      operation mix, rate over time, per-client counts and bytes
 *   seq.c      read/write sequentiality: per-file runs (nfs-tricks paper, section 6)
 *   temp.c     file temperature (iPcress thesis 3.1: bytes transferred / file size), the
 *              rank-temperature curve and the stability of the hottest set per period
 *   share.c    files accessed by more than one client (read-shared, write-shared)
 *   concsim.c  the lookahead-window concurrency simulator of the TBBT paper, Figure 6
 *   latency.c  per-procedure latencies for the simulator (--latency, --latency-from)
 *   report.c   text and JSON output;  plot.c  gnuplot data, scripts and images
 *   stats.c    the accumulator, file table, trace reading;  stats-int.h  its internals
 *
 * A file is a handle reference of the trace (`fh`); records name it by `fh`, and the
 * object of a LOOKUP/CREATE/MKDIR/SYMLINK/MKNOD reply by `new_fh`.
 *
 * Nothing here is thread-safe; one struct tbbt_stats per thread.
 */
#ifndef TBBT_STATS_STATS_H
#define TBBT_STATS_STATS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

#define TBBT_STATS_NPROG 5        /* enum tbbt_prog values 0..4 */
#define TBBT_STATS_NPROC 32       /* procedure numbers kept per program (NFSv3 has 22) */
#define TBBT_STATS_BUCKETS 64     /* log2 buckets of the run-length histograms */
#define TBBT_STATS_MAX_WINDOWS 32
#define TBBT_STATS_WINDOW_MAX (1u << 20)

/* ---- per-procedure latencies (latency.c) ------------------------------------------ */

struct tbbt_stats_lat {
    uint64_t ns[TBBT_STATS_NPROG][TBBT_STATS_NPROC];
};

/*
 * Fills l with the defaults: the TBBT column of the TBBT paper's Table 6 at the original
 * load (getattr 600 us, lookup 900, read 3100, write 2200, create 700) for NFSv2 and v3,
 * default_us for every other procedure.
 */
void tbbt_stats_lat_init(struct tbbt_stats_lat *l, double default_us);
/*
 * Applies "NAME=US,NAME=US,...": NAME is a procedure ("read": NFSv3 and NFSv2 alike,
 * "v3.read", "v2.read", "mnt3.mnt") or "default" (every procedure not named in spec).
 * Bare names apply before prefixed ones.  0, or -EINVAL with a one-line reason in err.
 */
int tbbt_stats_lat_parse(struct tbbt_stats_lat *l, const char *spec, char *err, size_t errlen);
/*
 * Applies the mean latencies of a `tbbt-play --report-json` file: its first "procedures"
 * object, {"read": {"mean_us": N, ...}, "v2.read": {...}}, names as above.  0, or a
 * negative error (-errno, -EINVAL for a file that does not parse or has no procedures)
 * with a one-line reason in err.
 */
int tbbt_stats_lat_from_json(struct tbbt_stats_lat *l, const char *path, char *err,
                             size_t errlen);
/* The same over len bytes of JSON text. */
int tbbt_stats_lat_from_json_text(struct tbbt_stats_lat *l, const char *text, size_t len,
                                  char *err, size_t errlen);
/* Latency of rec's procedure in ns (0 for procedures out of range). */
uint64_t tbbt_stats_lat_get(const struct tbbt_stats_lat *l, int prog, int proc);

/* ---- concurrency simulator (concsim.c) -------------------------------------------- */

enum tbbt_concsim_policy {
    TBBT_CONCSIM_CONSERVATIVE = 0,
    TBBT_CONCSIM_FSDEP = 1,
};

struct tbbt_concsim;
/*
 * A simulator of one policy and window (1..TBBT_STATS_WINDOW_MAX requests): requests are
 * admitted in trace order while the window (the oldest not-yet-completed request and the
 * window - 1 after it) has room, issued at once when the policy allows (unlimited server
 * parallelism, full speed), and complete after their latency.  max_ops (0: no bound) is
 * how many requests the caller will add at most; the slot ring is min(window, max_ops)
 * long.  Given: _free().
 */
struct tbbt_concsim *tbbt_concsim_new(enum tbbt_concsim_policy policy, uint32_t window,
                                      uint64_t max_ops);
void tbbt_concsim_free(struct tbbt_concsim *s);
/*
 * Adds the next request (rec borrowed for the call; its call_ns, reply_ns, flags and
 * TBBT-IDs are used) with its latency, advancing simulated time as far as the window
 * needs.
 */
void tbbt_concsim_add(struct tbbt_concsim *s, const struct tbbt_trace_rec *rec,
                      uint64_t latency_ns);
/* Runs until every request completed.  Then: */
void tbbt_concsim_finish(struct tbbt_concsim *s);
/* Requests added, and the simulated time of the last completion (ns). */
uint64_t tbbt_concsim_ops(const struct tbbt_concsim *s);
uint64_t tbbt_concsim_makespan(const struct tbbt_concsim *s);
/* ops / makespan in ops/s after finish; 0 with no ops, INFINITY with a zero makespan. */
double tbbt_concsim_throughput(const struct tbbt_concsim *s);
/* Largest number of requests in flight at once. */
uint64_t tbbt_concsim_peak(const struct tbbt_concsim *s);

/* ---- options ------------------------------------------------------------------------ */

struct tbbt_stats_opts {
    double interval_s;          /* rate interval (> 0) */
    bool interval_auto;         /* coarsen the interval (x2) when over 2000 intervals */
    double period_s;            /* temperature period (> 0) */
    uint32_t top_k;             /* hottest set: the top K files of a period (>= 1) */
    double top_percent;         /* ... and the top P% of a period's files (0 < P <= 100) */
    uint64_t sim_ops;           /* simulate the first N NFS requests (0: no simulation) */
    uint32_t windows[TBBT_STATS_MAX_WINDOWS];
    unsigned n_windows;
    struct tbbt_stats_lat lat;
};

/* Defaults: interval 1 s (auto), period 60 s, top 10 and 10%, 1,000,000 ops,
 * windows 1, 2, 4, ..., 4096, latencies of tbbt_stats_lat_init(l, 1000). */
void tbbt_stats_opts_init(struct tbbt_stats_opts *o);
/* Parses a comma-separated list of windows into o.  0 or -EINVAL with err. */
int tbbt_stats_parse_windows(struct tbbt_stats_opts *o, const char *list, char *err,
                             size_t errlen);

/* ---- results -------------------------------------------------------------------------- */

/* Sequentiality of reads or writes (seq.c). */
struct tbbt_stats_seq {
    uint64_t accesses;          /* READs (WRITEs) that did not fail */
    uint64_t bytes;
    uint64_t sequential;        /* accesses that started where the file's previous ended */
    uint64_t runs;              /* maximal runs of such accesses (a run of 1 is one access) */
    uint64_t runs_from_zero;    /* runs whose first access starts at offset 0 */
    uint64_t max_run_ops, max_run_bytes;
    uint64_t ops_hist[TBBT_STATS_BUCKETS];      /* runs of [2^i, 2^(i+1)) accesses */
    uint64_t ops_hist_acc[TBBT_STATS_BUCKETS];  /* accesses in those runs */
    uint64_t bytes_hist[TBBT_STATS_BUCKETS];    /* runs of [2^i, 2^(i+1)) bytes (0: [0, 2)) */
    uint64_t bytes_hist_bytes[TBBT_STATS_BUCKETS];
};

/* Per-file state of a sequential run (read or write). */
struct tbbt_stats_run {
    uint64_t end;               /* offset just past the previous access */
    uint64_t ops, bytes;        /* the run so far; ops == 0: no run open */
};

enum {
    TBBT_STATS_F_SIZE = 1u << 0,        /* size holds a size seen in a reply */
    TBBT_STATS_F_TOUCHED = 1u << 1,     /* in the current period's list */
    TBBT_STATS_F_TOP_K = 1u << 2,       /* in the previous period's top K */
    TBBT_STATS_F_TOP_P = 1u << 3,       /* in the previous period's top P% */
    TBBT_STATS_F_WRITTEN = 1u << 4,     /* written (WRITE) by some client */
    TBBT_STATS_F_ANY_MULTI = 1u << 5,   /* accessed by two or more clients */
    TBBT_STATS_F_RD_MULTI = 1u << 6,    /* READ by two or more clients */
    TBBT_STATS_F_RW_MULTI = 1u << 7,    /* READ or WRITE by two or more clients */
};

struct tbbt_stats_file {
    uint32_t fh;                /* handle reference */
    uint32_t type;              /* ftype3 of the last attributes seen, 0 unknown */
    uint32_t flags;             /* TBBT_STATS_F_* */
    uint64_t id;                /* TBBT-ID, 0 unknown */
    uint64_t size;              /* largest size seen in post-op attributes */
    uint64_t bytes_read, bytes_written;
    uint64_t period_bytes;      /* bytes of the current period */
    struct tbbt_stats_run rd, wr;
    uint32_t any_client, rd_client, rw_client;  /* first client (index + 1), 0 none */
};

struct tbbt_stats_client {
    char addr[48];
    uint64_t ops, reads, writes, bytes_read, bytes_written;
};

/* One file of the rank-temperature curve. */
struct tbbt_stats_temp {
    double temp;
    uint32_t fh;
    uint64_t id, size, bytes;
};

/* Hottest-set stability between two consecutive non-empty periods. */
struct tbbt_stats_hot_pair {
    uint64_t period, next;      /* period indexes (time since start / period) */
    uint32_t k_prev, k_next;    /* sizes of the top-K sets */
    uint32_t p_prev, p_next;    /* sizes of the top-P% sets */
    double overlap_k, overlap_p;        /* |T_i ∩ T_next| / |T_i| */
    double persist_k, persist_p;        /* share of next's bytes that went to T_i */
};

struct tbbt_stats_share {
    uint64_t objects, shared;           /* objects accessed, ... by 2+ clients */
    uint64_t files, files_shared;       /* regular files (type 1) */
    uint64_t data_files;                /* files READ or WRITTEN */
    uint64_t read_shared;               /* READ by 2+ clients, WRITTEN by none */
    uint64_t write_shared;              /* WRITTEN, and READ or WRITTEN by 2+ clients */
    uint64_t bytes_read_shared, bytes_write_shared;  /* bytes moved on those files */
};

struct tbbt_stats {
    struct tbbt_stats_opts o;

    /* records */
    uint64_t records, nfs_ops, mount_ops, other_ops, no_call;
    uint64_t t_first, t_last;           /* ns: earliest and latest record time */
    uint64_t t0;                        /* the first record's time: base of intervals, periods */

    /* mix.c */
    uint64_t mix[TBBT_STATS_NPROG][TBBT_STATS_NPROC];
    uint64_t mix_other;                 /* procedure numbers past TBBT_STATS_NPROC */
    GArray *bins;                       /* uint64_t ops per interval */
    double interval_s;                  /* current interval (auto doubles it) */
    uint64_t rate_out_of_range;         /* records too far from the start for a bin */
    GArray *clients;                    /* struct tbbt_stats_client */
    GHashTable *client_ix;              /* addr -> index + 1 */

    /* files, indexed by handle reference */
    GPtrArray *files;                   /* struct tbbt_stats_file * or NULL */
    uint64_t n_files;

    /* seq.c */
    struct tbbt_stats_seq seq_read, seq_write;

    /* temp.c */
    uint64_t period;                    /* index of the current period */
    bool period_started;
    GPtrArray *touched;                 /* files with bytes in the current period */
    uint64_t period_total;              /* bytes of the current period (all files) */
    uint64_t period_to_k, period_to_p;  /* ... to the previous top-K / top-P% files */
    GPtrArray *top_k, *top_p;           /* the previous non-empty period's sets */
    uint64_t prev_period;
    bool have_prev;
    uint64_t periods_ranked;            /* non-empty periods */
    GArray *hot_pairs;                  /* struct tbbt_stats_hot_pair */
    GArray *temps;                      /* struct tbbt_stats_temp, hottest first (finish) */
    uint64_t temp_unsized;              /* files with bytes but no size > 0 */

    /* share.c (finish) */
    struct tbbt_stats_share share;

    /* concsim.c */
    struct tbbt_concsim *sims[2][TBBT_STATS_MAX_WINDOWS];
    uint64_t sim_fed;

    bool finished;
};

/* A new accumulator with options o (copied).  Given: tbbt_stats_free(). */
struct tbbt_stats *tbbt_stats_new(const struct tbbt_stats_opts *o);
void tbbt_stats_free(struct tbbt_stats *st);
/*
 * Feeds one op record (borrowed for the call) sent by client (an address, borrowed;
 * NULL or "" counts as "?").  Records are expected in trace order.
 */
void tbbt_stats_add(struct tbbt_stats *st, const struct tbbt_trace_rec *rec,
                    const char *client);
/* Closes open runs and the last period, sorts temperatures, runs the simulations. */
void tbbt_stats_finish(struct tbbt_stats *st);

/*
 * Reads the binary trace at path ("-" = stdin) into st.  0, or a negative error
 * (reader errors) with a one-line reason in err.
 */
int tbbt_stats_read_trace(struct tbbt_stats *st, const char *path, char *err, size_t errlen);
/*
 * First and last record time of the trace at path (a quick pass for the automatic
 * interval and period).  0 or a negative error with err.
 */
int tbbt_stats_trace_span(const char *path, uint64_t *first_ns, uint64_t *last_ns, char *err,
                          size_t errlen);
/* Automatic interval / period for a span (docs/tbbt-stats.md "Defaults"). */
double tbbt_stats_auto_interval(double span_s);
double tbbt_stats_auto_period(double span_s);

/* The record's time: call_ns, or reply_ns for a reply without a call. */
uint64_t tbbt_stats_rec_time(const struct tbbt_trace_rec *rec);
/*
 * Bytes a READ or WRITE moved: 0 if its reply carries an error status, else res_count if
 * present, else count.
 */
uint64_t tbbt_stats_xfer_bytes(const struct tbbt_trace_rec *rec);
/* True if the reply of rec carries a status other than OK. */
bool tbbt_stats_rec_failed(const struct tbbt_trace_rec *rec);
/* ---- output (report.c, plot.c) ---------------------------------------------------- */

/* Readable sections to out (write errors are the caller's to check with ferror). */
void tbbt_stats_print_text(const struct tbbt_stats *st, const char *trace, FILE *out);
/* The JSON document (given: g_free()); keys in docs/tbbt-stats.md. */
char *tbbt_stats_json(const struct tbbt_stats *st, const char *trace);
/* Label of a procedure: "read" (NFSv3), "v2.read", "mnt3.mnt" (given: g_free()). */
char *tbbt_stats_proc_label(int prog, int proc);
/* Log2 bucket of v: 0 for 0 and 1, else floor(log2 v). */
unsigned tbbt_stats_bucket(uint64_t v);

/* True if a gnuplot executable is on PATH. */
bool tbbt_stats_have_gnuplot(void);
/*
 * Writes DIR/{rate,mix,rank-temperature,runs,hot-set,concurrency}.{dat,gp} and runs
 * gnuplot on each script to make .png and .svg next to them (DIR is created).  0 or a
 * negative error with a one-line reason in err.
 */
int tbbt_stats_plot(const struct tbbt_stats *st, const char *dir, char *err, size_t errlen);

#endif
