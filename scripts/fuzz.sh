#!/usr/bin/env bash
# A fuzz campaign in one command: seeds the targets (scripts/fuzz-seed.sh), builds them on the
# stable toolchain (cargo fuzz build --sanitizer none, debug assertions on), and runs them one at
# a time, one job each, nice'd, from the committed corpus (fuzz/corpus/<target>) and the seeds,
# with the target's dialect dictionary and the memory and time bounds; then prints each target's
# figures (executions, exec/s, coverage, corpus, wall time) as a table for docs/testing.md.
# A crash, a leak of memory past the bounds or a hang fails the target (the input kept in
# fuzz/artifacts/<target>/); the other targets still run, and the script exits non-zero.
#
#   scripts/fuzz.sh [--runs N] [--seconds S] [--jobs J] [--minimize] [TARGET...]
#
# --runs N: at most N executions a target (the campaign: 1000000, the default); --seconds S: at
# most S seconds a target (CI: a few); given both, whichever comes first. --jobs J: J targets at
# a time (default 1; one core each). Without TARGET, every target. --minimize: afterwards, the inputs that raised coverage
# beyond the seeds, and hold no stretch of a real stream (../shared/real is third-party data),
# become the committed corpus.
#
# cargo-fuzz is installed once per machine, outside the repository, when missing
# ($HOME/.cache/agentgate-ci/cargo-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
runs=""
seconds=""
minimize=""
jobs=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --minimize) minimize=1; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ -z "$runs$seconds" ]; then
  runs=1000000
fi

tools="$HOME/.cache/agentgate-ci/cargo-fuzz"
if ! command -v cargo-fuzz >/dev/null 2>&1 && [ ! -x "$tools/bin/cargo-fuzz" ]; then
  echo "fuzz.sh: installing cargo-fuzz into $tools (once per machine)" >&2
  cargo install cargo-fuzz --version 0.13.2 --locked --root "$tools" >&2
fi
export PATH="$tools/bin:$PATH"

real="../shared/real"
[ -d "$real" ] || echo "fuzz.sh: $real not found: seeding from the fixtures alone" >&2
[ -x target/debug/agentgate ] || cargo build --quiet
bash scripts/fuzz-seed.sh target/debug/agentgate "$real"

# Release, with debug assertions (and so overflow checks): an arithmetic overflow is a crash.
build=(--sanitizer none --debug-assertions --release)
(cd fuzz && nice -n 19 cargo fuzz build "${build[@]}")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

mkdir -p fuzz/logs
table="fuzz/logs/figures.md"

# One target: its run, then its row of the table (fuzz/logs/<target>.row); exits non-zero when
# it failed.
run_target() {
  local t="$1" dialect status=0 start wall log="fuzz/logs/$1.log" row="fuzz/logs/$1.row"
  mkdir -p "fuzz/corpus/$t" "fuzz/found/$t" "fuzz/seeds/$t" "fuzz/artifacts/$t"
  case "$t" in
    decode_*|pipeline_*) dialect="${t#*_}"; dialect="${dialect//_/-}" ;;
    acp_server) dialect=acp ;;
    *) dialect="" ;;
  esac
  local args=(-rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=10 -max_len=262144 -print_final_stats=1
        "-artifact_prefix=fuzz/artifacts/$t/")
  [ -n "$dialect" ] && args+=("-dict=fuzz/dict/$dialect.dict")
  [ -n "$seconds" ] && args+=("-max_total_time=$seconds")
  [ -n "$runs" ] && args+=("-runs=$runs")
  start=$(date +%s)
  # The binary itself (cargo fuzz run would build again): new inputs go to the first folder,
  # fuzz/found/ (outside git), so that a run leaves the committed corpus as it was.
  nice -n 19 "fuzz/target/x86_64-unknown-linux-gnu/release/$t" "${args[@]}" \
    "fuzz/found/$t" "fuzz/corpus/$t" "fuzz/seeds/$t" > "$log" 2>&1 || status=$?
  wall=$(( $(date +%s) - start ))
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$log" >&2
    echo "fuzz.sh: $t failed (exit $status); the input is in fuzz/artifacts/$t/, the log in $log" >&2
    printf '| %s | FAILED (exit %s) | | | | %dm%02ds |\n' "$t" "$status" $((wall / 60)) $((wall % 60)) > "$row"
    return 1
  fi
  python3 - "$t" "$log" "$wall" > "$row" <<'PY'
import re, sys
t, log, wall = sys.argv[1], open(sys.argv[2], errors="replace").read(), int(sys.argv[3])
stat = dict(re.findall(r"^stat::(\w+):\s*(\d+)", log, re.M))
last = [l for l in log.splitlines() if re.match(r"#\d+\s", l)][-1]
cov = re.search(r"cov: (\d+) ft: (\d+)", last)
corp = re.search(r"corp: (\d+)/(\S+)", last)
print(f"| {t} | {int(stat['number_of_executed_units']):,} | {int(stat['average_exec_per_sec']):,} "
      f"| {cov.group(1)}/{cov.group(2)} | {corp.group(1)}/{corp.group(2)} | {wall // 60}m{wall % 60:02d}s |")
PY
  cat "$row" >&2
}

# The targets, `jobs` at a time; the table in the targets' order.
failed=()
pids=()
names=()
for t in "${targets[@]}"; do
  rm -f "fuzz/logs/$t.row"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  run_target "$t" &
  pids+=($!)
  names+=("$t")
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done
printf '| target | executions | exec/s | coverage (cov/ft) | corpus (inputs/bytes) | wall time |\n|---|---:|---:|---|---|---:|\n' > "$table"
for t in "${targets[@]}"; do
  cat "fuzz/logs/$t.row" >> "$table"
done

if [ -n "$minimize" ]; then
  for t in "${targets[@]}"; do
    bin="fuzz/target/x86_64-unknown-linux-gnu/release/$t"
    base="$(mktemp -d)"
    cp -r "fuzz/seeds/$t/." "$base/"
    before="$(mktemp)"
    ls "$base" | sort > "$before"
    # Into a copy of the seeds: only what raises coverage beyond them is added.
    nice -n 19 "$bin" -merge=1 -rss_limit_mb=2048 -timeout=10 -max_len=262144 "$base" "fuzz/corpus/$t" "fuzz/found/$t" \
      > "fuzz/logs/$t.merge.log" 2>&1
    rm -rf "fuzz/corpus/$t"
    mkdir -p "fuzz/corpus/$t"
    comm -13 "$before" <(ls "$base" | sort) | while read -r f; do cp "$base/$f" "fuzz/corpus/$t/"; done
    rm -rf "$base" "$before"
  done
  # No stretch of a real stream in what is committed.
  [ -d "$real" ] && python3 scripts/fuzz-clean.py "$real" fuzz/corpus
  echo "fuzz.sh: committed corpus: $(find fuzz/corpus -type f | wc -l) inputs, $(du -sh fuzz/corpus | cut -f1)" >&2
fi
cat "$table"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
