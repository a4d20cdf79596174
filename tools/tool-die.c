/* SPDX-License-Identifier: MIT */
/* The lab client programs' fatal error line and exit (tool-die.h). */
#include "tool-die.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
