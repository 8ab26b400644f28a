# syntax=docker/dockerfile:1
# feed-server in three stages (docs/containers.md):
#   vips     libvips 8.14 built from Debian's own source package with only what the server uses
#            (JPEG, PNG, WebP, HEIF, EXIF, lcms2, libimagequant, and orc as Debian's build has it),
#            instead of Debian's libvips42, which pulls in ~160 MB of loaders the server blocks
#            anyway; libheif 1.15 from Debian's source with its HEVC decoder (libde265) alone, for
#            HEIC photos (Debian's libheif1 brings the x265, AOM and dav1d codecs, ~20 MB); and
#            libarchive 3.6 from Debian's source with tar and zlib (gzip) only (Debian's libarchive13
#            needs libxml2 and with it ICU, ~37 MB, for formats the archive routes never read);
#   builder  the release binary, Swift runtime linked statically, against those two;
#   runtime  the binary, libvips, libarchive and the few Debian libraries they need; non-root; health check.
# Both base images are build arguments (scripts/container-test.sh overrides them with local ones).
ARG BUILDER_IMAGE=swift:6.1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${RUNTIME_IMAGE} AS vips
# `apt-get source` needs the deb-src entries images leave out: in the deb822 file of the
# official images, or in sources.list on a debootstrapped one. Each package's newest source is
# used (a security update's); when a registry lists it but cannot give its files, the release's
# own version is built instead, with a warning in the build log.
RUN set -eux; \
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then \
      sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources; fi; \
    if [ -f /etc/apt/sources.list ]; then \
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/deb-src.list; fi; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      dpkg-dev gcc g++ meson ninja-build pkgconf autoconf automake libtool \
      libglib2.0-dev libexpat1-dev libjpeg62-turbo-dev libpng-dev libexif-dev liblcms2-dev \
      libimagequant-dev liborc-0.4-dev zlib1g-dev libwebp-dev libde265-dev cmake; \
    mkdir /src; cd /src; . /etc/os-release; \
    for package in vips libarchive libheif; do \
      apt-get source --only-source "$package" || { \
        echo "WARNING: the newest source of $package cannot be fetched; building $VERSION_CODENAME's own"; \
        rm -rf "$package"[-_]*; apt-get source --only-source "$package/$VERSION_CODENAME"; }; \
    done; \
    rm -rf /var/lib/apt/lists/*
# libheif: decoding HEIC (HEVC through libde265) is all the server asks of it, so every encoder,
# every other decoder, plugin loading and the examples are off. Installed where libvips' build
# finds it and into /out for the builder stage.
RUN set -eux; cd /src/libheif-*/; \
    eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"; \
    cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_PREFIX=/usr/local -DCMAKE_INSTALL_LIBDIR=lib \
      -DWITH_LIBDE265=ON -DWITH_X265=OFF -DWITH_AOM_DECODER=OFF -DWITH_AOM_ENCODER=OFF -DWITH_DAV1D=OFF \
      -DWITH_RAV1E=OFF -DWITH_SvtEnc=OFF -DWITH_JPEG_DECODER=OFF -DWITH_JPEG_ENCODER=OFF \
      -DWITH_OpenJPEG_DECODER=OFF -DWITH_OpenJPEG_ENCODER=OFF -DENABLE_PLUGIN_LOADING=OFF \
      -DWITH_EXAMPLES=OFF -DWITH_GDK_PIXBUF=OFF -DWITH_FUZZERS=OFF -DBUILD_TESTING=OFF; \
    cmake --build build -j"$(nproc)"; \
    cmake --install build --strip; \
    DESTDIR=/out cmake --install build --strip; \
    mkdir -p /runtime/usr/local/lib; \
    cp -P /usr/local/lib/libheif.so.1* /runtime/usr/local/lib/
