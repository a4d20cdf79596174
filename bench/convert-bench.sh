#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-convert throughput benchmark (issues "Foundation and tbbt-convert, part 1" and
# "part 2").
#
# Makes (or reuses) a capture of at least N NFS operations of real libnfs traffic
# against the lab server, and a -s 256 copy of it, then measures on each file, in the
# same run and page-cached: a bare libpcap read loop (the ceiling, bench/pcap-raw.c),
# tbbt-convert, `nfstrace -m stat` and tshark field extraction (what a user would pick
# instead).  Prints MB/s, calls/s, calls recognized and peak RSS for each, the ratios
# against the raw loop, tbbt-convert's pass A against the raw loop, its end-to-end
# rate on one core (--threads 1), and how peak RSS grows from the capture's first half
# to the whole (with the live objects, not the records).  Writes
# bench/out/convert-bench.json.
#
# This machine is noisy: the raw loop and tbbt-convert each run --repeat times (default
# 3), interleaved, and the fastest run of each is compared.  Earlier outputs are removed
# before each conversion, so no run pays for dropping the previous one's files.
# tbbt-convert runs with its default thread count unless --threads is given.
# --capture FILE converts FILE (and a -s 256 copy made with editcap) instead of recording
# a capture on the lab server.
#
# A/B against a baseline build (bench/baseline.sh: --baseline-build DIR, --baseline-src
# DIR or --baseline-rev REV): the baseline's tbbt-convert converts each file as often as
# the new one, interleaved with it (the order swapped every turn), with the same options;
# prints "new/old throughput X.XX (target >= 0.97), CPU per op new/old Y.YY (target <=
# 1.03)" per file and over both, and writes the key "baseline_comparison" (bench/ab.py)
# into the JSON: throughput is the calls of the fastest run over its wall time, CPU per
# operation the lowest user + system time of the runs over the calls.
#
#   bash bench/convert-bench.sh [--ops N] [--build DIR] [--reuse] [--no-peers] [--threads N]
#                               [--repeat N] [--capture FILE] [--baseline-build DIR |
#                               --baseline-src DIR | --baseline-rev REV]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
ops=500000 build=$top/build reuse=0 peers=1 threads=() repeat=3 capture=""
bl_build="" bl_src="" bl_rev=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ops) ops=$2; shift ;;
    --build) build=$(cd "$2" && pwd); shift ;;
    --reuse) reuse=1 ;;
    --no-peers) peers=0 ;;
    --threads) threads=(--threads "$2"); shift ;;
    --repeat) repeat=$2; shift ;;
    --capture) capture=$(readlink -f "$2"); shift ;;
    --baseline-build) bl_build=$2; shift ;;
    --baseline-src) bl_src=$2; shift ;;
    --baseline-rev) bl_rev=$2; shift ;;
    -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "convert-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
out=$top/bench/out
mkdir -p "$out"
conv=$build/src/extract/tbbt-convert
raw=$build/bench/pcap-raw
[ -x "$conv" ] && [ -x "$raw" ] || { echo "convert-bench: build first (cmake --build $build)" >&2; exit 1; }
. "$top/bench/baseline.sh"
baseline_resolve convert-bench "$top" "$bl_build" "$bl_src" "$bl_rev"
base_conv=""
if [ -n "$base_build" ]; then
  base_conv=$base_build/src/extract/tbbt-convert
  [ -x "$base_conv" ] || { echo "convert-bench: no $base_conv (build the baseline first)" >&2; exit 1; }
  ab_new_json=$out/ab-new-build.json ab_old_json=$out/ab-old-build.json
  builds_show convert-bench "$build" "$base_build"
fi

if [ -n "$capture" ]; then
  [ -s "$capture" ] || { echo "convert-bench: --capture $capture: no such capture" >&2; exit 2; }
  # Through temporaries, so that --capture may name one of the bench's own copies
  # (bench/out/big.pcap) without editcap truncating the file it reads.
  editcap -F pcap "$capture" "$out/big.pcap.tmp" >/dev/null
  editcap -F pcap -s 256 "$capture" "$out/big-s256.pcap.tmp" >/dev/null
  mv "$out/big.pcap.tmp" "$out/big.pcap"
  mv "$out/big-s256.pcap.tmp" "$out/big-s256.pcap"
  reuse=0                          # count the truth of this capture
