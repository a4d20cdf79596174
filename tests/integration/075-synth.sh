#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-synth (docs/tbbt-synth.md): generates read-benchmark traces (sequential, stride,
# reordered, 64 readers, the whole file set) and checks that tbbt-convert --check finds
# 0 mismatches, that tbbt-dump shows the READ offsets worked out by hand, that the map
# lists the files with the right sizes, that the same arguments give byte-identical
# output, that tbbt-init builds the image into a temporary directory, and that bad
# options exit 2 with one line.  No server.
#   075-synth.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
synth="$build/src/synth/tbbt-synth"
convert="$build/src/extract/tbbt-convert"
dump="$build/src/trace/tbbt-dump"
init="$build/src/aging/tbbt-init"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# check TRACE: tbbt-convert --check must report 0 mismatches.
check() {
  local out
  out=$("$convert" --check "$1" 2>&1) || fail "tbbt-convert --check $1: $out"
  echo "$out" | grep -Eq '^check: [0-9]+ records, [0-9]+ with a recorded outcome, 0 mismatches$' \
    || fail "$1: $out"
}

# offsets TRACE [EP]: the READ offsets in trace order (of endpoint EP if given).
offsets() {
  "$dump" "$1" | awk -v ep="${2:-}" '$4 == "v3" && $5 == "read" {
      o = ""; e = "";
      for (i = 6; i <= NF; i++) {
        if ($i ~ /^offset=/) o = substr($i, 8);
        if ($i ~ /^ep=/) e = substr($i, 4);
      }
      if (ep == "" || e == ep) print o }'
}

# map_files MAP: "path size" of the regular files.
map_files() { awk -F'\t' '$2 == "f" { print $6, $3 }' "$1"; }

# 1. sequential, 4 readers, scale 1/64: 4 files of 1 MiB, 128 reads each.
"$synth" -q --readers 4 --scale 1/64 -o seq.tbbt
[ -s seq.tbbt ] && [ -s seq.tbbt.map ] || fail "seq: no trace or map"
check seq.tbbt
[ "$(map_files seq.tbbt.map)" = "$(printf 'ra/g4/f%d 1048576\n' 0 1 2 3)" ] \
  || fail "seq: map files: $(map_files seq.tbbt.map)"
[ "$(offsets seq.tbbt | wc -l)" -eq 512 ] || fail "seq: expected 512 READs"
for ep in 0 1 2 3; do
  [ "$(offsets seq.tbbt $ep)" = "$(seq 0 8192 1040384)" ] || fail "seq: reader $ep not sequential"
done
# round-robin: the first four READs come from endpoints 0, 1, 2, 3
eps=$("$dump" seq.tbbt | awk '$5 == "read" { for (i = 6; i <= NF; i++) if ($i ~ /^ep=/) print substr($i, 4) }' \
      | head -4 | tr '\n' ' ')
[ "$eps" = "0 1 2 3 " ] || fail "seq: readers not interleaved: $eps"
[ "$("$dump" seq.tbbt | grep -c '^ep ')" -eq 4 ] || fail "seq: expected 4 client endpoints"
"$dump" seq.tbbt | grep ' v3 read ' | grep 'offset=1040384 ' | grep -q 'eof=1' || fail "seq: no eof"
"$dump" seq.tbbt | grep ' v3 read ' | grep 'offset=0 ' | grep -q 'eof=0' || fail "seq: eof on read 0"

# 2. stride 8 on a 16-block file (scale 1/2048): blocks 0 2 4 ... 14 1 3 ... 15.
"$synth" -q --readers 1 --stride 8 --scale 1/2048 -o s8.tbbt
check s8.tbbt
want=$(for b in 0 2 4 6 8 10 12 14 1 3 5 7 9 11 13 15; do echo $((b * 8192)); done)
[ "$(offsets s8.tbbt)" = "$want" ] || fail "stride 8: offsets $(offsets s8.tbbt | tr '\n' ' ')"
"$synth" -q --readers 1 --stride 2 --scale 1/2048 -o s2.tbbt
want=$(for b in 0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15; do echo $((b * 8192)); done)
[ "$(offsets s2.tbbt)" = "$want" ] || fail "stride 2: offsets $(offsets s2.tbbt | tr '\n' ' ')"
# the raheur acceptance form: stride 8 at the paper's 256 MiB, scaled down
"$synth" -q --readers 1 --stride 8 --scale 1/16 -o s8big.tbbt
check s8big.tbbt

# 3. reordering: the same reads per reader, not in the same order, reproducible.
"$synth" -q --readers 4 --reorder 0.1:4 --scale 1/64 -o ro.tbbt
check ro.tbbt
[ "$(offsets ro.tbbt)" != "$(offsets seq.tbbt)" ] || fail "reorder: nothing moved"
for ep in 0 1 2 3; do
  [ "$(offsets ro.tbbt $ep | sort -n)" = "$(seq 0 8192 1040384)" ] \
    || fail "reorder: reader $ep lost or gained reads"
