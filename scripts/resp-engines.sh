#!/usr/bin/env bash
# resp-engines.sh: our RESP engines (loop, own) against tidwall/redcon, same commands,
# memory-only store, server on CPU 1 and redis-benchmark on CPU 0:
# redis-benchmark -q -t set,get -n 100000 -c 50 at -P 1 and -P 16.
# Run under the load lock: flock /tmp/wirebench-load.lock scripts/resp-engines.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2} # ENGINES ("loop own redcon")
WB=${WB:-$(mktemp -d)/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; redis-benchmark -q -t set,get -n 100000 -c 50"
for round in $(seq "$ROUNDS"); do
  for engine in ${ENGINES:-loop own redcon}; do
    p=$(port)
    taskset -c 1 "$WB" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp "127.0.0.1:$p" --resp-engine "$engine" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    for P in 1 16; do
      for t in set get; do
        t0=$(ticks $pid)
        r=$(timeout 300 taskset -c 0 redis-benchmark -p "$p" -q -t $t -n 100000 -c 50 -P "$P" 2>/dev/null |
          tr '\r' '\n' | grep -E '^(SET|GET): [0-9.]+ requests')
        t1=$(ticks $pid)
        echo "$engine -P $P $r; server CPU $(awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", d/hz*1e6/100000}') us/request"
      done
    done
    kill $pid; wait $pid 2>/dev/null || true
  done
done
