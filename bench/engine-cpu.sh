#!/usr/bin/env bash
# Server CPU per request for GET /users/1 in JSON (issue 17's yardstick):
# the in-repo bare net/http handler (bench/bare), `wirebench serve` on the
# net/http engine and on the fasthttp engine. Each server is pinned to one
# CPU, wrk to another (-t1 -c50, 1 s warm-up then the measured run); the
# server's CPU is utime+stime from /proc/PID/stat across the measured run,
# divided by wrk's request count. Rounds alternate the servers so
# background load hits all alike; the ratios are of the means.
#
# usage: bench/engine-cpu.sh [seconds=5] [rounds=2]
# needs: wrk, taskset; 2 CPUs or more. On a shared machine run it under
# the load lock: flock /tmp/wirebench-load.lock bench/engine-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} rounds=${2:-2}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
for tool in wrk taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk util-linux)" >&2; exit 1; }
done
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/bare" ./bench/bare
go build -o "$tmp/wirebench" ./cmd/wirebench
hz=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME CMD... : one measured run; appends "NAME us/req req/s" to $tmp/results.
run() {
  local name=$1; shift
  taskset -c "$server_cpu" "$@" > "$tmp/out" 2>"$tmp/err" &
  srv=$!
  local addr=
  for _ in $(seq 100); do
    addr=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$addr" ] && break
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "$name did not start: $(cat "$tmp/err")" >&2; exit 1; }
  local url="http://$addr/users/1"
  taskset -c "$client_cpu" wrk -t1 -c50 -d1s "$url" > /dev/null
  local t0 t1 out req rps
  t0=$(cpu_ticks "$srv")
  out=$(taskset -c "$client_cpu" wrk -t1 -c50 -d"${secs}s" "$url")
  t1=$(cpu_ticks "$srv")
  kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
  if grep -q Non-2xx <<<"$out"; then echo "$name: non-2xx replies:"$'\n'"$out" >&2; exit 1; fi
  req=$(awk '/requests in/{print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  awk -v n="$name" -v t=$((t1 - t0)) -v hz="$hz" -v r="$req" -v rps="$rps" \
    'BEGIN{printf "%-9s %7.2f us/req  %9.0f req/s\n", n, t/hz*1e6/r, rps}' | tee -a "$tmp/results"
}

for round in $(seq "$rounds"); do
  echo "round $round"
  run bare "$tmp/bare" -addr 127.0.0.1:0
  run nethttp "$tmp/wirebench" serve --no-grpc --http 127.0.0.1:0 --engine nethttp
  run fasthttp "$tmp/wirebench" serve --no-grpc --http 127.0.0.1:0 --engine fasthttp
done
awk '{s[$1] += $2; n[$1]++}
  END {
    for (k in s) m[k] = s[k] / n[k]
    printf "mean us/req: bare %.2f  nethttp %.2f  fasthttp %.2f\n", m["bare"], m["nethttp"], m["fasthttp"]
    printf "ratio to bare: nethttp %.2f  fasthttp %.2f\n", m["nethttp"] / m["bare"], m["fasthttp"] / m["bare"]
  }' "$tmp/results"
