/* SPDX-License-Identifier: MIT */
/*
 * Read-ahead heuristic simulator: models of an NFS server's sequentiality heuristic
 * (the seqCount that decides how much read-ahead a READ triggers) and of the per-file
 * state table that holds it ("nfsheur").  Reference: Ellard and Seltzer, "NFS Tricks
 * and Benchmarking Traps", USENIX 2003 FREENIX (section 6.2 SlowDown, 6.3 the nfsheur
 * table, 7 cursors), and the FreeBSD 4 code it describes: nfsrv_read() in
 * sys/nfs/nfs_serv.c (the table, the default heuristic) and cluster_read() in
 * sys/kern/vfs_cluster.c (which seqCount values read ahead).
 *
 * Three heuristics, all capped at TBBT_RAHEUR_SEQMAX (IO_SEQMAX, 127):
 *   default   FreeBSD 4: a file new to the table starts at seqCount 4 when the read is
 *             at offset 0, else 1, with its expected offset set to the read's offset;
 *             then a read at offset 0 (while seqCount > 0) or at the expected offset
 *             adds one, any other read drops seqCount to 1 (if it was above 1) or 0.
 *   slowdown  the same, but a read within TBBT_RAHEUR_WINDOW (64 KiB) of the expected
 *             offset leaves seqCount alone and a farther one halves it.
 *   cursor    several cursors per file, each an expected offset and a seqCount under
 *             the SlowDown rules; a read goes to the cursor it matches (exactly, else
 *             the nearest within 64 KiB); a read that matches none opens a new cursor
 *             at seqCount 1 (the least recently used cursor is recycled past the
 *             per-file limit), so random reads trigger no read-ahead.
 * A read "triggers read-ahead" when its seqCount is above the threshold (default 1:
 * FreeBSD 4's cluster_read() reads ahead for a one-block request only when
 * seqcount > 1, and ffs_read()'s non-clustered path tests seqcount > 1 too).
 *
 * The table is an open hash table of `size` slots probed linearly for `probes` slots
 * from the key's home slot; a key not found takes an empty probed slot, else ejects
 * the least recently used probed entry (policy LRU, the paper's description), or, with
 * policy USECOUNT, FreeBSD 4's exact loop with its nh_use counters.  An ejected file
 * loses its state: its next read starts it fresh.
 *
 * Nothing here prints or is thread-safe; use one simulator per thread.
 */
#ifndef TBBT_RAHEUR_RAHEUR_H
#define TBBT_RAHEUR_RAHEUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TBBT_RAHEUR_SEQMAX 127          /* IO_SEQMAX: seqCount never exceeds it */
#define TBBT_RAHEUR_WINDOW 65536        /* SlowDown's "within 64k" (paper 6.2) */
#define TBBT_RAHEUR_TABLE_SIZE 64       /* FreeBSD 4 NUM_HEURISTIC */
#define TBBT_RAHEUR_PROBES 4            /* FreeBSD 4 nfsrv_read(): int try = 4 */
#define TBBT_RAHEUR_CURSORS 8           /* ours: enough for the paper's 8-stride test */
#define TBBT_RAHEUR_THRESHOLD 1         /* read-ahead when seqCount > 1 (cluster_read) */
#define TBBT_RAHEUR_MAX_TABLE (1u << 24)
#define TBBT_RAHEUR_MAX_CURSORS 1024

enum tbbt_raheur_kind {
    TBBT_RAHEUR_DEFAULT = 0,
    TBBT_RAHEUR_SLOWDOWN = 1,
    TBBT_RAHEUR_CURSOR = 2,
};

/* Which probed entry a key not in the table replaces. */
enum tbbt_raheur_policy {
    TBBT_RAHEUR_LRU = 0,        /* an empty probed slot, else the least recently used one */
    TBBT_RAHEUR_USECOUNT = 1,   /* FreeBSD 4: nh_use counters (init 64, +16 per use, max
                                 * 2048, -1 per probe that passes over the slot) */
};

/* How a key picks its home slot. */
enum tbbt_raheur_hash {
    TBBT_RAHEUR_HASH_MIX = 0,   /* a 64-bit mixer (splitmix64 finalizer), modulo size */
    TBBT_RAHEUR_HASH_MOD = 1,   /* key modulo size (FreeBSD hashes the vnode's index) */
};

struct tbbt_raheur_config {
    enum tbbt_raheur_kind kind;
    enum tbbt_raheur_policy policy;
    enum tbbt_raheur_hash hash;
    uint32_t table_size;    /* 1..TBBT_RAHEUR_MAX_TABLE slots */
    uint32_t probes;        /* 1..table_size */
    uint32_t cursors;       /* 1..TBBT_RAHEUR_MAX_CURSORS; only the cursor heuristic uses it */
    uint32_t threshold;     /* read-ahead when seqCount > threshold (0..126) */
};

/* Fills c with the defaults above for heuristic kind (LRU, mixed hash). */
void tbbt_raheur_config_default(struct tbbt_raheur_config *c, enum tbbt_raheur_kind kind);
/* "default", "slowdown", "cursor" (NULL if unknown) and back (-1 if unknown). */
const char *tbbt_raheur_kind_name(enum tbbt_raheur_kind kind);
int tbbt_raheur_kind_by_name(const char *name);
const char *tbbt_raheur_policy_name(enum tbbt_raheur_policy policy);
int tbbt_raheur_policy_by_name(const char *name);
const char *tbbt_raheur_hash_name(enum tbbt_raheur_hash hash);
int tbbt_raheur_hash_by_name(const char *name);
/* 0 if c is usable, else -1 with a one-line reason in err ("--probes 9 exceeds ..."). */
int tbbt_raheur_config_check(const struct tbbt_raheur_config *c, char *err, size_t errlen);

