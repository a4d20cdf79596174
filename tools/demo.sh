#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job, end to end, on a fresh Debian 12 machine (as root): installs the
# dependencies, builds tbbt, starts the lab NFS-Ganesha server on 127.0.0.1 over a
# loop-device ext4 image, converts a bundled real capture (traces/v3-tcp-mid.pcap, cut
# from the middle of a client run: its objects exist at trace start) into a TBBT trace
# and hierarchy map, builds three aged copies of the initial image with tbbt-init
# (synthetic files to 30 % full, interleaved appends) and measures the aging, restarts
# the server (no stale caches), then replays the trace with tbbt-play at 1x in
# timestamp mode and at full speed with both ordering policies, each on its own fresh
# copy with --verify, and prints the reports.  Then the round trip (docs/tbbt-compare.md):
# libnfs clients run a mail-like workload against a fresh lab while tcpdump captures it
# (tools/capture-workload.sh), and tools/roundtrip.sh converts that capture, builds its
# image, replays it while capturing the replay, converts the replay and compares the two
# traces and the two servers' trees.  Everything it starts is stopped at the end.
#
#   bash tools/demo.sh [--trace PCAP] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
cap=$top/traces/v3-tcp-mid.pcap
out=$top/out/demo
while [ $# -gt 0 ]; do
  case "$1" in
    --trace) cap=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
say() { echo; echo "demo: $*"; }
[ "$(id -u)" -eq 0 ] || { echo "demo: must run as root (loop devices, the NFS server)" >&2; exit 1; }

say "installing dependencies (skipped when present)"
bash tools/install-deps.sh
say "building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
mkdir -p "$out"

trap 'bash tools/tbbt-lab stop -q >/dev/null 2>&1 || true' EXIT
say "starting the lab server (NFS-Ganesha, VFS FSAL on a 1 GiB ext4 loop image)"
bash tools/tbbt-lab start --size 1G -q
lab_env=$(bash tools/tbbt-lab env) || { echo "demo: tbbt-lab env failed" >&2; exit 1; }
eval "$lab_env"
bin=build/src
say "converting $cap"
$bin/extract/tbbt-convert --summary-json "$out/summary.json" -o "$out/demo.tbbt" "$cap"
python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("  packets %d, RPC calls %d, replies %d, pairs %d, unmatched calls %d / replies %d, "
      "estimated lost %d" % (s["packets"], s["rpc_calls"], s["rpc_replies"], s["pairs"],
      s["unmatched_calls"], s["unmatched_replies"], s["estimated_lost_calls"]))
print("  %.0f MB/s, %.0f calls/s, peak RSS %.1f MB" % (s["mb_per_second"],
      s["calls_per_second"], s["peak_rss_bytes"] / 1e6))
for table in ("v3", "mount"):
    row = ", ".join("%s %d" % kv for kv in s["procedures"][table].items() if kv[1])
    print("  %s: %s" % (table, row))
print("  objects %d, hierarchy map entries %d, orphans %d; replay failures %d, corrective "
      "operations %d, remaining mismatches %d" % (s["objects"], s["map_entries"], s["orphans"],
      s["replay_failures"], sum(s["corrective_ops"].values()), s["remaining_mismatches"]))
PY
say "first records of the trace (tbbt-dump):"
# (the reader stops early: tbbt-dump then ends on SIGPIPE, which is fine here)
build/src/trace/tbbt-dump "$out/demo.tbbt" | awk '/^op / { print substr($0, 1, 160); if (++n == 5) exit }' || true
say "first entries of the hierarchy map:"
head -n 6 "$out/demo.tbbt.map" | cut -c1-160
say "checking the trace against its map (the start image a replay would see):"
build/src/extract/tbbt-convert --check "$out/demo.tbbt"

img=$TBBT_LAB_EXPORT/demo-image
rm -rf "$img"
mkdir -p "$img"
say "tbbt-init: three aged copies of the initial image (fill 30 %, scope 16M, 8 appends)"
$bin/aging/tbbt-init --map "$out/demo.tbbt.map" --root "$img" --manifest "$out/demo.manifest" \
  --clones 3 --fill 0.3 --scope 16M --appends 8 --no-progress
say "aging measured on the image (tbbt-init --measure):"
$bin/aging/tbbt-init --measure "$img"
say "writing the image out (sync) and restarting the server: tbbt-init wrote behind its back"
sync
bash tools/tbbt-lab restart -q

