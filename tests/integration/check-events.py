#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a tbbt-play --event-log of a conservative-order replay (docs/tbbt-play.md):
per clone, requests are dispatched in trace order, and no request is dispatched before
every issued request whose trace reply came before its call has completed.  Exit 0 if
the log obeys the policy, 1 (with the first violation) if not.

    check-events.py EVENTS
"""
import sys

disp = {}      # seq -> (clone, call_ns, reply_ns, t)
done = {}      # seq -> t
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "D":
        disp[int(f[1])] = (int(f[2]), int(f[4]), int(f[5]), int(f[6]))
    elif f[0] == "C":
        done[int(f[1])] = int(f[2])
bad = 0
by_clone = {}
for seq in sorted(disp):
    by_clone.setdefault(disp[seq][0], []).append(seq)
for clone, seqs in by_clone.items():
    last_t = -1
    for i, s in enumerate(seqs):
        _, call, _, t = disp[s]
        if t < last_t:
            print(f"request {s} dispatched before an earlier request of clone {clone}")
            sys.exit(1)
        last_t = t
        for p in seqs[:i]:
            reply = disp[p][2]
            if reply and reply <= call and not (p in done and done[p] <= t):
                print(f"request {s} (call {call}) dispatched at {t} before request {p} "
                      f"(trace reply {reply}) completed at {done.get(p)}")
                sys.exit(1)
print(f"check-events: {len(disp)} dispatches, {len(done)} completions: conservative order kept")
