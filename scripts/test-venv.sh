#!/usr/bin/env bash
# Makes .build/test-venv with the pinned Python tools the contract and browser tests drive
# (from PyPI), once; prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/test-venv
stamp="$venv/.pinned-v1"
if [ ! -f "$stamp" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    schemathesis==4.32.5 openapi-spec-validator==0.9.0 selenium==4.38.0 >&2
  touch "$stamp"
fi
echo "$venv"
