#!/usr/bin/env bash
# engine-cpu-interleaved.sh — issue 17's yardstick measured so that host
# noise hits every server alike: the bare handler (bench/bare),
# `wirebench serve` on both engines and the bare fasthttp handler (the
# fasthttp engine's floor) all run at once, pinned to the same
# CPU; wrk (on another CPU) turns between them in short slices, and each
# server's CPU per request (utime+stime from /proc/PID/stat over its
# slices, divided by wrk's requests) is summed over all its slices. On a
# VM whose host moves single runs by ±10%, this is the steadier ratio;
# bench/engine-cpu.sh is the judge's shape (each server alone, in turn).
#
# With BASE=<git revision> that revision's `wirebench serve` joins the
# rotation on both engines ("base", "basefast"), for an A/B of a change to
# the hot path measured in the same slices.
#
# With BARE_PGO=1 the bare handlers run again built with our PGO profile
# (bench/servers.sh): "barepgo", "barefastpgo".
#
# usage: [BASE=rev] [BARE_PGO=1] [WRK="-t1 -c50"] [SERVE_FLAGS=...] bench/engine-cpu-interleaved.sh [rounds=12] [seconds per slice=2]
# needs: wrk, taskset, ss; 2 CPUs. On a shared machine run it under the
# load lock: flock /tmp/wirebench-load.lock bench/engine-cpu-interleaved.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-12} secs=${2:-2}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
# Every server gets the same GOMAXPROCS on its one CPU: wirebench serve
# runs two Ps there by default (a large encoding must not hold the only
# one), and a bare server given fewer would differ by a runtime knob,
# not by its code. SERVER_PROCS overrides it for all of them.
server_procs=${SERVER_PROCS:-2}
# wrk's threads and connections (e.g. WRK="-t2 -c10", wrk's defaults)
WRK=${WRK:--t1 -c50}
for tool in wrk taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y wrk util-linux)" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
# shellcheck source=bench/servers.sh
. bench/servers.sh
declare -A pid addr cpu req
for n in "${names[@]}"; do
  # shellcheck disable=SC2086
  GOMAXPROCS=$server_procs taskset -c "$server_cpu" ${cmd[$n]} >"$tmp/$n.out" 2>"$tmp/$n.err" &
  pid[$n]=$!
  pids+=("$!")
done
for n in "${names[@]}"; do
  for _ in $(seq 100); do
    addr[$n]=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/$n.out")
    [ -n "${addr[$n]}" ] && break
    sleep 0.05
  done
  [ -n "${addr[$n]}" ] || { echo "$n did not start: $(cat "$tmp/$n.err")" >&2; exit 1; }
  # shellcheck disable=SC2086 # WRK: words
  taskset -c "$client_cpu" wrk $WRK -d1s "http://${addr[$n]}/users/1" >/dev/null # warm-up
  cpu[$n]=0 req[$n]=0
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for r in $(seq "$rounds"); do
  line="round $r:"
  for n in "${names[@]}"; do
    t0=$(ticks "${pid[$n]}")
    # shellcheck disable=SC2086 # WRK: words
    out=$(taskset -c "$client_cpu" wrk $WRK -d"${secs}s" "http://${addr[$n]}/users/1")
    t1=$(ticks "${pid[$n]}")
    if grep -q Non-2xx <<<"$out"; then echo "$n: non-2xx replies:"$'\n'"$out" >&2; exit 1; fi
    k=$(awk '/requests in/{print $1}' <<<"$out")
    cpu[$n]=$((cpu[$n] + t1 - t0)) req[$n]=$((req[$n] + k))
    us=$(awk -v t=$((t1 - t0)) -v k="$k" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.3f", t/hz*1e6/k}')
    echo "$r $n $us" >>"$tmp/rounds"
    line+="  $n $us us"
  done
  echo "$line"
done
hz=$(getconf CLK_TCK)
echo "totals over all rounds:"
for n in "${names[@]}"; do
  awk -v n="$n" -v t="${cpu[$n]}" -v k="${req[$n]}" -v b="${cpu[bare]}" -v kb="${req[bare]}" -v hz="$hz" \
    'BEGIN{u=t/hz*1e6/k; ub=b/hz*1e6/kb; printf "%-9s %6.2f us/req  ratio to bare %.3f  (%d requests)\n", n, u, u/ub, k}'
done
# The spread: each round's ratio to that round's bare slice, as median and
# quartiles (a single slice moves by ±10-20% on a shared host).
echo "per-round ratio to bare (median, quartiles):"
for n in "${names[@]}"; do
  [ "$n" = bare ] && continue
  awk -v n="$n" '$2 == "bare" {b[$1] = $3} $2 == n {v[$1] = $3} END {for (r in v) print v[r] / b[r]}' "$tmp/rounds" | sort -g |
    awk -v n="$n" '{x[NR] = $1} END {printf "%-9s median %.3f  quartiles %.3f-%.3f  (%d rounds)\n", n, x[int((NR + 1) / 2)], x[int((NR + 3) / 4)], x[int((3 * NR + 3) / 4)], NR}'
done
# The fasthttp engine against its floor, the bare fasthttp handler, in the same rounds.
awk '$2 == "barefast" {b[$1] = $3} $2 == "fasthttp" {v[$1] = $3} END {for (r in v) if (b[r]) print v[r] / b[r]}' "$tmp/rounds" | sort -g |
  awk 'NR {x[NR] = $1} END {if (NR) printf "fasthttp to barefast (its floor): median %.3f  quartiles %.3f-%.3f  (%d rounds)\n", x[int((NR + 1) / 2)], x[int((NR + 3) / 4)], x[int((3 * NR + 3) / 4)], NR}'
