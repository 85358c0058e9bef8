#!/usr/bin/env bash
# quiet-machine measurements at the session's end (2026-11-29 c); logs in /work/m4-*.log
set -u
cd /work/main
mkdir -p /work/mbin4
go build -o /work/mbin4/wirebench ./cmd/wirebench && go build -o /work/mbin4/h3flood ./bench/h3flood || exit 1
L() { echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
L start
flock /tmp/wirebench-load.lock env BIN=/work/mbin4 FILTERS=true RATES=1000 ROUNDS=2 bench/h3-flood.sh > /work/m4-flood.log 2>&1
L flood
for cpus in 1 0,1; do
  flock /tmp/wirebench-load.lock env SERVER_CPU=$cpus BIN=/work/mbin4 FILTERS=true RATES=1000 MODES="noread reset" ROUNDS=1 EXTRA="--seed-users 100000" bench/h3-flood.sh > /work/m4-noread-$cpus.log 2>&1
  L noread-$cpus
  flock /tmp/wirebench-load.lock env SERVER_CPU=$cpus BIN=/work/mbin4 FILTERS=true RATES=1000 MODES=noread ROUNDS=1 EXTRA="--seed-users 100000" FLOOD_ARGS="-conns 60 -streams 1" bench/h3-flood.sh > /work/m4-noread60-$cpus.log 2>&1
  L noread60-$cpus
done
env ONLY=h3 ROUNDS=5 scripts/scoreboard.sh > /work/m4-h3.log 2>&1
L h3
