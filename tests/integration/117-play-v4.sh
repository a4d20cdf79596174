#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play replays NFSv4 traces (engine4) against the real lab server (NFS-Ganesha
# serving NFSv4.0-4.2, VFS on ext4):
#  1. every committed NFSv4 capture (traces/v4/: 4.0, 4.1, 4.2, libnfs's 4.0) converted,
#     its map built by tbbt-init in a subdirectory of the export (the traced export
#     "/export" is redirected to it), replayed in fsdep order at full speed and in
#     conservative order with timestamp timing: no replay failure, no operation of
#     unknown outcome, nothing skipped, every record completed, --verify ok;
#     The mixed capture (NFSv3 clients in v3mix/, NFSv4.1 clients in v4mix/ of one
#     export), converted with --v4-export into one tree, likewise;
#  1c. lost calls: the 4.1 capture with its OPEN by handle, the REMOVE of a directory's
#     last file or a RECLAIM_COMPLETE cut out (editcap), the 4.0 one with an OPEN_CONFIRM
#     cut out: one corrective COMPOUND each from tbbt-convert, and the replay is clean in
#     both orders (not without them);
#  2. the grace period: a lab restarted with a 4 s grace period (and lease), the replay
#     started at once (--no-grace-wait): the OPENs answered NFS4ERR_GRACE are retried
#     (counted) and the replay ends with no failure;
#  3. the lease across idle gaps: the 4.1 trace with 8 s of silence in the middle,
#     replayed with timestamp timing against the 4 s lease: the player renews every
#     client's lease (RENEW / lone SEQUENCE) and the replay ends with no failure; with
#     renewal off (--v4-renew-ms 0) the same replay fails (the state expired), so the
#     check is not vacuous;
#  4. SIGTERM in the middle of a timestamp replay: exit 143 (128 + 15), the report is
#     written (finished false, stop_reason, every record read accounted);
#  5. options an NFSv4 trace does not take (--proto udp) end in a usage error (exit 2).
# Needs root (private lab namespace); fails, never skips, without it or the tools.
#   117-play-v4.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: 117-play-v4.sh BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/integration/lab-test.sh
. "$top/tests/integration/lab-test.sh"
itest_private_lab 117-play-v4 "$0" "$@"

fail() { echo "FAIL: $*" >&2; exit 1; }
convert=$build/src/extract/tbbt-convert init=$build/src/aging/tbbt-init
play=$build/src/player/tbbt-play dump=$build/src/trace/tbbt-dump lab=$top/tools/tbbt-lab
for b in "$convert" "$init" "$play" "$dump"; do
  [ -x "$b" ] || fail "$b not built"
done
for t in jq tshark editcap; do
  command -v "$t" >/dev/null || fail "$t is not installed"
done
work=$(mktemp -d)
cleanup() {
  bash "$lab" stop -q >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# image TRACE NAME: tbbt-init of TRACE's map into the export's directory NAME.
image() {
  mkdir "$E/$2"
  "$init" -q --no-progress --map "$1.map" --root "$E/$2" --manifest "$work/$2.man" \
    >"$work/$2.init" 2>&1 || fail "tbbt-init $2: $(tail -n 2 "$work/$2.init")"
}
# replay TRACE NAME [ARGS...]: tbbt-play of TRACE on image NAME, report $work/NAME.json.
replay() {
  local trace=$1 name=$2
  shift 2
  timeout 300 "$play" --trace "$trace" --manifest "$work/$name.man" --server 127.0.0.1 \
    --export "$E" --pseudo /export -q --no-progress --verify \
    --report-json "$work/$name.json" "$@" >"$work/$name.out" 2>&1
}
# clean NAME: the report says every record completed, nothing failed or was skipped.
clean() {
  jq -e '.replay_failures == 0 and .ops_unknown == 0 and .ops_skipped == 0 and
         .ops_completed == .trace_ops and .trace_ops > 0 and .verify.ok and .finished' \
    "$work/$1.json" >/dev/null ||
    fail "$1: $(jq -c '{trace_ops, ops_completed, ops_skipped, ops_unknown, replay_failures,
      replay_failures_by_kind, skipped_by_reason, verify}' "$work/$1.json" 2>/dev/null ||
      tail -n 3 "$work/$1.out")"
}

bash "$lab" start --nfs4 --size 256M -q >/dev/null || fail "cannot start the lab"
eval "$(bash "$lab" env)"
E=$TBBT_LAB_EXPORT

