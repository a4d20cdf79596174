#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mutate-files.py: the mutation campaign of the map and the manifest (docs/testing.md, 058).

    mutate-files.py --init TBBT-INIT --play TBBT-PLAY --trace T --map M --manifest F
                    [--count N] [--seed S] [--work DIR] [--json OUT]

Applies N random mutations (default 1000) to the map M and N to the manifest F (made by
tbbt-convert and tbbt-init from the trace T) and runs the readers on each: a map through
`tbbt-init --map MUT --check` and `tbbt-play --check-only --trace T --map MUT --manifest
F`, a manifest through `tbbt-play --check-only --trace T --map M --manifest MUT` (which
also checks that the three belong together).  Mutations: a bit
flipped, a digit changed, the file cut short, a line deleted, duplicated or swapped with
another, a field (mode, size, type, id, name, links, time; manifest: obj ID and path,
map-crc32, root, map, clones, clone, made, status) set to a bad value, each either with
the checksum line left as it was or recomputed (a deliberate edit that only the field
rules can catch); and (maps) a field set to another valid value with the checksum
recomputed (size 47270 -> 0, mode 7777, a type): tbbt-init --check may take such an
edit, tbbt-play must refuse it (the manifest names the original map's checksum); and
(manifests) an obj line's ID or path set to another valid value with the checksum
recomputed, which tbbt-play must refuse (every obj line must name a start entry of the
map).

Every mutant must be either rejected by tbbt-play (exit 1 and exactly one line on stderr;
tbbt-init --check on a map: exit 0, or 1 with one line) or provably harmless: the same
bytes as the original, or (maps) accepted with the same digest of the decoded entries as
the original (tbbt-init --check prints it).  Anything else (exit 0
with a different result, another exit status, a crash, several lines) is a failure:
the script prints each and exits 1.  Counts per mutation kind go to stdout (and --json).
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from tbbtfmt import textsum_add, textsum_strip  # noqa: E402  (tools/tbbtfmt.py)

# Bad values of a map field (index in the tab-separated entry) that a recomputed checksum
# cannot save: each must be refused by the field rules.
MAP_BAD = {
    0: ["", "abc", "-1", "02", "2147483648", "18446744073709551616", "1.5"],
    1: ["", "x", "F", "dd", "-"],
    2: ["", "-5", "1x", "+", "1125899906842625", "99999999999999999999", "0x10", "5++"],
    3: ["", "1.5", "abc", "-1", "1.0000000001", "01.000000000"],
    4: ["", "1.5", "abc", "0.000000000x"],
    5: ["", "..", "a/../b", "a//b", "/abs", "a\\x2fb", "a\\x00b", "a\\q", "a\\x4", "x" * 256,
        "a\x01b"],
    6: ["", "..", "a\\x2fb", "a\\x00b"],
    8: ["", "0", "-1", "abc", "4294967296"],
    9: ["", "10000:0:0", "0888:0:0", "644:0:0", "0644:1", "0644:1:4294967296", "0644::1",
        "77777:0:0", "0644:-1:0"],
}
# Valid but different values (a deliberate edit, checksum recomputed): tbbt-init --check
# may accept them, tbbt-play must refuse the map (the manifest names the original's
# checksum).  The finding: a size 47270 -> 0.
MAP_EDIT = {2: ["0", "1", "47271", "5+", "-"], 9: ["7777:0:0", "0644:0:0", "0000:1:1"],
            3: ["0", "1.000000000"], 1: ["f", "d", "l", "o"]}
MAP_FIELDS = {0: "id", 1: "type", 2: "size", 3: "create", 4: "delete", 5: "path",
              6: "final", 8: "links", 9: "attrs"}
MAN_BAD = {
    "obj": [("id", 1, ["", "abc", "-1", "01", "18446744073709551616"]),
            ("path", 2, ["", "..", "a/../b", "a//b", "/abs", "a\\x2fb", "a\\x00b", "a\\q",
                         "x" * 256])],
    "map-crc32": [("crc", 1, ["", "zzzzzzzz", "1234567", "ABCDEF01", "00000000", "123456789"])],
    "root": [("path", 1, ["", "a\\q", "a\\x00b"])],
    "map": [("path", 1, ["", "a\\q", "a\\x00b"])],
    "clones": [("count", 1, ["", "0", "-1", "2", "abc"])],
    "clone": [("path", 1, ["", "..", "/abs", "a\\x2fb"])],
    "made": [("kind", 1, ["", "x", "dd"])],
    "status": [("status", 1, ["", "incomplete", "failed"])],
}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8",
                                                                              "replace")


def lines_of(data):
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


def join(lines, newline=True):
    return b"\n".join(lines) + (b"\n" if newline else b"")


def byte_mutation(rng, data, kind):
    """A mutation of the bytes (the checksum line is not recomputed)."""
    b = bytearray(data)
    if kind == "bitflip":
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        return bytes(b)
    if kind == "digit":
        pos = [i for i, c in enumerate(b) if 0x30 <= c <= 0x39]
        i = rng.choice(pos)
        b[i] = rng.choice([c for c in b"0123456789" if c != b[i]])
        return bytes(b)
    if kind == "truncate":
        return bytes(b[:rng.randrange(len(b))])
    ls = lines_of(data)
    i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
    if kind == "delete-line":
        del ls[i]
    elif kind == "dup-line":
        ls.insert(i, ls[i])
    elif kind == "swap-lines":
        ls[i], ls[j] = ls[j], ls[i]
    return join(ls)


