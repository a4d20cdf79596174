/* SPDX-License-Identifier: MIT */
/*
 * Command-line helpers shared by the tools' main() functions (docs: each tool's page,
 * "Exit status"): the whole main() of a tool (locale, log, parse, --version, run, the
 * option values freed), the parse of the options with its usage error, the usage error
 * with its --help hint, the --version lines, the log level and progress line the shared
 * options ask for, whole-string decimal option values and the final check that standard
 * output took what was printed, and the error line of a failed run.  They print (usage
 * error to stderr, version to stdout), so only tools call them, never library code.
 * Thread-safe apart from the output streams and tbbt_cli_start(), which main() calls
 * before any other thread runs.
 *
 * Option tables: a tool's options are an X-macro table, src/<dir>/<tool>-options.def,
 * one row per option in --help order,
 *
 *   TBBT_CLI_OPT(long name, short letter or 0, kind, var, help, arg name or NULL)
 *
 * where kind is the tail of a GOptionArg (STRING, FILENAME, NONE, INT, INT64, DOUBLE,
 * FILENAME_ARRAY) and var points at the option's storage in the tool's main file.  As
 * defined here a row is the option's GOptionEntry, so the tool's table is the .def
 * included between "static const GOptionEntry entries[] = {" and "TBBT_CLI_END, };"; a
 * check of the documentation can #undef TBBT_CLI_OPT and include the file with a row
 * macro of its own.
 */
#ifndef TBBT_UTIL_CLI_H
#define TBBT_UTIL_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* The GOptionEntry of one option-table row, and the entry that ends a table. */
#define TBBT_CLI_OPT(name, letter, kind, var, help, arg) \
    {name, letter, 0, G_OPTION_ARG_##kind, var, help, arg},
#define TBBT_CLI_END {NULL, 0, 0, 0, NULL, NULL, NULL}

/*
 * The options most tools share, each where the tool has it (its table points at these
 * fields; the help texts are the tool's): --quiet, --verbose, --version, --progress and
 * --no-progress.
 */
struct tbbt_cli_common {
    gboolean quiet;
    gboolean verbose;
    gboolean version;       /* tbbt_cli_start() prints the version and ends the tool */
    gboolean progress;
    gboolean no_progress;
};

/* c's log level: TBBT_LOG_DEBUG with --verbose, else ERROR with --quiet, else WARN. */
int tbbt_cli_log_level(const struct tbbt_cli_common *c);

/*
 * Whether to draw a progress line on stderr: neither --quiet nor --no-progress, and
 * --progress or stderr is a terminal.
 */
bool tbbt_cli_progress(const struct tbbt_cli_common *c);

/*
 * Prints "PROG: MSG" and "Try 'PROG --help' for more information." to stderr; returns
 * TBBT_EXIT_USAGE.  prog and msg borrowed.
 */
int tbbt_cli_usage_error(const char *prog, const char *msg);

/* A tool's command line, for tbbt_cli_main() and tbbt_cli_start(); every pointer borrowed. */
struct tbbt_cli_spec {
    const char *prog;               /* "tbbt-stats" */
    const char *param;              /* g_option_context_new()'s, e.g. "INPUT... - what it
                                       does"; may be NULL */
    const char *summary;            /* --help text before the options; may be NULL */
    const char *description;        /* --help text after the options; may be NULL */
    const GOptionEntry *entries;    /* ended by an entry with a NULL long name */
    int (*usage)(const char *msg);  /* the tool's usage error (prints, returns
                                       TBBT_EXIT_USAGE); NULL: tbbt_cli_usage_error() */
    bool locale;                    /* tbbt_cli_start(): setlocale(LC_CTYPE, "") first */
    bool log_options;               /* tbbt_cli_start(): common's --quiet and --verbose set
                                       the log level (tbbt_cli_log_level()) */
    const struct tbbt_cli_common *common;   /* what entries point at; NULL: none */
    int (*print_version)(void);     /* --version's lines, returns TBBT_EXIT_OK; NULL: those
                                       of tbbt_cli_print_version() with the trace format
                                       below, or without one (0.0) the line "PROG (tbbt)
                                       VERSION" alone */
    int trace_major, trace_minor;
};

/*
 * The parse of tbbt_cli_start(): parses *argc and *argv (main's; glib removes what it
 * took) with spec's options.  --help prints to stdout and exits 0 (glib's).  Returns 0,
 * or TBBT_EXIT_USAGE after the usage error with glib's reason (an unknown option, a
 * bad number).
 */
int tbbt_cli_parse(const struct tbbt_cli_spec *spec, int *argc, char ***argv);

/*
 * The start of a tool's main(): the locale (spec->locale), the log as spec->prog at
 * TBBT_LOG_WARN, tbbt_cli_parse(), then the log level (spec->log_options) and
 * --version (spec->common->version: the version printed).  Returns true when main()
 * goes on with the options; false when it ends with *exit_code: TBBT_EXIT_USAGE after
 * the usage error, TBBT_EXIT_OK (print_version's) after --version.  Keeps spec->prog
 * and spec->usage for tbbt_cli_usage() (spec->prog must outlive the tool's run).
 */
bool tbbt_cli_start(const struct tbbt_cli_spec *spec, int *argc, char ***argv, int *exit_code);

/*
 * The usage error of the tool tbbt_cli_start() started: its spec->usage(msg), or
 * tbbt_cli_usage_error(spec->prog, msg); returns TBBT_EXIT_USAGE.  msg borrowed.
 */
int tbbt_cli_usage(const char *msg);

/*
 * A tool's whole main(): tbbt_cli_start(), then run() (the tool's work on the options,
 * which it reads from its storage) for the exit code, then the values of spec->entries
 * freed (tbbt_cli_free_values()).  Returns the exit code.
 */
int tbbt_cli_main(const struct tbbt_cli_spec *spec, int argc, char **argv, int (*run)(void));

/*
 * Frees the values glib allocated for the string (STRING, FILENAME) and array
 * (STRING_ARRAY, FILENAME_ARRAY) entries of entries (ended by an entry with a NULL long
 * name) and sets them to NULL; so their defaults must be NULL or allocated, never
 * literals.  Other kinds are left alone.
 */
void tbbt_cli_free_values(const GOptionEntry *entries);

/* Prints the line "PROG (tbbt) VERSION" to stdout. */
void tbbt_cli_print_version_line(const char *prog);

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
 * Parses s, a finite decimal floating-point number in [lo, hi] that is the whole string
 * (strtod()'s syntax), into *v; false (v untouched) otherwise.
 */
bool tbbt_cli_parse_double(const char *s, double lo, double hi, double *v);

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
