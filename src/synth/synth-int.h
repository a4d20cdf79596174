/* SPDX-License-Identifier: MIT */
/*
 * Private to the synth module: the generator's state, shared by synth.c (read
 * stream) and synth-write.c (raw trace, pass B, renames).  See synth.h.
 */
#ifndef TBBT_SYNTH_SYNTH_INT_H
#define TBBT_SYNTH_SYNTH_INT_H

#include <glib.h>

#include "synth/synth.h"
#include "util/util.h"

#define TBBT__SYNTH_ROOT_FILEID 2ull        /* the export root (fsid 1) */
#define TBBT__SYNTH_RA_FILEID 3ull          /* ra/ */
#define TBBT__SYNTH_DIRID0 10ull            /* ra/g<N>/: 10 + group index */
#define TBBT__SYNTH_FILEID0 1000ull         /* files: 1000 + index in the whole file set */
#define TBBT__SYNTH_SETUP_STEP 100000ull    /* ns between set-up records (MNT, LOOKUP) */
#define TBBT__SYNTH_SETUP_GAP 1000000ull    /* ns from the last set-up record to the reads */
#define TBBT__SYNTH_MAX_LATENCY 500000ull   /* ns from a call to its reply, at most */

struct tbbt__synth_reader {
    struct tbbt_reorder *ro;    /* NULL without reordering */
    uint64_t in;                /* next position of its stride order to generate */
};

struct tbbt_synth {
    struct tbbt_synth_cfg cfg;  /* rate filled in */
    GArray *files;              /* struct tbbt_synth_file, map order */
    uint32_t ngroups;           /* group directories the trace names */
    uint32_t next_fileid;       /* while building the file set */
    uint32_t *reader_file;      /* reader -> index into files */
    uint64_t nblocks;           /* reads per reader */
    uint64_t period_ns;         /* between two reads of one reader */
    uint64_t latency_ns;        /* call to reply */
    uint64_t setup_ops;         /* MNT and LOOKUP records before the reads */
    uint64_t reads_start_ns;    /* call time of reader 0's first read */
    struct tbbt__synth_reader *rd;
    uint64_t round;             /* the read generation loop: seq of the next read */
    uint32_t next_reader;       /* ... and its reader */
};

#endif
