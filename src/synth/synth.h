/* SPDX-License-Identifier: MIT */
/*
 * The synth module: generates the read benchmark of the nfs-tricks paper (Ellard and
 * Seltzer, "NFS Tricks and Benchmarking Traps", USENIX 2003, sections 4.3 and 7) as a
 * TBBT trace plus hierarchy map, as if it had been captured and converted.
 *
 * The file set (section 4.3): groups of 1, 2, 4, 8, 16 and 32 files of 256 MiB / n
 * each, every size multiplied by the scale F and rounded down to a multiple of the
 * read size (at least one read).  A run with n readers reads the n files of group n
 * (a group of its own when n is not one of the six); reader i reads file i of the
 * group, from start to end, in fixed-size reads.  With a stride S (section 7) the
 * reader reads its file of B blocks as S interleaved sequential streams starting at
 * blocks floor(j * B / S), j = 0..S-1: one block of each stream in turn.  Each
 * reader's own sequence may then be perturbed by the sloppy-client reordering of
 * src/trace/reorder.h, seeded per reader from the run's seed.  The readers' reads are
 * interleaved round-robin on one clock: read k of reader r is called at
 * start + k * P + r * P / N (P = 1 / rate).
 *
 * Two levels: the read stream alone, in memory (tbbt_synth_new(),
 * tbbt_synth_next_read(); what the unit tests inspect), and the whole trace
 * (tbbt_synth_write_raw() writes a raw trace with file handles and attributes, as
 * tbbt-convert's pass A would; tbbt_synth_run() then runs pass B, tbbt_convert_ids()
 * of src/extract/extract.h, so that TBBT-IDs and the map follow exactly the rules of
 * converted captures).
 *
 * Names in the map: ra/g<N>/f<i>, N the number of files of the group (1..32 for the
 * paper's groups, the reader count for any other), i from 0.  Docs: docs/tbbt-synth.md.
 *
 * Nothing here is thread-safe; one generator per thread.
 */
#ifndef TBBT_SYNTH_SYNTH_H
#define TBBT_SYNTH_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/reorder.h"

#define TBBT_SYNTH_MIB (1024u * 1024u)
#define TBBT_SYNTH_BASE_SIZE (256ull * TBBT_SYNTH_MIB)  /* bytes per group at scale 1 */
#define TBBT_SYNTH_GROUPS 6                              /* the paper's 1..32 */
#define TBBT_SYNTH_MAX_READERS 65535u
#define TBBT_SYNTH_MAX_STRIDE 1048576u
#define TBBT_SYNTH_UDP_MAX_READ 65536u          /* largest read the player sends over UDP */
#define TBBT_SYNTH_TCP_MAX_READ (1024u * 1024u) /* largest read over TCP */
#define TBBT_SYNTH_MAX_SCALE 4096.0
#define TBBT_SYNTH_DEFAULT_READ 8192u           /* the paper's 8k NFS blocks (section 6) */
#define TBBT_SYNTH_DEFAULT_SEED 20030609u
#define TBBT_SYNTH_DEFAULT_START_S 1055116800u  /* 2003-06-09 00:00:00 UTC */
#define TBBT_SYNTH_DEFAULT_MBPS 25.0            /* aggregate MiB/s that sets the default rate */

/* Which files the map holds. */
enum tbbt_synth_fileset {
    TBBT_SYNTH_FILES_READ = 0,  /* only the files the trace reads (default) */
    TBBT_SYNTH_FILES_ALL = 1,   /* the whole file set: the six groups (and group N) */
};

/* What to generate.  tbbt_synth_cfg_init() fills in the defaults. */
struct tbbt_synth_cfg {
    uint32_t readers;           /* N >= 1 */
    uint32_t stride;            /* S >= 1; 1 = sequential */
    uint32_t read_size;         /* bytes per READ */
    double scale;               /* F > 0: file sizes are multiplied by it */
    struct tbbt_reorder_spec reorder;   /* p = 0: no reordering */
    uint64_t seed;
    double rate;                /* reads per second per reader; 0: the default (below) */
    enum tbbt_synth_fileset fileset;
    bool tcp;                   /* records say TCP (else UDP) */
    uint64_t start_ns;          /* call time of the first record */
};

/*
 * Defaults: 1 reader, stride 1, 8192-byte reads, scale 1, no reordering, seed
 * TBBT_SYNTH_DEFAULT_SEED, default rate, only the read files, UDP, start at
 * TBBT_SYNTH_DEFAULT_START_S.  The default rate makes the readers together read
 * TBBT_SYNTH_DEFAULT_MBPS MiB/s (the paper's measured NFS throughput was 15-30 MB/s):
 * rate = 25 MiB / (read_size * readers).
 */
void tbbt_synth_cfg_init(struct tbbt_synth_cfg *cfg);
/*
 * Checks cfg against the limits (readers 1..65535, stride 1..2^20, read size
 * 1..65536 over UDP or 1..1 MiB over TCP, scale in (0, 4096], reorder p in [0, 1] and
 * k 1..TBBT_REORDER_MAX_K, rate in (0, 1e9] or 0).  0, or -1 with a one-line reason in
 * err.
 */
int tbbt_synth_cfg_check(const struct tbbt_synth_cfg *cfg, char *err, size_t errlen);
/* The rate cfg stands for (its own, or the default). */
double tbbt_synth_rate(const struct tbbt_synth_cfg *cfg);

