#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play's CPU per NFSv4 COMPOUND against its CPU per NFSv3 operation, measured in one
# run on one machine (issue "NFSv4.0, 4.1 and 4.2", player item: CPU per COMPOUND <= 1.5
# times the NFSv3 figure).  Both replays are of captures of real clients of the lab
# server (tools/tbbt-lab --nfs4, NFS-Ganesha, VFS backend), recorded here:
#  - NFSv4: one long run of tools/nfs4-scenario (--minor M, --v4-clients N, its scenario
#    --rounds R times over one client state each: one client id and session per client
#    for the whole capture; a small capture replicated by bench/pcap-replicate.py would
#    give every copy the same client id);
#  - NFSv3: tools/capture-workload.sh, libnfs clients of tools/nfs-workload (--v3-mix,
#    --v3-clients, --v3-ops per client; the site's tree is made before the capture).
# Each is converted (tbbt-convert), then replayed --repeat times, NFSv4 and NFSv3 in
# turn (the order swapped every turn), each replay on a fresh image (tbbt-init into the
# export, then the server restarted: nothing cached from the build), with --order fsdep
# --timing full.  CPU is the player's own (user + system of the tbbt-play process, the
# report's "cpu"), divided by the operations completed: for NFSv4 one COMPOUND is one
# operation.  The best run of each (lowest CPU per operation) is compared: prints the
# ratio v4/v3 of CPU us per operation (and of user CPU alone), ops/s and the replay
# failures of each (with their kinds), and writes bench/out/play-v4-bench.json.
# The two workloads differ in their data: nfs4-scenario reads and writes at most 1 KiB
# at a time, the NFSv3 mixes more (read_bytes in the NFSv3 rows; the NFSv4 engine does
# not count them); system CPU grows with the bytes moved, user CPU much less.  Exit
# status 1 when a replay failed or had replay failures (the JSON is written first).
# Needs root; runs itself in a private namespace (tools/lab-ns --tmp play-v4-bench)
# unless TBBT_LAB_NS is set.
#
#   bash bench/play-v4-bench.sh [--build DIR] [--minor M] [--v4-clients N] [--rounds R]
#                               [--v3-mix mail|home|mixed] [--v3-clients N] [--v3-ops N]
#                               [--repeat N] [--play-args "ARGS"] [--size SIZE] [--keep]
# Defaults: --minor 1 --v4-clients 4 --rounds 400 (about 98,000 COMPOUNDs), --v3-mix mail
# --v3-clients 8 --v3-ops 1300 (about 97,000 NFSv3 calls), --repeat 3, --size 4G (lab
# image); the whole run takes about 2 minutes.  --play-args: more tbbt-play options,
# given to both replays.  --keep keeps the work directory (captures, traces, reports)
# and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=$top/build minor=1 v4_clients=4 rounds=400 v3_mix=mail v3_clients=8 v3_ops=1300
repeat=3 play_args="" size=4G keep=0
args=("$@")
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --minor) minor=$2; shift ;;
    --v4-clients) v4_clients=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --v3-mix) v3_mix=$2; shift ;;
    --v3-clients) v3_clients=$2; shift ;;
    --v3-ops) v3_ops=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --play-args) play_args=$2; shift ;;
    --size) size=$2; shift ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "play-v4-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
for v in "$minor" "$v4_clients" "$rounds" "$v3_clients" "$v3_ops" "$repeat"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "play-v4-bench: bad number '$v'" >&2; exit 2; }
done
[ "$repeat" -ge 1 ] || { echo "play-v4-bench: --repeat must be >= 1" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "play-v4-bench: needs root (lab server, tcpdump)" >&2; exit 1; }
play=$build/src/player/tbbt-play conv=$build/src/extract/tbbt-convert
init=$build/src/aging/tbbt-init scen4=$build/tools/nfs4-scenario
for b in "$play" "$conv" "$init" "$scen4" "$build/tools/nfs-workload"; do
  [ -x "$b" ] || { echo "play-v4-bench: $b not built (cmake --build $build)" >&2; exit 1; }
done
for t in tcpdump tshark python3 timeout; do
  command -v "$t" >/dev/null || { echo "play-v4-bench: $t is not installed" >&2; exit 1; }
done
# Again inside a private namespace with a fresh state directory (TBBT_LAB_DIR).
[ -n "${TBBT_LAB_NS:-}" ] ||
  exec tools/lab-ns --tmp play-v4-bench -- bash "$0" "${args[@]}" --build "$build"

