/* SPDX-License-Identifier: MIT */
/*
 * The initial file system image of a trace (TBBT paper 3.2, 3.3): every object
 * of the hierarchy map that exists at trace start, created under a root
 * directory, its files written with non-zero data, optionally aged by
 * interleaved appends, in one or more clones; and the manifest that tells the
 * player where each TBBT-ID lives.  The objects are made through ordinary
 * system calls under a local directory, or through NFSv3 calls to a server
 * (opts.server), which then makes every object itself.  docs/tbbt-init.md.
 */
#ifndef TBBT_AGING_IMAGE_H
#define TBBT_AGING_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tbbt_image_opts {
    const char *map;            /* hierarchy map (borrowed) */
    const char *root;           /* target directory (must exist); with server, its absolute
                                 * path on the server (NULL: the export) */
    const char *manifest;       /* manifest path (outside root) */
    uint32_t clones;            /* copies of the image: 1 builds in root itself, N > 1 in
                                 * root/tbbt-clone-0 .. root/tbbt-clone-(N-1) */
    uint64_t seed;
    uint64_t scope;             /* interleaving scope in bytes (0: no aging) */
    uint32_t appends;           /* appends per file (1: each file written at once) */
    bool force;                 /* a previous tbbt-init image in root is removed first */
    bool progress;              /* progress line on stderr */
    /* synthetic objects (paper 3.2): fill the file system to `fill` of its capacity */
    double fill;                /* 0: none; else the target utilization, 0 < fill < 1 */
    const char *sizes;          /* file size table ("SIZE WEIGHT" lines), NULL: the sizes
                                 * of the map's files, or the built-in table without any */
    double dir_ratio;           /* new directories per synthetic file; < 0: the map's */
    double distortion;          /* 0: new objects go to directories uniformly; 1: in
                                 * proportion to what they hold (unbalanced fan-out) */
    double merge;               /* share of synthetic objects put into the map's directories */
    bool fragment_free;         /* with aging: filler files take part in the interleaving
                                 * and are deleted at the end, fragmenting the free space */
    /* the paper's two unimplemented controls */
    bool spread;                /* files made in a seeded order across directories, not
                                 * directory by directory: parent and inode distance grow */
    uint32_t spacers;           /* files made after each file and deleted at the end:
                                 * inode distance grows */
    uint64_t spacer_size;       /* their size (0: empty); with data they also push the next
                                 * file's blocks away: parent and inode distance grow */
    /* aging by class: appends per file (0: as `appends`) */
    uint32_t synthetic_appends, filler_appends, large_appends;
    uint64_t large_size;        /* files of at least this size are "large" (0: no class) */
    /* building through NFSv3 (NULL server: through local system calls) */
    const char *server;         /* host name or address of the NFS server */
    const char *export_path;    /* path to MOUNT (the export's real path) */
    uint16_t nfs_port, mount_port;  /* 0: ask the server's portmapper */
    uint32_t outstanding;       /* NFS calls in flight (0: 128) */
    uint32_t connections;       /* NFS connections (0: 2) */
    int timeout_ms;             /* longest wait for one NFS reply (0: 30000) */
    /* under MPI (docs/tbbt-init.md "Under MPI"): this process is rank `rank` of `ranks`
     * (ranks 0 or 1: it builds everything alone) and builds clones rank, rank + ranks, ...;
     * the ranks' builds are collective calls of the mpi module (src/mpi/tbbt-mpi.h), with
     * the same options on every rank, and ranks <= clones */
    uint32_t rank, ranks;
};

void tbbt_image_opts_init(struct tbbt_image_opts *o);

/* What a build did (also in the manifest). */
struct tbbt_image_stats {
    uint64_t dirs, files, links, symlinks, others;
    uint64_t bytes;             /* file data written */
    uint64_t appends;           /* write sessions (open/write/close) */
    uint64_t unknown_sizes;     /* files whose size came from the size distribution */
    uint64_t synthetic_files, synthetic_dirs, synthetic_bytes;
    uint64_t fillers, filler_bytes;  /* written during aging, deleted at the end */
    uint64_t spacers;           /* made and deleted (--spacers) */
    double utilization;         /* used / capacity of the file system at the end */
    double seconds;
};

/*
 * Builds the image.  Returns 0, or a negative error with a one-line reason in
 * errbuf (bad map entry with its line, a path that would leave the root,
 * ENOSPC, a non-empty root without --force ...).  Once the root is accepted
 * the manifest is written whatever happens next, saying how far the build
 * got (a refused root leaves an earlier manifest as it was).  With o->ranks > 1
 * (collective, main thread): every rank returns the same status, the reason then
 * "rank R (host): ..." of the first failing rank; rank 0 alone prepares the root and
 * writes the manifest, and its *st is the sum over the ranks.
 */
int tbbt_image_build(const struct tbbt_image_opts *o, struct tbbt_image_stats *st, char *errbuf,
                     size_t errlen);

#endif
