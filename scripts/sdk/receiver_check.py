"""Sends every stream in the folders given to otelite, a real OTLP receiver, and reads it back.

For each way of sending (summary over OTLP/JSON, --to otlp over OTLP/protobuf, exec over
OTLP/protobuf), a fresh otelite on 127.0.0.1 (free ports, its own storage and HOME) receives every
file; then, through otelite's REST API, for every run:
- exactly one trace with the run's trace id (/api/traces?trace_id=), whose spans (/api/traces/ID)
  are one invoke_agent root, one execute_tool span per tool call (`agentgate summary`'s
  tool_calls.total) and chat spans whose input and output tokens add up to the summary's;
- under exec, the run's start inside the last 24 hours (and /api/traces?start_time=now-24h lists it);
and over all runs, /api/genai/usage (which sums the spans that name a provider) gives the sum of
the runs' tokens whose model calls name one, and one request per such call: no token counted
twice. Usage: receiver_check.py OTELITE AGENTGATE FOLDER...
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

otelite, agentgate, folders = sys.argv[1], sys.argv[2], [Path(p) for p in sys.argv[3:]]
DAY_NS = 24 * 3600 * 10**9
passed = failed = 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*args, **kw):
    return subprocess.run([agentgate, *args], capture_output=True, **kw)


class Otelite:
    """otelite serve on loopback, in a folder of its own; stopped by stop()."""

    def __init__(self):
        self.home = tempfile.mkdtemp(prefix="agentgate-otelite-")
        self.api, http, grpc = free_port(), free_port(), free_port()
        env = dict(os.environ, HOME=self.home, OTELITE_OTLP_HTTP_PORT=str(http),
                   OTELITE_OTLP_GRPC_PORT=str(grpc), OTELITE_DATA_DIR=f"{self.home}/data")
        self.log = open(f"{self.home}/otelite.log", "w")
        self.proc = subprocess.Popen(
            [otelite, "serve", "--addr", f"127.0.0.1:{self.api}", "--storage-path", f"{self.home}/data"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.endpoint = f"http://127.0.0.1:{http}"
        for _ in range(300):
            try:
                self.get("/api/traces?limit=1")
                with socket.create_connection(("127.0.0.1", http), timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("otelite did not start: " + open(f"{self.home}/otelite.log").read()[-2000:])

    def get(self, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.api}{path}", timeout=30) as r:
            return json.load(r)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)


def streams():
    """The streams (not the golden outputs), of the dialects agentgate reads."""
    known = {line.split()[0] for line in run("dialects").stdout.decode().splitlines() if line.split()}
    out = []
    for folder in folders:
        for p in sorted(folder.glob("**/*.jsonl")):
            rel = p.relative_to(folder).parts
            if "expected" in p.parts or (len(rel) > 1 and rel[0] not in known):
                continue
            out.append(p)
    return out


def expectations(path):
    """The run's trace id and its figures: from `--to otlp` and `summary`, as a receiver should see them."""
    docs = [json.loads(line) for line in run("--to", "otlp", str(path), check=True).stdout.decode().splitlines()]
    spans = [s for d in docs for rs in d.get("resourceSpans", []) for ss in rs["scopeSpans"] for s in ss["spans"]]
    facts = json.loads(run("summary", "--format", "jsonl", str(path), check=True).stdout.decode().splitlines()[0])
    chats = [s for s in spans if s["name"].startswith("chat ")]
    named = [c for c in chats if any(a["key"] == "gen_ai.provider.name" for a in c["attributes"])]
    return spans[0]["traceId"], facts, len(chats), named


def check_run(receiver, path, trace_id, facts, live):
    listed = receiver.get(f"/api/traces?trace_id={trace_id}&limit=10")["traces"]
    assert len(listed) == 1, f"{len(listed)} traces with id {trace_id}"
    detail = receiver.get(f"/api/traces/{trace_id}")
    spans = detail["spans"]
    roots = [s for s in spans if not s.get("parent_span_id")]
    assert len(roots) == 1 and roots[0]["name"].startswith("invoke_agent"), [s["name"] for s in roots]
    tools = [s for s in spans if s["name"].startswith("execute_tool ")]
    assert len(tools) == facts["tool_calls"]["total"], (len(tools), facts["tool_calls"])
    for key, fact in (("gen_ai.usage.input_tokens", "input"), ("gen_ai.usage.output_tokens", "output")):
        got = sum(int(s["attributes"].get(key, 0)) for s in spans)
        want = facts["tokens"].get(fact) or 0
        assert got == want, (key, got, want)
    if live:
        now = time.time_ns()
        start = roots[0]["start_time"]
        assert now - DAY_NS < start <= now, ("not in the last 24 hours", start, now)


