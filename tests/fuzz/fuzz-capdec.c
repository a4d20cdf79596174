/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the packet decoder (src/capture: link layers, IP
 * fragments, TCP streams, RPC record marking).  Input layout:
 *   byte 0          link type, an index into dlts[]
 *   then, per packet:
 *     2 bytes       captured length L (big-endian)
 *     2 bytes       bytes on the wire beyond L (snap-length cut)
 *     1 byte        time step: ts += step * 4 s (reaches idle/fragment expiry)
 *     L bytes       the packet (fewer if the input ends)
 * Every delivered message is read in full so ASan checks its bounds.
 */
#include "capture/capture.h"

#include <pcap/dlt.h>
#include <stddef.h>
#include <stdint.h>

static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_NULL, DLT_LOOP,
                           DLT_RAW, 101, DLT_IPV4, DLT_IPV6};

static volatile uint8_t sink;

static void on_msg(const struct tbbt_cap_msg *m, void *arg)
{
    uint8_t x = 0;

    (void)arg;
    for (uint32_t i = 0; i < m->len; i++)
        x ^= m->data[i];
    if (m->len > m->wire_len || m->truncated != (m->len < m->wire_len) ||
        m->len > TBBT_CAP_MAX_RECORD || (m->af != 4 && m->af != 6))
        __builtin_trap();
    sink = x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tbbt_capdec *d;
    uint64_t ts = 1000000000ull;
    int dlt;

    if (size < 1)
        return 0;
    dlt = dlts[data[0] % (sizeof dlts / sizeof dlts[0])];
    data++;
    size--;
    d = tbbt_capdec_new(on_msg, NULL);
    while (size >= 5) {
        uint32_t len = (uint32_t)data[0] << 8 | data[1];
        uint32_t extra = (uint32_t)data[2] << 8 | data[3];
        ts += (uint64_t)data[4] * 4000000000ull;
        data += 5;
        size -= 5;
        if (len > size)
            len = (uint32_t)size;
        tbbt_capdec_packet(d, dlt, ts, data, len, len + extra);
        data += len;
        size -= len;
    }
    tbbt_capdec_flush(d);
    tbbt_capdec_free(d);
    return 0;
}
