#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-init --clones N launched by mpirun (docs/tbbt-init.md "Under MPI"): rank r of R
# builds clones r, r + R, ...; rank 0 prepares the root and writes the one manifest.
#  1. local backend, 2 and 4 ranks against one process (same map, options and seed; a
#     map with unknown sizes, aging, --spread, spacers): the same tree in every clone
#     (paths, types, sizes, modes, owners, link counts, symlink targets), each clone
#     exact (check-image.py), and the same manifest but for root, stats and checksum
#     (whose line is right);
#  2. the same with --fill, aging and fillers, each build on a fresh 128 MiB tmpfs:
#     the same trees and manifests, the target utilization met;
#  3. failures end every rank with the same status and one line on stderr, from rank 0:
#     a rank whose root is a read-only mount (rank 1 cannot make tbbt-clone-1: status 1,
#     "status failed rank 1 ..." in the manifest, and --force under mpirun then removes
#     what was made and builds it whole), a rank whose root is not a directory (status 1
#     before anything is made: no marker, no manifest), more ranks than clones (status 2);
#  4. the NFS backend (--server, the lab's NFS-Ganesha in a private namespace,
#     tools/lab-ns): 2 and 4 ranks make the same trees and manifest as one process; the
#     image of a converted capture built by 2 ranks replays (tbbt-play --clones 4
#     --verify, zero failures: the player takes the manifest rank 0 wrote); a rank whose
#     --root does not exist on the server stops every rank.
# Prints the wall times of each build.  Needs root (mounts, the lab) and Open MPI's
# mpirun; fails, never skips, without them.  The MPI settings for sanitizer builds
# (tests/integration/lsan-openmpi.supp) are always passed.  TBBT_LAB_DIR set: the lab's
# state directory (else a fresh one, tools/lab-ns --tmp).
#   105-init-mpi.sh BUILD_DIR
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: 105-init-mpi.sh BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${TBBT_LAB_NS:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "FAIL: 105-init-mpi needs root (mounts, the lab)" >&2; exit 1; }
  command -v mpirun > /dev/null ||
    { echo "FAIL: 105-init-mpi: mpirun not found (tools/install-deps.sh installs Open MPI)" >&2
      exit 1; }
  # Again inside a private network and mount namespace (the lab; the test's mounts).
  if [ -n "${TBBT_LAB_DIR:-}" ]; then
    exec "$top/tools/lab-ns" --dir "$TBBT_LAB_DIR" -- bash "$0" "$@"
  fi
  exec "$top/tools/lab-ns" --tmp 105 -- bash "$0" "$@"
fi

