#!/usr/bin/env bash
# Instructions per pair beside the Value floor's, counted by valgrind (callgrind): a measure that
# does not move with the machine's load, as the MB/s of scripts/bench.sh do on a shared machine.
#   scripts/instructions.sh [MEGABYTES]   (default 4 per dialect; needs valgrind)
# Counts the main thread only (agentgate hashes the input on a second thread for adal and loom
# targets; that runs beside the translation). Prints, per pair, the floor's instructions over
# agentgate's on the same input: above 1 means agentgate does less work per input byte than
# parsing each line into a Value and printing it. base-context's plain form writes more bytes
# than it reads: its ratio is scaled by output bytes over input bytes, as bench.sh does.
# Instructions are not time (the floor spends more of its time in the allocator, whose
# instructions run fast): use this table to compare changes, bench.sh to state speed.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-4}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
command -v valgrind > /dev/null || { echo "instructions.sh needs valgrind" >&2; exit 1; }
cargo build --release --quiet --bin agentgate --example floor_value --example gen_corpus
BIN=target/release
# shellcheck source=scripts/corpora.sh
source scripts/corpora.sh
# count CMD...: instructions the main thread of CMD runs, its input from $INPUT.
count() {
  rm -f "$WORK"/cg.*
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$WORK/cg" "$@" < "$INPUT" > /dev/null 2> /dev/null
  local main
  main="$WORK/cg-01"; [ -f "$main" ] || main="$WORK/cg"
  awk '/^summary:|^totals:/ { print $2; exit }' "$main"
}
echo "agentgate $(git describe --always --dirty 2>/dev/null || echo '?'), ${MB} MB per corpus: the Value floor's instructions over agentgate's"
printf '%-13s' "source"
for to in $DIALECTS; do printf ' %13s' "-> $to"; done
echo
for from in $DIALECTS; do
  INPUT="$WORK/$from.jsonl"
  "$BIN/examples/gen_corpus" "${FIXTURE[$from]}" "$MB" > "$INPUT"
  size=$(stat -c %s "$INPUT")
  floor=$(count "$BIN/examples/floor_value")
  printf '%-13s' "$from"
  for to in $DIALECTS; do
    ours=$(count "$BIN/agentgate" --from "$from" --to "$to")
    scale=1
    if [ "$to" = base-context ]; then
      scale=$(awk -v o="$("$BIN/agentgate" --from "$from" --to "$to" < "$INPUT" | wc -c)" -v i="$size" 'BEGIN { print o / i }')
    fi
    printf ' %13s' "$(awk -v f="$floor" -v a="$ours" -v s="$scale" 'BEGIN { printf "%.2f", f * s / a }')"
  done
  echo
done
