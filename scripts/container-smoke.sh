#!/usr/bin/env bash
# Container smoke test: builds the image from the Dockerfile with podman, starts it, publishes
# from outside with curl, reads the feed back, stops it.
#
# This machine has no Docker engine and reaches no image registry, so both base images are
# made here: Debian bookworm from debootstrap (through the machine's own apt mirror), and for
# the builder the same plus the host's Swift toolchain (/opt/swift). The Dockerfile is used
# unchanged, its BUILDER_IMAGE and RUNTIME_IMAGE arguments pointed at those local images.
# `--format docker` keeps the HEALTHCHECK (the OCI image format has no such field).
# Needs root. Base images are cached under .build/container-bases between runs.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in podman runc debootstrap curl; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ "${#need[@]}" -gt 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"; fi

work=$(mktemp -d)
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
export CONTAINERS_CONF="$work/containers.conf"
name="feed-server-smoke-$$"
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The mirror this machine's apt already uses (never a hard-coded host).
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list)

cache=.build/container-bases
mkdir -p "$cache"
make_base() { # name, extra debootstrap packages, extra directory to copy in
  local tag=$1 include=$2 extra=${3:-}
  if podman image exists "localhost/$tag:local"; then return; fi
  if [ ! -f "$cache/$tag.tar" ]; then
    local root="$work/$tag-root"
    debootstrap --variant=minbase ${include:+--include="$include"} bookworm "$root" "$mirror" >"$work/$tag-debootstrap.log"
    if [ -n "$extra" ]; then mkdir -p "$root$extra" && cp -a "$extra/." "$root$extra/"; fi
    tar -C "$root" -cf "$cache/$tag.tar" .
    rm -rf "$root"
  fi
  podman import --change 'ENV PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$cache/$tag.tar" "localhost/$tag:local" >/dev/null
}
make_base bookworm-slim ""
make_base swift-bookworm "binutils,git,libc6-dev,libcurl4-openssl-dev,libedit2,libgcc-12-dev,libpython3.11,libsqlite3-0,libstdc++-12-dev,libxml2-dev,libncurses-dev,libz3-dev,pkg-config,tzdata,zlib1g-dev,ca-certificates" /opt/swift

podman build --network host --format docker \
  --build-arg BUILDER_IMAGE=localhost/swift-bookworm:local \
  --build-arg RUNTIME_IMAGE=localhost/bookworm-slim:local \
  -t localhost/feed-server:smoke .

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
podman run -d --name "$name" --network host -e FEED_SERVER_PORT="$port" -e FEED_SERVER_TOKEN=smoke localhost/feed-server:smoke >/dev/null
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done

user=$(podman exec "$name" id -u)
[ "$user" != 0 ] || { echo "FAIL: the container runs as root"; exit 1; }
status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://127.0.0.1:$port/feeds/demo" -H 'Content-Type: application/json' -d '{"x":1}')
[ "$status" = 401 ] || { echo "FAIL: publish without the token answered $status"; exit 1; }
curl -fsS -X PUT "http://127.0.0.1:$port/feeds/demo" -H 'Authorization: Bearer smoke' \
  -H 'Content-Type: application/json' -d '{"quotes":[{"id":"q1","text":"Carpe diem"}]}' >"$work/published.json"
curl -fsS "http://127.0.0.1:$port/feeds/demo" >"$work/read.json"
grep -q '"text":"Carpe diem"' "$work/read.json" || { echo "FAIL: read back $(cat "$work/read.json")"; exit 1; }
health=$(podman inspect --format '{{.Config.Healthcheck.Test}}' "$name")
podman stop -t 10 "$name" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || { echo "FAIL: exit code $code after SIGTERM"; podman logs "$name"; exit 1; }
podman logs "$name" 2>&1 | tail -5
echo "container smoke test passed: uid $user, healthcheck $health, published and read back, clean stop"