elif [ $reuse -eq 0 ] || [ ! -s "$out/big.pcap" ]; then
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

# time_cmd OUTFILE CMD...: runs CMD, writes "seconds maxrss_kb cpu_seconds" to OUTFILE
# (bench/rusage.py: wall time to the nanosecond, CPU time to the microsecond; /usr/bin/time
# counts hundredths, too coarse for the raw loop's 0.08 s and for CPU per operation on
# small captures).  Fails as CMD fails.
time_cmd() {
  local f=$1 rc=0; shift
  python3 "$top/bench/rusage.py" "$f.t" "$@" || rc=$?
  awk '{printf "%.4f %s %.6f\n", $1, $2, $3 + $4}' "$f.t" > "$f"
  rm -f "$f.t"
  return $rc
}

# keep_best BEST TRY [JSON]: TRY becomes BEST (and JSON.try JSON) if BEST is missing or slower.
keep_best() {
  if [ ! -s "$1" ] || awk -v a="$(cut -d' ' -f1 "$2")" -v b="$(cut -d' ' -f1 "$1")" 'BEGIN {exit !(a < b)}'; then
    cp "$2" "$1"
    [ -z "${3:-}" ] || cp "$3.try" "$3"
  fi
}

# convert_best N NAME INPUT THREADS...: N more conversions by $use (default $conv); the
# fastest so far goes to $out/NAME.* (its time to t.NAME), the fastest pass A so far to
# $out/a.NAME (runs that have a fast whole do not always have the fastest pass A); each
# run's "seconds cpu_seconds nfs_calls" is appended to runs.NAME.  fresh NAME starts anew.
fresh() { rm -f "$out/t.$1" "$out/a.$1" "$out/runs.$1"; }
convert_best() {
  local n=$1 name=$2 in=$3 use=${use:-$conv}; shift 3
  for _ in $(seq "$n"); do
    rm -f "$out/$name.tbbt" "$out/$name.tbbt.map"
    time_cmd "$out/t.try" "$use" -q "$@" --summary-json "$out/$name.json.try" -o "$out/$name.tbbt" "$in"
    keep_best "$out/t.$name" "$out/t.try" "$out/$name.json"
    echo "$(cut -d' ' -f1,3 "$out/t.try") $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['nfs_calls'])" \
      "$out/$name.json.try")" >> "$out/runs.$name"
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['pass_seconds']['read'])" \
      "$out/$name.json.try" > "$out/a.try"
    keep_best "$out/a.$name" "$out/a.try"
  done
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
  rm -f "$out/t.raw" "$out/t.rawin"
  fresh "$name"; fresh "$name-old"
  for i in $(seq "$repeat"); do   # interleaved: both see the same machine
    time_cmd "$out/t.try" "$raw" "$f" > "$out/raw.json"
    keep_best "$out/t.raw" "$out/t.try"
    # the loop's own time (open to last packet), to set beside pass A's own time
    python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" "$out/raw.json" > "$out/t.try"
    keep_best "$out/t.rawin" "$out/t.try"
    # one each turn: $repeat in all; with a baseline, old and new in turn, the old first
    # every other turn
    [ -z "$base_conv" ] || [ $((i % 2)) -eq 1 ] || use=$base_conv convert_best 1 "$name-old" "$f" "${threads[@]}"
    convert_best 1 "$name" "$f" "${threads[@]}"
    [ -z "$base_conv" ] || [ $((i % 2)) -eq 0 ] || use=$base_conv convert_best 1 "$name-old" "$f" "${threads[@]}"
  done
  rm -f "$out/$name-old.tbbt" "$out/$name-old.tbbt.map"
  # one core: the whole conversion (passes A and B) on one thread
  fresh "$name-1t"
  convert_best "$repeat" "$name-1t" "$f" --threads 1
  conv_calls=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['nfs_calls'])" "$out/$name.json")
  row="$name $size $(cut -d' ' -f1,2 "$out/t.raw") $(cut -d' ' -f1,2 "$out/t.$name") $conv_calls"
  row="$row $(cat "$out/t.$name-1t") $(cat "$out/t.rawin") $(cat "$out/a.$name")"
  results+=("$row")
done
fresh half
convert_best "$repeat" half "$out/half.pcap" "${threads[@]}"

