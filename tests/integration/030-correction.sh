#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hierarchy map and pre-play correction on the committed captures (traces/):
#  1. the map of each capture lists every object the scenario made (check-map.py),
#     `tbbt-convert --check` of each full-snaplen capture (no loss, no correction)
#     reports 0 mismatches, and so does --check of every converted (corrected) trace;
#  2. simulated loss: records are deleted from the text form of the trace
#     (drop-records.py, rates 2-20 %, 8 seeds per rate); each lossy trace is converted
#     without correction and checked (mismatches before), then with correction, and the
#     result is checked against its own map (mismatches after).
# Fails if any lossless check reports a mismatch, if correction ever leaves more
# mismatches than it found, or if fewer than MIN_CLEAN % (default: all) of the lossy
# runs end with zero mismatches (docs/correction.md).
#   030-correction.sh BUILD_DIR [MIN_CLEAN]
set -euo pipefail
build=$(cd "$1" && pwd)
min_clean=${2:-100}
top=$(cd "$(dirname "$0")/../.." && pwd)
conv=$build/src/extract/tbbt-convert
dump=$build/src/trace/tbbt-dump
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
json() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }

for cap in "$top"/traces/*.pcap "$top"/traces/*.pcapng; do
  name=$(basename "$cap")
  # A cut from the middle of a run has no scenario directory and loses the calls and
  # replies at its edges (its map and replay are checked by 070-play).
  case "$name" in *-mid*) continue ;; esac
  "$conv" -q -o "$work/$name.tbbt" "$cap"
  python3 "$top/tests/integration/check-map.py" "$work/$name.tbbt.map"
  case "$name" in
    *s256*) ;;    # snap-length cuts lose call arguments: that is loss, corrected below
    *)
      "$conv" -q --check --summary-json "$work/chk.json" "$cap"
      n=$(json "$work/chk.json" remaining_mismatches)
      [ "$n" -eq 0 ] || { echo "FAIL: --check of $name (no loss) reports $n mismatches"; exit 1; }
      ;;
  esac
  "$conv" --check --summary-json "$work/chk.json" "$work/$name.tbbt" >/dev/null
  n=$(json "$work/chk.json" remaining_mismatches)
  [ "$n" -eq 0 ] || { echo "FAIL: --check of the converted $name reports $n mismatches"; exit 1; }
done
echo "ok: lossless captures: maps complete, 0 mismatches"

runs=0 clean=0 before_sum=0 after_sum=0 corr_sum=0
printf '%-20s %5s %4s %7s %10s %7s\n' capture rate seed before corrective after
for cap in "$top"/traces/v3-tcp.pcap "$top"/traces/v3-udp.pcap "$top"/traces/v3-tcp-s256.pcap; do
  name=$(basename "$cap")
  "$conv" -q --no-correct -o "$work/base.tbbt" "$cap"
  "$dump" "$work/base.tbbt" > "$work/base.txt"
  for rate in 0.02 0.05 0.1 0.2; do
    for seed in 1 2 3 4 5 6 7 8; do
      python3 "$top/tests/integration/drop-records.py" "$work/base.txt" "$work/l.txt" "$rate" "$seed" >/dev/null
      "$conv" -q --from-text "$work/l.txt" -o "$work/l.tbbt"
      "$conv" -q --no-correct -o "$work/u.tbbt" "$work/l.tbbt"
      "$conv" -q --check --summary-json "$work/u.json" "$work/u.tbbt"
      "$conv" -q -o "$work/c.tbbt" --summary-json "$work/c.json" "$work/l.tbbt"
      "$conv" -q --check --summary-json "$work/k.json" "$work/c.tbbt"
      b=$(json "$work/u.json" remaining_mismatches)
      a=$(json "$work/k.json" remaining_mismatches)
      k=$(python3 -c "import json,sys; print(sum(json.load(open(sys.argv[1]))['corrective_ops'].values()))" "$work/c.json")
      printf '%-20s %5s %4s %7s %10s %7s\n' "$name" "$rate" "$seed" "$b" "$k" "$a"
      [ "$a" -le "$b" ] || { echo "FAIL: correction left more mismatches ($a) than it found ($b)"; exit 1; }
      runs=$((runs + 1)); before_sum=$((before_sum + b)); after_sum=$((after_sum + a)); corr_sum=$((corr_sum + k))
      [ "$a" -ne 0 ] || clean=$((clean + 1))
    done
  done
done
echo "lossy runs: $runs; mismatches before correction $before_sum, after $after_sum;" \
     "corrective records $corr_sum; runs with 0 mismatches after correction: $clean"
[ $((clean * 100)) -ge $((min_clean * runs)) ] \
  || { echo "FAIL: only $clean of $runs lossy runs end consistent (want >= $min_clean %)"; exit 1; }
echo "ok: correction"
