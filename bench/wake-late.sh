#!/usr/bin/env bash
# How late a process sharing its CPU with another wakes (bench/wakelate:
# 1,000 sleeps of 2 ms, GOMAXPROCS=1), on CPU (0): alone, beside a
# CPU-bound shell loop at nice 19, beside one under SCHED_IDLE, and itself
# under SCHED_FIFO beside the nice-19 loop; ROUNDS rounds. What a victim
# sharing bench/h3-flood.sh's client CPU with the flooder pays on its own
# side.
# usage: [CPU=0] [ROUNDS=2] bench/wake-late.sh   (flock /tmp/wirebench-load.lock on a shared machine)
set -euo pipefail
cd "$(dirname "$0")/.."
cpu=${CPU:-0} rounds=${ROUNDS:-2}
tmp=$(mktemp -d)
hog=
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/wakelate" ./bench/wakelate
for _ in $(seq "$rounds"); do
  for how in alone nice19 idle fifo; do
    case $how in
    nice19 | fifo) taskset -c "$cpu" nice -n 19 sh -c 'while :; do :; done' & hog=$! ;;
    idle) taskset -c "$cpu" chrt --idle 0 sh -c 'while :; do :; done' & hog=$! ;;
    esac
    pre=()
    [ "$how" = fifo ] && pre=(chrt -f 1)
    printf '%-7s ' "$how"
    GOMAXPROCS=1 "${pre[@]}" taskset -c "$cpu" "$tmp/wakelate"
    if [ -n "$hog" ]; then kill "$hog"; wait "$hog" 2>/dev/null || true; hog=; fi
  done
done
