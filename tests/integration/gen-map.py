#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a hierarchy map (docs/hierarchy-map.md, version 3, with its checksum line) of a synthetic start image
for tbbt-init tests and benchmarks: D directories in a tree, F files with sizes from a
skewed distribution, some hard links, symlinks and FIFOs, plus entries made during the
trace (which tbbt-init must skip).  Deterministic for a seed.

    gen-map.py OUT.map [--dirs D] [--files F] [--seed S] [--max-size BYTES]
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from tbbtfmt import textsum_add  # noqa: E402  (tools/tbbtfmt.py)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--dirs", type=int, default=50)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-size", type=int, default=1 << 20)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    lines = ["# tbbt-map 3", "1\td\t4096\t0\t-\t.\t.\t-\t1\t0755:0:0"]
    dirs = ["."]
    nid = 2
    for i in range(a.dirs):
        parent = rng.choice(dirs)
        path = f"d{i}" if parent == "." else f"{parent}/d{i}"
        lines.append(f"{nid}\td\t4096\t0\t-\t{path}\t{path}\t-\t1\t0755:1000:100")
        dirs.append(path)
        nid += 1
    files = []
    for i in range(a.files):
        parent = rng.choice(dirs)
        path = f"f{i}" if parent == "." else f"{parent}/f{i}"
        size = min(a.max_size, int(rng.lognormvariate(9, 2)))
        files.append((nid, path, size))
        nid += 1
    links = {}
    for fid, path, size in rng.sample(files, max(1, len(files) // 50)):
        parent = rng.choice(dirs)
        lpath = f"h{fid}" if parent == "." else f"{parent}/h{fid}"
        links[fid] = lpath
    for fid, path, size in files:
        n = 2 if fid in links else 1
        lines.append(f"{fid}\tf\t{size}\t0\t-\t{path}\t{path}\t-\t{n}\t0644:1000:100")
        if fid in links:
            lp = links[fid]
            lines.append(f"{fid}\tf\t{size}\t0\t-\t{lp}\t{lp}\t-\t2\t0644:1000:100")
    for i in range(max(1, a.files // 100)):
        parent = rng.choice(dirs)
        path = f"l{i}" if parent == "." else f"{parent}/l{i}"
        lines.append(f"{nid}\tl\t0\t0\t-\t{path}\t{path}\t../target{i}\t1\t0777:0:0")
        nid += 1
    lines.append(f"{nid}\to\t0\t0\t-\tfifo\tfifo\t-\t1\t0600:0:0")
    nid += 1
    lines.append(f"{nid}\tf\t100\t5.000000000\t-\tlate\tlate\t-\t1\t0644:0:0")
    # depth first, directory by directory, as tbbt-convert writes maps: every directory
    # before the names in it
    head, body = lines[:2], lines[2:]
    body.sort(key=lambda l: [c.encode() for c in l.split("\t")[5].split("/")])
    with open(a.out, "wb") as f:   # version 3: the checksum line last
        f.write(textsum_add(("\n".join(head + body) + "\n").encode()))


if __name__ == "__main__":
    main()
