#!/usr/bin/env bash
# User-space instructions per publish, counted by valgrind's callgrind (repeatable on a shared
# machine, unlike latency): feed-server (journal on, a widget profile stored, as in
# bench/publish-latency.sh) and the libmicrohttpd publish floor (bench/publish-floor.c: the bare
# flush-and-rename sequence behind a suspended connection) each take PUBLISHES sequential ~3.6 KB
# JSON publishes on one keep-alive connection, on tmpfs, with collection on only around them.
# Prints instructions per publish for each, their ratio, and feed-server's largest inclusive costs.
#
# OpenSSL picks its SHA-256 code from the CPU it sees, and valgrind's CPU lacks the SHA
# extensions: the fingerprint's SHA-256 counts ~100,000 instructions here that a real run does
# not spend.
#
# Environment: PUBLISHES (500), BINARY (.build/release/feed-server, built when default), KEEP (a
# folder to keep the callgrind.out files in).
set -euo pipefail
cd "$(dirname "$0")/.."

PUBLISHES=${PUBLISHES:-500}
BINARY=${BINARY:-}
OURS=18097
FLOOR=18098
command -v valgrind >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind; }
command -v cc >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc; }
bash scripts/install-deps.sh
if [ -z "$BINARY" ]; then
  swift build -c release --product feed-server >/dev/null
  BINARY=.build/release/feed-server
fi
work=$(mktemp -d /dev/shm/callgrind-publish.XXXXXX)
cleanup() {
  for pid in ${ours_pid:-} ${floor_pid:-}; do kill "$pid" 2>/dev/null || true; done
  sleep 0.5
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/callgrind.*.out "$KEEP"/ 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cc -O2 -o "$work/publish-floor" bench/publish-floor.c -lmicrohttpd -lpthread
# valgrind cannot read the DWARF 5 forms Swift's clang emits: count on a copy with the symbol
# table only (function names are all the report needs).
strip --strip-debug -o "$work/feed-server" "$BINARY"
mkdir -p "$work/floor/g/generations"

valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.ours.%p" \
  "$work/feed-server" --port $OURS --root "$work/data" --access-log off 2>"$work/ours.log" &
ours_pid=$!
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.floor.%p" \
  "$work/publish-floor" $FLOOR 2 "$work/floor/g" >"$work/floor.log" 2>&1 &
floor_pid=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$OURS/healthz" >/dev/null && break; sleep 0.1; done
curl -sf -X PUT -H 'Content-Type: application/json' --data '{"items":"/quotes","title":"/text","zone":"Europe/Berlin"}' \
  "http://127.0.0.1:$OURS/feeds/bench/profile" >/dev/null

# Sends `count` publishes from number `first` on one keep-alive connection; fails on any other
# answer than 200 or 201.
client() {
  python3 - "$1" "$2" "$3" <<'PY'
import http.client, json, sys
port, first, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
for i in range(first, first + count):
    quotes = [{"id": f"q{k}", "text": f"Quote {k} of round {i}: the quick brown fox jumps over the lazy dog"} for k in range(40)]
    connection.request("PUT", "/feeds/bench", body=json.dumps({"seq": i, "quotes": quotes}).encode(),
                       headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    assert response.status in (200, 201), response.status
PY
}

# Counts one server; prints instructions per publish.
count() {
  local name=$1 pid=$2 port=$3
  for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  client "$port" 0 50
  callgrind_control -i on "$pid" >/dev/null 2>&1
  callgrind_control -z "$pid" >/dev/null 2>&1
  client "$port" 1000 "$PUBLISHES"
  callgrind_control -d "$name" "$pid" >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1
  local file
  file=$(ls -t "$work"/callgrind."$name"."$pid".* | head -1)
  cp "$file" "$work/callgrind.$name.out"
  local total
  total=$(callgrind_annotate "$work/callgrind.$name.out" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1); print $1; exit}')
  echo "$((total / PUBLISHES))"
}

ours=$(count ours "$ours_pid" $OURS)
floor=$(count floor "$floor_pid" $FLOOR)
echo "| figure | feed-server | floor | ratio |"
echo "|---|---|---|---|"
echo "| instructions per publish | $ours | $floor | $(python3 -c "print(f'{$ours/$floor:.2f}')") |"
echo
echo "feed-server's largest inclusive costs (instructions per publish):"
callgrind_annotate --inclusive=yes --threshold=99 "$work/callgrind.ours.out" 2>/dev/null | sed -n '/file:function/,$p' \
  | { command -v swift >/dev/null && swift demangle --simplified || cat; } \
  | grep -E "FeedStore.parsePayload|closure #1 in PublishCommit.linting|PayloadReferences.init|ProfileFindings.init|FeedStore.publish\(group|Fingerprint.compute|WriteJournal.record|static DaemonCallbacks.accessHandler" \
  | grep -v -E "^ *[0-9,]+ +\([ 0-9.]+%\) +\?\?\?:(partial apply|@objc)" \
  | sed -E 's/^ *([0-9,]+) +\([ 0-9.]+%\) +\?\?\?:/\1 /; s/ \[[^]]*\]$//' \
  | awk -v n="$PUBLISHES" '{count=$1; gsub(",", "", count); $1=""; printf "%8.0f%s\n", count / n, $0}' | cut -c1-120
