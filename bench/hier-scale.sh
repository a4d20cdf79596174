#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory and speed of tbbt-convert's pass B (TBBT-IDs, hierarchy map, pre-play correction)
# against the number of live objects (issue "tbbt-convert, part 2": at most 300 bytes of
# RSS per live object; peak RSS that grows with objects, not records).
#
# bench/ns-bench writes synthetic raw traces (directories of 1000 files, each created
# with its handle and attributes, written, looked up and stat'ed, plus EXTRA more
# stat/read records per file); tbbt-convert takes a TBBT trace as input and runs pass B
# alone on it.  Printed per trace: records, objects, seconds, records/s, peak RSS;
# then RSS per object from the slope between the two object counts, and the RSS ratio
# between two traces with the same objects and 5x the records.
#
#   bash bench/hier-scale.sh [--build DIR] [--small N] [--large N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$PWD/build small=200000 large=2000000
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --small) small=$2; shift ;;
    --large) large=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hier-scale: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
gen=$build/bench/ns-bench conv=$build/src/extract/tbbt-convert
[ -x "$gen" ] && [ -x "$conv" ] || { echo "hier-scale: build first (cmake --build $build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {   # run NAME OBJECTS EXTRA -> "records objects seconds rss_bytes"
  "$gen" gen "$2" "$work/$1.raw" 1000 "$3" > /dev/null
  "$conv" -q -o "$work/$1.tbbt" --summary-json "$work/$1.json" "$work/$1.raw"
  python3 - "$work/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(d["records"], d["objects"], d["pass_seconds"]["hierarchy"], d["peak_rss_bytes"])
PY
  rm -f "$work/$1.raw" "$work/$1.tbbt" "$work/$1.tbbt.map"
}

printf '%-8s %12s %10s %8s %12s %9s\n' trace records objects seconds records/s RSS_MB
declare -A R
for spec in "small $small 0" "large $large 0" "small5 $small 16"; do
  set -- $spec
  read -r recs objs secs rss < <(run "$1" "$2" "$3")
  R[$1]="$objs $rss"
  awk -v n="$1" -v r="$recs" -v o="$objs" -v s="$secs" -v m="$rss" \
    'BEGIN { printf "%-8s %12d %10d %8.2f %12.0f %9.1f\n", n, r, o, s, r / s, m / 1e6 }'
done
read -r o1 m1 <<< "${R[small]}"; read -r o2 m2 <<< "${R[large]}"; read -r o3 m3 <<< "${R[small5]}"
awk -v o1="$o1" -v m1="$m1" -v o2="$o2" -v m2="$m2" -v m3="$m3" 'BEGIN {
  printf "RSS per live object (slope small -> large): %.0f bytes (target <= 300)\n", (m2 - m1) / (o2 - o1)
  printf "peak RSS, same objects with ~5x the records / without: %.2f (1.00 = grows with objects only)\n", m3 / m1 }'
