#!/usr/bin/env bash
# kv-http-instr.sh: user-space instructions per raw /kv/ PUT and GET on
# both engines (the steady yardstick when CPU time swings with the shared
# machine's load; method of bench/engine-instr.sh): `wirebench serve` (AOF
# everysec) runs under valgrind's cachegrind while wirebench load sends N1
# and then, in a second run, N2 requests (kv-set; kv-get after the same
# preload in both runs); (total2 - total1) / (N2 - N1) is the instructions
# per request, start-up, preload and shutdown cancelled out. It counts the
# server's code and the runtime, not the kernel's work (the syscalls).
#   flock /tmp/wirebench-load.lock scripts/kv-http-instr.sh
# Env: N1 (2000), N2 (12000), C (connections, 50), ENGINES ("nethttp
# fasthttp"), TESTS ("set get"), WB (binary; built if missing), BASE (a
# second binary run the same way, as "base"), BARE=1 (bench/kvbare too,
# as "bare": the engine's floor).
set -euo pipefail
cd "$(dirname "$0")/.."
N1=${N1:-2000} N2=${N2:-12000} C=${C:-50} ENGINES=${ENGINES:-"nethttp fasthttp"} TESTS=${TESTS:-"set get"} BASE=${BASE:-} BARE=${BARE:-}
WB=${WB:-$(mktemp -d)/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
command -v valgrind >/dev/null || { echo "missing valgrind (apt-get install -y valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
KVBARE=
if [ -n "$BARE" ]; then KVBARE=$tmp/kvbare; go build -o "$KVBARE" ./bench/kvbare; fi
srv=
trap '[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
# instructions BIN ENGINE TEST N: the server's instruction total over N requests.
instructions() {
  local p d out
  p=$(port) d=$(mktemp -d -p "$tmp") out="$tmp/cg.$RANDOM"
  local args=(serve --engine "$2" --http "127.0.0.1:$p" --no-grpc --seed-users 0 --seed-todos 0 --data-dir "$d" --appendfsync everysec)
  [ "$1" != "$KVBARE" ] || args=(-engine "$2" -addr "127.0.0.1:$p")
  taskset -c 1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" "$1" "${args[@]}" >/dev/null 2>"$out.err" &
  srv=$!
  for _ in $(seq 600); do curl -sS -o /dev/null "http://127.0.0.1:$p/metrics" 2>/dev/null && break; sleep 0.1; done
  local extra=()
  if [ "$3" = get ]; then
    taskset -c 0 "$WB" load -q --scenario kv-get --protocol http-raw -c 1 -n 1 "http://127.0.0.1:$p" >/dev/null
    extra=(--no-preload)
  fi
  taskset -c 0 "$WB" load -q --scenario "kv-$3" --protocol http-raw -c "$C" -n "$4" "${extra[@]}" "http://127.0.0.1:$p" >"$out.load" 2>&1 || true
  grep -q "failed 0 " "$out.load" || { echo "$1 $2 $3: failed requests:" >&2; cat "$out.load" >&2; kill -9 "$srv"; exit 1; }
  kill -INT "$srv"
  wait "$srv" || true
  srv=
  sed -n 's/^summary: //p' "$out"
}
echo "# $(date -u +%FT%TZ) $(nproc) CPUs; user-space instructions per request (cachegrind), N2-N1 = $((N2 - N1)), -c $C, AOF everysec"
for bin in "$WB" $BASE $KVBARE; do
  name=ours; [ "$bin" = "$WB" ] || name=base; [ "$bin" != "$KVBARE" ] || name=bare
  for e in $ENGINES; do
    for t in $TESTS; do
      a=$(instructions "$bin" "$e" "$t" "$N1")
      b=$(instructions "$bin" "$e" "$t" "$N2")
      awk -v a="$a" -v b="$b" -v k=$((N2 - N1)) -v l="$name/$e $t" 'BEGIN{printf "%s: %d instructions per request\n", l, (b - a) / k}'
    done
  done
done
