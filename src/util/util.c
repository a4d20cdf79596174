/* SPDX-License-Identifier: MIT */
/* Error strings and buffers, the logging sink, clocks and whole-buffer file I/O for every
 * module (see util.h). */
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

int tbbt__log_level = TBBT_LOG_WARN;
static const char *log_prog = "tbbt";

static const struct {
    int code;
    const char *msg;
} err_names[] = {
    {TBBT_E_TRUNC, "input is truncated"},
    {TBBT_E_BADREC, "malformed record"},
    {TBBT_E_VERSION, "unsupported format version"},
    {TBBT_E_MAGIC, "not a file of the expected format"},
    {TBBT_E_CHECKSUM, "checksum mismatch"},
    {TBBT_E_LINKTYPE, "unsupported link type"},
    {TBBT_E_SYNTAX, "syntax error"},
    {TBBT_E_RANGE, "value out of range"},
    {TBBT_E_DAMAGED, "input is damaged"},
    {0, NULL},
};

const char *tbbt_strerror(int err)
{
    if (err == 0)
        return "success";
    for (int i = 0; err_names[i].msg; i++)
        if (err_names[i].code == err)
            return err_names[i].msg;
    if (err < 0 && err > TBBT_E_BASE)
        return strerror(-err);
    return "unknown error";
}

void tbbt_log_init(const char *progname, int level)
{
    log_prog = progname;
    tbbt__log_level = level;
}

void tbbt__log(int level, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    va_list ap;

    fprintf(stderr, "%s: ", log_prog);
    if (level != TBBT_LOG_ERROR)
        fprintf(stderr, "%s: ", names[level]);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

uint64_t tbbt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tbbt_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tbbt_cpu_seconds(double *user, double *system)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        *user = *system = 0;
        return;
    }
    *user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    *system = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

uint64_t tbbt_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u;
}

void tbbt_errbuf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

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

int tbbt_write_all(int fd, const void *p, size_t len)
{
    const uint8_t *b = p;

    while (len > 0) {
        ssize_t n = write(fd, b, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

int tbbt_read_more(int fd, uint8_t *buf, size_t *len, size_t cap, bool *eof)
{
    for (;;) {
        ssize_t n = read(fd, buf + *len, cap - *len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            *eof = true;
        *len += (size_t)n;
        return 0;
    }
}
