"""Reads agentgate's otlp output with the official OTLP protobuf definitions.

For every stream in the folders given (the fixtures of every dialect, the real transcripts):
`agentgate --to otlp FILE` (twice: the bytes must be the
same), and for each of the two semantic-convention settings:
- every line is under 1 MiB and one complete document, `{"resourceSpans":[...]}` or
  `{"resourceMetrics":[...]}`;
- trace and span ids are lowercase hex of 32 and 16 digits (OTLP/JSON's one departure from
  protobuf's JSON mapping); converted to base64, the line parses with
  google.protobuf.json_format.Parse(ignore_unknown_fields=False) into
  ExportTraceServiceRequest / ExportMetricsServiceRequest;
- the spans form one tree: one root `invoke_agent {agent}`, every other span its child, one
  trace id;
- one `execute_tool` span per tool call, and the `chat` spans' input and output tokens add up to
  the run's (as `agentgate summary` gives them), as do the token metrics;
- a run that did not complete has an ERROR root with `error.type` its outcome; one that did, no
  error status.
"""
import base64
import json
import re
import subprocess
import sys
from pathlib import Path

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

agentgate, folders = sys.argv[1], [Path(p) for p in sys.argv[2:]]
HEX = {"traceId": re.compile(r"^[0-9a-f]{32}$"), "spanId": re.compile(r"^[0-9a-f]{16}$"),
       "parentSpanId": re.compile(r"^[0-9a-f]{16}$")}
passed = failed = 0


def run(*args):
    return subprocess.run([agentgate, *args], capture_output=True, check=True).stdout


def attrs(kvs):
    out = {}
    for kv in kvs:
        (kind, value), = kv["value"].items()
        out[kv["key"]] = int(value) if kind == "intValue" else value
    return out


def check(path, semconv):
    out = run("--to", "otlp", "--otlp-semconv", semconv, str(path))
    assert out == run("--to", "otlp", "--otlp-semconv", semconv, str(path)), "not deterministic"
    facts = json.loads(run("summary", "--format", "jsonl", str(path)).decode().splitlines()[0])
    spans, metrics = [], []
    for n, line in enumerate(out.decode().splitlines(), 1):
        assert len(line.encode()) < 1 << 20, f"line {n} is over 1 MiB"
        doc = json.loads(line)
        assert list(doc) in (["resourceSpans"], ["resourceMetrics"]), f"line {n}: {list(doc)}"
        if "resourceSpans" in doc:
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for span in ss["spans"]:
                        spans.append(json.loads(json.dumps(span)))
                        for key, form in HEX.items():
                            # The root's parent is empty bytes: "" in either form.
                            if span.get(key):
                                assert form.match(span[key]), f"line {n}: {key} {span[key]!r}"
                                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
            json_format.Parse(json.dumps(doc), ExportTraceServiceRequest(), ignore_unknown_fields=False)
        else:
            json_format.Parse(line, ExportMetricsServiceRequest(), ignore_unknown_fields=False)
            for rm in doc["resourceMetrics"]:
                for sm in rm["scopeMetrics"]:
                    metrics.extend(sm["metrics"])
    roots = [s for s in spans if not s.get("parentSpanId")]
    assert len(roots) == 1, f"{len(roots)} roots"
    root = roots[0]
    if facts["dialect"] == "canonical":
        # The agent a canonical stream was read from, where its events say.
        assert root["name"].startswith("invoke_agent "), root["name"]
    else:
        assert root["name"] == f"invoke_agent {facts['dialect']}", root["name"]
    assert root["kind"] == 3, "the agent is another process: CLIENT"
    assert all(s["parentSpanId"] == root["spanId"] for s in spans if s is not root)
    assert len({s["traceId"] for s in spans}) == 1
    tools = [s for s in spans if s["name"].startswith("execute_tool ")]
    assert len(tools) == facts["tool_calls"]["total"], (len(tools), facts["tool_calls"])
    failed_tools = [s for s in tools if (s.get("status") or {}).get("code") == 2]
    assert len(failed_tools) >= facts["tool_calls"]["failed"], (len(failed_tools), facts["tool_calls"])
    chats = [attrs(s["attributes"]) for s in spans if s["name"].startswith("chat ")]
    tokens = facts["tokens"]
    # The run's usage is its requests': summed over every span, as receivers sum it, each
    # token counts once; the root names no provider (it is no model call) and carries none.
    everything = [attrs(s["attributes"]) for s in spans]
    for key, fact in (("gen_ai.usage.input_tokens", "input"), ("gen_ai.usage.output_tokens", "output")):
        want = tokens.get(fact) or 0
        assert sum(c.get(key, 0) for c in chats) == want, (key, [c.get(key) for c in chats], want)
        assert sum(a.get(key, 0) for a in everything) == want, (key, "over all spans")
    assert not any(k.startswith("gen_ai.usage.") or k == "gen_ai.provider.name"
                   for k in attrs(root["attributes"])), "root"
    if semconv == "released":
        usage = [m for m in metrics if m["name"] == "gen_ai.client.token.usage"]
        points = [p for m in usage for p in m["histogram"]["dataPoints"]]
        for kind, fact in (("input", "input"), ("output", "output")):
            got = sum(p["sum"] for p in points if attrs(p["attributes"])["gen_ai.token.type"] == kind)
            assert got == (tokens.get(fact) or 0), (kind, got, tokens)
    else:
        sums = {m["name"]: sum(int(p["asInt"]) for p in m["sum"]["dataPoints"]) for m in metrics if "sum" in m}
        if chats:
            assert sums.get("gen_ai.client.inference.usage.input_tokens", 0) == (tokens.get("input") or 0), sums
            assert sums.get("gen_ai.client.inference.usage.output_tokens", 0) == (tokens.get("output") or 0), sums
    status = root.get("status") or {}
    if facts["outcome"] == "completed":
        assert status.get("code", 0) == 0, status
    else:
        assert status.get("code") == 2, status
        assert attrs(root["attributes"])["error.type"] == facts["outcome"]
    return f"{facts['outcome']}, {len(spans)} spans, {len(tools)} tools"


# The dialects agentgate reads: a folder of streams of another (the real transcripts of an agent
# not read yet) is listed as skipped, as scripts/check-real.py does; never a file of one it reads.
known = {line.split()[0] for line in run("dialects").decode().splitlines() if line.split()}
skipped = {}


def dialect_of(folder, path):
    """The dialect folder a stream sits in (the first folder below the one given)."""
    rel = path.relative_to(folder).parts
    return rel[0] if len(rel) > 1 else None


# The streams themselves, not the golden outputs kept beside the fixtures.
paths = []
for folder in folders:
    for p in sorted(folder.glob("**/*.jsonl")):
        if "expected" in p.parts:
            continue
        d = dialect_of(folder, p)
        if d is not None and d not in known:
            skipped.setdefault(folder / d, []).append(p)
            continue
        paths.append(p)
for d, ps in sorted(skipped.items()):
    print(f"SKIP {d.name}/: {len(ps)} streams of a dialect agentgate does not read yet")
for path in paths:
    for semconv in ("released", "latest"):
        name = f"{path.parent.name}/{path.name} ({semconv})"
        try:
            said = check(path, semconv)
            passed += 1
            print(f"ok   {name}: {said}")
        except Exception as e:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
print(f"otlp: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
