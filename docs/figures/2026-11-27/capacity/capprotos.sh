#!/bin/bash
# Smoke: wirebench capacity over every transport/protocol against wirebench serve.
set -u
BIN=/tmp/wb-cap
OUT=${1:-/tmp/mp}
mkdir -p $OUT
nice -n -15 taskset -c 1 $BIN serve --http 127.0.0.1:18091 --grpc 127.0.0.1:18092 --resp 127.0.0.1:18093 > $OUT/serve.log 2>&1 &
SRV=$!
trap "kill $SRV" EXIT
sleep 1.5
C="timeout -s KILL 300 prlimit --as=4000000000 nice -n -15 taskset -c 0 $BIN capacity -q --slo p99<20ms --start-rate 200 --max-rate 800 --step-duration 1s --warmup 300ms --confirm-duration 1s --server-pid $SRV"
run() { name=$1; shift; echo "== $name: $*" >> $OUT/all.txt; $C --out $OUT/$name.json --force "$@" >> $OUT/all.txt 2>&1; echo "exit $?" >> $OUT/all.txt; }
run http1-raw http://127.0.0.1:18091/users/1
run h2c-crud --scenario crud --transport h2c --format toon http://127.0.0.1:18091
run grpc-get --scenario get --transport grpc 127.0.0.1:18092
run resp-kvget --scenario kv-get redis://127.0.0.1:18093
run kvhttp --scenario kv-set http://127.0.0.1:18091
run stream-sse --stream sse http://127.0.0.1:18091
run stream-grpc-bidi --stream grpc-bidi --grpc 127.0.0.1:18092 http://127.0.0.1:18091
