#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# roundtrip.sh: one round trip of a lab capture (tools/capture-workload.sh) through the
# whole pipeline, the way docs/tbbt-compare.md tells users to check a replay:
#
#   1. tbbt-convert CAPTURE/capture.pcap -> OUT/orig.tbbt + map (summary: conv.json),
#      kept in CAPTURE/converted/ (OUT/converted/ when CAPTURE is not writable) and
#      reused while the capture (size, mtime) and tbbt-convert (--version, a SHA-256 of
#      the binary) are the same: CAPTURE/converted/key;
#   2. a fresh lab (tools/tbbt-lab start: a new image, nothing cached);
#   3. tbbt-init builds the initial image into the lab's export, locally (default) or
#      through NFS (--init server); the server is restarted (--grace N: into a grace
#      period of N seconds, as after a reboot);
#   4. tbbt-play replays it (--order, --timing, more player options after --) while
#      tcpdump captures the replay (OUT/replay.pcap); report OUT/play.json;
#   5. a snapshot of the export after the replay (tools/tree-snap.py), the lab stopped;
#   6. tbbt-convert of the replay's capture and tbbt-compare with the original
#      (OUT/compare.json);
#   7. tools/roundtrip-check.py: the end state against the capture's after.snap on the
#      paths the trace knows, and one summary, OUT/summary.json (with --expect: the
#      acceptance figures checked, exit 1 when one misses).
#
# The lab's state directory is $TBBT_LAB_DIR (default /var/tmp/tbbt-lab); when other labs
# run on the machine run it inside tools/lab-ns.  Needs root (the lab, tcpdump).
# Exit codes: 0 success, 1 failure, 2 usage error.  See docs/tbbt-compare.md.
set -euo pipefail

readonly PROG=roundtrip.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)

msg() { [ "$quiet" -eq 1 ] || echo "$PROG: $*" >&2; }
die() { echo "$PROG: $*" >&2; exit 1; }
usage_die() { echo "$PROG: $* (try --help)" >&2; exit 2; }

usage() {
  cat <<EOF
Usage: $PROG --capture DIR --out DIR [--order conservative|fsdep] [--timing full|timestamp]
       [--speed X] [--init local|server] [--grace SECONDS] [--lab-size SIZE] [--build DIR]
       [--ranks N] [--expect] [-q] [-- TBBT-PLAY-OPTIONS...]
One round trip of a capture made by tools/capture-workload.sh (DIR/capture.pcap,
DIR/after.snap): convert, init, replay while capturing, convert the replay, compare.
  --capture DIR     the capture's directory (its conversion is kept in DIR/converted/,
                    or in the --out directory's when DIR is not writable, and reused
                    until the capture or tbbt-convert changes)
  --out DIR         results: orig.tbbt, replay.pcap, play.json, compare.json,
                    summary.json, ... (made if missing)
  --order O         tbbt-play --order (default conservative)
  --timing T        tbbt-play --timing (default full)
  --speed X         tbbt-play --speed in timestamp timing (default 1)
  --init I          local: tbbt-init writes the export's directory; server: through
                    NFS (tbbt-init --server) (default local)
  --grace N         restart the server into an N-second grace period before the replay
  --lab-size SIZE   lab image size (default 1G)
  --build DIR       build tree (default $top/build)
  --ranks N         replay from N MPI ranks: mpirun -np N tbbt-play --distribute clients
                    (docs/mpi.md; the replay's capture then holds every rank's calls)
  --expect          check the acceptance figures (roundtrip-check.py --expect)
  -q                quiet
EOF
}

