#!/usr/bin/env bash
# The preview page in a real browser: Debian's headless Chromium driven by Selenium
# (Tests/BrowserTests/preview_test.py). Installs chromium and chromium-driver when missing.
# Screenshots land in test-output/: preview.png, preview-limits.png, preview-matrix.png (the
# matrix of every widget family, appearance, text size and direction), preview-profile.png (a
# widget profile's item whose photo is missing), preview-rtl.png (an Arabic title cut at its
# logical end) and preview-reloads.png (the reload strip: publishes over WidgetKit's budget). The test's venv (scripts/test-venv.sh) also brings the axe-core it injects.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends chromium chromium-driver
fi
venv=$(bash scripts/test-venv.sh)
swift build --product feed-server >/dev/null
"$venv/bin/python" Tests/BrowserTests/preview_test.py .build/debug/feed-server test-output
