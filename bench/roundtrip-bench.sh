#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# roundtrip-bench.sh: the player on real-client captures, measured by the round trip
# (tools/roundtrip.sh) against the capture made in the same run on the same lab server:
#
#   1. captures (tools/capture-workload.sh, libnfs clients of tools/nfs-workload; each on
#      a fresh lab): mixed with subdirectory mounts, mail, home, mixed on port 2049 only,
#      and mail paced by think time (for timestamp timing);
#   2. round trips: conservative and fsdep at full speed of each, conservative with
#      --causal-slack auto of the full-speed ones; the paced mail capture in
#      timestamp timing in both orders; mixed with the image built by tbbt-init --server;
#   3. a table: replay failures, reply mismatches, identical fraction, status and real
#      reply differences, end state, the replay's rate as a ratio to the capture's own
#      (both measured here), wall time to capture time, the player's CPU per operation
#      (default options) beside the traced clients' CPU per NFS call, and in timestamp
#      timing the lag on the wire (p99), the player's own part of it and its reaction to
#      releasing replies (tbbt-compare's split).
#      bench/out/roundtrip/roundtrip-bench.json holds every round trip's summary.
#
#   bench/roundtrip-bench.sh [--captures DIR] [--out DIR] [--quick] [--build DIR]
#                            [--baseline-build DIR | --baseline-src DIR | --baseline-rev REV]
#     --out DIR       captures, round trips, logs and the JSON (default bench/out/roundtrip)
#     --captures DIR  reuse captures made earlier (DIR/NAME/capture.pcap ...) instead of
#                     making new ones (the ratios are then to another run's captures)
#     --quick         smaller captures (2 clients x 300 operations)
#     --baseline-*    A/B against a baseline build (bench/baseline.sh): every round trip
#                     is made a second time with the baseline's tools, right after the
#                     new one or before it (swapped every round trip), into
#                     rt-CAPTURE-TAG-old/; prints "new/old throughput X.XX (target >=
#                     0.97), CPU per op new/old Y.YY (target <= 1.03)" per full-speed
#                     round trip and over all (one run each: operations over the replay's
#                     wall time, the player's CPU per operation), and writes
#                     roundtrip-ab.json (bench/ab.py's "baseline_comparison"); the table
#                     is the new build's
#
# Needs root, the lab's packages and a build; runs the lab in its own state directory
# (inside tools/lab-ns when other labs run).  Exit 0, 1 failure, 2 usage.
set -euo pipefail
readonly PROG=roundtrip-bench.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build captures="" out=$top/bench/out/roundtrip quick=0
bl_build="" bl_src="" bl_rev=""
die() { echo "$PROG: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --captures) captures=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --quick) quick=1 ;;
    --baseline-build) bl_build=${2:-}; shift ;;
    --baseline-src) bl_src=${2:-}; shift ;;
    --baseline-rev) bl_rev=${2:-}; shift ;;
    -h | --help) sed -n '3,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$PROG: unknown argument '$1'" >&2; exit 2 ;;
  esac
  [ $# -gt 0 ] || { echo "$PROG: option needs a value" >&2; exit 2; }
  shift
done
[ "$(id -u)" -eq 0 ] || die "must run as root"
mkdir -p "$out"
out=$(cd "$out" && pwd)
export TBBT_LAB_DIR=${TBBT_LAB_DIR:-/var/tmp/tbbt-lab-rtbench}
. "$top/bench/baseline.sh"
baseline_resolve "$PROG" "$top" "$bl_build" "$bl_src" "$bl_rev"
if [ -n "$base_build" ]; then
  build=$(cd "$build" && pwd)
  ab_new_json=$out/ab-new-build.json ab_old_json=$out/ab-old-build.json
  builds_show "$PROG" "$build" "$base_build"
fi

clients=6 ops=1000
[ "$quick" -eq 0 ] || { clients=2; ops=300; }
if [ -z "$captures" ]; then
  captures=$out/captures
  mk() {
    local name=$1; shift
    echo "$PROG: capturing $name" >&2
    bash "$top/tools/capture-workload.sh" --start-lab --build "$build" --out "$captures/$name" \
      --clients "$clients" "$@" >"$out/capture-$name.log" 2>&1 ||
      die "capture $name failed: $(tail -n 2 "$out/capture-$name.log")"
  }
  mk mixed-subdir --mix mixed --ops "$ops" --users 12 --subdir-mounts 0.4 --seed 1
  mk mail --mix mail --ops "$ops" --users 8 --seed 2
  mk home --mix home --ops "$ops" --users 8 --seed 3
  mk mixed-portonly --mix mixed --ops "$ops" --users 12 --port-only --seed 4
  mk mail-paced --mix mail --ops 100000 --seconds 10 --users 8 --seed 5 --think-us 15000
fi
captures=$(cd "$captures" && pwd)

runs=() nrt=0
# rt1 CAP DIR BUILD ARGS...: one round trip of CAP with BUILD's tools into $out/DIR.
rt1() {
  local cap=$1 dir=$2 b=$3; shift 3
  echo "$PROG: round trip $cap ${dir#rt-$cap-}" >&2
  bash "$top/tools/roundtrip.sh" --capture "$captures/$cap" --out "$out/$dir" \
    --build "$b" -q "$@" >"$out/$dir.log" 2>&1 ||
    die "round trip $cap ${dir#rt-$cap-} failed: $(tail -n 3 "$out/$dir.log")"
}
# rt CAP TAG ARGS...: the round trip of CAP (with a baseline, also the old build's, into
# rt-CAP-TAG-old, the old first every other time).
rt() {
  local cap=$1 tag=$2; shift 2
  [ -f "$captures/$cap/capture.pcap" ] || { echo "$PROG: no capture $cap, skipped" >&2; return 0; }
  nrt=$((nrt + 1))
  if [ -n "$base_build" ] && [ $((nrt % 2)) -eq 0 ]; then rt1 "$cap" "rt-$cap-$tag-old" "$base_build" "$@"; fi
  rt1 "$cap" "rt-$cap-$tag" "$build" "$@"
  if [ -n "$base_build" ] && [ $((nrt % 2)) -eq 1 ]; then rt1 "$cap" "rt-$cap-$tag-old" "$base_build" "$@"; fi
  runs+=("$out/rt-$cap-$tag/summary.json")
}
for cap in mixed-subdir mail home mixed-portonly mail-paced; do
  rt "$cap" conservative-full --order conservative
  rt "$cap" fsdep-full --order fsdep
done
for cap in mixed-subdir mail home mixed-portonly; do
  rt "$cap" conservative-slack-full --order conservative -- --causal-slack auto
done
rt mail-paced conservative-ts --order conservative --timing timestamp
rt mail-paced fsdep-ts --order fsdep --timing timestamp
rt mixed-subdir fsdep-full-server --order fsdep --init server

python3 - "$out/roundtrip-bench.json" "$captures" "${runs[@]}" <<'PY'
import json, os, sys
rows = [json.load(open(p)) for p in sys.argv[3:]]
def clients_cpu(name):
    """The traced clients' CPU per NFS call (nfs-workload's cpu_s over the capture's calls)."""
    try:
        w = json.load(open(os.path.join(sys.argv[2], name, "workload.json")))
        return w["totals"]["cpu_s"] * 1e6 / w["capture"]["nfs_calls"]
    except (OSError, KeyError, ValueError, ZeroDivisionError):
        return None     # a capture made before nfs-workload reported its CPU
for p, r in zip(sys.argv[3:], rows):
    r["clients_cpu_us_per_call"] = clients_cpu(os.path.basename(r["capture"]))
    try:
        r["causal_slack_us"] = json.load(open(os.path.join(os.path.dirname(p), "play.json")))["causal_slack_us"]
    except (OSError, KeyError, ValueError):
        r["causal_slack_us"] = None
json.dump(rows, open(sys.argv[1], "w"), indent=1)
def f(x, fmt="{:.2f}"):
    return "-" if x is None else fmt.format(x)
print("| capture | order | slack us | timing | init | ops | failures | mismatches | identical | status/reply diffs | end state (missing/differ/extra) | rate / capture | wall / capture | CPU us/op | clients' CPU us/call | lag p99 us | own p99 us | reaction p50/p99 us |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    t = r["tree"]
    ts = r["timing"] == "timestamp"
    print(f"| {r['capture']} | {r['order']} | {f(r['causal_slack_us'], '{:.0f}')} | {r['timing']} | {r['init']['mode']} | {r['ops']} | "
          f"{r['replay_failures']} | {r['reply_mismatches']} | {f(r['identical_fraction'], '{:.4f}')} | "
          f"{r['status_diffs']}/{r['reply_diffs']} | {t['missing']}/{t['differ']}/{t['extra']} | "
          f"{f(r['rate_to_trace'])} | {f(r['wall_to_capture'])} | {f(r['cpu_us_per_op'], '{:.1f}')} | "
          f"{f(r['clients_cpu_us_per_call'], '{:.1f}')} | "
          f"{f(r['lag_us']['p99'], '{:.0f}') if ts else '-'} | "
          f"{f(r['own_lag_us']['p99'], '{:.0f}') if ts else '-'} | "
          f"{(f(r['reaction_us']['p50'], '{:.0f}') + '/' + f(r['reaction_us']['p99'], '{:.0f}')) if ts else '-'} |")
PY

[ -n "$base_build" ] || exit 0
# A/B: each full-speed round trip against the baseline's (bench/ab.py).
python3 - "$out" "$top/bench" "${runs[@]}" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[2])
import ab
out, cmp = sys.argv[1], {}
for p in sys.argv[3:]:
    d = os.path.dirname(p)
    new, old = json.load(open(p)), json.load(open(os.path.join(d + "-old", "summary.json")))
    if new["timing"] != "full":
        continue                    # timestamp timing: the trace sets the rate
    rate = lambda r: r["ops"] / r["wall_seconds"] if r.get("ops") and r.get("wall_seconds") else 0
    cmp[os.path.basename(d)[3:]] = ab.comparison(rate(new), rate(old), new.get("cpu_us_per_op"),
                                                 old.get("cpu_us_per_op"), 1)
s = ab.summary(cmp, os.path.join(out, "ab-new-build.json"), os.path.join(out, "ab-old-build.json"))
json.dump({"baseline_comparison": s}, open(os.path.join(out, "roundtrip-ab.json"), "w"), indent=1)
PY
