#!/usr/bin/env bash
# 1,000 concurrent long-poll waiters against a release build and the libmicrohttpd floor
# (bench/waiters.py, bench/waiters-floor.c, bench/waiters-client.c), and the kernel's own
# share (bench/waiters-kernel.c).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product feed-server >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/waiters-floor" bench/waiters-floor.c -lmicrohttpd -lpthread
cc -O2 -o "$work/waiters-client" bench/waiters-client.c
cc -O2 -o "$work/waiters-kernel" bench/waiters-kernel.c -lpthread
ulimit -n 8192
python3 bench/waiters.py .build/release/feed-server "$work/waiters-floor" "$work/waiters-client" "$work/waiters-kernel" \
  "${WAITERS:-1000}" "${ROUNDS:-3}"
echo
echo "$(nproc) cores; $(date -u +%Y-%m-%d)."
