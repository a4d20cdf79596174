#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play against faults injected by tools/rpc-proxy between the player and the real lab
# server (NFS-Ganesha, tools/tbbt-lab, in a private network namespace of its own through
# tools/lab-ns), docs/tbbt-play.md "Retransmission and reconnection":
#   - 5 % of the replies dropped (every 20th), start-up LOOKUPs, the replay and --verify
#     alike, and the reply to the start-up's MOUNT (a second proxy, --drop-first 1);
#   - the connection reset after every 100th call, and after every 300th;
#   - the proxy killed during the start-up LOOKUPs: exit status 1 after --dead-after, with
#     one error line;
# each in conservative and fsdep order, on the committed mid-run capture (creates,
# renames, removes, objects that exist at its start: start-up LOOKUPs).  Every run must
# finish within its bound, with exit status 0 (1 exactly when some outcomes are
# unknown), zero replay failures, a passing --verify, the report on disk and its
# accounting (trace_ops = issued + skipped, issued = completed + unknown).  A last run
# drops 5 % of the replies with the default timeout and must end in time bounded by the
# lost calls times the timeout.
# Needs root; fails, never skips, without it.
#   072-play-faults.sh BUILD_DIR [SCENARIO...]   (SCENARIO: drop20, reset100, reset300,
#                                                 dead-startup, default-timeout; default all)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: 072-play-faults.sh BUILD_DIR [SCENARIO...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 072-play-faults "$0" "$@"

