#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job, end to end, on a fresh Debian 12 machine (as root): installs the
# dependencies, builds tbbt, starts the lab NFS-Ganesha server on 127.0.0.1, records
# real NFSv3 client traffic (libnfs) with tcpdump, converts the capture into a TBBT
# trace and prints the summary.  Later stages (tbbt-init, tbbt-play, the report) join
# here as they are built.  Everything it starts is stopped at the end.
#
#   bash tools/demo.sh [--ops N] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
ops=20000
out=$top/out/demo
while [ $# -gt 0 ]; do
  case "$1" in
    --ops) ops=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
say() { echo "demo: $*"; }
[ "$(id -u)" -eq 0 ] || { echo "demo: must run as root (loop devices, tcpdump)" >&2; exit 1; }

say "installing dependencies (skipped when present)"
bash tools/install-deps.sh
say "building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
mkdir -p "$out"

trap 'bash tools/tbbt-lab stop -q >/dev/null 2>&1 || true' EXIT
say "starting the lab server and recording client traffic ($ops extra operations)"
bash tools/make-captures.sh --build build --out "$out" --only v3-tcp --big "$ops" --no-verify >"$out/capture.log" 2>&1 \
  || { tail -n 20 "$out/capture.log"; exit 1; }
cap=$out/big.pcap
say "capture: $cap ($(du -h "$cap" | cut -f1))"

say "converting"
build/src/extract/tbbt-convert --summary-json "$out/summary.json" -o "$out/demo.tbbt" "$cap"
python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("  packets %d, RPC calls %d, replies %d, pairs %d, unmatched calls %d / replies %d, "
      "estimated lost %d" % (s["packets"], s["rpc_calls"], s["rpc_replies"], s["pairs"],
      s["unmatched_calls"], s["unmatched_replies"], s["estimated_lost_calls"]))
print("  %.0f MB/s, %.0f calls/s, peak RSS %.1f MB" % (s["mb_per_second"],
      s["calls_per_second"], s["peak_rss_bytes"] / 1e6))
for table in ("v3", "mount"):
    row = ", ".join("%s %d" % kv for kv in s["procedures"][table].items() if kv[1])
    print("  %s: %s" % (table, row))
print("  objects %d, hierarchy map entries %d, orphans %d; replay failures %d, corrective "
      "operations %d, remaining mismatches %d" % (s["objects"], s["map_entries"], s["orphans"],
      s["replay_failures"], sum(s["corrective_ops"].values()), s["remaining_mismatches"]))
PY
say "first records of the trace (tbbt-dump):"
# (the reader stops early: tbbt-dump then ends on SIGPIPE, which is fine here)
build/src/trace/tbbt-dump "$out/demo.tbbt" | awk '/^op / { print substr($0, 1, 160); if (++n == 5) exit }' || true
say "first entries of the hierarchy map:"
head -n 6 "$out/demo.tbbt.map" | cut -c1-160
say "checking the trace against its map (the start image a replay would see):"
build/src/extract/tbbt-convert --check "$out/demo.tbbt"
say "done: trace $out/demo.tbbt, map $out/demo.tbbt.map, summary $out/summary.json"
