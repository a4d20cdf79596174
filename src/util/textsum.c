/* SPDX-License-Identifier: MIT */
/*
 * The checksum line that ends a map or a manifest (textsum.h): written last, checked
 * before any other line is believed.  The CRC is crc32.h's, over the file's bytes.
 */
#include "util/textsum.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/crc32.h"
#include "util/util.h"

void tbbt_textsum_line(char out[TBBT_TEXTSUM_LINE], uint32_t crc)
{
    snprintf(out, TBBT_TEXTSUM_LINE, TBBT_TEXTSUM_PREFIX "%08x\n", crc);
}

bool tbbt_textsum_parse(const char *line, size_t len, uint32_t *crc)
{
    size_t p = sizeof(TBBT_TEXTSUM_PREFIX) - 1;
    uint32_t v = 0;

    if (len != p + 8 || memcmp(line, TBBT_TEXTSUM_PREFIX, p) != 0)
        return false;
    for (size_t i = p; i < len; i++) {
        char c = line[i];
        if (c >= '0' && c <= '9')
            v = v << 4 | (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v << 4 | (uint32_t)(c - 'a' + 10);
        else
            return false;
    }
    *crc = v;
    return true;
}

int tbbt_textsum_verify(FILE *f, uint32_t crc0, uint32_t *crc, uint64_t *lines)
{
    char *cur = NULL, *prev = NULL;
    size_t ccap = 0, pcap = 0;
    ssize_t n, pn = -1;
    uint32_t sum = crc0, want;
    uint64_t count = 0;
    int rc;

    errno = 0;
    while ((n = getline(&cur, &ccap, f)) >= 0) {
        count++;
        if (pn >= 0)
            sum = tbbt_crc32(sum, prev, (size_t)pn);
        char *t = prev;
        size_t tc = pcap;
        prev = cur;
        pcap = ccap;
        pn = n;
        cur = t;
        ccap = tc;
    }
    if (ferror(f))
        rc = errno ? -errno : -EIO;
    else if (pn < 1 || prev[pn - 1] != '\n' || !tbbt_textsum_parse(prev, (size_t)pn - 1, &want))
        rc = TBBT_E_TRUNC;
    else if (want != sum)
        rc = TBBT_E_CHECKSUM;
    else
        rc = (*crc = want, 0);
    if (lines)
        *lines = count;
    free(cur);
    free(prev);
    return rc;
}
