#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# capture-workload.sh: one capture of real-looking NFS clients (tools/nfs-workload)
# against the lab server, with snapshots of the export before and after.
#
# In one run, into --out DIR:
#   1. nfs-workload setup builds the site's tree in the (empty) export: not captured,
#      it is the initial image a replay starts from;
#   2. before.snap: tools/tree-snap.py snapshot of the export directory;
#   3. tcpdump -i lo -s 0 -B 262144 -U -w capture.pcap 'port 2049 or port 20048 or
#      port 111' ('port 2049' with --port-only: no MOUNT or portmapper traffic, as some
#      sites capture), started and listening before the clients;
#   4. nfs-workload run (--json nfs-workload.json), then 2 s for libpcap's last block,
#      then tcpdump stops;
#   5. after.snap;
#   6. tshark checks the capture (every NFS call has its reply) and counts it; workload.json
#      is nfs-workload's report plus a "capture" object (packets, duration, NFS calls and
#      calls/s, procedure mix) and each client's NFS calls (matched by its TCP port).
#
# Why it must run inside a lab: it reads the export as a local directory (the lab's VFS
# backend exports STATEDIR/mnt/export; the MEM backend has nothing on disk), it captures
# on loopback by the lab's fixed ports (111, 2049, 20048), and it takes the server from
# `tools/tbbt-lab env`.  Run it inside tools/lab-ns so that those ports, and loopback's
# traffic, belong to this lab alone while other labs run on the machine:
#
#   tools/lab-ns --dir /var/tmp/tbbt-lab-wl -- bash -c 'tools/tbbt-lab start -q --size 1G &&
#       tools/capture-workload.sh --mix mail --out /var/tmp/tbbt-captures/mail;
#       rc=$?; tools/tbbt-lab stop -q; exit $rc'
#
# or with --start-lab, which starts the lab (a fresh image) and stops it at the end:
#
#   tools/lab-ns --dir /var/tmp/tbbt-lab-wl -- tools/capture-workload.sh --start-lab --mix mail
#
# Needs root (tcpdump), tcpdump, tshark, python3.  Exit codes: 0 success,
# 1 failure, 2 usage error.  See docs/lab.md.
set -euo pipefail

readonly PROG=capture-workload.sh
readonly FULL_FILTER='port 2049 or port 20048 or port 111'
readonly PORT_FILTER='port 2049'
# libnfs binds a reserved source port, which tshark may take for another protocol
# (705 is AgentX): make it decode the lab ports as ONC RPC.
readonly TSHARK_DECODE=(-d tcp.port==2049,rpc -d tcp.port==20048,rpc -d tcp.port==111,rpc)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

msg() { echo "$PROG: $*" >&2; }
die() { echo "$PROG: $*" >&2; exit 1; }
usage_die() { echo "$PROG: $* (try --help)" >&2; exit 2; }

usage() {
  cat <<EOF
Usage: $PROG --mix mail|home|mixed [--clients K] [--ops N] [--seconds T] [--users U]
       [--seed S] [--think-us U] [--subdir-mounts P] [--scale F] [--out DIR]
       [--port-only] [--build DIR] [--start-lab] [--lab-size SIZE]
Captures tools/nfs-workload against the running lab (see docs/lab.md); run it inside
tools/lab-ns.
  --mix M            the client mix (required)
  --clients K        clients (default 8)
  --ops N            operations per client (default 1000)
  --seconds T        bound on the run's duration (default none)
  --users U          users of the site (default 12)
  --seed S           seed of the tree and of the clients (default 1)
  --think-us U       mean think time between a client's operations (default 0)
  --subdir-mounts P  fraction of clients mounting a subdirectory (default 0.3)
  --scale F          size of the tree (nfs-workload setup --scale, default 1)
  --out DIR          output directory (default ./capture-MIX)
  --port-only        capture 'port 2049' only (no MOUNT, no portmapper)
  --build DIR        build tree holding tools/nfs-workload (default $root/build)
  --start-lab        start the lab (tbbt-lab start) and stop it at the end
  --lab-size SIZE    image size with --start-lab (default 1G)
  -h, --help         this text
Writes DIR/capture.pcap, before.snap, after.snap, nfs-workload.json, workload.json.
EOF
}

