#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Converts every capture committed under traces/ (and traces/v4/) and checks the
# per-procedure pair counts and the NFSv4 per-operation counts against tshark (the
# independent decoder), and that the trace survives a
# dump -> from-text round trip byte for byte.  Needs tshark; no server.
#   010-tshark-committed.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v tshark >/dev/null || { echo "FAIL: tshark is not installed" >&2; exit 1; }

n=0
for cap in "$top"/traces/*.pcap "$top"/traces/*.pcapng "$top"/traces/*.pcap.gz \
           "$top"/traces/v4/*.pcap; do
  [ -e "$cap" ] || continue
  name=$(basename "$cap")
  "$build/src/extract/tbbt-convert" -q --summary-json "$work/$name.json" \
      -o "$work/$name.tbbt" "$cap"
  python3 "$top/tests/integration/compare-tshark.py" "$cap" "$work/$name.json"
  "$build/src/trace/tbbt-dump" "$work/$name.tbbt" > "$work/$name.txt"
  "$build/src/extract/tbbt-convert" --from-text "$work/$name.txt" -o "$work/$name.back"
  cmp "$work/$name.tbbt" "$work/$name.back" || { echo "FAIL: $name text round trip differs"; exit 1; }
  n=$((n + 1))
done
[ "$n" -ge 9 ] || { echo "FAIL: expected at least 9 committed captures, found $n" >&2; exit 1; }
echo "ok: $n committed captures agree with tshark"
