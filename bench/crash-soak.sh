#!/usr/bin/env bash
# SIGKILL soak (not in CI: several minutes): ROUNDS (default 1,000) kills during mixed JSON and
# multipart publishes and DELETEs, a restart after each; see bench/crash-soak.py for the checks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product feed-server >/dev/null
python3 bench/crash-soak.py .build/release/feed-server "${ROUNDS:-1000}"
echo "$(nproc) cores; $(date -u +%Y-%m-%d)."
