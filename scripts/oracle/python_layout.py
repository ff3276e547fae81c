#!/usr/bin/env python3
"""Writes tests/oracle/python-json-dumps.jsonl: generated values as localcode's writer writes them.

localcode (localcode-notes.md) writes each line with Python's json.dumps(obj, ensure_ascii=False):
separators ", " and ": ", non-ASCII raw, floats as repr() gives them (1e-07, 1.0, 1e+16).
tests/layouts.rs parses every line and asserts that agentgate's spaced layout writes the same
bytes. Deterministic (a fixed seed): run it again and the file does not change.

    python3 scripts/oracle/python_layout.py > tests/oracle/python-json-dumps.jsonl
"""
import json
import random
import sys

rng = random.Random(20261206)

ALPHABET = ["a", "Z", " ", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
            "é", "ß", "☃", "\u2028", "\u2029", "<", ">", "&", "🙂", "中"]


def some_float():
    kind = rng.randrange(6)
    if kind == 0:
        return rng.uniform(-1, 1) * 10 ** rng.randrange(-30, 30)
    if kind == 1:
        return float(rng.randrange(-10**6, 10**6))
    if kind == 2:
        return round(rng.uniform(0, 1), rng.randrange(1, 8))
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e-4, 1e-5, 9.999e-5, 1e15, 1e16, 1e17, 1.5e16, 123456789012345678.0,
                           0.1, 0.2 + 0.1, 5e-324, 1.7976931348623157e308, 2.5, -3.75e-7])
    if kind == 4:
        return rng.randrange(1, 10) * 10.0 ** rng.randrange(-12, 25)
    return rng.random() / 10 ** rng.randrange(0, 12)


def some_string():
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 8)))


def some_value(depth=0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return some_float()
    if kind == 1:
        return rng.randrange(-2**63, 2**63)
    if kind == 2:
        return some_string()
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return some_float()
    if kind == 5:
        return [some_value(depth + 1) for _ in range(rng.randrange(0, 4))]
    return {some_string() or "k": some_value(depth + 1) for _ in range(rng.randrange(0, 4))}


for n in range(400):
    line = {"type": "notice", "text": some_string(), "n": n, "value": some_value(), "f": some_float()}
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
