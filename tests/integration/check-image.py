#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a tbbt-init image against its hierarchy map: every entry that exists at trace
start (create time 0) is there with the right type, size, link count, symlink target,
mode and owner; entries made during the trace are not; hard links share an inode; the
image root (the map's "." entry) has the root's mode and owner.

    check-image.py MAP DIR
"""
import os
import re
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from tbbtfmt import unescape  # noqa: E402  (tools/tbbtfmt.py)


def main():
    mp, root = sys.argv[1], sys.argv[2].encode()
    lines = open(mp, encoding="ascii").read().splitlines()
    assert lines[0] == "# tbbt-map 2" or lines[0].startswith("# tbbt-map 3"), "not a map"
    inodes, n = {}, 0
    for ln in lines[1:]:
        if not ln or ln.startswith("#"):
            continue
        f = ln.split("\t")
        oid, typ, size, create, path, target, links, attrs = f[0], f[1], f[2], f[3], f[5], f[7], int(f[8]), f[9]
        if path == ".":
            st = os.stat(root)
            if attrs != "-":
                mode, uid, gid = attrs.split(":")
                if stat.S_IMODE(st.st_mode) != int(mode, 8) or (st.st_uid, st.st_gid) != (int(uid), int(gid)):
                    sys.exit(f"FAIL: the image root: mode {oct(stat.S_IMODE(st.st_mode))} owner "
                             f"{st.st_uid}:{st.st_gid}, want {mode} {uid}:{gid}")
            continue
        p = os.path.join(root, unescape(path))
        if create != "0":
            if os.path.lexists(p):
                sys.exit(f"FAIL: {path} is made during the trace but exists in the image")
            continue
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            sys.exit(f"FAIL: {path} is missing")
        kind = {"d": stat.S_ISDIR, "f": stat.S_ISREG, "l": stat.S_ISLNK, "o": stat.S_ISFIFO}[typ]
        if not kind(st.st_mode):
            sys.exit(f"FAIL: {path}: wrong type (want {typ})")
        if typ == "f":
            m = re.fullmatch(r"(\d+)(\+?)", size)
            if m and m.group(2) == "" and st.st_size != int(m.group(1)):
                sys.exit(f"FAIL: {path}: size {st.st_size}, want {size}")
            if m and m.group(2) == "+" and st.st_size < int(m.group(1)):
                sys.exit(f"FAIL: {path}: size {st.st_size}, want at least {m.group(1)}")
            if st.st_blocks * 512 < st.st_size - 4096:
                sys.exit(f"FAIL: {path}: sparse ({st.st_blocks} blocks for {st.st_size} bytes)")
            if st.st_nlink != links:
                sys.exit(f"FAIL: {path}: {st.st_nlink} links, want {links}")
            if inodes.setdefault(oid, st.st_ino) != st.st_ino:
                sys.exit(f"FAIL: {path}: not the same inode as the other names of id {oid}")
        if typ == "l" and os.readlink(p) != unescape(target):
            sys.exit(f"FAIL: {path}: target {os.readlink(p)!r}, want {target!r}")
        if attrs != "-":
            mode, uid, gid = attrs.split(":")
            # set-uid bits are never made, set-gid ones only on directories (docs/tbbt-init.md)
            want = int(mode, 8) & ~(0o4000 if typ == "d" else 0o6000)
            if typ != "l" and stat.S_IMODE(st.st_mode) != want:
                sys.exit(f"FAIL: {path}: mode {oct(stat.S_IMODE(st.st_mode))}, want {mode}")
            if (st.st_uid, st.st_gid) != (int(uid), int(gid)):
                sys.exit(f"FAIL: {path}: owner {st.st_uid}:{st.st_gid}, want {uid}:{gid}")
        n += 1
    print(f"ok: {n} start entries of the map are in the image as the map says")


if __name__ == "__main__":
    main()
