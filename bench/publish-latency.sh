#!/usr/bin/env bash
# Publish latency (p50, p99) of a 4 KB JSON feed vs. the bare flush-and-rename sequence.
# WORKDIR picks the disk (default: a folder under the repository, i.e. the project's disk).
# Beside it, the libmicrohttpd publish floor (bench/publish-floor.c): the same sequence behind a
# hand-off to a worker thread, and the same floor writing on libmicrohttpd's thread: the two differ
# by what keeping disk work off libmicrohttpd's threads costs.
# BUSY=n runs n busy loops beside every side of the measurement (a build on the same machine).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product feed-server >/dev/null
work=${WORKDIR:-$PWD/.build/bench-publish}
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
command -v cc >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc; }
cc -O2 -o "$work/publish-floor" bench/publish-floor.c -lmicrohttpd -lpthread
FLOOR_BINARY="$work/publish-floor" \
  python3 bench/publish-latency.py .build/release/feed-server "$work" "${ROUNDS:-5}" "${PER_ROUND:-100}"
echo "Disk: $(df -h "$(dirname "$work")" | awk 'NR==2{print $1" "$2}'); $(nproc) cores; $(date -u +%Y-%m-%d)."
