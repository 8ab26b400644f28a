#!/usr/bin/env bash
# Where a publish's time goes outside the disk, feed-server beside the libmicrohttpd publish floor
# (bench/publish-floor.c), from system-call tracepoints (perf): the disk's noise drops out.
# WORKDIR picks the disk (a folder in it is used, default .build); ROUNDS (3), PUBLISHES (300);
# BINARY (default: .build/release/feed-server, built).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
command -v perf >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf; }
# Tracepoints need root (or kernel.perf_event_paranoid ≤ -1) and a kernel that lets perf read them.
if ! probe=$(perf stat -e raw_syscalls:sys_enter -e syscalls:sys_enter_fsync true 2>&1 >/dev/null); then
  echo "$probe" >&2
  echo "perf cannot read system-call tracepoints here (above, perf's own words): run as root, or set" \
    "kernel.perf_event_paranoid=-1; in a container, allow perf_event_open (e.g. --cap-add PERFMON)." >&2
  exit 1
fi
command -v cc >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc; }
binary=${BINARY:-}
if [ -z "$binary" ]; then
  swift build -c release --product feed-server >/dev/null
  binary=.build/release/feed-server
fi
# A folder of its own inside WORKDIR (the disk to measure), removed at the end.
work=${WORKDIR:-$PWD/.build}/feed-server-bench-phases
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
cc -O2 -o "$work/publish-floor" bench/publish-floor.c -lmicrohttpd -lpthread
python3 bench/publish-phases.py "$binary" "$work/publish-floor" "$work" "${ROUNDS:-3}" "${PUBLISHES:-300}"
echo "Disk: $(df -h "$work" | awk 'NR==2{print $1" "$2}'); $(nproc) cores; $(date -u +%Y-%m-%d)."
