#!/usr/bin/env bash
# Cached reads side by side: GET /feeds/{group} (~4 KB payload) and its 304 on feed-server, on
# the libmicrohttpd floor (bench/floor.c: the same bytes and headers from two prepared responses,
# same daemon flags and pool) and on nginx (the same bytes as a static file, etag on); and one
# asset GET (a ~60 KB JPEG sent from its generation folder) on feed-server, on the floor
# (libmicrohttpd's own file path: the header pushed alone, then sendfile) and on nginx serving
# that very file. Access logs off, keep-alive on, each case's servers measured one after the
# other within a round. Checks that all three serve identical bodies; prints a Markdown table
# with each ratio for docs/benchmarks.md. Beside req/s it prints each server's CPU time per
# request (user + system, from /proc/<pid>/stat around each wrk run) and the ratios by CPU:
# on a machine shared with other work, req/s moves with what else runs on the server's core,
# while CPU per request is what the server itself pays for an answer.
#
# Environment: ROUNDS (3), DURATION (10s), CONNECTIONS (32), WRK_THREADS (1), WORKERS (1),
# SERVER_PIN ("taskset -c 1"), CLIENT_PIN ("taskset -c 0"), CASES ("200 304 asset"),
# BINARY (.build/release/feed-server, built when it is the default), OURS_FLAGS (extra feed-server
# options; "--not-modified-length zero" by default, see below; "" for a build older than that option).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
WRK_THREADS=${WRK_THREADS:-1}
WORKERS=${WORKERS:-1}
SERVER_PIN=${SERVER_PIN-taskset -c 1}
CLIENT_PIN=${CLIENT_PIN-taskset -c 0}
CASES=${CASES:-200 304 asset}
BINARY=${BINARY:-}
OURS_FLAGS=${OURS_FLAGS---not-modified-length zero}
OURS=18081
NGINX=18082
FLOOR=18083

bash scripts/install-deps.sh
for tool in wrk nginx curl python3 cc convert; do
  command -v "$tool" >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y wrk nginx-light curl gcc imagemagick; break; }
done
if [ -z "$BINARY" ]; then
  swift build -c release --product feed-server >/dev/null
  BINARY=.build/release/feed-server
fi

work=$(mktemp -d)
cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "${floor_pid:-}" ] && kill "$floor_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -o "$work/floor" bench/floor.c -lmicrohttpd

# wrk (http_parser) waits for Content-Length bytes after a 304, so feed-server states 0 there, as
# the floor (libmicrohttpd's default) does; the answer is built and queued the same way either way.
$SERVER_PIN "$BINARY" --port $OURS --root "$work/data" --access-log off --threads "$WORKERS" $OURS_FLAGS 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$OURS/healthz" >/dev/null && break; sleep 0.05; done

# A ~4 KB payload shaped like a real widget feed, and one photo-like JPEG asset.
python3 - >"$work/payload.json" <<'PY'
import json
quotes = [{"id": f"q{i}", "text": f"Quote number {i}: the quick brown fox jumps over the lazy dog", "author": "Anonymous", "image": f"q{i}.jpg"} for i in range(30)]
print(json.dumps({"quotes": quotes, "emptyText": "Nothing yet"}, separators=(",", ":")))
PY
convert -seed 7 -size 400x300 plasma:fractal -quality 92 "$work/photo.jpg"
curl -sf -X PUT -H 'Content-Type: application/json' --data-binary @"$work/payload.json" "http://127.0.0.1:$OURS/feeds/bench" >/dev/null
asset_url=$(curl -sf -X PUT "http://127.0.0.1:$OURS/feeds/photo?images=raw" -F 'payload={"quotes":[{"id":"q1","text":"photo"}],"emptyText":""};type=application/json' \
  -F "q1=@$work/photo.jpg;filename=q1.jpg" | python3 -c 'import json,sys; print(json.load(sys.stdin)["assets"][0]["url"])')
