#!/usr/bin/env bash
# The web page in real browsers, headless, against the real server binary
# on a free port with a temporary data directory: Debian's chromium driven
# by playwright-core (page.test.mjs, clocks.test.mjs, tournament.test.mjs,
# layout.test.mjs: every check), then Debian's firefox-esr driven by puppeteer-core over
# WebDriver BiDi (firefox.test.mjs, the essential checks; a fresh
# temporary profile, no connection beyond loopback). Both are pinned in package-lock.json and
# installed without install scripts: neither downloads a browser of its own.
#
# CI calls it from the repository root after `cargo build --release`; it
# works from any directory. Screenshots go to target/screenshots/.
# Environment:
#   CARCASSONNE_BIN  the server binary (default: target/release/carcassonne)
#   CHROMIUM         the browser (default: /usr/bin/chromium)
#   FIREFOX          the other browser (default: /usr/bin/firefox-esr)
# Exits non-zero when a test fails.
set -euo pipefail

tests_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(cd "$tests_dir/../.." && pwd)"
bin="${CARCASSONNE_BIN:-$repo_dir/target/release/carcassonne}"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
export CARCASSONNE_BIN="$bin"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export FIREFOX="${FIREFOX:-/usr/bin/firefox-esr}"
export SCREENSHOT_DIR="${SCREENSHOT_DIR:-$repo_dir/target/screenshots}"

if [ ! -x "$CARCASSONNE_BIN" ]; then
  echo "run_tests.sh: no server binary at $CARCASSONNE_BIN; run 'cargo build --release' first" >&2
  exit 1
fi
if [ ! -x "$CHROMIUM" ]; then
  echo "run_tests.sh: no browser at $CHROMIUM; 'apt-get install -y chromium' (Debian)" >&2
  exit 1
fi
if [ ! -x "$FIREFOX" ]; then
  echo "run_tests.sh: no browser at $FIREFOX; 'apt-get install -y firefox-esr' (Debian)" >&2
  exit 1
fi
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run_tests.sh: $tool is missing (Node 20 or newer is needed)" >&2
    exit 1
  fi
done

mkdir -p "$SCREENSHOT_DIR"
cd "$tests_dir"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node --test --test-concurrency=1 --test-reporter=spec page.test.mjs clocks.test.mjs layout.test.mjs tournament.test.mjs firefox.test.mjs
echo "screenshots in $SCREENSHOT_DIR:"
ls -1 "$SCREENSHOT_DIR"/*.png
