#!/usr/bin/env bash
# A victim's HTTP/3 latency while another process floods the server with
# new QUIC connections, the three apart: the server pinned to SERVER_CPU
# (1), the victim (`wirebench load --transport h3`, open loop, its one
# connection opened before the flood starts, 0.5 s into its run) and the flooder (bench/h3flood, at
# nice 19) on CLIENT_CPU (0). Sharing a CPU with the flooder costs the
# victim on its own side: on this VM (kernel 6.18, HZ=250) a thread
# sleeping 2 ms woke 2.0-2.6 ms late at its p50 beside a CPU-bound process
# at nice 19 or SCHED_IDLE alike, 0.18 ms alone; run SCHED_FIFO it woke in
# time, but then took half to five sixths of the flooder's CPU, a weaker
# flood (docs/limits.md). So the victim's p99 under a flood is an upper
# bound on what the server does to it; the victim's wait for its CPU is
# printed beside it, and the server's GC cycles.
# The flood comes from 127.0.0.2, the victim from
# 127.0.0.1 (so a per-source bound can tell them apart).
# For each --h3-initial-filter in FILTERS (true: over-rate Initials
# dropped at the socket; false: quic-go refuses each, the way before) and
# each --h3-handshake-rate in RATES, ROUNDS rounds of: the victim
# quiet, then under each flood MODE (h3flood -mode initials: a reused
# ClientHello in new connections' Initial packets, the server doing the
# key exchange and signature; dial: quic-go handshakes closed once up;
# noread: 10 connections x 100 GETs of /users whose bodies are never read,
# with EXTRA="--seed-users 100000" a 12 MB list each; reset: the same, each
# stream reset once its reply's headers are in).
# The server runs under prlimit --as=4GiB (an attack must not take the
# machine). Printed per run: the victim's p99 latency (from the intended
# send; a flood's also as a multiple of the round's quiet p99), service
# time and requests answered, the flood's rate and the refusals it got back, and the
# server's CPU over the run, its counters of Initials dropped (by the
# filter) and refused (by quic-go), the handshake gate's time held and
# rested (--h3-handshake-share) and the handshakes that waited for it, the Initials
# answered with a Retry (--h3-retry-after), the flooder's own CPU (on the
# victim's CPU), the time its threads waited for a CPU (the
# machine's other work), and the datagrams the kernel dropped for a full
# socket buffer (every UDP socket of the machine).
#
# usage: [FILTERS="true false"] [RATES="-1 1000 100"] [MODES="initials dial"] [ROUNDS=2] [SECS=5]
#        [SERVER_ENV="GOGC=400"] [VICTIM_RATE=200] [FLOOD_RATE=2000 (new connections/s; 0: as fast
#        as it can)] [EXTRA="serve flags"] [FLOOD_ARGS="h3flood flags", e.g. "-conns 60 -streams 1"]
#        bench/h3-flood.sh
# On a shared machine: flock /tmp/wirebench-load.lock bench/h3-flood.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FILTERS=${FILTERS:-true false} RATES=${RATES:--1 1000 100} MODES=${MODES:-initials dial} ROUNDS=${ROUNDS:-2} SECS=${SECS:-5}
VICTIM_RATE=${VICTIM_RATE:-200} FLOOD_RATE=${FLOOD_RATE:-2000} EXTRA=${EXTRA:-}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
if [ -z "${BIN:-}" ]; then
  go build -o "$tmp/wirebench" ./cmd/wirebench
  go build -o "$tmp/h3flood" ./bench/h3flood
  BIN=$tmp
