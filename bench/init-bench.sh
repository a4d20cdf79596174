#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-init benchmark (issue "tbbt-init: build the initial image on a real disk and age it"),
# on a loop-device image (default 3 GiB ext4; --fs xfs) of a file on this machine's disk:
#  1. population without aging against the raw sequential write bandwidth of the same
#     file system, in the same run: `dd bs=1M conv=fsync` of the same number of bytes
#     into one file (target: tbbt-init >= 0.7 of dd);
#  2. a sweep of interleaving scope x appends per file: for each point the image is built
#     again (--force), measured (tbbt-init --measure --json: average block distance,
#     fragment size), and read back with a cold cache (`grep -r` after dropping the page
#     cache; median of 3), as in the TBBT paper's Figures 4 and 5.
# The map is synthetic (tests/integration/gen-map.py: many directories, skewed sizes).
# Prints a table and writes bench/out/init-bench.json.  Needs root.
#
#   bash bench/init-bench.sh [--build DIR] [--fs ext4|xfs] [--size 3G] [--data-mb 1024]
#                            [--scopes "4M 32M 256M"] [--appends "1 4 16 64"] [--repeat 3]
#                            [--loop-dio on|off]
# The loop device is attached with direct I/O to its image file (--loop-dio on, the
# default, as tools/tbbt-lab does): the image's blocks are then read from the disk as the
# file system asks for them, not through the host's page cache and its read-ahead on the
# image file, which would smooth over the fragmentation the sweep measures.
# Population is measured --repeat times (dd and tbbt-init alternating, each on a fresh file
# system with a cold cache); the median ratio is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD build=$top/build fs=ext4 size=3G data_mb=1024 repeat=3 dio=on
scopes="4M 32M 256M" appends_list="1 4 16 64"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --fs) fs=$2; shift ;;
    --size) size=$2; shift ;;
    --data-mb) data_mb=$2; shift ;;
    --scopes) scopes=$2; shift ;;
    --appends) appends_list=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --loop-dio) dio=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "init-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "init-bench: needs root" >&2; exit 1; }
init=$build/src/aging/tbbt-init
[ -x "$init" ] || { echo "init-bench: build first (cmake --build $build)" >&2; exit 1; }
out=$top/bench/out; mkdir -p "$out"
work=$(mktemp -d /var/tmp/tbbt-init-bench.XXXXXX)
mnt=$work/mnt
dev=""
unmount() {
  if mountpoint -q "$mnt" 2>/dev/null; then umount "$mnt"; fi
  if [ -n "$dev" ]; then losetup -d "$dev"; dev=""; fi
}
cleanup() { unmount; rm -rf "$work"; }
trap cleanup EXIT
fresh() {
  unmount
  rm -f "$work/img"; mkdir -p "$mnt"; truncate -s "$size" "$work/img"
  case "$fs" in ext4) mkfs.ext4 -q -F "$work/img" ;; xfs) mkfs.xfs -q -f "$work/img" ;; esac
  dev=$(losetup --find --show --direct-io="$dio" "$work/img")
  mount "$dev" "$mnt"
}
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
now() { date +%s.%N; }

# a map of about data_mb MB of files: lognormal sizes (median 8 KiB, mean about 50 KiB), capped at 8 MiB
files=$(( data_mb * 20 ))
python3 tests/integration/gen-map.py "$work/g.map" --dirs $(( files / 20 )) --files "$files" \
  --max-size 8388608 --seed 3
bytes=$(awk -F'\t' '$4 == "0" && $2 == "f" { s[$1] = $3 } END { t = 0; for (k in s) t += s[k]; print t }' "$work/g.map")

echo "init-bench: $fs image of $size, map of $files files, $((bytes / 1048576)) MiB"
# 1. population vs dd, alternating, median of the ratios
ratios=()
for r in $(seq "$repeat"); do
  fresh; cold
  t0=$(now); dd if=/dev/zero of="$mnt/dd" bs=1M count=$(( bytes / 1048576 )) conv=fsync status=none; t1=$(now)
  dd_mbs=$(awk -v b="$bytes" -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", int(b / 1048576) * 1048576 / (c - a) / 1e6 }')
  fresh; mkdir "$mnt/img"; cold
  # until the data is on the disk, as dd's conv=fsync
  t0=$(now); "$init" -q --map "$work/g.map" --root "$mnt/img" --manifest "$work/m" --no-progress
  sync -f "$mnt/img"; t1=$(now)
  init_mbs=$(awk -v b="$bytes" -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", b / (c - a) / 1e6 }')
  ratio=$(awk -v a="$init_mbs" -v b="$dd_mbs" 'BEGIN { printf "%.2f", a / b }')
  echo "population without aging, run $r: tbbt-init $init_mbs MB/s, dd $dd_mbs MB/s: ratio $ratio"
  ratios+=("$ratio")
done
ratio=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
echo "population without aging: median ratio $ratio of $repeat (target >= 0.7)"

# 2. sweep
printf '\n%-8s %8s %12s %14s %14s %12s %10s\n' scope appends "build s" "blk distance" "frag size" "frag dist" "grep s"
rows=()
for sc in $scopes; do
  for ap in $appends_list; do
    fresh; mkdir "$mnt/img"
    t0=$(now)
    "$init" -q --map "$work/g.map" --root "$mnt/img" --manifest "$work/m" --no-progress \
      --scope "$sc" --appends "$ap" --no-fragment-free
    t1=$(now)
    "$init" --measure "$mnt/img" --json > "$work/m.json"
    g=()
    for r in 1 2 3; do      # median of 3 cold-cache reads
      cold
      t2=$(now); grep -r -q zzzz-not-there "$mnt/img" || true; t3=$(now)
      g+=("$(awk -v a="$t2" -v c="$t3" 'BEGIN { printf "%.2f", c - a }')")
    done
    read -r bd fs_ fd < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['avg_block_distance'], d['avg_fragment_size'], d['avg_fragment_distance'])" "$work/m.json")
    b_s=$(awk -v a="$t0" -v c="$t1" 'BEGIN { printf "%.1f", c - a }')
    g_s=$(printf '%s\n' "${g[@]}" | sort -n | sed -n 2p)
    printf '%-8s %8s %12s %14.1f %14.1f %12.1f %10s\n' "$sc" "$ap" "$b_s" "$bd" "$fs_" "$fd" "$g_s"
    rows+=("{\"scope\": \"$sc\", \"appends\": $ap, \"build_s\": $b_s, \"avg_block_distance\": $bd, \"avg_fragment_size\": $fs_, \"avg_fragment_distance\": $fd, \"grep_s\": $g_s}")
  done
done
{
  echo "{\"fs\": \"$fs\", \"size\": \"$size\", \"bytes\": $bytes, \"dd_mb_s\": $dd_mbs, \"init_mb_s\": $init_mbs, \"ratio\": $ratio, \"sweep\": ["
  (IFS=,; echo "${rows[*]}")
  echo "]}"
} > "$out/init-bench-$fs.json"
echo "written: $out/init-bench-$fs.json"
