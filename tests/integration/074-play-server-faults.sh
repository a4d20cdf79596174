#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play against a server that stops, dies and comes back in the middle of a replay
# (docs/tbbt-play.md, "Retransmission and reconnection" and "Failures"), against the real
# lab server (NFS-Ganesha, tools/tbbt-lab, started here inside a private network
# namespace, tools/lab-ns).  The committed mid-run capture (creates, writes, renames,
# removes) is replayed in timestamp timing at --speed 0.01 (about 7 s), --timeout-ms 300,
# with --verify, in conservative and fsdep order, and 2 s into the replay:
#   stopcont     ganesha.nfsd is stopped (SIGSTOP) for 3 s, then continued (SIGCONT),
#                with its duplicate request cache (DRC); NFS-Ganesha 4.3 may crash on
#                the resends queued behind it (docs/lab.md, "Duplicate request cache"),
#                which the player must then report as a dead server;
#   stopcont-nodrc  the same without the DRC (tbbt-lab --drc off): every resend runs
#                again, and the server must survive;
#   restart      ganesha.nfsd is killed (SIGKILL) and restarted (tbbt-lab restart): its
#                duplicate request cache is gone, its VFS handles stay valid;
#   restart-busy the same with 16 clones at --speed 0.03, 64 calls in flight at the kill;
#   restart-grace  the same with a 5 s grace period after the restart (tbbt-lab restart
#                --grace 5): the calls that change state get NFS3ERR_JUKEBOX until it
#                ends (fsdep order only);
#   dead         ganesha.nfsd is killed and not restarted: exit status 1 after
#                --dead-after 3, finished false, stop_reason "server dead";
#   stopdead     ganesha.nfsd is stopped and stays stopped: the same, although the calls
#                out keep timing out and being resent.
# Every run must end within its bound with the report on disk and its accounting holding
# (trace_ops = issued + skipped, issued = completed + unknown); the runs the server
# survives must finish with zero replay failures, a passing --verify and exit status 0
# (1 exactly when some outcomes are unknown).
# Needs root; fails, never skips, without it.
#   074-play-server-faults.sh BUILD_DIR [SCENARIO...]  (stopcont, stopcont-nodrc, restart,
#                             restart-busy, restart-grace, dead, stopdead; default all)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: 074-play-server-faults.sh BUILD_DIR [SCENARIO...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 074-play-server-faults "$0" "$@"

build=$(cd "$1" && pwd)
shift
scenarios=${*:-stopcont stopcont-nodrc restart restart-busy restart-grace dead stopdead}
itest_tools "$build"
work=$(mktemp -d)
gpid="" ppid="" stopped_pid=""
cleanup() {
  [ -z "$gpid" ] || kill -CONT "$gpid" 2>/dev/null || true
  [ -z "$ppid" ] || kill "$ppid" 2>/dev/null || true
  bash "$lab" stop -q || true
  # TBBT_KEEP=DIR keeps the reports and event logs for a look afterwards.
  [ -z "${TBBT_KEEP:-}" ] || cp -r "$work"/. "$TBBT_KEEP"/ || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  # The server's own account (a crash, a restart) of the moments before.
  [ -z "${TBBT_LAB_LOG:-}" ] || [ ! -f "$TBBT_LAB_LOG" ] ||
    { echo "ganesha.nfsd log ($TBBT_LAB_LOG), last lines:"; tail -n 20 "$TBBT_LAB_LOG"; } >&2
  exit 1
}
say() { echo "074-play-server-faults: $*"; }

bash "$lab" start --size 256M -q || fail "cannot start the lab server in $TBBT_LAB_DIR"
lab_env=$(bash "$lab" env) || fail "tbbt-lab env failed"
eval "$lab_env"
E=$TBBT_LAB_EXPORT
server_pid() { head -c 32 "$TBBT_LAB_DIR/ganesha.pid" | tr -dc 0-9; }

"$convert" -q -o "$work/mid.tbbt" "$top/traces/v3-tcp-mid.pcap" || fail "convert v3-tcp-mid.pcap"

