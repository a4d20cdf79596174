#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tbbt-play benchmark (docs/tbbt-play.md): how close the player comes to a bare pipelined
# RPC loop, what it costs per operation, and how precisely it keeps a trace's timing.
# For each FSAL of the lab server (tools/tbbt-lab, NFS-Ganesha on loopback):
#  1. ceilings: bench/rpc-null NULL and GETATTR loops, pipelined and batched, the best of
#     four shapes (the player's calls in flight on one and on two connections, and two
#     connections with 32 and 16 in flight each);
#  2. full-speed replays (FS-dependency order) of synthetic traces
#     (bench/gen-play-trace.py): NULL only, GETATTR only, and a metadata-heavy mix
#     (getattr/lookup/read); ops/s, ratio to the NULL loop, the player's own CPU per
#     operation (user + sys of the tbbt-play process, bench/rusage.py), replay failures;
#  3. the mix replayed in timestamp mode at a rate the server sustains (--ts-rate, calls
#     1/R s apart in the trace, --speed 1): dispatch error p50 and p99.
# Targets: player CPU <= 5 us/op; NULL- and GETATTR-only replays >= 0.7 of the NULL loop;
# p99 dispatch error <= 200 us.  A missed target is reported, not an error.
# VFS: tbbt-init builds the images (bench-play-* in the export), then the server is
# restarted (nothing cached from the build).  MEM (tbbt-init cannot write there): each
# trace makes its own directory, files and data first (gen-play-trace.py --make-files),
# replayed with --image-root EXPORT.  Prints a table, writes OUT/play-bench.json.
#
#   bash bench/play-bench.sh [--reuse-lab] [--ops N] [--fsal vfs|mem|both] [--out DIR]
#                            [--quick] [--build DIR] [--connections N] [--max-outstanding K]
#                            [--batch B] [--recv-batch R] [--ts-rate R] [--seconds T]
#                            [--sweep] [--make-files] [--repeat N]
#                            [--baseline-build DIR | --baseline-src DIR | --baseline-rev REV]
# Player defaults: --connections 2 --max-outstanding 256 --batch 64 --recv-batch 64.
# --reuse-lab uses the lab running now (tools/tbbt-lab env) and never starts, restarts or
# stops it; only its FSAL is measured.  Without it the lab is started per FSAL
# (--size 2G) and stopped at the end.  --quick: 50000 operations, 3-second loops.
# --sweep also replays the NULL and GETATTR traces with --connections 1/2 x
# --max-outstanding 16/32/64 x --batch 8/16/32.  --make-files uses the MEM way on VFS too.
# Without --build the tree is built in build-bench/ (RelWithDebInfo, no tests).
# A/B against a baseline build (bench/baseline.sh): the baseline's rpc-null runs each
# ceiling shape right after the new one, and its tbbt-play replays the same traces and
# images (made by the new build: the conversion is the same) at full speed, new and old
# in turn, the order swapped every turn, --repeat times (default 3 with a baseline, else
# 1); the timestamp replay and the sweep are the new build's only.  Prints "new/old
# throughput X.XX (target >= 0.97), CPU per op new/old Y.YY (target <= 1.03)" per loop
# and trace and over all (bench/ab.py), and writes "baseline_comparison" in the JSON;
# the baseline's rows are in "rows" with "build": "old", out of the table and targets.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build="" reuse=0 ops=200000 fsal=both out=$top/bench/out quick=0 seconds=5
conns=2 kout=256 batch=64 recv_batch=64 ts_rate=5000 sweep=0 make_files=0 repeat=""
bl_build="" bl_src="" bl_rev=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reuse-lab) reuse=1 ;;
    --ops) ops=$2; shift ;;
    --fsal) fsal=$2; shift ;;
    --out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift ;;
    --quick) quick=1 ;;
    --build) build=$(cd "$2" && pwd); shift ;;
    --connections) conns=$2; shift ;;
    --max-outstanding) kout=$2; shift ;;
    --batch) batch=$2; shift ;;
    --recv-batch) recv_batch=$2; shift ;;
    --ts-rate) ts_rate=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --sweep) sweep=1 ;;
    --make-files) make_files=1 ;;
    --repeat) repeat=$2; shift ;;
    --baseline-build) bl_build=$2; shift ;;
    --baseline-src) bl_src=$2; shift ;;
    --baseline-rev) bl_rev=$2; shift ;;
    -h|--help) sed -n '3,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "play-bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
