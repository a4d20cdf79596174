#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make-captures.sh: records real NFS captures of the lab clients against the lab server.
#
# Starts the lab (tools/tbbt-lab) unless TBBT_LAB_RUNNING=1, runs tcpdump on loopback
# around each client run, and writes into the output directory:
#   v3-tcp.pcap        nfs-scenario (every NFSv3 procedure, TCP), full packets
#   v3-tcp-s256.pcap   a second nfs-scenario run captured with -s 256
#   v3-tcp.pcapng      v3-tcp.pcap converted to pcapng
#   v3-udp.pcap        udp-scenario (NFSv3 over UDP), when that client is built
#   v2-udp.pcap        udp-scenario --v2, when the server offers NFSv2
#   big.pcap, big-s256.pcap   with --big N: at least N NFS calls (benchmarks; not committed)
# then checks each with `tshark -z rpc,srt` that every procedure appears.  It builds
# nothing: the client binaries come from --build DIR or $NFS_SCENARIO/$UDP_SCENARIO.
# Usage and what the committed captures contain: docs/lab.md, traces/README.md.
set -euo pipefail

readonly PROG=make-captures.sh
readonly FILTER='port 2049 or port 20048 or port 111'
# libnfs binds a reserved source port, which tshark may take for another protocol
# (705 is AgentX): make it decode the lab ports as ONC RPC.
readonly TSHARK_DECODE=(-d tcp.port==2049,rpc -d udp.port==2049,rpc
  -d tcp.port==20048,rpc -d udp.port==20048,rpc)
readonly V3_PROCS="NULL GETATTR SETATTR LOOKUP ACCESS READLINK READ WRITE CREATE MKDIR SYMLINK
MKNOD REMOVE RMDIR RENAME LINK READDIR READDIRPLUS FSSTAT FSINFO PATHCONF COMMIT"
readonly V2_PROCS="NULL GETATTR SETATTR LOOKUP READLINK READ WRITE CREATE REMOVE RENAME LINK
SYMLINK MKDIR RMDIR READDIR STATFS"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

msg() { echo "$PROG: $*" >&2; }
die() { echo "$PROG: $*" >&2; exit 1; }

usage() {
  cat <<EOF
Usage: $PROG [--out DIR] [--build DIR] [--big N] [--big-procs P] [--big-inflight K]
       [--big-max-io B] [--only LIST] [--no-verify]
Records lab captures with tcpdump (root; see docs/lab.md).
  --out DIR        output directory (default: $root/traces)
  --build DIR      build tree holding tools/nfs-scenario and tools/udp-scenario
                   (default: $root/build); \$NFS_SCENARIO and \$UDP_SCENARIO override
  --big N          also make big.pcap with at least N NFS calls, and big-s256.pcap
  --big-procs P    parallel nfs-scenario processes for --big (default 2)
  --big-inflight K requests in flight per process for --big (default 8; 1 keeps one RPC
                   per TCP segment, so a -s 256 copy still shows every call)
  --big-max-io B   largest random READ/WRITE for --big, 1..32768 (default 4096)
  --only LIST      comma-separated subset: v3-tcp,v3-udp,v2-udp (default all)
  --no-verify      skip the tshark checks
  -h, --help       this text
Environment: TBBT_LAB_RUNNING=1 uses the running lab (TBBT_LAB_DIR) instead of starting one.
EOF
}

out="$root/traces" build="$root/build" big=0 big_procs=2 big_inflight=8 big_max_io=4096 verify=1 only="v3-tcp,v3-udp,v2-udp"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --build) build=$2; shift ;;
    --big) big=$2; shift ;;
    --big-procs) big_procs=$2; shift ;;
    --big-inflight) big_inflight=$2; shift ;;
    --big-max-io) big_max_io=$2; shift ;;
    --only) only=$2; shift ;;
    --no-verify) verify=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$PROG: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$big" =~ ^[0-9]+$ ]] || { echo "$PROG: bad --big '$big'" >&2; exit 2; }
[[ "$big_procs" =~ ^[1-9][0-9]*$ ]] || { echo "$PROG: bad --big-procs" >&2; exit 2; }
[[ "$big_inflight" =~ ^[1-9][0-9]*$ ]] || { echo "$PROG: bad --big-inflight" >&2; exit 2; }
[[ "$big_max_io" =~ ^[1-9][0-9]*$ ]] || { echo "$PROG: bad --big-max-io" >&2; exit 2; }
wants() { [[ ",$only," == *",$1,"* ]]; }

nfs_scenario=${NFS_SCENARIO:-$build/tools/nfs-scenario}
udp_scenario=${UDP_SCENARIO:-$build/tools/udp-scenario}
[ -x "$nfs_scenario" ] || die "no nfs-scenario at $nfs_scenario (build it, or set NFS_SCENARIO)"
for t in tcpdump tshark editcap rpcinfo; do
  command -v "$t" >/dev/null || die "$t is missing (tools/install-deps.sh)"
done
[ "$(id -u)" -eq 0 ] || die "must run as root (tcpdump on lo)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/make-captures.XXXXXX)

# ------------------------------------------------------------------ lab

# shellcheck source=tools/capture-lib.sh
. "$here/capture-lib.sh"
lab_started=0
client_pids=()
cleanup() {
  local pid
  for pid in "${client_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  capture_stop 0 || true
  if [ "$lab_started" -eq 1 ]; then
    "$here/tbbt-lab" -q stop || msg "tbbt-lab stop failed"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "${TBBT_LAB_RUNNING:-0}" != 1 ]; then
  "$here/tbbt-lab" -q start --transport both >/dev/null
  lab_started=1
fi
lab_env=$("$here/tbbt-lab" env) || die "tbbt-lab env failed (no running lab?)"
eval "$lab_env"
url=$TBBT_LAB_URL

