#!/usr/bin/env bash
# Redis and wirebench serve --resp, same client, uniform vs Zipf 0.99 keys, kv-mixed SET:GET 1:10,
# -c 50, 10,000 keys, 128-byte values; servers on CPU 1, client on CPU 0; 3 s each after a 1 s warm-up.
set -u
WB=${WB:-wirebench}; OUT=${OUT:-/tmp/kvdist-fig}; mkdir -p $OUT
for pers in none everysec; do
  rm -rf $OUT/redis-data $OUT/wb-data; mkdir -p $OUT/redis-data $OUT/wb-data
  if [ $pers = none ]; then rargs=(--save '' --appendonly no); wargs=(); else rargs=(--save '' --appendonly yes --appendfsync everysec); wargs=(--data-dir $OUT/wb-data --appendfsync everysec); fi
  taskset -c 1 redis-server --bind 127.0.0.1 --port 16401 --dir $OUT/redis-data --daemonize no --protected-mode no --logfile '' "${rargs[@]}" >/dev/null 2>&1 & rpid=$!
  taskset -c 1 $WB serve --resp 127.0.0.1:16402 --http 127.0.0.1:16403 --no-grpc --seed-users 0 --seed-todos 0 "${wargs[@]}" >/dev/null 2>&1 & wpid=$!
  sleep 1.5
  for p in 1 16; do
    for dist in uniform zipf:0.99; do
      for srv in redis:16401 wirebench:16402; do
        name=${srv%%:*}; port=${srv##*:}
        taskset -c 0 $WB load -q --scenario kv-mixed --ratio 1:10 --key-dist $dist -P $p -c 50 -d 1s redis://127.0.0.1:$port >/dev/null 2>&1  # warm-up
        taskset -c 0 $WB load --scenario kv-mixed --ratio 1:10 --key-dist $dist -P $p -c 50 -d 3s --out $OUT/$pers-P$p-${dist//:/}-$name.json --force redis://127.0.0.1:$port > $OUT/$pers-P$p-${dist//:/}-$name.txt 2>&1
        echo "$pers P=$p $dist $name: $(grep -E '^  requests' $OUT/$pers-P$p-${dist//:/}-$name.txt)"
      done
    done
  done
  kill $rpid $wpid; wait $rpid $wpid 2>/dev/null
done
