#!/usr/bin/env python3
"""Streaming latency: write one line into agentgate's stdin pipe, time until its translation
comes out of its stdout pipe; repeat, print the median and the 95th percentile.
Usage: scripts/latency.py [AGENTGATE] [ROUNDS]"""
import json, statistics, subprocess, sys, time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/agentgate"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 500
p = subprocess.Popen([binary, "--from", "adal", "--to", "localcode"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
samples = []
for i in range(rounds):
    line = json.dumps({"type": "tool_call", "id": f"c{i}", "name": "bash", "args": {"command": "true"}}) + "\n"
    start = time.perf_counter()
    p.stdin.write(line.encode())
    out = p.stdout.readline()
    samples.append(time.perf_counter() - start)
    assert b"tool_start" in out, out
p.stdin.close()
p.wait()
samples.sort()
print(f"latency over {rounds} lines: median {statistics.median(samples) * 1000:.3f} ms, p95 {samples[int(len(samples) * 0.95)] * 1000:.3f} ms")
