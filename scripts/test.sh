#!/usr/bin/env bash
# Runs the whole test suite: the formatter's lint (`swift format lint --strict`, .swift-format),
# store unit tests, end-to-end tests against the real server,
# the CLI, the SIGKILL crash loop and the full-disk test (the latter mounts a tmpfs: run as root),
# then the HTTP contract (openapi.yaml validated, schemathesis against the live server), the
# preview page in headless Chromium, the container image and compose.yaml under podman
# (scripts/container-test.sh: skipped with a message when not root), every fuzz target for
# FUZZ_SECONDS (default 30) each, and the whole Swift suite again under ThreadSanitizer and
# AddressSanitizer (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift format lint --strict --parallel --recursive Sources Tests Fuzz Package.swift
# A standing rule: no Swift file over 400 lines (split by concern instead).
if long=$(find Sources Tests Fuzz -name '*.swift' -exec awk 'END { if (NR > 400) print FILENAME ": " NR " lines" }' {} \;) && [ -n "$long" ]; then
  echo "$long" >&2
  echo "Swift files stay within 400 lines." >&2
  exit 1
fi
swift build --build-tests
swift test --skip-build "$@"
bash scripts/contract-test.sh
bash scripts/browser-test.sh
bash scripts/container-test.sh
bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
bash scripts/sanitizers.sh