done
"$synth" -q --readers 4 --reorder 0.1:4 --scale 1/64 -o ro2.tbbt
cmp -s ro.tbbt ro2.tbbt && cmp -s ro.tbbt.map ro2.tbbt.map || fail "reorder: not reproducible"
"$synth" -q --readers 4 --reorder 0.1:4 --seed 2 --scale 1/64 -o ro3.tbbt
cmp -s ro.tbbt ro3.tbbt && fail "reorder: another seed gave the same trace"
"$synth" -q --readers 4 --reorder 0:4 --scale 1/64 -o ro0.tbbt
[ "$(offsets ro0.tbbt)" = "$(offsets seq.tbbt)" ] || fail "reorder 0: not the identity"

# 4. 64 readers (not one of the paper's groups): 64 files of 64 KiB at scale 1/64.
"$synth" -q --readers 64 --scale 1/64 -o r64.tbbt
check r64.tbbt
[ "$(map_files r64.tbbt.map | wc -l)" -eq 64 ] || fail "r64: expected 64 files in the map"
map_files r64.tbbt.map | grep -qx 'ra/g64/f63 65536' || fail "r64: ra/g64/f63 missing"
[ "$(map_files r64.tbbt.map | awk '$2 != 65536' | wc -l)" -eq 0 ] || fail "r64: wrong sizes"
[ "$("$dump" r64.tbbt | grep -c '^ep ')" -eq 64 ] || fail "r64: expected 64 client endpoints"

# 5. the whole file set in the map: 63 files, 1 x 4 MiB ... 32 x 128 KiB at scale 1/64.
"$synth" -q --readers 4 --scale 1/64 --file-set all -o all.tbbt
check all.tbbt
[ "$(map_files all.tbbt.map | wc -l)" -eq 63 ] || fail "all: expected 63 files"
map_files all.tbbt.map | grep -qx 'ra/g1/f0 4194304' || fail "all: ra/g1/f0"
map_files all.tbbt.map | grep -qx 'ra/g32/f31 131072' || fail "all: ra/g32/f31"
[ "$(offsets all.tbbt | wc -l)" -eq 512 ] || fail "all: only group 4 is read"

# 6. TCP with large reads.
"$synth" -q --readers 2 --tcp --read-size 1M --scale 1/16 -o tcp.tbbt
check tcp.tbbt
[ "$(offsets tcp.tbbt 0)" = "$(seq 0 1048576 7340032)" ] || fail "tcp: offsets"

# 7. tbbt-init builds the start image in a plain directory (no loop device needed).
mkdir img
"$init" --map seq.tbbt.map --root "$work/img" --manifest "$work/seq.manifest" >/dev/null 2>init.err \
  || fail "tbbt-init: $(cat init.err)"
for i in 0 1 2 3; do
  [ "$(stat -c %s "img/ra/g4/f$i")" -eq 1048576 ] || fail "tbbt-init: img/ra/g4/f$i size"
done

# 8. summary line, bad input.
"$synth" --readers 2 --scale 1/256 -o sum.tbbt 2>sum.err
[ "$(wc -l < sum.err)" -eq 1 ] && grep -q '^tbbt-synth: 2 readers' sum.err || fail "summary: $(cat sum.err)"
bad() {
  local rc=0
  "$synth" "$@" 2>bad.err >/dev/null || rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "tbbt-synth $*: exit $rc, want $want_rc"
  [ "$(wc -l < bad.err)" -eq 1 ] || fail "tbbt-synth $*: not one line: $(cat bad.err)"
  grep -q '^tbbt-synth: ' bad.err || fail "tbbt-synth $*: $(cat bad.err)"
}
want_rc=2
bad --bogus-option
bad --readers 0 -o x.tbbt
bad --readers 4
bad --readers 4 --scale 0 -o x.tbbt
bad --readers 4 --scale abc -o x.tbbt
bad --readers 4 --read-size 0 -o x.tbbt
bad --readers 4 --read-size 128k -o x.tbbt
bad --readers 4 --reorder 1.5 -o x.tbbt
bad --readers 4 --stride 0 -o x.tbbt
want_rc=1
bad --readers 4 --scale 1/64 -o "$work/no/such/dir/x.tbbt"
[ ! -e x.tbbt ] || fail "a refused run left x.tbbt"
leftover=$(ls | grep -E '\.(raw|tmp)-' || true)
[ -z "$leftover" ] || fail "temporary files left: $leftover"
"$synth" --help | grep -q -- '--readers' || fail "--help"
"$synth" --version | grep -q '^tbbt-synth' || fail "--version"
echo "ok: tbbt-synth traces check clean, offsets, map sizes, image, errors"
