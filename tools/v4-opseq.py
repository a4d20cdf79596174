#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares the NFSv4 operation sequences of two traces (an original and its replay).

Usage: v4-opseq.py [--json OUT] [--by object|client] ORIGINAL.tbbt REPLAY.tbbt
                   [--dump PATH-TO-tbbt-dump]

The round trip of issue 19: the replay, captured and converted, must carry the same
per-object operation sequence as the original, op codes and arguments compared except
what a live server chooses (handles, stateids, seqids, verifiers, READDIR cookies,
client and session ids, slots) and what a client may not repeat (attributes returned).

--by object (default): an operation belongs to the object current when it ran, named
by its path as the trace walks it (PUTROOTFH is "/", LOOKUP, OPEN and CREATE go down by
name, PUTFH takes the path a GETFH of the handle had), so sequences are comparable
between two traces whatever their handles, and to its client: one sequence per object
and client.  A replay in FS-dependency order may interleave independent objects
differently, and two clients' reads of one object, never one client's operations on an
object (nor conflicting ones, whose outcome the status shows).  Operations without a
current object (client and session operations) form one sequence per client.  --by client: one sequence per client (the replayers open one connection
per traced client); a replay in trace order keeps it.

Each sequence, as keys, is aligned with its counterpart (difflib); an operation matches
when it is in an aligned block.  Client sequences are paired greedily, the pairs that
match most operations first (the replayer's own connections, its start-up look-up and
lease renewals, pair with nothing or add operations the original lacks, which do not
count against it).  Prints the share of the original's operations matched and writes
the counts as JSON with --json.  Exit 0 when at least 99.9 % match, 1 when not, 2 on
usage errors.

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


def parent(p):
    return p.rsplit("/", 1)[0] or "/"


def by_object(path, dump):
    """{"PATH client N": [key, ...]}: each operation under the path of the object current
    after it ran (PUTROOTFH is "/", LOOKUP, OPEN and CREATE go down by name, LOOKUPP up,
    PUTFH takes the path a GETFH of the same handle had) and its client (the endpoint's
    order of appearance); operations without a current object (client and session
    operations) under "client N"."""
    paths, seqs, order = {}, {}, {}
    for ep, ops in records(path, dump):
        client = "client %d" % order.setdefault(ep, len(order))
        cur = saved = None
        for o in ops:
            op = o.get("op")
            if op == "PUTROOTFH":
                cur = "/"
            elif op == "PUTFH":
                cur = paths.get(o.get("fh"))
            elif op in ("LOOKUP", "CREATE") or (op == "OPEN" and "name" in o):
                cur = cur + "/" + o.get("name", "?") if cur else None
            elif op == "LOOKUPP":
                cur = parent(cur) if cur else None
            elif op == "SAVEFH":
                saved = cur
            elif op == "RESTOREFH":
                cur = saved
            elif op == "GETFH" and cur and "fh" in o:
                paths[o["fh"]] = cur
            if op == "SEQUENCE":
                continue
            where = client if cur is None else "%s %s" % (cur, client)
            seqs.setdefault(where, []).append(key(o))
    return seqs


def client_of(name):
    return "client " + name.rsplit("client ", 1)[1]


def rename(name, cmap):
    c = client_of(name)
    return name[:len(name) - len(c)] + cmap.get(c, "none")


def aligned(seq, other):
    """Operations of seq in blocks aligned with other."""
    sm = difflib.SequenceMatcher(None, seq, other, autojunk=False)
    return sum(x.size for x in sm.get_matching_blocks())


def greedy(scores):
    """{a: b} from (-matched, a, b) triples, the best pairs first, each side once."""
    pair, used = {}, set()
    for _, a, b in sorted(scores):
        if a not in pair and b not in used:
            pair[a] = b
            used.add(b)
    return pair


def client_pairing(o, r):
    """{original client: replay client}, by the operations their sequences share."""
    oc = sorted({client_of(n) for n in o})
    rc = sorted({client_of(n) for n in r})
    scores = []
    for a in oc:
        for b in rc:
            m = sum(aligned(seq, r.get(n[:len(n) - len(a)] + b, []))
                    for n, seq in o.items() if client_of(n) == a)
            if m:
                scores.append((-m, a, b))
    return greedy(scores)


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


def pairing(orig, rep):
    """{original client: replay client}: the pairs that match most operations first."""
    scores = [(-m, i, j) for i, seq in enumerate(orig) for j, other in enumerate(rep)
              for m in [aligned(seq, other)] if m]
    return greedy(scores)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("original")
    ap.add_argument("replay")
    ap.add_argument("--json")
    ap.add_argument("--dump", default="tbbt-dump")
    ap.add_argument("--show", type=int, default=10, help="differences to print")
    ap.add_argument("--by", choices=("object", "client"), default="object",
                    help="compare the sequences per object (default) or per client")
    a = ap.parse_args()
    if a.by == "object":
        o, r = by_object(a.original, a.dump), by_object(a.replay, a.dump)
        names = sorted(o)
        orig = [o[n] for n in names]
        rep = [r.get(n, []) for n in names]
        pair = {i: i for i in range(len(names))}
        # clients are paired by content (the endpoints' numbers differ), each with the
        # replay client whose sequences match most
        cmap = client_pairing(o, r)
        rep = [r.get(rename(n, cmap), []) for n in names]
    else:
        orig, rep = by_client(a.original, a.dump), by_client(a.replay, a.dump)
        pair = pairing(orig, rep)
    total = matched = 0
    shown = 0
    for i, seq in enumerate(orig):
        other = rep[pair[i]] if i in pair else []
        sm = difflib.SequenceMatcher(None, seq, other, autojunk=False)
        m = aligned(seq, other)
        total += len(seq)
        matched += m
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag != "equal" and shown < a.show:
                print("%s %d: %s original %s / replay %s" %
                      (a.by, i, tag, seq[i1:i2][:3], other[j1:j2][:3]))
                shown += 1
    share = matched / total if total else 1.0
    r = {"by": a.by, "sequences_original": len(orig), "sequences_replay": len(rep),
         "ops_original": total, "ops_matched": matched, "share": share}
    print("v4-opseq: %d of %d operations (%.4f) in the same per-%s sequence, %d/%d "
          "sequences" % (matched, total, share, a.by, len(orig), len(rep)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0 if share >= 0.999 else 1


if __name__ == "__main__":
    sys.exit(main())
