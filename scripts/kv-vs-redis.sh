#!/usr/bin/env bash
# kv-vs-redis.sh: redis-benchmark against redis-server and wirebench's RESP
# face at matched persistence (none, AOF everysec, AOF always), in one run:
# servers pinned to CPU 1, redis-benchmark on CPU 0. Run it under the load
# lock: flock /tmp/wirebench-load.lock scripts/kv-vs-redis.sh
# Env: N (requests, 200000), C (connections, 50), P (pipeline, 1),
# ENGINE (loop|own|redcon; empty: serve's default, loop on Linux), MODES ("none everysec always"), ROUNDS (1; rounds
# alternate which server goes first, as the shared machine drifts), WB,
# BASE (a second wirebench binary, e.g. main's, run beside WB as "base":
# before/after in one run), TESTS ("set get"), WARMUP (30000 SETs sent to
# each server, untimed, before its tests; 0: none).
# Ends with each pair's ratio per round (ours/redis, base/redis: rate,
# server CPU per request, the client's CPU per request) and their median and
# range, and the client's busy share against each: quote those, from one
# run, as the machine is shared. Each test's line also has the client's CPU
# per request and how busy it was: at -P 1 on a 2-CPU VM redis-benchmark's
# one thread, not the server, sets the rate (busy 0.97-0.98, docs/kv.md).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200000} C=${C:-50} P=${P:-1} ENGINE=${ENGINE:-} MODES=${MODES:-"none everysec always"} ROUNDS=${ROUNDS:-1}
BASE=${BASE:-} TESTS=${TESTS:-"set get"} WARMUP=${WARMUP:-30000}
WB=${WB:-$(mktemp -d)/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
# cpuns: CPU time (ns) a server's threads have run (schedstat: exact, where
# /proc/PID/stat's clock ticks of 10 ms were 5% of a 30,000-request run;
# %.0f, as mawk's %d stops at 2^31: 2.1 s).
cpuns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
# halts: how often CPU 1 (the servers') has gone idle, from cpuidle. Each
# idle spell ends with the client waking it, and on this VM (halt polling
# off) that wake-up cost the client's write 7.7 us against 0.24 (docs/kv.md):
# a server that is idle more of the run costs the client more a request.
halts() { cat /sys/devices/system/cpu/cpu1/cpuidle/state*/usage 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
# timed OUT CMD...: runs CMD, writing its CPU time and wall time (both in
# us, from getrusage and the clock) to OUT. The children's CPU before the
# call is subtracted: what python3's launcher ran before it exec'd python
# is counted there too (pyenv's shim: 43-48 ms, which put the client's
# busy share at 1.16-1.20 in 30,000-request runs).
timed() {
  python3 -c 'import resource, subprocess, sys, time
cpu = lambda: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(resource.RUSAGE_CHILDREN))
c = cpu(); t = time.monotonic(); rc = subprocess.call(sys.argv[2:]); w = time.monotonic() - t
open(sys.argv[1], "w").write("%d %d\n" % ((cpu() - c) * 1e6, w * 1e6)); sys.exit(rc)' "$@"
}
# bench port label pid: one line per test, with the server's CPU per
# request and the client's (redis-benchmark's, and the share of its run
# it was on the CPU: near 1, the client bounds the rate, not the server),
# and how often the server's CPU went idle.
bench() {
  # Warm-up, not timed (DESIGN rule 7): the keyspace filled, the server's
  # heap and tables grown, as after a while in service. A fresh server's
  # first 30,000 SETs at -P 16 took 40-60 ms, and a Go server grows its
  # heap from 4 MiB through GC cycles meanwhile (two in a -P 1 run, 4 ms
  # each, GODEBUG=gctrace=1), where redis-server has none to run.
  [ "$WARMUP" = 0 ] || timeout 300 taskset -c 0 redis-benchmark -p "$1" -c "$C" -d 128 -r 10000 -n "$WARMUP" -P "$P" -t set -q >/dev/null 2>&1
  for t in $TESTS; do
    local t0 r t1 h0 h1
    t0=$(cpuns "$3") h0=$(halts)
    r=$(timed "$tmp/client" timeout 300 taskset -c 0 redis-benchmark -p "$1" -c "$C" -d 128 -r 10000 -n "$N" -P "$P" -t $t -q 2>/dev/null |
      tr '\r' '\n' | grep -E '^(SET|GET): [0-9.]+ requests')
    t1=$(cpuns "$3") h1=$(halts)
    echo "$2 $r; server CPU $(awk -v d=$((t1 - t0)) -v n="$N" 'BEGIN{printf "%.2f", d/1e3/n}') us/request; client $(awk -v n="$N" '{printf "%.2f us/request, busy %.2f", $1/n, $1/$2}' "$tmp/client"); server CPU idle spells $(awk -v d=$((h1 - h0)) -v n="$N" 'BEGIN{printf "%.3f", d/n}')/request" |
      tee -a "$tmp/results"
  done
}
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; -c $C -d 128 -r 10000 -n $N -P $P, $WARMUP SETs of warm-up; engine ${ENGINE:-default}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
for mode in $MODES; do
  rp=$(port); wp=$(port); d="$tmp/$mode"; mkdir -p "$d/r" "$d/w"
  case $mode in
    none) rargs=(--appendonly no); wargs=() ;;
    *) rargs=(--appendonly yes --appendfsync "$mode"); wargs=(--data-dir "$d/w" --appendfsync "$mode") ;;
  esac
  taskset -c 1 redis-server --port "$rp" --bind 127.0.0.1 --save '' --dir "$d/r" --loglevel warning "${rargs[@]}" >/dev/null 2>&1 &
  rpid=$!
  taskset -c 1 "$WB" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 \
    --resp "127.0.0.1:$wp" ${ENGINE:+--resp-engine "$ENGINE"} "${wargs[@]}" >/dev/null 2>"$tmp/wb.err" &
  wpid=$!
  bp=$wp bpid=
  if [ -n "$BASE" ]; then
    bp=$(port); mkdir -p "$d/b"
    bargs=(); [ $mode = none ] || bargs=(--data-dir "$d/b" --appendfsync "$mode")
    taskset -c 1 "$BASE" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 \
      --resp "127.0.0.1:$bp" ${ENGINE:+--resp-engine "$ENGINE"} "${bargs[@]}" >/dev/null 2>"$tmp/base.err" &
    bpid=$!
  fi
  for p in $rp $wp $bp; do # both must answer before the run
    for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$p" ping >/dev/null || { echo "server on $p did not start:"; cat "$tmp/wb.err"; exit 1; }
  done
  if [ $((round % 2)) = 1 ]; then
    bench "$rp" "redis/$mode" $rpid; bench "$wp" "ours/$mode" $wpid
    [ -z "$BASE" ] || bench "$bp" "base/$mode" $bpid
  else
    [ -z "$BASE" ] || bench "$bp" "base/$mode" $bpid
    bench "$wp" "ours/$mode" $wpid; bench "$rp" "redis/$mode" $rpid
  fi
  kill $rpid $wpid $bpid; wait $rpid $wpid $bpid 2>/dev/null || true
  echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$d"