# ------------------------------------------------------------------ 1. every capture
caps=(v40-tcp v41-tcp v42-tcp v40-libnfs)
for cap in "${caps[@]}"; do
  "$convert" -q -o "$work/$cap.tbbt" "$top/traces/v4/$cap.pcap" ||
    fail "$cap: tbbt-convert"
  image "$work/$cap.tbbt" "$cap-fsdep"
  image "$work/$cap.tbbt" "$cap-cons"
done
bash "$lab" restart -q >/dev/null || fail "lab restart"
for cap in "${caps[@]}"; do
  replay "$work/$cap.tbbt" "$cap-fsdep" --order fsdep --timing full ||
    fail "$cap fsdep/full: exit $? $(tail -n 3 "$work/$cap-fsdep.out")"
  clean "$cap-fsdep"
  replay "$work/$cap.tbbt" "$cap-cons" --order conservative --timing timestamp ||
    fail "$cap conservative/timestamp: exit $? $(tail -n 3 "$work/$cap-cons.out")"
  clean "$cap-cons"
  echo "ok: $cap: $(jq -r .ops_completed "$work/$cap-fsdep.json") COMPOUNDs, fsdep/full and" \
    "conservative/timestamp: 0 failures, --verify ok"
done

# ------------------------------------------------------------------ 1b. mixed v3+v4
# NFSv3 clients in v3mix/ (MOUNT of the export's real path) and NFSv4.1 clients in v4mix/
# (pseudo path /export/v4mix): one tree with --v4-export
"$convert" -q --v4-export /export=/var/tmp/tbbt-lab-v4h/mnt/export -o "$work/mixed.tbbt" \
  "$top/traces/v3v4-mixed.pcap" || fail "mixed: tbbt-convert"
grep -qxP '# v4-export\t/export/v4mix\tv4mix' "$work/mixed.tbbt.map" ||
  fail "mixed: the map does not place the NFSv4 export at v4mix"
image "$work/mixed.tbbt" mixed-fsdep
image "$work/mixed.tbbt" mixed-cons
bash "$lab" restart -q >/dev/null || fail "lab restart"
# mixed_clean NAME: as clean, MOUNT and NULL records aside (not_nfs)
mixed_clean() {
  jq -e '.replay_failures == 0 and .ops_unknown == 0 and
         .ops_skipped == .skipped_by_reason.not_nfs and .ops_completed > 250 and
         .ops_completed + .ops_skipped == .trace_ops and .verify.ok and .finished and
         (.procedures | has("v4.compound")) and (.procedures | has("write"))' \
    "$work/$1.json" >/dev/null ||
    fail "$1: $(jq -c '{trace_ops, ops_completed, skipped_by_reason, replay_failures,
      replay_failures_by_kind, verify}' "$work/$1.json" 2>/dev/null || tail -n 3 "$work/$1.out")"
}
replay "$work/mixed.tbbt" mixed-fsdep --order fsdep --timing full ||
  fail "mixed fsdep/full: exit $? $(tail -n 3 "$work/mixed-fsdep.out")"
mixed_clean mixed-fsdep
replay "$work/mixed.tbbt" mixed-cons --order conservative --timing timestamp ||
  fail "mixed conservative/timestamp: exit $? $(tail -n 3 "$work/mixed-cons.out")"
mixed_clean mixed-cons
echo "ok: v3v4-mixed: $(jq -r .ops_completed "$work/mixed-fsdep.json") NFSv3 calls and NFSv4" \
  "COMPOUNDs, fsdep/full and conservative/timestamp: 0 failures, --verify ok"

