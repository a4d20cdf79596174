#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play on MPI ranks (issue 18; docs/mpi.md), against the lab server, on a capture of
# real clients: tools/nfs-workload's mail mix (5 libnfs clients, per-user mailboxes read,
# rewritten, hard-linked as lock files and removed at once), captured with tcpdump.
#  1. one process replays one image: the reference (ops_completed, the end tree);
#  2. `mpirun -np 4 --distribute clones --clones 4`: ops_completed = 4 x the reference,
#     no replay failure, --verify ok on every image, and the merged report's histograms
#     are the sums of the ranks' own (--rank-reports): each procedure's count and the
#     count and maximum of all operations; the merged --timeseries adds up to the counts;
#  3. `--distribute clients` with 2 and 4 ranks, in conservative and in fsdep order:
#     --verify ok, no failure, every operation of the trace accounted once
#     (trace_ops and ops_completed as the reference's), cross-rank dependencies counted
#     (thousands in conservative order; in fsdep order only conflicts still live at
#     admission, from a few to hundreds), every rank with work (the clients shared out
#     by their load), and the end tree equal to the reference's (tools/tree-snap.py:
#     every path, type, size, mode, owner and link count);
#  4. a rank stopped by SIGTERM mid-run (timestamp timing, slowed): every rank stops,
#     rank 0 still writes the merged report (finished false, stop_reason naming the
#     rank), the accounting holds, and mpirun's exit status is non-zero.
# The ranks share this 2-core machine (--oversubscribe); in a sanitizer build the ranks
# get the LeakSanitizer settings of lsan-openmpi.supp.  Needs root, mpirun, tcpdump and
# tshark; fails, never skips, without them.  About 2 minutes.
#   100-play-mpi.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 100-play-mpi.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 100-play-mpi needs root (it starts the lab NFS server and tcpdump)" >&2
  exit 1
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/integration
# shellcheck source=lab-test.sh
. "$here/lab-test.sh"
itest_private_lab 100-play-mpi "$0" "$@"   # its own network: no other lab in the way
build=$(cd "$1" && pwd)
itest_tools "$build"
for t in mpirun tcpdump tshark; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed" >&2; exit 1; }
done
[ -x "$build/tools/nfs-workload" ] || { echo "FAIL: $build/tools/nfs-workload not built" >&2; exit 1; }
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "100-play-mpi: $*"; }
work=$(mktemp -d /var/tmp/tbbt-100.XXXXXX)
lab_up=0
cleanup() {
  [ $lab_up -eq 0 ] || bash "$lab" stop -q || true
  rm -rf "$work"
}
trap cleanup EXIT

# Open MPI inside the namespace: its run-time and transfers over loopback, the only link.
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
mpi=(mpirun --allow-run-as-root --oversubscribe)
if grep -q '^TBBT_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  mpi+=(-x OMPI_MCA_mca_base_component_disable_dlclose=1
        -x ASAN_OPTIONS=fast_unwind_on_malloc=0:detect_leaks=1
        -x "LSAN_OPTIONS=suppressions=$here/lsan-openmpi.supp:fast_unwind_on_malloc=0")
fi

# ------------------------------------------------------------------ the capture
bash "$top/tools/capture-workload.sh" --start-lab --build "$build" --out "$work/cap" \
  --mix mail --clients 5 --ops 500 --users 6 --seed 18 >"$work/cap.log" 2>&1 ||
  fail "capture: $(tail -n 3 "$work/cap.log")"
"$convert" -q -o "$work/mail.tbbt" "$work/cap/capture.pcap" || fail "tbbt-convert of the capture"
trace=$work/mail.tbbt

bash "$lab" start -q --size 1G >/dev/null || fail "cannot start the lab"
lab_up=1
eval "$(bash "$lab" env)"
E=$TBBT_LAB_EXPORT

