#!/usr/bin/env bash
# gi KIND N: instructions of a server run through N unary Get calls (ghz -c 50)
set -euo pipefail
cd /work/main
kind=$1 n=$2 out=/tmp/gi/$kind.$n.cg
: > /tmp/gi/out
if [ $kind = bare ]; then
  GOMAXPROCS=2 taskset -c 1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$out /tmp/gi/grpcgobare -seed-users 1000 > /tmp/gi/out 2>/tmp/gi/err &
else
  GOMAXPROCS=2 taskset -c 1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$out /tmp/gi/wirebench serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --grpc-transport grpc-go --seed-users 1000 --seed-todos 10 > /tmp/gi/out 2>/tmp/gi/err &
fi
srv=$!
grpc=
for _ in $(seq 600); do grpc=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' /tmp/gi/out); [ -n "$grpc" ] && break; sleep 0.1; done
[ -n "$grpc" ] || { echo "no start"; cat /tmp/gi/err; exit 1; }
taskset -c 0 ghz --insecure --proto pb/wirebench.proto --import-paths pb --call wirebench.v1.UserService/Get -d '{"id":1}' -c 50 -n $n "$grpc" | grep -E "Count:|\[OK\]" | tr '\n' ' '
kill -TERM $srv; wait $srv 2>/dev/null || true
echo " $kind $n Ir=$(sed -n 's/^summary: //p' $out)"
