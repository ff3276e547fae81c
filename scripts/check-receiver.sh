#!/usr/bin/env bash
# agentgate's OTLP export into a real receiver: otelite (scripts/otelite.sh installs it once per
# machine), started on 127.0.0.1 on free ports with its own storage, receives every fixture and
# every real transcript three ways (summary over http/json, --to otlp over http/protobuf, exec);
# scripts/sdk/receiver_check.py reads them back through otelite's REST API and holds them to
# `agentgate summary`'s figures, then stops the receiver to check the spool, exit 69 and `export`.
# Prints the throughput of each way. Run by .ci/run (not by cargo test).
# Usage: scripts/check-receiver.sh [AGENTGATE [FOLDER...]] (default: tests/fixtures, and
# ../shared/real where it is)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
agentgate="${1:-$root/target/debug/agentgate}"
if [ "$#" -gt 1 ]; then
  folders=("${@:2}")
else
  folders=("$root/tests/fixtures")
  [ -d "$root/../shared/real" ] && folders+=("$root/../shared/real")
fi
otelite="$(bash "$root/scripts/otelite.sh")"
python3 "$root/scripts/sdk/receiver_check.py" "$otelite" "$agentgate" "${folders[@]}"