mix="" clients=8 ops=1000 seconds="" users=12 seed=1 think=0 subdir=0.3 scale=1
out="" port_only=0 build="$root/build" start_lab=0 lab_size=1G
while [ $# -gt 0 ]; do
  case "$1" in
    --mix) mix=${2:-}; shift ;;
    --clients) clients=${2:-}; shift ;;
    --ops) ops=${2:-}; shift ;;
    --seconds) seconds=${2:-}; shift ;;
    --users) users=${2:-}; shift ;;
    --seed) seed=${2:-}; shift ;;
    --think-us) think=${2:-}; shift ;;
    --subdir-mounts) subdir=${2:-}; shift ;;
    --scale) scale=${2:-}; shift ;;
    --out) out=${2:-}; shift ;;
    --port-only) port_only=1 ;;
    --build) build=${2:-}; shift ;;
    --start-lab) start_lab=1 ;;
    --lab-size) lab_size=${2:-}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage_die "unknown argument '$1'" ;;
  esac
  [ $# -gt 0 ] || usage_die "option needs a value"
  shift
done
case "$mix" in mail | home | mixed) ;; "") usage_die "--mix is required" ;;
  *) usage_die "unknown --mix '$mix' (mail, home or mixed)" ;; esac
[[ "$clients" =~ ^[1-9][0-9]*$ && "$ops" =~ ^[0-9]+$ && "$users" =~ ^[1-9][0-9]*$ ]] ||
  usage_die "--clients, --ops and --users must be whole numbers"
[[ "$seed" =~ ^-?[0-9]+$ ]] || usage_die "bad --seed '$seed'"
[[ -z "$seconds" || "$seconds" =~ ^[0-9.]+$ ]] || usage_die "bad --seconds '$seconds'"
[[ "$think$subdir$scale" =~ ^[0-9.]+$ ]] || usage_die "bad --think-us, --subdir-mounts or --scale"
out=${out:-./capture-$mix}

workload="$build/tools/nfs-workload"
[ -x "$workload" ] || die "no nfs-workload at $workload (build it, or give --build)"
for t in tcpdump tshark python3; do
  command -v "$t" >/dev/null || die "$t is missing (tools/install-deps.sh)"
done
[ "$(id -u)" -eq 0 ] || die "must run as root (tcpdump on lo, AUTH_SYS as any user)"

# ------------------------------------------------------------------ lab

# shellcheck source=tools/capture-lib.sh
. "$here/capture-lib.sh"
lab_started=0
work=$(mktemp -d /tmp/capture-workload.XXXXXX)

cleanup() {
  capture_stop 0 || true
  if [ "$lab_started" -eq 1 ]; then
    "$here/tbbt-lab" -q stop || msg "tbbt-lab stop failed"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$start_lab" -eq 1 ]; then
  lab_started=1
  "$here/tbbt-lab" -q start --size "$lab_size" >/dev/null || die "cannot start the lab"
fi
lab_env=$("$here/tbbt-lab" env 2>/dev/null) ||
  die "no running lab (start one with tools/tbbt-lab start inside tools/lab-ns, or use --start-lab)"
eval "$lab_env"
[ "$TBBT_LAB_FSAL" = vfs ] || die "the lab must use the VFS backend (its export is read as a directory)"
[ -d "$TBBT_LAB_EXPORT" ] || die "the lab's export $TBBT_LAB_EXPORT is not a directory here"
url=$TBBT_LAB_URL

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/{capture.pcap,before.snap,after.snap,nfs-workload.json,workload.json}

# ------------------------------------------------------------------ setup, capture

msg "setup: $users users, scale $scale, seed $seed"
"$workload" setup "$url" --users "$users" --seed "$seed" --scale "$scale" >&2 ||
  die "nfs-workload setup failed"
sync
"$here/tree-snap.py" snap "$TBBT_LAB_EXPORT" -o "$out/before.snap"

filter=$FULL_FILTER
[ "$port_only" -eq 0 ] || filter=$PORT_FILTER
errf="$work/tcpdump.err"
capture_start "$out/capture.pcap" "$errf" 0 "$filter" || exit 1

run_args=(run "$url" --mix "$mix" --clients "$clients" --ops "$ops" --users "$users"
  --seed "$seed" --think-us "$think" --subdir-mounts "$subdir" --json "$out/nfs-workload.json")
[ -z "$seconds" ] || run_args+=(--seconds "$seconds")
msg "run: ${run_args[*]:2}"
run_rc=0
"$workload" "${run_args[@]}" -v >&2 || run_rc=$?
capture_stop || exit 1
[ "$run_rc" -eq 0 ] || die "nfs-workload run failed (exit $run_rc); the capture is in $out"
dropped=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$errf")
# tcpdump's own count of the packets it wrote.
packets=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$errf")
[ -n "$packets" ] || die "tcpdump did not report its packet count: $(tail -n 3 "$errf")"
[ "${dropped:-0}" -eq 0 ] || msg "warning: tcpdump: $dropped packets dropped by kernel"
sync
"$here/tree-snap.py" snap "$TBBT_LAB_EXPORT" -o "$out/after.snap"

# ------------------------------------------------------------------ checks, report

msg "checking the capture with tshark"
tshark -r "$out/capture.pcap" -q "${TSHARK_DECODE[@]}" -z rpc,srt,100003,3 >"$work/srt.txt" 2>/dev/null ||
  die "tshark cannot read the capture"
tshark -r "$out/capture.pcap" -n "${TSHARK_DECODE[@]}" -Y rpc -T fields -E separator=/t \
  -e frame.time_epoch -e tcp.srcport -e tcp.dstport -e rpc.msgtyp -e rpc.xid \
  >"$work/rpc.tsv" 2>/dev/null || die "tshark cannot read the capture"

commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
python3 - "$out" "$work" "$port_only" "${dropped:-0}" "$commit" "$packets" <<'PY'
import json, re, sys

out, work, port_only, dropped = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4])
commit, packets = sys.argv[5], int(sys.argv[6])
NFS, MOUNT, PMAP = 2049, 20048, 111

