#!/usr/bin/env bash
# Re-measures the figures "The server's cost" in the README quotes (issue
# 17's goals) and writes each run's output, with the machine and date,
# under docs/figures/<date>/server-cost/ (commit them):
#   judge-c50.txt    bench/engine-cpu.sh 5 3, wrk -t1 -c50 (each server alone, rounds alternating)
#   judge-c10.txt    the same with wrk's defaults (-t2 -c10)
#   interleaved.txt  bench/engine-cpu-interleaved.sh 12 2 (all servers up, wrk turning between them)
#   grpc-p50.txt     bench/grpc-p50.sh 5 4 (gRPC unary against REST JSON at c=1)
# Each run holds the load lock and is stamped with its start time and the
# box's load average in run.log.
# usage: scripts/server-cost.sh [outdir]   (about 8 minutes on 2 CPUs; needs wrk, ghz optional)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/figures/$(date -u +%F)/server-cost}
lock=/tmp/wirebench-load.lock
mkdir -p "$out"
{
  date -u +%FT%TZ
  uname -srm
  grep -m1 'model name' /proc/cpuinfo || true
  echo "CPUs: $(nproc); servers on CPU 1, clients on CPU 0; commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (dirty)')"
} > "$out/machine.txt"
: > "$out/run.log"
run() { # run NAME [VAR=value...] CMD...: one run under the lock
  local name=$1; shift
  echo "$(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg): $*" >> "$out/run.log"
  local s=$SECONDS
  flock "$lock" env "$@" > "$out/$name.txt" 2>&1
  echo "exit $? after $((SECONDS - s)) s" >> "$out/run.log"
}
run judge-c50 WRK="-t1 -c50" bench/engine-cpu.sh 5 3
run judge-c10 WRK="-t2 -c10" bench/engine-cpu.sh 5 3
run interleaved bench/engine-cpu-interleaved.sh 12 2
run grpc-p50 bench/grpc-p50.sh 5 4
tail -n 4 "$out"/judge-*.txt