done
done
# Ratios within each round (a round is one server start per mode), then
# their median and range over the rounds.
awk '
  { split($1, a, "/"); srv = a[1]; key = a[2] " " $2; sub(":", "", key)
    rate[srv, key, ++n[srv, key]] = $3
    for (i = NF; i >= 1; i--) if ($i == "CPU" && $(i + 1) ~ /^[0-9.]+$/) cpu[srv, key, n[srv, key]] = $(i + 1)
    for (i = 1; i <= NF; i++) if ($i == "busy") busy[srv, key, n[srv, key]] = $(i + 1) + 0
    for (i = 1; i <= NF; i++) if ($i == "client") ccpu[srv, key, n[srv, key]] = $(i + 1)
    keys[key] = 1 }
  function report(what, srv, key,   k, i, r, c, m) {
    m = n[srv, key]; if (m == 0 || n["redis", key] < m) return
    r = ""; c = ""
    for (i = 1; i <= m; i++) { rr[i] = rate[srv, key, i] / rate["redis", key, i]; cc[i] = cpu[srv, key, i] / cpu["redis", key, i]; bo[i] = busy[srv, key, i]; br[i] = busy["redis", key, i]; kc[i] = ccpu[srv, key, i] / ccpu["redis", key, i] }
    printf "# %s/redis %s: rate %s; CPU per request %s; client CPU per request %s; client busy with %s %s, with redis %s\n", srv, key, summary(rr, m), summary(cc, m), summary(kc, m), srv, summary(bo, m), summary(br, m)
  }
  function summary(v, m,   i, j, t, s) {
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    s = ""; for (i = 1; i <= m; i++) s = s sprintf("%.2f ", v[i])
    return sprintf("%s(median %.2f, range %.2f-%.2f)", s, (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2, v[1], v[m])
  }
  END { for (k in keys) { report("ratio", "ours", k); report("ratio", "base", k) } }
' "$tmp/results" | sort