# The peers last: tshark's and nfstrace's hundreds of MB, once freed, would leave the
# conversions measured after them with pages the VM has to fault in afresh.
if [ $peers -eq 1 ]; then
  for i in 0 1; do
    name=${results[$i]%% *}
    f=$out/$name.pcap
    cat "$f" > /dev/null
    row=${results[$i]}
    (cd "$out" && rm -rf nfstrace && mkdir nfstrace && cd nfstrace &&
     time_cmd ../t.nfst nfstrace -m stat -I "$f" -a /usr/lib/nfstrace/libbreakdown.so > ../nfst.txt 2>&1) || true
    nfst_calls=$(awk '/^NFS v3 protocol/ {getline; gsub(/[^0-9]/, "", $3); print $3; exit}' "$out/nfst.txt")
    # What a user would run: per-call fields of the NFS calls, written to a file.
    time_cmd "$out/t.tsh" sh -c "tshark -n -r '$f' ${tshark_d[*]} -T fields -e rpc.msgtyp -e rpc.program -e rpc.xid -e nfs.procedure_v3 -Y 'rpc.msgtyp == 0 && rpc.program == 100003' 2>/dev/null > '$out/tshark.txt'"
    tsh_calls=$(python3 bench/tshark-calls.py < "$out/tshark.txt")
    row="$row $(cut -d' ' -f1,2 "$out/t.nfst") ${nfst_calls:-0} $(cut -d' ' -f1,2 "$out/t.tsh") $tsh_calls"
    results[$i]=$row
  done
fi

python3 - "$truth" "$peers" "$repeat" "$(cat "$out/t.half")" "${results[@]}" <<'PY' | tee "$out/convert-bench.txt"
import json, sys
truth, peers, repeat = int(sys.argv[1]), sys.argv[2] == "1", int(sys.argv[3])
half_s, half_kb = map(float, sys.argv[4].split()[:2])
rows, report = sys.argv[5:], {"nfs_calls_in_capture": truth, "repeat": repeat, "files": {}}
print("NFS calls in the capture (tshark, full snap length): %d" % truth)
threads = json.load(open("bench/out/big.json")).get("threads", 1)
report["tbbt_convert_threads"] = threads
print("tbbt-convert threads: %d; each figure is the fastest of %d runs" % (threads, repeat))
hdr = "%-9s %-20s %9s %11s %10s %9s %8s" % ("file", "tool", "MB/s", "calls/s", "recognized", "RSS MB", "vs raw")
print(hdr); print("-" * len(hdr))
for row in rows:
    v = row.split()
    name, size = v[0], int(v[1])
    raw_s, raw_kb, conv_s, conv_kb, conv_calls = float(v[2]), float(v[3]), float(v[4]), float(v[5]), int(v[6])
    raw_s, conv_s = max(raw_s, 0.01), max(conv_s, 0.01)
    tools = [("pcap raw loop", raw_s, raw_kb, None), ("tbbt-convert", conv_s, conv_kb, conv_calls)]
    if peers:
        tools += [("nfstrace -m stat", max(float(v[12]), 0.01), float(v[13]), int(v[14])),
                  ("tshark fields", max(float(v[15]), 0.01), float(v[16]), int(v[17]))]
    report["files"][name] = {}
    for tool, s, kb, calls in tools:
        rec = calls if calls is not None else truth
        d = {"seconds": s, "mb_per_s": size / 1e6 / s, "calls_per_s": rec / s,
             "calls_recognized": calls, "recognized_share": None if calls is None else calls / truth,
             "peak_rss_mb": kb / 1024, "throughput_vs_raw": raw_s / s}
        report["files"][name][tool] = d
        print("%-9s %-20s %9.0f %11.0f %10s %9.1f %8.2f" % (name, tool, d["mb_per_s"], d["calls_per_s"],
              "-" if calls is None else "%.1f%%" % (100.0 * calls / truth), d["peak_rss_mb"], d["throughput_vs_raw"]))
# The passes (issue "tbbt-convert, part 2"): pass A (capture -> records) against the raw
# loop with the default threads, each timed by itself (open to end, no process start); then the whole conversion on one thread (--threads 1):
# calls per second of wall time and of CPU time (user + system).
print()
print("%-9s %9s %9s %9s %9s %12s %12s %10s" % ("file", "pass A s", "A vs raw", "pass B s",
      "1-core s", "calls/s 1c", "calls/cpu-s", "objects"))
