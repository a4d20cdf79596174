#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Counts NFS calls in `tshark -T fields -e rpc.msgtyp -e rpc.program ...` output.

A frame may carry several RPC messages; tshark prints each field's values
comma-separated, in the same order, so calls are counted per message, not per line.
"""
import sys

n = 0
for line in sys.stdin:
    cols = line.rstrip("\n").split("\t")
    if len(cols) < 2:
        continue
    for m, p in zip(cols[0].split(","), cols[1].split(",")):
        if m == "0" and p == "100003":
            n += 1
print(n)