# image NAME CLONES: a fresh image of the trace in the export ($work/NAME.man).
image() {
  mkdir "$E/$1"
  "$init" -q --no-progress --map "$trace.map" --root "$E/$1" --clones "$2" \
    --manifest "$work/$1.man" >"$work/init-$1.out" 2>&1 ||
    fail "tbbt-init $1: $(tail -n 2 "$work/init-$1.out")"
}
image ref 1
image c4 4
for n in 2 4; do
  for order in conservative fsdep; do image "cl$n-$order" 1; done
done
image stop 4
sync
bash "$lab" restart -q >/dev/null || fail "lab restart"   # nothing cached from tbbt-init

play=("$play" --trace "$trace" --server 127.0.0.1 --export "$E" -q --no-progress)
# snap NAME: the image's tree after its replay
snap() {
  python3 "$top/tools/tree-snap.py" snap -o "$work/$1.snap" "$E/$1" || fail "tree-snap $1"
}

# ------------------------------------------------------------------ 1. the reference
"${play[@]}" --manifest "$work/ref.man" --order fsdep --verify --report-json "$work/ref.json" \
  >"$work/ref.out" 2>&1 || fail "one process: $(tail -n 3 "$work/ref.out")"
snap ref
read -r ref_ops ref_trace < <(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["replay_failures"] == 0 and j["verify"]["ok"], j
print(j["ops_completed"], j["trace_ops"])' "$work/ref.json") || fail "reference report"
say "one process: $ref_ops operations completed of $ref_trace"

# ------------------------------------------------------------------ 2. clones
"${mpi[@]}" -np 4 "${play[@]}" --manifest "$work/c4.man" --clones 4 --distribute clones \
  --order fsdep --verify --report-json "$work/c4.json" --rank-reports "$work/c4-ranks" \
  --timeseries "$work/c4.csv" >"$work/c4.out" 2>&1 ||
  fail "4 ranks, clones: $(grep -v '^\[' "$work/c4.out" | tail -n 3)"
python3 - "$work/c4.json" "$work/c4-ranks" "$ref_ops" "$work/c4.csv" <<'PY' ||
import csv, json, sys
j = json.load(open(sys.argv[1]))
series = list(csv.DictReader(open(sys.argv[4])))
assert sum(int(r["completed"]) for r in series) == j["ops_completed"], "time series"
assert sum(int(r["issued"]) for r in series) == j["ops_issued"], "time series"
ranks = [json.load(open(f"{sys.argv[2]}/rank-{r}.json")) for r in range(4)]
ref = int(sys.argv[3])
assert j["ops_completed"] == 4 * ref, (j["ops_completed"], ref)
assert j["replay_failures"] == 0 and j["ops_unknown"] == 0, j["replay_failures"]
assert j["verify"]["ok"] and j["verify"]["mismatches"] == 0, j["verify"]
assert j["mpi"]["ranks"] == 4 and j["mpi"]["distribute"] == "clones", j["mpi"]
assert sorted(r["what"] for r in j["ranks"]) == [f"image {i}" for i in range(4)], j["ranks"]
assert all(r["ops_completed"] == ref for r in ranks)
# the merged histograms are the sums of the ranks'
assert j["all"]["count"] == sum(r["all"]["count"] for r in ranks)
assert j["all"]["max_us"] == max(r["all"]["max_us"] for r in ranks)
for p, h in j["procedures"].items():
    assert h["count"] == sum(r["procedures"].get(p, {}).get("count", 0) for r in ranks), p
assert set(j["procedures"]) == set().union(*(r["procedures"] for r in ranks))
assert j["trace_ops"] == j["ops_issued"] + j["ops_skipped"]
assert j["ops_issued"] == j["ops_completed"] + j["ops_unknown"]
print(f"100-play-mpi: 4 ranks, clones: {j['ops_completed']} = 4 x {ref} completed, verify ok, "
      f"{len(j['procedures'])} procedure histograms = sums of the ranks', "
      f"start skew {j['mpi']['start_skew_us']:.1f} us; the merged time series adds up")
PY
  fail "4 ranks, clones: report"

# ------------------------------------------------------------------ 3. clients
for n in 2 4; do
  for order in conservative fsdep; do
    name=cl$n-$order
    "${mpi[@]}" -np "$n" "${play[@]}" --manifest "$work/$name.man" --distribute clients \
      --order "$order" --verify --report-json "$work/$name.json" >"$work/$name.out" 2>&1 ||
      fail "$n ranks, clients, $order: $(grep -v '^\[' "$work/$name.out" | tail -n 3)"
    snap "$name"
    python3 - "$work/$name.json" "$ref_ops" "$ref_trace" "$n" "$order" <<'PY' ||
import json, sys
j = json.load(open(sys.argv[1]))
ref_ops, ref_trace, n, order = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
assert j["replay_failures"] == 0 and j["ops_unknown"] == 0, j["replay_failures_by_kind"]
assert j["verify"]["ok"], j["verify"]
assert j["trace_ops"] == ref_trace and j["ops_completed"] == ref_ops, (j["trace_ops"], j["ops_completed"])
m = j["mpi"]
assert m["ranks"] == n and m["distribute"] == "clients", m
assert m["notices_sent"] == ref_trace, m
if order == "conservative":     # nearly every request waits on earlier replies of others
    assert m["cross_rank_deps"] > 0, m
busy = sum(1 for r in j["ranks"] if r["ops_issued"] > 0)
assert busy == n, j["ranks"]        # the clients shared out by load: every rank has some
print(f"100-play-mpi: {n} ranks, clients, {order}: {j['ops_completed']} completed, verify ok, "
      f"{m['cross_rank_deps']} cross-rank dependencies, waited {m['cross_rank_wait_seconds']:.3f} s, "
      f"{busy} ranks with work")
PY
      fail "$n ranks, clients, $order: report"
    python3 "$top/tools/tree-snap.py" diff --ignore .tbbt-init "$work/ref.snap" "$work/$name.snap" \
      >"$work/$name.diff" 2>&1 ||
      fail "$n ranks, clients, $order: the end tree differs from one process's: $(head -n 5 "$work/$name.diff")"
  done
done
say "clients: the end trees of 2 and 4 ranks, both orders, equal one process's"

# ------------------------------------------------------------------ 4. stop one rank
rc=0
"${mpi[@]}" -np 4 "${play[@]}" --manifest "$work/stop.man" --clones 4 --distribute clones \
  --timing timestamp --speed 0.2 --report-json "$work/stop.json" >"$work/stop.out" 2>&1 &
mpirun_pid=$!
victim=""
for _ in $(seq 100); do
  sleep 0.1
  # rank 2's tbbt-play: the child of mpirun's daemon with OMPI_COMM_WORLD_RANK=2
  for p in $(pgrep -f "manifest $work/stop.man" || true); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=2'; then
      victim=$p
    fi
  done
  [ -z "$victim" ] || break
done
[ -n "$victim" ] || fail "stop: rank 2 never started"
sleep 2
kill -TERM "$victim"
wait "$mpirun_pid" || rc=$?
[ "$rc" -ne 0 ] || fail "stop: mpirun exited 0 after a rank was stopped"
python3 - "$work/stop.json" <<'PY' || fail "stop: report $(grep -v '^\[' "$work/stop.out" | tail -n 3)"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["finished"] is False, j["finished"]
assert "rank 2 (" in (j["stop_reason"] or "") and "SIGTERM" in j["stop_reason"], j["stop_reason"]
assert j["trace_ops"] == j["ops_issued"] + j["ops_skipped"], j
assert j["ops_issued"] == j["ops_completed"] + j["ops_unknown"], j
stopped = [r for r in j["ranks"] if not r["finished"]]
assert len(stopped) == 4, [(r["rank"], r["finished"], r["error"]) for r in j["ranks"]]
print(f"100-play-mpi: rank 2 stopped by SIGTERM: all 4 ranks stopped, report written "
      f"({j['ops_completed']} completed, {j['ops_skipped']} not sent), stop_reason {j['stop_reason']!r}")
PY
say "exit status after the stop: $rc"
say "PASS"
