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
#   only when asked for with --only (the lab then serves NFSv4 too, tbbt-lab --nfs4):
#   v4/v40-tcp.pcap    nfs4-scenario --minor 0 --clients 3 (NFSv4.0, RFC 7530)
#   v4/v41-tcp.pcap    nfs4-scenario --minor 1 --clients 3 (NFSv4.1, RFC 8881), and
#   v4/v41-tcp-s256.pcap  a second such run captured with -s 256
#   v4/v42-tcp.pcap    nfs4-scenario --minor 2 --clients 2 (NFSv4.2, RFC 7862)
#   v3v4-mixed.pcap    nfs-scenario (NFSv3) and nfs4-scenario --minor 1 at the same time
#   v4/v40-libnfs.pcap libnfs's own NFSv4.0 (nfs-cp, nfs-ls, nfs-cat with ?version=4)
#   big.pcap, big-s256.pcap   with --big N: at least N NFS calls (benchmarks; not committed)
# then checks each with `tshark -z rpc,srt` that every procedure appears, and for NFSv4
# that tshark sees the operations nfs4-scenario reports sending, with the same counts.
# It builds nothing: the client binaries come from --build DIR or
# $NFS_SCENARIO/$UDP_SCENARIO/$NFS4_SCENARIO.
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
  --build DIR      build tree holding tools/nfs-scenario, tools/udp-scenario and
                   tools/nfs4-scenario (default: $root/build); \$NFS_SCENARIO,
                   \$UDP_SCENARIO and \$NFS4_SCENARIO override
  --big N          also make big.pcap with at least N NFS calls, and big-s256.pcap
  --big-procs P    parallel nfs-scenario processes for --big (default 2)
  --big-inflight K requests in flight per process for --big (default 8; 1 keeps one RPC
                   per TCP segment, so a -s 256 copy still shows every call)
  --big-max-io B   largest random READ/WRITE for --big, 1..32768 (default 4096)
  --only LIST      comma-separated subset: v3-tcp,v3-udp,v2-udp (the default), and the
                   NFSv4 ones v40-tcp,v41-tcp,v42-tcp,v3v4-mixed,v40-libnfs ("v4" for
                   all five; v41-tcp also makes v41-tcp-s256.pcap)
  --no-verify      skip the tshark checks
  -h, --help       this text
Environment: TBBT_LAB_RUNNING=1 uses the running lab (TBBT_LAB_DIR) instead of starting one
(for NFSv4 captures it must have been started with --nfs4).
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
readonly V4_NAMES="v40-tcp,v41-tcp,v42-tcp,v3v4-mixed,v40-libnfs"
only=$(echo ",$only," | sed -e ":a" -e "s/,v4,/,$V4_NAMES,/" -e "ta" -e 's/^,//' -e 's/,$//')
wants() { [[ ",$only," == *",$1,"* ]]; }
wants_v4() { wants v40-tcp || wants v41-tcp || wants v42-tcp || wants v3v4-mixed || wants v40-libnfs; }

nfs_scenario=${NFS_SCENARIO:-$build/tools/nfs-scenario}
udp_scenario=${UDP_SCENARIO:-$build/tools/udp-scenario}
nfs4_scenario=${NFS4_SCENARIO:-$build/tools/nfs4-scenario}
if wants_v4 && [ "$only" != v40-libnfs ]; then
  [ -x "$nfs4_scenario" ] || die "no nfs4-scenario at $nfs4_scenario (build it, or set NFS4_SCENARIO)"
fi
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
  lab_nfs4=()
  wants_v4 && lab_nfs4=(--nfs4)
  "$here/tbbt-lab" -q start --transport both "${lab_nfs4[@]}" >/dev/null
  lab_started=1
fi
lab_env=$("$here/tbbt-lab" env) || die "tbbt-lab env failed (no running lab?)"
eval "$lab_env"
if wants_v4 && [ "${TBBT_LAB_NFS4:-off}" != on ]; then
  die "the running lab does not serve NFSv4 (start it with tbbt-lab start --nfs4)"
fi
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

# ------------------------------------------------------------------ NFSv4

# v4_ops FILE: prints "NUMBER COUNT" for each NFSv4 operation in the calls tshark decodes.
v4_ops() {
  tshark -r "$1" "${TSHARK_DECODE[@]}" -T fields -e nfs.opcode \
    -Y 'rpc.msgtyp == 0 && rpc.program == 100003 && rpc.programversion == 4' 2>/dev/null |
    tr ',' '\n' | awk 'NF { n[$1]++ } END { for (o in n) print o, n[o] }' | sort -n
}

# verify_v4 FILE COUNTS exact|subset: tshark's operation counts in FILE against the
# "NAME NUMBER COUNT" lines nfs4-scenario printed into COUNTS: equal (exact), or (a -s 256
# capture, where operations past the cut are lost) no operation it did not send and no
# count above what it sent.  Prints the table.
verify_v4() {
  local file=$1 counts=$2 mode=$3 got
  got=$(v4_ops "$file")
  echo "== $(basename "$file"): tshark -Y 'rpc.msgtyp == 0' -T fields -e nfs.opcode"
  awk -v mode="$mode" -v f="$(basename "$file")" '
    NR == FNR { name[$2] = $1; want[$2] = $3; next }
    { got[$1] = $2; if (!($1 in want)) { print f ": tshark sees operation " $1 ", never sent"; bad = 1 } }
    END {
      for (o in want) {
        printf "%-22s %3d %5d sent %5d seen\n", name[o], o, want[o], got[o] + 0
        if (mode == "exact" && got[o] + 0 != want[o]) bad = 1
        if (mode == "subset" && got[o] + 0 > want[o]) bad = 1
      }
      exit bad
    }' "$counts" <(echo "$got") | sort -k2 -n || die "$(basename "$file"): NFSv4 operation counts differ from what nfs4-scenario sent"
  msg "$(basename "$file"): NFSv4 operations agree with nfs4-scenario ($mode)"
}