image() {   # image CLONES: builds a fresh image of the mid-run trace, prints its manifest
  local root
  root=$(mktemp -d "$E/img-XXXXXX")
  local man=$work/$(basename "$root").manifest
  "$init" --map "$work/mid.tbbt.map" --root "$root" --manifest "$man" --clones "$1" -q \
    >/dev/null || fail "tbbt-init"
  echo "$man"
}

now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

# run NAME BOUND_S FAULT -- PLAY_ARGS: one replay with --verify of a fresh image (of
# $clones clones, default 1, replayed at --speed $speed, default 0.01, against a server
# restarted with --drc $drc, default on); FAULT (a shell
# function) runs $at s (default 2) after the start, while the replay is under way.  Sets
# rc, secs and fault_secs (how long FAULT took).
run() {
  local name=$1 bound=$2 fault=$3; shift 4
  local man t0 t1
  man=$(image "${clones:-1}")
  bash "$lab" restart -q --grace 0 --drc "${drc:-on}" >/dev/null ||
    fail "lab restart"   # nothing cached
  t0=$(now)
  timeout "$bound" "$play" --trace "$work/mid.tbbt" --manifest "$man" --server 127.0.0.1 \
    --export "$E" -q --timing timestamp --speed "${speed:-0.01}" --clones "${clones:-1}" \
    --timeout-ms 300 --verify \
    --report-json "$work/$name.json" --event-log "$work/$name.ev" "$@" \
    2>"$work/$name.err" &
  ppid=$!
  sleep "${at:-2}"
  kill -0 "$ppid" 2>/dev/null || fail "$name: the replay ended before the fault"
  t1=$(now)
  "$fault" "$name"
  fault_secs=$(since "$t1")
  set +e
  wait "$ppid"
  rc=$?
  set -e
  ppid=""
  secs=$(since "$t0")
  [ "$rc" -ne 124 ] || fail "$name: did not end within $bound s: $(head -c 2000 "$work/$name.err")"
  [ -s "$work/$name.json" ] || fail "$name: no report on disk (exit $rc): $(cat "$work/$name.err")"
}

# check NAME PYTHON-EXPR: the report NAME.json (as r, the exit status as rc) must satisfy
# the expression and account for every request.
check() {
  python3 - "$work/$1.json" "$1" "$2" "$rc" "$secs" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
name, expr, rc, secs = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
acc = (r["trace_ops"] == r["ops_issued"] + r["ops_skipped"] and
       r["ops_issued"] == r["ops_completed"] + r["ops_unknown"])
ok = acc and eval(expr)
v = r.get("verify")
print(f'074-play-server-faults: {name}: exit {rc} after {secs} s, finished {r["finished"]}, '
      f'stop_reason {r.get("stop_reason")!r}, trace {r["trace_ops"]} = issued '
      f'{r["ops_issued"]} + skipped {r["ops_skipped"]} {r["skipped_by_reason"]}, issued = '
      f'completed {r["ops_completed"]} + unknown {r["ops_unknown"]}: '
      f'{"holds" if acc else "BROKEN"}; failures {r["replay_failures"]} '
      f'{r["replay_failures_by_kind"]}, timeouts {r["timeouts"]}, retransmits '
      f'{r["retransmits"]}, retries {r["retries"]}, reconnects {r["reconnects"]}, dup ok '
      f'{r.get("retransmit_dup_ok")}, jukebox {r.get("jukebox")}, verify {v}')
sys.exit(0 if ok else 1)
PY
    fail "$1: report $(cat "$work/$1.json"); stderr: $(head -c 2000 "$work/$1.err")"
}
# The runs the server survives: finished, no replay failure, --verify ok, exit 1 exactly
# when some outcomes are unknown.
SURVIVED="r['finished'] and r['replay_failures'] == 0 and r['verify']['ok'] and \
rc == (1 if r['ops_unknown'] else 0)"