def check_way(way, paths, expected):
    """One otelite, every file sent one way, every run read back."""
    global passed, failed
    receiver = Otelite()
    try:
        started = time.time()
        if way == "summary over http/json":
            out = run("summary", "--otlp-endpoint", receiver.endpoint, "--otlp-protocol", "http/json",
                      *map(str, paths))
            outs = [out]
        elif way == "--to otlp over http/protobuf":
            out = run("--to", "otlp", "--otlp-endpoint", receiver.endpoint, "--otlp-protocol", "http/protobuf",
                      *map(str, paths))
            outs = [out]
        else:
            outs = [run("exec", "--as", "otlp", "--otlp-endpoint", receiver.endpoint, "--", "cat", str(p))
                    for p in paths]
        took = time.time() - started
        for o in outs:
            err = o.stderr.decode()
            assert "otlp:" not in err, err
        size = sum(p.stat().st_size for p in paths)
        print(f"{way}: {len(paths)} runs sent in {took:.2f}s ({len(paths) / took:.0f} runs/s, "
              f"{size / took / 1e6:.2f} MB/s of source streams)")
        for p in paths:
            name = f"{p.parent.name}/{p.name} ({way})"
            trace_id, facts, _, _ = expected[p]
            try:
                check_run(receiver, p, trace_id, facts, live=way.startswith("exec"))
                passed += 1
                print(f"ok   {name}")
            except Exception as e:  # noqa: BLE001 - every failure is reported, then counted
                failed += 1
                print(f"FAIL {name}: {type(e).__name__}: {e}")
        # Usage over every span that names a provider: each token once, one request per call.
        usage = receiver.get("/api/genai/usage")["summary"]
        named = [c for p in paths for c in expected[p][3]]
        def total(key):
            return sum(int(a["value"]["intValue"]) for c in named for a in c["attributes"] if a["key"] == key)
        want = (total("gen_ai.usage.input_tokens"), total("gen_ai.usage.output_tokens"), len(named))
        got = (usage["total_input_tokens"], usage["total_output_tokens"], usage["total_requests"])
        if got == want:
            passed += 1
            print(f"ok   /api/genai/usage ({way}): {got[0]} in, {got[1]} out, {got[2]} requests")
        else:
            failed += 1
            print(f"FAIL /api/genai/usage ({way}): {got}, want {want}")
        if way.startswith("exec"):
            since = time.time_ns() - DAY_NS
            listed = receiver.get(f"/api/traces?start_time={since}&limit=1000")["total"]
            ok = listed == len(paths)
            passed, failed = passed + ok, failed + (not ok)
            print(f"{'ok  ' if ok else 'FAIL'} the last 24 hours list {listed} of {len(paths)} runs sent under exec")
    finally:
        receiver.stop()


def check_stopped(paths):
    """The receiver stopped: spool and exit 69; then `export` delivers the spool to it."""
    global passed, failed
    spool = tempfile.mkdtemp(prefix="agentgate-spool-")
    receiver = Otelite()
    endpoint = receiver.endpoint
    receiver.proc.terminate()
    receiver.proc.wait()
    try:
        out = run("--to", "otlp", "--otlp-endpoint", endpoint, "--otlp-spool", spool, *map(str, paths))
        spooled = sorted(os.listdir(spool))
        ok = out.returncode == 69 and f"{len(paths)} of {len(paths)} runs not delivered" in out.stderr.decode() \
            and spooled
        passed, failed = passed + bool(ok), failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} receiver stopped: exit {out.returncode}, {len(spooled)} batches spooled")
    finally:
        receiver.log.close()
        shutil.rmtree(receiver.home, ignore_errors=True)
    receiver = Otelite()
    try:
        out = run("export", "--otlp-endpoint", receiver.endpoint, spool)
        ok = out.returncode == 0 and not os.listdir(spool)
        total = receiver.get("/api/traces?limit=1000")["total"]
        ok = ok and total == len(paths)
        passed, failed = passed + bool(ok), failed + (not ok)
        print(f"{'ok  ' if ok else 'FAIL'} export of the spool: exit {out.returncode}, {total} traces received, "
              f"{len(os.listdir(spool))} files left {out.stderr.decode().strip()}")
    finally:
        receiver.stop()
        shutil.rmtree(spool, ignore_errors=True)


paths = streams()
expected = {p: expectations(p) for p in paths}
for way in ("summary over http/json", "--to otlp over http/protobuf", "exec over http/protobuf"):
    check_way(way, paths, expected)
check_stopped(paths[:5])
print(f"receiver: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
