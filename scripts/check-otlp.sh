#!/usr/bin/env bash
# agentgate's otlp output read by the official protobuf definitions: installs
# opentelemetry-proto (PyPI) in a temporary virtual environment and runs
# scripts/sdk/otlp_check.py, which parses every line of every fixture's otlp translation with
# google.protobuf.json_format.Parse (ignore_unknown_fields=False) into
# ExportTraceServiceRequest / ExportMetricsServiceRequest, and holds the span tree, the token
# sums and the status to the run's facts. Run by .ci/run (not by cargo test).
# Usage: scripts/check-otlp.sh [AGENTGATE [FOLDER...]] (default: tests/fixtures, and ../shared/real
# where it is)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/sdk/venv.sh
source "$root/scripts/sdk/venv.sh" "${1:-$root/target/debug/agentgate}" opentelemetry-proto==1.45.2
if [ "$#" -gt 1 ]; then
  folders=("${@:2}")
else
  folders=("$root/tests/fixtures")
  [ -d "$root/../shared/real" ] && folders+=("$root/../shared/real")
fi
"$work/venv/bin/python" "$root/scripts/sdk/otlp_check.py" "$agentgate" "${folders[@]}"
