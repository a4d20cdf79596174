/* SPDX-License-Identifier: MIT */
/*
 * handles: the player's table from TBBT-ID to the file handle the server under test
 * gave that object (TBBT paper 3.4: the trace names objects by TBBT-ID; the player
 * learns each object's handle at start-up, by looking up the paths of the initial
 * image, or from the reply that created it during replay).  One table per clone.
 *
 * Storage is a two-level array of pages of TBBT_HANDLES_PAGE slots, pages made on
 * first use, so memory follows the IDs in use; IDs go up to TBBT_HANDLES_MAX_ID.
 *
 * Threading: pages are published with an atomic store, so tbbt_handles_peek() may run
 * on any thread while one thread makes pages with tbbt_handles_slot().  The slots
 * themselves are plain data: the player writes a slot on its receive thread and reads
 * it on its send thread only after a hand-off under the scheduler's mutex.
 */
#ifndef TBBT_PLAYER_HANDLES_H
#define TBBT_PLAYER_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

#define TBBT_HANDLES_PAGE 1024u
#define TBBT_HANDLES_MAX_ID ((uint64_t)1 << 26)   /* 67 M objects */
#define TBBT_HANDLE_MAX 64                         /* NFSv3 NFS3_FHSIZE */

/* What the player knows about one object's handle. */
enum tbbt_handle_state {
    TBBT_HANDLE_NONE = 0,       /* never resolved: calls needing it are skipped */
    TBBT_HANDLE_KNOWN = 1,      /* data[0..len) is the server's handle */
    TBBT_HANDLE_PENDING = 2,    /* the call that makes the object is in flight */
    TBBT_HANDLE_FAILED = 3,     /* making or finding the object failed: skip dependents */
};

struct tbbt_handle {
    uint8_t state;              /* enum tbbt_handle_state */
    uint8_t len;                /* bytes of data, <= TBBT_HANDLE_MAX */
    uint8_t data[TBBT_HANDLE_MAX];
};

struct tbbt_handles;

/* A new, empty table.  Given: free with tbbt_handles_free().  Never fails. */
struct tbbt_handles *tbbt_handles_new(void);
/* Frees h and its pages; NULL is a no-op. */
void tbbt_handles_free(struct tbbt_handles *h);

/*
 * The slot of id, made (state NONE) if its page did not exist.  NULL for id 0 or id
 * >= TBBT_HANDLES_MAX_ID.  Borrowed: valid while h lives.  One thread at a time.
 */
struct tbbt_handle *tbbt_handles_slot(struct tbbt_handles *h, uint64_t id);

/* The slot of id if its page exists, else NULL.  Any thread (see the file comment). */
struct tbbt_handle *tbbt_handles_peek(const struct tbbt_handles *h, uint64_t id);

/*
 * Binds id to the handle fh[0..len) (state KNOWN).  Returns false (nothing changed)
 * for an id out of range or len 0 or > TBBT_HANDLE_MAX.  Same threading as _slot().
 */
bool tbbt_handles_set(struct tbbt_handles *h, uint64_t id, const void *fh, uint32_t len);

/* The handle of id if KNOWN, else NULL.  Any thread (see the file comment). */
const struct tbbt_handle *tbbt_handles_known(const struct tbbt_handles *h, uint64_t id);

/* Number of KNOWN slots set through tbbt_handles_set() (a statistic). */
uint64_t tbbt_handles_count(const struct tbbt_handles *h);

#endif
