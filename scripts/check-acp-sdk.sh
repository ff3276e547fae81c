#!/usr/bin/env bash
# The official ACP TypeScript SDK drives `agentgate acp` as an editor does: installs
# @agentclientprotocol/sdk (npm) in a temporary folder and runs scripts/sdk/acp-sdk-check.mjs,
# whose client serves every fixture and every real transcript of REAL_DIR (replayed by a fake
# agent) through agentgate acp, with cancels at varied moments. Run by .ci/run (not by cargo
# test). Usage: scripts/check-acp-sdk.sh [AGENTGATE] [REAL_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
agentgate="$(cd "$(dirname "${1:-$root/target/debug/agentgate}")" && pwd)/$(basename "${1:-agentgate}")"
real="$(cd "${2:-$root/../shared/real}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error @agentclientprotocol/sdk@2.4.0 >/dev/null
cp "$root/scripts/sdk/acp-sdk-check.mjs" .
node acp-sdk-check.mjs "$agentgate" "$root/tests/fixtures" "$real" "$root/mappings"
