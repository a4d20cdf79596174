#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The lab server's read-ahead switch and drop-caches (tools/tbbt-lab, docs/lab.md,
# docs/readahead.md), in a private state directory:
#  1. start --readahead off: the loop device's queue and bdi read_ahead_kb are 0, the
#     loop device uses direct I/O, status and env report it;
#  2. restart --readahead on: both non-zero again (and the image is kept);
#  3. drop-caches: a file read through the mount is cached (a second read brings less
#     than an eighth of it from the device), and after drop-caches the same read reaches
#     the device again; with read-ahead off the reads reach it as 4 KiB requests;
#  4. a tiny synthetic reader trace (tbbt-synth, tbbt-init) replays over TCP and UDP with read-ahead off and on with zero replay failures, every
#     READ completed, and the loop device reads the bytes after drop-caches.
# Needs root; fails, never skips, without it.  The lab ports must be free.
#   090-lab-readahead.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 090-lab-readahead.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 090-lab-readahead needs root (it starts the lab NFS server)" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
lab=$top/tools/tbbt-lab
synth=$build/src/synth/tbbt-synth
init=$build/src/aging/tbbt-init
play=$build/src/player/tbbt-play
for b in "$synth" "$init" "$play"; do
  [ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 is not installed" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/tbbt-lab-090.XXXXXX)
work=$(mktemp -d)
cleanup() {
  bash "$lab" stop --dir "$dir" -q || true
  mountpoint -q "$dir/mnt" 2>/dev/null || rm -rf "$dir"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "090-lab-readahead: $*"; }

ra_values() {   # prints "QUEUE_KB BDI_KB" of the lab's loop device
  local name=${TBBT_LAB_DEV#/dev/}
  echo "$(cat "/sys/block/$name/queue/read_ahead_kb")" \
    "$(cat "/sys/class/bdi/$(cat "/sys/block/$name/dev")/read_ahead_kb")"
}
dev_reads() {   # prints "READ_IOS READ_SECTORS" of the lab's loop device
  awk '{ print $1, $3 }' "/sys/block/${TBBT_LAB_DEV#/dev/}/stat"
}
read_file() {   # reads FILE; prints "REQUESTS KIB" that reached the loop device
  local i0 s0 i1 s1
  read -r i0 s0 <<<"$(dev_reads)"
  cat "$1" >/dev/null
  read -r i1 s1 <<<"$(dev_reads)"
  echo "$((i1 - i0)) $(((s1 - s0) / 2))"
}

# The lab's variables (a failing tbbt-lab env fails the test: eval of a command
# substitution would not).
lab_env() {
  local v
  v=$(bash "$lab" env --dir "$dir") || fail "tbbt-lab env failed"
  eval "$v"
}

# ------------------------------------------------------------------ 1. off
bash "$lab" start --dir "$dir" --size 256M --readahead off -q >/dev/null ||
  fail "cannot start the lab with --readahead off in $dir"
lab_env
[ -b "$TBBT_LAB_DEV" ] || fail "env: no loop device ('$TBBT_LAB_DEV')"
[ "$TBBT_LAB_READAHEAD" = off ] && [ "$TBBT_LAB_READAHEAD_KB" = 0 ] ||
  fail "env: read-ahead '$TBBT_LAB_READAHEAD' '$TBBT_LAB_READAHEAD_KB' (want off 0)"
[ "$(ra_values)" = "0 0" ] || fail "read-ahead off: queue/bdi read_ahead_kb are $(ra_values)"
[ "$(cat "/sys/block/${TBBT_LAB_DEV#/dev/}/loop/dio")" = 1 ] ||
  fail "the loop device does not use direct I/O"
bash "$lab" status --dir "$dir" | grep -q "read-ahead 0 KiB" ||
  fail "status does not show read-ahead 0: $(bash "$lab" status --dir "$dir")"
say "off: $TBBT_LAB_DEV queue/bdi read_ahead_kb $(ra_values), direct I/O on"

# ------------------------------------------------------------------ 3. drop-caches (off)
f=$TBBT_LAB_EXPORT/probe
dd if=/dev/urandom of="$f" bs=1M count=8 status=none
sync
bash "$lab" drop-caches --dir "$dir" -q || fail "drop-caches failed"
read -r cold_n cold_kb <<<"$(read_file "$f")"
read -r warm_n warm_kb <<<"$(read_file "$f")"
bash "$lab" drop-caches --dir "$dir" -q || fail "drop-caches failed"
read -r drop_n drop_kb <<<"$(read_file "$f")"
say "8 MiB read, read-ahead off: cold $cold_n reads / $cold_kb KiB, warm $warm_n reads / $warm_kb KiB," \
  "after drop-caches $drop_n reads / $drop_kb KiB"
[ "$cold_kb" -ge 8192 ] || fail "the cold read did not reach the device"
# The warm read's data comes from the page cache.  Other readers of the device may add
# a little meanwhile (one CI run saw 53 requests during it, most likely udev probing the
# newly attached loop device): less than an eighth of the file is still "cached".
[ "$warm_kb" -lt 1024 ] ||
  fail "the warm read reached the device ($warm_n reads, $warm_kb KiB of 8192)"
[ "$drop_kb" -ge 8192 ] || fail "after drop-caches the read did not reach the device"
# 8 MiB in 4 KiB pages: 2048 requests (a few more for metadata), nothing merged.
[ "$drop_n" -ge 2048 ] || fail "read-ahead off but only $drop_n requests for 8 MiB"

# ------------------------------------------------------------------ 2. on
bash "$lab" restart --dir "$dir" --readahead on -q >/dev/null || fail "restart --readahead on"
lab_env
read -r q b <<<"$(ra_values)"
[ "$q" -gt 0 ] && [ "$b" -gt 0 ] && [ "$TBBT_LAB_READAHEAD" = on ] &&
  [ "$TBBT_LAB_READAHEAD_KB" = "$b" ] || fail "read-ahead on: queue $q, bdi $b, env" \
  "$TBBT_LAB_READAHEAD $TBBT_LAB_READAHEAD_KB"
[ -s "$f" ] || fail "restart lost the image's contents"
bash "$lab" drop-caches --dir "$dir" -q || fail "drop-caches failed"
read -r on_n on_kb <<<"$(read_file "$f")"
say "on: queue/bdi read_ahead_kb $q $b; 8 MiB cold read: $on_n reads / $on_kb KiB"
[ "$on_n" -lt 512 ] || fail "read-ahead on but $on_n requests for 8 MiB"
rm -f "$f"

# ------------------------------------------------------------------ 4. a tiny replay
bash "$lab" stop --dir "$dir" -q
bash "$lab" start --dir "$dir" --size 256M --readahead off -q >/dev/null ||
  fail "cannot start the lab again"
lab_env
"$synth" --readers 4 --stride 2 --reorder 10% --scale 1/64 -q -o "$work/t.tbbt" ||
  fail "tbbt-synth"
root=$TBBT_LAB_EXPORT/img
mkdir "$root"
"$init" --map "$work/t.tbbt.map" --root "$root" --manifest "$work/t.manifest" -q >/dev/null ||
  fail "tbbt-init"
for ra in off on; do
  for proto in tcp udp; do
    bash "$lab" restart --dir "$dir" --readahead "$ra" -q >/dev/null || fail "restart $ra"
    bash "$lab" drop-caches --dir "$dir" -q
    read -r i0 s0 <<<"$(dev_reads)"
    timeout 120 "$play" --trace "$work/t.tbbt" --manifest "$work/t.manifest" \
      --server 127.0.0.1 --export "$TBBT_LAB_EXPORT" --proto "$proto" --order fsdep \
      --timing full -q --report-json "$work/r.json" --client-outstanding 2 2>"$work/err" ||
      fail "tbbt-play ($ra, $proto): exit status $?: $(cat "$work/err")"
    read -r i1 s1 <<<"$(dev_reads)"
    python3 - "$work/r.json" "$ra $proto" "$(((s1 - s0) * 512))" "$((i1 - i0))" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
reads = r["procedures"]["read"]["count"]
ok = r["finished"] and r["replay_failures"] == 0 and r["ops_unknown"] == 0
ok &= reads == 512 and int(sys.argv[3]) >= 512 * 8192
print(f'090-lab-readahead: replay {sys.argv[2]}: {reads} reads in {r["wall_seconds"]:.3f} s, '
      f'{r["replay_failures"]} failures; device read {int(sys.argv[3]) >> 10} KiB in '
      f'{sys.argv[4]} requests')
sys.exit(0 if ok else 1)
PY
      fail "replay $ra $proto: $(cat "$work/r.json")"
  done
done
say "all checks passed"
