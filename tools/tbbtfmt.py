# SPDX-License-Identifier: MIT
"""tbbtfmt: the text formats that tbbt's Python tools and tests share.

- The escaping of a hierarchy map's path and target fields (docs/hierarchy-map.md,
  "Escaping": printable ASCII as is, a backslash as two, every other byte as \\xNN)
  and of a tools/tree-snap.py snapshot's path and target fields (every byte outside
  printable ASCII, tab, backslash and a leading '#' as \\xHH; never two backslashes):
  unescape() reads both.
- The snapshot format of tools/tree-snap.py (docs/lab.md, "tree-snap.py"): one line per
  object, PATH TYPE SIZE TARGET MODE UID GID NLINK tab-separated, '#' lines comments;
  snap_escape() and snap_load().
- The values of a trace's text form (docs/trace-format.md, "Text form"): split_top()
  splits at a separator outside quotes, braces and brackets, and op4_list() reads an
  `ops=[...]` value into one {member: text} dict per NFSv4 operation.

It does not parse a map's other fields (tbbt_ns_map_reader_*() in src/ns/ns.h is the
strict reader) or write maps.  Standard library only.  Tools in tools/ import it
directly; tests put tools/ on sys.path first.
"""

SNAP_FORMAT = "tree-snap 1"
SNAP_FIELDS = ("type", "size", "target", "mode", "uid", "gid", "nlink")


def unescape(field):
    """The bytes a map or snapshot FIELD (str) stands for: \\\\ is a backslash, \\xNN the
    byte 0xNN, anything else itself.  Scans left to right, so the 'x41' in '\\\\x41' stays
    text.  Raises ValueError on another escape, a short \\x or a non-ASCII character."""
    out, i, n = bytearray(), 0, len(field)
    while i < n:
        c = field[i]
        if c != "\\":
            out += c.encode("ascii")
            i += 1
        elif field[i + 1:i + 2] == "\\":
            out.append(0x5C)
            i += 2
        elif field[i + 1:i + 2] == "x" and i + 4 <= n and \
                all(h in "0123456789abcdefABCDEF" for h in field[i + 2:i + 4]):
            out.append(int(field[i + 2:i + 4], 16))
            i += 4
        else:
            raise ValueError(f"bad escape at offset {i} of {field!r}")
    return bytes(out)


def snap_escape(raw):
    """RAW (bytes) as a snapshot field: printable ASCII as is; tab, backslash, a leading
    '#' and every other byte as \\xHH."""
    out = []
    for i, b in enumerate(raw):
        if 0x20 <= b < 0x7F and b != 0x5C and not (i == 0 and b == 0x23):
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return "".join(out)


def snap_load(path):
    """{escaped path: {field: value}} of the snapshot file PATH (values as written; see
    unescape() for paths and targets).  Raises OSError when PATH cannot be read and
    ValueError (naming the line) when it is not a snapshot."""
    snap = {}
    with open(path, encoding="ascii") as f:
        try:
            for n, line in enumerate(f, 1):
                if line.startswith("#") or not line.strip():
                    continue
                cols = line.rstrip("\n").split("\t")
                if len(cols) != 1 + len(SNAP_FIELDS):
                    raise ValueError(f"{path}:{n}: not a snapshot line ({len(cols)} fields)")
                snap[cols[0]] = dict(zip(SNAP_FIELDS, cols[1:]))
        except UnicodeDecodeError:
            raise ValueError(f"{path} is not a snapshot (not ASCII)") from None
    return snap


# ---- checksum lines (src/util/textsum.h) ----------------------------------------------

TEXTSUM_PREFIX = b"# crc32 "


def textsum_strip(data):
    """DATA (bytes) without its last line if that is a checksum line."""
    body = data[:-1] if data.endswith(b"\n") else data
    cut = body.rfind(b"\n") + 1
    return data[:cut] if body[cut:].startswith(TEXTSUM_PREFIX) else data


def textsum_add(data):
    """DATA (bytes, ending with a newline) with its checksum line appended: the CRC-32
    (zlib's) of every byte before it, as the map and manifest writers put it."""
    import zlib
    return data + TEXTSUM_PREFIX + b"%08x\n" % zlib.crc32(data)


def split_top(s, sep):
    """Splits s at sep outside quotes (with their escapes), braces and brackets."""
    out, depth, cur, quoted, esc = [], 0, [], False, False
    for ch in s:
        if quoted:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def op4_list(text):
    """[{member: value text}] of an op line's ops=[...] value (the text after "ops=")."""
    ops = []
    for item in split_top(text[1:-1], ","):
        d = {}
        for kv in split_top(item.strip()[1:-1], ","):
            k, _, v = kv.partition("=")
            d[k] = v
        ops.append(d)
    return ops
