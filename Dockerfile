# Multi-stage build of the server. The runtime image holds only the binary: migrations are
# embedded in it (sqlx::migrate!), and so are the tile data files (include_str!).
#
#   docker build -t carcassonne-server .
#   docker run -p 8080:8080 -v carcassonne-data:/var/lib/carcassonne carcassonne-server
#
# Without DATABASE_URL the server keeps its SQLite file in /var/lib/carcassonne.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY crates crates
COPY migrations migrations
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p server \
    && cp target/release/server /usr/local/bin/server

FROM debian:bookworm-slim
RUN useradd --system --create-home --home-dir /var/lib/carcassonne carcassonne
COPY --from=build /usr/local/bin/server /usr/local/bin/server
USER carcassonne
WORKDIR /var/lib/carcassonne
ENV BIND=0.0.0.0:8080 \
    DATA_DIR=/var/lib/carcassonne \
    LOG_FORMAT=json
EXPOSE 8080
VOLUME ["/var/lib/carcassonne"]
# SIGTERM (docker stop) shuts down gracefully: in-flight commands finish, sockets close with 1001.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/server"]
