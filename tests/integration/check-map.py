#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the hierarchy map of a capture of tools/nfs-scenario: every object the
scripted scenario creates is listed with the right type, final path and symlink
target, made during the trace, and every directory precedes the entries in it.

    check-map.py TRACE.map
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from tbbtfmt import unescape  # noqa: E402  (tools/tbbtfmt.py)

# (type, final path under scn.PID, target or None): what nfs-scenario leaves behind
# just before its clean-up (docs/hierarchy-map.md shows the same tree).
WANT = [
    ("d", "", None),
    ("d", "a2", None),
    ("d", "a2/sub", None),
    ("d", "b", None),
    ("f", "b/moved.link", None),
    ("l", "a2/up", "../b"),
    ("f", "file1", None),
    ("f", "file3", None),
    ("l", "sym1", "file1"),
    ("o", "fifo1", None),
]


def unesc(field):
    """A map field as text (bytes that are not UTF-8 kept as surrogates)."""
    return unescape(field).decode("utf-8", "surrogateescape")


def main():
    lines = open(sys.argv[1], encoding="ascii").read().splitlines()
    if not lines or not (lines[0] == "# tbbt-map 2" or lines[0].startswith("# tbbt-map 3")):
        sys.exit("FAIL: no map header")
    entries, seen_dirs = [], {"."}
    for ln in lines[1:]:
        if not ln or ln.startswith("#"):
            continue
        f = ln.split("\t")
        if len(f) != 10:
            sys.exit(f"FAIL: bad map line {ln!r}")
        typ, create, path, final, target = f[1], f[3], unesc(f[5]), unesc(f[6]), f[7]
        parent = path.rsplit("/", 1)[0] if "/" in path else "."
        if create == "0" and path != "." and parent not in seen_dirs:
            sys.exit(f"FAIL: {path} comes before its directory")
        if typ == "d" and create == "0":
            seen_dirs.add(path)
        entries.append((typ, create, path, final, None if target == "-" else unesc(target)))
    tops = {m.group(0) for e in entries for m in [re.search(r"(scn|udp)\.[0-9]+", e[3])] if m}
    if len(tops) != 1:
        sys.exit(f"FAIL: expected one scn.PID directory in the map, found {sorted(tops)}")
    top = tops.pop()
    finals = {}
    for typ, create, path, final, target in entries:
        rel = final.split(top, 1)[1].lstrip("/") if top in final else None
        if rel is not None:
            finals.setdefault(rel, []).append((typ, create, target))
    for typ, rel, target in WANT:
        got = finals.get(rel, [])
        if not any(t == typ and c != "0" and tg == target for t, c, tg in got):
            sys.exit(f"FAIL: {top}/{rel}: want type {typ} target {target} made in the trace, "
                     f"map has {got}")
    print(f"ok: map lists the {len(WANT)} objects the scenario made under {top}")


if __name__ == "__main__":
    main()
