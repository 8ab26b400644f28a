#!/usr/bin/env bash
# Where a publish's time goes outside the disk, feed-server beside the libmicrohttpd publish floor
# (bench/publish-floor.c), from system-call tracepoints (perf): the disk's noise drops out.
# WORKDIR picks the disk (default: a folder under the repository); ROUNDS (3), PUBLISHES (300);
# BINARY (default: .build/release/feed-server, built).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
command -v perf >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf; }
command -v cc >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc; }
binary=${BINARY:-}
if [ -z "$binary" ]; then
  swift build -c release --product feed-server >/dev/null
  binary=.build/release/feed-server
fi
work=${WORKDIR:-$PWD/.build/bench-phases}
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
cc -O2 -o "$work/publish-floor" bench/publish-floor.c -lmicrohttpd -lpthread
python3 bench/publish-phases.py "$binary" "$work/publish-floor" "$work" "${ROUNDS:-3}" "${PUBLISHES:-300}"
echo "Disk: $(df -h "$(dirname "$work")" | awk 'NR==2{print $1" "$2}'); $(nproc) cores; $(date -u +%Y-%m-%d)."
