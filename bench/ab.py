# SPDX-License-Identifier: MIT
"""bench/ab.py: new/old ratios of an A/B benchmark (imported by the benches' reports).

The benches (convert-bench.sh, play-bench.sh, roundtrip-bench.sh) run the build under
test ("new") and a baseline build ("old", bench/baseline.sh) interleaved on the same
inputs, N times each.  Each comparison gives, per build, the best throughput of its runs
(operations per second: the fastest run) and the lowest CPU time per operation (user +
system of the process).  This module turns them into ratios and a summary; it measures
nothing itself.

JSON written under the key "baseline_comparison" of each bench's output:
  new_build, old_build           the two builds (bench/baseline.sh build_info)
  comparisons                    {name: {new_ops_per_s, old_ops_per_s,
                                  new_cpu_us_per_op, old_cpu_us_per_op, runs_each,
                                  throughput_new_over_old, cpu_per_op_new_over_old}}
  throughput_new_over_old        geometric mean over the comparisons (> 1: new faster)
  cpu_per_op_new_over_old        geometric mean over the comparisons (< 1: new cheaper)
  worst_throughput_new_over_old, worst_cpu_per_op_new_over_old   the worst comparison's
  targets                        {"throughput_new_over_old_min": 0.97,
                                  "cpu_per_op_new_over_old_max": 1.03}
  met                            both geometric means within their targets
"""
import json
import math

THROUGHPUT_MIN = 0.97
CPU_MAX = 1.03


def comparison(new_ops_s, old_ops_s, new_cpu_us, old_cpu_us, runs):
    """One comparison from the best figures of each build (rates > 0, CPU may be None)."""
    d = {"new_ops_per_s": new_ops_s, "old_ops_per_s": old_ops_s,
         "new_cpu_us_per_op": new_cpu_us, "old_cpu_us_per_op": old_cpu_us, "runs_each": runs,
         "throughput_new_over_old": new_ops_s / old_ops_s if old_ops_s else None,
         "cpu_per_op_new_over_old": new_cpu_us / old_cpu_us if new_cpu_us and old_cpu_us else None}
    return d


def _gmean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def line(thr, cpu):
    f = lambda x: "-" if x is None else "%.2f" % x
    return "new/old throughput %s (target >= %.2f), CPU per op new/old %s (target <= %.2f)" % (
        f(thr), THROUGHPUT_MIN, f(cpu), CPU_MAX)


def summary(comparisons, new_build_json, old_build_json):
    """The "baseline_comparison" object; prints one line per comparison and the summary."""
    thr = [c["throughput_new_over_old"] for c in comparisons.values()]
    cpu = [c["cpu_per_op_new_over_old"] for c in comparisons.values()]
    s = {"new_build": json.load(open(new_build_json)), "old_build": json.load(open(old_build_json)),
         "comparisons": comparisons,
         "throughput_new_over_old": _gmean(thr), "cpu_per_op_new_over_old": _gmean(cpu),
         "worst_throughput_new_over_old": min((x for x in thr if x), default=None),
         "worst_cpu_per_op_new_over_old": max((x for x in cpu if x), default=None),
         "targets": {"throughput_new_over_old_min": THROUGHPUT_MIN,
                     "cpu_per_op_new_over_old_max": CPU_MAX}}
    s["met"] = (s["throughput_new_over_old"] is not None
                and s["throughput_new_over_old"] >= THROUGHPUT_MIN
                and (s["cpu_per_op_new_over_old"] is None or s["cpu_per_op_new_over_old"] <= CPU_MAX))
    print()
    print("A/B against the baseline %s (new %s):" % (s["old_build"]["build"], s["new_build"]["build"]))
    for name, c in comparisons.items():
        print("  %-30s %s  [new %.0f ops/s, old %.0f ops/s; best of %d each]" % (
            name, line(c["throughput_new_over_old"], c["cpu_per_op_new_over_old"]),
            c["new_ops_per_s"], c["old_ops_per_s"], c["runs_each"]))
    print(line(s["throughput_new_over_old"], s["cpu_per_op_new_over_old"]))
    print("(geometric mean of %d comparisons; worst throughput %s, worst CPU per op %s; %s)" % (
        len(comparisons), "-" if s["worst_throughput_new_over_old"] is None else "%.2f" % s["worst_throughput_new_over_old"],
        "-" if s["worst_cpu_per_op_new_over_old"] is None else "%.2f" % s["worst_cpu_per_op_new_over_old"],
        "targets met" if s["met"] else "targets missed"))
    return s