PROG=play-v4-bench
say() { echo "play-v4-bench: $*"; }
die() { echo "play-v4-bench: $*" >&2; exit 1; }
lab=$top/tools/tbbt-lab
out=$top/bench/out
mkdir -p "$out"
work=$(mktemp -d /var/tmp/tbbt-play-v4-bench.XXXXXX)
# shellcheck source=tools/capture-lib.sh
. "$top/tools/capture-lib.sh"
export_dir=""
cleanup() {
  capture_stop 0 || true
  [ -z "$export_dir" ] || rm -rf "$export_dir"/bench-v4-* "$export_dir"/bench-v3-*
  bash "$lab" stop -q || true
  if [ "$keep" -eq 1 ]; then echo "play-v4-bench: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "starting the lab (NFSv3 and NFSv4, --size $size)"
bash "$lab" start --nfs4 --size "$size" -q >/dev/null || die "cannot start the lab"
lab_env=$(bash "$lab" env) || die "tbbt-lab env failed"
eval "$lab_env"
export_dir=$TBBT_LAB_EXPORT

# 1. captures.  NFSv4 first: nfs4-scenario removes what it makes; capture-workload.sh
# then builds its site's tree in the export (uncaptured) and captures the clients.
say "NFSv4 capture: nfs4-scenario --minor $minor --clients $v4_clients --rounds $rounds"
capture_start "$work/v4.pcap" "$work/v4.tcpdump" 0 'port 2049' || die "tcpdump"
"$scen4" --server "$TBBT_LAB_SERVER" --minor "$minor" --clients "$v4_clients" \
  --rounds "$rounds" --path /export -v >"$work/v4.counts" 2>"$work/v4.log" ||
  { tail -n 3 "$work/v4.log" >&2; die "nfs4-scenario failed"; }
capture_stop || die "tcpdump"
tail -n 1 "$work/v4.log"
say "NFSv3 capture: capture-workload.sh --mix $v3_mix --clients $v3_clients --ops $v3_ops"
bash tools/capture-workload.sh --mix "$v3_mix" --clients "$v3_clients" --ops "$v3_ops" \
  --out "$work/v3cap" --build "$build" 2>"$work/v3.log" ||
  { tail -n 5 "$work/v3.log" >&2; die "capture-workload.sh failed"; }
grep -E 'nfs-workload: run:|NFS calls' "$work/v3.log" || true
mv "$work/v3cap/capture.pcap" "$work/v3.pcap"

# 2. traces.
for name in v4 v3; do
  "$conv" -q --summary-json "$work/$name.sum.json" -o "$work/$name.tbbt" "$work/$name.pcap" ||
    die "tbbt-convert $name"
done
rm -f "$work/v4.pcap" "$work/v3.pcap"
# The NFSv4 capture must hold every COMPOUND nfs4-scenario sent (tcpdump drops none).
sent=$(sed -n 's/.* clients, \([0-9]*\) COMPOUNDs, .*/\1/p' "$work/v4.log")
got=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(d["nfs4"]["compounds"], d["unmatched_calls"], d["unmatched_replies"])' "$work/v4.sum.json")
[ "$got" = "$sent 0 0" ] ||
  die "the NFSv4 capture is incomplete: $sent COMPOUNDs sent; captured, unmatched calls, replies: $got"

# 3. replays.  replay NAME TURN: a fresh image, the server restarted, one tbbt-play run;
# appends its row (JSON) to $work/rows.
: >"$work/rows"
replay() {
  local name=$1 turn=$2 root=$export_dir/bench-$1-$2 rc=0 pseudo=()
  rm -rf "$root"; mkdir "$root"
  "$init" -q --no-progress --map "$work/$name.tbbt.map" --root "$root" \
    --manifest "$work/$name.man" >/dev/null || die "tbbt-init $name"
  bash "$lab" restart -q >/dev/null || die "cannot restart the lab"
  [ "$name" = v3 ] || pseudo=(--pseudo /export)
  rm -f "$work/r.json"
  # shellcheck disable=SC2086  # --play-args is split into options
  timeout 900 "$play" --trace "$work/$name.tbbt" --manifest "$work/$name.man" \
    --server "$TBBT_LAB_SERVER" --export "$export_dir" "${pseudo[@]}" --order fsdep \
    --timing full -q --no-progress --report-json "$work/r.json" $play_args \
    2>"$work/play.err" || rc=$?
  [ -s "$work/r.json" ] || { cat "$work/play.err" >&2; die "$name: tbbt-play exit status $rc, no report"; }
  python3 - "$work/r.json" "$name" "$turn" "$rc" >>"$work/rows" <<'PY' || die "$name: bad report"
import json, sys
r = json.load(open(sys.argv[1]))
n, cpu = r["ops_completed"], r["cpu"]
u, s = cpu["user_seconds"], cpu["system_seconds"]
print(json.dumps({
    "trace": sys.argv[2], "turn": int(sys.argv[3]), "exit_status": int(sys.argv[4]),
    "trace_ops": r["trace_ops"], "ops_completed": n, "ops_skipped": r["ops_skipped"],
    "skipped_by_reason": r["skipped_by_reason"], "wall_seconds": r["wall_seconds"],
    "ops_s": r["throughput_ops"], "cpu_user_s": u, "cpu_sys_s": s,
    "cpu_us_op": 1e6 * (u + s) / n if n else None,
    "cpu_user_us_op": 1e6 * u / n if n else None,
    "replay_failures": r["replay_failures"],
    "replay_failures_by_kind": r["replay_failures_by_kind"],
    "reply_mismatches": r["reply_mismatches"], "read_bytes": r["read_bytes"],
    "connections": r["connections"], "peak_outstanding": r["peak_outstanding"],
    "finished": r["finished"], "error": r["error"]}))
PY
  tail -n 1 "$work/rows" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("play-v4-bench: turn %d %s: %d ops, %.0f ops/s, %.2f us/op CPU (user %.2f), %d replay failures%s%s" % (
    r["turn"], r["trace"], r["ops_completed"], r["ops_s"], r["cpu_us_op"], r["cpu_user_us_op"],
    r["replay_failures"], " %s" % r["replay_failures_by_kind"] if r["replay_failures"] else "",
    ", exit status %d" % r["exit_status"] if r["exit_status"] else ""))'
  rm -rf "$root"
}
for ((i = 1; i <= repeat; i++)); do
  if [ $((i % 2)) -eq 1 ]; then order="v4 v3"; else order="v3 v4"; fi
  for name in $order; do
    replay "$name" "$i"
  done
done

# 4. the best of each, the ratio, the JSON.
python3 - "$work" "$out/play-v4-bench.json" <<EOF
import json, sys
work, dst = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(work + "/rows") if l.strip()]
summ = {n: json.load(open("%s/%s.sum.json" % (work, n))) for n in ("v4", "v3")}
def best(name):
    rs = [r for r in rows if r["trace"] == name and r["cpu_us_op"] is not None]
    return min(rs, key=lambda r: r["cpu_us_op"])
