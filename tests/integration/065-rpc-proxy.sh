#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rpc-proxy (tools/rpc-proxy.c, docs/rpc-proxy.md) in front of a fake RPC server
# (fake-rpc-server.py, answering in arrival order), driven by that script's client mode:
#  1. pass-through over TCP (records batched, split byte by byte, multi-fragment, 1 MiB)
#     and UDP: every XID answered, in order;
#  2. --delay create=300: the CREATE sent first is answered after the GETATTR sent right
#     after it, about 300 ms later (TCP and UDP);
#  3. --drop-replies 3: exactly every third reply is missing (TCP and UDP), and with
#     --drop-proc getattr only GETATTR replies count; --drop-first 2 with --drop-replies 3
#     drops the first two replies, then every third of the others;
#  4. --reset-after 5: the client sees an RST after the fifth call (which reached the
#     server) and can reconnect and continue; --reset-every 3 resets twice in a row;
#  5. each event log is well formed and has the events of its run;
#  6. a bogus record mark (0xffffffff) closes that connection only; UDP garbage is
#     forwarded without harm;
# and each proxy exits 0 on SIGTERM with its summary line.  Needs python3; no root, no
# NFS server; ports are picked by the kernel.  Works with a sanitizer build too.
#   065-rpc-proxy.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 065-rpc-proxy.sh BUILD_DIR" >&2; exit 2; }
fail() { echo "FAIL: 065-rpc-proxy: $*" >&2; exit 1; }
[ -d "$1" ] || fail "build directory '$1' does not exist"
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
proxy=$build/tools/rpc-proxy
helper=$top/tests/integration/fake-rpc-server.py
[ -x "$proxy" ] || fail "$proxy not built (cmake --build $build --target rpc-proxy)"
[ -f "$helper" ] || fail "$helper is missing"
command -v python3 >/dev/null || fail "python3 is not installed"
work=$(mktemp -d)
declare -A pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
py() { python3 "$helper" "$@"; }

# wait_port NAME: waits for $work/NAME.port while the process NAME runs; prints the port.
wait_port() {
  local name=$1 i
  for ((i = 0; i < 100; i++)); do
    if [ -s "$work/$name.port" ]; then cat "$work/$name.port"; return 0; fi
    kill -0 "${pids[$name]}" 2>/dev/null ||
      fail "$name exited early: $(cat "$work/$name.err" 2>/dev/null)"
    sleep 0.05
  done
  fail "$name wrote no port file within 5 s"
}

# start_proxy NAME ARGS...: runs rpc-proxy in front of the fake server; sets $port.
start_proxy() {
  local name=$1; shift
  "$proxy" --listen 127.0.0.1:0 --server "127.0.0.1:$sport" --port-file "$work/$name.port" \
      --pid-file "$work/$name.pid" --log "$work/$name.log" "$@" 2>"$work/$name.err" &
  pids[$name]=$!
  port=$(wait_port "$name")
  [ "$(cat "$work/$name.pid")" = "${pids[$name]}" ] || fail "$name: pid file is wrong"
}

# stop_proxy NAME [SUMMARY-REGEX]: SIGTERM; exit 0 and a summary line are required.
stop_proxy() {
  local name=$1 want=${2:-} rc=0
  kill -0 "${pids[$name]}" 2>/dev/null || fail "$name died: $(cat "$work/$name.err")"
  kill -TERM "${pids[$name]}"
  wait "${pids[$name]}" || rc=$?
  unset "pids[$name]"
  [ "$rc" -eq 0 ] || fail "$name exited $rc after SIGTERM: $(cat "$work/$name.err")"
  local sum='^rpc-proxy: calls [0-9]+, replies [0-9]+, delayed [0-9]+, dropped [0-9]+, '
  sum+='resets [0-9]+'
  grep -Eq "$sum" "$work/$name.err" || fail "$name: no summary line: $(cat "$work/$name.err")"
  [ -z "$want" ] || grep -Eq "$want" "$work/$name.err" ||
    fail "$name: summary does not match '$want': $(cat "$work/$name.err")"
  [ ! -e "$work/$name.pid" ] || fail "$name: pid file left behind"
}

