#!/usr/bin/env bash
# The bounded-resource benchmarks (bench/bounded.py) against a release build:
#   bash bench/bounded.sh [concurrent unauthorised reads healthz trickle]
# The 48-photo RSS and wall-time comparison with vipsthumbnail is bench/images.sh.
# HEADER_TIMEOUT (default 5) is the --header-timeout of the trickle run; UNAUTHORISED_MB
# (default 100) the body size of the unauthorised PUTs. NGINX_SESSION=own runs the `reads`
# scenario's nginx daemonised, in a session (and scheduler autogroup) of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
need=()
command -v vips >/dev/null || need+=(libvips-tools)
[ -x /usr/bin/convert ] || need+=(imagemagick)
command -v nginx >/dev/null || need+=(nginx-light)
if [ "${#need[@]}" -gt 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"; fi
swift build -c release --product feed-server >/dev/null
bash bench/photos.sh 48
# 1,000 tricklers plus the client's own sockets, and as many on the server's side.
ulimit -n 8192
scenarios=("$@")
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(concurrent unauthorised reads healthz trickle)
python3 bench/bounded.py .build/release/feed-server .build/bench-photos "${scenarios[@]}"
echo
echo "$(nproc) cores; $(date -u +%Y-%m-%d)."
