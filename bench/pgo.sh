#!/usr/bin/env bash
# pgo.sh — regenerate cmd/wirebench/default.pgo, the CPU profile that
# `go build ./cmd/wirebench` feeds to the compiler (profile-guided
# optimization: hot calls inlined, hot interface calls devirtualized, in
# our packages and in net/http alike).
#
# The profile is the reference server's hot paths under load, weighted as
# the studies use them: REST GET one user in JSON (the most measured
# request, issue 17's yardstick) on both engines, the list, creates and
# the other formats, and gRPC unary. A server built without PGO is
# profiled, so the profile does not describe a binary it optimized.
#
# usage: bench/pgo.sh [seconds per workload=6]
# needs: wrk, taskset, 2 CPUs. On a shared machine run it under the load
# lock: flock /tmp/wirebench-load.lock bench/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-6}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
for tool in wrk taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk util-linux)" >&2; exit 1; }
done
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/wirebench" ./cmd/wirebench
wb=$tmp/wirebench

# serve NAME ARGS...: start a profiled server; sets http, grpc.
serve() {
  local name=$1; shift
  taskset -c "$server_cpu" "$wb" serve --http 127.0.0.1:0 --cpuprofile "$tmp/$name.prof" "$@" >"$tmp/out" 2>"$tmp/err" &
  srv=$!
  for _ in $(seq 100); do
    grep -q '^listening' "$tmp/out" 2>/dev/null && break
    sleep 0.05
  done
  http=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
  grpc=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' "$tmp/out")
  [ -n "$http" ] || { echo "$name: server did not start: $(cat "$tmp/err")" >&2; exit 1; }
}
stop() { kill -INT "$srv"; wait "$srv" 2>/dev/null || true; srv=; }
client() { taskset -c "$client_cpu" "$@" >/dev/null; }

for engine in nethttp fasthttp; do
  serve "$engine" --engine "$engine" --no-grpc
  client wrk -t1 -c50 -d"${secs}s" "http://$http/users/1"
  client "$wb" load -q --scenario list -c8 -d"$((secs / 3 + 1))s" "http://$http"
  client "$wb" load -q --scenario crud -c8 -d"$((secs / 3 + 1))s" "http://$http"
  for f in toon protobuf msgpack; do
    client "$wb" load -q --scenario get --format "$f" -c8 -d"$((secs / 3 + 1))s" "http://$http"
  done
  stop
done
serve grpc --grpc 127.0.0.1:0
client "$wb" load -q --scenario get --transport grpc -c8 -d"${secs}s" "$grpc"
stop

go tool pprof -proto "$tmp"/*.prof >cmd/wirebench/default.pgo 2>/dev/null
echo "cmd/wirebench/default.pgo: $(stat -c %s cmd/wirebench/default.pgo) bytes from $(ls "$tmp"/*.prof | wc -l) profiles"
