#!/usr/bin/env bash
# The official Codex TypeScript SDK reads agentgate's codex output as Codex's own: installs
# @openai/codex-sdk (npm) in a temporary folder and runs scripts/sdk/codex-sdk-check.mjs, which
# points the SDK's client at `agentgate exec --as codex -- cat FIXTURE` for a fixture of every
# source dialect. Run by .ci/run (not by cargo test). Usage: scripts/check-codex-sdk.sh [AGENTGATE]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
agentgate="$(cd "$(dirname "${1:-$root/target/debug/agentgate}")" && pwd)/$(basename "${1:-agentgate}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error @openai/codex-sdk@0.163.0 @agentclientprotocol/sdk@2.4.0 >/dev/null
cp "$root/scripts/sdk/codex-sdk-check.mjs" "$root/scripts/sdk/acp-fake-agent.mjs" .
# What the SDK runs as `codex`: its arguments (exec --experimental-json ...) are the wrapper's
# to ignore; the prompt on stdin is read to its end, as an agent reads it (an agent that
# exits without reading it races the SDK's write of it: EPIPE, and node dies), and agentgate
# speaks for the recorded run.
cat > codex-wrapper <<'SH'
#!/bin/sh
exec "$AGENTGATE" exec --as codex -- sh -c 'cat > /dev/null; exec cat "$AGENTGATE_FIXTURE"'
SH
chmod +x codex-wrapper
# An ACP agent built on the official ACP SDK, behind `exec --from acp`, as `codex`: the prompt
# the SDK writes on stdin is the one exec --from acp sends.
cat > codex-acp-wrapper <<SH
#!/bin/sh
exec "\$AGENTGATE" exec --as codex --from acp --permission "\$AGENTGATE_PERMISSION" \${AGENTGATE_TIMEOUT:+--timeout "\$AGENTGATE_TIMEOUT"} --kill-after 1s -- node "$work/acp-fake-agent.mjs" "\$AGENTGATE_SCENARIO"
SH
chmod +x codex-acp-wrapper
node codex-sdk-check.mjs "$agentgate" "$root/tests/fixtures" "$work/codex-wrapper" "$work/codex-acp-wrapper"
