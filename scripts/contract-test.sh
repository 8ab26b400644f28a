#!/usr/bin/env bash
# The HTTP contract check: openapi.yaml must be a valid OpenAPI 3.1 document
# (openapi-spec-validator), and the live server must satisfy it under schemathesis with all
# checks (schemathesis.toml says which state-dependent statuses count as acceptable).
# Tools are pinned (scripts/test-venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=$(bash scripts/test-venv.sh)
"$venv/bin/openapi-spec-validator" openapi.yaml

swift build --product feed-server >/dev/null
work=$(mktemp -d)
.build/debug/feed-server --port 0 --root "$work/data" --access-log off 2>"$work/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 200); do grep -q "listening on" "$work/server.log" && break; sleep 0.05; done
url=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/server.log")

# Hypothesis' example database lives in the work folder so every run starts fresh.
repo=$PWD
cd "$work"
# archive_hooks lets schemathesis send application/x-tar bodies (PUT /feeds/{group}/archive).
SCHEMATHESIS_HOOKS=archive_hooks PYTHONPATH="$repo/Tests/Contract" \
  "$repo/$venv/bin/schemathesis" --config-file "$repo/schemathesis.toml" run "$repo/openapi.yaml" \
  --url "$url" --checks all --max-examples "${MAX_EXAMPLES:-100}" --seed "${SEED:-1}"

# The fault lab is off by default, so the pass above sees POST /feeds/{group}/faults answer 404.
# A second pass covers it switched on: its own server with --fault-lab, a group "seeded" published
# with an image first, schemathesis on that one operation, and a hook
# (Tests/Contract/fault_lab_hooks.py) that aims examples at that group and keeps holds to 1 s.
"$repo/.build/debug/feed-server" --port 0 --root "$work/lab" --access-log off --fault-lab 2>"$work/lab.log" &
lab=$!
trap 'kill "$server" "$lab" 2>/dev/null || true; wait "$server" "$lab" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 200); do grep -q "listening on" "$work/lab.log" && break; sleep 0.05; done
lab_url=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/lab.log")
"$repo/$venv/bin/python" - "$lab_url" <<'PY'
import struct, sys, urllib.request, zlib
chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress((b"\0" + b"\x20\x80\xe0" * 64) * 64)) + chunk(b"IEND", b"")
body = (b'--seedboundary\r\nContent-Disposition: form-data; name="payload"\r\nContent-Type: application/json\r\n\r\n{"items":[{"image":"q1.png"}]}\r\n'
        b'--seedboundary\r\nContent-Disposition: form-data; name="image"; filename="q1.png"\r\nContent-Type: image/png\r\n\r\n' + png + b"\r\n--seedboundary--\r\n")
request = urllib.request.Request(sys.argv[1] + "/feeds/seeded", data=body, method="PUT", headers={"Content-Type": "multipart/form-data; boundary=seedboundary"})
assert urllib.request.urlopen(request).status == 201
PY
SCHEMATHESIS_HOOKS=fault_lab_hooks PYTHONPATH="$repo/Tests/Contract" \
  "$repo/$venv/bin/schemathesis" --config-file "$repo/schemathesis.toml" run "$repo/openapi.yaml" \
  --url "$lab_url" --checks all --max-examples "${MAX_EXAMPLES:-100}" --seed "${SEED:-1}" \
  --include-name "POST /feeds/{group}/faults"
# The pass must have reached the lab itself, not only its refusals.
"$repo/$venv/bin/python" - "$lab_url" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1] + "/metrics").read().decode()
kinds = {m.group(1): int(m.group(2)) for m in re.finditer(r'feedserver_faults_injected_total\{kind="([^"]+)"\} (\d+)', text)}
print("fault-lab pass, faults injected by kind:", kinds)
assert sum(kinds.values()) > 0, "the fault-lab pass injected nothing"
PY
