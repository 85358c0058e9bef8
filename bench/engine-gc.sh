#!/usr/bin/env bash
# engine-gc.sh — the garbage collector's share of the server CPU per
# GET /users/1 in JSON, for the bare handler (bench/bare) and both engines
# of `wirebench serve` (issue 17): GC cycles per million requests and the
# GC's CPU per request, summed from the runtime's own GODEBUG=gctrace=1
# lines (mark assist, background and idle workers, the two pauses) over a
# wrk run. Far steadier than total CPU time on a noisy host, it shows what
# the server's live heap and globals cost: each cycle marks them again,
# and a larger live heap leaves less room under the 4 MB minimum heap goal,
# so cycles come more often.
#
# usage: bench/engine-gc.sh [seconds=5] [rounds=2]
# needs: wrk, taskset; 2 CPUs. Under the load lock on a shared machine:
# flock /tmp/wirebench-load.lock bench/engine-gc.sh
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

# run NAME CMD... : one measured run, one line of results.
run() {
  local name=$1; shift
  GODEBUG=gctrace=1 taskset -c "$server_cpu" "$@" >"$tmp/out" 2>"$tmp/err" &
  srv=$!
  local addr=
  for _ in $(seq 100); do
    addr=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$addr" ] && break
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "$name did not start: $(cat "$tmp/err")" >&2; exit 1; }
  taskset -c "$client_cpu" wrk -t1 -c50 -d1s "http://$addr/users/1" >/dev/null
  local before out req
  before=$(grep -c '^gc ' "$tmp/err" || true)
  out=$(taskset -c "$client_cpu" wrk -t1 -c50 -d"${secs}s" "http://$addr/users/1")
  kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
  if grep -q Non-2xx <<<"$out"; then echo "$name: non-2xx replies:"$'\n'"$out" >&2; exit 1; fi
  req=$(awk '/requests in/{print $1}' <<<"$out")
  # A gctrace line: "gc N @T s P%: a+b+c ms clock, A+B/C/D+E ms cpu, ..."
  tail -n +"$((before + 1))" "$tmp/err" | grep '^gc ' | awk -v n="$name" -v k="$req" '
    { for (i = 1; i <= NF; i++) if ($i == "cpu,") { split($(i - 2), a, "[+/]"); ms += a[1] + a[2] + a[3] + a[4] + a[5] }; c++ }
    END { printf "%-9s %6.0f cycles per 1M requests   GC CPU %.3f us/req   %.3f ms per cycle\n", n, c / k * 1e6, ms * 1000 / k, c ? ms / c : 0 }'
}

for round in $(seq "$rounds"); do
  echo "round $round"
  run bare "$tmp/bare" -addr 127.0.0.1:0
  run nethttp "$tmp/wirebench" serve --no-grpc --http 127.0.0.1:0 --engine nethttp
  run fasthttp "$tmp/wirebench" serve --no-grpc --http 127.0.0.1:0 --engine fasthttp
done
