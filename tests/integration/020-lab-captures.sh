#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Against the real lab server: starts NFS-Ganesha (tools/tbbt-lab), records fresh
# captures of real client traffic (libnfs over TCP, the project's libtirpc client over
# UDP, and a -s 256 capture) with tools/make-captures.sh, converts each and checks the
# per-procedure pair counts against tshark.  Needs root; fails loudly without the server.
#   020-lab-captures.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (loop devices, tcpdump)" >&2; exit 1; }
work=$(mktemp -d)
export TBBT_LAB_DIR=$work/lab
trap 'bash "$top/tools/tbbt-lab" stop --dir "$TBBT_LAB_DIR" -q >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

bash "$top/tools/make-captures.sh" --build "$build" --out "$work/caps" >"$work/make.log" 2>&1 \
  || { echo "FAIL: make-captures.sh failed:"; tail -n 30 "$work/make.log"; exit 1; }
n=0
for cap in "$work"/caps/*.pcap "$work"/caps/*.pcapng; do
  [ -e "$cap" ] || continue
  "$build/src/extract/tbbt-convert" -q --summary-json "$cap.json" -o "$cap.tbbt" "$cap"
  python3 "$top/tests/integration/compare-tshark.py" "$cap" "$cap.json"
  n=$((n + 1))
done
for want in v3-tcp.pcap v3-udp.pcap v3-tcp-s256.pcap; do
  [ -e "$work/caps/$want" ] || { echo "FAIL: make-captures.sh made no $want"; exit 1; }
done
echo "ok: $n fresh lab captures agree with tshark"
