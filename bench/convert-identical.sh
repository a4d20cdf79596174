#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Does a new build convert exactly as an old one did?  Every committed capture
# (traces/*.pcap, traces/*.pcapng), nfsdump text trace (tests/golden/nfsdump/) and text
# trace (tests/golden/*.txt, tests/golden/correct/*.txt, turned back with --from-text),
# plus the captures of any DIR given, is converted by both builds' tbbt-convert; the
# trace and map files must be byte-identical and the --summary-json the same once the
# timing keys (elapsed_seconds, mb_per_second, calls_per_second, pass_seconds,
# read_cpu_seconds, peak_rss_bytes, threads) are left out.  For refactors that must not
# change what the converter writes.
#
#   bash bench/convert-identical.sh OLD_BUILD NEW_BUILD [CAPTURE_DIR...]
#
# Exit status: 0 all identical, 1 some input differs (each named on stderr), 2 usage.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 12,12p "$0" | sed 's/^# *//' >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
old=$1/src/extract/tbbt-convert new=$2/src/extract/tbbt-convert
shift 2
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "convert-identical: no $b" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

inputs=()
for f in "$top"/traces/*.pcap "$top"/traces/*.pcapng "$top"/tests/golden/nfsdump/*.txt \
  "$top"/tests/golden/nfsdump/*.txt.gz "$top"/tests/golden/*.txt "$top"/tests/golden/correct/*.txt; do
  [ -f "$f" ] && inputs+=("$f")
done
for d in "$@"; do
  while IFS= read -r f; do inputs+=("$f"); done < <(find "$d" -type f \
    \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.pcap.gz' \) | sort)
done

strip() {   # the summary without its timing keys
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("elapsed_seconds", "mb_per_second", "calls_per_second", "pass_seconds",
          "read_cpu_seconds", "peak_rss_bytes", "threads"):
    d.pop(k, None)
print(json.dumps(d, sort_keys=True, indent=1))' "$1"
}

convert() {   # convert BIN INPUT OUTDIR: exit status into OUTDIR/rc
  local bin=$1 in=$2 out=$3 args=()
  mkdir -p "$out"
  case $in in
    */tests/golden/nfsdump/*) args=("$in") ;;
    */tests/golden/*.txt) args=(--from-text "$in") ;;
    *) args=("$in") ;;
  esac
  set +e
  "$bin" -q --threads 1 -o "$out/t.tbbt" --summary-json "$out/s.json" "${args[@]}" \
    2>"$out/err"
  echo $? >"$out/rc"
  set -e
}

n=0 bad=0
for in in "${inputs[@]}"; do
  n=$((n + 1))
  convert "$old" "$in" "$work/$n/old"
  convert "$new" "$in" "$work/$n/new"
  why=""
  [ "$(cat "$work/$n/old/rc")" = "$(cat "$work/$n/new/rc")" ] ||
    why="exit $(cat "$work/$n/old/rc") -> $(cat "$work/$n/new/rc")"
  for f in t.tbbt t.tbbt.map; do
    if [ -e "$work/$n/old/$f" ] || [ -e "$work/$n/new/$f" ]; then
      cmp -s "$work/$n/old/$f" "$work/$n/new/$f" || why="$why $f differs"
    fi
  done
  if [ -s "$work/$n/old/s.json" ] || [ -s "$work/$n/new/s.json" ]; then
    if ! diff <(strip "$work/$n/old/s.json" 2>/dev/null) \
      <(strip "$work/$n/new/s.json" 2>/dev/null) >"$work/$n/sdiff"; then
      why="$why summary differs: $(grep '^[<>]' "$work/$n/sdiff" | head -n 4 | tr '\n' ' ')"
    fi
  fi
  if [ -n "$why" ]; then
    echo "convert-identical: ${in#"$top"/}: $why" >&2
    bad=$((bad + 1))
  fi
done
echo "convert-identical: $((n - bad)) of $n inputs converted identically"
[ "$bad" -eq 0 ]
