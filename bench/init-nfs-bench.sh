#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-init through NFS against tbbt-init through local system calls, into the same
# export of the lab server (NFS-Ganesha, VFS backend, on a loop-mounted ext4 image;
# tools/tbbt-lab, started here inside a private namespace with tools/lab-ns):
# docs/tbbt-init.md, "Building through NFS".  Two maps:
#  - small: tests/integration/gen-map.py with many small files (default 10,000 files in
#    500 directories; lognormal sizes, median 8 KiB, at most 1 MiB);
#  - large: --large-files files of --large-size each in 4 directories (default 128 x 4 MiB).
# Each map is built --repeat times locally (tbbt-init --root EXPORT/DIR) and over NFS
# (tbbt-init --server --export --root EXPORT/DIR), alternating which goes first, each into
# a fresh directory after `sync` and dropping the page cache; each timing ends with
# `sync -f` of the export's file system.  Rates: objects/s (directories, files, links,
# symlinks, others, from the manifest) and MB/s (file data); the ratio is NFS / local.
# Prints a table and the median ratios; writes bench/out/init-nfs-bench.json.  Needs root.
#
#   bash bench/init-nfs-bench.sh [--build DIR] [--files N] [--dirs N] [--large-files N]
#                                [--large-size BYTES] [--repeat N] [--size 16G]
#                                [--nfs-opts "OPTIONS"]
# Images are not deleted between runs (the server may hold deleted files open): --size
# must hold them all (the lab image is a sparse file in /var/tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD build=$top/build files=10000 dirs=500 lfiles=128 lsize=4194304 repeat=3 size=16G
nfs_opts=""
args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --files) files=$2; shift ;;
    --dirs) dirs=$2; shift ;;
    --large-files) lfiles=$2; shift ;;
    --large-size) lsize=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --size) size=$2; shift ;;
    --nfs-opts) nfs_opts=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "init-nfs-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "init-nfs-bench: needs root" >&2; exit 1; }
init=$build/src/aging/tbbt-init
[ -x "$init" ] || { echo "init-nfs-bench: build first (cmake --build $build)" >&2; exit 1; }
# Again inside a private namespace with a fresh state directory (TBBT_LAB_DIR).
[ -n "${TBBT_LAB_NS:-}" ] ||
  exec tools/lab-ns --tmp initbench -- bash "$0" "${args[@]}" --build "$build"

lab=$top/tools/tbbt-lab
out=$top/bench/out; mkdir -p "$out"
work=$(mktemp -d)
cleanup() { bash "$lab" stop -q || true; rm -rf "$work"; }
trap cleanup EXIT
bash "$lab" start --size "$size" -q
lab_env=$(bash "$lab" env) || { echo "init-nfs-bench: tbbt-lab env failed" >&2; exit 1; }
eval "$lab_env"
E=$TBBT_LAB_EXPORT S=$TBBT_LAB_SERVER

python3 tests/integration/gen-map.py "$work/small.map" --dirs "$dirs" --files "$files" --seed 3
python3 - "$work/large.map" "$lfiles" "$lsize" <<'PY'
import sys
out, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = ["# tbbt-map 2", "1\td\t4096\t0\t-\t.\t.\t-\t1\t0755:0:0"]
nid = 2
for d in range(4):
    lines.append(f"{nid}\td\t4096\t0\t-\tbig{d}\tbig{d}\t-\t1\t0755:1000:100")
    nid += 1
    for f in range(d, n, 4):
        p = f"big{d}/f{f:05d}"
        lines.append(f"{nid}\tf\t{size}\t0\t-\t{p}\t{p}\t-\t1\t0644:1000:100")
        nid += 1
open(out, "w").write("\n".join(lines) + "\n")
PY
python3 tests/integration/mapsum.py "$work/large.map"   # version 3: its checksum line

