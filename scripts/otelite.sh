#!/usr/bin/env bash
# Prints the path of otelite (a real OTLP receiver from crates.io, for CI and tests/receiver.rs),
# installing it first when this machine does not have it yet: once per machine, outside the
# repository, in $AGENTGATE_OTELITE_ROOT (default $HOME/.cache/agentgate-ci/otelite). It builds
# about 300 crates, so the first run takes long; later runs reuse it.
set -euo pipefail
root="${AGENTGATE_OTELITE_ROOT:-$HOME/.cache/agentgate-ci/otelite}"
version=0.1.156
if [ ! -x "$root/bin/otelite" ]; then
  echo "otelite.sh: installing otelite $version into $root (once per machine)" >&2
  cargo install --locked --quiet otelite --version "$version" --root "$root" >&2
fi
# Its command line is the one the checks use: `serve --addr` and `--storage-path`.
"$root/bin/otelite" serve --help | grep -q -- --storage-path
echo "$root/bin/otelite"
