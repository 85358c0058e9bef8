#!/usr/bin/env bash
# instr.sh MODE TEST C P N1 N2 [who]: user-space instructions per request under cachegrind,
# ours (wb-vg) and redis-server, difference of two runs (N2-N1).
set -eu
MODE=$1 T=$2 C=$3 P=$4 N1=$5 N2=$6 WHO=${7:-"redis ours"}
WB=${WB:-/tmp/kvp1/wb-vg}
OUT=${OUT:-/tmp/kvp1/cg}; mkdir -p $OUT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
run() { # who n
  local d; d=$(mktemp -d); mkdir -p $d/r $d/w
  local p; p=$(port)
  local cg=$OUT/$1-$MODE-$T-c$C-P$P.$2.cg
  if [ $1 = redis ]; then
    case $MODE in none) a=(--appendonly no);; *) a=(--appendonly yes --appendfsync $MODE);; esac
    taskset -c 1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$cg redis-server --port $p --bind 127.0.0.1 --save '' --dir $d/r --loglevel warning "${a[@]}" >/dev/null 2>$d/err &
  else
    case $MODE in none) a=();; *) a=(--data-dir $d/w --appendfsync $MODE);; esac
    GOMAXPROCS=2 taskset -c 1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$cg $WB serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp 127.0.0.1:$p "${a[@]}" >/dev/null 2>$d/err &
  fi
  local pid=$!
  for _ in $(seq 600); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.1; done
  taskset -c 0 redis-benchmark -p $p -c $C -d 128 -r 10000 -n $2 -P $P -t $T -q 2>/dev/null | tr '\r' '\n' | grep -E '^(SET|GET):' | tail -1 >&2
  kill -INT $pid; wait $pid 2>/dev/null || true
  rm -rf $d
  awk '/^summary:/{print $2}' $cg
}
for w in $WHO; do
  a=$(run $w $N1); b=$(run $w $N2)
  echo "$w $MODE $T -c $C -P $P: $(( (b - a) / (N2 - N1) )) instr/req ($a, $b)"
done
