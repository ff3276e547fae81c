#!/usr/bin/env bash
# The official Claude Agent SDK (Python) reads agentgate's claude-code output as Claude Code's
# own: installs claude-agent-sdk (PyPI) in a temporary virtual environment and runs
# scripts/sdk/claude_sdk_check.py, which parses every fixture's claude-code translation with
# the SDK's message parser and runs the SDK's client against
# `agentgate exec --as claude-code "$@" -- cat FIXTURE` (agentgate answers the SDK's initialize
# handshake and takes the flags the SDK gives), with and without include_partial_messages. Run by .ci/run (not by cargo test).
# Usage: scripts/check-claude-sdk.sh [AGENTGATE]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/sdk/venv.sh
source "$root/scripts/sdk/venv.sh" "${1:-$root/target/debug/agentgate}" claude-agent-sdk==0.2.189
# What the SDK runs as `claude`: its flags go to agentgate exec, which accepts Claude's (and
# reads --include-partial-messages and --input-format); the stdin protocol is agentgate's to
# answer, and the user message's text goes to the agent's stdin.
cat > "$work/claude-wrapper" <<'SH'
#!/bin/sh
exec "$AGENTGATE" exec --as claude-code "$@" -- cat "$AGENTGATE_FIXTURE"
SH
chmod +x "$work/claude-wrapper"
# An ACP agent built on the official ACP SDK behind `exec --from acp`, as `claude` (npm, beside).
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error @agentclientprotocol/sdk@2.4.0 >/dev/null)
cp "$root/scripts/sdk/acp-fake-agent.mjs" "$work/"
(cd "$work" && node -e 'import("./acp-fake-agent.mjs").then((m) => console.log(JSON.stringify(m.FACTS)))' > "$work/acp-facts.json")
cat > "$work/claude-acp-wrapper" <<SH
#!/bin/sh
exec "\$AGENTGATE" exec --as claude-code "\$@" --from acp --permission "\$AGENTGATE_PERMISSION" \${AGENTGATE_TIMEOUT:+--timeout "\$AGENTGATE_TIMEOUT"} --kill-after 1s -- node "$work/acp-fake-agent.mjs" "\$AGENTGATE_SCENARIO"
SH
chmod +x "$work/claude-acp-wrapper"
CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK=1 "$work/venv/bin/python" "$root/scripts/sdk/claude_sdk_check.py" \
  "$agentgate" "$root/tests/fixtures" "$work/claude-wrapper" "$work/claude-acp-wrapper" "$work/acp-facts.json" \
  2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
