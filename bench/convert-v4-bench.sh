#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NFSv4 conversion speed against the NFSv3 path, measured in one run (issue "NFSv4.0,
# 4.1 and 4.2", speed item: v4 conversion >= 0.5 of the v3 path's calls/s on a capture
# of >= 500,000 COMPOUNDs).
#
# Replicates a small real NFSv4 capture and a small real NFSv3 capture of the lab
# (default: the committed traces/v4/v41-tcp.pcap and traces/v3-tcp.pcap) into captures of
# at least --calls RPC calls each (bench/pcap-replicate.py: every repetition is a new set
# of client connections), then converts each --repeat times, interleaved, page-cached,
# and compares the fastest runs: RPC calls per second of wall time, and CPU per call.
# Prints the ratio v4/v3 and writes bench/out/convert-v4-bench.json.
#
# What the v4 figure covers: tbbt-convert decodes every COMPOUND operation by operation,
# counts it (summary key nfs4), places its objects in the hierarchy, pre-plays it
# (correction: the namespace rules on its lowered operations, and the stateids lost with
# their OPEN) and writes its record (trace format 1.3), as the v3 path does for its
# records.
#
#   bash bench/convert-v4-bench.sh [--build DIR] [--v4 FILE] [--v3 FILE] [--calls N]
#                                  [--repeat N] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=$top/build v4=$top/traces/v4/v41-tcp.pcap v3=$top/traces/v3-tcp.pcap calls=500000
repeat=3 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --v4) v4=$(readlink -f "$2"); shift ;;
    --v3) v3=$(readlink -f "$2"); shift ;;
    --calls) calls=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "convert-v4-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
conv=$build/src/extract/tbbt-convert
[ -x "$conv" ] || { echo "convert-v4-bench: build first ($conv)" >&2; exit 1; }
for f in "$v4" "$v3"; do
  [ -r "$f" ] || { echo "convert-v4-bench: cannot read '$f'" >&2; exit 1; }
done
out=$top/bench/out
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/var/tmp}/tbbt-v4bench.XXXXXX")
[ "$keep" -eq 1 ] || trap 'rm -rf "$work"' EXIT

python3 bench/pcap-replicate.py "$v4" "$work/v4.pcap" --min-calls "$calls"
python3 bench/pcap-replicate.py "$v3" "$work/v3.pcap" --min-calls "$calls"
cat "$work/v4.pcap" "$work/v3.pcap" >/dev/null      # page-cached before the first run

# One conversion: "wall cpu rpc_calls" of the run.
run() {
  local name=$1 t
  rm -f "$work/$name.tbbt" "$work/$name.tbbt.map" "$work/$name.json"
  t=$( { /usr/bin/time -f '%e %U %S' "$conv" -q --summary-json "$work/$name.json" \
           -o "$work/$name.tbbt" "$work/$name.pcap" >/dev/null; } 2>&1 | tail -n 1)
  python3 - "$t" "$work/$name.json" <<'EOF'
import json, sys
wall, user, sys_ = (float(x) for x in sys.argv[1].split())
d = json.load(open(sys.argv[2]))
print("%.2f %.2f %d %d" % (wall, user + sys_, d["rpc_calls"], d.get("nfs4", {}).get("compounds", 0)))
EOF
}

declare -A best_wall best_cpu ncalls ncomp
for ((i = 0; i < repeat; i++)); do
  for name in v4 v3; do
    read -r wall cpu n c < <(run "$name")
    echo "convert-v4-bench: run $((i + 1)) $name: $wall s wall, $cpu s CPU, $n calls"
    ncalls[$name]=$n ncomp[$name]=$c
    if [ -z "${best_wall[$name]:-}" ] || python3 -c "import sys; sys.exit(not $wall < ${best_wall[$name]})"; then
      best_wall[$name]=$wall
    fi
    if [ -z "${best_cpu[$name]:-}" ] || python3 -c "import sys; sys.exit(not $cpu < ${best_cpu[$name]})"; then
      best_cpu[$name]=$cpu
    fi
  done
done

python3 - "$out/convert-v4-bench.json" <<EOF
import json, sys
w4, w3 = ${best_wall[v4]}, ${best_wall[v3]}
c4, c3 = ${best_cpu[v4]}, ${best_cpu[v3]}
n4, n3 = ${ncalls[v4]}, ${ncalls[v3]}
r = {
    "v4": {"capture": "$v4", "rpc_calls": n4, "compounds": ${ncomp[v4]},
           "wall_seconds": w4, "cpu_seconds": c4, "calls_per_second": n4 / w4,
           "cpu_us_per_call": 1e6 * c4 / n4},
    "v3": {"capture": "$v3", "rpc_calls": n3, "wall_seconds": w3, "cpu_seconds": c3,
           "calls_per_second": n3 / w3, "cpu_us_per_call": 1e6 * c3 / n3},
    "repeat": $repeat,
}
r["ratio_calls_per_second"] = r["v4"]["calls_per_second"] / r["v3"]["calls_per_second"]
r["ratio_cpu_per_call"] = r["v4"]["cpu_us_per_call"] / r["v3"]["cpu_us_per_call"]
json.dump(r, open(sys.argv[1], "w"), indent=1)
print("convert-v4-bench: v4 %.0f calls/s (%d COMPOUNDs), v3 %.0f calls/s; "
      "v4/v3 calls/s %.2f (target >= 0.5), CPU per call v4/v3 %.2f"
      % (r["v4"]["calls_per_second"], r["v4"]["compounds"], r["v3"]["calls_per_second"],
         r["ratio_calls_per_second"], r["ratio_cpu_per_call"]))
EOF
