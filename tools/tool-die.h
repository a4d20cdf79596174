/* SPDX-License-Identifier: MIT */
/*
 * What the lab client programs (nfs-scenario, udp-scenario, nfs4-scenario, nfs4-replay)
 * share: their end on an unexpected reply or error ("PROG: MESSAGE" on stderr and exit
 * status 1, util/exit-codes.h), and their command line's parsing with --version.  Not
 * thread-safe beyond stdio's own locking.
 */
#ifndef TBBT_TOOLS_TOOL_DIE_H
#define TBBT_TOOLS_TOOL_DIE_H

#include <glib.h>

/* Prints "PROG: " and the printf-style message to stderr, then exits TBBT_EXIT_FAIL. */
void tool_die(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/*
 * Parses the command line with entries (borrowed; the GOptionEntry list ending in a
 * zeroed one) under a usage line of param and the summary: a bad option prints one
 * line and exits 2; *show_version set by the entries prints "PROG (tbbt) VERSION" and
 * the glib version and exits 0.  Leaves the operands in *argc, *argv.
 */
void tool_options(const char *prog, const char *param, const char *summary,
                  const GOptionEntry *entries, const gboolean *show_version, int *argc,
                  char ***argv);

#endif
