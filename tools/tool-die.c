/* SPDX-License-Identifier: MIT */
/* The lab client programs' fatal error line and exit, and their option parsing (tool-die.h). */
#include "tool-die.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tbbt-version.h"
#include "util/exit-codes.h"

void tool_die(const char *prog, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(TBBT_EXIT_FAIL);
}

void tool_options(const char *prog, const char *param, const char *summary,
                  const GOptionEntry *entries, const gboolean *show_version, int *argc,
                  char ***argv)
{
    GOptionContext *ctx = g_option_context_new(param);
    GError *err = NULL;

    g_option_context_set_summary(ctx, summary);
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, argc, argv, &err)) {
        fprintf(stderr, "%s: %s (try --help)\n", prog, err->message);
        exit(TBBT_EXIT_USAGE);
    }
    g_option_context_free(ctx);
    if (*show_version) {
        printf("%s (tbbt) %s\nglib %u.%u.%u\n", prog, TBBT_VERSION, glib_major_version,
               glib_minor_version, glib_micro_version);
        exit(TBBT_EXIT_OK);
    }
}
