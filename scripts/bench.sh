#!/usr/bin/env bash
# Throughput and memory of agentgate beside two floors and jq, on one machine in one run.
#   scripts/bench.sh [MEGABYTES]   (default 200 per dialect)
# Prints input MB/s and peak RSS per program, and agentgate's ratio to each floor.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-200}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cargo build --release --quiet --bin agentgate --example floor_value --example floor_raw --example gen_corpus
BIN=target/release
declare -A FIXTURE=(
  [localcode]=tests/fixtures/localcode/success.jsonl
  [adal]=tests/fixtures/adal/success.jsonl
  [wuu]=tests/fixtures/wuu/success.jsonl
  [loom]=tests/fixtures/loom/approval-required.jsonl
  [base-context]=tests/fixtures/base-context/success.jsonl
  [canonical]=tests/fixtures/canonical/cumulative-usage.jsonl
)
# measure NAME INPUT CMD...: wall seconds and peak RSS (KB) of CMD < INPUT > /dev/null
measure() {
  local name=$1 input=$2; shift 2
  local size; size=$(stat -c %s "$input")
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" < "$input" > /dev/null
  read -r secs rss < "$WORK/time"
  awk -v n="$name" -v s="$size" -v t="$secs" -v r="$rss" 'BEGIN { printf "%-40s %8.1f MB/s %8d KB\n", n, s / 1e6 / (t > 0 ? t : 0.001), r }'
}
for from in "${!FIXTURE[@]}"; do
  "$BIN/examples/gen_corpus" "${FIXTURE[$from]}" "$MB" > "$WORK/$from.jsonl"
done
printf '%-40s %13s %11s\n' "program" "input" "peak RSS"
for from in localcode adal wuu loom base-context canonical; do
  input="$WORK/$from.jsonl"
  measure "floor: Value parse+print ($from)" "$input" "$BIN/examples/floor_value"
  measure "floor: RawValue scan+copy ($from)" "$input" "$BIN/examples/floor_raw"
  if command -v jq > /dev/null; then measure "jq -c . ($from)" "$input" jq -c .; fi
  for to in localcode adal wuu loom base-context canonical; do
    measure "agentgate $from -> $to" "$input" "$BIN/agentgate" --from "$from" --to "$to"
  done
done
if command -v jq > /dev/null; then
  # What a shell user would write to turn localcode into adal by hand.
  measure "jq: localcode -> adal by hand" "$WORK/localcode.jsonl" jq -c '
    if .type == "tool_start" then {type: "tool_call", id: ("call-" + .index), name, args: {raw: .args}}
    elif .type == "tool_result" then {type: "tool_result", id: ("call-" + .index), name, status: (if .error == "true" then "failed" else "completed" end), output: .result}
    elif .type == "result" then ({type: "answer", content: .final_text}, {type: "complete", exit_code: .exit_code, session_id: null, model: null})
    else empty end'
fi
if command -v python3 > /dev/null; then
  python3 scripts/latency.py "$BIN/agentgate" 500
fi
