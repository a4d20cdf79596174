#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A long fuzzing campaign outside CI: every libFuzzer target of tests/fuzz/ for a given
# time each (default one hour), seeded from tests/fuzz/corpus/<name>/ and from the corpus
# an earlier campaign left in OUT, then the corpus minimized (libFuzzer -merge=1) and
# kept in OUT for the next campaign.  Crashes, leaks, timeouts and out-of-memory inputs
# are kept in OUT/<name>/artifacts/; each must be fixed and its reproducer added to the
# target's corpus (tests/fuzz/corpus/<name>/) or to tests/regress/.
#
#   bash bench/fuzz-campaign.sh [--seconds S] [--cpu] [--targets a,b,...] [--parallel N]
#                               [--nice N] [--out DIR] [--build DIR] [--no-build]
#                               [--resume]
#
# --seconds S: each target's budget (default 3600), wall-clock time, or with --cpu the
#   CPU time the target process really got (user + system): on a shared machine a
#   target then runs until it has had S seconds of CPU, however long that takes, and is
#   stopped with SIGINT (libFuzzer then prints its statistics and exits normally).
# --resume: with --cpu, the CPU time an earlier campaign in OUT gave a target counts
#   towards S (kept in OUT/NAME/cpu_spent, updated while a target runs).
# A target may be paused (kill -STOP/-CONT) while a benchmark runs: a timeout or slow
#   unit that does not reproduce when its input is run alone again is moved to
#   artifacts/spurious/ and, with --cpu, fuzzing goes on.
# --nice N: run the targets at this nice level (default 0; 19 uses only idle CPU).
# --parallel N: targets run N at a time (default 1; at most the number of cores).
# --build DIR: the fuzzing build (default build-fuzz-campaign, made with clang and
#   -DTBBT_FUZZ=ON unless --no-build).
# Output: OUT (default bench/out/fuzz) holds per target corpus/, artifacts/, fuzz.log
# and merge.log, and the whole campaign's fuzz-campaign.json and a Markdown table
# (fuzz-campaign.md).  Exit status: 0 no finding, 1 a target found something or failed
# to run, 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

seconds=3600
targets=
parallel=1
out=$top/bench/out/fuzz
build=$top/build-fuzz-campaign
do_build=1
cpu_budget=0
nice_level=0
resume=0

usage() { sed -n '10,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --targets) targets=${2:?}; shift 2 ;;
    --parallel) parallel=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --cpu) cpu_budget=1; shift ;;
    --resume) resume=1; shift ;;
    --nice) nice_level=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "fuzz-campaign: unknown option '$1'" >&2; usage ;;
  esac
done
case $seconds$parallel in *[!0-9]*) echo "fuzz-campaign: --seconds and --parallel take integers" >&2; exit 2 ;; esac
[ "$seconds" -gt 0 ] && [ "$parallel" -gt 0 ] || { echo "fuzz-campaign: --seconds and --parallel must be positive" >&2; exit 2; }

say() { echo "fuzz-campaign: $*"; }

if [ $do_build -eq 1 ]; then
  command -v clang >/dev/null || { echo "fuzz-campaign: clang is needed (bash tools/install-deps.sh)" >&2; exit 1; }
  say "building the fuzz targets in $build"
  CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DTBBT_FUZZ=ON \
    -DTBBT_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j "$(nproc)" >/dev/null
fi

list=()
if [ -n "$targets" ]; then
  IFS=, read -r -a names <<<"$targets"
  for n in "${names[@]}"; do list+=("$build/tests/fuzz/fuzz-${n#fuzz-}"); done
else
  for f in "$build"/tests/fuzz/fuzz-*; do list+=("$f"); done
fi
for f in "${list[@]}"; do
  [ -x "$f" ] || { echo "fuzz-campaign: no fuzz target $f (build with -DTBBT_FUZZ=ON)" >&2; exit 1; }
done
mkdir -p "$out"

