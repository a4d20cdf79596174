#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play on MPI ranks (docs/mpi.md): how the aggregate rate grows with the ranks, what
# each rank costs per operation, and how closely the ranks start together.
# Against NFS-Ganesha MEM (tools/tbbt-lab --fsal mem, in a network namespace of its own,
# tools/lab-ns; a fresh server per replay), with the GETATTR-only trace of
# bench/gen-play-trace.py (--make-files: the trace makes its 2,000 files first):
#  1. one tbbt-play process, no mpirun, one image: the one-process figure;
#  2. `mpirun -np N tbbt-play --distribute clones --clones N` for each N of --ranks (one
#     image per rank, built through NFS by tbbt-init --server): aggregate ops/s (merged
#     ops_completed over the common window), its ratio to the one-process figure of the
#     same run, each rank's CPU per operation, start skew;
#  3. the same ranks in timestamp timing (--ts-ops operations at --ts-rate calls/s per
#     rank): start skew across the ranks (largest minus smallest start, rank 0's clock)
#     against the target of 100 us, and the largest offset error;
#  and the bytes per operation on the wire (loopback's tx bytes over the one-process
#  replay: both directions, with TCP/IP headers and ACKs, the trace's set-up included).
# Each configuration runs --repeat times (best rate kept, every skew kept).  Prints a
# table and writes OUT/mpi-scale.json.  On one 2-core host the server saturates early:
# the rates say what one host can do; the per-rank CPU per operation feeds the model of
# docs/mpi.md (how many client machines a given server rate needs).
#
#   bash bench/mpi-scale.sh [--build DIR] [--ranks "1 2 4"] [--ops N] [--repeat R]
#                           [--ts-ops N] [--ts-rate R] [--out DIR]
# Defaults: ranks "1 2 4", 200000 operations, 1 repeat, 20000 timestamp operations at 5000/s.
# Player settings as bench/play-bench.sh: fsdep, 2 connections, 256 in flight, batch 64.
# Needs root (lab, namespace) and mpirun (openmpi-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build="" ranks="1 2 4" ops=200000 repeat=1 ts_ops=20000 ts_rate=5000 out=$top/bench/out
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --ranks) ranks=$2; shift ;;
    --ops) ops=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --ts-ops) ts_ops=$2; shift ;;
    --ts-rate) ts_rate=$2; shift ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mpi-scale: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "mpi-scale: needs root (lab server, network namespace)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "mpi-scale: mpirun not found (openmpi-bin)" >&2; exit 1; }
if [ -z "${TBBT_LAB_NS:-}" ]; then     # a network of its own: no other lab in the way
  args=(--ranks "$ranks" --ops "$ops" --repeat "$repeat" --ts-ops "$ts_ops" --ts-rate "$ts_rate"
        --out "$out")
  [ -z "$build" ] || args+=(--build "$build")
  exec "$top/tools/lab-ns" --tmp mpi-scale -- bash "$0" "${args[@]}"
fi
if [ -z "$build" ]; then
  build=$top/build-bench
  echo "mpi-scale: building in $build"
  cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBBT_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j2 >/dev/null
fi
play=$build/src/player/tbbt-play conv=$build/src/extract/tbbt-convert init=$build/src/aging/tbbt-init
for b in "$play" "$conv" "$init"; do
  [ -x "$b" ] || { echo "mpi-scale: $b not built (cmake --build $build)" >&2; exit 1; }
done
lab=$top/tools/tbbt-lab
work=$(mktemp -d /var/tmp/tbbt-mpi-scale.XXXXXX)
lab_up=0
cleanup() {
  [ $lab_up -eq 0 ] || bash "$lab" stop -q || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "mpi-scale: $*"; }
die() { echo "mpi-scale: $*" >&2; exit 1; }
# The namespace has loopback only: Open MPI's run-time and byte transfer over it.
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
mpi=(mpirun --allow-run-as-root --oversubscribe)
player=(--order fsdep --connections 2 --max-outstanding 256 --batch 64 --recv-batch 64
        -q --no-progress)

# gen NAME ARGS...: a GETATTR-only trace that makes its files ($work/NAME.tbbt).
gen() {
  local name=$1; shift
  python3 "$top/bench/gen-play-trace.py" -o "$work/$name.txt" --mix getattr --make-files \
    --top bench "$@" 2>/dev/null || die "gen-play-trace $name"
  "$conv" -q --from-text "$work/$name.txt" -o "$work/$name.raw" || die "convert --from-text $name"
  "$conv" -q -o "$work/$name.tbbt" "$work/$name.raw" || die "convert $name"
  rm -f "$work/$name.txt" "$work/$name.raw"
}

# fresh TRACE N: a new MEM server with N empty images of TRACE ($work/image.man).
fresh() {
  local trace=$1 n=$2
  [ $lab_up -eq 0 ] || bash "$lab" stop -q || die "lab stop"
  lab_up=0
  bash "$lab" start -q --fsal mem >/dev/null || die "cannot start the lab (fsal mem)"
  lab_up=1
  eval "$(bash "$lab" env)"
  "$init" -q --no-progress --map "$work/$trace.tbbt.map" --server 127.0.0.1 \
    --export "$TBBT_LAB_EXPORT" --root "$TBBT_LAB_EXPORT" --clones "$n" \
    --manifest "$work/image.man" >"$work/init.out" 2>&1 ||
    die "tbbt-init --server --clones $n: $(tail -n 2 "$work/init.out")"
}

