/* SPDX-License-Identifier: MIT */
/*
 * Plain file-descriptor I/O shared by the trace module's buffered readers and
 * writers (the binary trace in reader.c and writer.c, the record spill in
 * spill.c): a write that retries until every byte is out, and a read that
 * appends what one read(2) gives to a buffer.  Both retry EINTR; neither
 * buffers, allocates or knows a file layout.
 */
#include "trace/trace-int.h"

#include <errno.h>
#include <unistd.h>

int tbbt__write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int tbbt__read_more(int fd, uint8_t *buf, size_t *len, size_t cap, bool *eof)
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
