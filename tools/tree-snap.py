#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tree-snap.py: snapshots of a directory tree's shape and attributes, and their diff.

Used around the lab's workload captures (tools/capture-workload.sh): the lab server's
VFS backend exports an ordinary local directory, so its tree before and after a
captured run can be recorded here and compared later with what a replay left on
another server's export.  Contents and times are not recorded; what is:

    snap DIR [-o FILE]
        walks DIR without following symbolic links and writes one line per object
        (DIR itself is "."), sorted by path bytes, tab-separated:
            PATH TYPE SIZE TARGET MODE UID GID NLINK
        TYPE is f (regular file), d, l (symbolic link) or o (other); SIZE is the size of
        regular files ("-" for others); TARGET the link's target ("-" for others); MODE
        the permission bits in octal (with setuid, setgid and sticky bits).  PATH and
        TARGET escape every byte outside printable ASCII, and tab, backslash and a
        leading "#", as \\xHH, so any name is safe.  Lines starting "#" are comments
        (the first says what was snapped).  lost+found at the top is left out.

    diff A B [--ignore GLOB ...] [--fields LIST] [--json FILE] [--max N]
        compares two snapshots: paths only in A, only in B, and per field the paths
        whose values differ.  --ignore skips paths whose path or any component matches
        GLOB (fnmatch; e.g. 'tbbt-syn-*' for the synthetic files tbbt-init adds);
        --fields limits the comparison (default type,size,target,mode,uid,gid,nlink).
        Prints a summary and the first N (default 20) differences; exit 0 when equal
        on the chosen fields, 1 otherwise.