mkdir -p "$work/www/feeds"
curl -sf "http://127.0.0.1:$OURS/feeds/bench" -o "$work/www/feeds/bench"
headers=$(curl -sfI "http://127.0.0.1:$OURS/feeds/bench" | tr -d '\r')
etag=$(awk -F': ' 'tolower($1)=="etag"{print $2}' <<<"$headers")
generation=$(awk -F': ' 'tolower($1)=="x-feed-generation"{print $2}' <<<"$headers")
asset_etag=$(curl -sfI "http://127.0.0.1:$OURS$asset_url" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')

$SERVER_PIN "$work/floor" $FLOOR "$WORKERS" "$work/www/feeds/bench" "$etag" "$generation" "$work/photo.jpg" "$asset_etag" &
floor_pid=$!

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
    # The asset straight from feed-server's generation folder.
    location ~ ^/assets/([^/]+)/([^/]+)/([^/]+)\$ {
      alias $work/data/\$1/generations/\$2/assets/\$3;
      default_type image/jpeg;
      etag on;
    }
  }
}
CONF
$SERVER_PIN nginx -c "$work/nginx.conf"
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$NGINX/feeds/bench" >/dev/null && curl -sf "http://127.0.0.1:$FLOOR/feeds/bench" >/dev/null && break
  sleep 0.05
done
nginx_etag=$(curl -sfI "http://127.0.0.1:$NGINX/feeds/bench" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
cmp <(curl -sf "http://127.0.0.1:$OURS/feeds/bench") <(curl -sf "http://127.0.0.1:$NGINX/feeds/bench")
cmp <(curl -sf "http://127.0.0.1:$OURS/feeds/bench") <(curl -sf "http://127.0.0.1:$FLOOR/feeds/bench")
cmp <(curl -sf "http://127.0.0.1:$OURS$asset_url") <(curl -sf "http://127.0.0.1:$NGINX$asset_url")
cmp <(curl -sf "http://127.0.0.1:$OURS$asset_url") "$work/photo.jpg"
cmp <(curl -sf "http://127.0.0.1:$FLOOR$asset_url") "$work/photo.jpg"
for port in $OURS $FLOOR; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "http://127.0.0.1:$port/feeds/bench")" = 304 ]
done
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $nginx_etag" "http://127.0.0.1:$NGINX/feeds/bench")" = 304 ]
size=$(stat -c %s "$work/www/feeds/bench")
asset_size=$(stat -c %s "$work/photo.jpg")

# CPU time (user + system, clock ticks) the processes in "$@" have used so far.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$total"
}

# Runs wrk against a server whose processes are "${@:3}"; prints "requests_per_second errors
# cpu_us_per_request". CPU time per request is what a server pays for an answer whatever else
# runs on the machine (req/s moves with the load other processes put on the server's core).
measure() {
  local url=$1 header=${2:-}
  shift 2
  local args=(-t"$WRK_THREADS" -c"$CONNECTIONS" -d"$DURATION")
  [ -n "$header" ] && args+=(-H "$header")
  local out before after
  before=$(cpu_ticks "$@")
  out=$($CLIENT_PIN wrk "${args[@]}" "$url")
  after=$(cpu_ticks "$@")
  local rps errors requests
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  requests=$(awk '/requests in/{print $1}' <<<"$out")
  errors=$(awk '/Non-2xx or 3xx/{print $5} /Socket errors/{print $4+$6+$8+$10}' <<<"$out" | awk '{s+=$1} END{print s+0}')
  echo "$rps $errors $(python3 -c "print(f'{($after - $before) * 1e6 / $(getconf CLK_TCK) / max(1, $requests):.2f}')")"
}
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

