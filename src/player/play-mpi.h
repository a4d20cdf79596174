/* SPDX-License-Identifier: MIT */
/*
 * play-mpi: tbbt-play as one of N MPI ranks (docs/mpi.md), on top of src/mpi/tbbt-mpi.h.
 * What a rank replays (--distribute clones: its share of the images; --distribute
 * clients: the records of its share of the traced clients), the common start instant,
 * and the channel thread that runs during the replay: the only caller of MPI then, it
 * carries the engine's completion notices between the ranks (struct tbbt_engine_peer)
 * and tells every rank when one stops, so that all stop and still report.  The merged
 * report is play-main.c's (report-pack.c's blobs, gathered at rank 0).  Without MPI, or
 * not under mpirun, nothing here is used and tbbt-play is a single process.
 */
#ifndef TBBT_PLAYER_PLAY_MPI_H
#define TBBT_PLAYER_PLAY_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "mpi/tbbt-mpi.h"
#include "player/engine.h"
#include "player/report.h"

enum tbbt_play_dist { TBBT_PLAY_DIST_NONE = 0, TBBT_PLAY_DIST_CLONES, TBBT_PLAY_DIST_CLIENTS };

/* The images this process replays: first + i * stride for i < count. */
struct tbbt_play_images {
    uint32_t first, stride, count;
};

/*
 * The images of rank `rank` of `size` for --first-clone first and --clones clones: all of
 * them unless dist is CLONES, then clones rank, rank + size, ...  count 0: none.
 */
void tbbt_play_images_of(enum tbbt_play_dist dist, int rank, int size, uint32_t first,
                         uint32_t clones, struct tbbt_play_images *img);

/*
 * --distribute clients: which rank replays a record.  A client is the traced client
 * address, or with by_connection its address and port (one traced client connection:
 * captures made on one host, where every client has the address 127.0.0.1).  plan()
 * shares the clients out by their load, the records each sends (play-scan.c counts them):
 * heaviest first, each to the rank with the least load so far (ties: the lower key, the
 * lower rank), so every rank computes the same plan from the same trace.  A client the
 * plan lacks goes by its 64-bit hash (util/hash.h, seed "tbbt") modulo the number of
 * ranks.  mine() is a tbbt_engine_owner_cb (arg: this struct; I/O thread).
 */
struct tbbt_play_owner {
    int rank, size;
    bool by_connection;
    GHashTable *plan;       /* client key -> rank + 1 (plan()), or NULL */
    GArray *cache;          /* uint32 rank + 1 by endpoint reference, 0: not yet decided */
    GHashTable *clients;    /* the client keys seen (a set) */
    unsigned nmine;         /* ... of them this rank's */
};
/* load: client key (as by_connection wants it) -> records, GSIZE_TO_POINTER (borrowed). */
void tbbt_play_owner_plan(struct tbbt_play_owner *o, GHashTable *load);
bool tbbt_play_owner_mine(const struct tbbt_trace_rec *rec, const struct tbbt_eptab *eps,
                          void *arg);
void tbbt_play_owner_fini(struct tbbt_play_owner *o);

/*
 * Collective: may every rank go on?  rc 0 here, or negative with why (this rank's
 * one-line reason, already printed by it).  0 when all may; otherwise -1, and rank 0 prints
 * "tbbt-play: rank R (host): why" of the first failing rank.
 */
int tbbt_play_mpi_agree(int rc, const char *why);

/* The common start (docs/mpi.md, "Synchronized start"). */
struct tbbt_play_sync {
    struct tbbt_mpi_offset mine;        /* this rank's clock against rank 0's */
    struct tbbt_mpi_offset *all;        /* rank 0: every rank's (given: g_free()), else NULL */
    uint64_t start_at_ns;               /* the start instant in this rank's clock */
};
/* Collective: measures the offsets, picks the start instant on rank 0 and tells every
 * rank.  0 or -EIO. */
int tbbt_play_mpi_sync(struct tbbt_play_sync *s);

/*
 * The channel thread.  Started before the replay with the engine's stop eventfd (written
 * when another rank stops early) and, for --distribute clients, the peer whose queues it
 * carries (NULL: none).  _done(): this rank's replay is over (rc: the engine's, why: its
 * stop reason or NULL); the thread then sends what is queued and this rank's end, and
 * ends once every rank has ended.  _join() waits for it and returns the reason of the
 * first other rank that stopped early ("rank R (host): why", borrowed until _free()),
 * or NULL.
 */
struct tbbt_play_chan;
struct tbbt_play_chan *tbbt_play_chan_start(int stop_fd, struct tbbt_engine_peer *peer);
void tbbt_play_chan_done(struct tbbt_play_chan *c, int rc, const char *why);
const char *tbbt_play_chan_join(struct tbbt_play_chan *c);
void tbbt_play_chan_free(struct tbbt_play_chan *c);

/*
 * Collective, after the replay: this rank's line of the merged report (ri->what given:
 * g_free(); the other strings borrowed).  Measures the clock offsets again for the drift.
 * peer: --distribute clients' (its figures), else NULL.
 */
void tbbt_play_mpi_rank_end(struct tbbt_report_rank *ri, const struct tbbt_report *rep,
                            const struct tbbt_report_counts *cn,
                            const struct tbbt_play_sync *sync, uint64_t started_ns,
                            enum tbbt_play_dist dist, const struct tbbt_play_images *img,
                            const struct tbbt_engine_peer *peer,
                            const struct tbbt_play_owner *owner);
/* --rank-reports: this rank's own report as DIR/rank-R.json (DIR made if missing).  0, or
 * -1 with the reason printed. */
int tbbt_play_mpi_rank_report(const char *dir, const struct tbbt_report *rep,
                              const struct tbbt_report_counts *cn,
                              const struct tbbt_report_verify *v);

/*
 * Collective, after the replay and the ranks' --verify: every rank's report, counts and
 * line (mine, with its --verify) are gathered at rank 0 as report-pack.c blobs, the
 * ranks' starts shifted into rank 0's clock by sync's offsets.  Rank 0 gets the merged
 * report (*mrep, given: free with tbbt_report_free(); with the "mpi" and "ranks" keys),
 * the merged counts (*mcn, strings interned) and in *mall the merged --verify (verified
 * if any rank verified, verify.ok only if all agreed, checked and mismatches summed,
 * verify_failed if any failed; the other members zero); other ranks get *mrep NULL.
 * distribute: "clones" or "clients".  0, or -1 with a one-line reason printed on rank 0
 * (a blob that does not unpack, an MPI error).
 */
int tbbt_play_mpi_merge(const struct tbbt_report *rep, const struct tbbt_report_counts *cn,
                        const struct tbbt_report_rank *mine, const struct tbbt_play_sync *sync,
                        const char *distribute, struct tbbt_report **mrep,
                        struct tbbt_report_counts *mcn, struct tbbt_report_rank *mall);

#endif
