#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-raheur (docs/tbbt-raheur.md), the acceptance check of the read-ahead heuristic
# simulator on synthetic traces from tbbt-synth (the nfs-tricks paper's benchmark, its
# sections 6 and 7).  No server is needed.  Prints every measured number.
#  a. 4 readers, 8 KiB reads, 10 % of reads swapped with a neighbour up to 4 reads
#     away (--reorder 0.1:4): slowdown's read-ahead share is >= 0.9 and at least 0.3
#     above default's; without reordering both are >= 0.99 (the control).
#  b. 1 reader, stride 8: cursor's share is > 0.9, default's and slowdown's < 0.1.
#  c. 64 readers (64 files read at once): with the FreeBSD 4 table (64 slots, 4
#     probes) ejections are >= 0.2 of the reads (and the state they destroy shows as
#     a lower mean seqCount, and a share of deep read-ahead, seqCount > 8, at least
#     0.2 lower); with --table-size 1024 they are < 0.001 of the reads.
#  d. the JSON contract (reads, readahead_share, ejections, seqcount_histogram of 128
#     counts that sum to reads), the text report, -v per-file detail;
#  e. an unreadable, truncated or corrupt trace exits 1 with one line on stderr; bad
#     options exit 2.
#   080-raheur.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 080-raheur.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
raheur=$build/src/raheur/tbbt-raheur
synth=$build/src/synth/tbbt-synth
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$raheur" ] || fail "$raheur not built"
[ -x "$synth" ] || fail "$synth not built (cmake --build $build --target tbbt-synth)"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# get FILE KEY: the value of KEY in the JSON object in FILE.
get() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"
}
# check EXPR name=value...: a Python expression over the numbers; fails the test if false.
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
# synth NAME ARGS...: tbbt-synth ARGS -o $work/NAME.tbbt (its summary line to a log).
synth() {
  local name=$1; shift
  "$synth" "$@" -o "$work/$name.tbbt" > "$work/synth.log" 2>&1 \
    || fail "tbbt-synth $* failed: $(cat "$work/synth.log")"
}
# sim NAME TRACE HEURISTIC [OPTIONS...]: runs tbbt-raheur --json into $work/NAME.json.
sim() {
  local name=$1 trace=$2 heur=$3; shift 3
  "$raheur" "$trace" --heuristic "$heur" "$@" --json > "$work/$name.json" \
    || fail "tbbt-raheur $trace --heuristic $heur $* exited $?"
}
# show NAME: one line of the measured numbers.
show() {
  python3 - "$work/$1.json" "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("  %-22s reads %6d  readahead_share %.4f  mean_seqcount %6.2f  ejections %5d (%.4f)"
      % (sys.argv[2], d["reads"], d["readahead_share"], d["mean_seqcount"], d["ejections"],
         d["ejection_share"]))
EOF
}

# ---- a. reordering: default vs SlowDown ------------------------------------------------
echo "a. 4 readers, 8 KiB reads, --reorder 0.1:4 (and a control without reordering)"
synth reorder --readers 4 --scale 0.0625 --reorder 0.1:4 --seed 7
echo "  $(cat "$work/synth.log")"
synth seq --readers 4 --scale 0.0625 --seed 7
for h in default slowdown cursor; do
  sim "reorder-$h" "$work/reorder.tbbt" $h; show "reorder-$h"
  sim "seq-$h" "$work/seq.tbbt" $h; show "seq-$h"
done
d=$(get "$work/reorder-default.json" readahead_share)
s=$(get "$work/reorder-slowdown.json" readahead_share)
echo "  margin slowdown - default: $(python3 -c "print('%.4f' % ($s - $d))")"
check 's >= 0.9 and s - d >= 0.3' s="$s" d="$d"
check 'a >= 0.99 and b >= 0.99' a="$(get "$work/seq-default.json" readahead_share)" \
  b="$(get "$work/seq-slowdown.json" readahead_share)"

# ---- b. stride 8: cursors --------------------------------------------------------------
echo "b. 1 reader, --stride 8"
synth stride --readers 1 --stride 8 --scale 0.0625
for h in default slowdown cursor; do sim "stride-$h" "$work/stride.tbbt" $h; show "stride-$h"; done
check 'c > 0.9 and d < 0.1 and s < 0.1' c="$(get "$work/stride-cursor.json" readahead_share)" \
  d="$(get "$work/stride-default.json" readahead_share)" \
  s="$(get "$work/stride-slowdown.json" readahead_share)"
# Fewer cursors than streams: LRU recycling destroys every cursor before its next read.
sim stride-cursor4 "$work/stride.tbbt" cursor --cursors 4; show stride-cursor4
check 'c < 0.1' c="$(get "$work/stride-cursor4.json" readahead_share)"