build=$(cd "$1" && pwd)
shift
scenarios=${*:-drop20 reset100 reset300 dead-startup default-timeout}
itest_tools "$build"
work=$(mktemp -d)
proxy_pid=""
mproxy_pid=""
cleanup() {
  [ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true
  [ -z "$mproxy_pid" ] || kill "$mproxy_pid" 2>/dev/null || true
  bash "$lab" stop -q || true
  # TBBT_KEEP=DIR keeps the reports, event logs and proxy logs for a look afterwards.
  [ -z "${TBBT_KEEP:-}" ] || cp -r "$work"/. "$TBBT_KEEP"/ || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "072-play-faults: $*"; }

bash "$lab" start --size 256M -q || fail "cannot start the lab server in $TBBT_LAB_DIR"
lab_env=$(bash "$lab" env) || fail "tbbt-lab env failed"
eval "$lab_env"
export_dir=$TBBT_LAB_EXPORT

"$convert" -q -o "$work/mid.tbbt" "$top/traces/v3-tcp-mid.pcap" || fail "convert v3-tcp-mid.pcap"

image() {   # image: builds a fresh image of the mid-run trace, prints its manifest
  local root
  root=$(mktemp -d "$export_dir/img-XXXXXX")
  local man=$work/$(basename "$root").manifest
  "$init" --map "$work/mid.tbbt.map" --root "$root" --manifest "$man" -q >/dev/null ||
    fail "tbbt-init"
  echo "$man"
}

start_proxy() {   # start_proxy ARGS...: a fresh rpc-proxy (its counters from 0) before NFS
  rm -f "$work/proxy.port"
  "$proxy" --listen 0 --server 127.0.0.1:2049 --port-file "$work/proxy.port" \
    --log "$work/proxy-$pname.log" "$@" 2>"$work/proxy.err" &
  proxy_pid=$!
  for _ in $(seq 50); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
  [ -s "$work/proxy.port" ] || fail "rpc-proxy did not start: $(cat "$work/proxy.err")"
  pport=$(cat "$work/proxy.port")
}
stop_proxy() {
  kill "$proxy_pid" 2>/dev/null || true
  wait "$proxy_pid" 2>/dev/null || true
  proxy_pid=""
}

# start_mproxy ARGS...: a proxy before the MOUNT port too (mport), or none (mport 20048)
start_mproxy() {
  mport=20048
  [ $# -gt 0 ] || return 0
  rm -f "$work/mproxy.port"
  "$proxy" --listen 0 --server 127.0.0.1:20048 --port-file "$work/mproxy.port" \
    --delay-prog 100005 "$@" 2>"$work/mproxy.err" &
  mproxy_pid=$!
  for _ in $(seq 50); do [ -s "$work/mproxy.port" ] && break; sleep 0.1; done
  [ -s "$work/mproxy.port" ] || fail "rpc-proxy (MOUNT) did not start: $(cat "$work/mproxy.err")"
  mport=$(cat "$work/mproxy.port")
}
stop_mproxy() {
  [ -n "$mproxy_pid" ] || return 0
  kill "$mproxy_pid" 2>/dev/null || true
  wait "$mproxy_pid" 2>/dev/null || true
  mproxy_pid=""
  grep -q "dropped 1," "$work/mproxy.err" ||
    fail "the MOUNT proxy did not drop the MNT reply: $(cat "$work/mproxy.err")"
}

# faulty NAME BOUND_S TIMEOUT_MS PROXY_ARGS -- PLAY_ARGS: one replay through a fresh
# proxy; it must end within BOUND_S and within (replies dropped x TIMEOUT_MS) x 1.25 + 30 s
faulty() {
  local name=$1 bound=$2 tmo=$3; shift 3
  local pargs=()
  while [ "$1" != -- ]; do pargs+=("$1"); shift; done
  shift
  local man
  man=$(image)
  bash "$lab" restart -q >/dev/null   # nothing cached from tbbt-init
  pname=$name
  start_proxy "${pargs[@]}"
  start_mproxy ${mproxy_args:-}
  local t0 rc
  t0=$(date +%s.%N)
  set +e
  timeout "$bound" "$play" --trace "$work/mid.tbbt" --manifest "$man" --server 127.0.0.1 \
    --export "$export_dir" --nfs-port "$pport" --mount-port "$mport" --verify -q \
    --report-json "$work/$name.json" --event-log "$work/$name.ev" "$@" 2>"$work/$name.err"
  rc=$?
  set -e
  local t1
  t1=$(date +%s.%N)
  stop_proxy
  stop_mproxy
  local proxy_line
  proxy_line=$(tail -n 1 "$work/proxy.err")
  local why="exit status $rc"
  [ "$rc" -ne 124 ] || why="did not finish within $bound s"
  # exit status 1 only for operations of unknown outcome (checked with the report below)
  [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] ||
    fail "$name: $why after $(python3 -c "print(f'{$t1 - $t0:.1f}')") s:" \
      "$(head -c 2000 "$work/$name.err"); $proxy_line"
  [ -s "$work/$name.json" ] || fail "$name: no report on disk"
  python3 - "$work/$name.json" "$name" "$t0" "$t1" "$proxy_line" "$tmo" "$rc" <<'PY' ||
import json, re, sys
r = json.load(open(sys.argv[1]))
name, secs = sys.argv[2], float(sys.argv[4]) - float(sys.argv[3])
dropped = int(re.search(r"dropped (\d+)", sys.argv[5]).group(1))
limit = dropped * int(sys.argv[6]) / 1000 * 1.25 + 30
if secs > limit:
    print(f"072-play-faults: {name}: {secs:.1f} s, over {limit:.1f} s for {dropped} lost replies")
    sys.exit(1)
ok = r["finished"] and r["replay_failures"] == 0 and r["verify"]["ok"]
ok &= r["trace_ops"] == r["ops_issued"] + r["ops_skipped"]
ok &= r["ops_issued"] == r["ops_completed"] + r["ops_unknown"]
ok &= (int(sys.argv[7]) == 1) == (r["ops_unknown"] > 0)   # exit 1 exactly then
print(f'072-play-faults: {name}: {secs:.1f} s, issued {r["ops_issued"]} = completed '
      f'{r["ops_completed"]} + unknown {r["ops_unknown"]}, skipped {r["ops_skipped"]}, '
      f'failures {r["replay_failures"]} {r["replay_failures_by_kind"]}, timeouts '
      f'{r["timeouts"]}, retries {r["retries"]}, reconnects {r["reconnects"]}, '
      f'dup ok {r.get("retransmit_dup_ok")}, verify {r["verify"]}, exit {sys.argv[7]}; '
      f'{sys.argv[5]}')
sys.exit(0 if ok else 1)
PY
    fail "$name: report $(cat "$work/$name.json")"
}

# A server that goes away during the start-up LOOKUPs (held 500 ms each by the proxy,
# which is killed after 1 s): reconnect attempts until --dead-after 2, then exit 1.
dead_startup() {
  local man t0 rc secs
  man=$(image)
  pname=dead-startup
  start_proxy --delay lookup=500
  ( sleep 1; kill -9 "$proxy_pid" ) &
  local killer=$!
  t0=$(date +%s.%N)
  set +e
  timeout 60 "$play" --trace "$work/mid.tbbt" --manifest "$man" --server 127.0.0.1 \
    --export "$export_dir" --nfs-port "$pport" --mount-port 20048 -q --dead-after 2 \
    --timeout-ms 5000 2>"$work/dead.err"
  rc=$?
  set -e
  secs=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
  wait "$killer" 2>/dev/null || true
  wait "$proxy_pid" 2>/dev/null || true
  proxy_pid=""
  [ "$rc" -eq 1 ] || fail "dead-startup: exit status $rc (want 1): $(cat "$work/dead.err")"
  [ "$(wc -l <"$work/dead.err")" -eq 1 ] && grep -q "not back within 2000 ms" "$work/dead.err" ||
    fail "dead-startup: not one clear error line: $(cat "$work/dead.err")"
  python3 -c "import sys; sys.exit(0 if 2.5 < $secs < 10 else 1)" ||
    fail "dead-startup: ended after $secs s (want --dead-after 2 past the loss at 1 s)"
  say "dead-startup: exit 1 after $secs s: $(cat "$work/dead.err")"
}

for s in $scenarios; do
  if [ "$s" = dead-startup ]; then
    dead_startup
    continue
  fi
  for order in conservative fsdep; do
    case $s in
      drop20)
        mproxy_args="--drop-first 1" faulty "drop20-$order" 120 200 --drop-replies 20 -- \
          --order "$order" --timeout-ms 200 ;;
      reset100)
        faulty "reset100-$order" 120 200 --reset-every 100 -- --order "$order" --timeout-ms 200 ;;
      reset300)
        faulty "reset300-$order" 120 200 --reset-every 300 -- --order "$order" --timeout-ms 200 ;;
      default-timeout)
        [ "$order" = fsdep ] || continue
        faulty "drop20-default-$order" 180 10000 --drop-replies 20 -- --order "$order" ;;
      *) fail "unknown scenario $s" ;;
    esac
  done
done
say "ok"
