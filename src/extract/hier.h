/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: pass B of tbbt-convert, hierarchy extraction
 * (TBBT paper 3.1 "TBBT-IDs", 3.2 hierarchy map, and the ID-inserting third
 * pass of section 4).  Pass B reads pass A's records (a raw trace, or
 * tbbt-convert's spill) in two steps (an identity scan, then a replay through
 * the namespace model of src/ns), writes the final trace with the TBBT-ID
 * fields filled in, and the hierarchy map.
 */
#ifndef TBBT_EXTRACT_HIER_H
#define TBBT_EXTRACT_HIER_H

#include <stddef.h>

#include "extract/correct.h"
#include "ns/ns.h"
#include "trace/trace.h"

/*
 * Reads raw_trace (borrowed path; never changed), writes final_trace (same
 * records, handle, endpoint and credential definitions in the same places,
 * plus the ID fields) and, unless map_path is NULL, the hierarchy map.  The paths are
 * written as given: the caller writes to temporary names and renames them
 * if it must not clobber old files on failure.  On success returns 0 and,
 * if ns_out is not NULL, gives the model (caller frees with tbbt_ns_free();
 * tbbt_ns_summary() writes its counts).  On failure returns a negative error
 * (from the trace reader/writer or -errno) and a one-line reason naming the
 * file in errbuf; *ns_out is then NULL.  Memory: O(handles + objects +
 * names), never O(records).  With corr (borrowed; NULL: none) the replay is
 * also the pre-play of correction (correct.h): corrective records are
 * written before the records they repair, and corr counts the failures.
 */
int tbbt__hier_run(const char *raw_trace, const char *final_trace, const char *map_path,
                   struct tbbt__corr *corr, struct tbbt_ns **ns_out, char *errbuf,
                   size_t errlen);

/*
 * The same in two steps, for a caller that saves the identity scan's read of
 * the raw trace by calling tbbt_ns_ident_scan(ns, rec) for each record as
 * pass A writes it (same handle references): then only tbbt__hier_replay()
 * reads the raw trace.  Both return 0 or a negative error with a reason in
 * errbuf; ns is borrowed.
 */
int tbbt__hier_scan(struct tbbt_ns *ns, const char *raw_trace, char *errbuf, size_t errlen);
int tbbt__hier_replay(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *raw_trace,
                      const char *final_trace, const char *map_path, char *errbuf, size_t errlen);
/*
 * The same with `threads` > 1: this thread reads and decodes the raw trace
 * while a second one replays the records through the model (and the
 * corrector) and writes the final trace (a ring of record slots in between;
 * handle, endpoint and credential definitions travel as items, so the writer
 * shares no table with the reader).  The output is the same byte for byte.
 */
int tbbt__hier_replay_mt(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *raw_trace,
                         const char *final_trace, const char *map_path, int threads,
                         char *errbuf, size_t errlen);
/*
 * The replay with pass A's records from a spill (trace/spill.h) instead of a
 * raw trace, and pass A's handle, endpoint and credential tables (borrowed,
 * not changed; every reference a spilled record uses is in them).  The final
 * trace and the map are the same as from the raw trace pass A would have
 * written.
 */
int tbbt__hier_replay_spill(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *spill,
                            const struct tbbt_fhtab *fh, const struct tbbt_eptab *ep,
                            const struct tbbt_credtab *cred, const char *final_trace,
                            const char *map_path, int threads, char *errbuf, size_t errlen);

#endif
