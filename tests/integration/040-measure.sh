#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-init --measure (aging metrics, docs/tbbt-init.md "Measuring aging") on fresh
# ext4 and XFS loop-device images (tools/loopfs.sh).  On each:
#  1. one file written contiguously (dd + fsync): 1 fragment, avg_fragment_size = its
#     blocks, avg_block_distance = 1; inode and parent distance equal what debugfs /
#     xfs_db and filefrag report; a symbolic link and a hard link do not count twice;
#  2. two files written by interleaved small appends (each its own open/write/fsync/
#     close): more fragments, a higher avg_block_distance and a smaller
#     avg_fragment_size than in 1;
#  3. the JSON has every key of the contract, free_avg_fragment_size and
#     avg_inode_distance are numbers;
#  4. a non-directory argument and a file system without FIEMAP (tmpfs) exit with
#     status 1 and one line on stderr.
# Needs root (loop devices, mount); fails, never skips, without it.
#   040-measure.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 040-measure.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 040-measure needs root (loop-device file systems)" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
init=$build/src/aging/tbbt-init
loopfs=$top/tools/loopfs.sh
[ -x "$init" ] || { echo "FAIL: $init not built" >&2; exit 1; }
work=$(mktemp -d)
mnt=$work/mnt
cleanup() {
  mountpoint -q "$work/tmpfs" 2>/dev/null && umount "$work/tmpfs"
  "$loopfs" umount "$mnt" || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# get FILE KEY: the value of KEY in the JSON object in FILE ("null" for null).
get() {
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print("null" if v is None else v)' "$@"
}
# check EXPR: a Python expression over the numbers given as name=value words.
check() {
  local expr=$1; shift
  python3 - "$expr" "$@" <<'EOF' || fail "$expr (with $*)"
import sys
env = {}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    env[k] = float(v)
sys.exit(0 if eval(sys.argv[1], {}, env) else 1)
EOF
}
first_block() { filefrag -v "$1" | awk '$1 == "0:" { sub(/\.\.$/, "", $4); print $4; exit }'; }

keys="files blocks avg_block_distance avg_fragment_size avg_fragment_distance
avg_parent_distance avg_inode_distance free_avg_fragment_size"

# Block holding inode INO of the file system on image IMG (debugfs / xfs_db).
inode_block() {
  local fs=$1 img=$2 ino=$3 bs=$4
  case "$fs" in
    ext4) debugfs -R "imap <$ino>" "$img" 2>/dev/null | awk '/located at block/ { sub(/,/, "", $4); print $4 }' ;;
    xfs) xfs_db -r -c "convert inode $ino daddr" "$img" | awk -v bs="$bs" '{ gsub(/[()]/, "", $2); print int($2 / (bs / 512)) }' ;;
  esac
}

