/* SPDX-License-Identifier: MIT */
/*
 * Command-line helpers of the tools (cli.h): a tool's main(), the option parse, usage
 * errors, --version, the shared options' log level and progress line, the option values
 * freed, decimal option values, the stdout check.  The exit codes are
 * util/exit-codes.h's.
 */
#include "util/cli.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "tbbt-version.h"
#include "util/exit-codes.h"
#include "util/util.h"

int tbbt_cli_log_level(const struct tbbt_cli_common *c)
{
    return c->verbose ? TBBT_LOG_DEBUG : c->quiet ? TBBT_LOG_ERROR : TBBT_LOG_WARN;
}

bool tbbt_cli_progress(const struct tbbt_cli_common *c)
{
    return !c->quiet && !c->no_progress && (c->progress || isatty(STDERR_FILENO));
}

/* The tool tbbt_cli_start() started, for tbbt_cli_usage(). */
static const char *started_prog = "tbbt";
static int (*started_usage)(const char *msg);

int tbbt_cli_usage_error(const char *prog, const char *msg)
{
    fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", prog, msg, prog);
    return TBBT_EXIT_USAGE;
}

int tbbt_cli_usage(const char *msg)
{
    return started_usage ? started_usage(msg) : tbbt_cli_usage_error(started_prog, msg);
}

int tbbt_cli_parse(const struct tbbt_cli_spec *spec, int *argc, char ***argv)
{
    GOptionContext *ctx = g_option_context_new(spec->param);
    GError *gerr = NULL;
    int rc = 0;

    if (spec->summary)
        g_option_context_set_summary(ctx, spec->summary);
    if (spec->description)
        g_option_context_set_description(ctx, spec->description);
    g_option_context_add_main_entries(ctx, spec->entries, NULL);
    if (!g_option_context_parse(ctx, argc, argv, &gerr)) {
        rc = spec->usage ? spec->usage(gerr->message)
                         : tbbt_cli_usage_error(spec->prog, gerr->message);
        g_error_free(gerr);
    }
    g_option_context_free(ctx);
    return rc;
}

bool tbbt_cli_start(const struct tbbt_cli_spec *spec, int *argc, char ***argv, int *exit_code)
{
    started_prog = spec->prog;
    started_usage = spec->usage;
    if (spec->locale)
        setlocale(LC_CTYPE, "");
    tbbt_log_init(spec->prog, TBBT_LOG_WARN);
    if ((*exit_code = tbbt_cli_parse(spec, argc, argv)) != 0)
        return false;
    if (spec->log_options)
        tbbt_log_init(spec->prog, tbbt_cli_log_level(spec->common));
    if (spec->common && spec->common->version) {
        if (spec->print_version) {
            *exit_code = spec->print_version();
        } else if (spec->trace_major || spec->trace_minor) {
            *exit_code = tbbt_cli_print_version(spec->prog, spec->trace_major,
                                                spec->trace_minor);
        } else {
            tbbt_cli_print_version_line(spec->prog);
            *exit_code = TBBT_EXIT_OK;
        }
        return false;
    }
    return true;
}

int tbbt_cli_main(const struct tbbt_cli_spec *spec, int argc, char **argv, int (*run)(void))
{
    int rc;

    if (tbbt_cli_start(spec, &argc, &argv, &rc))
        rc = run();
    tbbt_cli_free_values(spec->entries);
    return rc;
}

void tbbt_cli_free_values(const GOptionEntry *entries)
{
    for (const GOptionEntry *e = entries; e->long_name; e++) {
        switch (e->arg) {
        case G_OPTION_ARG_STRING:
        case G_OPTION_ARG_FILENAME:
            g_free(*(gchar **)e->arg_data);
            *(gchar **)e->arg_data = NULL;
            break;
        case G_OPTION_ARG_STRING_ARRAY:
        case G_OPTION_ARG_FILENAME_ARRAY:
            g_strfreev(*(gchar ***)e->arg_data);
            *(gchar ***)e->arg_data = NULL;
            break;
        default:
            break;
        }
    }
}

void tbbt_cli_print_version_line(const char *prog)
{
    printf("%s (tbbt) %s\n", prog, TBBT_VERSION);
}

int tbbt_cli_print_version(const char *prog, int trace_major, int trace_minor)
{
    tbbt_cli_print_version_line(prog);
    printf("trace format %d.%d\n", trace_major, trace_minor);
    printf("glib %u.%u.%u\n", glib_major_version, glib_minor_version, glib_micro_version);
    return TBBT_EXIT_OK;
}

bool tbbt_cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
    char *end;
    unsigned long long x;

    if (!s || !g_ascii_isdigit(s[0]))
        return false;
    errno = 0;
    x = strtoull(s, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

bool tbbt_cli_parse_double(const char *s, double lo, double hi, double *v)
{
    char *end;
    double x;

    errno = 0;
    x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x) || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

int tbbt_cli_fail(const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    tbbt_log(TBBT_LOG_ERROR, "%s", msg);
    g_free(msg);
    return TBBT_EXIT_FAIL;
}

int tbbt_cli_flush_stdout(const char *what)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return tbbt_cli_fail("cannot write %s: %s", what, strerror(errno));
    return TBBT_EXIT_OK;
}
