#!/usr/bin/env bash
# Compares the client CPU per request of wrk and `wirebench load` against
# the same trivial server (bench/target), in the same run: the server pinned
# to one CPU, each client in turn pinned to another, equal connection counts
# and durations, CPU taken by /usr/bin/time (user+sys of the client process).
# Rounds alternate the clients so background load hits both alike.
#
# usage: bench/wrk-vs-wirebench.sh [seconds=10] [connections=50] [rounds=3] [extra wirebench clients...]
#   e.g. bench/wrk-vs-wirebench.sh 10 50 3 std   also measures --client std (net/http)
# An extra client with a slash is another wirebench binary, run with its
# default client in the same rounds — an A/B of two builds:
#   go build -o /tmp/wb-main ./cmd/wirebench   (on main, then change the tree)
#   bench/wrk-vs-wirebench.sh 3 50 14 /tmp/wb-main
# MODES="keepalive close" (the default) measures keep-alive connections and
# connection-per-request runs (wrk -H 'Connection: close', wirebench
# --no-keepalive: both send that header, the server closes, the client
# reconnects for every request).
# needs: wrk (apt-get install -y wrk), taskset, /usr/bin/time; 2 CPUs or more.
#
# Measured on the 2-CPU development machine while other builds ran
# (µs of client CPU per request, mean of interleaved rounds; wirebench uses
# its default --engine loop):
#   5 s × 4 rounds,  50 conns: wrk 14.02  wirebench 13.21  ratio 0.94
#  10 s × 3 rounds,  50 conns: wrk 16.75  wirebench 16.57  ratio 0.99
#   5 s × 5 rounds,  50 conns: wrk 13.99  wirebench 14.30  ratio 1.02
#   4 s × 3 rounds,  10 conns: wrk 16.59  wirebench 16.21  ratio 0.98
#   4 s × 3 rounds, 200 conns: wrk 13.54  wirebench 12.62  ratio 0.93
#  --client std (net/http Transport, goroutine per VU): ratio 1.84-2.32.
# Keep-alive and connection-per-request (MODES default), after the
# close-handling fixes, load average ~7 from other work on the box:
#   bench/wrk-vs-wirebench.sh 5 50 4
#     keepalive: wrk 12.95  wirebench 11.90  ratio 0.92
#     close:     wrk 57.31  wirebench 52.19  ratio 0.91
#   bench/wrk-vs-wirebench.sh 3 50 3: keepalive 1.02, close 0.91
# After the clock-read and edge-triggered changes (2026-11-27 17:10 UTC,
# load average 3.0; docs/load.md has the profile):
#   bench/wrk-vs-wirebench.sh 5 50 4
#     keepalive: wrk 10.00  wirebench 9.18   ratio 0.92
#     close:     wrk 46.55  wirebench 43.28  ratio 0.93
# Single rounds vary ±20% with the machine's load, so read the ratio of
# means over several rounds, never one round.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10} conns=${2:-50} rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
clients=(lean "$@")
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}

for tool in wrk taskset /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk time util-linux)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/target" ./bench/target
go build -o "$tmp/wirebench" ./cmd/wirebench

taskset -c "$server_cpu" "$tmp/target" > "$tmp/addr" &
srv=$!
for _ in $(seq 50); do grep -q listening "$tmp/addr" && break; sleep 0.1; done
url="http://$(awk '/listening/{print $2}' "$tmp/addr")/"
modes=(${MODES:-keepalive close})
echo "target $url on CPU $server_cpu; clients on CPU $client_cpu; ${secs}s, $conns connections, $rounds rounds, modes: ${modes[*]}"

# cpu_us_per_req TIMEFILE REQUESTS
per_req() { awk -v n="$2" '{printf "%.2f", ($1+$2)*1e6/n}' "$1"; }

printf '%-10s %-6s %-14s %12s %10s %12s\n' mode round client requests req/s cpu_us/req
declare -A sum
for r in $(seq "$rounds"); do
  for mode in "${modes[@]}"; do
    wrkopt=() wbopt=()
    if [ "$mode" = close ]; then wrkopt=(-H "Connection: close"); wbopt=(--no-keepalive); fi
    /usr/bin/time -f '%U %S' -o "$tmp/t" taskset -c "$client_cpu" \
      wrk -t1 -c"$conns" -d"${secs}s" "${wrkopt[@]}" "$url" > "$tmp/out"
    n=$(awk '/requests in/{print $1}' "$tmp/out")
    us=$(per_req "$tmp/t" "$n")
    sum[$mode/wrk]=$(awk -v a="${sum[$mode/wrk]:-0}" -v b="$us" 'BEGIN{print a+b}')
    printf '%-10s %-6s %-14s %12s %10.0f %12s\n' "$mode" "$r" wrk "$n" "$(echo "$n $secs" | awk '{print $1/$2}')" "$us"
    for c in "${clients[@]}"; do
      bin=$tmp/wirebench copt=(--client "$c")
      if [[ $c == */* ]]; then bin=$c copt=(); fi
      /usr/bin/time -f '%U %S' -o "$tmp/t" taskset -c "$client_cpu" \
        "$bin" load -q "${copt[@]}" -c "$conns" -d "${secs}s" "${wbopt[@]}" --out "$tmp/res.json" --force "$url" > "$tmp/out"
      n=$(awk '$1=="requests"{print $2; exit}' "$tmp/out")
      us=$(per_req "$tmp/t" "$n")
      sum[$mode/$c]=$(awk -v a="${sum[$mode/$c]:-0}" -v b="$us" 'BEGIN{print a+b}')
      printf '%-10s %-6s %-14s %12s %10.0f %12s\n' "$mode" "$r" "wirebench-$c" "$n" "$(echo "$n $secs" | awk '{print $1/$2}')" "$us"
    done
  done
done
echo
for mode in "${modes[@]}"; do
  w=$(awk -v s="${sum[$mode/wrk]}" -v n="$rounds" 'BEGIN{print s/n}')
  printf '%-10s mean cpu_us/req: wrk %.2f\n' "$mode" "$w"
  for c in "${clients[@]}"; do
    m=$(awk -v s="${sum[$mode/$c]}" -v n="$rounds" 'BEGIN{print s/n}')
    printf '%-10s mean cpu_us/req: wirebench-%s %.2f   ratio wirebench/wrk %.2f\n' "$mode" "$c" "$m" "$(awk -v a="$m" -v b="$w" 'BEGIN{print a/b}')"
  done
done