calls = {}        # (client port, xid) -> time, NFS calls
replies = set()
other = {MOUNT: 0, PMAP: 0}
times = []
for line in open(f"{work}/rpc.tsv"):
    f = line.rstrip("\n").split("\t")
    if len(f) < 5 or not f[1] or not f[2]:
        continue
    t, sport, dport = float(f[0]), int(f[1]), int(f[2])
    times.append(t)
    for typ, xid in zip(f[3].split(","), f[4].split(",")):
        if dport == NFS and typ == "0":
            calls[(sport, xid)] = t
        elif sport == NFS and typ == "1":
            replies.add((dport, xid))
        elif dport in other and typ == "0":
            other[dport] += 1

unanswered = [k for k in calls if k not in replies]
per_port = {}
for (port, _), _t in calls.items():
    per_port[port] = per_port.get(port, 0) + 1

procs = {}
for line in open(f"{work}/srt.txt"):
    m = re.match(r"\s*(\d+)\s+([A-Z_]+)\s+(\d+)\s", line)
    if m:
        procs[m.group(2)] = int(m.group(3))
srt_calls = sum(procs.values())

span = (max(calls.values()) - min(calls.values())) if calls else 0.0
first_pkt = min(times) if times else 0.0
last_pkt = max(times) if times else 0.0
report = json.load(open(f"{out}/nfs-workload.json"))
for c in report["per_client"]:
    c["nfs_calls"] = per_port.get(c["local_port"], 0)
ncalls = len(calls)
report["source_commit"] = commit
report["capture"] = {
    "file": "capture.pcap",
    "filter": "port 2049" if port_only else "port 2049 or port 20048 or port 111",
    "packets": packets,
    "duration_s": round(last_pkt - first_pkt, 6),
    "nfs_calls": ncalls,
    "nfs_replies_matched": ncalls - len(unanswered),
    "nfs_unanswered": len(unanswered),
    "nfs_call_span_s": round(span, 6),
    "nfs_calls_per_s": round(ncalls / span, 1) if span > 0 else 0.0,
    "nfs_calls_per_s_over_run": round(ncalls / report["duration_s"], 1) if report["duration_s"] > 0 else 0.0,
    "mount_calls": other[MOUNT],
    "portmap_calls": other[PMAP],
    "tcpdump_dropped": dropped,
    "procedures": procs,
    "procedures_pct": {p: round(100.0 * n / srt_calls, 2) for p, n in procs.items()} if srt_calls else {},
}
report["totals"]["nfs_calls"] = ncalls
json.dump(report, open(f"{out}/workload.json", "w"), indent=1)
open(f"{out}/workload.json", "a").write("\n")

c = report["capture"]
mix = ", ".join(f"{p} {v:.1f}%" for p, v in sorted(c["procedures_pct"].items(), key=lambda x: -x[1]))
print(f"capture-workload.sh: {c['packets']} packets in {c['duration_s']:.2f} s; {ncalls} NFS calls "
      f"({c['nfs_calls_per_s']:.0f}/s over {span:.2f} s), {c['mount_calls']} MOUNT, "
      f"{c['portmap_calls']} portmapper calls", file=sys.stderr)
print(f"capture-workload.sh: procedures: {mix}", file=sys.stderr)
problems = []
if unanswered:
    problems.append(f"{len(unanswered)} NFS calls without a reply")
if srt_calls != ncalls:
    problems.append(f"tshark paired {srt_calls} NFS calls, the capture holds {ncalls}")
if ncalls == 0:
    problems.append("no NFS calls captured")
for p in problems:
    print(f"capture-workload.sh: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
msg "done: $out (capture.pcap, before.snap, after.snap, workload.json)"
