#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helper of bench/readahead (docs/readahead.md; the read-ahead benchmark of Ellard and
Seltzer, "NFS Tricks and Benchmarking Traps", USENIX 2003).

  readahead-agg.py trace-bytes TBBT_DUMP TRACE
      prints the bytes the trace's READs returned (res_count, else count) and their number
  readahead-agg.py run-row REPORT_JSON "BYTES READS" "IOS0 SECT0" "IOS1 SECT1" KEYS STATUS
      prints one CSV row of readahead-runs.csv from tbbt-play's --report-json and the loop
      device's read I/Os and sectors before and after the run; STATUS becomes the reason
      when the run failed (exit status, unfinished, replay failures, reads missing)
  readahead-agg.py shuffle SEED ITEM...
      prints the items one a line in an order drawn from SEED (Python's random.shuffle)
  readahead-agg.py aggregate RUNS_CSV OUTDIR
      writes OUTDIR/readahead.csv (one row per point: mean and sample stddev of MB/s over
      the repetitions, flag when stddev > 5 % of the mean, mean disk reads) and, per
      (pattern, transport), readahead-P-T.dat (gnuplot blocks, one per read-ahead x
      reorder line: readers, mean, stddev) with .titles and .title for bench/readahead.gp
"""
import csv
import json
import math
import os
import random
import subprocess
import sys

FLAG_CV = 0.05   # a point is flagged when stddev > 5 % of the mean


def trace_bytes(dump, trace):
    proc = subprocess.Popen([dump, trace], stdout=subprocess.PIPE, text=True)
    total = reads = 0
    for line in proc.stdout:
        f = line.split()
        if len(f) < 5 or f[0] != "op" or f[4] != "read":
            continue
        kv = dict(x.split("=", 1) for x in f[5:] if "=" in x)
        n = kv.get("res_count", kv.get("count"))
        if n is None:
            continue
        total += int(n, 0)
        reads += 1
    if proc.wait() != 0:
        sys.exit(f"readahead-agg: {dump} {trace} failed")
    print(total, reads)


def run_row(report, bytes_reads, stat0, stat1, keys, status):
    nbytes, nreads = (int(x) for x in bytes_reads.split())
    i0, s0 = (int(x) for x in stat0.split())
    i1, s1 = (int(x) for x in stat1.split())
    try:
        with open(report) as f:
            r = json.load(f)
    except (OSError, ValueError):
        return 1
    wall = float(r["wall_seconds"])
    got_reads = r.get("procedures", {}).get("read", {}).get("count", 0)
    if status == "ok":
        if not r.get("finished"):
            status = "unfinished"
        elif r["replay_failures"] != 0:
            status = "failures"
        elif got_reads != nreads or r.get("ops_unknown", 0) != 0:
            status = "reads_missing"
    mbps = nbytes / 1e6 / wall if wall > 0 else float("nan")
    print(f"{keys},{nbytes},{wall:.4f},{mbps:.2f},{i1 - i0},{(s1 - s0) * 512},{got_reads},"
          f"{r['replay_failures']},{r.get('client_stalls', '')},"
          f"{r.get('reordered_reads', '')},{status}")
    return 0


def pattern_key(p):
    return 1 if p == "seq" else int(p[len("stride"):])


def aggregate(runs_csv, outdir):
    points = {}
    order = []
    with open(runs_csv) as f:
        for row in csv.DictReader(f):
            if row["status"] != "ok":
                continue
            k = (int(row["readers"]), row["pattern"], int(row["reorder"]), row["readahead"],
                 row["transport"])
            if k not in points:
                points[k] = []
                order.append(k)
            points[k].append(row)
    if not points:
        sys.exit("readahead-agg: no successful run")
    rows = []
    for k in sorted(order, key=lambda k: (k[4], pattern_key(k[1]), k[3] != "on", k[2], k[0])):
        rs = points[k]
        v = [float(r["mbps"]) for r in rs]
        mean = sum(v) / len(v)
        sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
        ios = sum(int(r["disk_read_ios"]) for r in rs) / len(rs)
        dbytes = sum(int(r["disk_read_bytes"]) for r in rs) / len(rs)
        rbytes = int(rs[0]["bytes"])
        rows.append({
            "readers": k[0], "pattern": k[1], "reorder": k[2], "readahead": k[3],
            "ra_kb": rs[0]["ra_kb"], "transport": k[4], "reps": len(v),
            "mbps_mean": f"{mean:.2f}", "mbps_stddev": f"{sd:.2f}",
            "high_variance": 1 if mean > 0 and sd > FLAG_CV * mean else 0,
            "bytes_per_run": rbytes,
            "disk_read_mb_mean": f"{dbytes / 1e6:.1f}",
            "disk_read_ios_mean": f"{ios:.0f}",
            "disk_kib_per_io": f"{dbytes / ios / 1024:.1f}" if ios else "",
        })
    with open(os.path.join(outdir, "readahead.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    # One plot per (pattern, transport): lines read-ahead x reorder, x = readers.
    plots = {}
    for r in rows:
        plots.setdefault((r["pattern"], r["transport"]), {}).setdefault(
            (r["readahead"] != "on", r["reorder"]), []).append(r)
    for (pat, tp), lines in plots.items():
        base = os.path.join(outdir, f"readahead-{pat}-{tp}")
        titles = []
        with open(base + ".dat", "w") as f:
            for i, key in enumerate(sorted(lines)):
                if i:
                    f.write("\n\n")
                ra = "off" if key[0] else "on"
                titles.append(f"RA_{ra},_reorder_{key[1]}%")
                f.write(f"# read-ahead {ra}, reorder {key[1]} %: readers mean stddev\n")
                for r in sorted(lines[key], key=lambda r: r["readers"]):
                    f.write(f"{r['readers']} {r['mbps_mean']} {r['mbps_stddev']}\n")
        with open(base + ".titles", "w") as f:
            f.write(" ".join(titles))
        what = "sequential" if pat == "seq" else f"stride {pattern_key(pat)}"
        with open(base + ".title", "w") as f:
            f.write(f"{what} readers, {tp.upper()}")
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "trace-bytes":
        trace_bytes(argv[2], argv[3])
        return 0
    if len(argv) == 8 and argv[1] == "run-row":
        return run_row(*argv[2:])
    if len(argv) >= 3 and argv[1] == "shuffle":
        items = argv[3:]
        random.Random(int(argv[2])).shuffle(items)
        print("\n".join(items))
        return 0
    if len(argv) == 4 and argv[1] == "aggregate":
        return aggregate(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
