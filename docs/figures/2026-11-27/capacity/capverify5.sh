#!/bin/bash
# SCHED_FIFO (chrt -f 1) for server and clients, against the other tenants; otherwise as capverify3.sh.
# For each SLO: a capacity search on a fresh burn server, then on fresh
# servers: vegeta at the found rate and at 1.25x (Accept-Encoding: identity,
# as our client), and our own open-loop client at the found rate.
set -u
BIN=/tmp/wb-cap6
OUT=$1
mkdir -p $OUT
URL=http://127.0.0.1:18084/users/1
fresh() { chrt -f 1 taskset -c 1 $BIN serve --http 127.0.0.1:18084 --no-grpc --burn 200us > /dev/null 2>&1 & SRV=$!; sleep 1; }
stop() { kill $SRV; wait $SRV 2>/dev/null; sleep 2; }
C="timeout -s KILL 600 prlimit --as=4000000000 chrt -f 1 taskset -c 0"
date -u +%FT%TZ > $OUT/start
for S in tight:p99\<3ms loose:p99\<100ms; do
  name=${S%%:*}; slo=${S#*:}
  fresh
  $C $BIN capacity -q --slo "$slo" --server-pid $SRV --out $OUT/$name.json --force $URL > $OUT/$name.txt 2>&1
  stop
  R=$(python3 -c "import json;print(round(json.load(open('$OUT/$name.json'))['rate']))")
  for k in 1 1.25; do
    N=$(python3 -c "print(round($R*$k))")
    fresh
    echo "GET $URL" | /usr/bin/time -f "vegeta client CPU: %U user %S sys, %P of one CPU" -o $OUT/vtime.txt $C /root/go/bin/vegeta attack -header 'Accept-Encoding: identity' -rate=$N/s -duration=10s -timeout=10s > $OUT/vegeta-$name-$N.bin
    stop
    /root/go/bin/vegeta report < $OUT/vegeta-$name-$N.bin | head -7 > $OUT/vegeta-$name-$N.txt
    cat $OUT/vtime.txt >> $OUT/vegeta-$name-$N.txt
    echo "rate $N/s ($k x $R)" >> $OUT/vegeta-$name-$N.txt
  done
  fresh
  $C $BIN load -q -r $R -c 1000 -d 10s $URL > $OUT/ours-$name-$R.txt 2>&1
  stop
done
date -u +%FT%TZ > $OUT/end
