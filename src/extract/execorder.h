/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: the order in which pass B applies and writes the
 * records, the order the traced server executed them in as far as the trace tells,
 * not always the order the calls arrived in.
 *
 * Two clients that race for one name (one LINKs a lock file into place while the other
 * REMOVEs it) send calls that overlap: the second call arrives before the first's reply.
 * A multi-threaded server may then execute them in either order.  Applied in call
 * order, such a pair can contradict itself (pre-play correction then invents a lost
 * CREATE), and replayed in call order it gives the other outcome.  Which order the server
 * took is told first by the statuses: from the model's answer whether the entry existed
 * before the pair (the probe callback), the order whose predicted statuses both match
 * the trace's wins (a REMOVE called after a LINK but run before it: both got OK); when
 * the statuses cannot tell, by the replies (the one answered first ran first).  So a
 * record B moves just before an earlier-called record A when
 *   - both name one directory entry (directory handle, name) and one of them makes or
 *     removes it (CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR; LINK's new name; both
 *     names of RENAME; LOOKUP only reads it),
 *   - they overlapped (B was called before A's reply) and either only the order B, A
 *     explains both statuses, or the statuses do not tell and B's reply came first,
 *   - and no record between them that B may depend on had been answered before B was
 *     called: one of B's own client (the same connection) or one that names the same
 *     entry (those stay before B; another client's unrelated call may be passed:
 *     conservative replay would only have made B wait for it).
 * Also, B moves just before an earlier-called READDIR or READDIRPLUS A of its directory
 * that it overlapped when A's entries show B's effect while the entry was the other way
 * before B: a name B made is listed (B's success proves it was absent: MKDIR, SYMLINK,
 * MKNOD, LINK, a guarded or exclusive CREATE; else the model says so; for a RENAME's
 * target, or the listed entry is the object B moved, the same callback), or a name B
 * removed is missing from a whole listing (cookie 0, EOF): the server listed the
 * directory after it ran B (a READDIRPLUS of new/ racing another client's RENAME of a
 * message into it lists the message).  The other way round, a listing B moves before an
 * earlier-called A that it overlapped when it shows A's entry as it was before A (a name
 * A removed still listed, a name A made missing from a whole listing).
 * Records without a reply never move.  Definitions (handles, endpoints, credentials)
 * between A and B move before A with B, so that every record still follows the
 * definitions it uses.  Everything else keeps call order.
 *
 * A record is held (copied) only while a later call could still move before it: while
 * it names an entry or lists a directory and its reply is later than the latest call
 * seen, or while an earlier held record is held; at most max_held items are held.
 *
 * Not thread-safe: one per pass B, on the thread that applies the records.
 */
#ifndef TBBT_EXTRACT_EXECORDER_H
#define TBBT_EXTRACT_EXECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct tbbt__xorder;

/*
 * What leaves the buffer, in effective order: a record (rec borrowed for the call;
 * the callee may change it) or a definition (rec NULL; type TBBT_REC_HANDLE, _ENDPOINT
 * or _CRED with its ref).  A negative return stops the buffer: put/flush return it.
 */
typedef int (*tbbt__xorder_emit_cb)(void *arg, struct tbbt_trace_rec *rec, int type,
                                    uint32_t ref, const void *payload, size_t len);

/*
 * Whether the directory entry `second ? (fh2, name2) : (fh, name)` of rec exists now,
 * in the model that has applied everything emitted so far: 1 yes, 0 no, -1 unknown.
 */
typedef int (*tbbt__xorder_probe_cb)(void *arg, const struct tbbt_trace_rec *rec, bool second);

/*
 * Whether readdir entry e names the object that rec's entry (fh, name) names now, in the
 * same model: 1 yes, 0 no, -1 unknown.
 */
typedef int (*tbbt__xorder_same_cb)(void *arg, const struct tbbt_trace_rec *rec,
                                    const struct tbbt_entry *e);

/* A new, empty buffer.  probe may be NULL.  Given: tbbt__xorder_free(). */
struct tbbt__xorder *tbbt__xorder_new(unsigned max_held, tbbt__xorder_emit_cb emit,
                                      tbbt__xorder_probe_cb probe, void *arg);
void tbbt__xorder_free(struct tbbt__xorder *x);
/* Sets the object test of the listing rule (NULL: none). */
void tbbt__xorder_set_same(struct tbbt__xorder *x, tbbt__xorder_same_cb same);

/*
 * The next record in call order (rec borrowed for the call; it is copied if it must
 * wait).  Emits what may go.  0 or the callback's negative error.
 */
int tbbt__xorder_put_op(struct tbbt__xorder *x, struct tbbt_trace_rec *rec);
/*
 * The next definition item (type TBBT_REC_HANDLE, _ENDPOINT or _CRED, its ref), with
 * its payload (len bytes, copied if it must wait; NULL when the callback does not need
 * one), handed back to the callback as it was given.
 */
int tbbt__xorder_put_def(struct tbbt__xorder *x, int type, uint32_t ref, const void *payload,
                         size_t len);
/* The end of the input: emits everything held.  0 or the callback's negative error. */
int tbbt__xorder_flush(struct tbbt__xorder *x);
/* Records moved before an earlier-called one so far. */
uint64_t tbbt__xorder_moved(const struct tbbt__xorder *x);

#endif
