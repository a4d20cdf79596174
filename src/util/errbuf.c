/* SPDX-License-Identifier: MIT */
/*
 * The first failure of a piece of work (errbuf.h): a code set once and its reason.
 */
#include "util/errbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void tbbt_errbuf_first(int *code, int rc, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (*code)
        return;
    *code = rc < 0 ? rc : -EIO;
    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
}