/*
 * Size of each file of a group of nfiles files: 256 MiB * scale / nfiles, rounded down
 * to a multiple of read_size, at least read_size.  Thread-safe.
 */
uint64_t tbbt_synth_file_size(uint32_t nfiles, double scale, uint32_t read_size);

/*
 * The i-th block (0 <= i < nblocks) read by a stride reader of a file of nblocks
 * blocks: S = stride streams start at floor(j * nblocks / S) and each takes the blocks
 * up to the next stream's start; the reader takes one block of each non-exhausted
 * stream in turn.  Stride 1 is i itself.  Thread-safe.
 */
uint64_t tbbt_synth_stride_block(uint64_t nblocks, uint32_t stride, uint64_t i);

/* One file of the file set. */
struct tbbt_synth_file {
    char path[40];              /* "ra/g<N>/f<i>" */
    uint32_t group;             /* N: files in its group */
    uint32_t index;             /* i */
    uint64_t size;              /* bytes */
    uint64_t fileid;            /* fileid in the trace's attributes (fsid 1) */
    uint64_t dir_fileid;        /* fileid of its directory ra/g<N> */
    int reader;                 /* the reader that reads it, or -1 */
};

/* One READ of the stream. */
struct tbbt_synth_read {
    uint32_t reader;            /* 0..N-1: the client */
    uint32_t file;              /* index into tbbt_synth_files() */
    uint64_t seq;               /* position in the reader's own sequence (0, 1, ...) */
    uint64_t block;             /* offset / read_size */
    uint64_t offset;
    uint32_t count;             /* bytes asked and returned (read_size) */
    bool eof;                   /* the read reaches the end of the file */
    uint64_t call_ns, reply_ns;
};

struct tbbt_synth;
/*
 * A generator for cfg (copied).  NULL with a reason in err if tbbt_synth_cfg_check()
 * refuses cfg.  Given: free with tbbt_synth_free().  Memory: the file set plus one
 * reorder buffer of k + 1 items per reader, whatever the trace's length.
 */
struct tbbt_synth *tbbt_synth_new(const struct tbbt_synth_cfg *cfg, char *err, size_t errlen);
void tbbt_synth_free(struct tbbt_synth *s);
/* The configuration in use (borrowed; rate filled in). */
const struct tbbt_synth_cfg *tbbt_synth_cfg(const struct tbbt_synth *s);

/*
 * The file set in map order (groups by size, largest files first, then the readers'
 * own group if it is not one of the six): with TBBT_SYNTH_FILES_READ only the read
 * files.  Borrowed, valid until tbbt_synth_free(); *n set to the count.
 */
const struct tbbt_synth_file *tbbt_synth_files(const struct tbbt_synth *s, size_t *n);
/* Reads per reader (blocks of its file) and in all. */
uint64_t tbbt_synth_reads_per_reader(const struct tbbt_synth *s);
uint64_t tbbt_synth_total_reads(const struct tbbt_synth *s);

/*
 * The next READ in trace (call time) order into *rd: 1, or 0 at the end.  Call times
 * never decrease.  Starts from the beginning after tbbt_synth_rewind().
 */
int tbbt_synth_next_read(struct tbbt_synth *s, struct tbbt_synth_read *rd);
void tbbt_synth_rewind(struct tbbt_synth *s);
/* Swaps the reorderers made in the reads generated so far. */
uint64_t tbbt_synth_swaps(const struct tbbt_synth *s);

/* Counts of a written trace. */
struct tbbt_synth_summary {
    uint64_t records;           /* op records of the trace */
    uint64_t reads;
    uint64_t bytes;             /* bytes read */
    uint64_t swaps;             /* reorderings */
    uint64_t files_in_map;
    uint64_t span_ns;           /* first call to last reply */
    uint64_t map_entries;
};

/*
 * Writes the raw trace (handles and attributes, no TBBT-IDs) to path (created or
 * truncated; borrowed): with the whole file set, a set-up client (10.2.0.1) first
 * looks up every file; then each reader, its own client 10.1.X.Y (X.Y = r + 1 as two
 * bytes, port 1000 + r) on server 10.0.0.1 port 2049, MOUNTs the export (MNT reply:
 * the root handle), LOOKUPs ra, g<N> and its file (attributes: the full size, create
 * time before the trace), then the reads of tbbt_synth_next_read() (rewound first),
 * with status OK, res_count, eof and post-op attributes.  0, or a negative error with
 * a one-line reason naming path in err; sum (may be NULL) gets the counts.
 */
int tbbt_synth_write_raw(struct tbbt_synth *s, const char *path,
                         struct tbbt_synth_summary *sum, char *err, size_t errlen);

/*
 * The whole job: pass B of tbbt-convert into temporary files (util/outfile.h: beside
 * the targets of trace_path and map_path, borrowed, after symbolic links; in the
 * temporary directory for a device or FIFO), the raw trace beside the trace's, then
 * the map and the trace renamed (or copied) into place.  On failure existing files
 * under either name are left as they were, no temporary file remains, and a negative
 * error comes back with a one-line reason in err.
 */
int tbbt_synth_run(struct tbbt_synth *s, const char *trace_path, const char *map_path,
                   struct tbbt_synth_summary *sum, char *err, size_t errlen);

#endif
