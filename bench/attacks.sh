#!/usr/bin/env bash
# The attack benchmarks (bench/attacks.py) against a release build:
#   bash bench/attacks.sh [versions faults sparse fifo cache bigjson jsonflood exports members listings streams]   (default: all)
# FEED_SERVER_BIN names a feed-server binary to run instead of building one. Otherwise the release
# binary is built into .build-bench, its own scratch path, so a build in .build (a test run, an
# editor) is neither disturbed nor waited for.
# Every figure is printed beside an idle figure of the same run and its target, then as one
# "SUMMARY scenario | figure | ours | idle | target | met" line; the machine's load is printed
# before and after each scenario, since another job on these cores moves every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${FEED_SERVER_BIN:-}" ]; then
  bash scripts/install-deps.sh
  # Quiet when it works; the compiler's last lines when it does not.
  if ! log=$(swift build -c release --product feed-server --scratch-path .build-bench 2>&1); then
    printf '%s\n' "$log" | grep -v 'prohibited flag' | tail -n 30 >&2
    exit 1
  fi
  FEED_SERVER_BIN=.build-bench/release/feed-server
fi
python3 bench/attacks.py "$FEED_SERVER_BIN" "$@"
echo
echo "$(nproc) cores; $(date -u +%Y-%m-%d); $("$FEED_SERVER_BIN" --version 2>/dev/null || true)."
