#!/usr/bin/env bash
# kv-fsync-batches.sh: why appendfsync always's SET rate swings. For each
# server (redis-server, wirebench at WB, and BASE when set), in rotating
# order: appendfsync always on CPU 1, redis-benchmark -t set -c 50 -d 128
# on CPU 0, and perf records the server's AOF writes and fsync/fdatasync
# entries and exits. Prints the rate, the server's CPU per request and
# context switches per request, the distribution of writes per fsync
# (records = bytes written between two fsyncs / one record's bytes) and
# the fsync latency and the time between fsyncs.
# Run under the load lock: flock /tmp/wirebench-load.lock scripts/kv-fsync-batches.sh
# Env: WB, BASE, ROUNDS (2), N (100000). Needs perf (root or perf_event_paranoid <= 1).
set -euo pipefail
cd "$(dirname "$0")/.."
WB=${WB:-$(mktemp -d)/wirebench} BASE=${BASE:-} ROUNDS=${ROUNDS:-2} N=${N:-100000}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
d=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$d"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
one() { # label binary|redis
  local p pid aof pp ps r t0 t1 rec
  p=$(port); rm -rf "$d/data"; mkdir -p "$d/data"
  if [ "$2" = redis ]; then
    taskset -c 1 redis-server --port "$p" --bind 127.0.0.1 --save '' --dir "$d/data" --loglevel warning \
      --appendonly yes --appendfsync always >/dev/null 2>&1 &
    rec=172 # *3 $3 SET $16 key:... $128 value, in RESP
  else
    taskset -c 1 "$2" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp "127.0.0.1:$p" \
      --data-dir "$d/data" --appendfsync always >/dev/null 2>&1 &
    rec=161 # one SET frame (kv/aofformat.go)
  fi
  pid=$!
  for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
  aof=$(ls -l "/proc/$pid/fd" | awk '/appendonly/{print $(NF-2); exit}')
  perf record -q -o "$d/perf.data" -e syscalls:sys_enter_write --filter "fd == $aof" \
    -e syscalls:sys_enter_fsync,syscalls:sys_exit_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_exit_fdatasync -p "$pid" 2>/dev/null &
  pp=$!
  perf stat -x, -o "$d/stat" -e context-switches -p "$pid" 2>/dev/null &
  ps=$!
  sleep 0.3
  t0=$(ticks "$pid")
  r=$(timeout 300 taskset -c 0 redis-benchmark -p "$p" -q -t set -d 128 -r 10000 -n "$N" -c 50 2>/dev/null |
    tr '\r' '\n' | grep -E '^SET: [0-9.]+ requests')
  t1=$(ticks "$pid")
  kill -INT "$pp" "$ps"; wait "$pp" "$ps" 2>/dev/null || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  echo "$1 $r; server CPU $(awk -v d=$((t1 - t0)) -v n="$N" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.2f", d/hz*1e6/n}') us/request;" \
    "$(awk -F, -v n="$N" '/context-switches/{printf "%.3f", $1/n}' "$d/stat") context switches/request"
  perf script -i "$d/perf.data" -F time,event,trace 2>/dev/null | python3 -c '
import re, sys
rec, cur, start, last = int(sys.argv[1]), 0, None, None
per, lat, gap = [], [], []
for line in sys.stdin:
    m = re.search(r"(\d+\.\d+):\s+\S+:(sys_\w+):", line)
    if not m: continue
    t, ev = float(m.group(1)), m.group(2)
    if ev == "sys_enter_write":
        cur += int(re.search(r"count: (0x[0-9a-f]+|\d+)", line).group(1), 0)
    elif ev.startswith("sys_enter_f"):
        if cur: per.append(round(cur / rec))
        cur, start = 0, t
        if last is not None: gap.append(t - last)
    elif ev.startswith("sys_exit_f") and start is not None:
        lat.append(t - start); last = t
if not per: sys.exit("  no fsync seen")
q = lambda a, f: sorted(a)[min(len(a) - 1, int(f * len(a)))]
h = {}
for r in per: h[r // 5 * 5] = h.get(r // 5 * 5, 0) + 1
print(f"  {len(per)} fsyncs; writes per fsync mean {sum(per)/len(per):.1f} p10 {q(per,.1)} p50 {q(per,.5)} p90 {q(per,.9)}; under 20: {sum(1 for r in per if r < 20)*100/len(per):.0f}%")
print("  writes per fsync (5 wide):", " ".join(f"{k}:{v}" for k, v in sorted(h.items())))
us = lambda a, f: q(a, f) * 1e6
print(f"  fsync us p50 {us(lat,.5):.0f} p90 {us(lat,.9):.0f} p99 {us(lat,.99):.0f}; between fsyncs us p50 {us(gap,.5):.0f} p90 {us(gap,.9):.0f}")
' "$rec"
}
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; appendfsync always; redis-benchmark -t set -c 50 -d 128 -r 10000 -n $N; load average $(cut -d' ' -f1-3 /proc/loadavg)"
servers=(ours redis); [ -z "$BASE" ] || servers+=(base)
for round in $(seq "$ROUNDS"); do
  k=$(((round - 1) % ${#servers[@]}))
  for s in "${servers[@]:k}" "${servers[@]:0:k}"; do
    case $s in ours) one ours "$WB" ;; base) one base "$BASE" ;; *) one redis redis ;; esac
  done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
