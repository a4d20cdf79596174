#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mapsum.py FILE [OUT]: (re)writes the checksum line of a hierarchy map or a tbbt-init
manifest (src/util/textsum.h), so that tests can write maps by hand or change one
on purpose.  A version 2 map header ("# tbbt-map 2") becomes version 3, a version 1
manifest header version 2.  OUT defaults to FILE."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from tbbtfmt import textsum_add, textsum_strip  # noqa: E402  (tools/tbbtfmt.py)


def main():
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else src
    data = textsum_strip(open(src, "rb").read())
    for old, new in ((b"# tbbt-map 2\n", b"# tbbt-map 3\n"),
                     (b"# tbbt-manifest 1\n", b"# tbbt-manifest 2\n")):
        if data.startswith(old):
            data = new + data[len(old):]
    open(dst, "wb").write(textsum_add(data))


if __name__ == "__main__":
    main()
