/* SPDX-License-Identifier: MIT */
/*
 * The failure that stops a piece of work which runs on after its first error (an event
 * loop with many calls in flight, whose other calls still come back): its code, which
 * the work returns from then on, and its one-line reason in the caller's error buffer.
 * Later failures, most often consequences of the first, change neither.  The plain
 * formatter of a reason is tbbt_errbuf() (util.h).
 */
#ifndef TBBT_UTIL_ERRBUF_H
#define TBBT_UTIL_ERRBUF_H

#include <stddef.h>

/*
 * Records a failure unless *code holds one already (is not 0): *code becomes rc (-EIO
 * when rc is not negative, so that it always stops the work) and the reason, formatted
 * from fmt, goes into err (errlen bytes; nothing is written when err is NULL or errlen
 * is 0).  code and err are borrowed.  Thread-safe only as far as the caller's *code and
 * err are its own.
 */
void tbbt_errbuf_first(int *code, int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
