#!/usr/bin/env python3
"""Drops from a fuzz corpus every input that holds a stretch of a real stream.

The real streams (../shared/real) are third-party data: they seed the campaigns from where they
lie and are never committed. An input libFuzzer made by mutating one keeps most of its bytes, so
before the corpus is committed (scripts/fuzz.sh --minimize), every input that shares WINDOW
bytes in a row with any real stream is removed (its coverage comes back from the seeds).

    scripts/fuzz-clean.py REAL_DIR CORPUS_DIR
"""

import os
import sys

WINDOW = 48


def windows(data):
    return {data[i : i + WINDOW] for i in range(0, max(len(data) - WINDOW + 1, 0))}


def main():
    real, corpus = sys.argv[1], sys.argv[2]
    seen = set()
    for folder, _, files in os.walk(real):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                seen |= windows(f.read())
    dropped = kept = 0
    for folder, _, files in os.walk(corpus):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                data = f.read()
            if any(data[i : i + WINDOW] in seen for i in range(0, max(len(data) - WINDOW + 1, 0))):
                os.remove(path)
                dropped += 1
            else:
                kept += 1
    print(f"fuzz-clean: {kept} inputs kept, {dropped} holding a stretch of a real stream dropped", file=sys.stderr)


if __name__ == "__main__":
    main()
