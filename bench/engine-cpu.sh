#!/usr/bin/env bash
# Server CPU per request for GET /users/1 in JSON (issue 17's yardstick):
# the in-repo bare net/http handler (bench/bare), `wirebench serve` on the
# net/http engine and on the fasthttp engine, and the bare fasthttp handler
# (bench/bare -engine fasthttp: the fasthttp engine's floor, what fasthttp
# itself costs per GET on this machine). Each server is pinned to one
# CPU, wrk to another (-t1 -c50, 1 s warm-up then the measured run); the
# server's CPU is utime+stime from /proc/PID/stat across the measured run,
# divided by wrk's request count, and each line splits it into user and
# system time (where a ratio moves, the split tells whether it was the
# server's own code or the kernel's work). Rounds alternate the servers so
# background load hits all alike; the ratios are of the means, and the
# last line gives their spread (min-max of the per-round ratios).
#
# With GC=1 the servers run with GODEBUG=gctrace=1 and each line adds the
# garbage collector's share, summed from the runtime's own trace lines
# (mark assist, background and idle workers, both pauses): cycles per
# million requests and GC CPU per request. Far steadier than total CPU on
# a noisy host, it shows what the live heap and globals cost (each cycle
# marks them again; a larger live heap leaves less room under the 4 MB
# minimum heap goal, so cycles come more often).
#
# With SYSCALLS=1 (needs perf and permission to trace) each line adds the
# server's system calls per request over the measured run, counted in the
# kernel: reads, the reads that found nothing (EAGAIN) and writes.
#
# usage: [GC=1] [SYSCALLS=1] [WRK="-t1 -c50"] [SERVE_FLAGS="--json-lib fast"] bench/engine-cpu.sh [seconds=5] [rounds=2]
# needs: wrk, taskset; 2 CPUs or more. On a shared machine run it under
# the load lock: flock /tmp/wirebench-load.lock bench/engine-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} rounds=${2:-2}
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
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/bare" ./bench/bare
go build -o "$tmp/wirebench" ./cmd/wirebench
hz=$(getconf CLK_TCK)

# user and system clock ticks of a process
cpu_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

