#!/usr/bin/env python3
"""Translates every real transcript in ../shared/real (streams written by the agents' own
projects) to every target, and holds each output to the target's contract (`agentgate
validate`) and to the source's facts: outcome (as the target can say it), final text, tool
calls and their statuses, token totals; and translated by way of canonical, to the same bytes.
A live capture's `.rc` (its CLI's exit status) is what `exec --as` its dialect exits with when
replaying it. Run by .ci/run after the test suite; not part of `cargo test`, which must pass on a
clone without ../shared.

Usage: scripts/check-real.py [AGENTGATE] [REAL_DIR]
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "agentgate")
REAL = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared", "real")

# Files of another generation of their format than the spec's, and what differs. They are read
# as well as the spec allows (translated, facts kept, every output valid), and `validate` on the
# file itself exits 1 with one problem that names the generation, not a wall of problems: a
# reader of the current contract rejects such a stream (issue 54).
OTHER_GENERATION = {
    "base-context/takopi_pi_print_mode_events.jsonl": "upstream Pi: no session header, auto_compaction_* names",
    "base-context/takopi_pi_stream_success.jsonl": "upstream Pi: no session header, message_end and tool_execution_* only",
    "base-context/takopi_pi_stream_error.jsonl": "upstream Pi: no session header",
}

# Files cut from a longer stream (an excerpt, a truncated capture): `validate` must find their
# missing ending, and that alone (a run without its ending is incomplete in every dialect).
CUT = {
    "claude-code/agentic-org-v2-task018.v2.1.63.lines-1-3_5-11.jsonl": "an excerpt: its result is in lines left out",
    "codex/agentcmd-stream-output-multi-1.v0.46.0.truncated.jsonl": "truncated before its turn ended",
}


def run(args, data=None):
    p = subprocess.run([BIN] + args, input=data, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def dialects():
    code, out, _ = run(["dialects"])
    assert code == 0, "agentgate dialects failed"
    names = []
    for line in out.decode().splitlines():
        word = line.split()[0] if line.split() else ""
        if word and word not in ("name", "dialect") and not word.startswith("-"):
            names.append(word)
    return names


def facts(data, dialect):
    """The run as the canonical stream states it."""
    code, out, err = run(["--from", dialect, "--to", "canonical"], data)
    if code != 0:
        raise AssertionError(f"--to canonical exited {code}: {err}")
    lines = [json.loads(l) for l in out.decode().splitlines()]
    t = lines[-1]
    assert t["type"] == "terminal", f"last canonical line is {t['type']}"
    calls, results, withdrawn = {}, {}, set()
    for l in lines:
        if l["type"] == "tool_call":
            calls[l.get("id")] = l.get("name")
        elif l["type"] == "tool_withdrawn":
            # wuu's tool_removed: a draft the model withdrew was never a call.
            withdrawn.add(l.get("id"))
        elif l["type"] == "tool_result":
            # A result with no start before it is a call too (wuu writes tool_completed alone
            # for a call it never announced).
            calls.setdefault(l.get("id"), l.get("name"))
            results[l.get("id")] = l.get("status")
        elif l["type"] == "permission_denied":
            results.setdefault(l.get("id"), "denied")
        elif l["type"] == "session_summary":
            # loom carries a foreign run as one Session line listing its calls.
            for c in l.get("tool_calls") or []:
                calls[c.get("id")] = c.get("name")
                if c.get("answered"):
                    results[c.get("id")] = "failed" if c.get("error") else "completed"
    for i in withdrawn:
        calls.pop(i, None)
        results.pop(i, None)
    u = t.get("usage") or {}
    return {
        "outcome": t["outcome"],
        "final_text": t.get("final_text") or "",
        "calls": len(calls),
        "withdrawn": len(withdrawn),
        "failed": sum(1 for s in results.values() if s in ("failed", "denied")),
        "tokens": {k: u.get(k, 0) for k in ("input", "output", "cache_read", "cache_write")},
    }


def outcome_in(target, outcome, reason_is_own_stop=False, source=None):
    """The outcome a reader of `target` gets back (the outcome tables' fallbacks)."""
    if target == "claude-code":
        # success, else an error result (error_max_turns only for a turn or step limit).
        return "completed" if outcome == "completed" else "failed"
    if target == "codex":
        # turn.completed, else turn.failed: every output ends with its closing line.
        return "completed" if outcome == "completed" else "failed"
    if target == "wuu" and outcome == "incomplete":
        return "failed"
    if target == "base-context":
        return {"permission_denied": "failed", "incomplete": "failed", "timeout": "interrupted"}.get(outcome, outcome)
    if target == "adal":
        return outcome if outcome in ("completed", "failed", "permission_denied") else "failed"
    if target == "loom":
        if outcome in ("completed", "permission_denied"):
            return outcome
        return "incomplete" if reason_is_own_stop else "failed"
    return outcome


def check_file(rel, data, source, targets):
    problems = []
    code, out, _ = run(["detect"], data)
    if out.decode().strip() != source:
        problems.append(f"detected as {out.decode().strip() or '(nothing)'}, not {source}")
    want = facts(data, source)
    code, out, _ = run(["validate", "--warnings", "--from", source], data)
    note = OTHER_GENERATION.get(rel)
    said = [l for l in out.decode().splitlines() if "warning:" not in l]
    if rel in CUT:
        if code != 1 or len(said) != 1 or "the run has no ending" not in said[0]:
            problems.append("validate does not say (alone) that the cut source has no ending: " + out.decode().strip())
    elif note:
        if code != 1 or len(said) != 1 or "generation" not in said[0]:
            problems.append(
                f"validate exits {code} with {len(said)} lines, want 1 and one line that names the generation: "
                + out.decode().strip()
            )
    elif code != 0:
        problems.append("the source does not validate:\n    " + out.decode().strip().replace("\n", "\n    "))
    _, canonical, _ = run(["--from", source, "--to", "canonical"], data)
    for target in targets:
        code, out, err = run(["--from", source, "--to", target], data)
        if code != 0:
            problems.append(f"to {target}: exited {code}: {err.strip()}")
            continue
        # D -> canonical -> T writes what D -> T writes, ids derived from the input included.
        _, through, _ = run(["--from", "canonical", "--to", target], canonical)
        if through != out:
            problems.append(f"to {target}: by way of canonical, other bytes than the direct translation")
        vcode, vout, _ = run(["validate", "--from", target], out)
        if vcode != 0:
            problems.append(f"to {target}: output does not validate:\n    " + vout.decode().strip().replace("\n", "\n    "))
        try:
            got = facts(out, target)
        except AssertionError as e:
            problems.append(f"to {target}: read back: {e}")
            continue
        exp_outcome = outcome_in(target, want["outcome"], source=source)
        if got["outcome"] != exp_outcome:
            problems.append(f"to {target}: outcome {got['outcome']}, want {exp_outcome}")
        # adal states the answer only for a completed run; loom has no place for it.
        # codex's answer is its last agent_message, which an unfinished run may have streamed.
        # gemini's is every chunk after the last tool result (gemini.md, Records): messages the
        # source wrote after its last call (a retried one, say) read back joined, the answer last.
        if target != "loom" and (target not in ("adal", "codex", "claude-code") or want["outcome"] == "completed"):
            joined = target == "gemini" and got["final_text"].endswith(want["final_text"])
            if got["final_text"] != want["final_text"] and not joined:
                problems.append(f"to {target}: final text {got['final_text']!r}, want {want['final_text']!r}")
        # A target with no way to withdraw a call it already announced (all but wuu) ends a
        # withdrawn draft as a call that did not complete: cancelled where it can say so,
        # failed where it cannot (codex).
        extra = got["calls"] - want["calls"]
        if not (0 <= extra <= want["withdrawn"] and 0 <= got["failed"] - want["failed"] <= extra):
            problems.append(
                f"to {target}: {got['calls']} calls ({got['failed']} failed), want {want['calls']} ({want['failed']})"
            )
        # adal carries no usage; codex only on turn.completed.
        if target != "adal" and (target != "codex" or want["outcome"] == "completed"):
            # localcode has no cache figures; gemini no cache write (gemini.md, Usage: 'cache
            # write: not stated'): written inside input_tokens.
            keys = {
                "localcode": ("input", "output"),
                "gemini": ("input", "output", "cache_read"),
            }.get(target, ("input", "output", "cache_read", "cache_write"))
            for k in keys:
                if got["tokens"][k] != want["tokens"][k]:
                    problems.append(f"to {target}: tokens.{k} {got['tokens'][k]}, want {want['tokens'][k]}")
    return want, problems


def check_rc(source, path):
    """A live capture's `.rc` is its CLI's exit status: `exec --as` the same dialect, replaying
    the stream, must exit with it (the outcome table's status for the run the stream states)."""
    rc_path = path[: -len(".jsonl")] + ".rc"
    if not os.path.exists(rc_path):
        return []
    with open(rc_path) as f:
        want = int(f.read().strip())
    code, _, err = run(["exec", "--as", source, "--", "cat", path])
    if code != want:
        return [f"exec --as {source} -- cat FILE exited {code}, the CLI exited {want} (.rc): {err.strip()}"]
    return []


def main():
    if not os.path.isdir(REAL):
        print(f"check-real: {REAL} not found; nothing to check", file=sys.stderr)
        return 1
    known = dialects()
    # otlp is written, never read back: scripts/check-otlp.sh reads it, over these files too.
    targets = [d for d in known if d != "otlp"]
    failures, files = 0, 0
    for source in sorted(os.listdir(REAL)):
        folder = os.path.join(REAL, source)
        if not os.path.isdir(folder):
            continue
        streams = sorted(f for f in os.listdir(folder) if f.endswith(".jsonl"))
        if source not in known:
            print(f"SKIP {source}/: {len(streams)} streams of a dialect agentgate does not read yet")
            continue
        for name in streams:
            rel = f"{source}/{name}"
            files += 1
            with open(os.path.join(folder, name), "rb") as f:
                data = f.read()
            try:
                want, problems = check_file(rel, data, source, targets)
                problems += check_rc(source, os.path.join(folder, name))
            except AssertionError as e:
                want, problems = None, [str(e)]
            gen = f" [{OTHER_GENERATION[rel]}]" if rel in OTHER_GENERATION else f" [{CUT[rel]}]" if rel in CUT else ""
            if problems:
                failures += 1
                print(f"FAIL {rel}{gen}")
                for p in problems:
                    print(f"  {p}")
            else:
                print(f"ok   {rel}{gen}: {want['outcome']}, {want['calls']} calls, tokens {want['tokens']}, to {len(targets)} targets")
    print(f"check-real: {files - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
