#!/usr/bin/env bash
# kv-groupcommit.sh: appendfsync always with 1 writer (one fsync per write)
# against 50 writers (group commit), SET only, server on CPU 1, client on
# CPU 0, with the fsyncs counted by the server (INFO aof_fsyncs).
# Run under the load lock: flock /tmp/wirebench-load.lock scripts/kv-groupcommit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WB=${WB:-$(mktemp -d)/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$d"' EXIT
p=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
taskset -c 1 "$WB" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp "127.0.0.1:$p" --data-dir "$d" --appendfsync always >/dev/null 2>&1 &
for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
fsyncs() { redis-cli -p "$p" info | tr -d '\r' | awk -F: '$1=="aof_fsyncs"{print $2}'; }
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; appendfsync always; redis-benchmark -t set -d 128 -r 10000"
for c in 1 50; do
  n=$((c == 1 ? 5000 : 100000))
  f0=$(fsyncs)
  r=$(timeout 300 taskset -c 0 redis-benchmark -p "$p" -q -t set -d 128 -r 10000 -n $n -c $c 2>/dev/null |
    tr '\r' '\n' | grep -E '^SET: [0-9.]+ requests')
  f1=$(fsyncs)
  echo "-c $c -n $n $r; $((f1 - f0)) fsyncs ($(awk -v a=$n -v b=$((f1 - f0)) 'BEGIN{printf "%.1f", a/b}') writes per fsync)"
done
