#!/usr/bin/env bash
# GET /feeds/{group} (~4 KB payload) and its 304, measured with wrk side by side with nginx
# serving the same bytes as a static file: same worker count, access logs off on both,
# keep-alive on both, alternating runs. Prints a Markdown table for docs/benchmarks.md.
#
# Environment: ROUNDS (3), DURATION (10s), CONNECTIONS (64), WRK_THREADS (2), WORKERS (2).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
WRK_THREADS=${WRK_THREADS:-2}
WORKERS=${WORKERS:-2}
OURS=18081
NGINX=18082

bash scripts/install-deps.sh
for tool in wrk nginx curl python3; do
  command -v "$tool" >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y wrk nginx-light curl; break; }
done
swift build -c release --product feed-server >/dev/null

work=$(mktemp -d)
cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

${SERVER_PIN:-} .build/release/feed-server --port $OURS --root "$work/data" --access-log off --threads "$WORKERS" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$OURS/healthz" >/dev/null && break; sleep 0.05; done

# A ~4 KB payload shaped like a real widget feed.
python3 - >"$work/payload.json" <<'PY'
import json
quotes = [{"id": f"q{i}", "text": f"Quote number {i}: the quick brown fox jumps over the lazy dog", "author": "Anonymous", "image": f"q{i}.jpg"} for i in range(30)]
print(json.dumps({"quotes": quotes, "emptyText": "Nothing yet"}, separators=(",", ":")))
PY
curl -sf -X PUT -H 'Content-Type: application/json' --data-binary @"$work/payload.json" "http://127.0.0.1:$OURS/feeds/bench" >/dev/null
mkdir -p "$work/www/feeds"
curl -sf "http://127.0.0.1:$OURS/feeds/bench" -o "$work/www/feeds/bench"
etag=$(curl -sfI "http://127.0.0.1:$OURS/feeds/bench" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')

cat >"$work/nginx.conf" <<CONF
user root;
worker_processes $WORKERS;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 30s;
  default_type application/json;
  server {
    listen 127.0.0.1:$NGINX;
    root $work/www;
    location / { etag on; }
  }
}
CONF
${SERVER_PIN:-} nginx -c "$work/nginx.conf"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$NGINX/feeds/bench" >/dev/null && break; sleep 0.05; done
nginx_etag=$(curl -sfI "http://127.0.0.1:$NGINX/feeds/bench" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
cmp <(curl -sf "http://127.0.0.1:$OURS/feeds/bench") <(curl -sf "http://127.0.0.1:$NGINX/feeds/bench")
size=$(stat -c %s "$work/www/feeds/bench")

# Runs wrk; prints "requests_per_second errors".
measure() {
  local url=$1 header=${2:-}
  local args=(-t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency)
  [ -n "$header" ] && args+=(-H "$header")
  local out
  out=$(${CLIENT_PIN:-} wrk "${args[@]}" "$url")
  local rps errors
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  errors=$(awk '/Non-2xx or 3xx/{print $5} /Socket errors/{print $4+$6+$8+$10}' <<<"$out" | awk '{s+=$1} END{print s+0}')
  echo "$rps $errors"
}

declare -A total
echo "| round | case | feed-server req/s | nginx req/s | ratio | errors (ours/nginx) |"
echo "|---|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
  for case in 200 304; do
    if [ "$case" = 200 ]; then ours_header=""; nginx_header=""; else ours_header="If-None-Match: $etag"; nginx_header="If-None-Match: $nginx_etag"; fi
    read -r ours ours_err < <(measure "http://127.0.0.1:$OURS/feeds/bench" "$ours_header")
    read -r theirs theirs_err < <(measure "http://127.0.0.1:$NGINX/feeds/bench" "$nginx_header")
    ratio=$(python3 -c "print(f'{$ours/$theirs:.2f}')")
    total[$case-ours]=$(python3 -c "print(${total[$case-ours]:-0}+$ours)")
    total[$case-nginx]=$(python3 -c "print(${total[$case-nginx]:-0}+$theirs)")
    echo "| $round | $case | $ours | $theirs | $ratio | $ours_err/$theirs_err |"
  done
done
for case in 200 304; do
  python3 -c "o=${total[$case-ours]}/$ROUNDS; n=${total[$case-nginx]}/$ROUNDS; print(f'| mean | $case | {o:.0f} | {n:.0f} | {o/n:.2f} | |')"
done
echo
echo "Body: $size bytes; wrk -t$WRK_THREADS -c$CONNECTIONS -d$DURATION; $WORKERS workers each; $(nproc) cores; $(date -u +%Y-%m-%d)."
