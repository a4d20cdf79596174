#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The round trip on real-client captures (issue 15; docs/tbbt-compare.md): libnfs clients
# (tools/nfs-workload via tools/capture-workload.sh) run three workloads against the lab
# server while tcpdump captures them, and each capture goes through tools/roundtrip.sh:
# tbbt-convert, a fresh lab, tbbt-init, tbbt-play while tcpdump captures the replay,
# tbbt-convert of the replay, tbbt-compare, the end state against the original's.
#   mixed: several users, 40 % of the clients mounting a subdirectory of the export;
#   mail:  per-user mailboxes read, truncated, rewritten, committed, hard-linked as lock
#          files and removed by several clients at once;
#   home:  home-directory work of several users, who chown files to their supplementary
#          groups (AUTH_SYS gids), captured on port 2049 only (no MOUNT traffic: the
#          image root comes from the handles' ancestry).
# Replays, each checked by tools/roundtrip-check.py --expect (no replay failure, no
# reply mismatch, no status or real reply difference, >= 99.9 % identical, the end state
# equal on every traced path; timestamp: the player's own wire timing error p99 <= 1 ms, its
# median in fsdep order, roundtrip-check.py):
# conservative and fsdep at full speed for each; mail in timestamp timing in both orders
# and in conservative order with a 1 ms causal slack (--causal-slack); mail in fsdep
# order with a lookahead window of 2 (racy replies found from the trace alone);
# mixed with an image built through NFS (tbbt-init --server) and --verify; and mail right
# after a restart into a 20-second grace period, where the player must report the grace
# period and wait it out (grace.state yes, waited > 0) with no failure.
# Needs root (lab, tcpdump, tshark); fails, never skips, without it.  About 4 minutes.
#   098-roundtrip.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 098-roundtrip.sh BUILD_DIR" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: 098-roundtrip needs root (it starts the lab NFS server and tcpdump)" >&2
  exit 1
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 098-roundtrip "$0" "$@"   # its own network: no other lab in the way
build=$(cd "$1" && pwd)
for t in python3 tcpdump tshark; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed" >&2; exit 1; }
done
[ -x "$build/tools/nfs-workload" ] || { echo "FAIL: $build/tools/nfs-workload not built" >&2; exit 1; }
export TBBT_LAB_DIR
TBBT_LAB_DIR=$(mktemp -d /var/tmp/tbbt-lab-098.XXXXXX)
work=$(mktemp -d /var/tmp/tbbt-098.XXXXXX)
cleanup() {
  bash "$top/tools/tbbt-lab" stop -q >/dev/null 2>&1 || true
  # Kept when the image is still mounted or on a loop device (stop failed).
  mountpoint -q "$TBBT_LAB_DIR/mnt" 2>/dev/null ||
    [ -n "$(losetup -n -j "$TBBT_LAB_DIR/image.img")" ] || rm -rf "$TBBT_LAB_DIR"
  if [ "${keep:-0}" -eq 0 ]; then rm -rf "$work"; else echo "098-roundtrip: results kept in $work" >&2; fi
}
trap cleanup EXIT
fail() { keep=1; echo "FAIL: $*" >&2; exit 1; }
say() { echo "098-roundtrip: $*"; }

# capture NAME ARGS...: a capture of tools/nfs-workload on a fresh lab.
capture() {
  local name=$1; shift
  bash "$top/tools/capture-workload.sh" --start-lab --build "$build" --out "$work/cap-$name" \
    "$@" >"$work/cap-$name.log" 2>&1 || fail "capture $name: $(tail -n 3 "$work/cap-$name.log")"
  say "captured $name: $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["capture"];
print(c.get("nfs_calls"), "NFS calls in", round(c.get("duration_s", 0), 2), "s")' "$work/cap-$name/workload.json")"
}

# rt CAPTURE TAG ROUNDTRIP-ARGS... [-- PLAY-ARGS]: one round trip, checked.
rt() {
  local cap=$1 tag=$2; shift 2
  local out=$work/rt-$cap-$tag
  bash "$top/tools/roundtrip.sh" --capture "$work/cap-$cap" --out "$out" --build "$build" \
    --expect "$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; fail "round trip $cap $tag"; }
  say "$(grep -v '^  tree' "$out.log" | tail -n 1)"
}

capture mixed --mix mixed --clients 6 --ops 400 --users 8 --subdir-mounts 0.4 --seed 11
capture mail --mix mail --clients 5 --ops 600 --users 6 --seed 12
capture home --mix home --clients 5 --ops 400 --users 6 --seed 13 --port-only

for cap in mixed mail home; do
  rt "$cap" cons --order conservative
  rt "$cap" fsdep --order fsdep
done
# A window of 2: the reader is never far ahead, so a request is often admitted after the
# request it raced in the trace has completed; such replies are still not checked
# (5 reply mismatches before engine-racy.c on one capture).
rt mail narrow --order fsdep -- --window 2
rt mail cons-ts --order conservative --timing timestamp
rt mail fsdep-ts --order fsdep --timing timestamp
rt mixed server --init server --order fsdep -- --verify
# Conservative order with a causal slack: requests of other clients overlapping within it
# go in fsdep's conflict order (the mail capture's racing lock files), no fidelity lost.
rt mail cons-slack --order conservative -- --causal-slack 1000

# Right after a restart into a grace period: the player says so, waits, and the replay is
# as faithful as any.
rt mail grace --grace 20 --order conservative
python3 - "$work/rt-mail-grace/summary.json" <<'PY' || fail "grace: not reported"
import json, sys
s = json.load(open(sys.argv[1]))
g = s["grace"]
assert g and g["state"] == "yes" and g["waited_seconds"] > 1, g
print("098-roundtrip: grace: state %s, waited %.1f s, jukebox %s" % (g["state"], g["waited_seconds"], s["jukebox"]))
PY

# The mixed capture has subdirectory mounts; the home capture has no MOUNT traffic.
# Make sure the captures had what they claim.
python3 - "$work" <<'PY' || fail "the captures lack what the test needs"
import json, sys
w = sys.argv[1]
conv = json.load(open(f"{w}/rt-mixed-cons/conv.json"))
assert conv.get("mounts_placed", 0) >= 2, ("subdirectory mounts", conv.get("mounts_placed"))
conv = json.load(open(f"{w}/rt-home-cons/conv.json"))
assert conv.get("root_inferred") in (1, True), ("root inferred", conv.get("root_inferred"))
PY
say "ok"
