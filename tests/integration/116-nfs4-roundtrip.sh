#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NFSv4 round trip (tools/v4-roundtrip.sh) on two committed captures against the real
# lab server: convert, tbbt-init of the hierarchy map into a fresh --nfs4 lab's export,
# replay with tools/nfs4-replay under tcpdump, convert the replay, compare the
# per-client operation sequences (tools/v4-opseq.py).  traces/v4/v41-tcp.pcap (NFSv4.1,
# 3 clients, everything made during the capture) and traces/v4/v40-libnfs.pcap (libnfs's
# NFSv4.0: it lists directories that existed before the capture, which only the map's
# READDIR entries bring into the image) must replay with 0 failures, 0 unsendable and
# every operation in the same sequence with the same arguments and status.
# Needs root (private lab namespace); fails, never skips, without it or the tools.
#   116-nfs4-roundtrip.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 116-nfs4-roundtrip.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/integration/lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 116-nfs4-roundtrip "$0" "$@"

fail() { echo "FAIL: $*" >&2; exit 1; }
command -v tcpdump >/dev/null || fail "tcpdump is not installed"
[ -x "$build/tools/nfs4-replay" ] || fail "$build/tools/nfs4-replay not built"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for cap in v41-tcp v40-libnfs; do
  timeout 180 bash "$top/tools/v4-roundtrip.sh" --build "$build" \
    --capture "$top/traces/v4/$cap.pcap" --out "$work/$cap" >"$work/$cap.out" 2>&1 ||
    fail "$cap: $(tail -n 5 "$work/$cap.out")"
  jq -e '.share == 1 and .ops_original > 50' "$work/$cap/opseq.json" >/dev/null ||
    fail "$cap: not every operation in sequence: $(cat "$work/$cap/opseq.json")"
  echo "ok: $(tail -n 1 "$work/$cap.out")"
done
