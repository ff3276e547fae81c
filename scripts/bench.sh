#!/usr/bin/env bash
# Throughput and memory of agentgate beside two floors and jq, on one machine in one run.
#   scripts/bench.sh [MEGABYTES]   (default 200 per dialect; REPEAT=n runs each program n times,
#                                   default 3, and keeps the fastest)
# Corpora come from examples/gen_corpus.rs (benches/support/corpus.rs), one per dialect.
# Prints one table: per source, the two floors and `jq -c .`; per pair, agentgate's input MB/s,
# its ratio to each floor on the same input, and peak RSS. Encoding to base-context's plain form
# writes more bytes than it reads: its ratios are taken on output bytes (marked "out").
# Then the hand-written jq translation against agentgate's, and the streaming latency.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-200}
REPEAT=${REPEAT:-3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cargo build --release --quiet --bin agentgate --example floor_value --example floor_raw --example gen_corpus
BIN=target/release
DIALECTS="localcode adal wuu loom base-context canonical"
declare -A FIXTURE=(
  [localcode]=tests/fixtures/localcode/success.jsonl
  [adal]=tests/fixtures/adal/success.jsonl
  [wuu]=tests/fixtures/wuu/success.jsonl
  [loom]=tests/fixtures/loom/approval-required.jsonl
  [base-context]=tests/fixtures/base-context/success.jsonl
  [canonical]=tests/fixtures/canonical/cumulative-usage.jsonl
)
# run INPUT CMD...: sets SECS (fastest of REPEAT runs) and RSS (KB, of that run) for
# CMD < INPUT > /dev/null. With COUNT=1, also OUT, the bytes CMD writes (counted in one more,
# untimed run: a pipe to wc would slow what is timed).
run() {
  local input=$1; shift
  SECS=""
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" < "$input" > /dev/null
    local s r; read -r s r < "$WORK/time"
    if [ -z "$SECS" ] || awk -v a="$s" -v b="$SECS" 'BEGIN { exit !(a < b) }'; then SECS=$s; RSS=$r; fi
  done
  if [ "${COUNT:-0}" = 1 ]; then OUT=$("$@" < "$input" | wc -c); fi
  awk -v s="$SECS" 'BEGIN { exit !(s <= 0) }' && SECS=0.01 || true
}
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

for from in $DIALECTS; do
  "$BIN/examples/gen_corpus" "${FIXTURE[$from]}" "$MB" > "$WORK/$from.jsonl"
done
echo "agentgate $(git describe --always --dirty 2>/dev/null || echo '?'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs), ${MB} MB per corpus, best of $REPEAT"
printf '%-13s %-20s %9s %8s %8s %9s\n' "source" "program" "MB/s" "xValue" "xRaw" "RSS KB"
declare -A SPEED
for from in $DIALECTS; do
  input="$WORK/$from.jsonl"
  size=$(stat -c %s "$input")
  run "$input" "$BIN/examples/floor_value"; fv=$(mbs "$size" "$SECS")
  printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "floor: Value" "$fv" "" "" "$RSS"
  run "$input" "$BIN/examples/floor_raw"; fr=$(mbs "$size" "$SECS")
  printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "floor: Raw" "$fr" "" "" "$RSS"
  if command -v jq > /dev/null; then
    run "$input" jq -c .; printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "jq -c ." "$(mbs "$size" "$SECS")" "" "" "$RSS"
  fi
  for to in $DIALECTS; do
    if [ "$to" = base-context ]; then
      COUNT=1 run "$input" "$BIN/agentgate" --from "$from" --to "$to"; bytes=$OUT; mark=" out"
    else
      run "$input" "$BIN/agentgate" --from "$from" --to "$to"; bytes=$size; mark=""
    fi
    speed=$(mbs "$bytes" "$SECS")
    SPEED[$from-$to]=$(mbs "$size" "$SECS")
    printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "-> $to$mark" "$speed" "$(ratio "$speed" "$fv")" "$(ratio "$speed" "$fr")" "$RSS"
  done
done
if command -v jq > /dev/null; then
  # What a shell user would write to turn localcode into adal by hand.
  run "$WORK/localcode.jsonl" jq -c '
    if .type == "tool_start" then {type: "tool_call", id: ("call-" + .index), name, args: {raw: .args}}
    elif .type == "tool_result" then {type: "tool_result", id: ("call-" + .index), name, status: (if .error == "true" then "failed" else "completed" end), output: .result}
    elif .type == "result" then ({type: "answer", content: .final_text}, {type: "complete", exit_code: .exit_code, session_id: null, model: null})
    else empty end'
  jqs=$(mbs "$(stat -c %s "$WORK/localcode.jsonl")" "$SECS")
  echo "jq localcode -> adal by hand: $jqs MB/s; agentgate localcode -> adal: ${SPEED[localcode-adal]} MB/s ($(ratio "${SPEED[localcode-adal]}" "$jqs")x)"
fi
if command -v python3 > /dev/null; then
  python3 scripts/latency.py "$BIN/agentgate" 500
fi
