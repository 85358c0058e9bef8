#!/usr/bin/env bash
# kv-groupcommit.sh: appendfsync always with 1 writer (one fsync per write)
# against 50 writers (group commit), SET only, server on CPU 1, client on
# CPU 0: wirebench's RESP face, redis-server beside it (REDIS=0 to skip)
# and, with BASE=path, a second wirebench binary (before/after in one run).
# fsyncs are counted by the kernel (perf stat on the fsync and fdatasync
# syscalls of the server's process) when perf works, else by INFO
# aof_fsyncs (ours only). Also the server's CPU per request.
# Run under the load lock: flock /tmp/wirebench-load.lock scripts/kv-groupcommit.sh
# Env: WB, BASE, REDIS (1), ROUNDS (1), CS ("1 50").
set -euo pipefail
cd "$(dirname "$0")/.."
WB=${WB:-$(mktemp -d)/wirebench} BASE=${BASE:-} REDIS=${REDIS:-1} ROUNDS=${ROUNDS:-1} CS=${CS:-"1 50"}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$d"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
perfok=0
perf stat -e syscalls:sys_enter_fdatasync -- true >/dev/null 2>&1 && perfok=1
start() { # label binary -> sets pid, p
  p=$(port); mkdir -p "$d/$1"
  if [ "$1" = redis ]; then
    taskset -c 1 redis-server --port "$p" --bind 127.0.0.1 --save '' --dir "$d/$1" --loglevel warning \
      --appendonly yes --appendfsync always >/dev/null 2>&1 &
  else
    taskset -c 1 "$2" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp "127.0.0.1:$p" \
      --data-dir "$d/$1" --appendfsync always >/dev/null 2>&1 &
  fi
  pid=$!
  for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$p" ping >/dev/null
}
run() { # label port pid
  local c n t0 t1 r f
  for c in $CS; do
    n=$((c == 1 ? 5000 : 100000))
    t0=$(ticks "$3")
    if [ $perfok = 1 ]; then
      perf stat -x, -o "$d/perf" -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -p "$3" &
      local pp=$!
      sleep 0.2
    else
      f=$(redis-cli -p "$2" info | tr -d '\r' | awk -F: '$1=="aof_fsyncs"{print $2}')
    fi
    r=$(timeout 300 taskset -c 0 redis-benchmark -p "$2" -q -t set -d 128 -r 10000 -n $n -c $c 2>/dev/null |
      tr '\r' '\n' | grep -E '^SET: [0-9.]+ requests')
    t1=$(ticks "$3")
    if [ $perfok = 1 ]; then
      kill -INT $pp; wait $pp 2>/dev/null || true
      f=$(awk -F, '/sys_enter_f/{s+=$1} END{print s}' "$d/perf")
    else
      f=$(($(redis-cli -p "$2" info | tr -d '\r' | awk -F: '$1=="aof_fsyncs"{print $2}') - f))
    fi
    echo "$1 -c $c -n $n $r; $f fsyncs ($(awk -v a=$n -v b="$f" 'BEGIN{printf "%.1f", a/b}') writes per fsync);" \
      "server CPU $(awk -v d=$((t1 - t0)) -v n="$n" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", d/hz*1e6/n}') us/request"
  done
}
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; appendfsync always; redis-benchmark -t set -d 128 -r 10000; load average $(cut -d' ' -f1-3 /proc/loadavg)"
servers=(ours); [ -z "$BASE" ] || servers+=(base); [ "$REDIS" = 0 ] || servers+=(redis)
for round in $(seq "$ROUNDS"); do
  # Rotate who goes first: the shared machine drifts.
  k=$(((round - 1) % ${#servers[@]}))
  for s in "${servers[@]:k}" "${servers[@]:0:k}"; do
    case $s in ours) bin=$WB ;; base) bin=$BASE ;; *) bin= ;; esac
    start "$s" "$bin"
    run "$s" "$p" "$pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rm -rf "${d:?}/$s"
  done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
