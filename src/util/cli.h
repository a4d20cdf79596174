/* SPDX-License-Identifier: MIT */
/*
 * Command-line helpers shared by the tools' main() functions (docs: each tool's page,
 * "Exit status"): the usage error with its --help hint, the --version lines and
 * whole-string decimal option values.  They print (usage error to stderr, version to
 * stdout), so only tools call them, never library code.  Thread-safe apart from the
 * output streams.
 */
#ifndef TBBT_UTIL_CLI_H
#define TBBT_UTIL_CLI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Prints "PROG: MSG" and "Try 'PROG --help' for more information." to stderr; returns
 * TBBT_EXIT_USAGE.  prog and msg borrowed.
 */
int tbbt_cli_usage_error(const char *prog, const char *msg);

/*
 * Prints the --version lines of tool prog to stdout: "PROG (tbbt) VERSION", the trace
 * format major.minor it reads and writes, and the glib version; returns TBBT_EXIT_OK.
 */
int tbbt_cli_print_version(const char *prog, int trace_major, int trace_minor);

/*
 * Parses s, a decimal unsigned integer in [lo, hi] that is the whole string (no sign,
 * space or suffix), into *v; false (v untouched) otherwise or for NULL.
 */
bool tbbt_cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v);

#endif
