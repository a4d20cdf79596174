#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play as a sloppy client against the real lab server (docs/tbbt-play.md, "Client
# behaviour"; docs/readahead.md): a tbbt-synth read benchmark (4 sequential readers,
# each its own client) built with tbbt-init and replayed
#  1. with --client-outstanding 1 (fsdep and conservative): zero replay failures, never
#     more calls in flight than clients, and (fsdep) the limit was hit;
#  2. with --reorder 0.3:4 (conservative, TCP and UDP): zero replay failures, swaps
#     counted, and from the player's event log: every file gets exactly its trace's
#     reads, some out of order, none sent more than K places before its trace position
#     among the reads, and the same seed gives the same order while another seed does
#     not;
#  3. tbbt-raheur sees the difference the reordering makes on a reordered tbbt-synth
#     trace (the same perturbation offline): default's read-ahead share drops, slowdown's
#     does not.
# Needs root; fails, never skips, without it.  The lab ports must be free.
#   095-play-sloppy.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 095-play-sloppy.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 095-play-sloppy needs root (it starts the lab NFS server)" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
play=$build/src/player/tbbt-play
synth=$build/src/synth/tbbt-synth
init=$build/src/aging/tbbt-init
raheur=$build/src/raheur/tbbt-raheur
lab=$top/tools/tbbt-lab
for b in "$play" "$synth" "$init" "$raheur"; do
  [ -x "$b" ] || { echo "FAIL: $b not built" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 is not installed" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/tbbt-lab-095.XXXXXX)
work=$(mktemp -d)
cleanup() {
  bash "$lab" stop --dir "$dir" -q || true
  mountpoint -q "$dir/mnt" 2>/dev/null || rm -rf "$dir"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "095-play-sloppy: $*"; }

bash "$lab" start --dir "$dir" --size 256M -q || fail "cannot start the lab server in $dir"
export_dir=$dir/mnt/export

# 4 readers of 1 MiB files in 8 KiB reads: 128 reads each.
"$synth" -q --readers 4 --scale 1/64 -o "$work/seq.tbbt" || fail "tbbt-synth"
root=$export_dir/img
mkdir "$root"
"$init" -q --map "$work/seq.tbbt.map" --root "$root" --manifest "$work/seq.man" >/dev/null ||
  fail "tbbt-init"
bash "$lab" restart --dir "$dir" -q >/dev/null   # nothing cached from tbbt-init

replay() {   # replay NAME ARGS...: plays, writes NAME.json and NAME.ev
  local name=$1; shift
  timeout 300 "$play" --trace "$work/seq.tbbt" --manifest "$work/seq.man" \
    --server 127.0.0.1 --export "$export_dir" -q --report-json "$work/$name.json" \
    --event-log "$work/$name.ev" "$@" 2>"$work/$name.err" ||
    fail "$name: tbbt-play exit status $?: $(cat "$work/$name.err")"
}

# ------------------------------------------------------------------ 1. per-client limit
for order in fsdep conservative; do
  replay "limit-$order" --order "$order" --client-outstanding 1 --max-outstanding 64
  python3 - "$work/limit-$order.json" "$order" <<'PY' || fail "limit-$order: $(cat "$work/limit-$order.json")"
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["finished"] and r["replay_failures"] == 0
ok &= r["ops_skipped"] == r["skipped_by_reason"]["not_nfs"]   # the MNT records
ok &= r["peak_outstanding"] <= 4 and r["read_bytes"] == 4 << 20   # 4 files of 1 MiB
# fsdep would send all 4 readers' reads at once; conservative keeps the trace's own
# concurrency (a reply before each next call), below the limit here
ok &= r["client_stalls"] > 0 or sys.argv[2] == "conservative"
print(f'095-play-sloppy: --client-outstanding 1, {sys.argv[2]}: {r["ops_completed"]} ops, '
      f'{r["replay_failures"]} failures, peak outstanding {r["peak_outstanding"]} '
      f'(4 clients), {r["client_stalls"]} requests held back')
sys.exit(0 if ok else 1)
PY
done

# ------------------------------------------------------------------ 2. --reorder
check_order() {   # check_order NAME K: the event log against the trace's read order
  python3 - "$work/$1.json" "$work/$1.ev" "$2" "$1" <<'PY' || fail "$1: order check"
import json, sys
from collections import defaultdict
r = json.load(open(sys.argv[1]))
k, name = int(sys.argv[3]), sys.argv[4]
if not (r["finished"] and r["replay_failures"] == 0 and r["reordered_reads"] > 0):
    print(f"{name}: report {r}")
    sys.exit(1)
reads = defaultdict(list)        # file id -> offsets in the player's sequence order
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "D" and f[3] == "read":
        reads[int(f[7])].append((int(f[1]), int(f[8])))
late = early = 0
for fid, seq in reads.items():
    offs = [o for _, o in sorted(seq)]
    want = [i * 8192 for i in range(128)]    # the trace: 128 reads of 8 KiB in order
    if sorted(offs) != want:
        print(f"{name}: file {fid}: reads differ from the trace's")
        sys.exit(1)
    pos = {o: i for i, o in enumerate(want)}      # sequential reader: trace order = offset order
    for i, o in enumerate(offs):
        if pos[o] > i + k:
            print(f"{name}: file {fid}: the read at {o} went {pos[o] - i} places early (K={k})")
            sys.exit(1)
        early += pos[o] > i
        late += pos[o] < i
print(f"095-play-sloppy: {name}: {r['ops_completed']} ops, {r['replay_failures']} failures, "
      f"{r['reordered_reads']} swaps; {early} reads sent early, {late} late, none more than "
      f"{k} places early")
sys.exit(0 if early > 0 else 1)
PY
}
replay reorder-tcp --order conservative --reorder 0.3:4 --reorder-seed 5
check_order reorder-tcp 4
replay reorder-tcp-again --order conservative --reorder 0.3:4 --reorder-seed 5
replay reorder-tcp-seed6 --order conservative --reorder 0.3:4 --reorder-seed 6
order_of() { awk '$1 == "D" && $4 == "read" {print $2, $8, $9}' "$work/$1.ev" | sort -n; }
[ "$(order_of reorder-tcp)" = "$(order_of reorder-tcp-again)" ] ||
  fail "--reorder with the same seed gave another order"
[ "$(order_of reorder-tcp)" != "$(order_of reorder-tcp-seed6)" ] ||
  fail "--reorder with another seed gave the same order"
say "--reorder: the same seed gives the same order, another seed another"
replay reorder-udp --proto udp --order fsdep --reorder 10%:2
check_order reorder-udp 2

# ------------------------------------------------------------------ 3. what the server sees
"$synth" -q --readers 4 --scale 1/64 --reorder 0.1:4 --seed 7 -o "$work/re.tbbt" ||
  fail "tbbt-synth --reorder"
share() { "$raheur" "$1" --heuristic "$2" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["readahead_share"])'; }
d0=$(share "$work/seq.tbbt" default) d1=$(share "$work/re.tbbt" default)
s1=$(share "$work/re.tbbt" slowdown)
say "read-ahead share: sequential default $d0; 10 % reordered: default $d1, slowdown $s1"
python3 -c "import sys; sys.exit(0 if $d0 > 0.95 and $s1 > $d1 + 0.2 else 1)" ||
  fail "reordering should cut default's read-ahead share, not slowdown's"
say "ok"
