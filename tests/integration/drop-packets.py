#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Simulated capture loss for the correction tests: copies a classic pcap file,
dropping each packet with probability RATE (seeded, reproducible).

    drop-packets.py IN.pcap OUT.pcap RATE SEED

Prints "kept K of N packets".  Only the classic pcap format (either byte order,
micro- or nanosecond magic) is read; pcapng is refused with an error.
"""
import random
import struct
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: drop-packets.py IN.pcap OUT.pcap RATE SEED")
    src, dst, rate, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    with open(src, "rb") as f:
        data = f.read()
    if len(data) < 24:
        sys.exit(f"drop-packets: {src}: too short for a pcap header")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        sys.exit(f"drop-packets: {src}: not a classic pcap file")
    out = [data[:24]]
    off, n, kept = 24, 0, 0
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        rec = data[off:off + 16 + incl]
        if len(rec) < 16 + incl:
            sys.exit(f"drop-packets: {src}: truncated packet at byte {off}")
        n += 1
        if rng.random() >= rate:
            out.append(rec)
            kept += 1
        off += 16 + incl
    with open(dst, "wb") as f:
        f.write(b"".join(out))
    print(f"kept {kept} of {n} packets")


if __name__ == "__main__":
    main()
