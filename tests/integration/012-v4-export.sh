#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NFSv4 export paths in the hierarchy map, on the committed mixed capture
# (traces/v3v4-mixed.pcap: an NFSv3 client mounts .../mnt/export/v3mix, NFSv4 clients
# walk PUTROOTFH; LOOKUP export; LOOKUP v4mix; GETFH).  Without --v4-export the v4 tree
# is one directory (export/v4mix) found by its pseudo path; with
# --v4-export /export=/var/tmp/tbbt-lab-v4h/mnt/export both share one tree, v3mix and
# v4mix at the top.  Either way the map names the pseudo path in a "# v4-export" line,
# has no tbbt-subtree-, and --check finds no mismatch.  Bad values are usage errors.
# No server, no root.
#   012-v4-export.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
conv="$build/src/extract/tbbt-convert"
cap="$top/traces/v3v4-mixed.pcap"

fail() { echo "FAIL: $*" >&2; exit 1; }

# tops MAP: the distinct first components of the start paths (field 6), sorted
tops() { grep -v '^#' "$1" | cut -f6 | cut -d/ -f1 | sort -u | tr '\n' ' '; }

"$conv" -q -o "$work/plain.tbbt" "$cap"
map="$work/plain.tbbt.map"
sed -n 2p "$map" | grep -qxP '# v4-export\t/export/v4mix\texport/v4mix' \
  || fail "no v4-export line after the header: $(sed -n 2p "$map")"
! grep -q 'tbbt-subtree-' "$map" || fail "the v4 tree is a tbbt-subtree- without --v4-export"
grep -qP '\texport/v4mix/client0\t' "$map" || fail "no export/v4mix/client0"
[ "$(grep -v '^#' "$map" | cut -f6 | grep -c '^export/v4mix/')" -ge 20 ] \
  || fail "the v4 objects are not under export/v4mix"
"$conv" --check "$work/plain.tbbt" | grep -q ', 0 mismatches' || fail "--check: mismatches"

"$conv" -q --v4-export /export=/var/tmp/tbbt-lab-v4h/mnt/export -o "$work/one.tbbt" "$cap"
map="$work/one.tbbt.map"
sed -n 2p "$map" | grep -qxP '# v4-export\t/export/v4mix\tv4mix' \
  || fail "--v4-export: v4-export line $(sed -n 2p "$map")"
! grep -q 'tbbt-subtree-' "$map" || fail "--v4-export: a tbbt-subtree- in the map"
[ "$(tops "$map")" = ". v3mix v4mix " ] || fail "--v4-export: top level is '$(tops "$map")'"
grep -qP '\tv4mix/client0\t' "$map" || fail "--v4-export: no v4mix/client0"
grep -qP '\tv3mix/scn\.9201\t' "$map" || fail "--v4-export: no v3mix/scn.9201"
"$conv" --check "$work/one.tbbt" | grep -q ', 0 mismatches' || fail "--check: mismatches"

for bad in export=/x /export /export=x /export/=/x /a=/b=/c /a/../b=/x; do
  rc=0; out=$("$conv" -q --v4-export "$bad" -o "$work/bad.tbbt" "$cap" 2>&1) || rc=$?
  [ "$rc" -eq 2 ] || fail "--v4-export '$bad' exited $rc, not 2"
  echo "$out" | head -n 1 | grep -q -- "--v4-export '$bad'" || fail "--v4-export '$bad': $out"
done
[ ! -e "$work/bad.tbbt" ] || fail "a refused --v4-export wrote a trace"
echo "012-v4-export: ok"
