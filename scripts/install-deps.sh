#!/usr/bin/env bash
# Installs the Debian packages feed-server builds and runs against (on macOS: names the
# Homebrew formulas instead, see below), skipping the install
# (and the network) when every one is already there. Used by run.sh and test.sh.
set -euo pipefail

# On a Mac there is no dpkg: say what Homebrew provides instead and stop there. The native macOS
# build is not built or tested by this project; the verified way on a Mac is the container
# (docs/recipes.md, "Feed an iOS Simulator's widget through the container").
if [ "$(uname -s)" = Darwin ]; then
  formulas=(libmicrohttpd vips libarchive pkgconf)   # OpenSSL is not needed there: CryptoKit hashes
  if ! command -v brew >/dev/null; then
    echo "install-deps: macOS: install Homebrew (https://brew.sh), then: brew install ${formulas[*]}" >&2
    exit 1
  fi
  missing=()
  for formula in "${formulas[@]}"; do
    brew list --versions "$formula" >/dev/null 2>&1 || missing+=("$formula")
  done
  echo "install-deps: macOS: the native build is not built or tested by this project (Linux is);" >&2
  echo "install-deps: the container is the verified way on a Mac: see docs/recipes.md." >&2
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-deps: to try the native build anyway: brew install ${missing[*]}" >&2
    exit 1
  fi
  exit 0
fi

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
