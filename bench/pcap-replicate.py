#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Makes a large capture from a small one, for conversion benchmarks.

Usage: pcap-replicate.py IN.pcap OUT.pcap --min-calls N [--server-port 2049]

Writes IN's packets over and over until OUT holds at least N RPC calls to the
server port (counted by record marks on TCP, by datagrams on UDP).  Each repetition
is a new set of client connections: the client port of every packet (the one that
is not the server port) becomes a port of its own for that repetition, and its time
is shifted past the previous repetition's last packet, so a converter sees distinct
TCP streams and XIDs that never collide.  Classic pcap with Ethernet (tcpdump -i lo)
or raw IPv4 link types; IPv4 only.  Checksums are left as they were (tbbt-convert and
tshark do not check them; loopback captures carry offloaded ones anyway).
"""
import argparse
import struct
import sys


def packets(data):
    """(header tuple, bytes) of every record of a classic pcap."""
    off = 24
    while off + 16 <= len(data):
        hdr = struct.unpack_from("<IIII", data, off)
        off += 16
        yield hdr, data[off:off + hdr[2]]
        off += hdr[2]


def l4(pkt, linktype):
    """(offset of the TCP/UDP header, protocol) or None."""
    base = 14 if linktype == 1 else 0
    if linktype == 1 and pkt[12:14] != b"\x08\x00":
        return None
    if len(pkt) < base + 20 or pkt[base] >> 4 != 4:
        return None
    return base + (pkt[base] & 15) * 4, pkt[base + 9]


def calls_in(pkt, at, proto, server_port):
    """RPC calls a packet carries to the server (record marks of whole records)."""
    dport = struct.unpack_from(">H", pkt, at + 2)[0]
    if dport != server_port:
        return 0
    if proto == 17:
        return 1
    payload = pkt[at + (pkt[at + 12] >> 4) * 4:]
    n, off = 0, 0
    while off + 4 <= len(payload):
        mark = struct.unpack_from(">I", payload, off)[0]
        n += 1
        off += 4 + (mark & 0x7fffffff)
    return n


def main():
    ap = argparse.ArgumentParser(description="replicate a pcap into a large one")
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--min-calls", type=int, required=True)
    ap.add_argument("--server-port", type=int, default=2049)
    a = ap.parse_args()
    data = open(a.inp, "rb").read()
    if struct.unpack_from("<I", data)[0] not in (0xa1b2c3d4, 0xa1b23c4d):
        sys.exit("pcap-replicate: %s: not a little-endian classic pcap" % a.inp)
    res = 1000000000 if struct.unpack_from("<I", data)[0] == 0xa1b23c4d else 1000000
    linktype = struct.unpack_from("<I", data, 20)[0]
    if linktype not in (1, 228, 101):
        sys.exit("pcap-replicate: link type %d not supported" % linktype)
    recs = list(packets(data))
    per_rep = 0
    ports = {}
    for _, pkt in recs:
        x = l4(pkt, linktype)
        if not x or x[1] not in (6, 17):
            continue
        per_rep += calls_in(pkt, x[0], x[1], a.server_port)
        sp, dp = struct.unpack_from(">HH", pkt, x[0])
        for p in (sp, dp):
            if p != a.server_port:
                ports.setdefault(p, len(ports))
    if per_rep == 0:
        sys.exit("pcap-replicate: no calls to port %d in %s" % (a.server_port, a.inp))
    reps = -(-a.min_calls // per_rep)
    if reps * len(ports) > 60000:
        sys.exit("pcap-replicate: %d repetitions of %d client ports do not fit in 16 bits"
                 % (reps, len(ports)))
    first = recs[0][0][0] * res + recs[0][0][1]
    span = max(h[0] * res + h[1] for h, _ in recs) - first + res // 1000
    with open(a.out, "wb") as f:
        f.write(data[:24])
        for k in range(reps):
            for hdr, pkt in recs:
                pkt = bytearray(pkt)
                x = l4(pkt, linktype)
                if x and x[1] in (6, 17):
                    for i in (0, 2):
                        p = struct.unpack_from(">H", pkt, x[0] + i)[0]
                        if p != a.server_port and p in ports:
                            new = 2000 + (k * len(ports) + ports[p]) % 60000
                            struct.pack_into(">H", pkt, x[0] + i, new)
                t = hdr[0] * res + hdr[1] + k * span
                f.write(struct.pack("<IIII", t // res, t % res, hdr[2], hdr[3]))
                f.write(pkt)
    print("pcap-replicate: %s: %d repetitions, %d calls" % (a.out, reps, reps * per_rep))


if __name__ == "__main__":
    main()
