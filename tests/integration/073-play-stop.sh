#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play stops cleanly, accounts for every request and says by its exit status how a
# run went (docs/tbbt-play.md, "Stopping" and "Exit status"), against the real lab server
# (NFS-Ganesha, tools/tbbt-lab, started here inside a private network namespace,
# tools/lab-ns).  A metadata trace of bench/gen-play-trace.py (2,000 calls/s, 10 s) is
# converted, built with tbbt-init and replayed in timestamp timing:
#  1. SIGTERM and SIGINT in the middle of the replay, in both orders: exit status 143 or
#     130 within the stop grace, the JSON report, the CSV time series and the text report
#     written, finished false, stop_reason "signal SIG...", the accounting holding
#     (trace_ops = issued + skipped, issued = completed + unknown), the requests not sent
#     counted as skipped "stopped";
#  2. SIGTERM with the server stopped (kill -STOP ganesha.nfsd) mid-run: the calls out
#     get the grace (1 s), then count as unknown; a second signal during the grace exits
#     at once with the first one's status;
#  3. SIGTERM during start-up (the MOUNT call waits for the stopped server): exit 143
#     at once and an empty report with finished false; SIGTERM during --verify (its
#     READDIRPLUS held by tools/rpc-proxy): exit 143 at once, the replay's report
#     (finished) with stop_reason and no verify result;
#  4. --dead-after with the server stopped mid-run: exit status 1, stop_reason
#     "server dead", the accounting holding;
#  5. exit status 1 after a run that finished with operations of unknown outcome
#     (GETATTR replies dropped by tools/rpc-proxy, no retransmission), and after a
#     --verify that found a mismatch (a stray file in the image).
# Needs root; fails, never skips, without it.
#   073-play-stop.sh BUILD_DIR
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: 073-play-stop.sh BUILD_DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 073-play-stop "$0" "$@"