stopcont() {
  gpid=$(server_pid)
  [ -n "$gpid" ] || fail "$1: no ganesha.nfsd pid"
  stopped_pid=$gpid
  kill -STOP "$gpid"
  sleep 3
  kill -CONT "$gpid"
  gpid=""
}
kill_server() {
  local pid
  pid=$(server_pid)
  [ -n "$pid" ] || fail "$1: no ganesha.nfsd pid"
  kill -KILL "$pid"
}
restart() {
  kill_server "$1"
  bash "$lab" restart -q --grace 0 >/dev/null || fail "$1: lab restart"
}
restart_grace() {
  kill_server "$1"
  bash "$lab" restart -q --grace 5 >/dev/null || fail "$1: lab restart --grace 5"
}
dead() {
  kill_server "$1"
  t_dead=$(now)
}
stop_for_good() {   # continued by the caller once the player has ended
  gpid=$(server_pid)
  [ -n "$gpid" ] || fail "$1: no ganesha.nfsd pid"
  kill -STOP "$gpid"
  t_dead=$(now)
}
# dead_check NAME: exit 1 within 3..10 s of the fault with one clear line, the report of
# what completed
dead_check() {
  dsecs=$(since "$t_dead")
  [ "$rc" -eq 1 ] || fail "$1: exit status $rc, want 1: $(cat "$work/$1.err")"
  grep -q "not back within 3000 ms\|did not answer for 3 s\|unreachable for 3 s" "$work/$1.err" ||
    fail "$1: no clear error: $(cat "$work/$1.err")"
  python3 -c "import sys; sys.exit(0 if 3 <= $dsecs < 10 else 1)" ||
    fail "$1: ended $dsecs s after the fault (want --dead-after 3)"
  check "$1" "not r['finished'] and r['stop_reason'] == 'server dead' and 'verify' not in r"
  say "$1: ended $dsecs s after the fault: $(head -n 1 "$work/$1.err")"
}

for s in $scenarios; do
  for order in conservative fsdep; do
    name=$s-$order
    case $s in
      stopcont)
        run "$name" 60 stopcont -- --order "$order" --dead-after 10
        if kill -0 "$stopped_pid" 2>/dev/null; then
          check "$name" "$SURVIVED and r['timeouts'] > 0 and r['ops_unknown'] == 0"
        else
          # NFS-Ganesha 4.3 crashed on the resends queued behind it (a resent CREATE
          # while its first send was being served): a dead server, which the player
          # must report as such.
          check "$name" "not r['finished'] and r['stop_reason'] == 'server dead' and rc == 1"
          say "$name: ganesha.nfsd died after SIGCONT (its DRC crash): exit 1, server dead"
        fi ;;
      stopcont-nodrc)
        drc=off run "$name" 60 stopcont -- --order "$order" --dead-after 10
        kill -0 "$stopped_pid" 2>/dev/null || fail "$name: ganesha.nfsd died after SIGCONT"
        check "$name" "$SURVIVED and r['timeouts'] > 0 and r['ops_unknown'] == 0" ;;
      restart)
        run "$name" 60 restart -- --order "$order" --dead-after 15
        check "$name" "$SURVIVED and r['reconnects'] > 0"
        say "$name: the server was back $fault_secs s after the kill" ;;
      restart-busy)
        # 16 clones at --speed 0.03 (about 2.4 s, 7,200 calls/s): calls of every kind in
        # flight when the server dies, whose resends meet a server without its cache.
        clones=16 speed=0.03 at=1.5 run "$name" 60 restart -- --order "$order" --dead-after 15
        check "$name" "$SURVIVED and r['reconnects'] > 0"
        say "$name: the server was back $fault_secs s after the kill" ;;
      restart-grace)
        [ "$order" = fsdep ] || continue
        run "$name" 90 restart_grace -- --order "$order" --dead-after 15
        check "$name" "$SURVIVED and r['reconnects'] > 0" ;;
      dead)
        run "$name" 60 dead -- --order "$order" --dead-after 3
        dead_check "$name" ;;
      stopdead)
        # Stopped and never continued while the player runs: its calls keep timing out
        # (every 300 ms), which must not count as the server answering.
        run "$name" 60 stop_for_good -- --order "$order" --dead-after 3
        kill -CONT "$gpid"
        gpid=""
        dead_check "$name" ;;
      *) fail "unknown scenario $s" ;;
    esac
  done
done
say "ok"
