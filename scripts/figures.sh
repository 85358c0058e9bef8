#!/usr/bin/env bash
# Re-measures every figure the README quotes and writes the outputs, with
# the machine and date, under docs/figures/<date>/ (commit them):
#   calibration/  json-libs twice, the second with --burn 10us, and compare
#   formats/      study formats --quick (the README's excerpt table)
#   wrk-vs-wirebench.txt  client CPU per request against wrk
# Each run holds the load lock, as every load run on the shared machine must.
# usage: scripts/figures.sh [outdir]   (about 6 minutes on 2 CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/figures/$(date -u +%F)}
lock=/tmp/wirebench-load.lock
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/wirebench" ./cmd/wirebench
w=$tmp/wirebench
mkdir -p "$out/calibration/a" "$out/calibration/b" "$out/formats"
{
  date -u +%FT%TZ
  uname -srm
  grep -m1 'model name' /proc/cpuinfo || true
  echo "CPUs: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (dirty)')"
} > "$out/machine.txt"
run() { # run LOG CMD...: one timed command under the lock, echoed to run.log
  local log=$1; shift
  echo "\$ $*" >> "$out/run.log"
  local s=$SECONDS
  flock "$lock" "$@" > "$log" 2>&1
  echo "exit $? after $((SECONDS - s)) s" >> "$out/run.log"
}
: > "$out/run.log"
run "$tmp/a.log" "$w" study json-libs --quick --trials 6 --out "$tmp/a"
run "$tmp/b.log" "$w" study json-libs --quick --trials 6 --serve-args '--burn 10us' --out "$tmp/b"
"$w" compare "$tmp"/a/json-libs-*/results.json "$tmp"/b/json-libs-*/results.json > "$out/calibration/compare.txt"
run "$tmp/f.log" "$w" study formats --quick --out "$tmp/f"
run "$out/wrk-vs-wirebench.txt" bench/wrk-vs-wirebench.sh 5 50 4
for x in a b; do
  cp "$tmp"/$x/json-libs-*/report.md "$tmp"/$x/json-libs-*/results.json "$out/calibration/$x/"
  cp "$tmp/$x.log" "$out/calibration/$x/study.log"
done
cp "$tmp"/f/formats-*/report.md "$tmp"/f/formats-*/report.csv "$tmp"/f/formats-*/results.json "$out/formats/"
cp "$tmp/f.log" "$out/formats/study.log"
echo "wrote $out"
