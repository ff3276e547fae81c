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
CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK=1 "$work/venv/bin/python" "$root/scripts/sdk/claude_sdk_check.py" \
  "$agentgate" "$root/tests/fixtures" "$work/claude-wrapper" 2> "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
