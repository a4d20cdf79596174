#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NFSv4 replay with live state against the real lab server: converts the committed
# captures traces/v4/v41-tcp.pcap (NFSv4.1, 3 clients: sessions, slots, stateids) and
# traces/v4/v40-tcp.pcap (NFSv4.0, 3 clients: SETCLIENTID, OPEN_CONFIRM, owner seqids)
# with tbbt-convert, and replays each with tools/nfs4-replay against a fresh
# `tbbt-lab start --nfs4` (an empty export, as the captures were made): every
# operation's status must match the trace, nothing may be unsendable (exit 0, and
# "failures": 0, "unsendable": 0 in its JSON summary), and every record must be sent.
# Then the v4.0 trace replayed a second time on the same server with client ids of its
# own (--client-tag) goes through, and a third time with the same client ids must fail
# (the server keeps the second replay's clients and their owners' seqids): the
# comparison is not vacuous.
# Needs root (private lab namespace); fails, never skips, without it or the tools.
#   115-nfs4-replay.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 115-nfs4-replay.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/integration/lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 115-nfs4-replay "$0" "$@"

fail() { echo "FAIL: $*" >&2; exit 1; }
replay=$build/tools/nfs4-replay
convert=$build/src/extract/tbbt-convert
lab=$top/tools/tbbt-lab
for b in "$replay" "$convert"; do
  [ -x "$b" ] || fail "$b not built"
done
command -v jq >/dev/null || fail "jq is not installed"
work=$(mktemp -d)
cleanup() {
  bash "$lab" stop -q >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# json FILE FILTER: one value of the summary.
json() { jq -r "$2" "$1"; }

for cap in v41-tcp v40-tcp; do
  "$convert" -o "$work/$cap.tbbt" "$top/traces/v4/$cap.pcap" >/dev/null 2>"$work/$cap.conv" ||
    fail "$cap: tbbt-convert: $(tail -n 3 "$work/$cap.conv")"
  bash "$lab" start --nfs4 --fsal vfs --size 64M -q >/dev/null || fail "cannot start the lab"
  if ! timeout 60 "$replay" -v "$work/$cap.tbbt" >"$work/$cap.json" 2>"$work/$cap.err"; then
    fail "$cap: nfs4-replay failed: $(head -c 600 "$work/$cap.json") $(tail -n 5 "$work/$cap.err")"
  fi
  [ "$(json "$work/$cap.json" .failures)" = 0 ] || fail "$cap: failures in the summary"
  [ "$(json "$work/$cap.json" .unsendable)" = 0 ] || fail "$cap: unsendable records"
  n=$(json "$work/$cap.json" .v4_compounds)
  sent=$(json "$work/$cap.json" .compounds_sent)
  [ "$n" -gt 100 ] && [ "$n" = "$sent" ] || fail "$cap: $sent of $n COMPOUNDs sent"
  echo "ok: $cap: $sent COMPOUNDs, $(json "$work/$cap.json" .operations) operations" \
    "replayed, 0 failures, 0 unsendable"
done

# The same 4.0 trace again on the export it already changed: with client id strings of
# its own (--client-tag T, new clients for the server) it goes through; a third time with
# the same tag the server takes the clients for the second replay's, whose open owners'
# seqids moved on, and the comparison fails: it is not vacuous.
"$replay" --client-tag again: "$work/v40-tcp.tbbt" >"$work/again.json" 2>"$work/again.err" ||
  fail "a second replay with client ids of its own: $(head -c 400 "$work/again.json")"
echo "ok: a second replay of v40-tcp on the same server with new client ids: no failure"
if "$replay" --client-tag again: "$work/v40-tcp.tbbt" >"$work/third.json" 2>/dev/null; then
  fail "a third replay with the second one's client ids reports no failure"
fi
[ "$(json "$work/third.json" .failures)" -gt 0 ] || fail "third replay: no failures counted"
echo "ok: a third replay with the second one's client ids fails" \
  "($(json "$work/third.json" .failures) failures)"
bash "$lab" stop -q >/dev/null
echo "ok: nfs4-replay of NFSv4.0 and NFSv4.1 captures against the lab server"
