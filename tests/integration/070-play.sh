#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play end to end against the real lab server (NFS-Ganesha on an ext4 loop image,
# tools/tbbt-lab in a private state directory), docs/tbbt-play.md:
#  1. capture -> convert -> init -> play: the committed scenario capture (every NFSv3
#     procedure; everything made in the trace) and the committed cut from the middle of a
#     random-operations run (objects that exist at trace start), each replayed
#     over TCP and UDP, in both orders and both timings, and with --clones 3: zero
#     replay failures and a passing --verify, every operation accounted;
#  2. Table 3 sequence 2 through rpc-proxy with slow CREATEs: fsdep finishes in well
#     under half the time of conservative, and the event log shows conservative never
#     issuing a request before every request whose trace reply preceded its call had
#     completed (tests/integration/check-events.py);
#  3. failures through rpc-proxy: dropped replies and a connection reset mid-run: the
#     player finishes, the report accounts for every operation; a proxy killed mid-run
#     (a dead server): exit status 1 within the bound, one error line, and the report.
# Needs root; fails, never skips, without it.  The lab ports must be free.
#   070-play.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 070-play.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 070-play needs root (it starts the lab NFS server)" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/integration
# shellcheck source=lab-test.sh
. "$here/lab-test.sh"
itest_tools "$build"   # play, convert, init, proxy, lab; python3
dir=$(mktemp -d /var/tmp/tbbt-lab-070.XXXXXX)
work=$(mktemp -d)
proxy_pid=""
cleanup() {
  [ -z "$proxy_pid" ] || kill "$proxy_pid" 2>/dev/null || true
  bash "$lab" stop --dir "$dir" -q || true
  mountpoint -q "$dir/mnt" 2>/dev/null || rm -rf "$dir"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "070-play: $*"; }

bash "$lab" start --dir "$dir" --size 512M -q || fail "cannot start the lab server in $dir"
export_dir=$dir/mnt/export

# ------------------------------------------------------------------ traces
"$convert" -o "$work/scn.tbbt" "$top/traces/v3-tcp.pcap" || fail "convert v3-tcp.pcap"

"$convert" --summary-json "$work/mid.json" -o "$work/mid.tbbt" "$top/traces/v3-tcp-mid.pcap" ||
  fail "convert v3-tcp-mid.pcap"
python3 "$here/gen-seq2.py" 20 "$work/seq2.txt"
"$convert" --from-text "$work/seq2.txt" -o "$work/seq2.raw" || fail "seq2 from text"
"$convert" -o "$work/seq2.tbbt" "$work/seq2.raw" || fail "convert seq2"

# Every replay changes its image: each gets a fresh one.
image() {   # image TRACE [init args]: builds a fresh image, prints its manifest
  local trace=$1; shift
  local root
  root=$(mktemp -d "$export_dir/img-XXXXXX")
  local man=$work/$(basename "$root").manifest
  "$init" --map "$trace.map" --root "$root" --manifest "$man" -q "$@" >/dev/null ||
    fail "tbbt-init of $trace"
  echo "$man"
}

# check_report JSON NAME [max failures]: every operation accounted, no replay failure,
# verify ok (when present).
check_report() {
  python3 - "$1" "$2" "${3:-0}" <<'PY' || fail "$2: report $(cat "$1")"
import json, sys
r = json.load(open(sys.argv[1]))
name, maxfail = sys.argv[2], int(sys.argv[3])
ok = r["finished"] and r["replay_failures"] <= maxfail
ok &= r["ops_issued"] == r["ops_completed"] + r["ops_unknown"]
ok &= r["trace_ops"] == r["ops_issued"] + r["ops_skipped"]
if "verify" in r:
    ok &= r["verify"]["ok"]
print(f'070-play: {name}: {r["ops_completed"]} ops in {r["wall_seconds"]:.3f} s, '
      f'{r["replay_failures"]} failures, skipped {r["ops_skipped"]}, '
      f'verify {r.get("verify", {}).get("ok")}')
sys.exit(0 if ok else 1)
PY
}

replay() {   # replay NAME TRACE MANIFEST ARGS...: plays with --verify, checks the report
  local name=$1 trace=$2 man=$3; shift 3
  timeout 300 "$play" --trace "$trace" --manifest "$man" --server 127.0.0.1 \
    --export "$export_dir" --verify -q --report-json "$work/$name.json" "$@" 2>"$work/$name.err" ||
    fail "$name: tbbt-play exit status $?: $(cat "$work/$name.err")"
  check_report "$work/$name.json" "$name" "${MAXFAIL:-0}"
}

# ------------------------------------------------------------------ 1. end to end
bash "$lab" restart --dir "$dir" -q >/dev/null   # nothing cached from the captures
for proto in tcp udp; do
  for order in conservative fsdep; do
    for timing in full timestamp; do
      [ "$proto" = udp ] && [ "$timing" = timestamp ] && continue
      for t in scn mid; do
        man=$(image "$work/$t.tbbt")
        replay "$t-$proto-$order-$timing" "$work/$t.tbbt" "$man" --proto "$proto" \
          --order "$order" --timing "$timing"
      done
    done
  done
done
for t in scn mid; do
  man=$(image "$work/$t.tbbt" --clones 3)
  replay "$t-clones3-fsdep" "$work/$t.tbbt" "$man" --clones 3 --order fsdep
  man=$(image "$work/$t.tbbt" --clones 3)
  replay "$t-clones3-conservative" "$work/$t.tbbt" "$man" --clones 3 --connections 2