run_fs() {
  local fs=$1 opts=""
  [ "$fs" = ext4 ] && opts="-b 4096"
  "$loopfs" mount --fs "$fs" --size 512M --mkfs-opts "$opts" "$mnt"
  mkdir "$mnt/one" "$mnt/two"

  # 1. One contiguous file (8 MiB = 2048 blocks of 4 KiB).
  dd if=/dev/urandom of="$mnt/one/f" bs=1M count=8 conv=fsync status=none
  ln -s f "$mnt/one/sym"
  ln "$mnt/one/f" "$mnt/one/hard"
  "$init" --measure "$mnt/one" --json >"$work/one.json"
  "$init" --measure "$mnt/one" >"$work/one.txt"
  local bs files blocks frags fsize bdist idist pdist
  bs=$(get "$work/one.json" block_size)
  files=$(get "$work/one.json" files)
  blocks=$(get "$work/one.json" blocks)
  frags=$(get "$work/one.json" fragments)
  fsize=$(get "$work/one.json" avg_fragment_size)
  bdist=$(get "$work/one.json" avg_block_distance)
  idist=$(get "$work/one.json" avg_inode_distance)
  pdist=$(get "$work/one.json" avg_parent_distance)
  check "bs == 4096 and files == 1 and blocks == 8 * 1048576 / bs" bs="$bs" files="$files" blocks="$blocks"
  check "frags == 1 and abs(fsize - blocks) < 1 and abs(bdist - 1) < 1e-9" \
    frags="$frags" fsize="$fsize" blocks="$blocks" bdist="$bdist"
  sync
  local fb ib db want_i want_p
  fb=$(first_block "$mnt/one/f")
  ib=$(inode_block "$fs" "$mnt.img" "$(stat -c %i "$mnt/one/f")" "$bs")
  if [ "$fs" = ext4 ]; then
    db=$(first_block "$mnt/one")            # ext4 maps directories
  else
    db=$(inode_block "$fs" "$mnt.img" "$(stat -c %i "$mnt/one")" "$bs")
  fi
  want_i=$(( fb > ib ? fb - ib : ib - fb ))
  want_p=$(( fb > db ? fb - db : db - fb ))
  check "abs(idist - want_i) < 0.5 and abs(pdist - want_p) < 0.5" \
    idist="$idist" want_i="$want_i" pdist="$pdist" want_p="$want_p"
  grep -q '^avg block distance *1.000 blocks$' "$work/one.txt" || fail "text output: $(cat "$work/one.txt")"

  # 2. Two files grown by interleaved 16 KiB appends, 64 each.
  local i f
  for i in $(seq 64); do
    for f in a b; do
      dd if=/dev/urandom of="$mnt/two/$f" bs=16k count=1 oflag=append conv=notrunc,fsync status=none
    done
  done
  "$init" --measure "$mnt/two" --json >"$work/two.json"
  local frags2 fsize2 bdist2 files2
  files2=$(get "$work/two.json" files)
  frags2=$(get "$work/two.json" fragments)
  fsize2=$(get "$work/two.json" avg_fragment_size)
  bdist2=$(get "$work/two.json" avg_block_distance)
  check "files2 == 2 and frags2 > files2 and bdist2 > bdist and fsize2 < fsize" files2="$files2" \
    frags2="$frags2" bdist2="$bdist2" bdist="$bdist" fsize2="$fsize2" fsize="$fsize"

  # 3. The contract's keys; free space and inode distance known on ext4 and XFS.
  "$init" --measure "$mnt" --json >"$work/all.json"
  python3 - "$work/all.json" $keys <<'EOF' || fail "JSON keys of $fs: $(cat "$work/all.json")"
import json, sys
d = json.load(open(sys.argv[1]))
missing = [k for k in sys.argv[2:] if k not in d]
assert not missing, missing
for k in ("free_avg_fragment_size", "avg_inode_distance", "avg_parent_distance"):
    assert isinstance(d[k], (int, float)) and d[k] > 0, k
assert d["files"] == 3 and d["vanished"] == 0 and d["skipped"] == 0
EOF
  echo "$fs: one file: $(tr -d '\n' <"$work/one.json")"
  echo "$fs: interleaved: $(tr -d '\n' <"$work/two.json")"
  echo "$fs: whole: $(tr -d '\n' <"$work/all.json")"
  "$loopfs" umount "$mnt"
}

run_fs ext4
run_fs xfs

# 4. Errors: one line on stderr, exit status 1.
expect_fail() {
  local what=$1 rc=0; shift
  "$init" "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq 1 ] || fail "$what: exit status $rc, expected 1"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$work/err")"
  [ ! -s "$work/out" ] || fail "$what: wrote to stdout"
  echo "$what: $(cat "$work/err")"
}
echo data >"$work/plain"
expect_fail "non-directory" --measure "$work/plain"
expect_fail "non-directory (json)" --measure "$work/plain" --json
mkdir "$work/tmpfs"
mount -t tmpfs none "$work/tmpfs"
echo data >"$work/tmpfs/f"
expect_fail "no FIEMAP (tmpfs)" --measure "$work/tmpfs"
echo "PASS: 040-measure"
