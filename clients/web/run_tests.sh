#!/usr/bin/env bash
# Tests the grpc-web client (Connect-ES over fetch) against the real server.
#
# CI calls it from the repository root after `cargo build --release`; it works
# from any directory. It installs the pinned packages (npm ci, from
# package-lock.json), generates the code from ../../proto with buf and
# protoc-gen-es (into gen/, never committed), and runs watch-test.mjs.
# Environment:
#   CARCASSONNE_BIN  the server binary (default: target/release/carcassonne)
#   ACTIONS          how many actions the test plays (default 10)
# Exits non-zero when anything fails.
set -euo pipefail

client_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(cd "$client_dir/../.." && pwd)"
bin="${CARCASSONNE_BIN:-$repo_dir/target/release/carcassonne}"
# Absolute, since the test runs from the client dir.
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
export CARCASSONNE_BIN="$bin"

if [ ! -x "$CARCASSONNE_BIN" ]; then
  echo "run_tests.sh: no server binary at $CARCASSONNE_BIN; run 'cargo build --release' first" >&2
  exit 1
fi
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run_tests.sh: $tool is missing (Node 20 or newer is needed)" >&2
    exit 1
  fi
done

cd "$client_dir"
# Only packages from the npm registry: buf's binary comes as the npm package
# for the platform (an optional dependency), so no install script is needed.
if [ -f package-lock.json ]; then
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
else
  npm install --ignore-scripts --no-audit --no-fund --loglevel=error
fi

# buf runs the protoc-gen-es plugin from node_modules/.bin (buf.gen.yaml).
export PATH="$client_dir/node_modules/.bin:$PATH"
buf generate

node watch-test.mjs
