"""The official Claude Agent SDK (claude-agent-sdk, Python) reading agentgate's claude-code
output: each fixture of every dialect through the SDK's message parser, and end to end through
its client (query) pointed (cli_path) at a wrapper that runs
`agentgate exec --as claude-code "$@" -- cat FIXTURE`, which takes the flags the SDK gives and
answers its initialize handshake; once more with include_partial_messages, whose StreamEvent
messages must build the assistant messages that follow them. The typed messages (result subtype, is_error, usage, cost, tool uses and
results) are held to the facts agentgate's canonical translation of the fixture states.

With ACP_WRAPPER and FACTS (a JSON file), the same client runs an ACP agent built on the
official ACP SDK (scripts/sdk/acp-fake-agent.mjs) behind `agentgate exec --as claude-code --from
acp`, once per scenario, and holds what it gives to the facts the scenario scripts.

Usage: python claude_sdk_check.py AGENTGATE FIXTURES_DIR WRAPPER [ACP_WRAPPER FACTS]
"""
import asyncio
import json
import os
import subprocess
import sys

from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, UserMessage, query
from claude_agent_sdk._internal.message_parser import parse_message
from claude_agent_sdk.types import StreamEvent, TextBlock, ToolResultBlock, ToolUseBlock

AGENTGATE, FIXTURES, WRAPPER = sys.argv[1:4]
ACP_WRAPPER, ACP_FACTS = (sys.argv[4:6] + [None, None])[:2]


def facts(path):
    out = subprocess.run([AGENTGATE, "--to", "canonical", path], capture_output=True, text=True).stdout
    lines = [json.loads(l) for l in out.splitlines()]
    t = lines[-1]
    # Every call made (one id may be given twice), and a result or refusal whose call the
    # stream never showed (it gets a tool_use of its own).
    made = [l.get("id") for l in lines if l["type"] == "tool_call"]
    for s in (l for l in lines if l["type"] == "session_summary"):
        made += [c.get("id") for c in s.get("tool_calls") or []]
    orphans = {l.get("id") for l in lines if l["type"] in ("tool_result", "permission_denied")} - set(made)
    results = sum(1 for l in open(path, encoding="utf-8") if '"type":"result"' in l) if "claude-code" in path else 1
    cost = t.get("cost_usd")
    if "claude-code" in path:
        # A Claude Code stream comes back as it was: its result's own total_cost_usd (the
        # canonical cost may be modelUsage's sum where the result states no total).
        own = [json.loads(l) for l in open(path, encoding="utf-8") if '"type":"result"' in l]
        cost = own[-1].get("total_cost_usd") if own else None
    return {"outcome": t["outcome"], "final_text": t.get("final_text") or "", "usage": t.get("usage") or {},
            "cost": cost,
            "calls": len(made) + len(orphans), "results": max(results, 1)}


def check(messages, want):
    problems = []
    results = [m for m in messages if isinstance(m, ResultMessage)]
    if len(results) != want["results"]:
        return [f"{len(results)} ResultMessage, want {want['results']}"]
    if want["results"] > 1:
        # A Claude Code stream with several results comes back with them: the outcome only.
        return [] if results[-1].is_error == (want["outcome"] != "completed") else ["is_error of the last result"]
    r = results[0]
    completed = want["outcome"] == "completed"
    if r.is_error == completed:
        problems.append(f"is_error {r.is_error} for a {want['outcome']} run")
    if completed and r.subtype != "success":
        problems.append(f"subtype {r.subtype}")
    if completed and (r.result or "") != want["final_text"]:
        problems.append(f"result {r.result!r}, want {want['final_text']!r}")
    u = r.usage or {}
    got_input = u.get("input_tokens", 0) + u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
    if got_input != want["usage"].get("input", 0):
        problems.append(f"input tokens {got_input}, want {want['usage'].get('input', 0)}")
    # The cost where the source states one, none made up (agentgate never prices tokens).
    if r.total_cost_usd != want["cost"]:
        problems.append(f"total_cost_usd {r.total_cost_usd}, want {want['cost']}")
    if u.get("output_tokens", 0) != want["usage"].get("output", 0):
        problems.append(f"output tokens {u.get('output_tokens')}, want {want['usage'].get('output', 0)}")
    uses = {b.id for m in messages if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, ToolUseBlock)}
    answered = {b.tool_use_id for m in messages if isinstance(m, UserMessage) and isinstance(m.content, list)
                for b in m.content if isinstance(b, ToolResultBlock)}
    if len(uses) != want["calls"]:
        problems.append(f"{len(uses)} tool uses, want {want['calls']}")
    if not answered <= uses:
        problems.append(f"results for calls never made: {answered - uses}")
    if r.session_id is None or r.num_turns is None or r.duration_ms is None:
        problems.append("result lacks session_id, num_turns or duration_ms")
    return problems