case "$fsal" in vfs|mem|both) ;; *) echo "play-bench: --fsal vfs, mem or both" >&2; exit 2 ;; esac
if [ $quick -eq 1 ]; then ops=50000; seconds=3; fi
[ "$(id -u)" -eq 0 ] || { echo "play-bench: needs root (lab server, images in its export)" >&2; exit 1; }
for t in python3 timeout; do
  command -v "$t" >/dev/null || { echo "play-bench: $t is not installed" >&2; exit 1; }
done
if [ -z "$build" ]; then
  build=$top/build-bench
  echo "play-bench: building in $build"
  cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBBT_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j2 >/dev/null
fi
play=$build/src/player/tbbt-play conv=$build/src/extract/tbbt-convert
init=$build/src/aging/tbbt-init rpcnull=$build/bench/rpc-null
for b in "$play" "$conv" "$init" "$rpcnull"; do
  [ -x "$b" ] || { echo "play-bench: $b not built (cmake --build $build)" >&2; exit 1; }
done
. "$top/bench/baseline.sh"
baseline_resolve play-bench "$top" "$bl_build" "$bl_src" "$bl_rev"
base_play="" base_rpcnull=""
if [ -n "$base_build" ]; then
  base_play=$base_build/src/player/tbbt-play base_rpcnull=$base_build/bench/rpc-null
  for b in "$base_play" "$base_rpcnull"; do
    [ -x "$b" ] || { echo "play-bench: $b not built (the baseline)" >&2; exit 1; }
  done
fi
[ -n "$repeat" ] || if [ -n "$base_build" ]; then repeat=3; else repeat=1; fi
lab=$top/tools/tbbt-lab
mkdir -p "$out"
work=$(mktemp -d /var/tmp/tbbt-play-bench.XXXXXX)
if [ -n "$base_build" ]; then
  ab_new_json=$work/ab-new-build.json ab_old_json=$work/ab-old-build.json
  builds_show play-bench "$build" "$base_build"
  echo "play-bench: new tbbt-play $play, old tbbt-play $base_play"
fi
tag=bench-play-$$
lab_ours=0 export_dir=""
cleanup() {
  if [ -n "$export_dir" ] && [ -d "$export_dir" ]; then
    rm -rf "$export_dir/$tag"-* 2>/dev/null || true
  fi
  [ $lab_ours -eq 0 ] || bash "$lab" stop -q || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "play-bench: $*"; }
die() { echo "play-bench: $*" >&2; exit 1; }

lab_env() {
  local v
  v=$(bash "$lab" env) || die "no lab server running (tools/tbbt-lab start)"
  eval "$v"
  export_dir=$TBBT_LAB_EXPORT
}

if [ $reuse -eq 1 ]; then
  lab_env
  if [ "$fsal" = both ]; then
    fsals=$TBBT_LAB_FSAL
  else
    [ "$fsal" = "$TBBT_LAB_FSAL" ] ||
      die "--reuse-lab: the running lab has fsal $TBBT_LAB_FSAL, not $fsal"
    fsals=$fsal
  fi
else
  if [ "$fsal" = both ]; then fsals="vfs mem"; else fsals=$fsal; fi
fi
rows=$work/rows.txt        # one JSON object per line
: > "$rows"

