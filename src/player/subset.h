/* SPDX-License-Identifier: MIT */
/*
 * subset: the objects and clients of a spatial scale-down (tbbt-play --subset-client,
 * --subset-subtree; docs/tbbt-play.md): which TBBT-IDs the start-up resolves and which
 * records the replay keeps.  What it does not do: parse options, read the trace.
 *
 * Threading: filled by the main thread before the replay; during the replay only the
 * engine's I/O thread calls tbbt_subset_filter() (which adds the objects made inside the
 * subset); the main thread reads crossing after the replay.
 */
#ifndef TBBT_PLAYER_SUBSET_H
#define TBBT_PLAYER_SUBSET_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ns/manifest.h"
#include "trace/trace.h"

/* A subset: caller storage, zeroed, then filled; tbbt_subset_fini() frees what it holds. */
struct tbbt_subset {
    char **clients;             /* NULL: any client; else client addresses (owned, g_strfreev) */
    GHashTable *ids;            /* NULL: any object; else TBBT-IDs in the subset (owned) */
    uint64_t root_id;           /* the image root's TBBT-ID: in every subset */
    uint64_t crossing;          /* records naming objects in and out of the subset */
};

/*
 * Adds to ss the TBBT-IDs of m (borrowed) whose path lies under one of the top-level
 * directories names (borrowed, NULL-terminated); creates ss->ids.
 */
void tbbt_subset_add_tops(struct tbbt_subset *ss, const struct tbbt_manifest *m, char **names);

/* Whether TBBT-ID id is wanted (tbbt_resolve_opts.want; arg: the subset). */
bool tbbt_subset_want(uint64_t id, void *arg);

/*
 * The engine's record filter (arg: the subset, eps borrowed): true for a record of a
 * subset client whose objects all lie in the subset; counts the records that name
 * objects in and out of it (crossing).  Objects a record makes in a subset directory
 * (not at the root level) join the subset.
 */
bool tbbt_subset_filter(const struct tbbt_trace_rec *rec, const struct tbbt_eptab *eps,
                        void *arg);

/* Frees what ss holds (not ss). */
void tbbt_subset_fini(struct tbbt_subset *ss);

#endif
