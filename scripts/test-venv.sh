#!/usr/bin/env bash
# Makes .build/test-venv with the pinned Python tools the contract and browser tests drive
# (from PyPI), once; prints its path. A new stamp name remakes a venv made from an older list.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/test-venv
stamp="$venv/.pinned-v2"
if [ ! -f "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    schemathesis==4.32.5 openapi-spec-validator==0.9.0 selenium==4.38.0 >&2
  # Only for the axe-core it bundles (axe_playwright_python/axe.min.js, axe-core 4.12.1), which
  # the browser test injects through Selenium: --no-deps keeps Playwright and its browsers out.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps axe-playwright-python==0.1.8 >&2
  touch "$stamp"
fi
echo "$venv"