# gen NAME ARGS...: text -> raw -> trace with map ($work/NAME.tbbt).
gen() {
  local name=$1; shift
  python3 "$top/bench/gen-play-trace.py" -o "$work/$name.txt" --ops "$ops" "$@" 2>/dev/null ||
    die "gen-play-trace $name"
  "$conv" -q --from-text "$work/$name.txt" -o "$work/$name.raw" || die "tbbt-convert --from-text $name"
  "$conv" -q -o "$work/$name.tbbt" "$work/$name.raw" || die "tbbt-convert $name"
  rm -f "$work/$name.txt" "$work/$name.raw"
}

# image NAME: builds the start image of NAME's trace: VFS in the export, MEM (or
# --make-files) a manifest of an empty local directory (the trace makes its objects).
image() {
  local name=$1
  if [ "$mode" = vfs ]; then
    local root=$export_dir/$tag-$name
    rm -rf "$root"; mkdir "$root"
    "$init" -q --no-progress --map "$work/$name.tbbt.map" --root "$root" \
      --manifest "$work/$name.man" >/dev/null || die "tbbt-init $name"
  else
    rm -rf "$work/img-$name"; mkdir "$work/img-$name"
    "$init" -q --no-progress --map "$work/$name.tbbt.map" --root "$work/img-$name" \
      --manifest "$work/$name.man" >/dev/null || die "tbbt-init $name (empty image)"
  fi
}

# loop PROC C K B: one rpc-null run, prints calls/s and CPU us/call.
# $use_rpcnull (default $rpcnull) is the binary.
loop() {
  local proc=$1 c=$2 k=$3 b=$4 extra=() bin=${use_rpcnull:-$rpcnull}
  [ "$proc" = getattr ] && extra=(--proc getattr -m "$export_dir")
  "$bin" --host 127.0.0.1 -p "$TBBT_LAB_NFS_PORT" --mount-port "$TBBT_LAB_MOUNT_PORT" \
    -c "$c" -k "$k" -b "$b" --lowat -t "$seconds" --json "${extra[@]}" 2>/dev/null |
    python3 -c 'import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith("{")][-1]
assert r["errors"] == 0, r
print(r["calls_per_s"], r["cpu_us_per_call"])' || die "rpc-null $proc -c $c -k $k failed"
}

# ceiling PROC: the best loop of several (an honest ceiling, not one tuned to lose): one
# connection with the player's calls in flight, two connections with half each (batch as
# the player's, at most half of K), and the lab notes' best shapes, two connections with
# 32 and with 16 in flight each.  The row has the best shape's rate and CPU per call, and
# the lowest CPU per call of all shapes (min_cpu_us_op).  With a baseline, its rpc-null
# runs each shape right after the new one and has its own row ("build": "old").
ceiling() {
  local proc=$1 best=0 bcpu=0 what="" mcpu=0 obest=0 obcpu=0 owhat="" omcpu=0 r1 c k b shape
  lower() { [ "$2" = 0 ] || awk -v a="$1" -v b="$2" 'BEGIN {exit !(a < b)}'; }
  for shape in "1 $kout $batch" "2 $(( kout / 2 )) $batch" "2 32 16" "2 16 8"; do
    read -r c k b <<<"$shape"
    [ "$k" -ge 2 ] || k=2
    [ "$b" -le $(( k / 2 )) ] || b=$(( k / 2 ))
    read -r r1 cpu < <(loop "$proc" "$c" "$k" "$b") || true
    [ -n "${r1:-}" ] || die "rpc-null $proc -c $c -k $k -b $b failed"
    say "$fs_label: $proc loop -c $c -k $k -b $b --lowat: $r1 calls/s, $cpu us/call"
    if [ "$r1" -gt "$best" ]; then best=$r1 bcpu=$cpu what="-c $c -k $k -b $b"; fi
    if lower "$cpu" "$mcpu"; then mcpu=$cpu; fi
    [ -n "$base_rpcnull" ] || continue
    read -r r1 cpu < <(use_rpcnull=$base_rpcnull loop "$proc" "$c" "$k" "$b") || true
    [ -n "${r1:-}" ] || die "baseline rpc-null $proc -c $c -k $k -b $b failed"
    say "$fs_label: $proc loop -c $c -k $k -b $b --lowat (old build): $r1 calls/s, $cpu us/call"
    if [ "$r1" -gt "$obest" ]; then obest=$r1 obcpu=$cpu owhat="-c $c -k $k -b $b"; fi
    if lower "$cpu" "$omcpu"; then omcpu=$cpu; fi
  done
  echo "{\"fsal\": \"$fs_label\", \"trace\": \"$proc-loop\", \"ops_s\": $best, \"cpu_us_op\": $bcpu, \"min_cpu_us_op\": $mcpu, \"args\": \"$what\", \"build\": \"new\"}" >> "$rows"
  [ -z "$base_rpcnull" ] ||
    echo "{\"fsal\": \"$fs_label\", \"trace\": \"$proc-loop\", \"ops_s\": $obest, \"cpu_us_op\": $obcpu, \"min_cpu_us_op\": $omcpu, \"args\": \"$owhat\", \"build\": \"old\"}" >> "$rows"
  eval "ceil_$proc=$best"
}

