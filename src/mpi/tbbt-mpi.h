/* SPDX-License-Identifier: MIT */
/*
 * tbbt-mpi: the few MPI services a tool needs to run as one of N ranks under mpirun
 * (docs/mpi.md): start-up and shut-down, rank, size and host name, a barrier, the
 * offset of each rank's CLOCK_MONOTONIC from rank 0's measured by round trips, a
 * broadcast from rank 0, a gather of byte blobs at rank 0, and an agreement on whether
 * every rank may go on.  It does not know what a replay is: the player decides what to
 * send.  This header does not include <mpi.h>, so the modules above never depend on it.
 *
 * Two implementations, chosen at build time (src/mpi/CMakeLists.txt): mpi-open.c over
 * Open MPI when pkg-config finds ompi-c (TBBT_HAVE_MPI), mpi-none.c otherwise.  Without
 * MPI, or when the process was not started by an MPI launcher, the module is "inactive":
 * size 1, rank 0, every collective completes at once with the caller's own data, and MPI
 * is never initialized.
 *
 * MPI is process-wide, so this module is too: no context object.  Threads: init and
 * finalize on the main thread; the rest from one thread at a time (MPI_THREAD_SERIALIZED:
 * the caller serializes).  Collective calls (marked so) must be made by every rank, in
 * the same order.  Errors: 0 or a negative errno (-EIO for an MPI error, whose text is in
 * tbbt_mpi_error()).
 */
#ifndef TBBT_MPI_TBBT_MPI_H
#define TBBT_MPI_TBBT_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

/*
 * Starts MPI if the process was started by an MPI launcher (mpirun/orterun, or a PMIx
 * or PMI launcher such as srun: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK set), else
 * leaves it inactive.  argc/argv (may be NULL) are passed to MPI_Init_thread.  Call once,
 * before any other call, on the main thread.  0, or -EIO (MPI not started; the module
 * stays inactive and tbbt_mpi_error() says why).  Without MPI compiled in: 0, inactive
 * (even under mpirun: each process then runs alone, as today).
 */
int tbbt_mpi_init(int *argc, char ***argv);
/*
 * Shuts MPI down if tbbt_mpi_init() started it (collective then); no-op otherwise and
 * when called again.  Main thread.
 */
void tbbt_mpi_finalize(void);

/* True between tbbt_mpi_init() having started MPI and tbbt_mpi_finalize(). */
bool tbbt_mpi_active(void);
/* True if MPI support was compiled in (TBBT_HAVE_MPI). */
bool tbbt_mpi_compiled(void);
/* This process's rank (0 when inactive) and the number of ranks (1 when inactive). */
int tbbt_mpi_rank(void);
int tbbt_mpi_size(void);
/* This host's name (borrowed, static): MPI_Get_processor_name, or gethostname(). */
const char *tbbt_mpi_host(void);
/* The last MPI error's text (borrowed, static), "" if none. */
const char *tbbt_mpi_error(void);

/* Collective: returns once every rank has called it.  0 or -EIO. */
int tbbt_mpi_barrier(void);

/* One rank's clock against rank 0's (CLOCK_MONOTONIC, tbbt_now_ns()). */
struct tbbt_mpi_offset {
    int64_t offset_ns;   /* this rank's clock minus rank 0's: rank 0's time t is
                            t + offset_ns here (0 on rank 0) */
    uint64_t rtt_ns;     /* the shortest round trip it was measured with; the offset is
                            within rtt_ns / 2 of the truth (0 on rank 0) */
};

/*
 * Collective: measures every rank's clock offset from rank 0 (Cristian's algorithm:
 * rank 0 sends a ping to each rank in turn `rounds` times (>= 1); the rank answers with
 * its clock; the round trip with the shortest time gives the offset, as the rank's time
 * minus the midpoint of rank 0's send and receive times).  *mine: this rank's result.
 * all: NULL, or (rank 0 only) an array of tbbt_mpi_size() entries filled for every rank.
 * 0 or -EIO.  Inactive: *mine = {0, 0}, all[0] likewise.
 */
int tbbt_mpi_clock_offsets(unsigned rounds, struct tbbt_mpi_offset *mine,
                           struct tbbt_mpi_offset *all);

/* Collective: rank 0's len bytes at buf (borrowed) are copied into every rank's buf.
 * 0 or -EIO; inactive: nothing to do. */
int tbbt_mpi_bcast(void *buf, size_t len);

/*
 * Collective: every rank's blob (data, len: borrowed; len < 2 GiB) is gathered at rank 0.
 * Rank 0: *out is set to a new array (given: g_ptr_array_unref(), which frees the
 * elements) of tbbt_mpi_size() GBytes, indexed by rank; other ranks: *out = NULL.
 * 0 or -EIO (then *out = NULL).  Inactive: an array of one copy of the blob.
 */
int tbbt_mpi_gather(const void *data, size_t len, GPtrArray **out);

/*
 * Collective: may every rank go on?  rc: this rank's status (0: yes; negative: no), why:
 * its reason (borrowed, NULL for none).  Returns 0 if every rank passed 0; otherwise the
 * status of the lowest failing rank, with *first_why (may be NULL; given: g_free()) set
 * on every rank to "rank R (host): why" of that rank.  -EIO on an MPI error.  Inactive:
 * returns rc, *first_why = why copied as is (or NULL).
 */
int tbbt_mpi_agree(int rc, const char *why, char **first_why);

/* ---- point-to-point messages, while the ranks work on their own ------------------------- */

/* Tags of the callers' messages: 0 .. TBBT_MPI_TAG_MAX (the module's own are above). */
#define TBBT_MPI_TAG_MAX 0x7aff

/*
 * Sends msg (a new reference is taken; the caller keeps its own) with tag to every other
 * rank, without waiting: the module holds the bytes until each MPI_Isend completes, which
 * tbbt_mpi_progress() and tbbt_mpi_drain() check.  Messages between two ranks with the
 * same tag arrive in the order sent.  0 or -EIO; inactive or one rank: 0, nothing sent.
 */
int tbbt_mpi_send_all(int tag, GBytes *msg);
/*
 * The next message that has arrived with a tag of 0 .. TBBT_MPI_TAG_MAX, without
 * waiting: 0 with *from, *tag and *msg (given: g_bytes_unref()) set, -EAGAIN when none
 * has arrived, -EIO on an MPI error.  Inactive: -EAGAIN.
 */
int tbbt_mpi_recv(int *from, int *tag, GBytes **msg);
/* Completes the sends that MPI has finished with (frees their bytes).  Sends pending after it. */
unsigned tbbt_mpi_progress(void);
/* Waits until every send of tbbt_mpi_send_all() has completed (before a collective, or
 * tbbt_mpi_finalize()).  0 or -EIO. */
int tbbt_mpi_drain(void);

#endif
