#!/usr/bin/env bash
# pgo.sh — regenerate cmd/wirebench/default.pgo, the CPU profile that
# `go build ./cmd/wirebench` feeds to the compiler (profile-guided
# optimization: hot calls inlined, hot interface calls devirtualized, in
# our packages and in net/http, quic-go, grpc-go alike).
#
# The profile covers every path we promise a ratio on, each process
# profiled on its own (--cpuprofile) and the profiles summed, so a path
# weighs the CPU seconds it ran:
#   rest    the reference server under wrk (GET one user in JSON, issue 17's
#           yardstick) and our scenarios (list, crud, other formats), on
#           both engines: about half the profile, as before;
#   client  `wirebench load` in raw mode, keep-alive, -c 50, against
#           bench/target: the client whose CPU per request is compared
#           with wrk's (bench/wrk-vs-wirebench.sh), and over h2c against
#           the reference server (the client held to h2load);
#   grpc    the server on grpc-go (serve's default) under our lean client's
#           unary Get and ghz's server stream of 1,000 users
#           (bench/grpc-cpu.sh's cases), and our clients (the get scenario,
#           and --grpc EchoService/Echo open loop as
#           bench/grpc-client-cpu.sh) profiled too;
#   h3      the server (--https --http3) and our h3 client (-k, -c 50 on 4
#           connections, bench/h3-cpu.sh's flags) against each other, both
#           profiled;
#   resp    the KV store's RESP face under redis-benchmark (SET and GET,
#           -c 50 -d 128 -r 10000, -P 1 and -P 16, as
#           scripts/kv-vs-redis.sh), memory only and with AOF everysec.
# A binary built without PGO is profiled, so the profile does not describe
# a binary it optimized. The profile names functions: a renamed function
# of ours loses its share until this is rerun (cmd/wirebench's
# TestPGOProfileFresh fails, naming it).
#
# usage: [PARTS="rest client grpc h3 resp"] bench/pgo.sh [seconds per workload=12]
# needs: wrk, ghz, redis-benchmark, redis-cli, taskset, 2 CPUs. On a
# shared machine run it under the load lock:
# flock /tmp/wirebench-load.lock bench/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-12}
short=$((secs / 3 + 1))
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
PARTS=${PARTS:-rest client grpc h3 resp}
PATH=$PATH:$(go env GOPATH)/bin
for tool in wrk ghz redis-benchmark redis-cli taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk redis-tools util-linux; go install github.com/bojand/ghz/cmd/ghz@v0.93.0)" >&2; exit 1; }
done
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/wirebench" ./cmd/wirebench
go build -o "$tmp/target" ./bench/target
wb=$tmp/wirebench
mkdir "$tmp/prof"

# serve NAME ARGS...: start a profiled server (GOMAXPROCS 2 on its CPU, as
# the bench scripts run it); sets http, grpc, h3, resp.
serve() {
  local name=$1; shift
  : > "$tmp/out"
  GOMAXPROCS=2 taskset -c "$server_cpu" "$wb" serve --http 127.0.0.1:0 --cpuprofile "$tmp/prof/$name.prof" "$@" >"$tmp/out" 2>"$tmp/err" &
  srv=$!
  for _ in $(seq 200); do
    grep -q '^listening' "$tmp/out" 2>/dev/null && break
    sleep 0.05
  done
  addr() { sed -n "s/^listening.* $1=\([^ ]*\).*/\1/p" "$tmp/out"; }
  http=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
  grpc=$(addr grpc) h3=$(addr h3) resp=$(addr resp)
  [ -n "$http" ] || { echo "$name: server did not start: $(cat "$tmp/err")" >&2; exit 1; }
}
stop() { kill -INT "$srv"; wait "$srv" 2>/dev/null || true; srv=; }
client() { taskset -c "$client_cpu" "$@" >/dev/null; }
# profiled NAME ARGS...: `wirebench load ARGS` on the client CPU, profiled.
profiled() { local name=$1; shift; client "$wb" load -q --cpuprofile "$tmp/prof/$name.prof" "$@"; }

