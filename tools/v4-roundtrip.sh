#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# v4-roundtrip.sh: the round trip of an NFSv4 capture (issue 19's acceptance):
#   1. tbbt-convert CAPTURE -> OUT/orig.tbbt and its hierarchy map (--v4-export: a capture
#      of NFSv3 and NFSv4 clients of one export in one tree, docs/tbbt-convert.md);
#   2. a fresh lab serving NFSv4 (tools/tbbt-lab start --nfs4), tbbt-init of the map into
#      its export (the objects that existed before the capture), the server restarted;
#   3. the trace replayed with live state while tcpdump captures it (OUT/replay.pcap):
#      by tbbt-play (default; --order, --timing; with --verify, its report
#      OUT/replay-report.json) or by tools/nfs4-replay (--player nfs4-replay: in trace
#      order, one COMPOUND at a time; its summary OUT/replay.json);
#   4. tbbt-convert of the replay's capture, and tools/v4-opseq.py: the share of the
#      original's operations found in the same per-client sequence, with the same
#      arguments and status (OUT/opseq.json); the lab stopped.
# Prints one line; exit 0 when the replay had no failure and nothing unsendable (and
# tbbt-play's --verify agreed) and the share is at least 99.9 %, 1 otherwise, 2 on usage
# errors.  Needs root and its own lab:
# run it inside tools/lab-ns (TBBT_LAB_DIR set), e.g.
#   tools/lab-ns --dir /var/tmp/tbbt-lab-v4rt -- bash tools/v4-roundtrip.sh \
#       --build build --capture traces/v4/v41-tcp.pcap --out /tmp/rt41 --order fsdep
set -euo pipefail

readonly PROG=v4-roundtrip.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build capture="" out="" player=tbbt-play order=fsdep timing=full v4export=""

usage() {
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  echo "Usage: $PROG --capture PCAP --out DIR [--build DIR] [--player tbbt-play|nfs4-replay]" \
    "[--order conservative|fsdep] [--timing full|timestamp] [--v4-export PSEUDO=PATH]"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift ;;
    --capture) capture=$(readlink -f "$2"); shift ;;
    --out) out=$2; shift ;;
    --player) player=$2; shift ;;
    --order) order=$2; shift ;;
    --timing) timing=$2; shift ;;
    --v4-export) v4export=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "$PROG: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$capture" ] && [ -n "$out" ] || { echo "$PROG: --capture and --out are needed" >&2; exit 2; }
[ -n "${TBBT_LAB_DIR:-}" ] || { echo "$PROG: run it inside tools/lab-ns" >&2; exit 2; }
convert=$build/src/extract/tbbt-convert init=$build/src/aging/tbbt-init
replay=$build/tools/nfs4-replay dump=$build/src/trace/tbbt-dump lab=$top/tools/tbbt-lab
play=$build/src/player/tbbt-play
case "$player" in
  tbbt-play|nfs4-replay) ;;
  *) echo "$PROG: --player is tbbt-play or nfs4-replay" >&2; exit 2 ;;
esac
for b in "$convert" "$init" "$replay" "$dump" "$play"; do
  [ -x "$b" ] || { echo "$PROG: $b is not built" >&2; exit 1; }
done
# shellcheck source=tools/capture-lib.sh
. "$here/capture-lib.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)
trap 'bash "$lab" stop -q >/dev/null 2>&1 || true' EXIT

# --v4-export: the capture's NFSv3 and NFSv4 clients in one tree (the replay's too)
conv_orig=() conv_replay=()
if [ -n "$v4export" ]; then
  conv_orig=(--v4-export "$v4export")
  conv_replay=(--v4-export "/export=$TBBT_LAB_DIR/mnt/export")
fi
"$convert" -q "${conv_orig[@]}" -o "$out/orig.tbbt" "$capture"
bash "$lab" start --nfs4 -q >/dev/null
"$init" --map "$out/orig.tbbt.map" --root "$TBBT_LAB_DIR/mnt/export" \
  --manifest "$out/orig.manifest" -q >/dev/null
bash "$lab" restart -q >/dev/null                  # nothing cached from the image's making
capture_start "$out/replay.pcap" "$out/tcpdump.err" 0 'port 2049'
rc=0
if [ "$player" = nfs4-replay ]; then
  "$replay" "$out/orig.tbbt" >"$out/replay.json" 2>"$out/replay.err" || rc=$?
else
  "$play" --trace "$out/orig.tbbt" --manifest "$out/orig.manifest" --server 127.0.0.1 \
    --export "$TBBT_LAB_DIR/mnt/export" --pseudo /export --order "$order" --timing "$timing" \
    --verify -q --no-progress --report-json "$out/replay-report.json" \
    >"$out/replay.out" 2>"$out/replay.err" || rc=$?
fi
capture_stop
bash "$lab" stop -q >/dev/null
"$convert" -q "${conv_replay[@]}" -o "$out/replay.tbbt" "$out/replay.pcap"
share_rc=0
python3 "$here/v4-opseq.py" --dump "$dump" --json "$out/opseq.json" --show 0 \
  "$out/orig.tbbt" "$out/replay.tbbt" >"$out/opseq.txt" || share_rc=$?
if [ "$player" = nfs4-replay ]; then
  read -r sent fail uns < <(jq -r '"\(.compounds_sent) \(.failures) \(.unsendable)"' \
    "$out/replay.json")
  how="nfs4-replay"
else
  read -r sent fail uns ver < <(jq -r '"\(.ops_completed) \(.replay_failures) \(.skipped_by_reason.unsendable) \(.verify.ok)"' "$out/replay-report.json")
  how="tbbt-play $order/$timing, --verify $([ "$ver" = true ] && echo ok || echo FAILED)"
fi
echo "$PROG: $(basename "$capture"): $sent records replayed ($how), $fail failures," \
  "$uns unsendable; $(cut -d' ' -f2- "$out/opseq.txt")"
[ "$rc" -eq 0 ] && [ "$share_rc" -eq 0 ]