capture="" out="" order=conservative timing=full speed=1 init_mode=local grace=""
lab_size=1G build="$top/build" expect=0 quiet=0 ranks=0
while [ $# -gt 0 ]; do
  case "$1" in
    --capture) capture=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --order) order=${2:-}; shift ;;
    --timing) timing=${2:-}; shift ;;
    --speed) speed=${2:-}; shift ;;
    --init) init_mode=${2:-}; shift ;;
    --grace) grace=${2:-}; shift ;;
    --lab-size) lab_size=${2:-}; shift ;;
    --build) build=${2:-}; shift ;;
    --ranks) ranks=${2:-}; shift ;;
    --expect) expect=1 ;;
    -q) quiet=1 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) usage_die "unknown argument '$1'" ;;
  esac
  [ $# -gt 0 ] || usage_die "option needs a value"
  shift
done
[ -n "$capture" ] && [ -n "$out" ] || usage_die "--capture and --out are required"
[ -f "$capture/capture.pcap" ] || die "no capture.pcap in $capture"
case "$order" in conservative | fsdep) ;; *) usage_die "bad --order '$order'" ;; esac
case "$timing" in full | timestamp) ;; *) usage_die "bad --timing '$timing'" ;; esac
case "$init_mode" in local | server) ;; *) usage_die "bad --init '$init_mode'" ;; esac
[[ -z "$grace" || "$grace" =~ ^[0-9]+$ ]] || usage_die "bad --grace '$grace'"
[[ "$ranks" =~ ^[0-9]+$ ]] || usage_die "bad --ranks '$ranks'"
[ "$(id -u)" -eq 0 ] || die "must run as root (the lab server, tcpdump)"
for t in tcpdump python3; do
  command -v "$t" >/dev/null || die "$t is missing (tools/install-deps.sh)"
done
convert=$build/src/extract/tbbt-convert
init=$build/src/aging/tbbt-init
play=$build/src/player/tbbt-play
compare=$build/src/compare/tbbt-compare
for b in "$convert" "$init" "$play" "$compare"; do
  [ -x "$b" ] || die "$b is not built"
done
lab=$here/tbbt-lab
mkdir -p "$out"
out=$(cd "$out" && pwd)
capture=$(cd "$capture" && pwd)
rm -f "$out"/{orig.tbbt,orig.tbbt.map,conv.json,replay.pcap,replay.tbbt,replay.tbbt.map,play.json,compare.json,summary.json}