build=$(cd "$1" && pwd)
itest_tools "$build"
work=$(mktemp -d)
proxy_pid="" gpid=""
cleanup() {
  [ -z "$gpid" ] || kill -CONT "$gpid" 2>/dev/null || true
  [ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true
  bash "$lab" stop -q || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "073-play-stop: $*"; }

bash "$lab" start --size 256M -q || fail "cannot start the lab server in $TBBT_LAB_DIR"
lab_env=$(bash "$lab" env) || fail "tbbt-lab env failed"
eval "$lab_env"
E=$TBBT_LAB_EXPORT
server_pid() { head -c 32 "$TBBT_LAB_DIR/ganesha.pid" | tr -dc 0-9; }
server_stop() { gpid=$(server_pid); [ -n "$gpid" ] || fail "no ganesha.nfsd pid"; kill -STOP "$gpid"; }
server_cont() { kill -CONT "$gpid"; gpid=""; }

# ------------------------------------------------------------------ trace and image
mk_trace() {   # mk_trace NAME gen-play-trace ARGS...: NAME.tbbt and an image, NAME.man
  local name=$1; shift
  python3 "$top/bench/gen-play-trace.py" -o "$work/$name.txt" "$@" 2>/dev/null ||
    fail "gen-play-trace $name"
  "$convert" -q --from-text "$work/$name.txt" -o "$work/$name.raw" || fail "convert $name"
  "$convert" -q -o "$work/$name.tbbt" "$work/$name.raw" || fail "convert $name"
  mkdir "$E/$name"
  "$init" -q --no-progress --map "$work/$name.tbbt.map" --root "$E/$name" \
    --manifest "$work/$name.man" >/dev/null || fail "tbbt-init $name"
}
# The meta mix only reads (GETATTR, LOOKUP, READ, ACCESS, READDIRPLUS): one image serves
# every replay of it.
mk_trace meta --mix meta --ops 20000 --files 200 --dirs 10 --rate 2000
mk_trace small --mix meta --ops 600 --files 30 --dirs 3
mk_trace attrs --mix getattr --ops 300 --files 20 --dirs 2   # no READDIRPLUS
bash "$lab" restart -q >/dev/null || fail "lab restart"   # nothing cached from tbbt-init

start_play() {   # start_play NAME TRACE ARGS...: the player in the background, pid in ppid
  local name=$1 trace=$2; shift 2
  rm -f "$work/$name.json" "$work/$name.csv"
  # A background job of a script ignores SIGINT; the player honours that, so give it
  # the default disposition back.
  env --default-signal=INT "$play" --trace "$work/$trace.tbbt" --manifest "$work/$trace.man" \
    --server 127.0.0.1 --export "$E" --no-progress --report-json "$work/$name.json" \
    --timeseries "$work/$name.csv" "$@" >"$work/$name.txt" 2>"$work/$name.err" &
  ppid=$!
}
now_ms() { date +%s%3N; }
wait_play() {   # wait_play NAME: rc and ms (since $t_sig) of the player's exit
  set +e
  wait "$ppid"
  rc=$?
  set -e
  ms=$(( $(now_ms) - t_sig ))
}

# check NAME WHAT PYTHON-EXPR: the report NAME.json (as r) must satisfy the expression,
# and account for every request.
check() {
  python3 - "$work/$1.json" "$1" "$3" <<'PY' || fail "$1: $2: $(cat "$work/$1.json" 2>&1)"
import json, sys
r = json.load(open(sys.argv[1]))
name, expr = sys.argv[2], sys.argv[3]
acc = (r["trace_ops"] == r["ops_issued"] + r["ops_skipped"] and
       r["ops_issued"] == r["ops_completed"] + r["ops_unknown"] and
       r["ops_skipped"] == sum(r["skipped_by_reason"].values()) - r["skipped_by_reason"]["filtered"])
ok = acc and eval(expr)
print(f'073-play-stop: {name}: finished {r["finished"]}, stop_reason {r.get("stop_reason")!r}, '
      f'trace {r["trace_ops"]} = issued {r["ops_issued"]} + skipped {r["ops_skipped"]} '
      f'(stopped {r["skipped_by_reason"].get("stopped")}); issued = completed '
      f'{r["ops_completed"]} + unknown {r["ops_unknown"]}: {"holds" if acc else "BROKEN"}')
sys.exit(0 if ok else 1)
PY
}
check_csv() {   # check_csv NAME: the time series is on disk with at least one row
  [ "$(head -n 1 "$work/$1.csv" 2>/dev/null | cut -d, -f1-3)" = "second,issued,completed" ] &&
    [ "$(wc -l <"$work/$1.csv")" -ge 2 ] || fail "$1: no time series"
}

# ------------------------------------------------------------------ 1. signals mid-run
for run in "conservative TERM 143" "fsdep INT 130" "fsdep TERM 143" "conservative INT 130"; do
  read -r order sig want <<<"$run"
  name=sig-$order-$sig
  start_play "$name" meta --order "$order" --timing timestamp
  sleep 2.5
  t_sig=$(now_ms)
  kill -"$sig" "$ppid"
  wait_play
  [ "$rc" -eq "$want" ] || fail "$name: exit status $rc, want $want: $(cat "$work/$name.err")"
  [ "$ms" -lt 3000 ] || fail "$name: took $ms ms to stop"
  check "$name" "stopped" "not r['finished'] and r['stop_reason'] == 'signal SIG$sig' and \
r['ops_completed'] > 1000 and r['skipped_by_reason']['stopped'] > 0 and r['wall_seconds'] < 6"
  check_csv "$name"
  grep -q "stopped early (signal SIG$sig)" "$work/$name.txt" || fail "$name: no text report"
  say "$name: exit $rc $ms ms after the signal"
done

# ------------------------------------------------------------------ 2. the grace, a second signal
start_play grace meta --order fsdep --timing timestamp
sleep 1.5
server_stop
sleep 0.5
t_sig=$(now_ms)
kill -TERM "$ppid"
wait_play
server_cont
[ "$rc" -eq 143 ] || fail "grace: exit status $rc, want 143: $(cat "$work/grace.err")"
[ "$ms" -ge 900 ] && [ "$ms" -lt 3000 ] || fail "grace: stopped $ms ms after the signal (1 s grace)"
check grace "calls out unknown" "not r['finished'] and r['ops_unknown'] > 0"
say "grace: exit $rc $ms ms after SIGTERM with the server stopped"

start_play twice meta --order conservative --timing timestamp
sleep 1.5
server_stop
sleep 0.5
kill -TERM "$ppid"
sleep 0.2
t_sig=$(now_ms)
kill -INT "$ppid"
wait_play
server_cont
[ "$rc" -eq 143 ] || fail "second signal: exit status $rc, want 143: $(cat "$work/twice.err")"
[ "$ms" -lt 600 ] || fail "second signal: exited $ms ms after it, not at once"
say "second signal: exit $rc $ms ms after it"

# ------------------------------------------------------------------ 3. start-up
server_stop
start_play startup meta --order fsdep
sleep 1
t_sig=$(now_ms)
kill -TERM "$ppid"
wait_play
server_cont
[ "$rc" -eq 143 ] || fail "start-up: exit status $rc, want 143: $(cat "$work/startup.err")"
[ "$ms" -lt 1500 ] || fail "start-up: took $ms ms to stop"
check startup "empty report" "not r['finished'] and r['stop_reason'] == 'signal SIGTERM' and \
r['trace_ops'] == 0"
grep -q "stopped early (signal SIGTERM)" "$work/startup.txt" || fail "start-up: no text report"
say "start-up: exit $rc $ms ms after SIGTERM"

start_proxy() {   # start_proxy ARGS...: rpc-proxy in front of the NFS port, its port in pport
  rm -f "$work/proxy.port" "$work/proxy.log"
  "$proxy" --listen 0 --server 127.0.0.1:2049 --port-file "$work/proxy.port" \
    --log "$work/proxy.log" "$@" 2>"$work/proxy.err" &
  proxy_pid=$!
  for _ in $(seq 50); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
  [ -s "$work/proxy.port" ] || fail "rpc-proxy did not start: $(cat "$work/proxy.err")"
  pport=$(cat "$work/proxy.port")
}
stop_proxy() { kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true; proxy_pid=""; }

start_proxy --delay readdirplus=5000
start_play inverify attrs --order fsdep --verify --nfs-port "$pport" --mount-port 20048
for _ in $(seq 100); do   # until --verify's first READDIRPLUS (NFSv3 procedure 17) is out
  grep -q " call [0-9a-f]* 100003 3 17" "$work/proxy.log" && break
  sleep 0.1
done
t_sig=$(now_ms)
kill -TERM "$ppid"
wait_play
stop_proxy
[ "$rc" -eq 143 ] || fail "--verify: exit status $rc, want 143: $(cat "$work/inverify.err")"
[ "$ms" -lt 1500 ] || fail "--verify: took $ms ms to stop"
check inverify "replay report" "r['finished'] and r['stop_reason'] == 'signal SIGTERM' and \
'verify' not in r and r['ops_unknown'] == 0"
say "--verify: exit $rc $ms ms after SIGTERM"

# ------------------------------------------------------------------ 4. --dead-after
start_play dead meta --order fsdep --timing timestamp --dead-after 2
sleep 1.5
server_stop
t_sig=$(now_ms)
wait_play
server_cont
[ "$rc" -eq 1 ] || fail "dead server: exit status $rc, want 1: $(cat "$work/dead.err")"
grep -q "did not answer" "$work/dead.err" || fail "dead server: no clear error: $(cat "$work/dead.err")"
check dead "server dead" "not r['finished'] and r['stop_reason'] == 'server dead' and \
r['ops_unknown'] > 0"
check_csv dead
say "dead server: exit $rc $ms ms after the server stopped"

# ------------------------------------------------------------------ 5. exit status of a finished run
start_proxy --drop-replies 4 --drop-proc getattr
start_play lossy small --order fsdep --nfs-port "$pport" --mount-port 20048 --timeout-ms 200 \
  --retrans 0
t_sig=$(now_ms)
wait_play
stop_proxy
check lossy "unknown outcomes" "r['finished'] and r['ops_unknown'] > 0"
[ "$rc" -eq 1 ] || fail "unknown outcomes: exit status $rc, want 1"
say "unknown outcomes: exit $rc"

touch "$E/small/stray"
start_play verify small --order fsdep --verify
t_sig=$(now_ms)
wait_play
check verify "verify failed" "r['finished'] and r['ops_unknown'] == 0 and not r['verify']['ok']"
[ "$rc" -eq 1 ] || fail "--verify mismatch: exit status $rc, want 1"
rm -f "$E/small/stray"
start_play verify-ok small --order fsdep --verify
t_sig=$(now_ms)
wait_play
check verify-ok "verify ok" "r['finished'] and r['ops_unknown'] == 0 and r['verify']['ok']"
[ "$rc" -eq 0 ] || fail "clean run: exit status $rc, want 0: $(cat "$work/verify-ok.err")"
say "--verify mismatch: exit 1; clean run: exit 0"
say "all checks passed"
