# syntax=docker/dockerfile:1
# feed-server: multi-stage build. Build on the official Swift image for Debian bookworm with the
# -dev packages; run on debian:bookworm-slim with only the runtime libraries, as a non-root user.
# Both base images are build arguments (the container smoke test overrides them with local ones).
ARG BUILDER_IMAGE=swift:6.1-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS builder
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd-dev libvips-dev libssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product feed-server --static-swift-stdlib \
 && install -D .build/release/feed-server /out/feed-server

FROM ${RUNTIME_IMAGE} AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libvips42 libssl3 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin feed \
 && mkdir -p /data && chown feed:feed /data
COPY --from=builder /out/feed-server /usr/local/bin/feed-server
USER feed
VOLUME /data
EXPOSE 8080
ENV FEED_SERVER_HOST=0.0.0.0 FEED_SERVER_PORT=8080 FEED_SERVER_ROOT=/data
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/usr/local/bin/feed-server"]