# Debian's compiler flags (hardening included) and meson defaults, every optional part off
# except the libraries above; the built-in GIF, PPM, Analyze and Radiance loaders off too.
# The server also blocks every loader but JPEG, PNG, WebP and HEIF at start-up
# (Sources/CVips/shim.c), so what it accepts is the same as with Debian's libvips.
RUN set -eux; cd /src/vips-*/; \
    eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"; \
    meson setup build --prefix=/usr/local --libdir=lib --buildtype=plain --wrap-mode=nodownload \
      --auto-features=disabled \
      -Djpeg=enabled -Dpng=enabled -Dwebp=enabled -Dheif=enabled -Dexif=enabled -Dlcms=enabled \
      -Dimagequant=enabled -Dorc=enabled \
      -Dnsgif=false -Dppm=false -Danalyze=false -Dradiance=false \
      -Dmodules=disabled -Dintrospection=false -Dcplusplus=false -Dexamples=false \
      -Ddoxygen=false -Dgtk_doc=false -Dvapi=false; \
    meson compile -C build; \
    meson install -C build --destdir /out --strip; \
    cp -P /out/usr/local/lib/libvips.so.42* /runtime/usr/local/lib/
# libarchive for GET/PUT /feeds/{group}/archive: tar, plain or gzip-compressed, is all they use,
# so zlib is on and every other compression, crypto, XML, ACL and xattr library off, and no
# command-line tools (zlib1g is part of every Debian image). Debian's
# patches leave configure older than its inputs, so the build scripts are regenerated first, as
# Debian's own build does (dh_autoreconf).
RUN set -eux; cd /src/libarchive-*/; \
    autoreconf -fi; \
    eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"; \
    ./configure --prefix=/usr/local --libdir=/usr/local/lib --disable-static \
      --disable-bsdtar --disable-bsdcat --disable-bsdcpio --disable-acl --disable-xattr \
      --with-zlib --without-bz2lib --without-libb2 --without-iconv --without-lz4 --without-zstd \
      --without-lzma --without-cng --without-mbedtls --without-nettle --without-openssl \
      --without-xml2 --without-expat; \
    make -j"$(nproc)"; \
    make install DESTDIR=/out; \
    strip --strip-unneeded /out/usr/local/lib/libarchive.so.13.*; \
    cp -P /out/usr/local/lib/libarchive.so.13* /runtime/usr/local/lib/

FROM ${BUILDER_IMAGE} AS builder
# vips.pc names the libraries above in Requires.private, which pkg-config reads for --cflags.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd-dev libssl-dev pkg-config binutils \
      libglib2.0-dev libexpat1-dev libjpeg62-turbo-dev libpng-dev libexif-dev liblcms2-dev \
      libimagequant-dev liborc-0.4-dev libwebp-dev libde265-dev \
 && rm -rf /var/lib/apt/lists/*
COPY --from=vips /out/usr/local/ /usr/local/
RUN ldconfig
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
COPY Fuzz/Sources ./Fuzz/Sources
RUN swift build -c release --product feed-server --static-swift-stdlib \
 && install -D .build/release/feed-server /out/feed-server \
 && strip /out/feed-server

FROM ${RUNTIME_IMAGE} AS runtime
COPY --from=vips /runtime/ /
# curl is for the health check (and compose's seeding publisher); nothing here speaks TLS. tzdata:
# the timeline reads IANA zones' rules from /usr/share/zoneinfo (TZif), without ICU.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libssl3 libglib2.0-0 libexpat1 libjpeg62-turbo libpng16-16 libexif12 \
      liblcms2-2 libimagequant0 liborc-0.4-0 libwebp7 libwebpmux3 libwebpdemux2 libde265-0 libstdc++6 curl \
      tzdata \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && ldconfig \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin feed \
 && mkdir -p /data && chown feed:feed /data
COPY --from=builder /out/feed-server /usr/local/bin/feed-server
USER feed
VOLUME /data
EXPOSE 8080
ENV FEED_SERVER_HOST=0.0.0.0 FEED_SERVER_PORT=8080 FEED_SERVER_ROOT=/data
# Shell form, so the check follows a FEED_SERVER_PORT given at `run` time.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD curl -fsS "http://127.0.0.1:${FEED_SERVER_PORT}/healthz" || exit 1
ENTRYPOINT ["/usr/local/bin/feed-server"]