done
# Synthetic objects all merged into the map's directories (tbbt-init --merge 1): none
# may land in a directory the trace removes (an RMDIR would fail NOTEMPTY).
man=$(image "$work/mid.tbbt" --fill 0.1 --merge 1 --no-fragment-free)
bash "$lab" restart --dir "$dir" -q >/dev/null
replay "mid-fill-merge" "$work/mid.tbbt" "$man" --order fsdep
man=$(image "$work/mid.tbbt")
replay "mid-recv-batch" "$work/mid.tbbt" "$man" --order fsdep --connections 2 \
  --max-outstanding 16 --batch 8 --recv-batch 8
python3 - "$work/mid-tcp-fsdep-timestamp.json" <<'PY' || fail "timestamp: no dispatch error"
import json, sys
r = json.load(open(sys.argv[1]))
d = r["dispatch_error_us"]
print(f'070-play: timestamp dispatch error p50 {d["p50"]} us, p99 {d["p99"]} us')
sys.exit(0 if d["p50"] is not None else 1)
PY

# ------------------------------------------------------------------ 2. fsdep vs conservative
start_proxy() {   # start_proxy ARGS...: rpc-proxy in front of the NFS port
  rm -f "$work/proxy.port"
  "$proxy" --listen 0 --server 127.0.0.1:2049 --port-file "$work/proxy.port" \
    --log "$work/proxy.log" "$@" 2>"$work/proxy.err" &
  proxy_pid=$!
  for _ in $(seq 50); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
  [ -s "$work/proxy.port" ] || fail "rpc-proxy did not start: $(cat "$work/proxy.err")"
  pport=$(cat "$work/proxy.port")
}
stop_proxy() { kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; proxy_pid=""; }

start_proxy --delay create=40
for order in conservative fsdep; do
  man=$(image "$work/seq2.tbbt")
  replay "seq2-$order" "$work/seq2.tbbt" "$man" --order "$order" --nfs-port "$pport" \
    --mount-port 20048 --event-log "$work/seq2-$order.events"
done
stop_proxy
python3 "$here/check-events.py" "$work/seq2-conservative.events" ||
  fail "conservative order broken (event log)"
python3 - "$work/seq2-conservative.json" "$work/seq2-fsdep.json" <<'PY' ||
import json, sys
c, f = (json.load(open(p))["wall_seconds"] for p in sys.argv[1:3])
print(f"070-play: Table 3 sequence 2, CREATE +40 ms: conservative {c:.3f} s, fsdep {f:.3f} s")
sys.exit(0 if f < 0.5 * c else 1)
PY
  fail "fsdep is not measurably faster than conservative"

# ------------------------------------------------------------------ 3. failures
# (LOOKUP replies are never dropped: the start-up look-ups use them and give up on loss)
start_proxy --drop-replies 5 --drop-proc getattr --drop-proc write --drop-proc read \
  --drop-proc create --drop-proc setattr --reset-after 400
man=$(image "$work/mid.tbbt")
rc=0
timeout 300 "$play" --trace "$work/mid.tbbt" --manifest "$man" --server 127.0.0.1 \
  --export "$export_dir" -q --report-json "$work/lossy.json" --order fsdep \
  --nfs-port "$pport" --mount-port 20048 --timeout-ms 300 --retrans 1 || rc=$?
stop_proxy
# Exit status 1 exactly when some operations' outcome is unknown (docs/tbbt-play.md).
python3 - "$work/lossy.json" "$rc" <<'PY' || fail "lossy replay, exit $rc: $(cat "$work/lossy.json")"
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["finished"] and r["reconnects"] >= 1 and r["timeouts"] >= 1
ok &= int(sys.argv[2]) == (1 if r["ops_unknown"] else 0)
ok &= r["ops_issued"] == r["ops_completed"] + r["ops_unknown"]
ok &= r["trace_ops"] == r["ops_issued"] + r["ops_skipped"]
print(f'070-play: lossy: issued {r["ops_issued"]} = completed {r["ops_completed"]} + unknown '
      f'{r["ops_unknown"]}; timeouts {r["timeouts"]}, retries {r["retries"]}, reconnects '
      f'{r["reconnects"]}, failures {r["replay_failures"]}')
sys.exit(0 if ok else 1)
PY

# A server that dies mid-run: the proxy is killed while calls are slow.
start_proxy --delay all=20
man=$(image "$work/mid.tbbt")
( sleep 2; kill -9 "$proxy_pid" ) &
killer=$!
set +e
timeout 60 "$play" --trace "$work/mid.tbbt" --manifest "$man" --server 127.0.0.1 \
  --export "$export_dir" -q --report-json "$work/dead.json" --nfs-port "$pport" \
  --mount-port 20048 --dead-after 3 --max-outstanding 1 2>"$work/dead.err"
rc=$?
set -e
wait "$killer" 2>/dev/null || true
proxy_pid=""
[ "$rc" -eq 1 ] || fail "dead server: exit status $rc (want 1): $(cat "$work/dead.err")"
[ "$(wc -l <"$work/dead.err")" -ge 1 ] && grep -q "unreachable\|did not answer" "$work/dead.err" ||
  fail "dead server: no clear error: $(cat "$work/dead.err")"
python3 - "$work/dead.json" <<'PY' || fail "dead server: report $(cat "$work/dead.json")"
import json, sys
r = json.load(open(sys.argv[1]))
print(f'070-play: dead server: finished {r["finished"]}, completed {r["ops_completed"]}, '
      f'error "{r["error"]}"')
sys.exit(0 if not r["finished"] and r["ops_completed"] > 0 else 1)
PY
say "all checks passed"
