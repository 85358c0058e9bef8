#!/bin/bash
# Capacity goals against a server of known cost: wirebench serve --burn 200us
# pinned to CPU 1, every client pinned to CPU 0, both at nice -15 against the
# other tenants' builds. Run under flock /tmp/wirebench-load.lock.
set -u
BIN=/tmp/wb-cap
URL=http://127.0.0.1:18081/users/1
OUT=${1:-/tmp/m}
mkdir -p $OUT
nice -n -15 taskset -c 1 $BIN serve --http 127.0.0.1:18081 --no-grpc --burn 200us > $OUT/serve.log 2>&1 &
SRV=$!
trap "kill $SRV" EXIT
sleep 1
C="timeout -s KILL 600 prlimit --as=4000000000 nice -n -15 taskset -c 0"
date -u +%FT%TZ > $OUT/start
$C $BIN load -q -c 32 -d 10s --cpu 0 --out $OUT/closed1.json --force $URL > $OUT/closed1.txt 2>&1
$C $BIN capacity -q --slo 'p99<100ms' --server-pid $SRV --out $OUT/loose1.json --force $URL > $OUT/loose1.txt 2>&1
$C $BIN capacity -q --slo 'p99<100ms' --server-pid $SRV --out $OUT/loose2.json --force $URL > $OUT/loose2.txt 2>&1
$C $BIN capacity -q --slo 'p99<3ms' --server-pid $SRV --out $OUT/tight1.json --force $URL > $OUT/tight1.txt 2>&1
$C $BIN load -q -c 32 -d 10s --cpu 0 --out $OUT/closed2.json --force $URL > $OUT/closed2.txt 2>&1
for f in loose1 tight1; do
  R=$(python3 -c "import json;print(round(json.load(open('$OUT/$f.json'))['rate']))")
  for k in 1 1.25; do
    N=$(python3 -c "print(round($R*$k))")
    echo "GET $URL" | $C /root/go/bin/vegeta attack -rate=$N/s -duration=10s | /root/go/bin/vegeta report > $OUT/vegeta-$f-$k.txt 2>&1
    echo "rate $N/s" >> $OUT/vegeta-$f-$k.txt
  done
done
date -u +%FT%TZ > $OUT/end
