#!/usr/bin/env bash
# Compares two server builds side by side: both run at once (each on a fresh SQLite directory),
# each driven by its own loadgen at M matches for 10 s in the same window, so that both meet the
# same machine. On a machine whose speed drifts (this one's ranges 2x within an hour), runs taken
# one after the other (bench.sh) differ by more than most changes do; a pair shares the drift,
# and the server CPU per move of its two lines compares the builds (the moves/s of each is about
# half of what it makes alone). The loadgens start in turn, A first in odd rounds.
#   crates/carcassonne-loadgen/pair.sh /tmp/server-before /tmp/server-after target/release/carcassonne-loadgen 50 3
# usage: pair.sh <server-a> <server-b> <loadgen-bin> [M] [rounds]
set -u
A=$1; B=$2; LOADGEN=$3; M=${4:-50}; ROUNDS=${5:-3}
PORT=18600
for r in $(seq 1 "$ROUNDS"); do
  declare -A PID DIR URL
  for x in A B; do
    bin=${!x}; DIR[$x]=$(mktemp -d /tmp/pair-XXXX); URL[$x]=http://127.0.0.1:$PORT
    RUST_LOG=warn $bin --bind 127.0.0.1:$PORT --data-dir "${DIR[$x]}" \
      --command-rate-addr 1000000/1s --command-rate-conn 1000000/1s --match-rate-addr 1000000/1s > /tmp/pair-server-$x.log 2>&1 &
    PID[$x]=$!
    PORT=$((PORT+1))
  done
  for x in A B; do
    for i in $(seq 1 50); do curl -sf "${URL[$x]}/healthz" >/dev/null && break; sleep 0.2; done
  done
  ORDER="A B"; [ $((r % 2)) -eq 0 ] && ORDER="B A"
  LG=()
  for x in $ORDER; do
    $LOADGEN --url "${URL[$x]}" --matches "$M" --secs 10 --server-pid "${PID[$x]}" > /tmp/pair-$x.log 2>&1 &
    LG+=($!)
  done
  wait "${LG[@]}"
  for x in A B; do
    awk -v head="round=$r $x=$(basename "${!x}")" -v m="$M" -f "$(dirname "$0")/summary.awk" /tmp/pair-$x.log
  done
  kill "${PID[A]}" "${PID[B]}"; wait "${PID[A]}" "${PID[B]}" 2>/dev/null
  rm -rf "${DIR[A]}" "${DIR[B]}"
  unset PID DIR URL
done
