/* SPDX-License-Identifier: MIT */
/*
 * Private to tbbt-init's planning: the state of one image build, shared by image.c (the
 * phases, the clones, the manifest, the root) and image-fill.c (the synthetic objects),
 * and the functions each calls in the other.  Nothing here is thread-safe: the build
 * runs on one thread (image-int.h).
 */
#ifndef TBBT_AGING_PLAN_INT_H
#define TBBT_AGING_PLAN_INT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "aging/image.h"
#include "aging/image-int.h"
#include "ns/manifest.h"
#include "ns/ns.h"

#define RESERVOIR 4096              /* known sizes kept to draw unknown ones from */

struct file {
    uint32_t path;                  /* offset in paths */
    uint64_t size;
    bool unknown;
    bool filler;                    /* deleted after the data phase */
    bool synthetic;
    bool written;                   /* its data is there already (no aging) */
};

/* A directory new objects may go to. */
struct dir {
    uint32_t path;                  /* offset in dpaths */
    bool synthetic;
    bool keep_empty;                /* the trace removes it (RMDIR, or a RENAME over it):
                                     * no synthetic object may go in, or that fails */
};

struct build {
    const struct tbbt_image_opts *o;
    struct tbbt_image_stats *st;
    char *errbuf;
    size_t errlen;
    const struct tbbt__image_backend_ops *ops;
    struct tbbt__image_be *be;      /* the backend's context */
    GRand *rand;
    GString *paths;                 /* NUL-separated paths of files (phase 2) */
    GArray *files;                  /* struct file */
    GHashTable *first;              /* id -> first path (for hard links), owned strings */
    GHashTable *seen;               /* ids of files with several names met so far */
    GString *pend_paths;            /* --spread: paths of the pending files and links */
    GArray *pend_files, *pend_links;    /* struct pending */
    GString *spacers;               /* NUL-separated paths of spacer files */
    struct tbbt_manifest_writer man;    /* the manifest, written as the build goes */
    uint64_t reservoir[RESERVOIR];
    uint64_t known;                 /* known sizes seen */
    uint64_t total_bytes;           /* data planned so far (the progress line) */
    uint64_t started_ns, last_progress_ns;
    GString *dpaths;                /* NUL-separated paths of directories */
    GArray *dirs;                   /* struct dir: directories of the image */
    GArray *class_dirs[2];          /* indices in dirs: the map's (EXT), synthetic (SYN) */
    GArray *class_parents[2];       /* the directory of each object in the class (distortion) */
    GArray *table;                  /* --sizes: size, weight pairs (double) */
    double table_total;
    uint64_t syn_seq;               /* synthetic names made */
    uint64_t capacity, block;       /* file system bytes and block size */
    char *clone_dir;                /* relative to root: "." or tbbt-clone-K */
    uint32_t clone;
    struct tbbt__image_attrs root_attrs;    /* the map root's (path ".") */
    struct tbbt_ns_map_info map;    /* tbbt_ns_map_check()'s: version, checksum */
    /* --fill with several clones: the file system's use before the first clone, shared
     * by every clone's plan (the same whether the clones are built in turn or at once) */
    bool have_base;
    uint64_t base_capacity, base_used, base_block;
    /* under MPI (o->ranks > 1; image-team.c): this rank's manifest lines go to a memory
     * stream, one part per clone, gathered by rank 0 at the end */
    bool team;
    FILE *part_f;                   /* open_memstream() of part_buf, part_len */
    char *part_buf;
    size_t part_len;
    GArray *parts;                  /* struct tbbt__image_part: where each clone's lines start */
    bool built_agreed;              /* the "every clone built" agreement is behind us */
};

/* Where one clone's manifest lines start in this rank's part stream. */
struct tbbt__image_part {
    uint32_t clone;
    uint64_t off;
};

enum { EXT = 0, SYN = 1 };      /* the classes of directories: the map's, synthetic */

/* image.c */
/* The build's error: the first reason (printf-style) is kept in its errbuf; returns rc. */
int tbbt__image_fail(struct build *b, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes a made line (for --force) of path, relative to the clone directory. */
void tbbt__image_made(struct build *b, char kind, const char *path);
/* Whether the build ages (scope and appends): data is then written in sets of appends. */
bool tbbt__image_aging(const struct build *b);
/* Appends len bytes to file f in one session; 0 or -errno. */
int tbbt__image_append(struct build *b, const struct file *f, uint64_t len);
/* The build's error for a failed write of f; returns rc. */
int tbbt__image_data_fail(struct build *b, const struct file *f, int rc);

/* image-root.c */
/* The root made ready (empty, or --force: the previous image removed) and marked; 0 or an
 * error (the reason in the build's errbuf).  One process (rank 0). */
int tbbt__image_prepare_root(struct build *b);
/* A local root: the manifest must not lie inside it.  0 or -EINVAL (the reason in the
 * build's errbuf). */
int tbbt__image_manifest_outside(struct build *b);

/* image-fill.c */
/* --sizes FILE into the build's table; 0 or an error (the reason in the build's errbuf). */
int tbbt__image_read_sizes(struct build *b);
/* Adds a directory new objects may go to (path copied). */
void tbbt__image_add_dir(struct build *b, const char *path, bool synthetic, bool keep_empty);
/* One size from the distribution: --sizes' table, the map's sizes, or the built-in one. */
uint64_t tbbt__image_draw_size(struct build *b);
/* Plans this clone's synthetic files and the fillers, before the data phase; 0 or an
 * error (the reason in the build's errbuf). */
int tbbt__image_plan_fill(struct build *b);
/* After the clone's data phase: its fillers go and its files are trimmed to their size;
 * 0 or an error (the reason in the build's errbuf). */
int tbbt__image_finish_fill(struct build *b);
/* After the last clone (every clone built, on every rank): small synthetic files close
 * the gap to the target, or the newest go when it is overshot, in the last clone; 0 or an
 * error (the reason in the build's errbuf). */
int tbbt__image_top_up(struct build *b);

/* image-team.c: building under MPI (docs/tbbt-init.md "Under MPI") */
/* Starts this rank's part stream (team builds only). */
void tbbt__image_team_init(struct build *b);
void tbbt__image_team_fini(struct build *b);
/* Marks where clone k's manifest lines start. */
void tbbt__image_team_clone(struct build *b, uint32_t k);
/*
 * Collective: may every rank go on?  rc is this rank's status, its reason in the build's
 * errbuf.  Returns 0, or the first failing rank's status, and then errbuf holds "rank R
 * (host): reason" on every rank.  Outside a team: rc.
 */
int tbbt__image_team_agree(struct build *b, int rc);
/*
 * Collective: rank 0 gathers every rank's part and stats and writes the parts to w in
 * clone order; *st becomes the sum of every rank's stats (utilization and seconds are
 * rank 0's to set).  0 or an error (reason in errbuf).
 */
int tbbt__image_team_merge(struct build *b, struct tbbt_manifest_writer *w);

#endif
