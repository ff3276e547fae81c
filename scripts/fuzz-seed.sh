#!/usr/bin/env bash
# Seeds the fuzz targets (fuzz/seeds/<target>/) and writes a dictionary per dialect
# (fuzz/dict/<dialect>.dict), both outside git: the seeds are the fixtures and the real streams in
# ../shared/real (third-party data, read from there, never committed), each where a target reads
# it, with the selector byte a pipeline or validate input starts with; the dictionaries are each
# contract's record kinds, member names and listed values (mappings/<dialect>.json). The corpus
# the campaigns found beyond these is committed in fuzz/corpus/ (scripts/fuzz.sh).
#
# ACP has neither fixtures nor real streams: its seeds are connections recorded here, `agentgate
# acp` serving each stream to a client written below (with AGENTGATE, a built binary; without,
# none).
#
#   scripts/fuzz-seed.sh [AGENTGATE [REAL_DIR]]   (defaults: target/debug/agentgate, ../shared/real)
set -euo pipefail
cd "$(dirname "$0")/.."
agentgate="${1:-target/debug/agentgate}"
real="${2:-../shared/real}"
rm -rf fuzz/seeds fuzz/dict
mkdir -p fuzz/seeds fuzz/dict
python3 - "$agentgate" "$real" <<'EOF'
import glob, hashlib, json, os, subprocess, sys

agentgate, real = sys.argv[1], sys.argv[2]
dialects = ["localcode", "adal", "wuu", "loom", "base-context", "claude-code", "codex", "gemini", "canonical", "acp"]
# The pipeline targets' first byte picks the target, as fuzz/src/lib.rs `targets()` lists them
# (Dialect::targets(): every dialect read and written, then otlp), and options in its high bits.
targets = 10
sources = dialects  # Dialect::sources(), in the order validate's first byte counts them

def streams(d):
    files = sorted(f for f in glob.glob(f"tests/fixtures/{d}/*.jsonl"))
    if os.path.isdir(real):
        files += sorted(glob.glob(f"{real}/{d}/*.jsonl") + glob.glob(f"{real}/{d}/*.json"))
    return files

def put(target, data):
    folder = f"fuzz/seeds/{target}"
    os.makedirs(folder, exist_ok=True)
    with open(f"{folder}/{hashlib.sha1(data).hexdigest()}", "wb") as f:
        f.write(data)

def acp_connection(dialect, path):
    """A client's session with `agentgate acp` serving the stream at `path`: every line of the
    connection in order, and the client's own."""
    p = subprocess.Popen(
        ["timeout", "20", agentgate, "acp", "--from", dialect, "--", "sh", "-c", 'exec cat "$0"', os.path.abspath(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines, client = [], []
    def send(message):
        line = json.dumps(message, separators=(",", ":"))
        lines.append(line)
        client.append(line)
        p.stdin.write(line + "\n")
        p.stdin.flush()
    def answer(rid):
        for line in p.stdout:
            lines.append(line.rstrip("\n"))
            m = json.loads(line)
            if m.get("id") == rid and ("result" in m or "error" in m):
                return m
        return {}
    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        answer(0)
        send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
        sid = answer(1).get("result", {}).get("sessionId", "s")
        prompt = [{"type": "text", "text": "go "}, {"type": "resource_link", "uri": "file:///tmp/a%20b.rs", "name": "a"}]
        send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": sid, "prompt": prompt}})
        answer(2)
        send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        p.stdin.close()
        p.wait(timeout=20)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        p.kill()
        return None, None
    return ("\n".join(lines) + "\n").encode(), ("\n".join(client) + "\n").encode()

def seed_acp(transcript, client, i):
    put("decode_acp", transcript)
    for t in range(targets):
        put("pipeline_acp", bytes([t]) + transcript)
    put("pipeline_acp", bytes([0xF0 | (i % targets)]) + transcript)
    put("validate", bytes([sources.index("acp")]) + transcript)
    put("acp_server", client)

count = 0
for d in dialects:
    name = d.replace("-", "_")
    for i, path in enumerate(streams(d)):
        data = open(path, "rb").read()
        put(f"decode_{name}", data)
        # Each stream to every target, and with options (strict, a short line limit, the other
        # forms, a SOURCE_DATE_EPOCH) to one target in turn.
        for t in range(targets):
            put(f"pipeline_{name}", bytes([t]) + data)
        put(f"pipeline_{name}", bytes([0xF0 | (i % targets)]) + data)
        put(f"pipeline_{name}", bytes([0x50 | ((i + 3) % targets)]) + data)
        put("validate", bytes([sources.index(d)]) + data)
        put("validate", bytes([len(sources)]) + data)
        put("framing", bytes([0xFF, 0xC0 | (i % 32)]) + data)
        put("framing", bytes([i % 64, (i * 37) % 256]) + data)
        count += 1
        # The same stream served over ACP, both sides recorded: a transcript acp reads.
        if d != "acp" and os.access(agentgate, os.X_OK):
            transcript, client = acp_connection(d, path)
            if transcript:
                seed_acp(transcript, client, i)

# A dictionary per dialect: the type member with each kind, every member name the contract
# lists (at any depth) and every value it lists.
def walk(fields, names, values):
    for n, f in (fields or {}).items():
        names.add(n)
        for v in f.get("values", []) + f.get("older_values", []):
            values.add(json.dumps(v, ensure_ascii=False))
        walk(f.get("fields"), names, values)

def entry(s):
    out = ""
    for b in s.encode():
        if b == 0x22 or b == 0x5C:
            out += "\\" + chr(b)
        elif 0x20 <= b < 0x7F:
            out += chr(b)
        else:
            out += "\\x%02X" % b
    return '"' + out + '"'

for d in dialects + ["otlp"]:
    c = json.load(open(f"mappings/{d}.json"))
    tf = c.get("type_field", "type")
    names, values = set(), set()
    walk(c.get("common"), names, values)
    tokens = set()
    for kind, spec in c.get("kinds", {}).items():
        tokens.add(json.dumps({tf: kind}, ensure_ascii=False)[1:-1])
        tokens.add(json.dumps(kind, ensure_ascii=False))
        walk(spec.get("fields"), names, values)
    for n in names:
        tokens.add(json.dumps(n, ensure_ascii=False) + ":")
    tokens |= values
    if d == "acp":
        for m in ["initialize", "session/new", "session/prompt", "session/update", "session/cancel",
                  "session/request_permission", "$/cancel_request", "fs/read_text_file", "terminal/create"]:
            tokens.add(json.dumps(m))
        for k in ["jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data",
                  "protocolVersion", "sessionId", "cwd", "mcpServers", "prompt", "stopReason", "usage",
                  "update", "toolCall", "options", "optionId", "outcome", "_meta", "uri", "requestId"]:
            tokens.add(json.dumps(k) + ":")
        tokens.add('"jsonrpc":"2.0"')
        p = json.load(open("mappings/acp.json"))
        for s in p.get("stop_reasons", []):
            tokens.add(json.dumps(s))
    with open(f"fuzz/dict/{d}.dict", "w") as f:
        f.write(f"# {d}: kinds, members and values of mappings/{d}.json (scripts/fuzz-seed.sh)\n")
        for i, t in enumerate(sorted(tokens)):
            f.write(f"t{i}={entry(t)}\n")
print(f"fuzz-seed: {count} streams seeded; dictionaries for {len(dialects) + 1} dialects", file=sys.stderr)
EOF
