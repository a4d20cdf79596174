# SPDX-License-Identifier: MIT
"""bench/rusage.py OUTFILE CMD...: runs CMD and writes its cost to OUTFILE.

One line, "wall_seconds maxrss_kb user_seconds system_seconds": wall time to the
nanosecond (around the child only, not this interpreter's start), CPU times to the
microsecond and peak RSS from getrusage(RUSAGE_CHILDREN) (CMD and the descendants it
waited for).  /usr/bin/time counts hundredths of a second, too coarse for CPU per
operation on short runs (0.06 s of CPU for 50,000 replayed calls).  Exits with CMD's
status (128 + N when a signal N ended it).  Used by convert-bench.sh and play-bench.sh.
"""
import resource
import subprocess
import sys
import time

if len(sys.argv) < 3:
    sys.exit("usage: rusage.py OUTFILE CMD...")
t0 = time.perf_counter_ns()
rc = subprocess.call(sys.argv[2:])
t1 = time.perf_counter_ns()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write("%.6f %d %.6f %.6f\n" % ((t1 - t0) / 1e9, r.ru_maxrss, r.ru_utime, r.ru_stime))
sys.exit(rc if rc >= 0 else 128 - rc)