The format (escaping, fields) is defined in tools/tbbtfmt.py, which this imports.
Exit codes: 0 success (equal), 1 failure (or different), 2 usage error.  Standard
library only.  See docs/lab.md.
"""
import argparse
import fnmatch
import json
import os
import signal
import stat
import sys

from tbbtfmt import SNAP_FIELDS as FIELDS, SNAP_FORMAT as FORMAT, snap_escape as escape, snap_load

PROG = "tree-snap.py"


def die(msg, code=1):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(code)


def type_of(mode):
    if stat.S_ISREG(mode):
        return "f"
    if stat.S_ISDIR(mode):
        return "d"
    if stat.S_ISLNK(mode):
        return "l"
    return "o"


def record(root: bytes, rel: bytes):
    """One snapshot line for ROOT/REL (REL b'.' is ROOT itself)."""
    path = root if rel == b"." else os.path.join(root, rel)
    st = os.lstat(path)
    kind = type_of(st.st_mode)
    size = str(st.st_size) if kind == "f" else "-"
    target = escape(os.readlink(path)) if kind == "l" else "-"
    mode = format(stat.S_IMODE(st.st_mode), "04o")
    return (rel, "\t".join((escape(rel), kind, size, target, mode, str(st.st_uid),
                            str(st.st_gid), str(st.st_nlink))))


def walk(root: bytes):
    """Relative paths (bytes) of everything under ROOT, ROOT itself as b'.'."""
    yield b"."
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False,
                                                onerror=lambda e: die(f"cannot read {e.filename}: {e.strerror}")):
        reldir = os.path.relpath(dirpath, root)
        if reldir == b".":
            if b"lost+found" in dirnames:
                dirnames.remove(b"lost+found")
            reldir = b""
        # os.walk lists symbolic links to directories among dirnames; they are not
        # followed (followlinks=False) but must still be recorded.
        for name in dirnames + filenames:
            yield os.path.join(reldir, name) if reldir else name


def cmd_snap(args):
    root = os.fsencode(args.dir)
    if not os.path.isdir(root) or os.path.islink(root):
        die(f"'{args.dir}' is not a directory")
    try:
        lines = sorted((record(root, rel) for rel in walk(root)), key=lambda r: r[0])
    except OSError as e:
        die(f"cannot snap '{args.dir}': {e.strerror} ({e.filename!r})")
    text = f"# {FORMAT} root={escape(os.path.abspath(root))} fields=path,{','.join(FIELDS)}\n"
    text += "".join(line + "\n" for _, line in lines)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="ascii") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def load(path):
    """{escaped path: {field: value}} of snapshot PATH (tbbtfmt.snap_load)."""
    try:
        return snap_load(path)
    except OSError as e:
        die(f"cannot read '{path}': {e.strerror}")
    except ValueError as e:
        die(str(e))


def ignored(path, globs):
    if not globs:
        return False
    parts = path.split("/")
    return any(fnmatch.fnmatchcase(path, g) or any(fnmatch.fnmatchcase(p, g) for p in parts)
               for g in globs)


def compare(a, b, fields, globs):
    keys_a = {p for p in a if not ignored(p, globs)}
    keys_b = {p for p in b if not ignored(p, globs)}
    only_a = sorted(keys_a - keys_b)
    only_b = sorted(keys_b - keys_a)
    diffs = {f: [] for f in fields}
    for p in sorted(keys_a & keys_b):
        for f in fields:
            if a[p][f] != b[p][f]:
                diffs[f].append((p, a[p][f], b[p][f]))
    return keys_a, keys_b, only_a, only_b, diffs


def report(args, keys_a, keys_b, only_a, only_b, diffs):
    differing = sorted({p for f in diffs for p, _, _ in diffs[f]})
    per_field = ", ".join(f"{f} {len(v)}" for f, v in diffs.items() if v) or "none"
    print(f"{PROG}: A {len(keys_a)} objects, B {len(keys_b)} objects; only in A {len(only_a)}, "
          f"only in B {len(only_b)}, differing {len(differing)} (by field: {per_field})")
    lines = [f"only in A: {p}" for p in only_a] + [f"only in B: {p}" for p in only_b]
    for f, v in diffs.items():
        lines += [f"{f} differs: {p}: {x} -> {y}" for p, x, y in v]
    for line in lines[:args.max]:
        print(f"  {line}")
    if len(lines) > args.max:
        print(f"  ... {len(lines) - args.max} more")
    return len(differing)


def write_json(args, keys_a, keys_b, only_a, only_b, diffs, ndiff, cap=1000):
    doc = {
        "a": args.a, "b": args.b, "fields": list(diffs), "ignore": args.ignore or [],
        "objects_a": len(keys_a), "objects_b": len(keys_b),
        "only_in_a": len(only_a), "only_in_b": len(only_b), "differing": ndiff,
        "by_field": {f: len(v) for f, v in diffs.items()},
        "equal": not (only_a or only_b or ndiff),
        "first_only_in_a": only_a[:cap], "first_only_in_b": only_b[:cap],
        "first_differences": {f: [{"path": p, "a": x, "b": y} for p, x, y in v[:cap]]
                              for f, v in diffs.items()},
    }
    try:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    except OSError as e:
        die(f"cannot write '{args.json}': {e.strerror}")


def cmd_diff(args):
    fields = [f.strip() for f in args.fields.split(",") if f.strip()]
    bad = [f for f in fields if f not in FIELDS]
    if bad or not fields:
        die(f"--fields: unknown field(s) {','.join(bad) or '(none)'} (known: {','.join(FIELDS)})", 2)
    if args.max < 0:
        die("--max must be >= 0", 2)
    a, b = load(args.a), load(args.b)
    keys_a, keys_b, only_a, only_b, diffs = compare(a, b, fields, args.ignore)
    ndiff = report(args, keys_a, keys_b, only_a, only_b, diffs)
    if args.json:
        write_json(args, keys_a, keys_b, only_a, only_b, diffs, ndiff)
    return 0 if not (only_a or only_b or ndiff) else 1


class Parser(argparse.ArgumentParser):
    def error(self, message):
        die(f"{message} (try --help)", 2)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)    # quiet end when piped into head
    p = Parser(prog=PROG, description="Snapshots of a directory tree and their diff.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    s = sub.add_parser("snap", help="write a snapshot of DIR")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default stdout)")
    d = sub.add_parser("diff", help="compare snapshots A and B")
    d.add_argument("a", metavar="A")
    d.add_argument("b", metavar="B")
    d.add_argument("--ignore", metavar="GLOB", action="append",
                   help="skip paths whose path or a component matches GLOB (repeatable)")
    d.add_argument("--fields", default=",".join(FIELDS),
                   help=f"fields to compare (default {','.join(FIELDS)})")
    d.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    d.add_argument("--max", type=int, default=20, metavar="N",
                   help="differences to print (default 20)")
    args = p.parse_args()
    return cmd_snap(args) if args.cmd == "snap" else cmd_diff(args)


if __name__ == "__main__":
    sys.exit(main())
