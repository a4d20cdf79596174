/* SPDX-License-Identifier: MIT */
/*
 * Command-line helpers of the tools (cli.h): the option parse, usage errors, --version,
 * decimal option values, the stdout check.  The exit codes are util/exit-codes.h's.
 */
#include "util/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "tbbt-version.h"
#include "util/exit-codes.h"
#include "util/util.h"

int tbbt_cli_usage_error(const char *prog, const char *msg)
{
    fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", prog, msg, prog);
    return TBBT_EXIT_USAGE;
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

int tbbt_cli_print_version(const char *prog, int trace_major, int trace_minor)
{
    printf("%s (tbbt) %s\n", prog, TBBT_VERSION);
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
