#!/bin/bash
# Verify found rates with vegeta (open loop) against a fresh burn server per
# run: vegeta sends Accept-Encoding: identity, as our client does (Go's
# transport would otherwise ask for gzip, which the server honours at a
# higher CPU cost per request: a different workload).
set -u
BIN=/tmp/wb-cap
OUT=$1; shift
mkdir -p $OUT
URL=http://127.0.0.1:18082/users/1
for N in "$@"; do
  nice -n -15 taskset -c 1 $BIN serve --http 127.0.0.1:18082 --no-grpc --burn 200us > $OUT/serve-$N.log 2>&1 &
  SRV=$!
  sleep 1
  echo "GET $URL" | timeout -s KILL 120 nice -n -15 taskset -c 0 /root/go/bin/vegeta attack -header 'Accept-Encoding: identity' -rate=$N/s -duration=10s -timeout=10s > $OUT/vegeta-$N.bin
  /root/go/bin/vegeta report < $OUT/vegeta-$N.bin > $OUT/vegeta-$N.txt
  kill $SRV; wait $SRV 2>/dev/null; sleep 2
done
date -u +%FT%TZ > $OUT/end
