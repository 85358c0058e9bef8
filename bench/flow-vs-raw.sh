#!/usr/bin/env bash
# Compares the client CPU per request of a flow step and the same request
# in raw mode, side by side in one run: the same GET of bench/target (the
# trivial server, pinned to one CPU), each client in turn pinned to
# another, equal VUs and durations. A one-step flow (GET /, its default
# 2xx check) against raw mode on its default wrk-style event loops
# (--engine loop) and on a goroutine per VU (--engine goroutine, the
# driver a flow runs on). CPU per request is the run's own (the summary's
# µs/request: the client's user+sys over the run, start-up excluded).
# Rounds alternate the clients so background load hits them alike.
#
# usage: bench/flow-vs-raw.sh [seconds=5] [vus=8] [rounds=5]
# needs: taskset; 2 CPUs or more.
#
# Measured on the shared 2-CPU VM while other work ran (µs of client CPU
# per request, mean of 5 interleaved rounds; single rounds vary ±20%):
#   bench/flow-vs-raw.sh 4 8 5: raw-loop 23.38  raw-goroutine 23.00
#     flow 22.74  ratio flow/raw-loop 0.97, flow/raw-goroutine 0.99
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} vus=${2:-8} rounds=${3:-5}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
tmp=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/target" ./bench/target
go build -o "$tmp/wirebench" ./cmd/wirebench
taskset -c "$server_cpu" "$tmp/target" > "$tmp/addr" &
srv=$!
for _ in $(seq 50); do grep -q listening "$tmp/addr" && break; sleep 0.1; done
base="http://$(awk '/listening/{print $2}' "$tmp/addr")"
printf 'flow:\n  - get:\n      url: /\n' > "$tmp/one.yaml"
echo "target $base/ on CPU $server_cpu; clients on CPU $client_cpu; ${secs}s, $vus VUs, $rounds rounds"

declare -A sum
clients=(raw-loop raw-goroutine flow)
printf '%-6s %-14s %12s %12s\n' round client requests cpu_us/req
for r in $(seq "$rounds"); do
  for c in "${clients[@]}"; do
    case $c in
      raw-loop) args=(--engine loop "$base/");;
      raw-goroutine) args=(--engine goroutine "$base/");;
      flow) args=(--flow "$tmp/one.yaml" "$base");;
    esac
    taskset -c "$client_cpu" "$tmp/wirebench" load -q -c "$vus" -d "${secs}s" "${args[@]}" > "$tmp/out"
    n=$(awk '$1=="requests"{print $2; exit}' "$tmp/out")
    us=$(awk '/client CPU/{for(i=1;i<=NF;i++) if($i=="µs/request") print $(i-1)}' "$tmp/out")
    sum[$c]=$(awk -v a="${sum[$c]:-0}" -v b="$us" 'BEGIN{print a+b}')
    printf '%-6s %-14s %12s %12s\n' "$r" "$c" "$n" "$us"
  done
done
echo
for c in "${clients[@]}"; do
  m=$(awk -v s="${sum[$c]}" -v n="$rounds" 'BEGIN{print s/n}')
  printf 'mean cpu_us/req %-14s %.2f\n' "$c" "$m"
done
f=$(awk -v s="${sum[flow]}" -v n="$rounds" 'BEGIN{print s/n}')
for c in raw-loop raw-goroutine; do
  m=$(awk -v s="${sum[$c]}" -v n="$rounds" 'BEGIN{print s/n}')
  printf 'ratio flow/%s %.2f\n' "$c" "$(awk -v a="$f" -v b="$m" 'BEGIN{print a/b}')"
done