# ------------------------------------------------------------------ 1c. lost calls
# The 4.1 capture without a call and its reply (editcap), repaired by tbbt-convert:
#   open:   the OPEN by handle (CLAIM_FH) whose stateid a READ and a CLOSE use: one
#           corrective OPEN (corrective_ops v4.open);
#   remove: the REMOVE of "s" in sub1, so that the later REMOVE of sub1 would find it
#           not empty: one corrective REMOVE of sub1/s (PUTFH, LOOKUP, REMOVE);
#   reclaim: a client's RECLAIM_COMPLETE, without which the server just restarted would
#           answer its OPENs GRACE until its grace period ends: one corrective
#           RECLAIM_COMPLETE;
#   confirm: (v40-tcp) an OPEN_CONFIRM, without which the owner stays unconfirmed and
#           its later calls get BAD_SEQID: one corrective OPEN_CONFIRM;
# each replays clean in both orders; converted with --no-correct, open, remove and
# confirm fail.
# cut NAME FILTER [CAPTURE]: the capture (default v41-tcp) without the first call FILTER
# matches and its reply.
cut() {
  local f_call xid f_reply cap=$top/traces/v4/${3:-v41-tcp}.pcap
  read -r f_call xid < <(tshark -r "$cap" -Y "rpc.msgtyp == 0 && ($2)" \
    -T fields -e frame.number -e rpc.xid 2>/dev/null | head -n 1)
  [ -n "$f_call" ] || fail "lost $1: no call matches $2 in $cap"
  f_reply=$(tshark -r "$cap" -Y "rpc.msgtyp == 1 && rpc.xid == $xid" \
    -T fields -e frame.number 2>/dev/null | head -n 1)
  editcap "$cap" "$work/lost-$1.pcap" "$f_call" $f_reply || fail "lost $1: editcap"
  "$convert" -q -o "$work/lost-$1.tbbt" --summary-json "$work/lost-$1.conv.json" \
    "$work/lost-$1.pcap" || fail "lost $1: tbbt-convert"
  "$convert" -q --no-correct -o "$work/lost-$1-nc.tbbt" "$work/lost-$1.pcap" ||
    fail "lost $1: tbbt-convert --no-correct"
  echo "frames $f_call and $f_reply"
}
cut_open=$(cut open 'nfs.open.claim_type == 4')
cut_remove=$(cut remove 'nfs.opcode == 28 && nfs.pathname.component == "s"')
cut_reclaim=$(cut reclaim 'nfs.opcode == 58')
cut_confirm=$(cut confirm 'nfs.opcode == 20' v40-tcp)
# conv_ok NAME KIND: the conversion found one failure of its kind and repaired it.
conv_ok() {
  jq -e --arg k "$2" '.corrective_ops == {($k): 1} and .remaining_mismatches == 0 and
                      .replay_failures == 1' "$work/lost-$1.conv.json" >/dev/null ||
    fail "lost $1: $(jq -c '{corrective_ops, replay_failure_kinds, remaining_mismatches}' \
      "$work/lost-$1.conv.json")"
}
conv_ok open v4.open
conv_ok remove remove
conv_ok reclaim v4.reclaim_complete
conv_ok confirm v4.open_confirm
"$dump" "$work/lost-remove.tbbt" >"$work/lost-remove.txt" || fail "lost remove: tbbt-dump"
grep -q 'corrective.*{op=PUTFH,status=OK,fh=[0-9]*},{op=LOOKUP,status=OK,name="sub1"},{op=REMOVE,status=OK,name="s"}' "$work/lost-remove.txt" ||
  fail "lost remove: no corrective PUTFH, LOOKUP sub1, REMOVE s"
for c in open remove reclaim confirm; do
  image "$work/lost-$c.tbbt" "lost-$c-fsdep"
  image "$work/lost-$c.tbbt" "lost-$c-cons"
  [ "$c" = reclaim ] || image "$work/lost-$c-nc.tbbt" "lost-$c-nc"
done
bash "$lab" restart -q >/dev/null || fail "lab restart"
for c in open remove reclaim confirm; do
  replay "$work/lost-$c.tbbt" "lost-$c-fsdep" --order fsdep --timing full ||
    fail "lost $c fsdep/full: exit $? $(tail -n 3 "$work/lost-$c-fsdep.out")"
  clean "lost-$c-fsdep"
  replay "$work/lost-$c.tbbt" "lost-$c-cons" --order conservative --timing timestamp ||
    fail "lost $c conservative/timestamp: exit $? $(tail -n 3 "$work/lost-$c-cons.out")"
  clean "lost-$c-cons"
  # without it, the client lost its RECLAIM_COMPLETE gets GRACE until the grace period ends
  [ "$c" = reclaim ] || replay "$work/lost-$c-nc.tbbt" "lost-$c-nc" --order fsdep --timing full || true
done
jq -e '.skipped_by_reason.unsendable == 2' "$work/lost-open-nc.json" >/dev/null ||
  fail "lost open without correction: $(jq -c .skipped_by_reason "$work/lost-open-nc.json")"
for c in remove confirm; do
  jq -e '.replay_failures > 0' "$work/lost-$c-nc.json" >/dev/null ||
    fail "lost $c without correction: $(jq -c '{replay_failures}' "$work/lost-$c-nc.json")"
done
echo "ok: v41-tcp without an OPEN by handle ($cut_open): 1 corrective OPEN; without the" \
  "REMOVE of sub1/s ($cut_remove): 1 corrective REMOVE; without a RECLAIM_COMPLETE" \
  "($cut_reclaim): 1 corrective RECLAIM_COMPLETE; v40-tcp without an OPEN_CONFIRM" \
  "($cut_confirm): 1 corrective OPEN_CONFIRM; both orders: 0 failures, --verify ok" \
  "(without the correction: 2 unsendable; $(jq -r .replay_failures \
  "$work/lost-remove-nc.json") and $(jq -r .replay_failures "$work/lost-confirm-nc.json")" \
  "failures)"

