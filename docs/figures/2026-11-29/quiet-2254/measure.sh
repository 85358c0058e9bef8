#!/usr/bin/env bash
# quiet-machine measurements, session of 2026-11-29 d; logs in /work/m5-*.log
set -u
cd /work/main
mkdir -p /work/mbin5
go build -o /work/mbin5/wirebench ./cmd/wirebench && go build -o /work/mbin5/h3flood ./bench/h3flood || exit 1
git -C /work/main rev-parse --short HEAD > /work/m5-commit
L() { echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
L start
flock /tmp/wirebench-load.lock env BIN=/work/mbin5 FILTERS=true RATES=1000 MODES=dial ROUNDS=3 bench/h3-flood.sh > /work/m5-dial.log 2>&1
L dial
for cpus in 1 0,1; do
  flock /tmp/wirebench-load.lock env SERVER_CPU=$cpus BIN=/work/mbin5 FILTERS=true RATES=1000 MODES=reset ROUNDS=2 EXTRA="--seed-users 100000" bench/h3-flood.sh > /work/m5-reset-$cpus.log 2>&1
  L reset-$cpus
  flock /tmp/wirebench-load.lock env SERVER_CPU=$cpus BIN=/work/mbin5 FILTERS=true RATES=1000 MODES=noread ROUNDS=1 EXTRA="--seed-users 100000" bench/h3-flood.sh > /work/m5-noread-$cpus.log 2>&1
  L noread-$cpus
done
rm -f /work/m5-kv.jsonl
for i in 1 2; do
  flock /tmp/wirebench-load.lock env WB=/work/mbin5/wirebench QUOTA=0.5 ROUNDS=2 PS="1 16" RESULTS=/work/m5-kv.jsonl scripts/kv-zipf-vs-redis.sh > /work/m5-kv-$i.log 2>&1
  L kv-$i
done
ROUNDS=0 RESULTS=/work/m5-kv.jsonl scripts/kv-zipf-vs-redis.sh > /work/m5-kv-summary.log 2>&1
env ONLY=h3 ROUNDS=3 scripts/scoreboard.sh > /work/m5-h3.log 2>&1
L h3
