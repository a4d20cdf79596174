#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-convert throughput benchmark (issue: "Foundation and tbbt-convert, part 1").
#
# Makes (or reuses) a capture of at least N NFS operations of real libnfs traffic
# against the lab server, and a -s 256 copy of it, then measures on each file, in the
# same run and page-cached: a bare libpcap read loop (the ceiling, bench/pcap-raw.c),
# tbbt-convert, `nfstrace -m stat` and tshark field extraction (what a user would pick
# instead).  Prints MB/s, calls/s, calls recognized and peak RSS for each, the ratios
# against the raw loop, and whether peak RSS grows with the capture's length (the
# first half of the capture converted alone).  Writes bench/out/convert-bench.json.
#
# tbbt-convert runs with its default thread count unless --threads is given; the number
# it used is printed.
#
#   bash bench/convert-bench.sh [--ops N] [--build DIR] [--reuse] [--no-peers] [--threads N]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
ops=500000 build=$top/build reuse=0 peers=1 threads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ops) ops=$2; shift ;;
    --build) build=$(cd "$2" && pwd); shift ;;
    --reuse) reuse=1 ;;
    --no-peers) peers=0 ;;
    --threads) threads=(--threads "$2"); shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "convert-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
out=$top/bench/out
mkdir -p "$out"
conv=$build/src/extract/tbbt-convert
raw=$build/bench/pcap-raw
[ -x "$conv" ] && [ -x "$raw" ] || { echo "convert-bench: build first (cmake --build $build)" >&2; exit 1; }

if [ $reuse -eq 0 ] || [ ! -s "$out/big.pcap" ]; then
  echo "convert-bench: recording a capture of >= $ops NFS operations (lab server)"
  # Several synchronous clients (one request in flight each, as libnfs's sync calls and
  # many applications do), reads and writes up to 32 KiB: every RPC starts its own TCP
  # segment, so the -s 256 copy still holds every call header.
  bash tools/make-captures.sh --build "$build" --out "$out/caps" --only v3-tcp --big "$ops" \
    --big-procs 8 --big-inflight 1 --big-max-io 32768 --no-verify > "$out/make-captures.log" 2>&1 || { tail -n 20 "$out/make-captures.log"; exit 1; }
  mv "$out/caps/big.pcap" "$out/big.pcap"
  mv "$out/caps/big-s256.pcap" "$out/big-s256.pcap"
  rm -rf "$out/caps"
fi

# time_cmd OUTFILE CMD...: runs CMD, writes "seconds maxrss_kb" to OUTFILE.
time_cmd() {
  local f=$1; shift
  /usr/bin/time -f "%e %M" -o "$f" "$@"
}

tshark_d=(-d tcp.port==2049,rpc -d udp.port==2049,rpc)
# The truth: NFS calls in the full capture, counted by tshark (independent decoder).
if [ ! -s "$out/truth.txt" ] || [ $reuse -eq 0 ]; then
  # A frame may carry several RPCs: bench/tshark-calls.py counts each message.
  tshark -n -r "$out/big.pcap" "${tshark_d[@]}" -T fields -e rpc.msgtyp -e rpc.program \
    -Y 'rpc.program == 100003' 2>/dev/null | python3 bench/tshark-calls.py > "$out/truth.txt"
fi
truth=$(cat "$out/truth.txt")

# Half of the capture, to see whether peak RSS grows with the capture's length.
packets=$(capinfos -c -M "$out/big.pcap" | awk '/Number of packets/ {print $NF}')
editcap -F pcap -r "$out/big.pcap" "$out/half.pcap" "1-$((packets / 2))" >/dev/null

results=()
for name in big big-s256; do
  f=$out/$name.pcap
  cat "$f" > /dev/null            # page-cache it: every tool reads from memory
  size=$(stat -L -c %s "$f")
  time_cmd "$out/t.raw" "$raw" "$f" > "$out/raw.json"
  time_cmd "$out/t.conv" "$conv" -q "${threads[@]}" --summary-json "$out/$name.json" -o "$out/$name.tbbt" "$f"
  conv_calls=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['nfs_calls'])" "$out/$name.json")
  row="$name $size $(cat "$out/t.raw") $(cat "$out/t.conv") $conv_calls"
  if [ $peers -eq 1 ]; then
    (cd "$out" && rm -rf nfstrace && mkdir nfstrace && cd nfstrace &&
     time_cmd ../t.nfst nfstrace -m stat -I "$f" -a /usr/lib/nfstrace/libbreakdown.so > ../nfst.txt 2>&1) || true
    nfst_calls=$(awk '/^NFS v3 protocol/ {getline; gsub(/[^0-9]/, "", $3); print $3; exit}' "$out/nfst.txt")
    # What a user would run: per-call fields of the NFS calls, written to a file.
    time_cmd "$out/t.tsh" sh -c "tshark -n -r '$f' ${tshark_d[*]} -T fields -e rpc.msgtyp -e rpc.program -e rpc.xid -e nfs.procedure_v3 -Y 'rpc.msgtyp == 0 && rpc.program == 100003' 2>/dev/null > '$out/tshark.txt'"
    tsh_calls=$(python3 bench/tshark-calls.py < "$out/tshark.txt")
    row="$row $(cat "$out/t.nfst") ${nfst_calls:-0} $(cat "$out/t.tsh") $tsh_calls"
  fi
  results+=("$row")
