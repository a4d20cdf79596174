/* SPDX-License-Identifier: MIT */
/*
 * The ceiling for tbbt-convert's capture reading: a bare pcap_next_ex loop that
 * reads every packet and looks at its first byte, nothing else.  Prints packets,
 * bytes and seconds as one JSON object.  Used by bench/convert-bench.sh.
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
    char err[PCAP_ERRBUF_SIZE];
    struct pcap_pkthdr *h;
    const u_char *data;
    uint64_t packets = 0, bytes = 0, sum = 0;
    struct timespec t0, t1;
    pcap_t *p;
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: pcap-raw CAPTURE\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    p = pcap_open_offline(argv[1], err);
    if (!p) {
        fprintf(stderr, "pcap-raw: %s\n", err);
        return 1;
    }
    while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
        packets++;
        bytes += h->len;
        if (h->caplen)
            sum += data[0];
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pcap_close(p);
    printf("{\"packets\": %llu, \"bytes\": %llu, \"seconds\": %.6f, \"checksum\": %llu}\n",
           (unsigned long long)packets, (unsigned long long)bytes,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
           (unsigned long long)sum);
    return rc == PCAP_ERROR ? 1 : 0;
}
