#!/usr/bin/env bash
# The container test (run by scripts/test.sh, so by CI; also on its own, as root):
#  1. builds the image from the Dockerfile with podman (runtime runc, cgroup manager cgroupfs),
#     checks what it adds to its base (at most 75 MB), its non-root user and its HEALTHCHECK;
#  2. starts it, and from outside: 401 without the token, publishes JSON and a multipart photo,
#     reads both back, checks every other image format is refused as undecodable, and compares the
#     multipart answer with the host's own build (Debian's libvips42): Tests/ContainerTests/exercise.py;
#  3. stops it (exit code 0 after SIGTERM);
#  3b. runs it on a host folder bind-mounted as its root, as the invoking user (--user), and
#     checks ownership, flock and atomic renames across the mount and the preview from the host
#     (Tests/ContainerTests/bind_mount.py; the Simulator recipe of docs/recipes.md);
#  4. starts compose.yaml with podman-compose and checks the seeding publisher's feed is served.
#
# No registry but Debian's and PyPI is reachable, so the Dockerfile's two base images are made
# here: Debian bookworm by debootstrap (through the machine's own apt sources), trimmed like the
# official slim image, and for the builder the same plus what the Swift toolchain needs; the
# host's toolchain is mounted into the build, not copied. The Dockerfile is used unchanged, its
# BUILDER_IMAGE and RUNTIME_IMAGE arguments pointed at those local images.
#
# Containers live in their own storage under .build/containers (images, layers, volumes), so
# this never touches, nor is disturbed by, other podman users on the machine; the debootstrap
# tarball is cached in .build/container-bases. A second run reuses both (warm).
# Skips (exit 0, with a message) only when not root: podman with runc and cgroupfs needs it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ "$(id -u)" -ne 0 ]; then
  echo "container test: SKIPPED: needs root (podman with runc and cgroupfs); run: sudo bash scripts/container-test.sh"
  exit 0
fi

started=$(date +%s)
phase_start=$started
timings=()
phase() { # records how long the phase that just ended took
  local now; now=$(date +%s)
  timings+=("$1 $((now - phase_start)) s")
  echo "--- $1: $((now - phase_start)) s"
  phase_start=$now
}

packages=(podman runc netavark aardvark-dns iptables podman-compose debootstrap curl python3-pil)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "Installing Debian packages: ${missing[*]}" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The host's Swift toolchain, mounted at the same path into the builder.
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")

store=$repo/.build/containers
# /run is per boot, like podman's own run state; the name keeps worktrees apart.
run_state=/run/feed-server-containers/$(echo "$store" | sha256sum | cut -c1-12)
mkdir -p "$store" "$run_state"
work=$(mktemp -d)
export CONTAINERS_STORAGE_CONF=$work/storage.conf CONTAINERS_CONF=$work/containers.conf
cat >"$CONTAINERS_STORAGE_CONF" <<CONF
[storage]
driver = "overlay"
graphroot = "$store/storage"
runroot = "$run_state/storage"
CONF
cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$run_state/libpod"
volume_path = "$store/volumes"
[network]
network_config_dir = "$store/networks"
CONF
# Keeps the HEALTHCHECK (the OCI image format has no such field), for compose's builds too.
export BUILDAH_FORMAT=docker

