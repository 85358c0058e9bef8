#!/usr/bin/env bash
# CPU profiles: linked (PGO) bare server and ours under the same bare client, 10 s each, twice alternated.
B=/tmp/h3bin/lpgo; O=/tmp/h3bin/fig/prof; mkdir -p $O; cd $O
echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2; do for k in linked ours; do
  case $k in
    linked) c=("$B/h3bare-linked" serve -seed-users 1000 -cpuprofile $O/$k-$r.prof) ;;
    ours) c=("$B/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10 --cpuprofile $O/$k-$r.prof) ;;
  esac
  GOMAXPROCS=2 taskset -c 1 "${c[@]}" > out-$k 2> err-$k & s=$!
  for _ in $(seq 100); do h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' out-$k); [ -n "$h3" ] && break; sleep 0.1; done
  taskset -c 0 "$B/h3bare" load -c 50 -conns 4 -d 10s "https://$h3/users/1" > cl-$k-$r
  kill -INT $s; wait $s
  echo "$k $r: $(cat cl-$k-$r)"
done; done
echo "# end $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