fi
hz=$(getconf CLK_TCK)
timer=()
[ ! -x /usr/bin/time ] || timer=(/usr/bin/time -f "flooder CPU %U s user + %S s sys (%P of a CPU)")
cpu() { awk '{print $14+$15}' "/proc/$srv/stat"; }
# runq: nanoseconds the server's threads waited for a CPU (schedstat), so a
# run starved by the machine's other work shows.
runq() { cat /proc/"${1:-$srv}"/task/*/schedstat 2>/dev/null | awk '{s+=$2} END {printf "%.0f\n", s}'; }
# rcvbuf: datagrams the kernel dropped for a full socket buffer (all sockets).
rcvbuf() { awk '/^Udp:/ {n++} /^Udp:/ && n==2 {print $6}' /proc/net/snmp; }
metric() { curl -s "http://$http/metrics" | awk -v m="$1" '$1==m {print $2}'; }
# lane STATE: seconds the handshake gate's lanes were held or rested (0 without it).
lane() { curl -s "http://$http/metrics" | awk -v s="state=\"$1\"" 'index($1, "wirebench_h3_handshake_lane_seconds_total{") == 1 && index($1, s) {v=$2} END {print v+0}'; }
# dropped: the Initials the socket filter dropped, every reason.
dropped() { curl -s "http://$http/metrics" | awk '$1 ~ /^wirebench_h3_dropped_initials_total/ {s+=$2} END {print s+0}'; }

# victim MODE: one open-loop run of SECS+1 s, the flood of MODE (none:
# quiet) from 0.5 s in, once the victim's connection is up, to its end;
# prints its p99s beside the server's CPU.
victim() {
  local c0 r0 q0 s0 w0 d0 v f=
  c0=$(cpu) r0=$(metric wirebench_h3_rate_refused_initials_total) q0=$(metric wirebench_h3_refused_initials_total)
  s0=$(metric wirebench_h3_source_refused_initials_total) x0=$(dropped) rt0=$(metric wirebench_h3_retries_total)
  w0=$(runq) d0=$(rcvbuf) h0=$(lane held) e0=$(lane rested) g0=$(metric wirebench_h3_handshakes_queued_total)
  gc0=$(metric go_gc_cycles_total_gc_cycles_total) al0=$(metric go_gc_heap_allocs_bytes_total)
  taskset -c "$client_cpu" "$BIN/wirebench" load --transport h3 -k -r "$VICTIM_RATE" -c 16 --conns 1 \
    -d "$((SECS + 1))s" "https://$h3/users/1" > "$tmp/v.out" 2>&1 &
  v=$!
  # The victim's threads' wait for its CPU, sampled just before it ends
  # (its schedstat goes with it).
  echo 0 > "$tmp/vwait"
  ( while kill -0 "$v" 2>/dev/null; do
      w=$(runq "$v")
      [ "${w:-0}" = 0 ] || echo "$w" > "$tmp/vwait"
      sleep 0.2
    done ) &
  local vs=$!
  : > "$tmp/flood.out"
  if [ "$1" != quiet ]; then
    sleep 0.5
    local mode=(-mode "$1")
    [ "$1" != reset ] || mode=(-mode noread -reset)
    # shellcheck disable=SC2206
    mode+=(${FLOOD_ARGS:-})
    # The flooder's own CPU (user + sys), on the victim's CPU.
    "${timer[@]}" taskset -c "$client_cpu" nice -n 19 "$BIN/h3flood" "${mode[@]}" -c 16 -rate "$FLOOD_RATE" -d "$((SECS + 1))s" "$h3" > "$tmp/flood.out" 2>&1 &
    f=$!
  fi
  wait "$v" || true
  [ -z "$f" ] || wait "$f" || true
  wait "$vs" || true
  local lat svc fail
  lat=$(awk '/^  latency \(from intended send\)/ {print $9}' "$tmp/v.out")
  # Against the round's quiet p99 (the goal: under 2x).
  local ms ratio=
  ms=$(echo "$lat" | awk '{v=$0+0} /µs$|us$/ {v/=1000} /[0-9]s$/ && !/ms$/ {v*=1000} {print v}')
  if [ "$1" = quiet ]; then quiet_ms=$ms; elif [ -n "${quiet_ms:-}" ] && [ "$quiet_ms" != 0 ]; then ratio=$(printf ' (%.2fx quiet)' "$(echo "$ms / $quiet_ms" | bc -l)"); fi
  svc=$(awk '/^  service time/ {print $8}' "$tmp/v.out")
  fail=$(awk '/^  requests/ {print $5}' "$tmp/v.out")
  # Answered of the ~VICTIM_RATE x (SECS+1) sent: a p99 over the few a
  # starved victim got answered says nothing.
  local done
  done=$(awk '/^  requests/ {print $2}' "$tmp/v.out")
  printf '%-5s %-6s %-9s victim p99 %-22s service p99 %-9s answered %-5s failed %-4s (waited %4.0f ms for its CPU) server CPU %5.1f%% (waited %4.0f ms) rcvbuf drops %-7s filter drops %-7s refused: source %-7s rate %-7s cap %s\n' \
    "$filter" "$rate" "$1" "$lat$ratio" "$svc" "${done:-0}" "$fail" "$(echo "$(cat "$tmp/vwait") / 1000000" | bc -l)" \
    "$(echo "($(cpu) - $c0) * 100 / $hz / ($SECS + 1)" | bc -l)" "$(echo "($(runq) - $w0) / 1000000" | bc -l)" \
    "$(( $(rcvbuf) - d0 ))" "$(( $(dropped) - x0 ))" "$(( $(metric wirebench_h3_source_refused_initials_total) - s0 ))" \
    "$(( $(metric wirebench_h3_rate_refused_initials_total) - r0 ))" "$(( $(metric wirebench_h3_refused_initials_total) - q0 ))"
  printf '                 gate: lanes held %.2f s, rested %.2f s; %s handshakes waited for one; %s Initials retried; server GC: %s cycles, %.0f MB allocated; server peak RSS %s MiB\n' \
    "$(echo "$(lane held) - $h0" | bc -l)" "$(echo "$(lane rested) - $e0" | bc -l)" "$(( $(metric wirebench_h3_handshakes_queued_total) + 0 - ${g0:-0} ))" \
    "$(( $(metric wirebench_h3_retries_total) + 0 - ${rt0:-0} ))" \
    "$(( $(metric go_gc_cycles_total_gc_cycles_total) - gc0 ))" "$(echo "($(metric go_gc_heap_allocs_bytes_total) - $al0) / 1000000" | bc -l)" \
    "$(awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$srv/status")"
}

for filter in $FILTERS; do
for rate in $RATES; do
  : > "$tmp/srv.out"
  # shellcheck disable=SC2086
  env ${SERVER_ENV:-} prlimit --as=$((4 << 30)) taskset -c "$server_cpu" "$BIN/wirebench" serve --http 127.0.0.1:0 --no-grpc --http3 127.0.0.1:0 \
    --h3-initial-filter="$filter" --h3-handshake-rate "$rate" $EXTRA > "$tmp/srv.out" 2>&1 &
  srv=$!
  for _ in $(seq 50); do grep -q '^listening' "$tmp/srv.out" && break; sleep 0.1; done
  h3=$(grep -o 'h3=[0-9.:]*' "$tmp/srv.out" | cut -d= -f2)
  http=$(grep -o 'http=[0-9.:]*' "$tmp/srv.out" | cut -d= -f2)
  taskset -c "$client_cpu" "$BIN/wirebench" load --transport h3 -k -c 4 --conns 1 -d 1s "https://$h3/users/1" > /dev/null 2>&1 || true
  for _ in $(seq "$ROUNDS"); do
    victim quiet
    for mode in $MODES; do
      victim "$mode"
      sed 's/^/                 /' "$tmp/flood.out"
      sleep 2 # the flood's half-open connections time out (--read-header-timeout) or not: say
      echo "                 open connections 2 s after: $(metric wirebench_h3_open_connections)"
    done
  done
  kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
done
done