name="feed-server-test-$$"
project="fstest$$"
reference_pid=""
cleanup() {
  podman rm -f "$name" "$name-mount" "$name-seeded" >/dev/null 2>&1 || true
  if [ -f "$work/compose-started" ]; then
    podman-compose -p "$project" -f compose.yaml down -v >/dev/null 2>&1 || true
  fi
  [ -z "$reference_pid" ] || kill "$reference_pid" 2>/dev/null || true
  [ ! -f "$work/nginx/nginx.pid" ] || kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null || true
  podman rmi "${project}_feed-server" "${project}_seed" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "container test: FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- base images -------------------------------------------------------------------------
runtime_base=localhost/debian:bookworm-slim-local
builder_base=localhost/swift:bookworm-local
cache=.build/container-bases
mkdir -p "$cache"
if ! podman image exists "$runtime_base"; then
  if [ ! -f "$cache/bookworm-minbase.tar" ]; then
    root=$work/rootfs
    # The machine's own Debian mirror (never a hard-coded host).
    mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list)
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
    # The host's apt sources (updates and security too), as the official image has them.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      rm -f "$root/etc/apt/sources.list"
      cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
    fi
    # Trimmed like debian:bookworm-slim: no downloaded packages or lists; dpkg keeps no
    # manuals, docs (but copyrights) or translations, now or for packages installed later;
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
CFG
    # and apt keeps neither its package caches nor downloaded packages.
    cat >"$root/etc/apt/apt.conf.d/slim-clean" <<'CFG'
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
CFG
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
    tar -C "$root" -cf "$cache/bookworm-minbase.tar" .
    rm -rf "$root"
  fi
  podman import "$cache/bookworm-minbase.tar" "$runtime_base" >/dev/null
fi
if ! podman image exists "$builder_base"; then
  # What the official swift:*-bookworm image installs for its toolchain.
  podman build --network host -t "$builder_base" -f - "$work" >"$work/builder-base.log" 2>&1 <<CONTAINERFILE || { tail -40 "$work/builder-base.log"; fail "builder base image"; }
FROM $runtime_base
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3.11 \
      libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=$toolchain/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CONTAINERFILE
fi
phase "base images"

# --- build ---------------------------------------------------------------------------------
build_args=(--network host -v "$toolchain:$toolchain:ro"
            --build-arg "BUILDER_IMAGE=$builder_base" --build-arg "RUNTIME_IMAGE=$runtime_base")
image=localhost/feed-server:test
podman build "${build_args[@]}" -t "$image" . >"$work/build.log" 2>&1 || { tail -60 "$work/build.log"; fail "podman build"; }
phase "image build"

image_bytes=$(podman image inspect --format '{{.Size}}' "$image")
base_bytes=$(podman image inspect --format '{{.Size}}' "$runtime_base")
added=$((image_bytes - base_bytes))
echo "image: $((image_bytes / 1000000)) MB, base: $((base_bytes / 1000000)) MB, added: $((added / 1000000)) MB"
[ "$added" -le 75000000 ] || fail "the image adds $((added / 1000000)) MB to its base (budget: 75 MB)"
user=$(podman image inspect --format '{{.Config.User}}' "$image")
[ "$user" = feed ] || fail "the image's user is '$user', not feed"
health=$(podman image inspect --format '{{.Config.Healthcheck.Test}}' "$image")
case $health in *healthz*) ;; *) fail "no HEALTHCHECK in the image ($health)" ;; esac
# Only JPEG, PNG, WebP, HEIF and their helpers are in the image's libvips (every other loader is
# blocked by the server anyway; exercise.py checks what a client sees), and libheif decodes HEVC
# through libde265 alone (no encoder, no AV1 codec).
libraries=$(podman run --rm --entrypoint /bin/sh "$image" -c 'ldd /usr/local/lib/libvips.so.42 /usr/local/lib/libheif.so.1')
for wanted in libjpeg libpng libwebp libheif libde265; do
  case $libraries in *"$wanted"*) ;; *) fail "the image's libvips does not link $wanted" ;; esac
done
for unwanted in libtiff libgif librsvg libpoppler libMagick libOpenEXR libopenslide libcfitsio libmatio libjxl libopenjp2 libfftw3 libcairo libpango libx265 libaom libdav1d; do
  case $libraries in *"$unwanted"*) fail "the image's libvips or libheif links $unwanted" ;; esac
done

# --- the image, exercised from outside ------------------------------------------------------
# The host's own debug build (Debian's libvips42): the reference the container's multipart answer must equal.
swift build --product feed-server >/dev/null
.build/debug/feed-server --port 0 --root "$work/reference" --token reference --access-log off 2>"$work/reference.log" &
reference_pid=$!
for _ in $(seq 200); do grep -q "listening on" "$work/reference.log" && break; sleep 0.05; done
reference_url=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$work/reference.log")
[ -n "$reference_url" ] || fail "the reference server did not start: $(cat "$work/reference.log")"

