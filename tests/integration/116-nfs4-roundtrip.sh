#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NFSv4 round trip (tools/v4-roundtrip.sh) on the committed captures against the
# real lab server: convert, tbbt-init of the hierarchy map into a fresh --nfs4 lab's
# export, replay under tcpdump, convert the replay, compare the per-object operation
# sequences (tools/v4-opseq.py).  Replayed by tbbt-play in fsdep order at full speed
# (traces/v4/v41-tcp.pcap: NFSv4.1, 3 clients, everything made during the capture;
# traces/v4/v40-libnfs.pcap: libnfs's NFSv4.0, which lists directories that existed
# before the capture, which only the map's READDIR entries bring into the image), in
# conservative order with timestamp timing (traces/v4/v40-tcp.pcap: NFSv4.0 with
# OPEN_CONFIRM and owner seqids), and by tools/nfs4-replay (v41-tcp); and the capture of
# NFSv3 and NFSv4.1 clients of one export (traces/v3v4-mixed.pcap, converted with
# --v4-export into one tree) by tbbt-play, fsdep at full speed: 0 failures,
# 0 unsendable, --verify ok and every operation in the same sequence with the same
# arguments and status.
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

# run NAME CAPTURE ARGS...: one round trip, every operation in sequence
run() {
  local name=$1 cap=$2
  shift 2
  timeout 180 bash "$top/tools/v4-roundtrip.sh" --build "$build" \
    --capture "$top/traces/$cap.pcap" --out "$work/$name" "$@" >"$work/$name.out" 2>&1 ||
    fail "$name: $(tail -n 5 "$work/$name.out")"
  jq -e '.share == 1 and .ops_original > 50' "$work/$name/opseq.json" >/dev/null ||
    fail "$name: not every operation in sequence: $(cat "$work/$name/opseq.json")"
  echo "ok: $(tail -n 1 "$work/$name.out")"
}
run v41-fsdep v4/v41-tcp --order fsdep --timing full
run libnfs-fsdep v4/v40-libnfs --order fsdep --timing full
run v40-cons v4/v40-tcp --order conservative --timing timestamp
run v41-nfs4-replay v4/v41-tcp --player nfs4-replay
run mixed-fsdep v3v4-mixed --order fsdep --timing full \
  --v4-export /export=/var/tmp/tbbt-lab-v4h/mnt/export
