#!/usr/bin/env bash
# Tests the TypeScript client against the real server.
#
# CI calls it from the repository root after `cargo build --release`; it works
# from any directory. It installs the pinned packages (npm ci, from
# package-lock.json, no install scripts), checks the format (prettier),
# generates the code from
# ../../proto with buf and protoc-gen-es (into src/gen/, never committed),
# type-checks everything (tsc --noEmit, strict), compiles it to dist/ and
# runs the tests with Node's test runner. Each test file starts its own
# server (target/release/carcassonne serve on a free port of loopback, with
# a temporary data directory).
# Environment:
#   CARCASSONNE_BIN  the server binary (default: target/release/carcassonne)
# Extra arguments go to `node --test` (e.g. --test-name-pattern=watch).
# Exits non-zero when anything fails.
set -euo pipefail

client_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(cd "$client_dir/../.." && pwd)"
bin="${CARCASSONNE_BIN:-$repo_dir/target/release/carcassonne}"
# Absolute, since the tests run from the client dir.
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
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

export PATH="$client_dir/node_modules/.bin:$PATH"
prettier --check .    # the committed files' format (npm run format fixes it)
buf generate          # runs protoc-gen-es from node_modules/.bin (buf.gen.yaml)
tsc --noEmit          # strict type-check of the client, the bot and the tests
rm -rf dist
tsc                   # to dist/, which the tests and the bot run
node --test --test-concurrency=2 --test-timeout=120000 "$@" dist/test/*.test.js
