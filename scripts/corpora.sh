# The dialects and the fixture each one's generated corpus grows from: sourced by bench.sh and
# instructions.sh, which measure on the same corpora.
DIALECTS="localcode adal wuu loom base-context canonical"
declare -A FIXTURE=(
  [localcode]=tests/fixtures/localcode/success.jsonl
  [adal]=tests/fixtures/adal/success.jsonl
  [wuu]=tests/fixtures/wuu/success.jsonl
  [loom]=tests/fixtures/loom/approval-required.jsonl
  [base-context]=tests/fixtures/base-context/success.jsonl
  [canonical]=tests/fixtures/canonical/cumulative-usage.jsonl
)
