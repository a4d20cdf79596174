#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares tbbt-convert's per-procedure pair counts with tshark's.

Usage: compare-tshark.py CAPTURE SUMMARY_JSON

tshark is the independent oracle: `tshark -r CAPTURE -q -z rpc,srt,PROG,VERS` prints
one row per procedure with the number of calls whose reply it matched. Every procedure
tshark lists must have the same count in the summary's "procedures" object, and every
procedure the summary counts must appear in tshark's table. Exit 0 when they agree,
1 (with a table of differences) when not, 2 on usage or tool errors.
"""
import json
import re
import subprocess
import sys

TABLES = [("v3", 100003, 3), ("v2", 100003, 2), ("mount", 100005, 3), ("mount", 100005, 1)]


def tshark_counts(capture):
    """Returns {"v3": {"getattr": n, ...}, ...} from tshark's SRT tables."""
    # Reserved client ports (libnfs binds one) may belong to other dissectors: make the
    # NFS and MOUNT ports of the lab decode as ONC RPC, as make-captures.sh does.
    args = ["tshark", "-n", "-r", capture, "-q",
            "-d", "tcp.port==2049,rpc", "-d", "udp.port==2049,rpc",
            "-d", "tcp.port==20048,rpc", "-d", "udp.port==20048,rpc"]
    for _, prog, vers in TABLES:
        args += ["-z", "rpc,srt,%d,%d" % (prog, vers)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("compare-tshark: tshark failed: " + out.stderr.strip().splitlines()[-1])
    counts = {}
    current = None
    for line in out.stdout.splitlines():
        m = re.match(r"^Filter:\s*(nfs|mount)\.procedure_v(\d)", line)
        if m:
            current = "mount" if m.group(1) == "mount" else "v" + m.group(2)
            counts.setdefault(current, {})
            continue
        m = re.match(r"^\s*\d+\s+([A-Z][A-Z0-9_]*)\s+(\d+)\s", line)
        if m and current:
            name = m.group(1).lower()
            name = re.sub(r"^v\d_", "", name)
            counts[current][name] = counts[current].get(name, 0) + int(m.group(2))
    return counts


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    capture, summary_path = sys.argv[1], sys.argv[2]
    with open(summary_path) as f:
        ours = json.load(f)["procedures"]
    theirs = tshark_counts(capture)
    bad = []
    total = 0
    for table in ("v2", "v3", "mount"):
        names = set(theirs.get(table, {})) | {k for k, v in ours.get(table, {}).items() if v}
        for name in sorted(names):
            a = ours.get(table, {}).get(name, 0)
            b = theirs.get(table, {}).get(name, 0)
            total += b
            if a != b:
                bad.append("%s %s: tbbt-convert %d, tshark %d" % (table, name, a, b))
    if bad:
        print("compare-tshark: %s: %d procedure counts differ:" % (capture, len(bad)))
        for line in bad:
            print("  " + line)
        return 1
    print("compare-tshark: %s: %d pairs in %d procedures agree with tshark" %
          (capture, total, sum(len(v) for v in theirs.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
