#!/bin/bash
# GC cycles per 1,000 requests and server CPU per request: wirebench serve
# at 3c9d699 (live-old) and at c5573ff (live-new), and h3bare serve, each
# driven by the same bare client (-c 50, 4 connections, 1 s warm-up, 4 s
# measured), server on CPU 1, client on CPU 0; 3 rounds.
# Run from a directory holding live-old, live-new, live-bare (the h3bare
# binary) and h3bare, under the load lock:
#   flock /tmp/wirebench-load.lock ./gc.sh
for r in 1 2 3; do
for k in old new bare; do
  if [ $k = bare ]; then GODEBUG=gctrace=1 GOMAXPROCS=2 taskset -c 1 ./live-bare serve -seed-users 1000 > g.out 2> g.err & 
  else GODEBUG=gctrace=1 GOMAXPROCS=2 taskset -c 1 ./live-$k serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10 > g.out 2> g.err & fi
  p=$!
  for i in $(seq 100); do h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' g.out); [ -n "$h3" ] && break; sleep 0.05; done
  taskset -c 0 ./h3bare load -c 50 -conns 4 -d 1s https://$h3/users/1 > /dev/null
  n0=$(grep -c '^gc ' g.err); read -r u0 s0 < <(awk '{print $14, $15}' /proc/$p/stat)
  out=$(taskset -c 0 ./h3bare load -c 50 -conns 4 -d 4s https://$h3/users/1)
  n1=$(grep -c '^gc ' g.err); read -r u1 s1 < <(awk '{print $14, $15}' /proc/$p/stat)
  kill $p; wait $p 2>/dev/null
  req=$(awk '{print $2}' <<<"$out")
  awk -v k=$k -v c=$((n1-n0)) -v n=$req -v t=$((u1+s1-u0-s0)) 'BEGIN{printf "%s cycles/1000req %.2f  cpu %.1f us/req  (%d req)\n", k, c*1000/n, t*1e4/n, n}'
done; done
