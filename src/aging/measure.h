/* SPDX-License-Identifier: MIT */
/*
 * Aging metrics of a directory tree (TBBT paper 3.3), from FIEMAP extents and
 * the file system's free-space map: what `tbbt-init --measure DIR` prints.
 * All averages weight files by their blocks, as the paper defines them.
 */
#ifndef TBBT_AGING_MEASURE_H
#define TBBT_AGING_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tbbt_measure {
    uint64_t files;                 /* regular files measured */
    uint64_t blocks;                /* their blocks (file system block size) */
    uint32_t block_size;
    double avg_block_distance;      /* see docs/tbbt-init.md */
    double avg_fragment_size;       /* blocks */
    double avg_fragment_distance;   /* blocks */
    double avg_parent_distance;     /* blocks */
    bool have_inode_distance;
    double avg_inode_distance;      /* blocks; only where inodes can be located */
    bool have_free;
    double free_avg_fragment_size;  /* blocks; FS_IOC_GETFSMAP or the fs's tools */
    uint64_t free_fragments;
};

/*
 * Measures the tree under dir.  Returns 0, or a negative error with a
 * one-line reason in errbuf (e.g. the file system does not support FIEMAP).
 */
int tbbt_measure_tree(const char *dir, struct tbbt_measure *m, char *errbuf, size_t errlen);

/* Prints m as text, or as JSON with the keys of the command-line contract. */
void tbbt_measure_print(const struct tbbt_measure *m, bool json, FILE *out);

#endif
