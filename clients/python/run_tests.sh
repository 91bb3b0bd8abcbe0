#!/usr/bin/env bash
# Tests the Python client against the real server, from a clean virtualenv.
#
# CI calls it from the repository root after `cargo build --release`; it works
# from anywhere. Environment:
#   CARCASSONNE_BIN  the server binary (default: target/release/carcassonne)
#   PYTHON           the interpreter to build the venv from (default: python3)
#   VENV_DIR         keep the venv there instead of a throwaway temp dir
# Extra arguments go to pytest. Exits non-zero when any test fails and also
# when no test ran at all (pytest's exit code 5).
set -euo pipefail

client_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(cd "$client_dir/../.." && pwd)"
export CARCASSONNE_BIN="${CARCASSONNE_BIN:-$repo_dir/target/release/carcassonne}"

if [ ! -x "$CARCASSONNE_BIN" ]; then
  echo "run_tests.sh: no server binary at $CARCASSONNE_BIN; run 'cargo build --release' first" >&2
  exit 1
fi

if [ -n "${VENV_DIR:-}" ]; then
  venv="$VENV_DIR"
else
  # A fresh venv each run, so that the install from scratch is what is tested.
  venv="$(mktemp -d "${TMPDIR:-/tmp}/carcassonne-client-venv.XXXXXX")"
  trap 'rm -rf "$venv"' EXIT
fi

"${PYTHON:-python3}" -m venv "$venv"
# A regular (not editable) install, as a user would do it: it generates the
# gRPC code from ../../proto while building the package.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$client_dir[test]"

# From the client dir, so pytest finds its configuration in pyproject.toml.
cd "$client_dir"
status=0
"$venv/bin/python" -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "run_tests.sh: pytest collected no tests" >&2
fi
exit "$status"
