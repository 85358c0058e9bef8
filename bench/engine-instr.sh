#!/usr/bin/env bash
# engine-instr.sh — issue 17's yardstick in user-space instructions, the
# steady figure when CPU time swings by ±30% on a shared VM: each server
# (the bare handler, `wirebench serve` on both engines) runs under
# valgrind's cachegrind while our load client sends it N1 and
# then, in a second run, N2 GETs of /users/1 (10 connections); the
# difference of the two runs' instruction totals over N2-N1 is the
# instructions per GET with start-up and shutdown cancelled out. It counts
# what the server's own code and the runtime execute, not the kernel's
# work nor cycles lost to misses, so it ranks changes to the hot path, not
# whole servers. Repeats of one binary agree to about ±0.5% (background
# goroutines and the GC's timing are not exactly alike between runs).
#
# With CACHE=1 cachegrind also simulates the caches (the first-level
# instruction and data caches and the last level, as it models this
# machine's): each line adds their misses per GET, which is where two
# servers with equal instructions still differ in cycles (code spread over
# a larger binary, a larger heap for the GC to walk). Slower by about 3x.
#
# With BASE=<git revision> that revision's `wirebench serve` runs too, as
# "base" and "basefast" (its two engines), for an A/B of a change.
#
# usage: [CACHE=1] [BASE=rev] [SERVE_FLAGS=...] bench/engine-instr.sh [N1=5000] [N2=25000]
# needs: valgrind (apt-get install -y valgrind), taskset. About 2 minutes
# per server. On a shared machine run it under the load lock.
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${1:-5000} n2=${2:-25000}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
for tool in valgrind taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y valgrind util-linux)" >&2; exit 1; }
done
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source=bench/servers.sh
. bench/servers.sh

# instructions NAME N: the server's instruction total over a run of N GETs.
instructions() {
  local out="$tmp/$1.$2"
  # shellcheck disable=SC2086
  taskset -c "$server_cpu" valgrind --tool=cachegrind --cache-sim="$([ "${CACHE:-}" = 1 ] && echo yes || echo no)" --cachegrind-out-file="$out.cg" ${cmd[$1]} >"$out.out" 2>"$out.err" &
  srv=$!
  local addr=
  for _ in $(seq 600); do
    addr=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$out.out")
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "$1 did not start: $(cat "$out.err")" >&2; exit 1; }
  taskset -c "$client_cpu" "$tmp/wirebench" load -n "$2" -c 10 --out "$out.json" "http://$addr/users/1" >"$out.load"
  grep -q "failed 0 " "$out.load" || { echo "$1: failed requests:"; cat "$out.load"; exit 1; } >&2
  kill -INT "$srv"
  wait "$srv" || true
  srv=
  # events: Ir, then with the cache simulation I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
  sed -n 's/^summary: //p' "$out.cg"
}

for n in "${names[@]}"; do
  a=$(instructions "$n" "$n1")
  b=$(instructions "$n" "$n2")
  paste <(tr ' ' '\n' <<<"$a") <(tr ' ' '\n' <<<"$b") | awk -v n="$n" -v k=$((n2 - n1)) '
    { d[NR] = ($2 - $1) / k }
    END {
      printf "%s %d\n", n, d[1] >> "'"$tmp/results"'"
      printf "%-8s %6d instructions per GET", n, d[1]
      if (NR > 1) printf "   misses per GET: I1 %.0f  LL-instr %.1f  D1 %.0f (read %.0f, write %.0f)  LL-data %.1f", d[2], d[3], d[5] + d[8], d[5], d[8], d[6] + d[9]
      printf "\n"
    }'
done
awk '$1 == "bare" {b = $2} {v[$1] = $2} END {for (n in v) if (n != "bare") printf "ratio to bare: %s %.3f\n", n, v[n] / b
  if (v["barefast"]) printf "fasthttp to barefast (its floor): %.3f\n", v["fasthttp"] / v["barefast"]}' "$tmp/results"
