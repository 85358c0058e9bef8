#!/bin/bash
# run5k.sh SPEED: serve --record on CPU 1, replay rec5k.log on CPU 0 at SPEED, then the arrival error.
# Made with: python3 gen.py 50000 5000 rec5k.log; flock /tmp/wirebench-load.lock ./run5k.sh 1 (and 2).
# WB is the wirebench binary (default: the one on PATH).
set -e
S=${1:-1}
WB=${WB:-wirebench}
rm -f arrived-$S.log
taskset -c 1 $WB serve --http 127.0.0.1:0 --no-grpc --seed-users 100 --record arrived-$S.log > serve-$S.out 2>&1 &
SP=$!
sleep 1
A=$(grep -o 'http=[^ ]*' serve-$S.out | cut -d= -f2)
$WB replay rec5k.log --target http://$A --speed $S -c 64 --cpu 0 -q --out res-$S.json --force > replay-$S.txt 2>&1 || true
kill -TERM $SP; wait $SP || true
cat replay-$S.txt
python3 gaps.py rec5k.log arrived-$S.log $S