/* ---- the state table (nfsheur.c) ------------------------------------------------- */

/* One cursor: the offset the next sequential read starts at, and its seqCount. */
struct tbbt_raheur_cursor {
    uint64_t nextr;
    uint32_t seqcount;
    uint64_t last_use;      /* table tick of its last read (cursor LRU) */
};

/* One slot.  cur points into the table's cursor array (ncursors slots per entry). */
struct tbbt_nfsheur_entry {
    uint64_t key;
    bool in_use;
    uint64_t last_use;      /* table tick of its last lookup (LRU policy) */
    int32_t use;            /* nh_use (USECOUNT policy) */
    uint32_t ncur;          /* cursors in use (0 for a fresh entry) */
    struct tbbt_raheur_cursor *cur;
};

/* What one lookup did. */
struct tbbt_nfsheur_lookup {
    bool found;             /* the key had an entry: its state is kept */
    bool ejected;           /* the key took a slot that held another key */
    uint64_t ejected_key;   /* that key, with ejected */
    uint32_t slot;          /* the slot the key now has */
};

struct tbbt_nfsheur;
/*
 * A table of size slots, probes probes, ncursors cursors per entry (each >= 1, probes
 * <= size; the caller checks with tbbt_raheur_config_check).  Caller frees with
 * tbbt_nfsheur_free().
 */
struct tbbt_nfsheur *tbbt_nfsheur_new(uint32_t size, uint32_t probes, uint32_t ncursors,
                                      enum tbbt_raheur_policy policy,
                                      enum tbbt_raheur_hash hash);
void tbbt_nfsheur_free(struct tbbt_nfsheur *t);
/* The home slot of key. */
uint32_t tbbt_nfsheur_home(const struct tbbt_nfsheur *t, uint64_t key);
/*
 * Finds key's entry, or installs a fresh one (ncur 0) in a probed slot, ejecting
 * another key if that slot was taken; *out says which.  Returns the entry (borrowed,
 * valid until the next lookup or free).  Counts a use of the entry.
 */
struct tbbt_nfsheur_entry *tbbt_nfsheur_lookup(struct tbbt_nfsheur *t, uint64_t key,
                                               struct tbbt_nfsheur_lookup *out);
/* True if key has an entry in its probe window (no side effects: no use counted). */
bool tbbt_nfsheur_contains(const struct tbbt_nfsheur *t, uint64_t key);
/* The entry in slot i (borrowed), or NULL if i >= size. */
const struct tbbt_nfsheur_entry *tbbt_nfsheur_slot(const struct tbbt_nfsheur *t, uint32_t i);
/* Ejections so far. */
uint64_t tbbt_nfsheur_ejections(const struct tbbt_nfsheur *t);
/* The lookup counter (one tick per lookup); cursors use it as their clock. */
uint64_t tbbt_nfsheur_tick(const struct tbbt_nfsheur *t);

/* ---- the simulator (raheur.c) ---------------------------------------------------- */

/* What one read did. */
struct tbbt_raheur_result {
    uint32_t seqcount;      /* the seqCount the read was served with */
    bool readahead;         /* seqcount > threshold */
    bool fresh;             /* the file had no state (first read, or ejected before) */
    bool ejected;           /* installing the file ejected another file's state */
    uint64_t ejected_key;   /* that file, with ejected */
    uint32_t cursor;        /* cursor heuristic: index of the cursor used */
    bool new_cursor;        /* cursor heuristic: a cursor was opened for this read */
    bool recycled;          /* cursor heuristic: ... by recycling the file's LRU cursor */
};

struct tbbt_raheur_stats {
    uint64_t reads;
    uint64_t readahead;                          /* reads that triggered read-ahead */
    uint64_t ejections;
    uint64_t fresh;                              /* reads that found no state */
    uint64_t new_cursors, recycled_cursors;      /* cursor heuristic */
    uint64_t hist[TBBT_RAHEUR_SEQMAX + 1];       /* reads per seqCount */
};

struct tbbt_raheur;
/*
 * A simulator with configuration c (copied; it must pass tbbt_raheur_config_check,
 * else NULL and the reason in err).  Caller frees with tbbt_raheur_free().
 */
struct tbbt_raheur *tbbt_raheur_new(const struct tbbt_raheur_config *c, char *err,
                                    size_t errlen);
void tbbt_raheur_free(struct tbbt_raheur *h);
/*
 * Feeds one read of file key at offset that returned count bytes (the server's
 * expected offset becomes offset + count; a read of 0 bytes leaves it where it was,
 * as FreeBSD does for a read at or past the end of the file).  Returns the seqCount
 * the read was served with; res (may be NULL) gets the details.
 */
uint32_t tbbt_raheur_read(struct tbbt_raheur *h, uint64_t key, uint64_t offset,
                          uint64_t count, struct tbbt_raheur_result *res);
/* Counters so far (borrowed, valid until free). */
const struct tbbt_raheur_stats *tbbt_raheur_stats(const struct tbbt_raheur *h);
/* The configuration in use (borrowed). */
const struct tbbt_raheur_config *tbbt_raheur_config(const struct tbbt_raheur *h);
/* The table (borrowed), e.g. to look at entries. */
const struct tbbt_nfsheur *tbbt_raheur_table(const struct tbbt_raheur *h);

#endif