# shellcheck source=tools/capture-lib.sh
. "$here/capture-lib.sh"
lab_up=0
# Stops the lab; a failure is reported whatever -q says (a server or loop device may be
# left behind).
lab_stop() {
  local err
  err=$(bash "$lab" stop -q 2>&1 >/dev/null) ||
    { echo "$PROG: tbbt-lab stop failed: ${err:-no message}" >&2; return 1; }
}
cleanup() {
  capture_stop 0 || true
  [ -z "$conv_tmp" ] || rm -rf "$conv_tmp"
  [ "$lab_up" -eq 0 ] || lab_stop || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The original's conversion, cached (see the top): prints what the cache is keyed by.
convert_key() {
  echo "capture $(stat -c '%s %.9Y' "$capture/capture.pcap")"
  echo "tbbt-convert $("$convert" --version | head -n 1) $(sha256sum <"$convert" | cut -c1-64)"
}

# Prints a cache directory that can be written: CAPTURE/converted, else OUT/converted.
convert_cache() {
  local dir probe
  for dir in "$capture/converted" "$out/converted"; do
    if mkdir -p "$dir" 2>/dev/null && probe=$(mktemp "$dir/.probe.XXXXXX" 2>/dev/null); then
      rm -f "$probe"
      echo "$dir"
      return 0
    fi
  done
  return 1
}

conv_tmp=""
convert_original() {
  local cache key f
  cache=$(convert_cache) || die "cannot write $capture/converted or $out/converted"
  key=$(convert_key)
  if [ "$(cat "$cache/key" 2>/dev/null)" = "$key" ] && [ -s "$cache/orig.tbbt" ] &&
    [ -f "$cache/orig.tbbt.map" ] && [ -f "$cache/conv.json" ]; then
    msg "reuse the conversion of $capture/capture.pcap in $cache"
  else
    msg "convert $capture/capture.pcap (into $cache)"
    conv_tmp=$(mktemp -d "$cache/.new.XXXXXX")
    "$convert" -q --summary-json "$conv_tmp/conv.json" -o "$conv_tmp/orig.tbbt" \
      "$capture/capture.pcap" || die "tbbt-convert of the capture failed"
    rm -f "$cache/key"
    mv -f "$conv_tmp/orig.tbbt" "$conv_tmp/orig.tbbt.map" "$conv_tmp/conv.json" "$cache/"
    echo "$key" >"$conv_tmp/key"
    mv -f "$conv_tmp/key" "$cache/key"
    rmdir "$conv_tmp"
    conv_tmp=""
  fi
  for f in orig.tbbt orig.tbbt.map conv.json; do
    ln -f "$cache/$f" "$out/$f" 2>/dev/null || cp -f "$cache/$f" "$out/$f"
  done
}
convert_original

msg "lab start (fresh image)"
lab_up=1
bash "$lab" start -q --size "$lab_size" >/dev/null || die "cannot start the lab"
# Captured first: a failing command substitution inside eval would go unnoticed.
lab_env=$(bash "$lab" env) || die "tbbt-lab env failed"
eval "$lab_env"
E=$TBBT_LAB_EXPORT

msg "tbbt-init ($init_mode)"
init_args=(--map "$out/orig.tbbt.map" --root "$E" --manifest "$out/image.manifest" -q --no-progress)
[ "$init_mode" = local ] || init_args+=(--server 127.0.0.1 --export "$E")
start=$EPOCHREALTIME
"$init" "${init_args[@]}" >"$out/init.out" 2>&1 || die "tbbt-init failed: $(tail -n 3 "$out/init.out")"
end=$EPOCHREALTIME
echo "{\"mode\": \"$init_mode\", \"start\": $start, \"end\": $end}" >"$out/init.json"
sync
restart_args=(restart -q)
[ -z "$grace" ] || restart_args+=(--grace "$grace")
bash "$lab" "${restart_args[@]}" >/dev/null || die "lab restart failed"

msg "replay: $order order, $timing timing $*"
capture_start "$out/replay.pcap" "$out/tcpdump.err" 0 'port 2049 or port 20048 or port 111' ||
  exit 1
play_rc=0
launch=()
if [ "$ranks" -gt 0 ]; then   # loopback only inside lab-ns: Open MPI over lo
  launch=(env OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
          mpirun --allow-run-as-root --oversubscribe -np "$ranks")
  set -- --distribute clients "$@"
fi
"${launch[@]}" "$play" --trace "$out/orig.tbbt" --manifest "$out/image.manifest" --server 127.0.0.1 \
  --export "$E" --order "$order" --timing "$timing" --speed "$speed" \
  --report-json "$out/play.json" --timeseries "$out/play.csv" --no-progress "$@" \
  >"$out/play.txt" 2>&1 || play_rc=$?
capture_stop || exit 1
[ "$play_rc" -eq 0 ] || die "tbbt-play exited $play_rc: $(tail -n 2 "$out/play.txt")"
sync
"$here/tree-snap.py" snap "$E" -o "$out/after-replay.snap"
lab_stop || true
lab_up=0

msg "convert the replay, compare"
"$convert" -q -o "$out/replay.tbbt" "$out/replay.pcap" || die "tbbt-convert of the replay failed"
"$compare" "$out/orig.tbbt" "$out/replay.tbbt" --speed "$speed" --json "$out/compare.json" \
  >"$out/compare.txt" 2>&1 || die "tbbt-compare failed: $(tail -n 2 "$out/compare.txt")"

check_args=(--capture "$capture" --out "$out")
[ "$expect" -eq 0 ] || check_args+=(--expect)
[ "$timing" = full ] || check_args+=(--timestamp)
[ "$quiet" -eq 0 ] || check_args+=(-q)
python3 "$here/roundtrip-check.py" "${check_args[@]}"
