#!/usr/bin/env bash
# clistrace.sh MODE TEST N P: the client's syscalls per request against each server
set -eu
MODE=$1 T=$2 N=${3:-100000} P=${4:-1}
WB=${WB:-/tmp/kvp1/wb} WHO=${WHO:-"redis ours"}
d=$(mktemp -d)
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
for w in $WHO; do
  p=$(port); mkdir -p $d/$w
  if [ $w = redis ]; then
    case $MODE in none) a=(--appendonly no);; *) a=(--appendonly yes --appendfsync $MODE);; esac
    taskset -c 1 redis-server --port $p --bind 127.0.0.1 --save '' --dir $d/$w --loglevel warning "${a[@]}" >/dev/null 2>&1 &
  else
    case $MODE in none) a=();; *) a=(--data-dir $d/$w --appendfsync $MODE);; esac
    taskset -c 1 env ${WBENV:-X=1} $WB serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp 127.0.0.1:$p "${a[@]}" >/dev/null 2>$d/err &
  fi
  pid=$!
  for _ in $(seq 100); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.1; done
  taskset -c 0 redis-benchmark -p $p -c 50 -d 128 -r 10000 -n 50000 -P $P -t $T -q >/dev/null 2>&1
  taskset -c 0 strace -c -f -o $d/st redis-benchmark -p $p -c 50 -d 128 -r 10000 -n $N -P $P -t $T -q 2>/dev/null | tr '\r' '\n' | grep -E '^(SET|GET):' | tail -1 > $d/rate
  kill $pid; wait $pid 2>/dev/null || true
  echo "== client against $w $MODE $T -P $P: $(cat $d/rate)"
  awk -v n=$N '$1 ~ /^[0-9.]+$/ && NF>=5 {printf "  %-14s %.4f/req\n", $NF, $4/n}' $d/st | head -8
done
rm -rf $d
