#!/usr/bin/env bash
# Builds feed-server (release) and starts it on http://127.0.0.1:8080 with ./data as its root.
# Extra arguments are passed to feed-server (see `scripts/run.sh --help`); a store command
# (`scripts/run.sh publish GROUP PATH`, lint, read, export) runs instead of the server, on the
# same ./data root by default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product feed-server
case "${1:-}" in
  # A command's name must come first, so the server's flags cannot go in front of it.
  publish | lint | read | export) exec .build/release/feed-server "$@" ;;
esac
exec .build/release/feed-server --host 127.0.0.1 --port 8080 --root ./data "$@"
