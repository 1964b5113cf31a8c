# Multi-stage build of the server. The runtime image holds only the stripped binary: the
# migrations (sqlx::migrate!), the tile and map data (include_str!) and the browser client under
# web/ (include_bytes!) are compiled into it, so the build stage must have every one of them
# (the tidy crate's `dockerfile_copies_what_the_crates_embed` test fails when one is missing).
#
#   docker build -t carcassonne-server .
#   docker run -p 8080:8080 -v carcassonne-data:/var/lib/carcassonne carcassonne-server
#
# Without DATABASE_URL the server keeps its SQLite file in /var/lib/carcassonne.

# The toolchain of the workspace's rust-version.
FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates crates
COPY migrations migrations
COPY web web
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p carcassonne-server \
    && cp target/release/carcassonne-server /usr/local/bin/carcassonne-server \
    && strip /usr/local/bin/carcassonne-server

FROM debian:bookworm-slim
# curl answers the health check; ca-certificates lets the server reach a Postgres over TLS.
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /var/lib/carcassonne carcassonne
COPY --from=build /usr/local/bin/carcassonne-server /usr/local/bin/carcassonne-server
USER carcassonne
WORKDIR /var/lib/carcassonne
ENV BIND=0.0.0.0:8080 \
    DATA_DIR=/var/lib/carcassonne \
    LOG_FORMAT=json
EXPOSE 8080
VOLUME ["/var/lib/carcassonne"]
# /healthz answers as soon as the store is open (unfinished matches load lazily after).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
# SIGTERM (docker stop) shuts down gracefully: in-flight commands finish, sockets close with 1001.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/carcassonne-server"]