build=$(cd "$1" && pwd)
here=$top/tests/integration
init=$build/src/aging/tbbt-init
play=$build/src/player/tbbt-play
convert=$build/src/extract/tbbt-convert
lab=$top/tools/tbbt-lab
for b in "$init" "$play" "$convert"; do
  [ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
done
command -v mpirun > /dev/null || { echo "FAIL: mpirun not found" >&2; exit 1; }
# The namespace has only a loopback interface: Open MPI must be told to use it.  The
# sanitizer settings of lsan-openmpi.supp, and no list of the suppressions used (rank 0's
# stderr must hold one line).
lsan=suppressions=$here/lsan-openmpi.supp:fast_unwind_on_malloc=0:print_suppressions=0
mpi=(mpirun --allow-run-as-root --oversubscribe --mca oob_tcp_if_include lo
     --mca btl_tcp_if_include lo
     -x OMPI_MCA_mca_base_component_disable_dlclose=1 -x ASAN_OPTIONS=fast_unwind_on_malloc=0
     -x "LSAN_OPTIONS=$lsan")
work=$(mktemp -d /var/tmp/tbbt-105.XXXXXX)
lab_up=""
cleanup() {
  for m in $(awk -v w="$work" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" 2> /dev/null || true
  done
  [ -z "$lab_up" ] || bash "$lab" stop -q || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "105-init-mpi: $*"; }

# The tree of every clone under $1, one line per object, clone by clone.
dump() {
  python3 - "$1" << 'EOF'
import os, stat, sys
root = sys.argv[1]
for c in sorted(os.listdir(root)):
    if not c.startswith("tbbt-clone-"):
        continue
    base, out = os.path.join(root, c), []
    for d, dirs, files in os.walk(base):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            size = 0 if stat.S_ISDIR(st.st_mode) else st.st_size
            target = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
            out.append("%s %o %d %d:%d %d %s" % (os.path.relpath(p, base), st.st_mode, size,
                                                 st.st_uid, st.st_gid, st.st_nlink, target))
    st = os.stat(base)
    print("== %s %o %d:%d %d objects" % (c, st.st_mode, st.st_uid, st.st_gid, len(out)))
    print("\n".join(sorted(out)))
EOF
}
body() { grep -v '^stats\|^root\|^# crc32' "$1"; }
manifest_stat() {   # manifest_stat FILE KEY
  awk -v k="$2" '$1 == "stats" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"
}
sum_ok() {   # the checksum line is the CRC32 of everything before it
  PYTHONPATH=$top/tools python3 -c 'import sys; from tbbtfmt import textsum_add, textsum_strip
d = open(sys.argv[1], "rb").read(); sys.exit(textsum_add(textsum_strip(d)) != d)' "$1" ||
    fail "$1: bad checksum line"
}
now() { date +%s.%N; }
timed() {   # timed CMD...: runs CMD, records its wall time under $label
  local t0 t1; t0=$(now)
  "$@" || fail "$label: failed"
  t1=$(now)
  awk -v l="$label" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s %.2f\n", l, b - a }' >> "$work/times"
}
# Each rank's exit status, one "RANK STATUS" line per rank in $work/rcs.
cat > "$work/rank.sh" << 'EOF'
rcs=$1; shift
"$@"
echo "$OMPI_COMM_WORLD_RANK $?" >> "$rcs"
EOF
expect_ranks() {   # expect_ranks WHAT RANKS STATUS PATTERN MPIRUN-ARGS...
  local what=$1 n=$2 want=$3 pat=$4; shift 4
  rm -f "$work/rcs"
  "${mpi[@]}" "$@" > "$work/out" 2> "$work/err" || fail "$what: mpirun failed: $(cat "$work/err")"
  [ "$(wc -l < "$work/rcs")" -eq "$n" ] || fail "$what: $(wc -l < "$work/rcs") ranks reported"
  awk -v w="$want" '$2 != w { bad = 1 } END { exit bad }' "$work/rcs" ||
    fail "$what: exit statuses $(sort "$work/rcs" | tr '\n' ' '), want $want on every rank"
  grep -q -- "$pat" "$work/err" || fail "$what: message '$(cat "$work/err")'"
  [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$what: not one line: $(cat "$work/err")"
  say "ok: $what: every rank $want, $(cat "$work/err")"
}

# A map with unknown sizes (every fifth file: drawn from the size distribution).
python3 "$here/gen-map.py" "$work/g0.map" --dirs 30 --files 300 --max-size 262144
awk -F'\t' 'BEGIN { OFS = "\t" } /^#/ { print; next } $2 == "f" && $1 % 5 == 0 { $3 = "-" }
            { print }' "$work/g0.map" > "$work/g.map"
python3 "$here/mapsum.py" "$work/g.map"
"$init" -q --map "$work/g.map" --check > /dev/null || fail "the test map does not check"

# same_builds WHAT DIR-PREFIX MANIFEST-PREFIX: one process, 2 and 4 ranks built DIR1,
# DIR2, DIR4 (manifests MANIFEST-PREFIXn.manifest); the trees and manifests must be the same.
same_builds() {
  local what=$1 d=$2 p=$3
  for n in 1 2 4; do
    dump "$d$n" > "$work/dump$n"
    sum_ok "$p$n.manifest"
    grep -qx "status	complete" "$p$n.manifest" || fail "$what, $n: manifest not complete"
    [ "$(grep -c '^clone	' "$p$n.manifest")" -eq 4 ] || fail "$what, $n: not 4 clone lines"
  done
  [ "$(grep -c '^==' "$work/dump1")" -eq 4 ] || fail "$what: not 4 clones"
  for n in 2 4; do
    diff "$work/dump1" "$work/dump$n" > "$work/diff" ||
      fail "$what: $n ranks made another tree: $(head -5 "$work/diff")"
    diff <(body "${p}1.manifest") <(body "$p$n.manifest") > "$work/diff" ||
      fail "$what: $n ranks wrote another manifest: $(head -5 "$work/diff")"
    for k in dirs files links symlinks others bytes appends unknown_sizes synthetic_files \
             synthetic_dirs synthetic_bytes fillers filler_bytes spacers; do
      [ "$(manifest_stat "${p}1.manifest" $k)" = "$(manifest_stat "$p$n.manifest" $k)" ] ||
        fail "$what: $n ranks: stats $k differs"
    done
  done
  say "ok: $what: 1, 2 and 4 ranks made the same 4 clones" \
      "($(grep -vc '^==' "$work/dump1") objects) and manifests"
}

# ------------------------------------------------------------------ 1. local, no fill
opts=(--map "$work/g.map" --clones 4 --scope 2M --appends 4 --spread --spacers 1)
for n in 1 2 4; do
  mkdir "$work/l$n"
  label="local $n"
  if [ $n -eq 1 ]; then
    timed "$init" -q --root "$work/l1" --manifest "$work/l1.manifest" "${opts[@]}"
  else
    timed "${mpi[@]}" -np $n "$init" -q --root "$work/l$n" --manifest "$work/l$n.manifest" \
      "${opts[@]}"
  fi
  for k in 0 1 2 3; do
    python3 "$here/check-image.py" "$work/g.map" "$work/l$n/tbbt-clone-$k" > "$work/check" ||
      fail "local $n ranks, clone $k: $(cat "$work/check")"
  done
done
[ "$(manifest_stat "$work/l1.manifest" unknown_sizes)" -gt 0 ] || fail "no unknown sizes drawn"
same_builds "local" "$work/l" "$work/l"

# ------------------------------------------------------------------ 2. local, --fill
for n in 1 2 4; do
  mkdir "$work/f$n"
  mount -t tmpfs -o size=128m tmpfs "$work/f$n"
  label="local --fill $n"
  fopts=(--map "$work/g.map" --root "$work/f$n" --manifest "$work/f$n.manifest" --clones 4
         --fill 0.5 --scope 2M --appends 4)
  if [ $n -eq 1 ]; then
    timed "$init" -q "${fopts[@]}"
  else
    timed "${mpi[@]}" -np $n "$init" -q "${fopts[@]}"
  fi
  u=$(manifest_stat "$work/f$n.manifest" utilization)
  awk -v u="$u" 'BEGIN { exit !(u > 0.48 && u < 0.52) }' ||
    fail "--fill 0.5, $n ranks: utilization $u"
done
[ "$(manifest_stat "$work/f1.manifest" fillers)" -gt 0 ] || fail "--fill: no fillers"
same_builds "local --fill 0.5 with aging and fillers" "$work/f" "$work/f"

# ------------------------------------------------------------------ 3. failures
mkdir "$work/x" "$work/x-ro"
mount --bind "$work/x" "$work/x-ro"
mount -o remount,bind,ro "$work/x-ro"
xopts=(--map "$work/g.map" --manifest "$work/x.manifest" --clones 4)
expect_ranks "rank 1 on a read-only mount" 2 1 \
  "^tbbt-init: rank 1 (.*): cannot make .*tbbt-clone-1: Read-only file system$" \
  -np 1 bash "$work/rank.sh" "$work/rcs" "$init" -q --root "$work/x" "${xopts[@]}" : \
  -np 1 bash "$work/rank.sh" "$work/rcs" "$init" -q --root "$work/x-ro" "${xopts[@]}"
sum_ok "$work/x.manifest"
grep -q "^status	failed	rank 1 (.*): cannot make" "$work/x.manifest" ||
  fail "read-only rank: manifest status $(grep ^status "$work/x.manifest")"
[ -d "$work/x/tbbt-clone-0" ] && [ -d "$work/x/tbbt-clone-2" ] ||
  fail "read-only rank: rank 0's clones are not there"
"${mpi[@]}" -np 2 "$init" -q --root "$work/x" --force "${xopts[@]}" ||
  fail "--force under mpirun over the failed build"
for k in 0 1 2 3; do
  python3 "$here/check-image.py" "$work/g.map" "$work/x/tbbt-clone-$k" > "$work/check" ||
    fail "--force rebuild, clone $k: $(cat "$work/check")"
done
say "ok: --force under mpirun removed the failed build and made all 4 clones"

mkdir "$work/y"
touch "$work/not-a-dir"
expect_ranks "rank 1's root is not a directory" 2 1 \
  "^tbbt-init: rank 1 (.*): cannot open the root .*not-a-dir.*: Not a directory$" \
  -np 1 bash "$work/rank.sh" "$work/rcs" "$init" -q --root "$work/y" --map "$work/g.map" \
    --manifest "$work/y.manifest" --clones 4 : \
  -np 1 bash "$work/rank.sh" "$work/rcs" "$init" -q --root "$work/not-a-dir" \
    --map "$work/g.map" --manifest "$work/y.manifest" --clones 4
[ -z "$(ls -A "$work/y")" ] || fail "a failed start-up wrote into the root: $(ls -A "$work/y")"
[ ! -e "$work/y.manifest" ] || fail "a failed start-up wrote a manifest"
expect_ranks "3 ranks for 2 clones" 3 2 "^tbbt-init: 3 MPI ranks for --clones 2" \
  -np 3 bash "$work/rank.sh" "$work/rcs" "$init" -q --root "$work/y" --map "$work/g.map" \
    --manifest "$work/y.manifest" --clones 2

# ------------------------------------------------------------------ 4. NFS
lab_up=1
bash "$lab" start --size 512M -q || fail "cannot start the lab server in $TBBT_LAB_DIR"
lab_env=$(bash "$lab" env) || fail "tbbt-lab env failed"
eval "$lab_env"
E=$TBBT_LAB_EXPORT
S=$TBBT_LAB_SERVER
nopts=(--server "$S" --export "$E" --map "$work/g.map" --clones 4 --scope 2M --appends 4
       --spread)
for n in 1 2 4; do
  mkdir "$E/n$n"
  label="nfs $n"
  if [ $n -eq 1 ]; then
    timed "$init" -q --root "$E/n1" --manifest "$work/n1.manifest" "${nopts[@]}"
  else
    timed "${mpi[@]}" -np $n "$init" -q --root "$E/n$n" --manifest "$work/n$n.manifest" \
      "${nopts[@]}"
  fi
  for k in 0 1 2 3; do
    python3 "$here/check-image.py" "$work/g.map" "$E/n$n/tbbt-clone-$k" > "$work/check" ||
      fail "NFS $n ranks, clone $k: $(cat "$work/check")"
  done
  grep -qx "server	$S" "$work/n$n.manifest" || fail "NFS $n ranks: no server line"
done
same_builds "NFS (--server)" "$E/n" "$work/n"
# The player takes an image built by 2 ranks.
"$convert" -q -o "$work/mid.tbbt" "$top/traces/v3-tcp-mid.pcap" || fail "convert v3-tcp-mid.pcap"
mkdir "$E/p"
"${mpi[@]}" -np 2 "$init" -q --server "$S" --export "$E" --map "$work/mid.tbbt.map" \
  --root "$E/p" --manifest "$work/p.manifest" --clones 4 --scope 1M --appends 4 ||
  fail "build of the capture's image by 2 ranks"
timeout 300 "$play" --trace "$work/mid.tbbt" --manifest "$work/p.manifest" --clones 4 \
  --verify -q --report-json "$work/p.json" 2> "$work/p.err" ||
  fail "tbbt-play on the image 2 ranks built: exit status $?: $(cat "$work/p.err")"
python3 - "$work/p.json" << 'EOF' || fail "replay: report $(cat "$work/p.json")"
import json, sys
r = json.load(open(sys.argv[1]))
print(f'105-init-mpi: ok: replay of 4 clones built by 2 ranks: {r["ops_completed"]} ops, '
      f'{r["replay_failures"]} failures, verify {r["verify"]["ok"]}')
sys.exit(0 if r["finished"] and r["replay_failures"] == 0 and r["verify"]["ok"] else 1)
EOF
mkdir "$E/z"
expect_ranks "NFS: rank 1's root is not on the server" 2 1 "^tbbt-init: rank 1 (.*): " \
  -np 1 bash "$work/rank.sh" "$work/rcs" "$init" -q --server "$S" --export "$E" \
    --root "$E/z" --map "$work/g.map" --manifest "$work/z.manifest" --clones 2 : \
  -np 1 bash "$work/rank.sh" "$work/rcs" "$init" -q --server "$S" --export "$E" \
    --root "$E/none" --map "$work/g.map" --manifest "$work/z.manifest" --clones 2
[ -z "$(ls -A "$E/z")" ] || fail "NFS: a failed start-up wrote into the root"

say "wall times (s): $(tr '\n' ',' < "$work/times" | sed 's/,$//; s/,/, /g')"
say "ok"
