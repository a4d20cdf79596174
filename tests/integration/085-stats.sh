#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-stats on the committed captures (converted with tbbt-convert first): text, --json
# (keys and invariants checked with python3), --plot (PNG and SVG non-empty),
# --latency-from, a truncated trace (exit 1, one line) and bad options (exit 2); and, if
# the build has tbbt-synth, a synthetic sequential trace whose reads must be sequential.
# No server needed.
#   085-stats.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stats="$build/src/stats/tbbt-stats"
convert="$build/src/extract/tbbt-convert"
for t in "$stats" "$convert"; do
  [ -x "$t" ] || { echo "FAIL: $t is not built" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "FAIL: python3 is not installed" >&2; exit 1; }
fail() { echo "FAIL: $*" >&2; exit 1; }

check_json() {  # check_json FILE: keys and invariants of the --json document
  python3 - "$1" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
need = ["tool", "version", "trace", "records", "time", "op_mix", "rate", "clients",
        "sequentiality", "temperature", "sharing", "concurrency"]
missing = [k for k in need if k not in d]
assert not missing, f"missing keys {missing}"
assert d["tool"] == "tbbt-stats"
rec = d["records"]
for k in ["total", "nfs", "mount", "other", "no_call", "files", "clients"]:
    assert isinstance(rec[k], int), k
mix = d["op_mix"]
assert sum(p["count"] for p in mix["procedures"]) + mix["other"] == rec["total"]
assert abs(sum(p["share"] for p in mix["procedures"]) - 1) < 1e-3 or mix["other"]
for p in mix["procedures"]:
    assert set(p) >= {"name", "prog", "proc", "count", "share"}
rate = d["rate"]
assert rate["interval_seconds"] > 0 and rate["intervals"] == len(rate["ops_per_second"])
binned = sum(rate["ops_per_second"]) * rate["interval_seconds"] + rate["out_of_range"]
assert abs(binned - rec["total"]) < 1e-3 * rec["total"] + 1
assert sum(c["ops"] for c in d["clients"]) == rec["total"]
for kind in ["read", "write"]:
    s = d["sequentiality"][kind]
    for k in ["accesses", "bytes", "sequential", "sequential_share", "runs", "runs_from_zero",
              "sequential_incl_start_share", "mean_run_ops", "mean_run_bytes", "max_run_ops",
              "max_run_bytes", "run_ops", "run_bytes"]:
        assert k in s, f"sequentiality.{kind}.{k}"
    assert s["sequential"] + s["runs"] == s["accesses"]
    assert sum(b["accesses"] for b in s["run_ops"]) == s["accesses"]
    assert sum(b["runs"] for b in s["run_ops"]) == s["runs"]
    assert sum(b["bytes"] for b in s["run_bytes"]) == s["bytes"]
t = d["temperature"]
for k in ["files", "unsized", "max", "median", "top", "curve", "hot_set"]:
    assert k in t, f"temperature.{k}"
temps = [x["temperature"] for x in t["top"]]
assert temps == sorted(temps, reverse=True)
for x in t["top"]:
    assert abs(x["temperature"] - x["bytes"] / x["size"]) < 1e-4 * x["temperature"] + 1e-9
hs = t["hot_set"]
for k in ["period_seconds", "top_k", "top_percent", "periods", "pairs", "mean_overlap_top_k",
          "mean_overlap_top_percent", "mean_persistence_top_k", "mean_persistence_top_percent"]:
    assert k in hs, f"hot_set.{k}"
for p in hs["pairs"]:
    for k in ["overlap_top_k", "overlap_top_percent", "persistence_top_k",
              "persistence_top_percent"]:
        assert 0 <= p[k] <= 1, k
sh = d["sharing"]
for k in ["objects", "objects_shared", "files", "files_shared", "data_files", "read_shared",
          "write_shared", "bytes_read_shared", "bytes_write_shared"]:
    assert k in sh, f"sharing.{k}"
c = d["concurrency"]
assert c["sim_ops"] == rec["nfs"] - rec["no_call"] or c["sim_ops"] == c["sim_ops_limit"]
assert c["latency_us"]["read"] > 0
res = c["results"]
assert [r["window"] for r in res] == [2 ** i for i in range(13)]
for r in res:
    assert r["conservative_ops"] > 0 and r["fsdep_ops"] > 0
    assert r["conservative_peak"] <= r["window"] and r["fsdep_peak"] <= r["window"]
# Window 1 is one request at a time for both policies.
assert abs(res[0]["conservative_ops"] - res[0]["fsdep_ops"]) < 1e-6 * res[0]["fsdep_ops"]
assert res[0]["fsdep_peak"] == 1
EOF
}

