#!/usr/bin/env bash
# 1,000 concurrent long-poll waiters against a release build (bench/waiters.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product feed-server >/dev/null
ulimit -n 8192
python3 bench/waiters.py .build/release/feed-server "${WAITERS:-1000}"
echo
echo "$(nproc) cores; $(date -u +%Y-%m-%d)."