# replay NAME TRACE-LABEL ARGS...: one tbbt-play run of $use_play (default $play, the
# row's "build" $ab_build, default new); appends a row.
replay() {
  local name=$1 label=$2 bin=${use_play:-$play} which=${ab_build:-new}; shift 2
  local ir=()
  [ "$mode" = vfs ] || ir=(--image-root "$export_dir")
  local rc=0
  python3 "$top/bench/rusage.py" "$work/time" timeout 900 "$bin" --trace "$work/$name.tbbt" \
    --manifest "$work/$name.man" --server 127.0.0.1 --export "$export_dir" \
    --nfs-port "$TBBT_LAB_NFS_PORT" --mount-port "$TBBT_LAB_MOUNT_PORT" --no-progress -q \
    --report-json "$work/r.json" "${ir[@]}" "$@" 2> "$work/play.err" || rc=$?
  [ $rc -eq 0 ] || { cat "$work/play.err" >&2; die "$label: tbbt-play exit status $rc"; }
  python3 - "$work/r.json" "$work/time" "$fs_label" "$label" "$*" \
    "${ceil_null:-0}" "${ceil_getattr:-0}" "$which" >> "$rows" <<'PY' || die "$label: bad report"
import json, sys
r = json.load(open(sys.argv[1]))
u, s = (float(x) for x in open(sys.argv[2]).read().split()[-2:])
n = r["ops_completed"]
row = {"fsal": sys.argv[3], "trace": sys.argv[4], "args": sys.argv[5], "ops": n,
       "ops_s": round(r["throughput_ops"]), "wall_s": r["wall_seconds"],
       "cpu_us_op": round((u + s) / n * 1e6, 2) if n else None,
       "cpu_user_s": u, "cpu_sys_s": s, "replay_failures": r["replay_failures"],
       "finished": r["finished"], "timing": r["timing"],
       "dispatch_p50_us": r["dispatch_error_us"]["p50"],
       "dispatch_p99_us": r["dispatch_error_us"]["p99"],
       "null_loop": float(sys.argv[6]), "getattr_loop": float(sys.argv[7]),
       "procedures": {k: v["count"] for k, v in r["procedures"].items()},
       "build": sys.argv[8]}
print(json.dumps(row))
PY
  tail -n 1 "$rows" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("play-bench: %s: %s (%s)%s: %d ops, %d ops/s, %.2f us/op CPU, %d failures%s" % (
    r["fsal"], r["trace"], r["args"], " (old build)" if r["build"] == "old" else "", r["ops"], r["ops_s"], r["cpu_us_op"],
    r["replay_failures"], "" if r["dispatch_p99_us"] is None else
    ", dispatch error p50 %.1f us p99 %.1f us" % (r["dispatch_p50_us"], r["dispatch_p99_us"])))'
}

