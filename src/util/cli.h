/* SPDX-License-Identifier: MIT */
/*
 * Command-line helpers shared by the tools' main() functions (docs: each tool's page,
 * "Exit status"): the parse of the options with its usage error, the usage error with
 * its --help hint, the --version lines, whole-string decimal option values and the
 * final check that standard output took what was printed, and the error line of a failed
 * run.  They print (usage error to stderr, version to stdout), so only tools call them,
 * never library code.  Thread-safe apart from the output streams.
 */
#ifndef TBBT_UTIL_CLI_H
#define TBBT_UTIL_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Prints "PROG: MSG" and "Try 'PROG --help' for more information." to stderr; returns
 * TBBT_EXIT_USAGE.  prog and msg borrowed.
 */
int tbbt_cli_usage_error(const char *prog, const char *msg);

/* A tool's command line, for tbbt_cli_parse(); every pointer borrowed. */
struct tbbt_cli_spec {
    const char *prog;               /* "tbbt-stats" */
    const char *param;              /* g_option_context_new()'s, e.g. "INPUT... - what it
                                       does"; may be NULL */
    const char *summary;            /* --help text before the options; may be NULL */
    const char *description;        /* --help text after the options; may be NULL */
    const GOptionEntry *entries;    /* ended by an entry with a NULL long name */
    int (*usage)(const char *msg);  /* the tool's usage error (prints, returns
                                       TBBT_EXIT_USAGE); NULL: tbbt_cli_usage_error() */
};

/*
 * The start of a tool's main(): parses *argc and *argv (main's; glib removes what it
 * took) with spec's options.  --help prints to stdout and exits 0 (glib's).  Returns 0,
 * or TBBT_EXIT_USAGE after the usage error with glib's reason (an unknown option, a
 * bad number).
 */
int tbbt_cli_parse(const struct tbbt_cli_spec *spec, int *argc, char ***argv);

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

/*
 * The end of a failed run: logs the message (printf-style; tbbt_log() at ERROR, so
 * "PROG: MSG" on stderr) and returns TBBT_EXIT_FAIL.
 */
int tbbt_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Flushes stdout: TBBT_EXIT_OK, or TBBT_EXIT_FAIL after the error line "cannot write
 * WHAT: <reason>" (tbbt_log(), what borrowed: "stdout", "the report") when it failed
 * (a full disk, a closed pipe).
 */
int tbbt_cli_flush_stdout(const char *what);

#endif
