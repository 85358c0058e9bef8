#!/bin/sh
# Client CPU per request over h3 with the layer split (this branch) and without (main), alternating.
set -eu
/tmp/wb-branch serve --http 127.0.0.1:18095 --grpc 127.0.0.1:0 --https 127.0.0.1:18458 --http3 127.0.0.1:18458 > /dev/null 2>&1 &
S=$!
taskset -p -c 1 $S > /dev/null
sleep 2
date -u; cut -d' ' -f1-3 /proc/loadavg
for r in 1 2 3; do
  for b in main branch; do
    printf "round %s %-6s " $r $b
    taskset -c 0 /tmp/wb-$b load --transport h3 -k -c 50 --conns 4 -d 5s https://127.0.0.1:18458/users/1 2>&1 | grep -E 'client CPU|requests' | tr -s ' ' | tr '\n' ' '
    echo
  done
done
date -u; cut -d' ' -f1-3 /proc/loadavg
kill $S
