#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""roundtrip-check.py: the summary of one round trip (tools/roundtrip.sh) and its checks.

    roundtrip-check.py --capture CAPDIR --out OUTDIR [--timestamp] [--expect] [-q]

Reads the capture's after.snap and workload.json (tools/capture-workload.sh) and the
round trip's orig.tbbt.map, after-replay.snap, play.json, compare.json and init.json;
writes OUTDIR/summary.json and prints one paragraph.

The end state: every path the trace knows at its end (map entries without a delete
time, by final path) must be in both trees with the same type, regular files with the
same size, symbolic links whose target the trace saw with that target; a path in the
replay's tree that the original lacks (tbbt-init's own tbbt-syn-*, tbbt-clone-* and
.tbbt-init left aside) is an extra object.  Objects below a directory whose name the
capture never showed (a subdirectory mounted by a client whose MOUNT call was not
captured, and never looked up or listed by name: tbbt-init builds it as
tbbt-unnamed-N, docs/hierarchy-map.md) cannot be at their original paths; they are
counted apart (tree.unnamed), not checked.

--expect checks the figures of a faithful replay (the acceptance of issue 15): the
player finished with no replay failure and no reply mismatch (and --verify ok when it
ran); tbbt-compare found no status difference, no real reply difference, and at least
99.9 % of the original's NFS operations identical; the end state equal; with
--timestamp, the player's own timing error on the wire (compare.json timing.own_lag_us)
p99 at most 1 ms (fsdep order: its median, since tbbt-compare counts the player's holds
for overlapping conflicting requests as its own lag there).  Exit 1 when one misses, naming it.

