/* SPDX-License-Identifier: MIT */
/*
 * precheck: what tbbt-play checks before it asks any server anything (docs/tbbt-play.md,
 * "Checks before the server"): the output files can be written, the trace is a whole
 * TBBT trace, the manifest (resolve.h) and the map (ns.h, tbbt_ns_map_check()) are whole
 * and valid, and the three belong together (the map's header names the trace, the
 * manifest the map's checksum, every obj line of the manifest a start entry of the map).
 * It reads files only; it builds and sends nothing.  Not thread-safe (one call at a time).
 */
#ifndef TBBT_PLAYER_PRECHECK_H
#define TBBT_PLAYER_PRECHECK_H

#include <stddef.h>
#include <stdint.h>

#include "player/resolve.h"

#define TBBT_PRECHECK_OUTPUTS 4

struct tbbt_precheck {
    const char *trace;          /* --trace */
    const char *manifest;       /* --manifest */
    const char *map;            /* --map, or NULL: the manifest's map line, else TRACE.map */
    /* output files (NULL: none) and the option that names each, for messages */
    const char *outputs[TBBT_PRECHECK_OUTPUTS];
    const char *output_opts[TBBT_PRECHECK_OUTPUTS];
    /* out, set by a successful tbbt_precheck_run(): the map's root ID (its first entry's
       if that is the export root ".", else 0; tbbt_ns_map_info.root_id) */
    uint64_t map_root_id;
};

/*
 * Runs the checks in the order of docs/tbbt-play.md and stops at the first failure.
 * All strings of p are borrowed for the call.  Returns 0, p->map_root_id, *man (given: free with
 * tbbt_manifest_free()) and *map_path (given: g_free()), or -1 with a one-line reason
 * naming the bad file in err (*man and *map_path NULL).  Files that cannot be tied (a
 * version 2 map, a version 1 manifest, a map without a trace) are logged at INFO level.
 */
int tbbt_precheck_run(struct tbbt_precheck *p, struct tbbt_manifest **man,
                      char **map_path, char *err, size_t errlen);

#endif
