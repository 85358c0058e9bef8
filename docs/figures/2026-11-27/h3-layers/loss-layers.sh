#!/bin/sh
set -eu
BIN=/tmp/h3fig/wirebench; NS=wb-ll-$$
ip netns add $NS; trap 'ip netns del $NS' EXIT
ip netns exec $NS ip link set lo up
ip netns exec $NS nft add table inet loss
ip netns exec $NS nft add chain inet loss in '{ type filter hook input priority 0; }'
ip netns exec $NS nft add rule inet loss in iif lo numgen random mod 100 '<' 5 counter drop
ip netns exec $NS taskset -c 1 $BIN serve --http 127.0.0.1:8080 --grpc 127.0.0.1:0 --https 127.0.0.1:8443 --http3 127.0.0.1:8443 --seed-users 1000 >/dev/null 2>&1 &
S=$!; sleep 2; date -u; cut -d' ' -f1-3 /proc/loadavg
ip netns exec $NS taskset -c 0 $BIN load --transport h3 -k -c 50 --conns 4 -d 4s -t 10s --out /tmp/h3fig/loss5-users1.json https://127.0.0.1:8443/users/1
ip netns exec $NS taskset -c 0 $BIN load --transport h3 -k -c 8 --conns 2 -d 4s -t 10s --out /tmp/h3fig/loss5-users.json https://127.0.0.1:8443/users
ip netns exec $NS curl -s http://127.0.0.1:8080/metrics | grep '^wirebench_h3_requests'
kill $S
