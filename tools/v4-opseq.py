#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares the NFSv4 operation sequences of two traces (an original and its replay).

Usage: v4-opseq.py [--json OUT] ORIGINAL.tbbt REPLAY.tbbt [--dump PATH-TO-tbbt-dump]

The round trip of issue 19: the replay, captured and converted, must carry the same
per-client operation sequence as the original, op codes and arguments compared except
what a live server chooses (handles, stateids, seqids, verifiers, READDIR cookies, client
and session ids, slots) and what a client may not repeat (attributes returned).  Clients are the
traces' endpoints taken in order of first appearance (the replayer opens one connection
per traced client, in that order).  Each client's sequence of operations, as keys, is
aligned with the other's (difflib); an operation matches when it is in an aligned
block.  Prints the share of the original's operations matched and writes the counts as
JSON with --json.  Exit 0 when at least 99.9 % match, 1 when not, 2 on usage errors.

The text form it reads is tbbt-dump's (docs/trace-format.md, "NFSv4 operations").
"""
import argparse
import difflib
import json
import subprocess
import sys

import tbbtfmt

# Members compared: what the client chose (the arguments) and the server's verdict (the
# status); other results (res_count, eof, res_flags: a READDIR of the image root also
# lists tbbt-init's marker) are left out, and so are fh,
# stateid, new_stateid, seqid, lock_seqid, clientid, verf, res_verf, session, slot
# (live values), READDIR's cookie but whether it is 0 (the server's cookies), attr
# (times, fileids), owner of SETCLIENTID/EXCHANGE_ID (the replayer's own client id
# string).
KEEP = ("status", "name", "name2", "target", "offset", "count", "length", "share", "how",
        "ftype", "sattr", "access", "bitmap")


def records(path, dump):
    """(endpoint, [ops]) of each v4 compound record of the trace, in trace order."""
    out = subprocess.run([dump, path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if not line.startswith("op ") or " v4 compound " not in line:
            continue
        fields = tbbtfmt.split_top(line, " ")
        ep, ops = None, []
        for f in fields:
            if f.startswith("ep="):
                ep = int(f[3:])
            elif f.startswith("ops="):
                ops = tbbtfmt.op4_list(f[4:])
        yield ep, ops


def key(op):
    live_owner = op.get("op") in ("SETCLIENTID", "EXCHANGE_ID")
    parts = [op.get("op", "?")]
    for k in KEEP:
        if k in op:
            parts.append("%s=%s" % (k, op[k]))
    if "owner" in op and not live_owner:
        parts.append("owner=%s" % op["owner"])
    if "cookie" in op:
        parts.append("cookie=%s" % ("0" if op["cookie"] == "0" else "server's"))
    return ",".join(parts)


def by_client(path, dump):
    """[[key, ...] per client] in order of the clients' first appearance."""
    order, seqs = {}, []
    for ep, ops in records(path, dump):
        if ep not in order:
            order[ep] = len(seqs)
            seqs.append([])
        # SEQUENCE is the session's bookkeeping: its slots are the replayer's
        seqs[order[ep]].extend(key(o) for o in ops if o.get("op") != "SEQUENCE")
    return seqs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("original")
    ap.add_argument("replay")
    ap.add_argument("--json")
    ap.add_argument("--dump", default="tbbt-dump")
    ap.add_argument("--show", type=int, default=10, help="differences to print")
    a = ap.parse_args()
    orig, rep = by_client(a.original, a.dump), by_client(a.replay, a.dump)
    total = matched = 0
    shown = 0
    for i, seq in enumerate(orig):
        other = rep[i] if i < len(rep) else []
        sm = difflib.SequenceMatcher(None, seq, other, autojunk=False)
        m = sum(b.size for b in sm.get_matching_blocks())
        total += len(seq)
        matched += m
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag != "equal" and shown < a.show:
                print("client %d: %s original %s / replay %s" %
                      (i, tag, seq[i1:i2][:3], other[j1:j2][:3]))
                shown += 1
    share = matched / total if total else 1.0
    r = {"clients_original": len(orig), "clients_replay": len(rep), "ops_original": total,
         "ops_matched": matched, "share": share}
    print("v4-opseq: %d of %d operations (%.4f) in the same per-client sequence, %d/%d "
          "clients" % (matched, total, share, len(orig), len(rep)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0 if share >= 0.999 else 1


if __name__ == "__main__":
    sys.exit(main())