# One libFuzzer session of target $1 in $2 that may use the CPU budget less $3 seconds;
# sets session_cpu (CPU seconds it got) and returns libFuzzer's exit status (0 when the
# budget was spent).
session_cpu=0
fuzz_session() {
  local f=$1 dir=$2 prior=$3 rc=0
  # GNU time gives the CPU time the target really got (user + system, children too);
  # its last line (a first one says when the target exited non-zero).
  local wall=$seconds
  [ $cpu_budget -eq 1 ] && wall=$((seconds * 1000))
  nice -n "$nice_level" /usr/bin/time -f '%U %S' -o "$dir/cpu" \
    "$f" -max_total_time="$wall" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" >"$dir/fuzz.log" 2>&1 &
  local tpid=$! fpid= stopped=0
  if [ $cpu_budget -eq 1 ]; then
    # Watch the fuzzer's own CPU clock (/proc/PID/stat utime + stime, in clock ticks).
    local hz used
    hz=$(getconf CLK_TCK)
    while kill -0 "$tpid" 2>/dev/null; do
      sleep 5
      fpid=$(pgrep -P "$tpid" | head -n 1) || true
      [ -n "$fpid" ] || continue
      used=$(awk -v hz="$hz" '{ sub(/^.*\) /, ""); print int(($12 + $13) / hz) }' \
        "/proc/$fpid/stat" 2>/dev/null || echo 0)
      echo $((prior + used)) >"$dir/cpu_spent"
      if [ $((prior + used)) -ge "$seconds" ]; then kill -INT "$fpid" 2>/dev/null || true; stopped=1; break; fi
    done
  fi
  wait "$tpid" || rc=$?
  # libFuzzer exits 72 after the SIGINT sent above: the budget was spent, not a finding.
  [ "$stopped" -eq 1 ] && [ "$rc" -eq 72 ] && rc=0
  session_cpu=$(awk 'END { printf "%.0f", $1 + $2 }' "$dir/cpu" 2>/dev/null || echo 0)
  return "$rc"
}

# Run the newest KIND-* artifact (timeout or slow-unit) of target $1 in $2 alone again;
# when it finishes inside libFuzzer's limit it was a pause or a starved machine, not a
# slow input: it is moved to artifacts/spurious/ and the function returns 0.
recheck_slow() {
  local f=$1 dir=$2 kind=$3 t
  t=$(ls -t "$dir/artifacts" | grep -E "^$kind-" | head -n 1) || true
  [ -n "$t" ] || return 1
  timeout 60 "$f" -timeout=10 -rss_limit_mb=2048 "$dir/artifacts/$t" >"$dir/recheck.log" 2>&1 || return 1
  grep -q "Executed .* in [0-9]\{1,3\} ms" "$dir/recheck.log" || return 1
  mkdir -p "$dir/artifacts/spurious"
  mv "$dir/artifacts/$t" "$dir/artifacts/spurious/"
}