# ------------------------------------------------------------------ 2. grace period
image "$work/v40-tcp.tbbt" grace
bash "$lab" restart --grace 4 -q >/dev/null || fail "lab restart --grace 4"
replay "$work/v40-tcp.tbbt" grace --order fsdep --no-grace-wait ||
  fail "grace: exit $? $(tail -n 3 "$work/grace.out")"
clean grace
[ "$(jq -r .retries "$work/grace.json")" -gt 0 ] ||
  fail "grace: no NFS4ERR_GRACE retried (the replay did not meet the grace period)"
echo "ok: replay in the grace period: $(jq -r .retries "$work/grace.json") GRACE answers" \
  "retried, 0 failures"

# ------------------------------------------------------------------ 3. lease renewal
# the second half of the 4.1 capture 8 s later (packet times shifted in the pcap)
python3 - "$top/traces/v4/v41-tcp.pcap" "$work/gap.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic in (0xa1b2c3d4, 0xa1b23c4d), "a little-endian pcap file"
pkts, off = [], 24
while off + 16 <= len(data):
    sec, frac, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    pkts.append([sec, frac, incl, orig, data[off + 16:off + 16 + incl]])
    off += 16 + incl
for p in pkts[len(pkts) // 2:]:
    p[0] += 8
with open(sys.argv[2], "wb") as out:
    out.write(data[:24])
    for sec, frac, incl, orig, body in pkts:
        out.write(struct.pack("<IIII", sec, frac, incl, orig) + body)
PY
"$convert" -q -o "$work/gap.tbbt" "$work/gap.pcap" || fail "tbbt-convert of the gap capture"
image "$work/gap.tbbt" lease
image "$work/gap.tbbt" nolease
bash "$lab" restart --grace 4 -q >/dev/null || fail "lab restart --grace 4"
replay "$work/gap.tbbt" lease --order conservative --timing timestamp ||
  fail "lease: exit $? $(tail -n 3 "$work/lease.out")"
clean lease
if replay "$work/gap.tbbt" nolease --order conservative --timing timestamp --v4-renew-ms 0; then
  fail "without lease renewal the replay across an 8 s gap (4 s lease) reports no failure"
fi
nf=$(jq -r .replay_failures "$work/nolease.json")
[ "$nf" -gt 0 ] || fail "nolease: no failure counted"
echo "ok: 8 s idle in a 4 s lease: 0 failures with renewal; $nf failures without" \
  "($(jq -c .replay_failures_by_kind "$work/nolease.json"))"

# ------------------------------------------------------------------ 4. SIGTERM
image "$work/gap.tbbt" stop
bash "$lab" restart --grace 0 -q >/dev/null || fail "lab restart --grace 0"
"$play" --trace "$work/gap.tbbt" --manifest "$work/stop.man" --server 127.0.0.1 --export "$E" \
  --pseudo /export --timing timestamp -q --no-progress --report-json "$work/stop.json" \
  >"$work/stop.out" 2>&1 &
pid=$!
sleep 3
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc, $(tail -n 3 "$work/stop.out")"
jq -e '(.finished | not) and .stop_reason == "signal SIGTERM" and .ops_completed > 0 and
       .skipped_by_reason.stopped > 0 and
       .trace_ops == .ops_completed + .ops_unknown + .ops_skipped +
                     .skipped_by_reason.stopped' "$work/stop.json" \
  >/dev/null || fail "SIGTERM: report $(jq -c '{finished, stop_reason, trace_ops,
    ops_completed, ops_unknown, ops_skipped}' "$work/stop.json")"
echo "ok: SIGTERM in the 8 s gap: exit 143, report written" \
  "($(jq -r .ops_completed "$work/stop.json") completed," \
  "$(jq -r .skipped_by_reason.stopped "$work/stop.json") not sent)"

# ------------------------------------------------------------------ 5. usage
rc=0
"$play" --trace "$work/v41-tcp.tbbt" --manifest "$work/v41-tcp-fsdep.man" --server 127.0.0.1 \
  --export "$E" --proto udp -q >"$work/usage.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "NFSv4" "$work/usage.out" ||
  fail "--proto udp with an NFSv4 trace: exit $rc, $(cat "$work/usage.out")"
echo "ok: --proto udp with an NFSv4 trace is a usage error"

bash "$lab" stop -q >/dev/null
echo "ok: tbbt-play replays NFSv4 traces"
