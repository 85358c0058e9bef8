#!/bin/sh
# Bytes by layer over HTTP/3 for two representative requests, and the list over HTTP/1.1 beside it.
set -e
B=/tmp/wb-fig
taskset -c 1 $B serve --http 127.0.0.1:18090 --grpc 127.0.0.1:0 --https 127.0.0.1:18453 --http3 127.0.0.1:18453 --seed-users 1000 > /tmp/h3fig/serve.out 2>&1 &
S=$!
sleep 2
date -u; uptime
taskset -c 0 $B load --transport h3 -k -c 8 --conns 2 -d 5s https://127.0.0.1:18453/users/1
taskset -c 0 $B load --transport h3 -k -c 8 --conns 2 -d 5s https://127.0.0.1:18453/users
taskset -c 0 $B load --stream rest-list --transport h3 -k -c 8 --conns 2 -d 5s https://127.0.0.1:18453
taskset -c 0 $B load --stream rest-list -c 8 -d 5s http://127.0.0.1:18090
curl -s http://127.0.0.1:18090/metrics | grep '^wirebench_h3'
date -u; uptime
kill $S
