#!/usr/bin/env bash
# Runs the loadgen for 10 s at each M against a fresh server (a fresh SQLite directory, or a fresh
# Postgres database on 127.0.0.1:5432) and prints one line per run. Alternate two builds to
# compare them on a noisy machine. On Postgres it also prints the CPU of the `postgres` processes
# per move (pg_us); cs is the server's context switches per move:
#   crates/carcassonne-loadgen/bench.sh target/release/carcassonne-server target/release/carcassonne-loadgen sqlite after 2 20 100 1000
# usage: bench.sh <server-bin> <loadgen-bin> <sqlite|postgres> <label> [M...]
set -u
SERVER=$1; LOADGEN=$2; STORE=$3; LABEL=$4; shift 4
MS=${*:-2 20 100 1000}
PORT=18400
# CPU ticks (user + system) of every `postgres` process now: the store's own CPU per move on
# Postgres (`pg_us`), which the server's figure leaves out. Counts the whole cluster: keep other
# Postgres work off the machine while measuring.
pg_ticks() {
  local t=0 pid f
  for pid in $(pgrep -x postgres); do
    f=$(cut -d' ' -f14,15 /proc/$pid/stat 2>/dev/null) || continue
    t=$((t + ${f% *} + ${f#* }))
  done
  echo $t
}
for M in $MS; do
  if [ "$STORE" = sqlite ]; then
    D=$(mktemp -d /tmp/bench-XXXX); ARGS="--data-dir $D"
  else
    DB=bench_$(date +%s%N | tail -c 8); psql -h 127.0.0.1 -U postgres -d test -qc "create database $DB" >/dev/null
    ARGS="--database-url postgres://postgres@127.0.0.1:5432/$DB"
  fi
  RUST_LOG=warn $SERVER --bind 127.0.0.1:$PORT $ARGS --command-rate-addr 1000000/1s --command-rate-conn 1000000/1s --match-rate-addr 1000000/1s > /tmp/bench-server.log 2>&1 &
  SP=$!
  for i in $(seq 1 50); do curl -sf http://127.0.0.1:$PORT/healthz >/dev/null && break; sleep 0.2; done
  PG0=$(pg_ticks)
  OUT=$($LOADGEN --url http://127.0.0.1:$PORT --matches $M --secs 10 --server-pid $SP 2>&1)
  PG1=$(pg_ticks)
  PG=""; [ "$STORE" = postgres ] && PG=$((PG1 - PG0))
  echo "$OUT" | awk -v head="$LABEL $STORE" -v m="$M" -v pg="$PG" -v hz="$(getconf CLK_TCK)" \
    -f "$(dirname "$0")/summary.awk"
  kill $SP; wait $SP 2>/dev/null
  [ "$STORE" = postgres ] && psql -h 127.0.0.1 -U postgres -d test -qc "drop database $DB" >/dev/null
  [ "$STORE" = sqlite ] && rm -rf $D
  PORT=$((PORT+1))
done