for row in rows:
    v = row.split()
    name, raw_s = v[0], float(v[10])          # the raw loop's own time, as pass A's
    s = json.load(open("bench/out/%s.json" % name))
    one = json.load(open("bench/out/%s-1t.json" % name))
    one_wall, one_kb, one_cpu = float(v[7]), float(v[8]), float(v[9])
    ps = s.get("pass_seconds", {})
    a, b_ = float(v[11]) or 0.01, ps.get("hierarchy", 0)   # the fastest pass A of all runs
    calls = s["rpc_calls"]
    report["files"][name]["passes"] = {
        "pass_a_s": a, "pass_a_vs_raw": raw_s / a, "pass_b_s": b_,
        "one_core": {"seconds": one_wall, "cpu_seconds": one_cpu,
                     "calls_per_s": calls / max(one_wall, 0.001),
                     "calls_per_cpu_s": calls / max(one_cpu, 0.001),
                     "pass_a_s": one["pass_seconds"]["read"],
                     "pass_b_s": one["pass_seconds"]["hierarchy"], "peak_rss_mb": one_kb / 1024},
        "objects": s.get("objects"), "replay_failures": s.get("replay_failures"),
        "corrective_ops": s.get("corrective_ops")}
    print("%-9s %9.3f %9.2f %9.3f %9.3f %12.0f %12.0f %10d" % (name, a, raw_s / a, b_, one_wall,
          calls / max(one_wall, 0.001), calls / max(one_cpu, 0.001), s.get("objects", 0)))
# Peak RSS against the first half of the capture: what grows is the live objects.
big = json.load(open("bench/out/big.json"))
half = json.load(open("bench/out/half.json"))
full_kb = float(rows[0].split()[5])
d_obj = big["objects"] - half["objects"]
per_added = (full_kb - half_kb) * 1024 / d_obj if d_obj > 0 else float("nan")
report["rss_full_over_half"] = full_kb / half_kb
report["rss_growth"] = {"half_records": half["records"], "full_records": big["records"],
                        "half_objects": half["objects"], "full_objects": big["objects"],
                        "half_peak_rss_mb": half_kb / 1024, "full_peak_rss_mb": full_kb / 1024,
                        "rss_bytes_per_added_object": per_added}
print()
print("peak RSS: first half %.1f MB (%d records, %d objects), whole %.1f MB (%d records, %d objects):"
      " ratio %.2f, %.0f bytes per added object" % (half_kb / 1024, half["records"], half["objects"],
      full_kb / 1024, big["records"], big["objects"], full_kb / half_kb, per_added))
print("(bench/hier-scale.sh measures RSS per live object over 200k-2M objects, and with the"
      " records multiplied over the same objects)")
print("targets: pass A vs raw >= 0.5; 100% of calls recognized in both files; RSS growing with"
      " live objects, not records; >= 1,000,000 calls/s on one core end to end; <= 300 bytes per live object")
json.dump(report, open("bench/out/convert-bench.json", "w"), indent=1)
PY

[ -n "$base_conv" ] || exit 0
# A/B: the new build against the baseline, per file and over both (bench/ab.py).
python3 - "$out" "$repeat" <<'PY' | tee -a "$out/convert-bench.txt"
import json, os, sys
sys.path.insert(0, "bench")
import ab
out, repeat = sys.argv[1], int(sys.argv[2])
def best(name):
    runs = [tuple(map(float, l.split())) for l in open(os.path.join(out, "runs." + name)) if l.strip()]
    rate = max(calls / max(s, 1e-4) for s, cpu, calls in runs)
    cpu = min(cpu / calls * 1e6 for s, cpu, calls in runs if calls)
    return rate, cpu
cmp = {}
for name in ("big", "big-s256"):
    (nr, nc), (orr, oc) = best(name), best(name + "-old")
    cmp[name] = ab.comparison(nr, orr, nc, oc, repeat)
path = os.path.join(out, "convert-bench.json")
report = json.load(open(path))
report["baseline_comparison"] = ab.summary(cmp, os.path.join(out, "ab-new-build.json"),
                                           os.path.join(out, "ab-old-build.json"))
json.dump(report, open(path, "w"), indent=1)
PY