# ---- c. 64 files: the nfsheur table ----------------------------------------------------
echo "c. --readers 64: the FreeBSD 4 table (64 slots, 4 probes) against 1024 slots"
synth many --readers 64 --scale 0.125
for h in default slowdown; do
  sim "many-$h-64" "$work/many.tbbt" $h; show "many-$h-64"
  sim "many-$h-1024" "$work/many.tbbt" $h --table-size 1024; show "many-$h-1024"
done
sim many-default-usecount "$work/many.tbbt" default --table-policy usecount
show many-default-usecount
check 'files == 64' files="$(get "$work/many-default-64.json" files)"
check 'small >= 0.2 and big < 0.001 and m_small < m_big' \
  small="$(get "$work/many-default-64.json" ejection_share)" \
  big="$(get "$work/many-default-1024.json" ejection_share)" \
  m_small="$(get "$work/many-default-64.json" mean_seqcount)" \
  m_big="$(get "$work/many-default-1024.json" mean_seqcount)"
check 'u >= 0.2' u="$(get "$work/many-default-usecount.json" ejection_share)"
# What the ejections cost: a file that starts fresh at every read is served at seqCount
# 2, never the deep read-ahead (seqCount > 8: more than 8 blocks ahead) a kept one gets.
sim many-default-64-t8 "$work/many.tbbt" default --threshold 8; show many-default-64-t8
sim many-default-1024-t8 "$work/many.tbbt" default --table-size 1024 --threshold 8
show many-default-1024-t8
check 'big - small >= 0.2' small="$(get "$work/many-default-64-t8.json" readahead_share)" \
  big="$(get "$work/many-default-1024-t8.json" readahead_share)"

# ---- d. the report ---------------------------------------------------------------------
echo "d. JSON contract, text report, -v"
python3 - "$work/reorder-slowdown.json" <<'EOF' || fail "JSON contract"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("reads", "readahead_share", "ejections", "seqcount_histogram", "files",
          "heuristic", "table_size", "probes", "threshold"):
    assert k in d, k
h = d["seqcount_histogram"]
assert len(h) == 128 and sum(h) == d["reads"], (len(h), sum(h), d["reads"])
assert d["reads"] == d["reads_by_id"] > 0
EOF
"$raheur" "$work/stride.tbbt" --heuristic cursor > "$work/text.out" || fail "text report"
grep -q '^read-ahead  *[0-9]* reads, share ' "$work/text.out" || fail "text report: no share"
grep -q '^seqCount histogram' "$work/text.out" || fail "text report: no histogram"
"$raheur" "$work/many.tbbt" --heuristic default -v --json > "$work/v.json" || fail "-v --json"
nfiles=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["per_file"]))' \
  "$work/v.json")
check 'n == 64' n="$nfiles"

# ---- e. bad input, bad options ---------------------------------------------------------
echo "e. bad input exits 1, bad options exit 2"
expect_exit() {   # CODE ARGS...: tbbt-raheur exits CODE with exactly one line on stderr
  local want=$1 rc=0; shift
  "$raheur" "$@" > /dev/null 2> "$work/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "tbbt-raheur $* exited $rc, expected $want"
  if [ "$want" -eq 1 ]; then
    [ "$(wc -l < "$work/err")" -eq 1 ] || fail "tbbt-raheur $*: not one line: $(cat "$work/err")"
  fi
  echo "  exit $rc: $(head -1 "$work/err")"
}
size=$(stat -c %s "$work/seq.tbbt")
head -c $((size / 2)) "$work/seq.tbbt" > "$work/trunc.tbbt"
cp "$work/seq.tbbt" "$work/corrupt.tbbt"
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$work/corrupt.tbbt" bs=1 seek=$((size / 2)) \
  conv=notrunc status=none
echo "not a trace" > "$work/text.txt"
expect_exit 1 "$work/missing.tbbt" --heuristic default
expect_exit 1 "$work/trunc.tbbt" --heuristic default
expect_exit 1 "$work/corrupt.tbbt" --heuristic slowdown
expect_exit 1 "$work/text.txt" --heuristic cursor
expect_exit 2 "$work/seq.tbbt" --heuristic fastest
expect_exit 2 "$work/seq.tbbt" --heuristic default --probes 0
expect_exit 2 "$work/seq.tbbt" --heuristic default --probes 65
expect_exit 2 "$work/seq.tbbt" --heuristic default --table-size many
expect_exit 2 "$work/seq.tbbt" --heuristic cursor --cursors 0
expect_exit 2 "$work/seq.tbbt" --heuristic default --no-such-option
expect_exit 2 --heuristic default
echo "PASS: 080-raheur"