now() { date +%s.%N; }
cold() { sync && echo 3 > /proc/sys/vm/drop_caches; }
# run KIND MAP N: one timed build; prints "seconds objects bytes".  Runs in a command
# substitution, where set -e does not hold: every step is checked.
run() {
  local kind=$1 map=$2 n=$3 dir t0 t1
  dir=$E/$kind-$map-$n
  mkdir "$dir" || return 1
  cold || return 1
  rm -f "$work/m"
  t0=$(now)
  if [ "$kind" = local ]; then
    "$init" -q --no-progress --map "$work/$map.map" --root "$dir" --manifest "$work/m" || return 1
  else
    # shellcheck disable=SC2086
    "$init" -q --no-progress --map "$work/$map.map" --server "$S" --export "$E" --root "$dir" \
      --manifest "$work/m" $nfs_opts || return 1
  fi
  sync -f "$E" || return 1
  t1=$(now)
  awk -v a="$t0" -v b="$t1" '$1 == "stats" {
        for (i = 2; i < NF; i += 2) s[$i] = $(i + 1)
        printf "%.3f %d %d\n", b - a, s["dirs"] + s["files"] + s["links"] + s["symlinks"] + s["others"], s["bytes"] }' "$work/m"
}
# timed KIND MAP N: sets t_s, t_objects, t_bytes from run, or ends the bench.
timed() {
  local res=""
  t_bytes=""
  if res=$(run "$@"); then read -r t_s t_objects t_bytes <<<"$res" || true; fi
  if [ -z "$t_bytes" ]; then
    echo "init-nfs-bench: the $1 build of the $2 map (run $3) failed" >&2
    exit 1
  fi
}

rows=()
printf '%-6s %4s %8s %8s %8s %8s %10s %10s %8s %8s %6s\n' map run objects MB "local s" "nfs s" \
  "local ob/s" "nfs ob/s" "local MB/s" "nfs MB/s" ratio
for map in small large; do
  for r in $(seq "$repeat"); do
    if [ $((r % 2)) -eq 1 ]; then order="local nfs"; else order="nfs local"; fi
    for kind in $order; do
      timed "$kind" "$map" "$r"
      if [ "$kind" = local ]; then ls=$t_s lo=$t_objects lb=$t_bytes
      else ns=$t_s no=$t_objects nb=$t_bytes; fi
    done
    [ "$lo" = "$no" ] && [ "$lb" = "$nb" ] || { echo "init-nfs-bench: the builds differ ($lo/$lb, $no/$nb)" >&2; exit 1; }
    ro=$(awk -v l="$ls" -v n="$ns" 'BEGIN { printf "%.3f", l / n }')
    awk -v m="$map" -v r="$r" -v o="$lo" -v b="$lb" -v l="$ls" -v n="$ns" -v q="$ro" 'BEGIN {
      printf "%-6s %4s %8d %8.1f %8.3f %8.3f %10.0f %10.0f %8.1f %8.1f %6.2f\n", m, r, o, b / 1e6,
        l, n, o / l, o / n, b / l / 1e6, b / n / 1e6, q }'
    rows+=("{\"map\": \"$map\", \"run\": $r, \"objects\": $lo, \"bytes\": $lb, \"local_s\": $ls, \"nfs_s\": $ns, \"local_objects_s\": $(awk -v o="$lo" -v s="$ls" 'BEGIN { printf "%.1f", o / s }'), \"nfs_objects_s\": $(awk -v o="$no" -v s="$ns" 'BEGIN { printf "%.1f", o / s }'), \"local_mb_s\": $(awk -v b="$lb" -v s="$ls" 'BEGIN { printf "%.1f", b / s / 1e6 }'), \"nfs_mb_s\": $(awk -v b="$nb" -v s="$ns" 'BEGIN { printf "%.1f", b / s / 1e6 }'), \"ratio\": $ro}")
  done
done
json="[$(IFS=,; echo "${rows[*]}")]"
echo "$json" > "$out/init-nfs-bench.json"
python3 - "$out/init-nfs-bench.json" <<'PY'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))
for m in ("small", "large"):
    r = [x for x in rows if x["map"] == m]
    if not r:
        continue
    med = lambda k: statistics.median(x[k] for x in r)
    print(f"init-nfs-bench: {m}: {r[0]['objects']} objects, {r[0]['bytes'] / 1e6:.1f} MB; median "
          f"local {med('local_objects_s'):.0f} objects/s {med('local_mb_s'):.1f} MB/s, NFS "
          f"{med('nfs_objects_s'):.0f} objects/s {med('nfs_mb_s'):.1f} MB/s; ratio NFS/local "
          f"{med('ratio'):.2f} (runs {', '.join('%.2f' % x['ratio'] for x in r)}; target >= 0.5)")
PY
echo "written: $out/init-nfs-bench.json"