The snapshot format and the map's escaping come from tools/tbbtfmt.py.
Exit codes: 0 success, 1 failure (or a missed expectation), 2 usage error.  Standard
library only.
"""
import argparse
import json
import os
import sys

import tbbtfmt

PROG = "roundtrip-check.py"
OWN_LAG_P99_US = 1000.0
IDENTICAL_MIN = 0.999


def die(msg, code=1):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(code)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read {path}: {e}")


def load_snap(path):
    """PATH -> (TYPE, SIZE, TARGET) of a tree-snap.py snapshot, paths and targets as bytes."""
    try:
        snap = tbbtfmt.snap_load(path)
        return {tbbtfmt.unescape(p): (r["type"], r["size"],
                                      tbbtfmt.unescape(r["target"]) if r["target"] != "-" else None)
                for p, r in snap.items()}
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    except ValueError as e:
        die(f"{path}: {e}")


def load_map_end(path):
    """Final path -> (type, target) of the map's entries alive at the trace's end."""
    end = {}
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                f10 = line.rstrip("\n").split("\t")
                if len(f10) < 10:
                    die(f"{path}: malformed entry {line[:60]!r}")
                if f10[4] != "-" or f10[0] == "0":
                    continue
                target = tbbtfmt.unescape(f10[7]) if f10[7] != "-" else None
                end[b"." if f10[6] == "." else tbbtfmt.unescape(f10[6])] = (f10[1], target)
    except OSError as e:
        die(f"cannot read {path}: {e}")
    except ValueError as e:
        die(f"{path}: {e}")
    return end


def own_object(p):
    parts = p.split(b"/")
    return any(c.startswith(b"tbbt-syn-") or c.startswith(b"tbbt-clone-") or c == b".tbbt-init"
               or c == b"lost+found" for c in parts)


def unnamed(p):
    return any(c.startswith(b"tbbt-unnamed-") for c in p.split(b"/"))


def tree_check(known, orig, replay):
    missing, differ, extra, nameless = [], [], [], 0
    for p, (mtype, target) in sorted(known.items()):
        if unnamed(p):
            nameless += 1   # the capture never named a directory above it
            continue
        if p not in orig:
            continue        # gone from the original's tree behind the trace's back
        if p not in replay:
            missing.append(p)
            continue
        a, b = orig[p], replay[p]
        if a[0] != b[0] or (a[0] == "f" and a[1] != b[1]) or \
                (a[0] == "l" and target is not None and a[2] != b[2]):
            differ.append((p, a, b))
    for p in sorted(replay):
        if p not in orig and not own_object(p) and not unnamed(p) and p != b".":
            extra.append(p)
    return missing, differ, extra, nameless


def main():
    ap = argparse.ArgumentParser(prog=PROG, description="Summary and checks of one round trip.")
    ap.add_argument("--capture", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timestamp", action="store_true", help="the replay ran in timestamp timing")
    ap.add_argument("--expect", action="store_true", help="check the acceptance figures")
    ap.add_argument("-q", action="store_true", help="no paragraph on stdout")
    a = ap.parse_args()

    play = load_json(os.path.join(a.out, "play.json"))
    cmp_ = load_json(os.path.join(a.out, "compare.json"))
    init = load_json(os.path.join(a.out, "init.json"))
    wl_path = os.path.join(a.capture, "workload.json")
    wl = load_json(wl_path) if os.path.exists(wl_path) else {}
    known = load_map_end(os.path.join(a.out, "orig.tbbt.map"))
    orig = load_snap(os.path.join(a.capture, "after.snap"))
    replay = load_snap(os.path.join(a.out, "after-replay.snap"))
    missing, differ, extra, nameless = tree_check(known, orig, replay)

    cap = wl.get("capture", {})
    t = cmp_.get("timing", {})
    rate = play.get("throughput_ops") or 0
    trace_rate = play.get("trace_rate_ops") or 0
    cpu = play.get("cpu") or {}
    s = {
        "capture": os.path.basename(os.path.normpath(a.capture)),
        "mix": wl.get("mix"),
        "order": play.get("order"), "timing": play.get("timing"), "speed": play.get("speed"),
        "init": {"mode": init.get("mode"), "seconds": init["end"] - init["start"]},
        "ops": play.get("ops_issued"), "replay_failures": play.get("replay_failures"),
        "reply_mismatches": play.get("reply_mismatches"),
        "skipped_by_reason": play.get("skipped_by_reason"),
        "finished": play.get("finished"), "verify": play.get("verify"),
        "grace": play.get("grace"), "jukebox": play.get("jukebox"),
        "wall_seconds": play.get("wall_seconds"),
        "capture_seconds": cap.get("duration_s"),
        "wall_to_capture": (play.get("wall_seconds") / cap["duration_s"])
        if cap.get("duration_s") else None,
        "rate_ops": rate, "trace_rate_ops": trace_rate,
        "rate_to_trace": rate / trace_rate if trace_rate else None,
        "cpu_us_per_op": cpu.get("us_per_op"),
        "matched": cmp_.get("matched"), "missing": cmp_.get("missing"),
        "identical_fraction": cmp_.get("identical_fraction"),
        "status_diffs": sum(cmp_.get("status_diffs", {}).values()),
        "arg_diffs": sum(cmp_.get("arg_diffs", {}).values()),
        "reply_diffs": sum(cmp_.get("reply_diffs", {}).values()),
        "reply_diffs_image": sum(cmp_.get("reply_diffs_image", {}).values()),
        "reply_diffs_racy": sum(cmp_.get("reply_diffs_racy", {}).values()),
        "lag_us": t.get("lag_us"), "own_lag_us": t.get("own_lag_us"),
        "held_us": t.get("held_us"), "reaction_us": t.get("reaction_us"),
        "tree": {"known": len(known), "missing": len(missing), "differ": len(differ),
                 "extra": len(extra), "unnamed": nameless,
                 "first": [p.decode("ascii", "backslashreplace") for p in (missing + [d[0] for d in differ] + extra)[:10]]},
    }
    with open(os.path.join(a.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(s, f, indent=1)
        f.write("\n")

    def q(x, k):
        return (x or {}).get(k)

    if not a.q:
        print(f"{s['capture']}: {s['order']} {s['timing']}, init {s['init']['mode']}: "
              f"{s['ops']} ops, failures {s['replay_failures']}, reply mismatches "
              f"{s['reply_mismatches']}; compare: matched {s['matched']}, identical "
              f"{s['identical_fraction']}, status diffs {s['status_diffs']}, reply diffs "
              f"{s['reply_diffs']} (+{s['reply_diffs_image']} image, +{s['reply_diffs_racy']} racy); "
              f"tree: {s['tree']['known']} known, {s['tree']['missing']} missing, "
              f"{s['tree']['differ']} differ, {s['tree']['extra']} extra, {nameless} unnamed; rate {rate:.0f} ops/s = "
              f"{(s['rate_to_trace'] or 0):.2f}x the capture's, wall {(s['wall_to_capture'] or 0):.2f}x, "
              f"cpu {(s['cpu_us_per_op'] or 0):.1f} us/op; lag p50/p99 {q(s['lag_us'], 'p50')}/"
              f"{q(s['lag_us'], 'p99')} us, own {q(s['own_lag_us'], 'p50')}/{q(s['own_lag_us'], 'p99')} us")
        for p in s["tree"]["first"]:
            print(f"  tree: {p}")

    if not a.expect:
        return 0
    miss = []
    if not s["finished"]:
        miss.append("the replay did not finish")
    if s["replay_failures"] != 0:
        miss.append(f"{s['replay_failures']} replay failures {play.get('replay_failures_by_kind')}")
    if s["reply_mismatches"] != 0:
        miss.append(f"{s['reply_mismatches']} reply mismatches {play.get('reply_mismatches_by_kind')}")
    if s["verify"] is not None and not s["verify"].get("ok"):
        miss.append(f"--verify: {s['verify']}")
    if s["status_diffs"]:
        miss.append(f"{s['status_diffs']} status differences {cmp_.get('status_diffs')}")
    if s["reply_diffs"]:
        miss.append(f"{s['reply_diffs']} reply differences {cmp_.get('reply_diffs')}")
    if (s["identical_fraction"] or 0) < IDENTICAL_MIN:
        miss.append(f"identical {s['identical_fraction']} < {IDENTICAL_MIN} "
                    f"(missing {s['missing']}, args {cmp_.get('arg_diffs')})")
    if missing or differ or extra:
        miss.append(f"end state: {len(missing)} missing, {len(differ)} differ, {len(extra)} extra "
                    f"({', '.join(s['tree']['first'][:5])})")
    if a.timestamp:
        # In fsdep order the player also holds a request for an earlier conflicting one
        # that overlapped it in the trace (their call order is kept), which tbbt-compare's
        # readiness model (the conservative rule: replies before the call) does not see:
        # there "own" includes those holds, and only its median is bounded.
        which = "p50" if s["order"] == "fsdep" else "p99"
        lag = q(s["own_lag_us"], which)
        if lag is None or lag > OWN_LAG_P99_US:
            miss.append(f"the player's own timing error {which} {lag} us > {OWN_LAG_P99_US:.0f} us")
    for m in miss:
        print(f"{PROG}: {s['capture']} ({s['order']} {s['timing']}): {m}", file=sys.stderr)
    return 1 if miss else 0


if __name__ == "__main__":
    sys.exit(main())