play() {   # play NAME FIRST_CLONE ARGS...
  local name=$1 k=$2; shift 2
  say "tbbt-play: $name (image $k)"
  $bin/player/tbbt-play --trace "$out/demo.tbbt" --manifest "$out/demo.manifest" \
    --server "$TBBT_LAB_SERVER" --export "$TBBT_LAB_EXPORT" --first-clone "$k" --verify \
    --no-progress --report-json "$out/play-$name.json" --timeseries "$out/play-$name.csv" "$@"
}
play timestamp-1x 0 --timing timestamp --speed 1 --order conservative
play full-conservative 1 --timing full --order conservative
play full-fsdep 2 --timing full --order fsdep

say "summary"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print("  %-18s %10s %10s %9s %9s %8s %s" % ("run", "ops", "wall s", "ops/s", "failures",
                                           "verify", "dispatch p99 us"))
for name in ("timestamp-1x", "full-conservative", "full-fsdep"):
    r = json.load(open("%s/play-%s.json" % (out, name)))
    d = r["dispatch_error_us"]["p99"]
    print("  %-18s %10d %10.3f %9.0f %9d %8s %s" % (name, r["ops_completed"], r["wall_seconds"],
          r["throughput_ops"] or 0, r["replay_failures"], r.get("verify", {}).get("ok"),
          "-" if d is None else "%.0f" % d))
ts = json.load(open("%s/play-timestamp-1x.json" % out))
cons = json.load(open("%s/play-full-conservative.json" % out))
rate, top = ts["trace_rate_ops"] or 0, cons["throughput_ops"] or 0
if rate > top:
    print("  (the capture's own rate, %.0f ops/s, is above what this server reaches in "
          "conservative order at full speed, %.0f ops/s: the 1x timestamp replay falls "
          "behind, hence its large dispatch error; --speed %.2g or less would keep up)"
          % (rate, top, max(0.01, int(top / rate * 0.9 * 100) / 100)))
mism = max(json.load(open("%s/play-%s.json" % (out, n)))["reply_mismatches"]
           for n in ("timestamp-1x", "full-conservative", "full-fsdep"))
if mism:
    print("  (up to %d replies differ from the trace's: this capture was cut from the middle "
          "of a client run and lost a few calls, so it never shows some objects whole: the "
          "other entries of the directories it lists, the sizes of some files; the round "
          "trip below, on a whole capture, has none)" % mism)
PY
bash tools/tbbt-lab stop -q

say "round trip: a mail-like workload of 4 libnfs clients captured on a fresh lab server"
bash tools/capture-workload.sh --start-lab --mix mail --clients 4 --ops 500 --users 6 \
  --out "$out/mail-capture" 2>"$out/mail-capture.log" ||
  { tail -n 5 "$out/mail-capture.log" >&2; exit 1; }
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["capture"]
print("  %d NFS calls in %.2f s (%.0f calls/s)" % (c["nfs_calls"], c["duration_s"], c["nfs_calls"] / c["duration_s"]))' \
  "$out/mail-capture/workload.json"
for order in conservative fsdep; do
  say "round trip: convert, tbbt-init, tbbt-play --order $order while capturing, convert, tbbt-compare"
  bash tools/roundtrip.sh --capture "$out/mail-capture" --out "$out/roundtrip-$order" \
    --order "$order" -q -- --verify
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); t = s["tree"]
print("  %d ops: %d replay failures, %d reply mismatches; tbbt-compare: %.4f identical, "
      "%d status and %d reply differences; end state: %d paths, %d missing, %d differ, "
      "%d extra; %.2fx the capture'"'"'s rate, %.1f us of player CPU per op"
      % (s["ops"], s["replay_failures"], s["reply_mismatches"], s["identical_fraction"],
         s["status_diffs"], s["reply_diffs"], t["known"], t["missing"], t["differ"],
         t["extra"], s["rate_to_trace"] or 0, s["cpu_us_per_op"] or 0))' \
    "$out/roundtrip-$order/summary.json"
done
say "round trip details: $out/roundtrip-*/compare.txt (tbbt-compare), summary.json, play.txt"

say "done: trace $out/demo.tbbt, map $out/demo.tbbt.map, manifest $out/demo.manifest, reports $out/play-*.json"
