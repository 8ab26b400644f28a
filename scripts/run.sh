#!/usr/bin/env bash
# Builds feed-server (release) and starts it on http://127.0.0.1:8080 with ./data as its root.
# Extra arguments are passed to feed-server (see `scripts/run.sh --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product feed-server
exec .build/release/feed-server --host 127.0.0.1 --port 8080 --root ./data "$@"
