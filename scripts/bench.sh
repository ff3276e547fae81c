#!/usr/bin/env bash
# Throughput and memory of agentgate beside two floors and jq, on one machine in one run.
#   scripts/bench.sh [MEGABYTES]   (default 200 per dialect; REPEAT=n rounds, default 3: every
#                                   program on a corpus runs once per round, and keeps its
#                                   fastest run)
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
# shellcheck source=scripts/corpora.sh
source scripts/corpora.sh
# timed INPUT CMD...: one run of CMD < INPUT > /dev/null; sets SECS and RSS (KB).
timed() {
  local input=$1; shift
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" < "$input" > /dev/null
  read -r SECS RSS < "$WORK/time"
  awk -v s="$SECS" 'BEGIN { exit !(s <= 0) }' && SECS=0.01 || true
}
mbs() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
faster() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(b == "" || a < b) }'; }

for from in $DIALECTS; do
  "$BIN/examples/gen_corpus" "${FIXTURE[$from]}" "$MB" > "$WORK/$from.jsonl"
done
echo "agentgate $(git describe --always --dirty 2>/dev/null || echo '?'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | xargs), ${MB} MB per corpus, best of $REPEAT"
printf '%-13s %-20s %9s %8s %8s %9s\n' "source" "program" "MB/s" "xValue" "xRaw" "RSS KB"
for from in $DIALECTS; do
  input="$WORK/$from.jsonl"
  size=$(stat -c %s "$input")
  # Every program on this corpus runs once per round, rounds one after another, and keeps
  # its fastest run: a machine whose load drifts slows all of them alike, so the ratios
  # hold where the MB/s do not.
  declare -A BEST=() MEM=()
  progs=(value raw)
  command -v jq > /dev/null && progs+=(jq)
  for to in $DIALECTS; do progs+=("$to"); done
  for _ in $(seq "$REPEAT"); do
    for p in "${progs[@]}"; do
      case $p in
        value) timed "$input" "$BIN/examples/floor_value" ;;
        raw) timed "$input" "$BIN/examples/floor_raw" ;;
        jq) timed "$input" jq -c . ;;
        *) timed "$input" "$BIN/agentgate" --from "$from" --to "$p" ;;
      esac
      if faster "$SECS" "${BEST[$p]:-}"; then BEST[$p]=$SECS; MEM[$p]=$RSS; fi
    done
  done
  fv=$(mbs "$size" "${BEST[value]}"); fr=$(mbs "$size" "${BEST[raw]}")
  printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "floor: Value" "$fv" "" "" "${MEM[value]}"
  printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "floor: Raw" "$fr" "" "" "${MEM[raw]}"
  if [ -n "${BEST[jq]:-}" ]; then
    printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "jq -c ." "$(mbs "$size" "${BEST[jq]}")" "" "" "${MEM[jq]}"
  fi
  for to in $DIALECTS; do
    bytes=$size; mark=""
    if [ "$to" = base-context ]; then
      # Written bytes, counted in a run of its own: a pipe to wc would slow what is timed.
      bytes=$("$BIN/agentgate" --from "$from" --to "$to" < "$input" | wc -c); mark=" out"
    fi
    speed=$(mbs "$bytes" "${BEST[$to]}")
    printf '%-13s %-20s %9s %8s %8s %9s\n' "$from" "-> $to$mark" "$speed" "$(ratio "$speed" "$fv")" "$(ratio "$speed" "$fr")" "${MEM[$to]}"
  done
done
if command -v jq > /dev/null; then
  # What a shell user would write to turn localcode into adal by hand; agentgate beside it in
  # the same rounds.
  JQS="" AGS=""
  for _ in $(seq "$REPEAT"); do
    timed "$WORK/localcode.jsonl" jq -c '
      if .type == "tool_start" then {type: "tool_call", id: ("call-" + .index), name, args: {raw: .args}}
      elif .type == "tool_result" then {type: "tool_result", id: ("call-" + .index), name, status: (if .error == "true" then "failed" else "completed" end), output: .result}
      elif .type == "result" then ({type: "answer", content: .final_text}, {type: "complete", exit_code: .exit_code, session_id: null, model: null})
      else empty end'
    if faster "$SECS" "$JQS"; then JQS=$SECS; fi
    timed "$WORK/localcode.jsonl" "$BIN/agentgate" --from localcode --to adal
    if faster "$SECS" "$AGS"; then AGS=$SECS; fi
  done
  size=$(stat -c %s "$WORK/localcode.jsonl")
  jqs=$(mbs "$size" "$JQS"); ags=$(mbs "$size" "$AGS")
  echo "jq localcode -> adal by hand: $jqs MB/s; agentgate localcode -> adal: $ags MB/s ($(ratio "$ags" "$jqs")x)"
fi
if command -v python3 > /dev/null; then
  python3 scripts/latency.py "$BIN/agentgate" 500
fi
