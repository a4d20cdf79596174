/* SPDX-License-Identifier: MIT */
/*
 * The end of a lab client program (nfs-scenario, udp-scenario) on an unexpected reply or
 * error: "PROG: MESSAGE" on stderr and exit status 1 (util/exit-codes.h).  Not thread-safe
 * beyond stdio's own locking.
 */
#ifndef TBBT_TOOLS_TOOL_DIE_H
#define TBBT_TOOLS_TOOL_DIE_H

/* Prints "PROG: " and the printf-style message to stderr, then exits TBBT_EXIT_FAIL. */
void tool_die(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#endif