port=$(free_port)
# No systemd here to schedule the health check: it is run by hand below (podman healthcheck run).
podman run -d --name "$name" -p "127.0.0.1:$port:8080" -e FEED_SERVER_TOKEN=container-secret --health-interval disable "$image" >/dev/null
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
uid=$(podman exec "$name" id -u)
[ "$uid" != 0 ] || fail "the container runs as root"
podman healthcheck run "$name" >/dev/null || fail "the image's HEALTHCHECK reports unhealthy"
/usr/bin/python3 Tests/ContainerTests/exercise.py "http://127.0.0.1:$port" container-secret "$reference_url" reference \
  || { podman logs "$name" 2>&1 | tail -20; fail "the image, exercised from outside"; }

# A seed folder, as docs/containers.md shows it: every *.json published by a one-shot container
# that shares the server's network namespace.
mkdir -p "$work/seed"
echo '{"quotes":[{"id":"s1","text":"Seeded"}]}' >"$work/seed/quotes.json"
echo '{"headline":"Seeded too"}' >"$work/seed/news.json"
podman run --rm --network "container:$name" -v "$work/seed:/seed:ro" -e FEED_SERVER_TOKEN=container-secret \
  --entrypoint /bin/sh "$image" -c '
    for file in /seed/*.json; do
      curl -fsS --retry 30 --retry-connrefused -X PUT "http://127.0.0.1:8080/feeds/$(basename "$file" .json)" \
        -H "Authorization: Bearer $FEED_SERVER_TOKEN" -H "Content-Type: application/json" --data-binary "@$file"
    done' >"$work/seed.log" || fail "seeding from a folder: $(cat "$work/seed.log")"
curl -fsS "http://127.0.0.1:$port/feeds/quotes" | grep -q '"text":"Seeded"' || fail "the seeded feed 'quotes' is not served"
curl -fsS "http://127.0.0.1:$port/feeds/news" | grep -q '"headline":"Seeded too"' || fail "the seeded feed 'news' is not served"
echo "ok   a seed folder published from a one-shot container"

# A seed folder mounted read-only and named by FEED_SERVER_SEED, as docs/containers.md runs it:
# its groups, profile included, are served once the server listens.
mkdir -p "$work/scenarios/quotes"
echo '{"quotes":[{"id":"q1","text":"Seeded at start"}]}' >"$work/scenarios/quotes/payload.json"
echo '{"items":"/quotes","title":"/text"}' >"$work/scenarios/quotes/profile.json"
chmod -R a+rX "$work/scenarios"
seeded_port=$(free_port)
podman run -d --name "$name-seeded" -p "127.0.0.1:$seeded_port:8080" -v "$work/scenarios:/scenarios:ro" \
  -e FEED_SERVER_SEED=/scenarios -e FEED_SERVER_TOKEN=container-secret --health-interval disable "$image" >/dev/null
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$seeded_port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$seeded_port/feeds/quotes" | grep -q '"text":"Seeded at start"' \
  || { podman logs "$name-seeded" 2>&1 | tail -20; fail "FEED_SERVER_SEED: the seeded feed is not served"; }
curl -fsS "http://127.0.0.1:$seeded_port/feeds/quotes/profile" | grep -q '"items":"/quotes"' \
  || fail "FEED_SERVER_SEED: the seed folder's profile is not stored"
podman rm -f "$name-seeded" >/dev/null
echo "ok   a seed folder named by FEED_SERVER_SEED, published at start"

# Behind nginx, with the configuration docs/containers.md gives.
command -v nginx >/dev/null || {
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light
}
proxy_port=$(free_port)
mkdir -p "$work/nginx"
sed "s|http://127.0.0.1:8080|http://127.0.0.1:$port|" docs/examples/nginx-feed-server.conf >"$work/nginx/location.conf"
cat >"$work/nginx/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events {}
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  server {
    listen 127.0.0.1:$proxy_port;
    include $work/nginx/location.conf;
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" || fail "nginx did not start"
/usr/bin/python3 Tests/ContainerTests/exercise.py --proxy "http://127.0.0.1:$proxy_port" container-secret \
  || { cat "$work/nginx/error.log"; fail "the image behind nginx"; }
kill "$(cat "$work/nginx/nginx.pid")"

podman stop -t 10 "$name" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || { podman logs "$name" 2>&1 | tail -20; fail "exit code $code after SIGTERM"; }
phase "image exercised"

# --- a host folder as the root (docs/recipes.md: the Simulator's App Group folder on a Mac) ----
# Run as the invoking user (sudo's SUDO_UID, or 1000, a first login user, when run as root
# directly) so the files are theirs; bind_mount.py checks ownership, flock and atomic renames
# across the mount, and the preview from the host.
dev_uid=${SUDO_UID:-1000}; dev_gid=${SUDO_GID:-1000}
if [ "$dev_uid" = 0 ]; then dev_uid=1000; dev_gid=1000; fi
app_group=$work/AppGroup
mkdir -p "$app_group"
chown "$dev_uid:$dev_gid" "$app_group"
mount_port=$(free_port)
podman run -d --name "$name-mount" --user "$dev_uid:$dev_gid" -v "$app_group:/data" \
  -p "127.0.0.1:$mount_port:8080" --health-interval disable "$image" >/dev/null
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$mount_port/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
[ "$(podman exec "$name-mount" id -u)" = "$dev_uid" ] || fail "bind mount: the container does not run as $dev_uid"
/usr/bin/python3 Tests/ContainerTests/bind_mount.py "http://127.0.0.1:$mount_port" "$app_group" "$dev_uid" "$dev_gid" \
  || { podman logs "$name-mount" 2>&1 | tail -20; fail "the image on a bind-mounted folder"; }
podman stop -t 10 "$name-mount" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$name-mount")
[ "$code" = 0 ] || { podman logs "$name-mount" 2>&1 | tail -20; fail "bind mount: exit code $code after SIGTERM"; }
phase "bind mount"

# --- compose ---------------------------------------------------------------------------------
compose_port=$(free_port)
touch "$work/compose-started"
# Same Dockerfile, context and arguments as above, so compose's builds reuse every layer.
BUILDER_IMAGE=$builder_base RUNTIME_IMAGE=$runtime_base FEED_SERVER_HOST_PORT=$compose_port FEED_SERVER_TOKEN=compose-secret \
  podman-compose -p "$project" -f compose.yaml --podman-build-args "--network host -v $toolchain:$toolchain:ro" up -d \
  >"$work/compose.log" 2>&1 || { tail -40 "$work/compose.log"; fail "podman-compose up"; }
feed=""
for _ in $(seq 150); do
  feed=$(curl -fsS "http://127.0.0.1:$compose_port/feeds/demo" 2>/dev/null) && break
  sleep 0.2
done
case $feed in *'"text":"Festina lente"'*) ;; *) tail -40 "$work/compose.log"; podman logs "${project}_seed_1" 2>&1 | tail; fail "compose: the seeded feed is not served ($feed)" ;; esac
for _ in $(seq 50); do [ "$(podman inspect --format '{{.State.Status}}' "${project}_seed_1")" = exited ] && break; sleep 0.2; done
seed_code=$(podman inspect --format '{{.State.ExitCode}}' "${project}_seed_1")
[ "$seed_code" = 0 ] || fail "compose: the seeding publisher exited with $seed_code"
status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://127.0.0.1:$compose_port/feeds/demo" -H 'Content-Type: application/json' -d '[1]')
[ "$status" = 401 ] || fail "compose: a publish without the token answered $status"
podman healthcheck run "${project}_feed-server_1" >/dev/null || fail "compose: the server's health check fails"
podman-compose -p "$project" -f compose.yaml down -v >>"$work/compose.log" 2>&1
rm -f "$work/compose-started"
phase "compose"

total=$(( $(date +%s) - started ))
echo "container test passed in $total s (${timings[*]}); image adds $((added / 1000000)) MB to its base"
