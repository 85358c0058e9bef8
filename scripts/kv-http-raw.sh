#!/usr/bin/env bash
# kv-http-raw.sh: wirebench's /kv/ over HTTP with raw values (PUT/GET
# /kv/{key}, application/octet-stream) on both engines against
# redis-server over RESP, all at AOF everysec, one client for all
# (wirebench load, kv-set, then kv-get on every key written beforehand), in one run: servers
# pinned to CPU 1, the client to CPU 0, rounds alternating the order.
# Prints each run's rate and the server's CPU per request (from /proc),
# then the ratios to Redis of the same round. Run it under the load lock:
#   flock /tmp/wirebench-load.lock scripts/kv-http-raw.sh
# Env: N (requests per run, 200000), C (connections, 50), ROUNDS (2),
# ENGINES ("nethttp fasthttp"), TESTS ("set get"), WB (binary; built if
# missing), BASE (a second binary, e.g. main's, run beside WB as "base":
# before/after in one run), RB=1 (also redis-benchmark against the same
# Redis, as the RESP rows of docs/kv.md), PROF (directory: our servers
# write --cpuprofile files there), BARE=1 (also bench/kvbare on each
# engine, "bare/ENGINE": the engine's floor, no AOF; see its doc).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200000} C=${C:-50} ROUNDS=${ROUNDS:-2} ENGINES=${ENGINES:-"nethttp fasthttp"} TESTS=${TESTS:-"set get"}
BASE=${BASE:-} RB=${RB:-} PROF=${PROF:-} BARE=${BARE:-}
WB=${WB:-$(mktemp -d)/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
tmp=$(mktemp -d)
KVBARE=
if [ -n "$BARE" ]; then KVBARE=$tmp/kvbare; go build -o "$KVBARE" ./bench/kvbare; fi
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
hz=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
# run label pid url proto: kv-set then kv-get on the preloaded keys.
run() {
  for t in $TESTS; do
    local t0 t1 out rate extra=()
    if [ "$t" = get ]; then # write every key first (one request after the preload), not measured
      timeout 300 taskset -c 0 "$WB" load -q --scenario kv-get --protocol "$4" -c 1 -n 1 "$3" >/dev/null 2>&1 ||
        echo "$1 get: the preload's check failed"
      extra=(--no-preload)
    fi
    t0=$(ticks "$2")
    out=$(timeout 300 taskset -c 0 "$WB" load -q --scenario "kv-$t" --protocol "$4" -c "$C" -n "$N" "${extra[@]}" "$3" 2>&1) || true
    t1=$(ticks "$2")
    rate=$(awk '$1=="requests"{sub("/s","",$3); print $3}' <<<"$out")
    if ! grep -q 'failed 0 ' <<<"$out"; then # a wrong answer is no figure
      echo "$1 $t: FAILED: $(grep -m1 -E '^ +requests' <<<"$out") $(grep -A2 '^  failures' <<<"$out" | tail -n +2 | tr -s ' ' | head -2 | tr '\n' ';')"
      continue
    fi
    printf '%s %s: %s req/s; server CPU/req %s us\n' "$1" "$t" "$rate" \
      "$(awk -v d=$((t1 - t0)) -v n="$N" -v hz="$hz" 'BEGIN{printf "%.2f", d/hz*1e6/n}')"
  done
}
rbench() { # redis-benchmark, for reference beside our client
  for t in $TESTS; do
    local t0 t1 r
    t0=$(ticks "$2")
    r=$(timeout 300 taskset -c 0 redis-benchmark -p "$1" -c "$C" -d 128 -r 10000 -n "$N" -t "$t" -q 2>/dev/null |
      tr '\r' '\n' | grep -E '^(SET|GET): [0-9.]+ requests' | awk '{print $2}')
    t1=$(ticks "$2")
    printf 'redis-benchmark %s: %s req/s; server CPU/req %s us\n' "$t" "$r" \
      "$(awk -v d=$((t1 - t0)) -v n="$N" -v hz="$hz" 'BEGIN{printf "%.2f", d/hz*1e6/n}')"
  done
}
wait_http() { for _ in $(seq 100); do curl -sS -o /dev/null "http://127.0.0.1:$1/metrics" 2>/dev/null && return; sleep 0.1; done; echo "server on $1 did not start"; exit 1; }
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); -c $C -n $N, value 128 B, keys 10000, AOF everysec; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# ratios: after each round, every server's rate and CPU per request
# against Redis's in the same round (rate ratio: ours/redis; CPU ratio:
# redis/ours, so that both read "x Redis", higher is better).
ratios() {
  awk '$2 ~ /^(set|get):$/ && $1 != "redis-benchmark" { t=$2; sub(":","",t); rate[$1" "t]=$3; cpu[$1" "t]=$(NF-1); if (!($1 in seen)) { seen[$1]=1; order[n++]=$1 } }
    END { for (i=0;i<n;i++) { l=order[i]; if (l=="redis") continue
      split("set get", ts, " ")
      for (j=1;j<=2;j++) { k=l" "ts[j]; r="redis "ts[j]; if (!(k in rate) || !(r in rate)) continue
        printf "  %s %s: %.2fx Redis by rate, %.2fx by CPU\n", l, ts[j], rate[k]/rate[r], cpu[r]/cpu[k] } } }'
}
for round in $(seq "$ROUNDS"); do
  : >"$tmp/round"
  labels=() pids=() urls=() protos=()
  rp=$(port); mkdir -p "$tmp/r$round"
  taskset -c 1 redis-server --port "$rp" --bind 127.0.0.1 --save '' --dir "$tmp/r$round" --loglevel warning \
    --appendonly yes --appendfsync everysec >/dev/null 2>&1 &
  labels+=(redis) pids+=($!) urls+=("redis://127.0.0.1:$rp") protos+=(resp)
  for bin in "$WB" $BASE; do
    name=ours; [ "$bin" = "$WB" ] || name=base
    for e in $ENGINES; do
      p=$(port); d="$tmp/$name-$e-$round"; mkdir -p "$d"
      prof=(); [ -z "$PROF" ] || prof=(--cpuprofile "$PROF/$name-$e-$round.pprof")
      taskset -c 1 "$bin" serve --engine "$e" --http "127.0.0.1:$p" --no-grpc --seed-users 0 --seed-todos 0 \
        --data-dir "$d" --appendfsync everysec "${prof[@]}" >/dev/null 2>"$d.err" &
      labels+=("$name/$e") pids+=($!) urls+=("http://127.0.0.1:$p") protos+=(http-raw)
      wait_http "$p"
    done
  done
  if [ -n "$KVBARE" ]; then
    for e in $ENGINES; do
      p=$(port)
      taskset -c 1 "$KVBARE" -engine "$e" -addr "127.0.0.1:$p" >/dev/null 2>&1 &
      labels+=("bare/$e") pids+=($!) urls+=("http://127.0.0.1:$p") protos+=(http-raw)
      wait_http "$p"
    done
  fi
  for _ in $(seq 50); do redis-cli -p "$rp" ping >/dev/null 2>&1 && break; sleep 0.1; done
  order=$(seq 0 $((${#labels[@]} - 1)))
  [ $((round % 2)) = 1 ] || order=$(tac <<<"$order")
  for i in $order; do run "${labels[$i]}" "${pids[$i]}" "${urls[$i]}" "${protos[$i]}" | tee -a "$tmp/round"; done
  [ -z "$RB" ] || rbench "$rp" "${pids[0]}"
  for pid in "${pids[@]}"; do kill -INT "$pid"; done
  wait "${pids[@]}" 2>/dev/null || true
  echo "# round $round done $(date -u +%TZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  ratios <"$tmp/round"
done
