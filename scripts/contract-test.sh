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
cd "$work"
"$OLDPWD/$venv/bin/schemathesis" --config-file "$OLDPWD/schemathesis.toml" run "$OLDPWD/openapi.yaml" \
  --url "$url" --checks all --max-examples "${MAX_EXAMPLES:-100}" --seed "${SEED:-1}"
