/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for every module: error codes and their strings, error buffers,
 * logging, a few time helpers, and writing or reading a buffer through a file
 * descriptor.  Library code never prints directly; it logs through
 * tbbt_log(), whose sink and level the tool sets.
 */
#ifndef TBBT_UTIL_UTIL_H
#define TBBT_UTIL_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stddef.h>

/* Project error codes: negative, below every -errno value we may return. */
enum {
    TBBT_E_BASE = -10000,
    TBBT_E_TRUNC = TBBT_E_BASE - 1,     /* input ends in the middle of an item */
    TBBT_E_BADREC = TBBT_E_BASE - 2,    /* malformed record or packet */
    TBBT_E_VERSION = TBBT_E_BASE - 3,   /* unsupported format version */
    TBBT_E_MAGIC = TBBT_E_BASE - 4,     /* not a file of the expected kind */
    TBBT_E_CHECKSUM = TBBT_E_BASE - 5,  /* trailer checksum does not match */
    TBBT_E_LINKTYPE = TBBT_E_BASE - 6,  /* unsupported capture link type */
    TBBT_E_SYNTAX = TBBT_E_BASE - 7,    /* text input does not parse */
    TBBT_E_RANGE = TBBT_E_BASE - 8,     /* value out of range */
    TBBT_E_DAMAGED = TBBT_E_BASE - 9,   /* damaged input: parts skipped, the rest kept */
    TBBT_E_LAST = TBBT_E_BASE - 10,
};

/* Returns a static string for a 0, -errno or TBBT_E_* value.  Thread-safe. */
const char *tbbt_strerror(int err);

enum tbbt_log_level { TBBT_LOG_ERROR = 0, TBBT_LOG_WARN, TBBT_LOG_INFO, TBBT_LOG_DEBUG };

/* Current level; messages above it are dropped before their arguments are evaluated. */
extern int tbbt__log_level;

/* Sets the program name used as message prefix (borrowed: must outlive logging). */
void tbbt_log_init(const char *progname, int level);
void tbbt__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define tbbt_log(level, ...)                                                                      \
    do {                                                                                          \
        if ((level) <= tbbt__log_level)                                                           \
            tbbt__log((level), __VA_ARGS__);                                                      \
    } while (0)

/* Monotonic clock in nanoseconds. */
uint64_t tbbt_now_ns(void);

/* CPU time (user + system) the calling thread has used, in nanoseconds. */
uint64_t tbbt_thread_cpu_ns(void);

/* This process's user and system CPU seconds so far (getrusage; 0 if unknown). */
void tbbt_cpu_seconds(double *user, double *system);

/* Peak resident set size of this process in bytes (from getrusage), 0 if unknown. */
uint64_t tbbt_peak_rss(void);

/*
 * Formats a one-line reason into the caller's error buffer err (errlen bytes; err may
 * be NULL or errlen 0: nothing is written), the convention of functions that return a
 * negative error "with the reason in err".  Thread-safe.
 */
void tbbt_errbuf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The failure that stops a piece of work which runs on after its first error (an event
 * loop with many calls in flight, whose other calls still come back): records it unless
 * *code holds one already (is not 0).  *code becomes rc (-EIO when rc is not negative,
 * so that it always stops the work) and the reason, formatted from fmt, goes into err
 * as tbbt_errbuf() writes it.  Later failures, most often consequences of the first,
 * change neither.  code and err borrowed; thread-safe as far as they are the caller's.
 */
void tbbt_errbuf_first(int *code, int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Writes all len bytes of p to fd (retrying short writes and EINTR); 0 or -errno. */
int tbbt_write_all(int fd, const void *p, size_t len);

/*
 * One read(2) (retrying EINTR) into buf[*len, cap), with *len < cap: adds the bytes read
 * to *len and sets *eof when there are none; 0 or -errno.
 */
int tbbt_read_more(int fd, uint8_t *buf, size_t *len, size_t cap, bool *eof);

#endif