# ------------------------------------------------------------------ capture

# capture SNAPLEN FILE CMD...: runs CMD while tcpdump writes FILE; CMD's stderr goes to
# FILE's .log in the work dir.
capture() {
  local snap=$1 file=$2 log="$work/$(basename "$2").log" errf="$work/$(basename "$2").tcpdump"
  shift 2
  capture_start "$file" "$errf" "$snap" "$FILTER" || exit 1
  if ! "$@" 2>"$log"; then
    sed "s/^/$PROG: client: /" "$log" >&2
    die "client failed: $*"
  fi
  capture_stop || exit 1
  if ! grep -q '^0 packets dropped by kernel' "$errf"; then
    msg "warning: $(basename "$file"): $(grep 'dropped by kernel' "$errf" || echo 'no stats')"
  fi
  msg "$(basename "$file"): $(grep 'packets captured' "$errf"), $(stat -c %s "$file") bytes"
}

# Prints the number of NFS calls that CLIENT's -v summary in LOG reported.
client_calls() {
  sed -n 's/^[a-z-]*: \([0-9]*\) NFSv[23] calls.*/\1/p' "$1" | head -n 1
}

# ------------------------------------------------------------------ verification

# verify FILE VERSION PROCS [MIN_CALLS]: every procedure has a call/reply pair; the
# capture holds at least MIN_CALLS NFS calls.  Prints the tshark table.
verify() {
  local file=$1 vers=$2 procs=$3 min=${4:-0} table p missing="" total
  table=$(tshark -r "$file" -q "${TSHARK_DECODE[@]}" -z "rpc,srt,100003,$vers" 2>/dev/null)
  echo "== $(basename "$file"): tshark -q -z rpc,srt,100003,$vers"
  echo "$table" | sed -n '/^Index/,/^=/p' | sed '$d'
  for p in $procs; do
    if ! echo "$table" | awk -v p="$p" '$2 == p && $3 > 0 { f = 1 } END { exit !f }'; then
      missing="$missing $p"
    fi
  done
  total=$(echo "$table" | awk '$1 ~ /^[0-9]+$/ { s += $3 } END { print s + 0 }')
  [ -z "$missing" ] || die "$(basename "$file"): no call/reply pair for:$missing"
  [ "$total" -ge "$min" ] || die "$(basename "$file"): $total NFS calls, expected >= $min"
  msg "$(basename "$file"): all procedures present, $total NFSv$vers calls"
}

# ------------------------------------------------------------------ runs

# The committed captures stay small (< 200 KB): the scripted scenario plus a few random
# calls, four in flight, with small reads and writes.
small_args=(-v --ops 60 --inflight 4 --max-io 512 --seed 1)

if wants v3-tcp; then
  capture 0 "$out/v3-tcp.pcap" "$nfs_scenario" "${small_args[@]}" "$url"
  v3_calls=$(client_calls "$work/v3-tcp.pcap.log")
  capture 256 "$out/v3-tcp-s256.pcap" "$nfs_scenario" "${small_args[@]}" "$url"
  editcap -F pcapng "$out/v3-tcp.pcap" "$out/v3-tcp.pcapng"
  if [ "$verify" -eq 1 ]; then
    verify "$out/v3-tcp.pcap" 3 "$V3_PROCS" "$v3_calls"
    verify "$out/v3-tcp-s256.pcap" 3 "$V3_PROCS"
    verify "$out/v3-tcp.pcapng" 3 "$V3_PROCS" "$v3_calls"
  fi
fi

if wants v3-udp; then
  if [ -x "$udp_scenario" ]; then
    capture 0 "$out/v3-udp.pcap" "$udp_scenario" -v "$url"
    [ "$verify" -eq 0 ] || verify "$out/v3-udp.pcap" 3 "$V3_PROCS" \
      "$(client_calls "$work/v3-udp.pcap.log")"
  else
    msg "no udp-scenario at $udp_scenario: skipping v3-udp.pcap"
  fi
fi

if wants v2-udp; then
  if [ ! -x "$udp_scenario" ]; then
    msg "no udp-scenario at $udp_scenario: skipping v2-udp.pcap"
  elif ! timeout 5 rpcinfo -T udp 127.0.0.1 100003 2 >/dev/null 2>&1; then
    msg "the lab server does not offer NFSv2 over UDP: skipping v2-udp.pcap"
  else
    capture 0 "$out/v2-udp.pcap" "$udp_scenario" -v --v2 "$url"
    [ "$verify" -eq 0 ] || verify "$out/v2-udp.pcap" 2 "$V2_PROCS" \
      "$(client_calls "$work/v2-udp.pcap.log")"
  fi
fi

# big_run: P nfs-scenario processes in parallel, N calls in all.
big_run() {
  local per=$(((big + big_procs - 1) / big_procs)) i rc=0
  for ((i = 0; i < big_procs; i++)); do
    "$nfs_scenario" --ops "$per" --inflight "$big_inflight" --max-io "$big_max_io" \
      --seed $((100 + i)) "$url" &
    client_pids+=($!)
  done
  for i in "${client_pids[@]}"; do
    wait "$i" || rc=1
  done
  client_pids=()
  return "$rc"
}

if [ "$big" -gt 0 ]; then
  capture 0 "$out/big.pcap" big_run
  editcap -s 256 -F pcap "$out/big.pcap" "$out/big-s256.pcap"
  msg "big-s256.pcap: $(stat -c %s "$out/big-s256.pcap") bytes"
  if [ "$verify" -eq 1 ]; then
    verify "$out/big.pcap" 3 "$V3_PROCS" "$big"
  fi
fi
msg "done: captures in $out"