b4, b3 = best("v4"), best("v3")
fails = {n: sum(r["replay_failures"] for r in rows if r["trace"] == n) for n in ("v4", "v3")}
bad = [r for r in rows if r["replay_failures"] or r["exit_status"] or not r["finished"]]
rep = {
    "v4": {"workload": "nfs4-scenario --minor $minor --clients $v4_clients --rounds $rounds",
           "rpc_calls": summ["v4"]["rpc_calls"], "compounds": summ["v4"]["nfs4"]["compounds"],
           "best": b4, "replay_failures_all_runs": fails["v4"]},
    "v3": {"workload": "nfs-workload --mix $v3_mix --clients $v3_clients --ops $v3_ops",
           "rpc_calls": summ["v3"]["rpc_calls"], "best": b3,
           "replay_failures_all_runs": fails["v3"]},
    "player_args": "--order fsdep --timing full $play_args".strip(),
    "repeat": $repeat, "runs": rows,
    "ratio_cpu_us_per_op": b4["cpu_us_op"] / b3["cpu_us_op"],
    "ratio_user_cpu_us_per_op": b4["cpu_user_us_op"] / b3["cpu_user_us_op"],
    "target_ratio_cpu_us_per_op": 1.5,
}
json.dump(rep, open(dst, "w"), indent=1)
print()
print("%-3s %8s %9s %11s %12s %9s  %s" % ("", "ops", "ops/s", "CPU us/op", "user us/op",
      "failures", "(best of %d by CPU per op; NFSv4: one op is one COMPOUND)" % $repeat))
for n, b in (("v4", b4), ("v3", b3)):
    print("%-3s %8d %9.0f %11.2f %12.2f %9d" % (n, b["ops_completed"], b["ops_s"],
          b["cpu_us_op"], b["cpu_user_us_op"], b["replay_failures"]))
print("play-v4-bench: CPU per op v4/v3 %.2f (target <= 1.5), user CPU alone %.2f"
      % (rep["ratio_cpu_us_per_op"], rep["ratio_user_cpu_us_per_op"]))
for r in bad:
    print("play-v4-bench: turn %d %s: %d replay failures %s, exit status %d, finished %s"
          % (r["turn"], r["trace"], r["replay_failures"], r["replay_failures_by_kind"],
             r["exit_status"], r["finished"]))
print("written: " + dst)
sys.exit(1 if bad else 0)
EOF
