#!/usr/bin/env bash
# strace.sh MODE TEST N P: syscalls per request, ours and redis
set -eu
MODE=$1 T=$2 N=${3:-100000} P=${4:-1}
WB=${WB:-/tmp/kvp1/wb}
d=$(mktemp -d)
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
rp=$(port); wp=$(port)
case $MODE in
  none) rargs=(--appendonly no); wargs=() ;;
  *) rargs=(--appendonly yes --appendfsync "$MODE"); wargs=(--data-dir "$d/w" --appendfsync "$MODE") ;;
esac
mkdir -p $d/r $d/w
taskset -c 1 redis-server --port "$rp" --bind 127.0.0.1 --save '' --dir "$d/r" --loglevel warning "${rargs[@]}" >/dev/null 2>&1 &
rpid=$!
taskset -c 1 "$WB" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp "127.0.0.1:$wp" "${wargs[@]}" >/dev/null 2>$d/wb.err &
wpid=$!
for p in $rp $wp; do for _ in $(seq 50); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.1; done; done
for x in "redis $rp $rpid" "ours $wp $wpid"; do
  set -- $x
  # warm: fill keys
  taskset -c 0 redis-benchmark -p $2 -c 50 -d 128 -r 10000 -n 50000 -P $P -t $T -q >/dev/null 2>&1
  strace -c -f -p $3 -o $d/st.$1 & sp=$!
  sleep 0.5
  r=$(taskset -c 0 redis-benchmark -p $2 -c 50 -d 128 -r 10000 -n $N -P $P -t $T -q 2>/dev/null | tr '\r' '\n' | grep -E '^(SET|GET):' | tail -1)
  kill -INT $sp; wait $sp 2>/dev/null || true
  echo "== $1 $MODE $T -P $P N=$N: $r"
  awk -v n=$N 'NR>2 && $0 !~ /^-/ && NF>=4 { calls=$4; name=$NF; if ($0 ~ /total/) {name="total"; calls=$3}; printf "  %-16s %9d  %.3f/req\n", name, calls, calls/n }' $d/st.$1 | head -20
done
kill $rpid $wpid; wait 2>/dev/null || true
rm -rf $d
