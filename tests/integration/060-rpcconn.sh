#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The player's RPC transport (src/player/rpcconn.c, docs/tbbt-play.md "Transport") against
# the real lab server (NFS-Ganesha, tools/tbbt-lab) started in a private state directory:
#  1. MOUNT v3 MNT of the export (ports from rpcbind GETPORT, over TCP and over UDP) and
#     GETATTR of the root handle: a directory;
#  2. pipelined NULL calls for a second each: TCP with 2 connections, UDP, TCP with a
#     sending and a receiving thread (--split) and batched wake-ups (--lowat), and
#     pipelined GETATTR of the root: every call answered, no errors;
#  3. MNT of a path that is not exported, and a port nobody listens on: exit status 1
#     with one line on stderr.
# Needs root (the lab server); fails, never skips, without it.  The lab ports (111,
# 2049, 20048) must be free: another running lab server makes the test fail.
#   060-rpcconn.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 060-rpcconn.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 060-rpcconn needs root (it starts the lab NFS server)" >&2
  exit 1
fi
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
rpcnull=$build/bench/rpc-null
lab=$top/tools/tbbt-lab
[ -x "$rpcnull" ] || { echo "FAIL: $rpcnull not built" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/tbbt-lab-060.XXXXXX)
work=$(mktemp -d)
cleanup() {
  bash "$lab" stop --dir "$dir" -q || true
  mountpoint -q "$dir/mnt" 2>/dev/null || rm -rf "$dir"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bash "$lab" start --dir "$dir" --size 256M -q || fail "cannot start the lab server in $dir"
export_dir=$dir/mnt/export

# 1. MNT + GETATTR of the root over both transports.
for t in tcp udp; do
  "$rpcnull" --transport "$t" --mount "$export_dir" -t 0 >"$work/mount.$t" ||
    fail "MNT + GETATTR over $t"
  grep -q "^mount: $export_dir handle ([0-9]* bytes) [0-9a-f]*$" "$work/mount.$t" ||
    fail "no root handle over $t: $(cat "$work/mount.$t")"
  grep -q "^getattr: root type DIR " "$work/mount.$t" ||
    fail "GETATTR of the root over $t: $(cat "$work/mount.$t")"
done
cmp -s <(head -1 "$work/mount.tcp") <(head -1 "$work/mount.udp") ||
  fail "TCP and UDP MNT returned different root handles"

# 2. Pipelined load; every run must answer every call.
check_run() {   # check_run NAME ARGS...: runs rpc-null --json, checks calls and errors
  local name=$1; shift
  "$rpcnull" --json -t 1 "$@" >"$work/$name.json" || fail "$name: rpc-null failed"
  python3 - "$work/$name.json" "$name" <<'PY' || fail "$name: $(cat "$work/$name.json")"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
ok = r["calls"] >= 1000 and r["errors"] == 0 and r["timeouts"] <= r["calls"] // 100
print(f'{sys.argv[2]}: {r["calls_per_s"]:.0f} calls/s, {r["cpu_us_per_call"]:.2f} us/call')
sys.exit(0 if ok else 1)
PY
}
check_run tcp-null -c 2 -k 8
check_run udp-null --transport udp -c 1 -k 4
check_run split-null --split -c 2 -k 16 -b 8 --lowat
check_run tcp-getattr --proc getattr --mount "$export_dir" -c 1 -k 8

# 3. Failures are reported, not hung.
if "$rpcnull" --mount /not/exported -t 0 >/dev/null 2>"$work/err"; then
  fail "MNT of a path that is not exported succeeded"
fi
grep -q "MNT /not/exported" "$work/err" || fail "MNT error message: $(cat "$work/err")"
if "$rpcnull" --port 9 -t 1 >/dev/null 2>"$work/err"; then
  fail "a port without a server succeeded"
fi
grep -q "cannot connect" "$work/err" || fail "connect error message: $(cat "$work/err")"
echo "060-rpcconn: ok"