# One target: fuzz for $seconds, then minimize the corpus.  Writes OUT/NAME/result.json.
run_one() {
  local f=$1 name dir seeds before after t0 t1 cpu rc=0
  name=$(basename "$f"); name=${name#fuzz-}
  dir=$out/$name
  mkdir -p "$dir/corpus" "$dir/artifacts"
  rm -f "$dir"/fuzz.log.*
  seeds=$top/tests/fuzz/corpus/$name
  if [ -d "$seeds" ]; then cp -rn "$seeds"/. "$dir/corpus"/; fi
  before=$(find "$dir/corpus" -type f | wc -l)
  # Artifacts an earlier campaign left are not this campaign's findings.
  local had; had=$(ls "$dir/artifacts" 2>/dev/null | sort | tr '\n' ' ')
  t0=$(date +%s)
  # With --resume the CPU time earlier sittings spent on this target counts (they keep it
  # up to date in OUT/NAME/cpu_spent while they run, so a campaign killed midway resumes).
  cpu=0
  [ $resume -eq 1 ] && [ -s "$dir/cpu_spent" ] && cpu=$(cat "$dir/cpu_spent")
  local cpu0=$cpu
  local spurious=0 sessions=0
  while :; do
    sessions=$((sessions + 1)); rc=0
    fuzz_session "$f" "$dir" "$cpu" || rc=$?
    cpu=$((cpu + session_cpu)); echo "$cpu" >"$dir/cpu_spent"
    [ "$rc" -eq 0 ] && break
    # libFuzzer's -timeout is wall-clock time: a target paused (SIGSTOP, a suspended
    # laptop) or starved by a busy machine leaves a timeout artifact although its input is
    # fast.  Such an input is run alone again; if it finishes well inside the limit, it is
    # moved to artifacts/spurious/ and fuzzing goes on with the CPU budget left.
    [ $cpu_budget -eq 1 ] && [ "$rc" -eq 70 ] && [ "$cpu" -lt "$seconds" ] || break
    recheck_slow "$f" "$dir" "timeout" || break
    spurious=$((spurious + 1)); rc=0
    mv "$dir/fuzz.log" "$dir/fuzz.log.$sessions"
    say "$name: a timeout that does not reproduce (the target was paused or starved); fuzzing on, $cpu s CPU so far"
  done
  # Slow units (libFuzzer's -report_slow_units) are rechecked the same way.
  while recheck_slow "$f" "$dir" "slow-unit"; do spurious=$((spurious + 1)); done
  t1=$(date +%s)
  rm -rf "$dir/min"; mkdir -p "$dir/min"
  if "$f" -merge=1 -rss_limit_mb=2048 -timeout=10 "$dir/min" "$dir/corpus" >"$dir/merge.log" 2>&1; then
    rm -rf "$dir/corpus"; mv "$dir/min" "$dir/corpus"
  else
    rm -rf "$dir/min"
  fi
  after=$(find "$dir/corpus" -type f | wc -l)
  python3 - "$dir" "$name" "$seconds" "$((t1 - t0))" "$cpu" "$before" "$after" "$rc" "$spurious" "$sessions" "$had" "$((cpu - cpu0))" <<'PY'
import json, os, re, sys
d, name, budget, wall, cpu, before, after, rc, spurious, sessions, had, sitting = sys.argv[1:]
logs = [os.path.join(d, "fuzz.log.%d" % i) for i in range(1, int(sessions))]
log = "".join(open(p, errors="replace").read() for p in logs + [os.path.join(d, "fuzz.log")]
              if os.path.exists(p))
def stat(key, total=False):
    m = [int(v) for v in re.findall(r"^stat::%s:\s*(\d+)" % key, log, re.M)]
    return (sum(m) if total else m[-1]) if m else None
cov = re.findall(r"\bcov: (\d+) ft: (\d+)", log)
adir = os.path.join(d, "artifacts")
found = sorted(f for f in os.listdir(adir)
               if f not in had.split() and os.path.isfile(os.path.join(adir, f)))
json.dump({"target": name, "budget_s": int(budget), "wall_s": int(wall), "cpu_s": int(cpu),
           "cpu_s_this_sitting": int(sitting),
           "execs": stat("number_of_executed_units", True), "execs_per_s": stat("average_exec_per_sec"),
           "peak_rss_mb": max([int(v) for v in re.findall(r"^stat::peak_rss_mb:\s*(\d+)", log, re.M)] or [0]) or None,
           "cov": int(cov[-1][0]) if cov else None, "ft": int(cov[-1][1]) if cov else None,
           "corpus_before": int(before), "corpus_after_merge": int(after),
           "findings": found, "exit": int(rc),
           "sessions": int(sessions), "spurious_timeouts": int(spurious)},
          open(os.path.join(d, "result.json"), "w"), indent=1)
PY
  say "$name: $((t1 - t0)) s wall, $cpu s CPU, corpus $before -> $after, exit $rc"
}

say "${#list[@]} targets, $seconds s each, $parallel at a time, results in $out"
pids=()
for f in "${list[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_one "$f" &
  pids+=($!)
done
wait

python3 - "$out" "${list[@]}" <<'PY'
import json, os, sys
out, targets = sys.argv[1], sys.argv[2:]
rows = []
for f in targets:
    name = os.path.basename(f)[len("fuzz-"):]
    p = os.path.join(out, name, "result.json")
    rows.append(json.load(open(p)) if os.path.exists(p) else {"target": name, "exit": -1, "findings": ["no result"]})
json.dump(rows, open(os.path.join(out, "fuzz-campaign.json"), "w"), indent=1)
lines = ["| target | wall s | CPU s | execs | execs/s | cov | ft | corpus (merged) | peak RSS MB | findings |",
         "|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s -> %s | %s | %s |" % (
        r["target"], r.get("wall_s"), r.get("cpu_s"), r.get("execs"), r.get("execs_per_s"),
        r.get("cov"), r.get("ft"), r.get("corpus_before"), r.get("corpus_after_merge"),
        r.get("peak_rss_mb"), (", ".join(r["findings"]) or "0")
        + (" (%d spurious timeouts)" % r["spurious_timeouts"] if r.get("spurious_timeouts") else "")))
open(os.path.join(out, "fuzz-campaign.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
bad = [r["target"] for r in rows if r["findings"] or r.get("exit")]
if bad:
    print("fuzz-campaign: findings or failures in: " + ", ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
