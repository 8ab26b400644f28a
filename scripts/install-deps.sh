#!/usr/bin/env bash
# Installs the Debian packages feed-server builds and runs against, skipping the install
# (and the network) when every one is already there. Used by run.sh and test.sh.
set -euo pipefail

packages=(libmicrohttpd-dev libssl-dev libvips-dev libarchive-dev pkg-config strace)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "Installing Debian packages: ${missing[*]}" >&2
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