n=0
for cap in "$top"/traces/*.pcap "$top"/traces/*.pcapng; do
  [ -e "$cap" ] || continue
  name=$(basename "$cap")
  tr="$work/$name.tbbt"
  "$convert" -q -o "$tr" "$cap"
  "$stats" "$tr" > "$work/$name.txt"
  for sec in "Operation mix" "Rate" "Clients" "Sequentiality" "Temperature" \
             "Sharing between clients" "Concurrency simulation"; do
    grep -q "^$sec" "$work/$name.txt" || fail "$name: no '$sec' section in the text output"
  done
  "$stats" --json "$tr" > "$work/$name.json"
  check_json "$work/$name.json" || fail "$name: JSON check failed"
  n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "expected at least 3 committed captures, found $n"

# --plot: every figure as .dat, .gp, .png and .svg, none empty.
tr="$work/v3-tcp-mid.pcap.tbbt"
"$stats" "$tr" --plot "$work/plot" > /dev/null
for fig in rate mix rank-temperature runs hot-set concurrency; do
  for ext in dat gp png svg; do
    [ -s "$work/plot/$fig.$ext" ] || fail "--plot did not write a non-empty $fig.$ext"
  done
done
head -c 8 "$work/plot/rate.png" | od -An -c | grep -q 'P   N   G' || fail "rate.png is not a PNG"
grep -q '<svg' "$work/plot/concurrency.svg" || fail "concurrency.svg is not SVG"

# --latency-from a tbbt-play report, then --latency on top.
cat > "$work/report.json" <<'EOF'
{"run": {"order": "fsdep"}, "latency_us": {"all": {"count": 3, "mean_us": 5.0},
 "procedures": {"read": {"count": 2, "mean_us": 250.0},
                "getattr": {"count": 1, "mean_us": 50.5}}}}
EOF
"$stats" "$tr" --json --latency-from "$work/report.json" --latency write=7 --windows 1,8 \
    > "$work/lat.json"
python3 - "$work/lat.json" <<'EOF' || fail "--latency-from / --latency / --windows not applied"
import json, sys
c = json.load(open(sys.argv[1]))["concurrency"]
l = c["latency_us"]
assert (l["read"], l["getattr"], l["write"], l["v2.read"]) == (250, 50.5, 7, 250), l
assert [r["window"] for r in c["results"]] == [1, 8]
EOF

# A truncated trace: exit 1 and one line on stderr.
size=$(stat -c %s "$tr")
head -c $((size / 2)) "$tr" > "$work/trunc.tbbt"
set +e
"$stats" "$work/trunc.tbbt" > /dev/null 2> "$work/err"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "truncated trace: exit $rc, expected 1"
[ "$(wc -l < "$work/err")" -eq 1 ] ||
  fail "truncated trace: expected one line, got: $(cat "$work/err")"
grep -q '^tbbt-stats: ' "$work/err" || fail "truncated trace: message lacks the tool prefix"

# Bad options: exit 2.
for bad in "--windows 0" "--interval x" "--latency nosuchproc=1" "--top 0" "--no-such-option"; do
  set +e
  # shellcheck disable=SC2086
  "$stats" "$tr" $bad > /dev/null 2>&1; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'$bad': exit $rc, expected 2"
done

# A synthetic sequential read trace (tbbt-synth, when built): reads are sequential.
synth="$build/src/synth/tbbt-synth"
if [ -x "$synth" ]; then
  "$synth" -q --readers 3 --scale 1/64 -o "$work/syn.tbbt"
  "$stats" --json "$work/syn.tbbt" > "$work/syn.json"
  python3 - "$work/syn.json" <<'EOF' || fail "synthetic sequential trace: reads not sequential"
import json, sys
s = json.load(open(sys.argv[1]))["sequentiality"]["read"]
assert s["accesses"] > 100, s
assert s["sequential_incl_start_share"] > 0.999, s
assert s["sequential_share"] > 0.99, s
assert s["runs"] == 3, s
EOF
  echo "ok: synthetic sequential trace reads sequentially"
else
  echo "note: tbbt-synth is not built; synthetic check skipped"
fi
echo "ok: tbbt-stats on $n committed captures (text, JSON, plots, errors)"
