#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Map and manifest integrity (docs/hierarchy-map.md "The map file", docs/tbbt-init.md
# "The manifest", docs/tbbt-play.md "Checks before the server"), without a server:
#  - the mutation campaign (mutate-files.py): 1000 random mutations of a map and 1000 of
#    a manifest made from traces/v3-tcp-mid.pcap, each rejected with exit 1 and one line, or
#    provably harmless;
#  - the findings of the fault campaign, as regressions: a map whose file size was
#    corrupted (47270 -> 0 in the campaign; here 61904 -> 0) is refused and builds nothing; mode 7777 makes
#    no set-uid file (1777) and a set-gid directory (3777); a map made with another trace
#    is refused by tbbt-play; a bad trace, a map given as --trace and an unwritable
#    --report-json are reported, naming the file, before any server is asked (the
#    server is 127.0.0.1 on a port where nothing listens); a manifest obj line whose ID
#    is a map entry's plus 2^32 is no entry of the map.
#   058-integrity.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
convert="$build/src/extract/tbbt-convert"
init="$build/src/aging/tbbt-init"
play="$build/src/player/tbbt-play"
for b in "$convert" "$init" "$play"; do
  [ -x "$b" ] || { echo "FAIL: $b is not built" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_fail() {   # expect_fail WHAT PATTERN CMD...: exit 1 and one line matching PATTERN
  local what=$1 pat=$2 rc=0; shift 2
  "$@" > "$work/out" 2> "$work/err" || rc=$?
  [ "$rc" -eq 1 ] || fail "$what: exit status $rc, want 1: $(cat "$work/err")"
  grep -q -- "$pat" "$work/err" || fail "$what: message '$(cat "$work/err")'"
  [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$what: not one line: $(cat "$work/err")"
  echo "ok: $what: $(cat "$work/err")"
}

# A trace, its map and an image with its manifest; a second trace for the mismatch.
"$convert" -q "$top/traces/v3-tcp-mid.pcap" -o "$work/t.tbbt"
"$convert" -q "$top/traces/v3-udp.pcap" -o "$work/u.tbbt"
mkdir "$work/img"
"$init" -q --map "$work/t.tbbt.map" --root "$work/img" --manifest "$work/t.manifest"
"$play" --check-only -q -t "$work/t.tbbt" -m "$work/t.manifest" \
  || fail "the original trace, map and manifest do not check"

# ------------------------------------------------------------------ the campaign
t0=$(date +%s.%N)
python3 "$here/mutate-files.py" --init "$init" --play "$play" --trace "$work/t.tbbt" \
  --map "$work/t.tbbt.map" --manifest "$work/t.manifest" --count 1000 --seed 58 \
  --work "$work" > "$work/campaign" || { cat "$work/campaign"; fail "mutation campaign"; }
t1=$(date +%s.%N)
echo "ok: mutation campaign ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s):"
sed 's/^/  /' "$work/campaign"

# ------------------------------------------------------------------ regressions
# A file's size corrupted in the map (61904 -> 0, checksum left): refused, nothing built.
awk -F'\t' -v OFS='\t' '!done && $2 == "f" && $3 ~ /^[1-9][0-9]*$/ && $4 == "0" {
    $3 = 0; done = 1 } { print }' "$work/t.tbbt.map" > "$work/size.map"
cmp -s "$work/t.tbbt.map" "$work/size.map" && fail "no file with a size in the map"
mkdir "$work/size"
expect_fail "a corrupted size" "hierarchy map '$work/size.map': last line: the checksum does not match" \
  "$init" -q --map "$work/size.map" --root "$work/size" --manifest "$work/size.manifest"
[ -z "$(ls -A "$work/size")" ] || fail "a corrupted map built something"

# Mode 7777 (checksum recomputed: a valid map): no set-uid file, no set-gid file.
printf '# tbbt-map 3\n1\td\t-\t0\t-\t.\t.\t-\t1\t0755:0:0\n2\tf\t5\t0\t-\tf\tf\t-\t1\t7777:0:0\n3\td\t-\t0\t-\td\td\t-\t1\t7777:0:0\n' > "$work/mode.map"
python3 "$here/mapsum.py" "$work/mode.map"
mkdir "$work/mode"
"$init" -q --map "$work/mode.map" --root "$work/mode" --manifest "$work/mode.manifest"
[ "$(stat -c %a "$work/mode/f")" = 1777 ] || fail "mode 7777 file made $(stat -c %a "$work/mode/f")"
[ "$(stat -c %a "$work/mode/d")" = 3777 ] || fail "mode 7777 dir made $(stat -c %a "$work/mode/d")"
echo "ok: mode 7777: file 1777 (no set-uid, set-gid), directory 3777 (no set-uid)"

# tbbt-play, before any server: the server is a port where nothing listens.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
srv=(--server 127.0.0.1 --export /nowhere --nfs-port "$port" --mount-port "$port" --connections 2)
expect_fail "a map made with another trace" \
  "map '$work/t.tbbt.map' was made with another trace" \
  "$play" -q -t "$work/u.tbbt" -m "$work/t.manifest" --map "$work/t.tbbt.map" "${srv[@]}"
expect_fail "a manifest built from another map" \
  "manifest '$work/t.manifest' was built from another map" \
  "$play" -q -t "$work/u.tbbt" -m "$work/t.manifest" --map "$work/u.tbbt.map" "${srv[@]}"
expect_fail "a map given as --trace" "trace '$work/t.tbbt.map': not a TBBT trace: it is a hierarchy map" \
  "$play" -q -t "$work/t.tbbt.map" -m "$work/t.manifest" "${srv[@]}"
size=$(stat -c %s "$work/t.tbbt")
head -c $((size / 2)) "$work/t.tbbt" > "$work/cut.tbbt"
expect_fail "a trace cut short" "trace '$work/cut.tbbt' at byte [0-9]*: input is truncated" \
  "$play" -q -t "$work/cut.tbbt" -m "$work/t.manifest" --map "$work/t.tbbt.map" "${srv[@]}"
expect_fail "an unwritable --report-json" \
  "cannot write --report-json '$work/no/such/dir/r.json'" \
  "$play" -q -t "$work/t.tbbt" -m "$work/t.manifest" --report-json "$work/no/such/dir/r.json" \
  "${srv[@]}"
expect_fail "a --timeseries that is a directory" "cannot write --timeseries '$work': Is a directory" \
  "$play" -q -t "$work/t.tbbt" -m "$work/t.manifest" --timeseries "$work" "${srv[@]}"
# An obj line whose ID is a map entry's plus 2^32 (checksum recomputed) names no entry.
python3 - "$work/t.manifest" "$work/big.manifest" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
for i, l in enumerate(lines):
    if l.startswith("obj\t"):
        f = l.split("\t")
        f[1] = str(int(f[1]) + (1 << 32))
        lines[i] = "\t".join(f)
        break
else:
    sys.exit("no obj line")
open(sys.argv[2], "w").write("\n".join(lines))
PY
python3 "$here/mapsum.py" "$work/big.manifest"
expect_fail "an obj ID past 2^32" "manifest '$work/big.manifest': object [0-9]* at .* is no entry" \
  "$play" --check-only -q -t "$work/t.tbbt" -m "$work/big.manifest" --map "$work/t.tbbt.map"
# A version 1 manifest (no checksum) is read with one warning.
grep -v '^map-crc32\|^# crc32' "$work/t.manifest" | sed '1s/.*/# tbbt-manifest 1/' > "$work/v1.manifest"
"$play" --check-only -t "$work/t.tbbt" -m "$work/v1.manifest" 2> "$work/err" > /dev/null \
  || fail "a version 1 manifest: $(cat "$work/err")"
grep -q "manifest '$work/v1.manifest' is version 1: it has no checksum" "$work/err" \
  || fail "no warning for a version 1 manifest: $(cat "$work/err")"
echo "ok: a version 1 manifest: $(head -1 "$work/err")"
echo "ok: map and manifest integrity"
