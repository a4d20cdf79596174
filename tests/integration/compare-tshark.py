#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares tbbt-convert's per-procedure pair counts with tshark's.

Usage: compare-tshark.py CAPTURE SUMMARY_JSON

tshark is the independent oracle: `tshark -r CAPTURE -q -z rpc,srt,PROG,VERS` prints
one row per procedure with the number of calls whose reply it matched. Every procedure
tshark lists must have the same count in the summary's "procedures" object, and every
procedure the summary counts must appear in tshark's table.

NFSv4: every operation tshark shows (field nfs.opcode, one per operation of a COMPOUND
call or reply it could read the number of) is counted by direction (calls go to port
2049) and, for calls, by the frame's minor version (nfs.minorversion); the summary's
"nfs4" object must have the same counts: "ops" per minor version for calls, the sum of
"reply_ops" over the minor versions for replies.

Exit 0 when they agree, 1 (with a table of differences) when not, 2 on usage or tool
errors.
"""
import collections
import json
import os
import re
import subprocess
import sys

NFS4_X = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "proto",
                      "nfs4.x")

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


def nfs4_op_names():
    """{number: "NAME"} of the COMPOUND operations, from nfs4.x's nfs_opnum4."""
    with open(NFS4_X) as f:
        text = f.read()
    body = re.search(r"enum nfs_opnum4\s*{(.*?)}", text, re.S).group(1)
    return {int(v): n for n, v in re.findall(r"OP_(\w+)\s*=\s*(\d+)", body)}


def tshark_nfs4(capture):
    """(calls {minor: Counter}, replies Counter) of the NFSv4 operations tshark shows."""
    names = nfs4_op_names()
    args = ["tshark", "-n", "-r", capture, "-Y", "nfs.opcode",
            "-d", "tcp.port==2049,rpc", "-T", "fields", "-E", "occurrence=a",
            "-E", "aggregator=,", "-e", "tcp.dstport", "-e", "nfs.minorversion",
            "-e", "nfs.opcode"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("compare-tshark: tshark failed: " + out.stderr.strip().splitlines()[-1])
    calls = collections.defaultdict(collections.Counter)
    replies = collections.Counter()
    for line in out.stdout.splitlines():
        dport, minors, ops = (line.split("\t") + ["", "", ""])[:3]
        ops = [names.get(int(o), o) for o in ops.split(",") if o]
        if dport == "2049":
            ms = set(m for m in minors.split(",") if m)
            minor = ms.pop() if len(ms) == 1 else "mixed"
            calls[minor].update(ops)
        else:
            replies.update(ops)
    return calls, replies


def compare_nfs4(capture, summary):
    """Difference lines between the summary's "nfs4" counts and tshark's."""
    ours = summary.get("nfs4", {}).get("minor_versions", {})
    calls, replies = tshark_nfs4(capture)
    bad = []
    if "mixed" in calls:
        bad.append("nfs4: frames with calls of several minor versions; cannot compare")
    total = 0
    for minor in sorted(set(calls) | set(ours)):
        a = collections.Counter(ours.get(minor, {}).get("ops", {}))
        b = calls.get(minor, collections.Counter())
        total += sum(b.values())
        for op in sorted(set(a) | set(b)):
            if a[op] != b[op]:
                bad.append("nfs4 minor %s call %s: tbbt-convert %d, tshark %d" %
                           (minor, op, a[op], b[op]))
    mine = collections.Counter()
    for m in ours.values():
        mine.update(m.get("reply_ops", {}))
    for op in sorted(set(mine) | set(replies)):
        if mine[op] != replies[op]:
            bad.append("nfs4 reply %s: tbbt-convert %d, tshark %d" % (op, mine[op], replies[op]))
    total += sum(replies.values())
    return bad, total


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    capture, summary_path = sys.argv[1], sys.argv[2]
    with open(summary_path) as f:
        summary = json.load(f)
    ours = summary["procedures"]
    theirs = tshark_counts(capture)
    bad, total4 = compare_nfs4(capture, summary)
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
    print("compare-tshark: %s: %d pairs in %d procedures and %d NFSv4 operations agree "
          "with tshark" % (capture, total, sum(len(v) for v in theirs.values()), total4))
    return 0


if __name__ == "__main__":
    sys.exit(main())
