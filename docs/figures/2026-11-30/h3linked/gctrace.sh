#!/usr/bin/env bash
# each server with GODEBUG=gctrace=1 under the bare client (3 s), its last cycles' lines.
B=/tmp/h3bin; cd /tmp/h3bin/udp
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
for k in bare linked ours; do
  case $k in
    bare) c=("$B/h3bare" serve -seed-users 1000) ;;
    linked) c=("$B/h3bare-linked" serve -seed-users 1000) ;;
    ours) c=("$B/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10) ;;
  esac
  GODEBUG=gctrace=1 GOMAXPROCS=2 taskset -c 1 "${c[@]}" > gout-$k 2> gerr-$k & s=$!
  for _ in $(seq 100); do h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' gout-$k); [ -n "$h3" ] && break; sleep 0.1; done
  taskset -c 0 "$B/h3bare" load -c 50 -conns 4 -d 4s "https://$h3/users/1" > gcl-$k
  kill $s; wait $s
  echo "== $k: $(cat gcl-$k); cycles $(grep -c '^gc [0-9]' gerr-$k)"
  grep '^gc [0-9]' gerr-$k | tail -3
done