done
time_cmd "$out/t.half" "$conv" -q "${threads[@]}" --summary-json "$out/half.json" -o "$out/half.tbbt" "$out/half.pcap"

python3 - "$truth" "$peers" "$(cat "$out/t.half")" "${results[@]}" <<'PY' | tee "$out/convert-bench.txt"
import json, sys
truth, peers = int(sys.argv[1]), sys.argv[2] == "1"
half_s, half_kb = map(float, sys.argv[3].split())
rows, report = sys.argv[4:], {"nfs_calls_in_capture": truth, "files": {}}
print("NFS calls in the capture (tshark, full snap length): %d" % truth)
threads = json.load(open("bench/out/big.json")).get("threads", 1)
report["tbbt_convert_threads"] = threads
print("tbbt-convert threads: %d" % threads)
hdr = "%-9s %-20s %9s %11s %10s %9s %8s" % ("file", "tool", "MB/s", "calls/s", "recognized", "RSS MB", "vs raw")
print(hdr); print("-" * len(hdr))
for row in rows:
    v = row.split()
    name, size = v[0], int(v[1])
    raw_s, raw_kb, conv_s, conv_kb, conv_calls = float(v[2]), float(v[3]), float(v[4]), float(v[5]), int(v[6])
    raw_s, conv_s = max(raw_s, 0.01), max(conv_s, 0.01)
    tools = [("pcap raw loop", raw_s, raw_kb, None), ("tbbt-convert", conv_s, conv_kb, conv_calls)]
    if peers:
        tools += [("nfstrace -m stat", max(float(v[7]), 0.01), float(v[8]), int(v[9])),
                  ("tshark fields", max(float(v[10]), 0.01), float(v[11]), int(v[12]))]
    report["files"][name] = {}
    for tool, s, kb, calls in tools:
        rec = calls if calls is not None else truth
        d = {"seconds": s, "mb_per_s": size / 1e6 / s, "calls_per_s": rec / s,
             "calls_recognized": calls, "recognized_share": None if calls is None else calls / truth,
             "peak_rss_mb": kb / 1024, "throughput_vs_raw": raw_s / s}
        report["files"][name][tool] = d
        print("%-9s %-20s %9.0f %11.0f %10s %9.1f %8.2f" % (name, tool, d["mb_per_s"], d["calls_per_s"],
              "-" if calls is None else "%.1f%%" % (100.0 * calls / truth), d["peak_rss_mb"], d["throughput_vs_raw"]))
# the passes of tbbt-convert (issue "tbbt-convert, part 2"): pass A (capture -> raw trace)
# against the raw loop, pass B (IDs, map, correction), objects and RSS per live object
print("%-9s %12s %14s %14s %10s %12s %12s" % ("file", "pass A s", "A vs raw", "pass B s",
      "objects", "calls/s e2e", "RSS/object"))
for row in rows:
    v = row.split()
    name = v[0]
    s = json.load(open("bench/out/%s.json" % name))
    ps = s.get("pass_seconds", {})
    a, b_ = ps.get("read", 0) or 0.01, ps.get("hierarchy", 0)
    objs = max(s.get("objects", 0), 1)
    base = 8.0e6            # what a conversion of a tiny capture takes (buffers, tables)
    per_obj = max(s["peak_rss_bytes"] - base, 0) / objs
    e2e = s["rpc_calls"] / max(s["elapsed_seconds"], 0.001)
    report["files"][name]["passes"] = {"pass_a_s": a, "pass_a_vs_raw": float(v[2]) / a,
                                       "pass_b_s": b_, "objects": s.get("objects"),
                                       "calls_per_s_end_to_end": e2e,
                                       "rss_bytes_per_object": per_obj,
                                       "replay_failures": s.get("replay_failures"),
                                       "corrective_ops": s.get("corrective_ops")}
    print("%-9s %12.2f %14.2f %14.2f %10d %12.0f %12.0f" % (name, a, float(v[2]) / a, b_, objs,
          e2e, per_obj))
print("(RSS/object here is dominated by fixed costs: few objects; bench/hier-scale.sh measures "
      "it over 200k-2M objects)")
full_kb = float(rows[0].split()[5])
report["rss_full_over_half"] = full_kb / half_kb
print("tbbt-convert peak RSS, full capture / first half: %.2f (1.00 = does not grow with length)" % (full_kb / half_kb))
print("targets: throughput vs raw >= 0.5; 100%% of calls recognized in both files; RSS ratio ~1;"
      " end to end >= 1,000,000 calls/s on one core, <= 300 bytes per live object")
json.dump(report, open("bench/out/convert-bench.json", "w"), indent=1)
PY