for fs in $fsals; do
  fs_label=$fs
  mode=vfs
  if [ "$fs" = mem ] || [ $make_files -eq 1 ]; then mode=mem; fi
  if [ $reuse -eq 0 ]; then
    say "starting the lab (fsal $fs)"
    lab_ours=1
    bash "$lab" start --fsal "$fs" --size 2G -q || die "cannot start the lab (fsal $fs)"
    lab_env
  fi
  unset ceil_null ceil_getattr
  player=(--order fsdep --connections "$conns" --max-outstanding "$kout" --batch "$batch"
    --recv-batch "$recv_batch")

  # Traces and images.  The MEM way makes one set of files per replay (own --top).
  say "$fs: traces of $ops operations (gen-play-trace.py, tbbt-convert)"
  gen null --mix null
  image null
  mf=()
  [ "$mode" = vfs ] || mf=(--make-files)
  n=0
  prep() {   # prep NAME MIX [gen args]: generates (MEM: again, with its own directory)
    local name=$1 mix=$2; shift 2
    n=$((n + 1))
    if [ "$mode" = vfs ]; then
      [ -e "$work/$name.tbbt" ] || { gen "$name" --mix "$mix" "$@"; image "$name"; }
    else
      gen "$name" --mix "$mix" "${mf[@]}" --top "$tag-$n" "$@"
      image "$name"
    fi
  }
  if [ "$mode" = vfs ]; then
    prep getattr getattr
    prep meta meta
    prep metats meta --rate "$ts_rate"
    if [ $reuse -eq 0 ]; then
      bash "$lab" restart -q || die "cannot restart the lab"   # nothing cached from tbbt-init
    fi
  fi

  # 1. ceilings
  ceiling null
  ceiling getattr

  # 2. full speed, $repeat times; with a baseline, old and new in turn (the old first
  # every other turn), each on a trace prepared for it (MEM: its own files).
  # ab NAME MIX: replays NAME, prepared by prep NAME MIX unless MIX is "-".
  ab() {
    local name=$1 mix=$2 i
    for i in $(seq "$repeat"); do
      if [ -n "$base_play" ] && [ $((i % 2)) -eq 0 ]; then
        [ "$mix" = - ] || prep "$name" "$mix"
        use_play=$base_play ab_build=old replay "$name" "$name" "${player[@]}"
      fi
      [ "$mix" = - ] || prep "$name" "$mix"
      replay "$name" "$name" "${player[@]}"
      if [ -n "$base_play" ] && [ $((i % 2)) -eq 1 ]; then
        [ "$mix" = - ] || prep "$name" "$mix"
        use_play=$base_play ab_build=old replay "$name" "$name" "${player[@]}"
      fi
    done
  }
  ab null -
  ab getattr getattr
  ab meta meta
  if [ $sweep -eq 1 ]; then
    for tr in null getattr; do
      for c in 1 2; do
        for k in 16 32 64; do
          for b in 8 16 32; do
            [ "$tr" = null ] || prep getattr getattr
            replay "$tr" "$tr-sweep" --order fsdep --connections $c --max-outstanding $k --batch $b
          done
        done
      done
    done
  fi

  # 3. timestamp timing
  prep metats meta --rate "$ts_rate"
  replay metats "meta-ts@$ts_rate" "${player[@]}" --timing timestamp --speed 1

  rm -f "$work"/*.tbbt "$work"/*.map "$work"/*.man
  rm -rf "$export_dir/$tag"-* "$work"/img-*
  if [ $reuse -eq 0 ]; then
    bash "$lab" stop -q || true
    lab_ours=0
  fi
done

# Table, targets, JSON.
python3 - "$rows" "$out/play-bench.json" "$ops" "$top/bench" "${ab_new_json:-}" "${ab_old_json:-}" <<'PY'
import json, sys
all_rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
report = {"ops": int(sys.argv[3]), "rows": all_rows}
rows = [r for r in all_rows if r.get("build", "new") == "new"]
print()
print("%-5s %-16s %8s %9s %8s %8s %9s %8s %8s  %s" % ("fsal", "trace", "ops", "ops/s", "x NULL",
      "x loop", "CPU us/op", "failures", "p99 us", "args"))
miss = []
for r in rows:
    loop = r["trace"].endswith("-loop")
    x_null = x_loop = ""
    base = r["trace"].split("-")[0]
    if not loop and base in ("null", "getattr") and r.get("null_loop"):
        x_null = "%.2f" % (r["ops_s"] / r["null_loop"])
        ref = r["null_loop"] if base == "null" else r["getattr_loop"]
        x_loop = "%.2f" % (r["ops_s"] / ref) if ref else ""
    p99 = r.get("dispatch_p99_us")
    print("%-5s %-16s %8s %9d %8s %8s %9.2f %8s %8s  %s" % (
        r["fsal"], r["trace"], r.get("ops", ""), r["ops_s"], x_null, x_loop, r["cpu_us_op"],
        r.get("replay_failures", ""), "" if p99 is None else "%.1f" % p99, r["args"]))
    if loop or r["trace"].endswith("-sweep"):
        continue
    name = "%s %s" % (r["fsal"], r["trace"])
    if r["timing"] == "full" and r["cpu_us_op"] > 5:
        miss.append("%s: player CPU %.2f us/op > 5 (x%.1f)" % (name, r["cpu_us_op"], r["cpu_us_op"] / 5))
    if x_null and float(x_null) < 0.7:
        miss.append("%s: %s of the NULL loop < 0.7" % (name, x_null))
    if p99 is not None and p99 > 200:
        miss.append("%s: p99 dispatch error %.1f us > 200" % (name, p99))
    if r["replay_failures"]:
        miss.append("%s: %d replay failures" % (name, r["replay_failures"]))
print()
print("targets: player CPU <= 5 us/op (full speed; in timestamp mode the sender spins the "
      "last 150 us before each due call); NULL/GETATTR-only replays >= 0.7 of the NULL loop; "
      "p99 dispatch error <= 200 us; no replay failures")
for m in miss:
    print("missed: " + m)
if not miss:
    print("all targets met")
# A/B: per FSAL, each loop and each full-speed trace, the best rate and the lowest CPU
# per operation of each build's runs (loops: of its shapes) (bench/ab.py).
if any(r.get("build") == "old" for r in all_rows):
    sys.path.insert(0, sys.argv[4])
    import ab
    cmp, seen = {}, []
    for r in all_rows:
        if r.get("build") == "old" and (r["trace"].endswith("-loop") or r["timing"] == "full"):
            key = (r["fsal"], r["trace"])
            if key not in seen:
                seen.append(key)
    for fs, tr in seen:
        sel = lambda b: [r for r in all_rows if r["fsal"] == fs and r["trace"] == tr
                         and r.get("build", "new") == b and (tr.endswith("-loop") or r["timing"] == "full")]
        new, old = sel("new"), sel("old")
        if not new:
            continue
        loop = tr.endswith("-loop")      # one row each, best of 4 shapes
        cpu = lambda rs: min(r["min_cpu_us_op" if loop else "cpu_us_op"] for r in rs)
        cmp["%s %s" % (fs, tr)] = ab.comparison(
            max(r["ops_s"] for r in new), max(r["ops_s"] for r in old),
            cpu(new), cpu(old), 4 if loop else len(old))
    report["baseline_comparison"] = ab.summary(cmp, sys.argv[5], sys.argv[6])
json.dump(report, open(sys.argv[2], "w"), indent=1)
print("written: " + sys.argv[2])
PY
