# Sourced by the SDK checks that install a Python package (check-otlp.sh, check-claude-sdk.sh):
#   source scripts/sdk/venv.sh BINARY PACKAGE==VERSION
# Sets `agentgate` (BINARY's absolute path) and `work` (a temporary folder, removed on exit),
# and installs the package into the virtual environment "$work/venv".
agentgate="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$2"
