/* SPDX-License-Identifier: MIT */
/*
 * Exit codes shared by every tbbt tool.  Scripts rely on them (see each tool's
 * command-line contract in docs/): 0 success, 1 the run failed (bad input, server
 * trouble; no usable output), 2 usage error, 3 converted, but the input was
 * damaged: the outputs hold what could be read (tbbt-convert); a tool stopped
 * cleanly by a signal exits 128 + its number, as a shell reports a process the
 * signal killed (130 for SIGINT, 143 for SIGTERM).
 */
#ifndef TBBT_UTIL_EXIT_CODES_H
#define TBBT_UTIL_EXIT_CODES_H

#define TBBT_EXIT_OK 0
#define TBBT_EXIT_FAIL 1
#define TBBT_EXIT_USAGE 2
#define TBBT_EXIT_DAMAGED 3
#define TBBT_EXIT_SIGNAL(sig) (128 + (sig))

#endif