# lo_tx: bytes sent on this network namespace's loopback (/proc/net/dev is per namespace).
lo_tx() { sed -n 's/^ *lo: *//p' /proc/net/dev | awk '{print $9}'; }

rows=$work/rows.jsonl
: >"$rows"
# run LABEL TRACE N TIMING: one replay (N 0: one process without mpirun), one JSON row.
run() {
  local label=$1 trace=$2 n=$3 timing=$4 cmd
  fresh "$trace" "$(( n > 0 ? n : 1 ))"
  cmd=("$play" --trace "$work/$trace.tbbt" --manifest "$work/image.man" --timing "$timing"
       "${player[@]}" --report-json "$work/r.json")
  if [ "$n" -gt 0 ]; then
    cmd=("${mpi[@]}" -np "$n" "${cmd[@]}" --distribute clones --clones "$n")
  fi
  local tx0 tx1
  tx0=$(lo_tx)
  "${cmd[@]}" >"$work/play.out" 2>&1 || die "$label: tbbt-play failed: $(grep -v '^\[' "$work/play.out" | tail -n 3)"
  tx1=$(lo_tx)
  python3 - "$work/r.json" "$label" "$n" "$timing" "$((tx1 - tx0))" >>"$rows" <<'PY' ||
import json, sys
j = json.load(open(sys.argv[1]))
m = j.get("mpi") or {}
row = {"label": sys.argv[2], "ranks": int(sys.argv[3]), "timing": sys.argv[4],
       "ops": j["ops_completed"], "failures": j["replay_failures"], "ops_s": j["throughput_ops"],
       "cpu_us_op": j["cpu"]["us_per_op"], "verify": j.get("verify"),
       "start_skew_us": m.get("start_skew_us"), "offset_error_us": m.get("offset_error_us"),
       "rank_cpu_us_op": [r["cpu"]["us_per_op"] for r in j.get("ranks", [])],
       "rank_start_late_us": [r["start_late_us"] for r in j.get("ranks", [])],
       "wire_bytes_per_op": int(sys.argv[5]) / max(1, j["ops_completed"])}
assert row["failures"] == 0, row
print(json.dumps(row))
PY
    die "$label: bad report"
  say "$(tail -n 1 "$rows")"
}

say "traces: $ops GETATTRs (full speed), $ts_ops at $ts_rate/s (timestamp)"
gen full --ops "$ops"
gen ts --ops "$ts_ops" --rate "$ts_rate"
for i in $(seq "$repeat"); do
  run "one process" full 0 full
  for n in $ranks; do
    run "$n ranks" full "$n" full
    run "$n ranks timestamp" ts "$n" timestamp
  done
done

python3 - "$rows" "$out/mpi-scale.json" "$ops" "$ts_ops" "$ts_rate" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
one = max(r["ops_s"] for r in rows if r["ranks"] == 0)
one_cpu = min(r["cpu_us_op"] for r in rows if r["ranks"] == 0)
wire = min(r["wire_bytes_per_op"] for r in rows if r["ranks"] == 0)
summary = []
print("mpi-scale: GETATTR-only against Ganesha MEM, one host")
print(f"  one process: {one:,.0f} ops/s, {one_cpu:.2f} us CPU/op, {wire:.0f} bytes/op on the "
      "wire (loopback, with TCP/IP headers and ACKs)")
print(f"  {'ranks':>5} {'ops/s':>10} {'ratio':>6} {'CPU us/op per rank':<28} {'ts skew us':>10} {'offset err us':>13}")
for n in sorted({r["ranks"] for r in rows if r["ranks"] > 0}):
    full = [r for r in rows if r["ranks"] == n and r["timing"] == "full"]
    ts = [r for r in rows if r["ranks"] == n and r["timing"] == "timestamp"]
    best = max(full, key=lambda r: r["ops_s"])
    skews = [r["start_skew_us"] for r in ts]
    s = {"ranks": n, "ops_s": best["ops_s"], "ratio_to_one_process": best["ops_s"] / one,
         "rank_cpu_us_op": best["rank_cpu_us_op"], "cpu_us_op": best["cpu_us_op"],
         "ts_start_skew_us": skews, "ts_start_skew_max_us": max(skews),
         "ts_offset_error_us": max(r["offset_error_us"] for r in ts),
         "skew_target_met": max(skews) <= 100.0}
    summary.append(s)
    cpus = " ".join(f"{c:.2f}" for c in s["rank_cpu_us_op"])
    print(f"  {n:>5} {s['ops_s']:>10,.0f} {s['ratio_to_one_process']:>6.2f} {cpus:<28} "
          f"{s['ts_start_skew_max_us']:>10.1f} {s['ts_offset_error_us']:>13.1f}"
          f"{'' if s['skew_target_met'] else '  (skew target 100 us missed)'}")
json.dump({"ops": int(sys.argv[3]), "ts_ops": int(sys.argv[4]), "ts_rate": float(sys.argv[5]),
           "one_process": {"ops_s": one, "cpu_us_op": one_cpu, "wire_bytes_per_op": wire},
           "ranks": summary,
           "rows": rows}, open(sys.argv[2], "w"), indent=1)
print(f"mpi-scale: wrote {sys.argv[2]}")
PY
