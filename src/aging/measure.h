/* SPDX-License-Identifier: MIT */
/*
 * Aging metrics of a directory tree (TBBT paper 3.3), from FIEMAP extents and
 * the file system's free-space map: what `tbbt-init --measure DIR` prints.
 * All averages weight files by their blocks, as the paper defines them; the
 * exact definitions are in docs/tbbt-init.md, "Measuring aging".
 *
 * Two layers: tbbt_measure_tree() walks a real tree (FIEMAP, FS_IOC_GETFSMAP,
 * inode location on ext4 and XFS); the accumulator below turns extents into the
 * metrics and is pure arithmetic, so tests and the aging code can feed it
 * extents directly.  Nothing here is thread-safe; use one accumulator per thread.
 */
#ifndef TBBT_AGING_MEASURE_H
#define TBBT_AGING_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tbbt_measure {
    uint64_t files;                 /* regular files measured (empty ones included) */
    uint64_t blocks;                /* their located data blocks (file system block size) */
    uint32_t block_size;
    double avg_block_distance;      /* see docs/tbbt-init.md; 0 when no block pairs */
    double avg_fragment_size;       /* blocks; 0 when no fragments */
    double avg_fragment_distance;   /* blocks; 0 when no file has two fragments */
    bool have_parent_distance;      /* false: no parent could be located (btrfs) */
    double avg_parent_distance;     /* blocks */
    bool have_inode_distance;
    double avg_inode_distance;      /* blocks; only where inodes can be located */
    bool have_free;
    double free_avg_fragment_size;  /* blocks; FS_IOC_GETFSMAP, whole file system */
    uint64_t free_fragments;
    /* Denominators and counters, for the JSON report and for checking. */
    uint64_t fragments;             /* fragments of all files */
    uint64_t block_pairs;           /* logically consecutive located block pairs */
    uint64_t fragment_pairs;        /* consecutive fragment pairs */
    uint64_t parent_files;          /* files with data whose parent was located */
    uint64_t inode_files;           /* files with data whose inode was located */
    uint64_t unlocated_blocks;      /* delalloc/unknown/inline/unaligned, not counted */
    uint64_t free_blocks;
    uint64_t dirs;                  /* directories walked, DIR included */
    uint64_t vanished;              /* entries gone (ENOENT) or replaced mid-walk */
    uint64_t skipped;               /* entries not measured for another error */
    char fs_type[16];               /* "ext4", "xfs", "btrfs" or "0x<magic>" */
};

/*
 * Measures the tree under dir (borrowed), staying on dir's file system and not
 * following symbolic links.  Fills *m (caller storage).  Returns 0, or a negative
 * error with a one-line reason in errbuf (dir is not a directory, the file system
 * does not support FIEMAP).  Files that vanish or change during the walk are
 * skipped and counted, never fatal.  Not reentrant-safe across threads sharing m.
 */
int tbbt_measure_tree(const char *dir, struct tbbt_measure *m, char *errbuf, size_t errlen);

/* Prints m as text, or as JSON with the keys of the command-line contract. */
void tbbt_measure_print(const struct tbbt_measure *m, bool json, FILE *out);

/*
 * Accumulator: running sums over files and free-space extents, O(1) memory.
 * Use: _init(); per file: _file_begin(), _file_extent() in increasing logical
 * order, _file_end(); free space: _free_extent() in increasing physical order;
 * then _finish() into a struct tbbt_measure.  All positions are in blocks.
 */
struct tbbt_measure_acc {
    uint64_t files, blocks, fragments, block_pairs, fragment_pairs;
    long double block_dist_sum, fragment_dist_sum;
    uint64_t parent_files, parent_blocks;
    long double parent_sum;
    uint64_t inode_files, inode_blocks;
    long double inode_sum;
    uint64_t unlocated_blocks;
    /* The file in progress. */
    uint64_t f_blocks, f_first, f_last;
    /* Free space: the merged run in progress. */
    uint64_t free_blocks, free_fragments, free_end;
    uint32_t free_dev;
    bool free_open;
};

void tbbt_measure_acc_init(struct tbbt_measure_acc *a);
void tbbt_measure_file_begin(struct tbbt_measure_acc *a);
/* A located run of n > 0 blocks: logical blocks [logical, logical+n) at physical
 * blocks [physical, physical+n).  Holes between runs are ignored. */
void tbbt_measure_file_extent(struct tbbt_measure_acc *a, uint64_t logical, uint64_t physical,
                              uint64_t n);
/* Blocks of the file whose location is unknown (counted, not measured). */
void tbbt_measure_file_unlocated(struct tbbt_measure_acc *a, uint64_t n);
/* Ends the file; parent / inode are its parent directory's first block and its
 * inode's block, each only if the matching have_ flag is true. */
void tbbt_measure_file_end(struct tbbt_measure_acc *a, bool have_parent, uint64_t parent,
                           bool have_inode, uint64_t inode);
/* A free extent of n blocks at physical on device dev; adjacent extents of the same
 * device are merged into one free fragment. */
void tbbt_measure_free_extent(struct tbbt_measure_acc *a, uint32_t dev, uint64_t physical,
                              uint64_t n);
/* Writes the averages and counts of a into m (the fields it owns; the walk fills
 * the rest).  have_free says whether free extents were collected. */
void tbbt_measure_acc_finish(const struct tbbt_measure_acc *a, bool have_free,
                             struct tbbt_measure *m);

#endif
