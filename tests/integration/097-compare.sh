#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-compare on a real round trip (docs/tbbt-compare.md) against the lab server
# (NFS-Ganesha on an ext4 loop image, tools/tbbt-lab in a private state directory):
# the committed scenario capture traces/v3-tcp.pcap -> tbbt-convert -> tbbt-init ->
# tbbt-play (conservative order, full speed, --verify) with tcpdump capturing ->
# tbbt-convert of the replay's capture -> tbbt-compare.  Asserted (established on the
# lab): every one of the 161 NFS operations matched and identical (the 4 MOUNT records
# are never replayed), none missing, and the extras are only the player's own calls
# (machine name tbbt-play): its MNT, LOOKUP of the image root and grace probe (GETATTR and
# SETATTR of the image root, repeated while the restarted server is in its grace period)
# as start-up, and the READDIRPLUS of its --verify walk; the traces carry credentials,
# which are part of the matching key; no argument or status difference.  An fsdep replay
# of the same trace must match every operation too.  Also: the JSON keys, --plot, the
# exit status of unreadable inputs (1)
# and usage errors (2).  Needs root (lab, tcpdump); fails, never skips, without it.
#   097-compare.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 097-compare.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 097-compare needs root (it starts the lab NFS server and tcpdump)" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
play=$build/src/player/tbbt-play
convert=$build/src/extract/tbbt-convert
init=$build/src/aging/tbbt-init
compare=$build/src/compare/tbbt-compare
lab=$top/tools/tbbt-lab
for b in "$play" "$convert" "$init" "$compare"; do
  [ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
done
for t in python3 tcpdump gnuplot; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed" >&2; exit 1; }
done
dir=$(mktemp -d /var/tmp/tbbt-lab-097.XXXXXX)
work=$(mktemp -d)
# shellcheck source=tools/capture-lib.sh
. "$top/tools/capture-lib.sh"
cleanup() {
  capture_stop 0 || true
  bash "$lab" stop --dir "$dir" -q || true
  # Kept when the image is still mounted or on a loop device (stop failed).
  mountpoint -q "$dir/mnt" 2>/dev/null || [ -n "$(losetup -n -j "$dir/image.img")" ] ||
    rm -rf "$dir"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "097-compare: $*"; }

bash "$lab" start --dir "$dir" --size 512M -q || fail "cannot start the lab server in $dir"
export_dir=$dir/mnt/export

# capture FILE CMD...: runs CMD while tcpdump writes FILE (tools/capture-lib.sh: waits
# for its "listening on" line, stops it 2 s after the client so that the last block is
# kept).
capture() {
  local file=$1; shift
  capture_start "$file" "$file.err" 0 'port 2049 or port 20048' || fail "tcpdump did not start"
  local rc=0
  "$@" || rc=$?
  capture_stop || fail "tcpdump did not write $file"
  return $rc
}

# roundtrip NAME ARGS...: a fresh image, a restart (nothing cached), the replay captured
# and converted; then tbbt-compare with --json.
roundtrip() {
  local name=$1; shift
  local root
  root=$(mktemp -d "$export_dir/img-XXXXXX")
  "$init" --map "$work/orig.tbbt.map" --root "$root" --manifest "$work/$name.manifest" -q \
    >/dev/null || fail "$name: tbbt-init"
  bash "$lab" restart --dir "$dir" -q >/dev/null
  capture "$work/$name.pcap" timeout 300 "$play" --trace "$work/orig.tbbt" \
    --manifest "$work/$name.manifest" --server 127.0.0.1 --export "$export_dir" --verify -q \
    --report-json "$work/$name.play.json" "$@" 2>"$work/$name.play.err" ||
    fail "$name: tbbt-play: $(cat "$work/$name.play.err")"
  "$convert" -q -o "$work/$name.tbbt" "$work/$name.pcap" || fail "$name: convert the replay"
  "$compare" "$work/orig.tbbt" "$work/$name.tbbt" --json "$work/$name.cmp.json" \
    >"$work/$name.cmp.txt" || fail "$name: tbbt-compare exit status $?"
}

"$convert" -q -o "$work/orig.tbbt" "$top/traces/v3-tcp.pcap" || fail "convert v3-tcp.pcap"
roundtrip cons --order conservative --timing full
roundtrip fsdep --order fsdep --timing full

python3 - "$work/cons.cmp.json" "$work/fsdep.cmp.json" <<'PY' || fail "figures: $(cat "$work/cons.cmp.txt")"
import json, sys
keys = ["ops_original", "ops_replay", "matched", "identical", "identical_fraction", "missing",
        "missing_by_proc", "extra", "arg_diffs", "status_diffs", "reply_diffs",
        "reply_diffs_image", "reply_diffs_racy", "pairs_with_reply_diffs_image",
        "pairs_with_reply_diffs_racy", "credentials", "latency", "timing", "rate",
        "objects_mapped", "objects_unmapped"]
for path, name in zip(sys.argv[1:], ["cons", "fsdep"]):
    r = json.load(open(path))
    missing = [k for k in keys if k not in r]
    assert not missing, f"{name}: missing keys {missing}"
    e = r["extra"]
    print(f'097-compare: {name}: original {r["ops_original"]}, replay {r["ops_replay"]}, '
          f'matched {r["matched"]}, identical {r["identical"]}, missing {r["missing"]}, '
          f'extra {e}, arg {r["arg_diffs"]}, status {r["status_diffs"]}, '
          f'|lag| p99 {r["timing"]["lag_us"]["p99"]} us')
    assert r["ops_original"] == 165 and r["original_not_nfs"] == 4, name
    assert r["matched"] == 161 and r["missing"] == 0, name
    assert r["ops_replay"] == r["matched"] + sum(e.values()), name
    assert r["credentials"] is True, name
    assert e["startup"] >= 4 and e["verify"] == 1 and e["retry"] == 0 and e["other"] == 0, \
        f"{name}: extra {e}"
    assert r["objects_unmapped"] == 0 and r["mapping_conflicts"] == 0, name
    assert set(r["latency"]) >= {"getattr", "lookup", "read", "write", "create"}, name
    assert r["timing"]["lag_us"]["count"] == 161, name
    if name == "cons":
        assert r["identical"] == 161 and r["identical_fraction"] == 1, name
        assert not r["arg_diffs"] and not r["status_diffs"], name
    else:   # fsdep may send a READDIR(PLUS) continuation early, with cookie 0
        assert all(k.endswith(".cookie") for k in r["arg_diffs"]), r["arg_diffs"]
        assert not r["status_diffs"], name
PY

# Text summary, plot, exit status.
grep -q '^matched      161 (100.00% ' "$work/cons.cmp.txt" || fail "text summary: $(cat "$work/cons.cmp.txt")"
"$compare" -q "$work/orig.tbbt" "$work/cons.tbbt" --plot "$work/plots" || fail "--plot"
for f in lag latency; do
  for x in dat gp png svg; do
    [ -s "$work/plots/$f.$x" ] || fail "--plot: $f.$x missing or empty"
  done
done
rc=0; "$compare" -q "$work/orig.tbbt" "$work/nonexistent.tbbt" 2>"$work/err" || rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] || fail "unreadable replay: exit $rc: $(cat "$work/err")"
head -c 1000 "$work/cons.tbbt" >"$work/cut.tbbt"; cp "$work/cons.tbbt.map" "$work/cut.tbbt.map"
rc=0; "$compare" -q "$work/orig.tbbt" "$work/cut.tbbt" 2>"$work/err" || rc=$?
[ $rc -eq 1 ] || fail "truncated replay: exit $rc: $(cat "$work/err")"
rc=0; "$compare" "$work/orig.tbbt" 2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "one trace: exit $rc"
rc=0; "$compare" - "$work/cons.tbbt" <"$work/orig.tbbt" 2>"$work/err" || rc=$?
[ $rc -eq 2 ] && grep -q "standard input" "$work/err" ||
  fail "'-' as a trace: exit $rc: $(cat "$work/err")"
rc=0; "$compare" --speed 0 "$work/orig.tbbt" "$work/cons.tbbt" 2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "--speed 0: exit $rc"
"$compare" --help | grep -q -- '--root-b' || fail "--help"
"$compare" --version | grep -q '^tbbt-compare' || fail "--version"
say "ok"