# run NAME CMD... : one measured run; appends "NAME us/req req/s" to $tmp/results.
run() {
  local name=$1; shift
  local godebug=${GODEBUG:-}
  [ "${GC:-}" = 1 ] && godebug=gctrace=1
  GOMAXPROCS=$server_procs GODEBUG=$godebug taskset -c "$server_cpu" "$@" > "$tmp/out" 2>"$tmp/err" &
  srv=$!
  local addr=
  for _ in $(seq 100); do
    addr=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$addr" ] && break
    sleep 0.05
  done
  [ -n "$addr" ] || { echo "$name did not start: $(cat "$tmp/err")" >&2; exit 1; }
  local url="http://$addr/users/1"
  # shellcheck disable=SC2086 # WRK: words
  taskset -c "$client_cpu" wrk $WRK -d1s "$url" > /dev/null
  local u0 s0 u1 s1 out req rps gcs gc= sc= perf=
  gcs=$(grep -c '^gc ' "$tmp/err" || true)
  if [ "${SYSCALLS:-}" = 1 ]; then
    perf stat -x, -o "$tmp/perf" -e syscalls:sys_enter_read,syscalls:sys_enter_write \
      -e syscalls:sys_exit_read --filter 'ret < 0' -p "$srv" &
    perf=$!
    sleep 0.2
  fi
  read -r u0 s0 < <(cpu_ticks "$srv")
  # shellcheck disable=SC2086 # WRK: words
  out=$(taskset -c "$client_cpu" wrk $WRK -d"${secs}s" "$url")
  read -r u1 s1 < <(cpu_ticks "$srv")
  if [ -n "$perf" ]; then
    kill -INT "$perf"; wait "$perf" || true
  fi
  kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
  if grep -q Non-2xx <<<"$out"; then echo "$name: non-2xx replies:"$'\n'"$out" >&2; exit 1; fi
  req=$(awk '/requests in/{print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  if [ "${GC:-}" = 1 ]; then
    # A trace line: "gc N @T s P%: a+b+c ms clock, A+B/C/D+E ms cpu, ..."
    gc=$(tail -n +"$((gcs + 1))" "$tmp/err" | grep '^gc ' | awk -v k="$req" '
      { for (i = 1; i <= NF; i++) if ($i == "cpu,") { split($(i - 2), a, "[+/]"); ms += a[1] + a[2] + a[3] + a[4] + a[5] }; c++ }
      END { printf "  GC: %4.0f cycles per 1M requests, %.3f us/req", c / k * 1e6, ms * 1000 / k }')
  fi
  if [ -n "$perf" ]; then
    # perf counts from its start to its end, a little more than wrk's run:
    # the requests are those wrk counted, so the rates are slight overestimates.
    sc=$(awk -F, -v k="$req" '/sys_enter_read/{r=$1} /sys_exit_read/{e=$1} /sys_enter_write/{w=$1}
      END{printf "  syscalls/req: read %.2f (EAGAIN %.2f) write %.2f", r/k, e/k, w/k}' "$tmp/perf")
  fi
  awk -v n="$name" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$hz" -v r="$req" -v rps="$rps" -v gc="$gc$sc" \
    'BEGIN{printf "%-9s %7.2f us/req  %9.0f req/s  user %.2f  system %.2f us/req%s\n", n, (u+s)/hz*1e6/r, rps, u/hz*1e6/r, s/hz*1e6/r, gc}' | tee -a "$tmp/results"
}

# shellcheck disable=SC2086 # SERVE_FLAGS: extra `wirebench serve` flags for both engines
for round in $(seq "$rounds"); do
  echo "round $round"
  run bare "$tmp/bare" -addr 127.0.0.1:0
  run nethttp "$tmp/wirebench" serve --no-grpc --http 127.0.0.1:0 --engine nethttp ${SERVE_FLAGS:-}
  run fasthttp "$tmp/wirebench" serve --no-grpc --http 127.0.0.1:0 --engine fasthttp ${SERVE_FLAGS:-}
  run barefast "$tmp/bare" -engine fasthttp -addr 127.0.0.1:0
done
awk '$1 == "bare" {r++} {s[$1] += $2; u[$1] += $7; y[$1] += $9; n[$1]++; v[r, $1] = $2}
  END {
    for (k in s) m[k] = s[k] / n[k]
    printf "mean us/req: bare %.2f  nethttp %.2f  fasthttp %.2f  barefast %.2f\n", m["bare"], m["nethttp"], m["fasthttp"], m["barefast"]
    printf "of which user / system: bare %.2f / %.2f  nethttp %.2f / %.2f  fasthttp %.2f / %.2f  barefast %.2f / %.2f\n",
      u["bare"] / n["bare"], y["bare"] / n["bare"], u["nethttp"] / n["nethttp"], y["nethttp"] / n["nethttp"], u["fasthttp"] / n["fasthttp"], y["fasthttp"] / n["fasthttp"],
      u["barefast"] / n["barefast"], y["barefast"] / n["barefast"]
    printf "ratio to bare: nethttp %.2f  fasthttp %.2f  barefast %.2f (the fasthttp engine to its floor: %.2f)\n",
      m["nethttp"] / m["bare"], m["fasthttp"] / m["bare"], m["barefast"] / m["bare"], m["fasthttp"] / m["barefast"]
    # The spread: the ratio to the bare handler of the same round, each round.
    printf "per-round ratio to bare (min-max of %d):", r
    split("nethttp fasthttp barefast", names, " ")
    for (i = 1; i <= 3; i++) {
      lo = 1e9; hi = 0
      for (k = 1; k <= r; k++) { q = v[k, names[i]] / v[k, "bare"]; if (q < lo) lo = q; if (q > hi) hi = q }
      printf "  %s %.2f-%.2f", names[i], lo, hi
    }
    printf "\n"
  }' "$tmp/results"
