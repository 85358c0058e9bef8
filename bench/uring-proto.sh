#!/usr/bin/env bash
# Measures the io_uring prototype (bench/uringka) beside wrk and
# `wirebench load` (its epoll event loop) on the same trivial server
# (bench/target): CPU per request from /usr/bin/time (user+sys of the
# client process, all its threads), context switches per request, rounds
# alternating, server pinned to CPU 1 and every client to CPU 0, 50
# keep-alive connections each (issue 41; docs/load.md has the figures).
#
# usage: bench/uring-proto.sh [seconds=5] [connections=50] [rounds=4] [waits="1 4 8"]
#   waits: the prototype's -wait values (completions one io_uring_enter
#   waits for; 1 behaves as wrk and the epoll loop: it wakes on the first);
#   a trailing f (e.g. 1f) adds -fixed (registered ring and socket fds),
#   a trailing s (1s) -sqpoll on the client's CPU (the kernel thread is the
#   process's: /usr/bin/time counts it), N/M (50/20) -wait N -minwait M: wait
#   for N completions, or for M µs then for any one (a bounded hold)
# needs: wrk, taskset, /usr/bin/time; io_uring enabled; 2 CPUs or more.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} conns=${2:-50} rounds=${3:-4} waits=(${4:-1 4 8})
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
for tool in wrk taskset /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/target" ./bench/target
go build -o "$tmp/wirebench" ./cmd/wirebench
go build -o "$tmp/uringka" ./bench/uringka
taskset -c "$server_cpu" "$tmp/target" > "$tmp/addr" &
srv=$!
for _ in $(seq 50); do grep -q listening "$tmp/addr" && break; sleep 0.1; done
url="http://$(awk '/listening/{print $2}' "$tmp/addr")/"
echo "$(date -u '+%F %H:%M UTC'), $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "target $url on CPU $server_cpu; clients on CPU $client_cpu; ${secs}s, $conns connections, $rounds rounds"
printf '%-6s %-12s %10s %10s %11s %12s\n' round client requests req/s cpu_us/req switch/req
declare -A sum
# measure NAME REQUESTS: reads $tmp/t (user sys voluntary involuntary)
measure() {
  local us cs
  us=$(awk -v n="$2" '{printf "%.2f", ($1+$2)*1e6/n}' "$tmp/t")
  cs=$(awk -v n="$2" '{printf "%.3f", ($3+$4)/n}' "$tmp/t")
  sum[$1]=$(awk -v a="${sum[$1]:-0}" -v b="$us" 'BEGIN{print a+b}')
  sum[$1/r$r]=$us
  printf '%-6s %-12s %10s %10.0f %11s %12s\n' "$r" "$1" "$2" "$(awk -v n="$2" -v s="$secs" 'BEGIN{print n/s}')" "$us" "$cs"
}
for r in $(seq "$rounds"); do
  /usr/bin/time -f '%U %S %w %c' -o "$tmp/t" taskset -c "$client_cpu" wrk -t1 -c"$conns" -d"${secs}s" "$url" > "$tmp/out"
  measure wrk "$(awk '/requests in/{print $1}' "$tmp/out")"
  /usr/bin/time -f '%U %S %w %c' -o "$tmp/t" taskset -c "$client_cpu" \
    "$tmp/wirebench" load -q -c "$conns" -d "${secs}s" --out "$tmp/res.json" --force "$url" > "$tmp/out"
  measure epoll-loop "$(awk '$1=="requests"{print $2; exit}' "$tmp/out")"
  for w in "${waits[@]}"; do
    fx=(); [ "${w%f}" != "$w" ] && fx=(-fixed); [ "${w%s}" != "$w" ] && fx=(-sqpoll "$client_cpu")
    [ "${w#*/}" != "$w" ] && fx=(-minwait "${w#*/}")
    /usr/bin/time -f '%U %S %w %c' -o "$tmp/t" taskset -c "$client_cpu" "$tmp/uringka" -c "$conns" -d "${secs}s" -wait "$(w=${w%%/*}; echo "${w%[fs]}")" "${fx[@]}" "$url" > "$tmp/out" 2>/dev/null
    grep -q 'fails 0 ' "$tmp/out" || { cat "$tmp/out"; echo "uringka: failed responses" >&2; exit 1; }
    measure "uring-w$w" "$(awk '{print $2}' "$tmp/out")"
  done
done
echo
w=$(awk -v s="${sum[wrk]}" -v n="$rounds" 'BEGIN{print s/n}')
printf 'mean cpu_us/req: wrk %.2f\n' "$w"
for c in epoll-loop "${waits[@]/#/uring-w}"; do
  per=""
  for r in $(seq "$rounds"); do per+=$(awk -v a="${sum[$c/r$r]}" -v b="${sum[wrk/r$r]}" 'BEGIN{printf "%.2f ", a/b}'); done
  printf '%-12s %.2f   ratio of means %.2f   per-round ratios %s\n' "$c" "$(awk -v s="${sum[$c]}" -v n="$rounds" 'BEGIN{print s/n}')" \
    "$(awk -v s="${sum[$c]}" -v w="${sum[wrk]}" 'BEGIN{print s/w}')" "$per"
done
