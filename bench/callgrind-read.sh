#!/usr/bin/env bash
# User-space instructions per cached read, counted by valgrind's callgrind (repeatable on a
# shared machine, unlike requests per second): feed-server and the libmicrohttpd floor
# (bench/floor.c) each answer N keep-alive requests for the same ~4 KB feed, 200 and 304, with
# collection switched on only around those requests (after start-up and a warm-up). Prints
# instructions per request for each, their ratio, and each run's top functions.
#
# Environment: REQUESTS (2000), TOP (15), BINARY (.build/release/feed-server, built when default),
# KEEP (a folder to keep the callgrind.out files in).
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS=${REQUESTS:-2000}
TOP=${TOP:-15}
BINARY=${BINARY:-}
OURS=18091
FLOOR=18093
command -v valgrind >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind; }
if [ -z "$BINARY" ]; then
  swift build -c release --product feed-server >/dev/null
  BINARY=.build/release/feed-server
fi
work=$(mktemp -d)
cleanup() {
  for pid in ${ours_pid:-} ${floor_pid:-}; do kill "$pid" 2>/dev/null || true; done
  sleep 0.5
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/callgrind.* "$KEEP"/ 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -o "$work/floor" bench/floor.c -lmicrohttpd
# valgrind cannot read the DWARF 5 forms Swift's clang emits: count on a copy with the symbol
# table only (function names are all the report needs).
strip --strip-debug -o "$work/feed-server" "$BINARY"

valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.ours.%p" \
  "$work/feed-server" --port $OURS --root "$work/data" --access-log off --threads 1 2>"$work/ours.log" &
ours_pid=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$OURS/healthz" >/dev/null && break; sleep 0.1; done
python3 -c '
import json
quotes = [{"id": f"q{i}", "text": f"Quote number {i}: the quick brown fox jumps over the lazy dog", "author": "Anonymous", "image": f"q{i}.jpg"} for i in range(30)]
print(json.dumps({"quotes": quotes, "emptyText": "Nothing yet"}, separators=(",", ":")))' >"$work/payload.json"
curl -sf -X PUT -H 'Content-Type: application/json' --data-binary @"$work/payload.json" "http://127.0.0.1:$OURS/feeds/bench" >/dev/null
curl -sf "http://127.0.0.1:$OURS/feeds/bench" -o "$work/body"
headers=$(curl -sfI "http://127.0.0.1:$OURS/feeds/bench" | tr -d '\r')
etag=$(awk -F': ' 'tolower($1)=="etag"{print $2}' <<<"$headers")
generation=$(awk -F': ' 'tolower($1)=="x-feed-generation"{print $2}' <<<"$headers")
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.floor.%p" \
  "$work/floor" $FLOOR 1 "$work/body" "$etag" "$generation" 2>"$work/floor.log" &
floor_pid=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$FLOOR/" >/dev/null && break; sleep 0.1; done

# Sends `count` GETs on one keep-alive connection, each read in full before the next.
client() {
  python3 - "$1" "$2" "$3" <<'PY'
import socket, sys
port, count, header = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
request = (f"GET /feeds/bench HTTP/1.1\r\nHost: 127.0.0.1\r\n{header}\r\n").encode()
s = socket.create_connection(("127.0.0.1", port))
buffer = b""
for _ in range(count):
    s.sendall(request)
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end >= 0:
            head = buffer[:end].decode()
            status = int(head.split(" ")[1])
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.lower() == "content-length": length = int(value)
            if status == 304: length = 0
            if len(buffer) >= end + 4 + length:
                buffer = buffer[end + 4 + length:]
                break
        buffer += s.recv(65536)
s.close()
PY
}

# Counts one case on one server; prints instructions per request.
count() {
  local name=$1 pid=$2 port=$3 header=$4
  client "$port" 200 "$header"
  callgrind_control -i on "$pid" >/dev/null 2>&1
  client "$port" 50 "$header"
  callgrind_control -z "$pid" >/dev/null 2>&1
  client "$port" "$REQUESTS" "$header"
  callgrind_control -d "$name" "$pid" >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1
  local file
  file=$(ls -t "$work"/callgrind.*."$pid".* | head -1)
  cp "$file" "$work/callgrind.$name.out"
  local total
  total=$(callgrind_annotate "$work/callgrind.$name.out" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1; exit}')
  echo "$((total / REQUESTS))"
}

declare -A per
for case in 200 304; do
  header=""
  [ "$case" = 304 ] && header="If-None-Match: $etag"$'\r\n'
  per[ours-$case]=$(count "ours-$case" "$ours_pid" $OURS "$header")
  per[floor-$case]=$(count "floor-$case" "$floor_pid" $FLOOR "$header")
done
echo "| case | feed-server instructions/request | floor instructions/request | ratio |"
echo "|---|---|---|---|"
for case in 200 304; do
  echo "| $case | ${per[ours-$case]} | ${per[floor-$case]} | $(python3 -c "print(f'{${per[ours-$case]}/${per[floor-$case]}:.2f}')") |"
done
for case in 200 304; do
  echo
  echo "Top functions, feed-server, $case (self instructions per request):"
  callgrind_annotate --threshold=99 "$work/callgrind.ours-$case.out" 2>/dev/null | sed -n '/file:function/,$p' | sed -n "2,$((TOP + 1))p" \
    | awk -v n="$REQUESTS" '{count=$1; gsub(",", "", count); $1=""; printf "%8.0f %s\n", count / n, $0}'
done
