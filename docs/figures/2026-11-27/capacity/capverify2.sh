#!/bin/bash
# Why vegeta sees more latency than our client at the same rate: per run a
# fresh burn server; vegeta's own CPU (/usr/bin/time) and the server's CPU per
# request (/proc), then our open-loop client at the same rate on a fresh server.
set -u
BIN=/tmp/wb-cap
OUT=$1; shift
mkdir -p $OUT
URL=http://127.0.0.1:18083/users/1
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
fresh() { nice -n -15 taskset -c 1 $BIN serve --http 127.0.0.1:18083 --no-grpc --burn 200us > /dev/null 2>&1 & SRV=$!; sleep 1; }
for N in "$@"; do
  fresh; c0=$(cpu $SRV)
  echo "GET $URL" | /usr/bin/time -f "vegeta client CPU: %U user %S sys, %P of one CPU" -o $OUT/vtime-$N.txt timeout -s KILL 120 nice -n -15 taskset -c 0 /root/go/bin/vegeta attack -header 'Accept-Encoding: identity' -rate=$N/s -duration=10s -timeout=10s > $OUT/vegeta-$N.bin
  c1=$(cpu $SRV); kill $SRV; wait $SRV 2>/dev/null
  /root/go/bin/vegeta report < $OUT/vegeta-$N.bin | head -7 > $OUT/vegeta-$N.txt
  echo "server CPU ticks: $((c1-c0))" >> $OUT/vegeta-$N.txt
  cat $OUT/vtime-$N.txt >> $OUT/vegeta-$N.txt
  sleep 2
  fresh; c0=$(cpu $SRV)
  timeout -s KILL 120 nice -n -15 taskset -c 0 $BIN load -q -r $N -d 10s $URL > $OUT/ours-$N.txt 2>&1
  c1=$(cpu $SRV); kill $SRV; wait $SRV 2>/dev/null
  echo "server CPU ticks: $((c1-c0))" >> $OUT/ours-$N.txt
  sleep 2
done
date -u +%FT%TZ > $OUT/end