nginx_pids=$(pgrep -f "nginx -c $work/nginx.conf"; pgrep -P "$(cat "$work/nginx.pid")")
declare -A total floor_ratios nginx_ratios cpu_floor_ratios cpu_nginx_ratios
echo "| round | case | feed-server req/s | floor req/s | nginx req/s | ours/floor | ours/nginx | CPU µs/request (ours/floor/nginx) | by CPU: floor/ours | by CPU: nginx/ours | errors (ours/floor/nginx) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
  for case in $CASES; do
    floor="" floor_err="-" floor_cpu=""
    # Each server's wrk run for this case; the order flips every round, so a drift within a
    # round (another process starting, the CPU's clock) does not always favour the same server.
    ours_url="http://127.0.0.1:$OURS/feeds/bench" floor_url="http://127.0.0.1:$FLOOR/feeds/bench"
    nginx_url="http://127.0.0.1:$NGINX/feeds/bench" ours_header="" nginx_header=""
    case $case in
      304) ours_header="If-None-Match: $etag" nginx_header="If-None-Match: $nginx_etag" ;;
      asset) ours_url="http://127.0.0.1:$OURS$asset_url" floor_url="http://127.0.0.1:$FLOOR$asset_url" nginx_url="http://127.0.0.1:$NGINX$asset_url" ;;
    esac
    order=(ours floor nginx)
    [ $((round % 2)) = 0 ] && order=(nginx floor ours)
    for server in "${order[@]}"; do
      case $server in
        ours) read -r ours ours_err ours_cpu < <(measure "$ours_url" "$ours_header" "$server_pid") ;;
        floor) if [ -n "$floor_url" ]; then read -r floor floor_err floor_cpu < <(measure "$floor_url" "$ours_header" "$floor_pid"); fi ;;
        nginx) read -r theirs theirs_err theirs_cpu < <(measure "$nginx_url" "$nginx_header" $nginx_pids) ;;
      esac
    done
    cpu_floor_ratio="-"
    [ -n "$floor_cpu" ] && cpu_floor_ratio=$(ratio "$floor_cpu" "$ours_cpu")
    cpu_nginx_ratio=$(ratio "$theirs_cpu" "$ours_cpu")
    cpu_floor_ratios[$case]="${cpu_floor_ratios[$case]:-} $cpu_floor_ratio"
    cpu_nginx_ratios[$case]="${cpu_nginx_ratios[$case]:-} $cpu_nginx_ratio"
    total[$case-ours]=$(python3 -c "print(${total[$case-ours]:-0}+$ours)")
    total[$case-nginx]=$(python3 -c "print(${total[$case-nginx]:-0}+$theirs)")
    floor_ratio="-"
    if [ -n "$floor" ]; then
      total[$case-floor]=$(python3 -c "print(${total[$case-floor]:-0}+$floor)")
      floor_ratio=$(ratio "$ours" "$floor")
    fi
    nginx_ratio=$(ratio "$ours" "$theirs")
    floor_ratios[$case]="${floor_ratios[$case]:-} $floor_ratio"
    nginx_ratios[$case]="${nginx_ratios[$case]:-} $nginx_ratio"
    echo "| $round | $case | $ours | ${floor:--} | $theirs | $floor_ratio | $nginx_ratio | $ours_cpu/${floor_cpu:--}/$theirs_cpu | $cpu_floor_ratio | $cpu_nginx_ratio | $ours_err/$floor_err/$theirs_err |"
  done
done
for case in $CASES; do
  python3 - <<PY
o = ${total[$case-ours]} / $ROUNDS
n = ${total[$case-nginx]} / $ROUNDS
f = ${total[$case-floor]:-0} / $ROUNDS
print(f"| mean | $case | {o:.0f} | {f:.0f} | {n:.0f} | " + (f"{o/f:.2f}" if f else "-") + f" | {o/n:.2f} | | | | |" if f else f"| mean | $case | {o:.0f} | - | {n:.0f} | - | {o/n:.2f} | | | | |")
PY
done
# The median of the per-round ratios: a round disturbed by another process on the machine moves
# the mean of the req/s columns, not the median ratio.
for case in $CASES; do
  python3 - "${floor_ratios[$case]}" "${nginx_ratios[$case]}" "${cpu_floor_ratios[$case]}" "${cpu_nginx_ratios[$case]}" <<PY
import statistics, sys
def median(text):
    values = [float(v) for v in text.split() if v != "-"]
    return f"{statistics.median(values):.2f}" if values else "-"
print(f"| median ratio | $case | | | | {median(sys.argv[1])} | {median(sys.argv[2])} | | {median(sys.argv[3])} | {median(sys.argv[4])} | |")
PY
done
echo
echo "Feed body: $size bytes; asset: $asset_size bytes; wrk -t$WRK_THREADS -c$CONNECTIONS -d$DURATION (${CLIENT_PIN:-unpinned}); $WORKERS worker(s) each (${SERVER_PIN:-unpinned}); $(nproc) cores; $(date -u +%Y-%m-%d)."