# v4_run COUNTS MINOR CLIENTS SEED [PATH]: one nfs4-scenario run; its counts into COUNTS.
v4_run() {
  "$nfs4_scenario" --server "$TBBT_LAB_SERVER" --minor "$2" --clients "$3" --seed "$4" \
    --path "${5:-/export}" -v >"$1"
}

# The captures of NFSv4 alone go into OUT/v4/: the tests that walk traces/*.pcap expect
# NFSv3 or NFSv2 traffic in each file.
wants v40-tcp || wants v41-tcp || wants v42-tcp || wants v40-libnfs && mkdir -p "$out/v4"

if wants v40-tcp; then
  capture 0 "$out/v4/v40-tcp.pcap" v4_run "$work/v40.counts" 0 3 1
  [ "$verify" -eq 0 ] || verify_v4 "$out/v4/v40-tcp.pcap" "$work/v40.counts" exact
fi

if wants v41-tcp; then
  capture 0 "$out/v4/v41-tcp.pcap" v4_run "$work/v41.counts" 1 3 1
  capture 256 "$out/v4/v41-tcp-s256.pcap" v4_run "$work/v41-s256.counts" 1 3 2
  if [ "$verify" -eq 1 ]; then
    verify_v4 "$out/v4/v41-tcp.pcap" "$work/v41.counts" exact
    verify_v4 "$out/v4/v41-tcp-s256.pcap" "$work/v41-s256.counts" subset
  fi
fi

if wants v42-tcp; then
  capture 0 "$out/v4/v42-tcp.pcap" v4_run "$work/v42.counts" 2 2 1
  [ "$verify" -eq 0 ] || verify_v4 "$out/v4/v42-tcp.pcap" "$work/v42.counts" exact
fi

# mixed_run: nfs-scenario (NFSv3) in v3mix/ and nfs4-scenario (NFSv4.1, 2 clients) in
# v4mix/ at the same time.
mixed_run() {
  local v3url="nfs://$TBBT_LAB_SERVER$TBBT_LAB_EXPORT/v3mix?version=3" rc=0 pid
  "$nfs_scenario" "${small_args[@]}" "$v3url" &
  client_pids+=($!)
  v4_run "$work/mixed.counts" 1 2 3 /export/v4mix &
  client_pids+=($!)
  for pid in "${client_pids[@]}"; do
    wait "$pid" || rc=1
  done
  client_pids=()
  return "$rc"
}

if wants v3v4-mixed; then
  # Made behind the server's back: LOOKUP finds them at once (docs/lab.md).
  mkdir -p "$TBBT_LAB_EXPORT/v3mix" "$TBBT_LAB_EXPORT/v4mix"
  chmod 0777 "$TBBT_LAB_EXPORT/v3mix" "$TBBT_LAB_EXPORT/v4mix"
  capture 0 "$out/v3v4-mixed.pcap" mixed_run
  if [ "$verify" -eq 1 ]; then
    verify "$out/v3v4-mixed.pcap" 3 "$V3_PROCS"
    verify_v4 "$out/v3v4-mixed.pcap" "$work/mixed.counts" exact
  fi
fi

# libnfs_run: libnfs 4.0.0's own NFSv4.0 client (nfs-cp, nfs-ls, nfs-cat); it speaks 4.0
# only, and its tools open, read, write and close but never lock.
libnfs_run() {
  local u="nfs://$TBBT_LAB_SERVER/export" f="$work/libnfs-src.txt"
  seq 1 400 >"$f"
  nfs-cp "$f" "$u/libnfs-$$.txt?version=4" &&
    nfs-ls "$u?version=4" >/dev/null &&
    nfs-cat "$u/libnfs-$$.txt?version=4" >/dev/null &&
    nfs-cp "$u/libnfs-$$.txt?version=4" "$work/libnfs-back.txt" &&
    cmp -s "$f" "$work/libnfs-back.txt"
}

if wants v40-libnfs; then
  command -v nfs-cp >/dev/null || die "nfs-cp is missing (libnfs-utils)"
  capture 0 "$out/v4/v40-libnfs.pcap" libnfs_run
  if [ "$verify" -eq 1 ]; then
    ops=$(v4_ops "$out/v4/v40-libnfs.pcap")
    echo "== v40-libnfs.pcap: NFSv4 operation numbers and counts"
    echo "$ops"
    # SETCLIENTID(_CONFIRM), PUTROOTFH, LOOKUP, OPEN, WRITE, READ, READDIR, CLOSE.
    for o in 35 36 24 15 18 38 25 26 4; do
      echo "$ops" | awk -v o="$o" '$1 == o { f = 1 } END { exit !f }' ||
        die "v40-libnfs.pcap: no NFSv4 operation $o"
    done
    msg "v40-libnfs.pcap: the expected NFSv4.0 operations are present"
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