for part in $PARTS; do
  case $part in
  rest)
    for engine in nethttp fasthttp; do
      serve "$engine" --engine "$engine" --no-grpc
      client wrk -t1 -c50 -d"${secs}s" "http://$http/users/1"
      client "$wb" load -q --scenario list -c8 -d"${short}s" "http://$http"
      client "$wb" load -q --scenario crud -c8 -d"${short}s" "http://$http"
      for f in toon protobuf msgpack; do
        client "$wb" load -q --scenario get --format "$f" -c8 -d"${short}s" "http://$http"
      done
      stop
    done ;;
  client)
    taskset -c "$server_cpu" "$tmp/target" >"$tmp/target.out" 2>&1 &
    srv=$!
    for _ in $(seq 100); do grep -q '^listening' "$tmp/target.out" && break; sleep 0.05; done
    profiled client-raw -c50 -d"${secs}s" "http://$(awk '/^listening/ {print $2}' "$tmp/target.out")/"
    kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
    # Our h2c client (x/net/http2), the one TestPeerH2BesideH2load holds
    # to h2load: left out, a profile of the rest cost it 15% of its rate.
    serve h2c --no-grpc
    profiled client-h2c --transport h2c -c10 -d"${secs}s" "http://$http/users/1"
    stop ;;
  grpc)
    serve grpc --grpc 127.0.0.1:0 --seed-users 1000 --seed-todos 10
    profiled grpc-client-get --scenario get --transport grpc -c8 -d"${secs}s" "$grpc"
    client ghz --insecure --proto pb/wirebench.proto --import-paths pb --call wirebench.v1.UserService/Stream -d '{}' -c 1 -z "${secs}s" "$grpc"
    profiled grpc-client-echo --grpc wirebench.v1.EchoService/Echo --data '{"first_message": "m{{.N}}", "second_message": "-x"}' \
      --expect 'message!=""' -c 50 -r 2000 --conns 1 -d"${secs}s" "$grpc"
    stop ;;
  h3)
    serve h3 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10
    profiled h3-client --transport h3 -k -c50 --conns 4 -d"${secs}s" "https://$h3/users/1"
    stop ;;
  resp)
    for mode in none everysec; do
      aof=()
      [ "$mode" = none ] || { mkdir -p "$tmp/aof"; aof=(--data-dir "$tmp/aof" --appendfsync "$mode"); }
      serve "resp-$mode" --no-grpc --seed-users 0 --seed-todos 0 --resp 127.0.0.1:0 "${aof[@]}"
      # -n by the pipeline: about secs/2 of each at the rates on the 2-CPU VM
      # (-P 1 ~50k/s, -P 16 ~400k/s); redis-benchmark counts, not times.
      for p in 1 16; do
        client redis-benchmark -p "${resp##*:}" -c 50 -d 128 -r 10000 -n $((secs * 8000 * p)) -P "$p" -t set,get -q
      done
      stop
      rm -rf "$tmp/aof"
    done ;;
  *) echo "unknown part $part (rest client grpc h3 resp)" >&2; exit 2 ;;
  esac
done

go tool pprof -proto "$tmp"/prof/*.prof >cmd/wirebench/default.pgo 2>/dev/null
echo "cmd/wirebench/default.pgo: $(stat -c %s cmd/wirebench/default.pgo) bytes from $(ls "$tmp"/prof/*.prof | wc -l) profiles"
for f in "$tmp"/prof/*.prof; do
  printf '  %-18s %s\n' "$(basename "$f" .prof)" "$(go tool pprof -top -nodecount=1 "$f" 2>/dev/null | sed -n 's/^Duration: .*Total samples = \([^ ]*\).*/\1 of CPU/p')"
done
