#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Simulated capture loss in the text form of a TBBT trace (tbbt-dump output):
copies it, deleting each op record (a call with its reply) with probability RATE,
seeded and reproducible.  Handle and endpoint definitions stay.

    drop-records.py IN.txt OUT.txt RATE SEED
"""
import random
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: drop-records.py IN.txt OUT.txt RATE SEED")
    rng = random.Random(int(sys.argv[4]))
    rate = float(sys.argv[3])
    n = kept = 0
    with open(sys.argv[1], encoding="ascii", errors="strict") as f, \
            open(sys.argv[2], "w", encoding="ascii") as out:
        for line in f:
            if line.startswith("op "):
                n += 1
                if rng.random() < rate:
                    continue
                kept += 1
            elif line.startswith("end "):
                line = f"end {kept}\n"     # the trailer counts the records that are left
            out.write(line)
    print(f"kept {kept} of {n} records")


if __name__ == "__main__":
    main()
