/* SPDX-License-Identifier: MIT */
/*
 * Record spill: trace records handed from one pass of a program to a later
 * pass of the same program through a temporary file, in a private layout
 * that costs a copy per field to write and to read back (tbbt-convert's
 * pass A to pass B).  It is not the TBBT trace format: unversioned, host
 * byte order, no handle, endpoint or credential definitions (the passes
 * share the tables), never kept and never read by another program.  The
 * binary trace (trace.h) is what leaves a program.
 *
 * What a record holds after a round trip is what it would hold after a
 * round trip through the trace writer and reader: the header, the present
 * fields (and entry members by their flags), nothing else; ID fields too.
 * Each record also carries three numbers the writer's caller gives (how many
 * handles, endpoints and credentials were known when it was spilled,
 * struct tbbt_spill_defs), so that a later trace writer can place
 * definitions where a trace written directly would have them.
 *
 * A file that ends without its end mark (a failed write, a full disk) or
 * with a record whose lengths do not add up is refused (TBBT_E_TRUNC,
 * TBBT_E_BADREC), never trusted.  Not thread-safe: one writer or reader per
 * thread.
 */
#ifndef TBBT_TRACE_SPILL_H
#define TBBT_TRACE_SPILL_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

struct tbbt_spill_writer;
struct tbbt_spill_reader;

/* The sizes of the caller's tables when a record was spilled. */
struct tbbt_spill_defs {
    uint32_t nfh, nep, ncred;
};

/* Creates (truncates) path; NULL and *err (-errno) on failure.  Given: close or abort. */
struct tbbt_spill_writer *tbbt_spill_writer_open(const char *path, int *err);
/*
 * Appends rec with the caller's numbers (both borrowed for the call); 0 or
 * -errno (the first write error sticks).
 */
int tbbt_spill_put(struct tbbt_spill_writer *w, const struct tbbt_trace_rec *rec,
                   const struct tbbt_spill_defs *defs);
/* Writes the end mark and closes; 0 or -errno.  Frees w either way. */
int tbbt_spill_writer_close(struct tbbt_spill_writer *w);
/* Closes without the end mark (the file is then refused by a reader). NULL ok. */
void tbbt_spill_writer_abort(struct tbbt_spill_writer *w);
/* Records written so far. */
uint64_t tbbt_spill_writer_count(const struct tbbt_spill_writer *w);

/*
 * Opens path; NULL and *err (-errno) on failure.  Given: close.  With consume,
 * the file is emptied behind the reader as it goes (holes punched in what was
 * read, so its pages go back to the system while the caller writes its own
 * output: on a machine where fresh pages are dear, the output reuses them);
 * for a temporary file only, which is then of no use but to be removed.
 */
struct tbbt_spill_reader *tbbt_spill_reader_open(const char *path, bool consume, int *err);
/*
 * The next record into rec (cleared first) and the numbers given with it
 * into *defs: 1, or 0 after the last one, or TBBT_E_TRUNC / TBBT_E_BADREC /
 * -errno.
 */
int tbbt_spill_next(struct tbbt_spill_reader *r, struct tbbt_trace_rec *rec,
                    struct tbbt_spill_defs *defs);
/*
 * The numbers of the next record without reading it: 1, or 0 if there is
 * none, or an error as tbbt_spill_next().
 */
int tbbt_spill_peek(struct tbbt_spill_reader *r, struct tbbt_spill_defs *defs);
/* Bytes consumed so far, for error messages. */
uint64_t tbbt_spill_reader_offset(const struct tbbt_spill_reader *r);
void tbbt_spill_reader_close(struct tbbt_spill_reader *r);

#endif