def field_mutation(rng, data, is_map, resum, table=MAP_BAD):
    """A bad field value, the checksum line left or recomputed; (bytes, field name)."""
    body = textsum_strip(data)
    ls = lines_of(body)
    if is_map:
        idx = [k for k, ln in enumerate(ls) if ln and not ln.startswith(b"#")]
        k = rng.choice(idx)
        f = ls[k].split(b"\t")
        col = rng.choice(sorted(table))
        f[col] = rng.choice(table[col]).encode()
        name = MAP_FIELDS[col]
    else:
        idx = [k for k, ln in enumerate(ls) if ln.split(b"\t")[0].decode() in MAN_BAD]
        k = rng.choice(idx)
        f = ls[k].split(b"\t")
        key = f[0].decode()
        name, col, bad = rng.choice(MAN_BAD[key])
        if col >= len(f):
            col = len(f) - 1
        f[col] = rng.choice(bad).encode()
        name = f"{key}.{name}"
    ls[k] = b"\t".join(f)
    new = join(ls)
    return (textsum_add(new) if resum else new + data[len(body):]), name


def manifest_edit(rng, data):
    """An obj line's ID or path set to another valid value, the checksum recomputed: only
    the check against the map (every obj line names a start entry) can catch it."""
    ls = lines_of(textsum_strip(data))
    idx = [k for k, ln in enumerate(ls) if ln.startswith(b"obj\t") and
           not ln.startswith(b"obj\t0\t")]
    k = rng.choice(idx)
    f = ls[k].split(b"\t")
    if rng.random() < 0.5:
        f[1] = b"%d" % (int(f[1]) + rng.randrange(1, 1000))
        name = "obj.id"
    else:
        f[2] = rng.choice([b"tbbt-nowhere", f[2] + b"x", ls[rng.choice(idx)].split(b"\t")[2]])
        name = "obj.path"
    ls[k] = b"\t".join(f)
    return textsum_add(join(ls)), name


def main():
    ap = argparse.ArgumentParser()
    for a in ("--init", "--play", "--trace", "--map", "--manifest"):
        ap.add_argument(a, required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp")
    ap.add_argument("--json")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    orig_map = open(a.map, "rb").read()
    orig_man = open(a.manifest, "rb").read()
    rc, out, err = run([a.init, "--map", a.map, "--check"])
    m = re.search(r"digest ([0-9a-f]{8})", out)
    if rc != 0 or not m:
        sys.exit(f"FAIL: the original map does not check: {err.strip()}")
    digest = m.group(1)
    rc, out, err = run([a.play, "--check-only", "-q", "--trace", a.trace, "--map", a.map,
                        "--manifest", a.manifest])
    if rc != 0:
        sys.exit(f"FAIL: the original manifest does not check: {err.strip()}")

    kinds = ["bitflip", "digit", "truncate", "delete-line", "dup-line", "swap-lines",
             "field", "field-resummed", "edit-resummed"]
    counts, failures = {}, []
    mut_path = os.path.join(a.work, "mutant")
    for target in ("map", "manifest"):
        orig = orig_map if target == "map" else orig_man
        for n in range(a.count):
            kind = kinds[n % len(kinds)]
            field = ""
            if kind == "edit-resummed" and target == "manifest":
                data, field = manifest_edit(rng, orig)
            elif kind.startswith("field") or kind == "edit-resummed":
                data, field = field_mutation(rng, orig, target == "map", kind != "field",
                                             MAP_EDIT if kind == "edit-resummed" else MAP_BAD)
            else:
                data = byte_mutation(rng, orig, kind)
            open(mut_path, "wb").write(data)
            init_ok = True
            if target == "map":
                rc, out, err = run([a.init, "--map", mut_path, "--check"])
                same = rc == 0 and f"digest {digest}" in out
                init_ok = rc == 0 or (rc == 1 and len(err.splitlines()) == 1)
                if not init_ok:
                    err = "tbbt-init --check: " + err
                rc, _, perr = run([a.play, "--check-only", "-q", "--trace", a.trace,
                                   "--map", mut_path, "--manifest", a.manifest])
                err = err if not init_ok else perr
            else:
                same = False
                rc, out, err = run([a.play, "--check-only", "-q", "--trace", a.trace,
                                    "--map", a.map, "--manifest", mut_path])
            errl = err.splitlines()
            if data == orig:
                verdict = "identical"
            elif init_ok and rc == 1 and len(errl) == 1:
                verdict = "rejected"
            elif init_ok and rc == 0 and same and not errl:
                verdict = "harmless"
            else:
                verdict = "FAILED"
                failures.append(f"{target} {kind} {field}: exit {rc}, stderr {err!r}; "
                                f"mutant kept as {mut_path}.{target}.{len(failures)}")
                open(f"{mut_path}.{target}.{len(failures) - 1}", "wb").write(data)
            key = (target, kind)
            counts.setdefault(key, {}).setdefault(verdict, 0)
            counts[key][verdict] += 1
    os.unlink(mut_path)
    total = {}
    for (target, kind), v in sorted(counts.items()):
        print(f"{target:8} {kind:15} " + " ".join(f"{k} {n}" for k, n in sorted(v.items())))
        for k, n in v.items():
            total[k] = total.get(k, 0) + n
    print("total    " + " ".join(f"{k} {n}" for k, n in sorted(total.items())))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"total": total, "by_kind": {f"{t} {k}": v for (t, k), v in
                                                   counts.items()}}, f, indent=1)
    for line in failures[:20]:
        print("FAIL: " + line)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