def check_partials(messages):
    """Each text block of an AssistantMessage is what the StreamEvent text deltas before it
    gave (claude-code.md, Partial messages); the messages are the same as without partials."""
    problems, pieces = [], {}
    events = [m for m in messages if isinstance(m, StreamEvent)]
    if not events:
        return ["no StreamEvent with include_partial_messages"]
    for m in messages:
        if isinstance(m, StreamEvent):
            e = m.event
            if e.get("type") == "content_block_start":
                pieces[e["index"]] = ""
            elif e.get("type") == "content_block_delta" and e["delta"].get("type") == "text_delta":
                pieces[e["index"]] = pieces.get(e["index"], "") + e["delta"]["text"]
            elif e.get("type") == "message_start":
                pieces = {}
        elif isinstance(m, AssistantMessage):
            for b in m.content:
                if isinstance(b, TextBlock) and b.text not in pieces.values():
                    problems.append(f"text {b.text[:40]!r} not built by its deltas")
    return problems


async def end_to_end(path, partial=False):
    env = {"AGENTGATE": AGENTGATE, "AGENTGATE_FIXTURE": path, "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"}
    options = ClaudeAgentOptions(cli_path=WRAPPER, env=env, include_partial_messages=partial)
    return [m async for m in query(prompt="go", options=options)]


async def query_all(options):
    return [m async for m in query(prompt="go", options=options)]


def main():
    passed = failed = 0
    for dialect in sorted(os.listdir(FIXTURES)):
        folder = os.path.join(FIXTURES, dialect)
        if not os.path.isdir(folder):
            continue
        for name in sorted(f for f in os.listdir(folder) if f.endswith(".jsonl")):
            path = os.path.join(folder, name)
            want = facts(path)
            out = subprocess.run([AGENTGATE, "--to", "claude-code", path], capture_output=True, text=True).stdout
            parsed = [m for m in (parse_message(json.loads(l)) for l in out.splitlines()) if m is not None]
            problems = [f"parser: {p}" for p in check(parsed, want)]
            for partial in (False, True):
                who = "client (partial messages)" if partial else "client"
                try:
                    messages = asyncio.run(end_to_end(path, partial))
                    problems += [f"{who}: {p}" for p in check(messages, want)]
                    if partial and dialect != "claude-code":
                        problems += [f"{who}: {p}" for p in check_partials(messages)]
                    if want["outcome"] != "completed":
                        problems.append(f"{who}: a {want['outcome']} run did not raise")
                except Exception as e:  # noqa: BLE001 - the check reports whatever the SDK raised
                    # The client raises on an error result: a run that did not complete says so.
                    if want["outcome"] == "completed" or "error result" not in str(e):
                        problems.append(f"{who} raised {type(e).__name__}: {e}")
            if problems:
                failed += 1
                print(f"FAIL {dialect}/{name}\n  " + "\n  ".join(problems))
            else:
                passed += 1
                print(f"ok   {dialect}/{name}: {want['outcome']}")
    if ACP_WRAPPER:
        for scenario, f in json.load(open(ACP_FACTS, encoding="utf-8")).items():
            want = {"outcome": f["outcome"], "final_text": f.get("text", ""), "cost": None, "results": 1,
                    "usage": {"input": f.get("input", 0), "output": f.get("output", 0)}, "calls": f.get("calls", 0)}
            env = {"AGENTGATE": AGENTGATE, "AGENTGATE_SCENARIO": scenario, "AGENTGATE_PERMISSION": f.get("permission", "deny"),
                   "AGENTGATE_TIMEOUT": f.get("timeout", ""),
                   "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1"}
            problems = []
            try:
                messages = asyncio.run(query_all(ClaudeAgentOptions(cli_path=ACP_WRAPPER, env=env)))
                problems += check(messages, want)
                if want["outcome"] != "completed":
                    problems.append(f"a {want['outcome']} run did not raise")
            except Exception as e:  # noqa: BLE001 - the check reports whatever the SDK raised
                if want["outcome"] == "completed" or "error result" not in str(e):
                    problems.append(f"raised {type(e).__name__}: {e}")
            if problems:
                failed += 1
                print(f"FAIL acp/{scenario}\n  " + "\n  ".join(problems))
            else:
                passed += 1
                print(f"ok   acp/{scenario}: {want['outcome']}")
    print(f"claude-sdk: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
