/* SPDX-License-Identifier: MIT */
/*
 * fsdep: the object locks of the FS-dependency ordering policy (TBBT paper 3.4.1 and
 * Table 4).  The file system hierarchy is a shared data structure; each request reads
 * or writes some of its objects.  A request may be dispatched when every earlier
 * request that writes an object it reads, or reads or writes an object it writes, has
 * released its locks.  The scheduler (sched.h) admits requests in trace order; this
 * table tells it, for each new request, which earlier requests it must wait for.
 *
 * Objects are keys (clone << 32 | TBBT-ID), so clones never depend on each other.
 * Holders are request sequence numbers; whether a holder still holds its locks is
 * asked of the scheduler through a callback, so releasing costs nothing here.  The read
 * and write sets are also used alone, by tbbt-play's and tbbt-compare's racy-reply rule.
 *
 * Not thread-safe: the scheduler's caller serializes (the player under its mutex).
 */
#ifndef TBBT_SCHED_FSDEP_H
#define TBBT_SCHED_FSDEP_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

#define TBBT_FSDEP_MAX_OBJS 4

/* The objects one request reads and writes (Table 4), as TBBT-IDs. */
struct tbbt_fsdep_sets {
    uint64_t r[TBBT_FSDEP_MAX_OBJS], w[TBBT_FSDEP_MAX_OBJS];
    int nr, nw;
    /* READDIR(PLUS) paging: a page that continues a listing reads the position (its
     * directory and cookie) that the page before it writes (the cookie of its last
     * entry), so it goes out only once that page has answered.  0: none. */
    uint64_t page_r, page_w;
    /* Directory entries, (directory, name): the name a LOOKUP reads; the names a
     * CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, LINK (its new name) and RENAME (both)
     * make or take away.  0: none. */
    uint64_t name_r, name_w[2];
    /* Directory listings, by directory ID: the one a READDIR(PLUS) reads, the ones a name
     * change writes (each once; not the directory objects themselves: a LOOKUP of another
     * name need not wait, but their attributes change, tbbt_fsdep_changes()).  0: none. */
    uint64_t list_r, list_w[2];
};

/* Room for tbbt_fsdep_changes(). */
#define TBBT_FSDEP_MAX_CHANGES (TBBT_FSDEP_MAX_OBJS + 2)

/* Which locks tbbt_fsdep_admit() takes. */
enum tbbt_fsdep_scope {
    TBBT_FSDEP_ALL = 0,     /* objects, listing positions and names (fsdep order) */
    TBBT_FSDEP_NAMES = 1,   /* names bind: two clients racing for one name (a lock file)
                             * keep their traced order; object conflicts are reported
                             * without binding, nothing else waits (conservative) */
};

/*
 * Table 4 for rec, at the granularity of directory entries for name changes: read set
 * (READ, READDIR, GETATTR, READLINK, ACCESS, FS info: the object; LOOKUP: the directory,
 * the entry and the object found; every name change: its directories, whose handles it
 * needs) and write set (WRITE, SETATTR, COMMIT: the object; CREATE, MKDIR, SYMLINK,
 * MKNOD: the entry, the directory's listing and the object made, which the reply writes;
 * REMOVE, RMDIR: the entry, the listing and the object removed; RENAME: both entries and
 * listings, the object moved and the one replaced; LINK: the file, the new entry and its
 * listing).  READDIR also reads the listing and gets its
 * listing positions (page_r: the cookie a continuation starts from; page_w: the cookie
 * of the page's last traced entry).  IDs of 0 are left out.  Thread-safe.
 */
void tbbt_fsdep_sets(const struct tbbt_trace_rec *rec, struct tbbt_fsdep_sets *s);

/*
 * The objects whose attributes or contents the request of s changes: its write set and
 * the directories whose entries it changes, each once, into out (room for
 * TBBT_FSDEP_MAX_CHANGES); returns how many.  For the racy-reply rule (a reply that
 * shows an object such a request was changing at the same time is not checked).
 */
int tbbt_fsdep_changes(const struct tbbt_fsdep_sets *s, uint64_t *out);

/*
 * The object whose post-operation attributes rec's reply shows: the object a LOOKUP
 * found or a create made, else the object of its handle; 0 if none.  With
 * tbbt_fsdep_changes(), the racy-reply rule of tbbt-play and tbbt-compare.
 */
uint64_t tbbt_fsdep_shown(const struct tbbt_trace_rec *rec);

struct tbbt_fsdep;

/* True while request seq still holds its locks. */
typedef bool (*tbbt_fsdep_live_cb)(uint64_t seq, void *arg);
/* How request `waiter` conflicts with `holder` (tbbt_fsdep_dep_cb). */
enum tbbt_fsdep_dep {
    TBBT_FSDEP_DEP_INFO = 0,    /* an object both use (TBBT_FSDEP_NAMES): no wait */
    TBBT_FSDEP_DEP_OBJECT = 1,  /* an object or listing position: waiter waits */
    TBBT_FSDEP_DEP_NAME = 2,    /* a directory entry: waiter waits (the trace lists such
                                 * records in the order the traced server ran them) */
};
/* Request `waiter` conflicts with `holder`, which still holds its lock. */
typedef void (*tbbt_fsdep_dep_cb)(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind,
                                  void *arg);

/* A new, empty table.  Given: tbbt_fsdep_free(). */
struct tbbt_fsdep *tbbt_fsdep_new(tbbt_fsdep_live_cb live, tbbt_fsdep_dep_cb dep, void *arg);
void tbbt_fsdep_free(struct tbbt_fsdep *t);

/*
 * Registers request seq (sequence numbers rise in admission order) of clone with the
 * sets s: calls dep(holder, seq) once for every live earlier holder it conflicts with,
 * then records seq as a reader or the writer of its objects.
 */
void tbbt_fsdep_admit(struct tbbt_fsdep *t, uint64_t seq, uint32_t clone,
                      const struct tbbt_fsdep_sets *s, enum tbbt_fsdep_scope scope);

/* Objects the table tracks now (a statistic). */
unsigned tbbt_fsdep_size(const struct tbbt_fsdep *t);

#endif
