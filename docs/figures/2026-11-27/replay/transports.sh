#!/bin/bash
# transports.sh (WB=wirebench; rec2k.log from: python3 gen.py 10000 2000 rec2k.log; run under flock /tmp/wirebench-load.lock): serve (http, https, h3) on CPU 1; the same recording (gen.py 10000 2000) replayed
# over each transport, and in each format, on CPU 0, one after another.
set -e
WB=${WB:-wirebench}
cd "$(dirname "$0")"
taskset -c 1 $WB serve --http 127.0.0.1:0 --no-grpc --https 127.0.0.1:0 --http3 127.0.0.1:0 --cert-out cert.pem --seed-users 100 > serve.out 2>&1 &
SP=$!
sleep 2
H=$(grep -o 'http=[^ ]*' serve.out | cut -d= -f2); S=$(grep -o 'https=[^ ]*' serve.out | cut -d= -f2); Q=$(grep -o 'h3=[^ ]*' serve.out | cut -d= -f2)
run() { echo "== $*"; timeout -s KILL 120 $WB replay rec2k.log -c 64 --cpu 0 -q "$@" 2>&1 || true; }
run --target http://$H
run --target http://$H --transport h2c --conns 2
run --target https://$S --cacert cert.pem
run --target https://$S --cacert cert.pem --transport h2 --conns 2
run --target https://$Q --cacert cert.pem --transport h3 --conns 2
for f in json toon cbor msgpack protobuf; do run --target http://$H --as-format $f; done
kill -TERM $SP; wait $SP || true