# Usage errors exit 2.
for bad in "--listen 0" "--listen 0 --server nohostport" \
    "--listen 0 --server 127.0.0.1:1 --delay x" \
    "--listen 0 --server 127.0.0.1:1 --udp --reset-after 1" "--bogus"; do
  rc=0; "$proxy" $bad >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "rpc-proxy $bad: exit $rc, expected 2"
done
"$proxy" --help | grep -q -- "--drop-replies" || fail "--help does not list the options"
"$proxy" --version | grep -q "^rpc-proxy (tbbt) " || fail "--version"

# Not through py(): $! must be python itself, not a subshell, for the trap to stop it.
python3 "$helper" serve --in-order --port-file "$work/server.port" \
    --calls-log "$work/server.calls" 2>"$work/server.err" &
pids[server]=$!
sport=$(wait_port server)

# 1, 6. Pass-through, garbage.
start_proxy tcp
py client pass --port "$port" --count 30
py client garbage --port "$port"
py client pass --port "$port" --count 6
stop_proxy tcp 'calls 39, replies 39, delayed 0, dropped 0, resets 0, connections 4, malformed 1'
py checklog "$work/tcp.log" open=4 close=4 call:1=25 reply=39 \
    --match ' close - - - - reason=fragment-too-long-client$'
start_proxy udp --udp
py client pass --udp --port "$port" --count 30
py client garbage --udp --port "$port"
stop_proxy udp 'calls 33, replies 31, .*malformed 2'
py checklog "$work/udp.log" open=2 call:1=31 reply=31

# 2. Delay.
start_proxy delay --delay create=300 --delay 21=100
py client delay --port "$port" --ms 300
stop_proxy delay 'calls 2, replies 2, delayed 1, dropped 0'
py checklog "$work/delay.log" call:8=1 call:1=1 delay:8=1 reply:1=1 reply:8=1 \
    --match ' delay [0-9a-f]{8} 100003 3 8 ms=300$' \
    --match ' reply [0-9a-f]{8} 100003 3 8 held_ms=3[0-9][0-9]\.'
start_proxy delayu --udp --delay create=300
py client delay --udp --port "$port" --ms 300
stop_proxy delayu 'delayed 1'

# 3. Drops.
start_proxy drop --drop-replies 3
py client drop --port "$port" --count 12 --every 3
stop_proxy drop 'calls 12, replies 12, delayed 0, dropped 4'
py checklog "$work/drop.log" drop=4 reply=8
start_proxy dropu --udp --drop-replies 3
py client drop --udp --port "$port" --count 12 --every 3
stop_proxy dropu 'dropped 4'
start_proxy dropp --drop-replies 2 --drop-proc getattr
py client drop --port "$port" --count 12 --every 2 --procs null,getattr,create --counted getattr
stop_proxy dropp 'dropped 2'
py checklog "$work/dropp.log" drop:1=2 reply:0=4
start_proxy dropf --drop-first 2 --drop-replies 3
py client drop --port "$port" --count 12 --every 3 --first 2
stop_proxy dropf 'calls 12, replies 12, delayed 0, dropped 5'


# 4. Resets.
start_proxy reset --reset-after 5
py client reset --port "$port" --after 5 --then 5
stop_proxy reset 'calls 10, replies 9, .*resets 1'
py checklog "$work/reset.log" reset=1 call=10 \
    --match ' reset [0-9a-f]{8} 100003 3 0 after_calls=5$' \
    --match ' close - - - - reason=reset$'
xid5=$(awk '$3 == "call" { n++; if (n == 5) print $4 }' "$work/reset.log")
grep -q "^tcp $xid5 0$" "$work/server.calls" ||
  fail "the fifth call ($xid5) did not reach the server"
start_proxy every --reset-every 3
py client reset --port "$port" --after 3 --rounds 2 --then 2
stop_proxy every 'calls 8, .*resets 2'

echo "065-rpc-proxy: ok"
