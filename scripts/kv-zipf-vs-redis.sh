#!/usr/bin/env bash
# kv-zipf-vs-redis.sh: wirebench's own client (skewed keys, which
# redis-benchmark cannot draw) against redis-server and wirebench serve
# --resp at matched persistence, in one run: servers pinned to CPU 1, the
# client on CPU 0, every value checked. Per cell it prints the rate, p99,
# the server's CPU per request (from /proc), its context switches per
# request (perf stat, when perf is there), the client's CPU per request,
# how many CPUs each kept busy (which one was the limit) and, with PROF,
# where it went.
# Run it under the load lock:
#   flock /tmp/wirebench-load.lock scripts/kv-zipf-vs-redis.sh
# Env: DIST (zipf:0.99), MODES ("everysec always"), TESTS ("set get"),
# PS (pipelines, "1"), C (50), D (measured seconds, 4s), RATE (open loop
# at this many requests/s, -P 1 only: every server gets the same load, so
# the CPU per request compares their cost below saturation), ROUNDS (1; rounds
# alternate which server goes first), WB, BASE (a second wirebench binary
# run beside WB: before/after in one run), PROF (a directory: wirebench
# serve --cpuprofile per mode and perf record -g of redis-server, both over
# the whole server run), QUOTA (CPUs, e.g. 0.5: each server in a cgroup of
# its own under that CFS quota, 2 ms period (longer below 0.5 CPU), as study --server-cpu-quota:
# the server, not the client, is then the limit at -P 1).
# Ends with each pair's ratio per round (ours/redis, base/redis: rate,
# p99, p99.9, server and client CPU per request) and their median and
# range. At -P 1 the client is as busy as the server (each 12-14 us of
# CPU a request), so its CPU per request moves the rate as much: there,
# QUOTA or RATE compares the servers.
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${DIST:-zipf:0.99} MODES=${MODES:-"everysec always"} TESTS=${TESTS:-"set get"} PS=${PS:-1}
C=${C:-50} D=${D:-4s} ROUNDS=${ROUNDS:-1} BASE=${BASE:-} PROF=${PROF:-} RATE=${RATE:-}
QUOTA=${QUOTA:-}
open=(); [ -z "$RATE" ] || open=(-r "$RATE")
WB=${WB:-$(mktemp -d)/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
tmp=$(mktemp -d)
groups=()
trap 'kill $(jobs -p) 2>/dev/null || true; wait; for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
# cap pid: a cgroup of its own under QUOTA CPUs, 2 ms period (cgroup v2's
# cpu.max or v1's cfs_quota_us); named as internal/cpuquota's groups, so
# a later wirebench run removes one this script left behind.
cap() {
  [ -n "$QUOTA" ] || return 0
  local period quota g
  # 2 ms, or longer where the quota would fall under the kernel's 1 ms.
  read -r quota period < <(python3 -c "import math, sys; q = float(sys.argv[1]); p = max(2000, math.ceil(1000 / q)); print(round(q * p), p)" "$QUOTA")
  if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
    g=/sys/fs/cgroup/wirebench-$$-$1; mkdir "$g"; groups+=("$g")
    echo "$quota $period" >"$g/cpu.max"
  else
    g=/sys/fs/cgroup/cpu/wirebench-$$-$1; mkdir "$g"; groups+=("$g")
    echo $period >"$g/cpu.cfs_period_us"; echo "$quota" >"$g/cpu.cfs_quota_us"
  fi
  echo "$1" >"$g/cgroup.procs"
}
[ -z "$PROF" ] || mkdir -p "$PROF"
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
# bench port label pid: each test at each pipeline depth; GET after a
# preload of every key (not measured).
bench() {
  local t p t0 t1 out
  for t in $TESTS; do
    [ "$t" = get ] && taskset -c 0 "$WB" load -q --scenario kv-get -c 1 -n 1 "redis://127.0.0.1:$1" >/dev/null
    for p in $PS; do
      out="$tmp/out.json"
      ps=
      if command -v perf >/dev/null; then
        perf stat -x, -o "$tmp/cs" -e context-switches -p "$3" 2>/dev/null &
        ps=$!
      fi
      t0=$(ticks "$3")
      taskset -c 0 "$WB" load -q --scenario "kv-$t" --key-dist "$DIST" --no-preload -c "$C" -P "$p" "${open[@]}" -d "$D" \
        --out "$out" --force "redis://127.0.0.1:$1" >/dev/null
      t1=$(ticks "$3")
      cs=
      if [ -n "$ps" ]; then
        kill -INT "$ps"; wait "$ps" 2>/dev/null || true
        cs=$(awk -F, '/context-switches/{print $1}' "$tmp/cs")
      fi
      python3 - "$out" "$2" "$t" "$p" "$((t1 - t0))" "$(getconf CLK_TCK)" "$cs" <<'EOF' | tee -a "$tmp/results"
import json, sys
r = json.load(open(sys.argv[1]))
n, failed, rps, p99, p999 = r["requests"], r["failed"], r["rps"], r["latency"]["p99_ms"], r["latency"]["p999_ms"]
cpu = int(sys.argv[5]) / int(sys.argv[6]) * 1e6 / n
cs = f"; {int(sys.argv[7]) / n:.3f} context switches/request" if sys.argv[7].isdigit() else ""
cli = r.get("per_request", {}).get("client_cpu_ns", 0) / 1e3
print(f"{sys.argv[2]} {sys.argv[3].upper()} -P{sys.argv[4]}: {rps:.0f} requests/s p99 {p99:.3f} ms p99.9 {p999:.3f} ms; server CPU {cpu:.2f} us/request{cs}; client CPU {cli:.2f} us/request; busy: server {cpu * rps / 1e6:.2f}, client {cli * rps / 1e6:.2f} CPUs; {n} requests, {failed} failed")
EOF
    done
  done
}
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; wirebench load --key-dist $DIST -c $C -P {$PS}${RATE:+ -r $RATE} -d $D, 10000 keys, 128 B${QUOTA:+; servers under a quota of $QUOTA CPU each}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
for mode in $MODES; do
  rp=$(port); wp=$(port); d="$tmp/$mode"; mkdir -p "$d/r" "$d/w"
  case $mode in
    none) rargs=(--appendonly no); wargs=() ;;
    *) rargs=(--appendonly yes --appendfsync "$mode"); wargs=(--data-dir "$d/w" --appendfsync "$mode") ;;
  esac
  taskset -c 1 redis-server --port "$rp" --bind 127.0.0.1 --save '' --dir "$d/r" --loglevel warning "${rargs[@]}" >/dev/null 2>&1 &
  rpid=$!
  prof=(); [ -z "$PROF" ] || prof=(--cpuprofile "$PROF/ours-$mode-r$round.pprof")
  taskset -c 1 "$WB" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 \
    --resp "127.0.0.1:$wp" "${wargs[@]}" "${prof[@]}" >/dev/null 2>"$tmp/wb.err" &
  wpid=$!
  bp=$wp bpid=
  if [ -n "$BASE" ]; then
    bp=$(port); mkdir -p "$d/b"
    bargs=(); [ "$mode" = none ] || bargs=(--data-dir "$d/b" --appendfsync "$mode")
    taskset -c 1 "$BASE" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 \
      --resp "127.0.0.1:$bp" "${bargs[@]}" >/dev/null 2>"$tmp/base.err" &
    bpid=$!
  fi
  for p in $rpid $wpid $bpid; do cap "$p"; done
  for p in $rp $wp $bp; do
    for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$p" ping >/dev/null || { echo "server on $p did not start:"; cat "$tmp/wb.err"; exit 1; }
  done
  perfpid=
  if [ -n "$PROF" ]; then
    perf record -q -g -o "$PROF/redis-$mode-r$round.perf" -p "$rpid" 2>/dev/null &
    perfpid=$!
  fi
  if [ $((round % 2)) = 1 ]; then
    bench "$rp" "redis/$mode" $rpid; bench "$wp" "ours/$mode" $wpid
    [ -z "$BASE" ] || bench "$bp" "base/$mode" $bpid
  else
    [ -z "$BASE" ] || bench "$bp" "base/$mode" $bpid
    bench "$wp" "ours/$mode" $wpid; bench "$rp" "redis/$mode" $rpid
  fi
  [ -z "$perfpid" ] || { kill -INT "$perfpid"; wait "$perfpid" 2>/dev/null || true; }
  # SIGTERM: serve stops its profile and exits.
  kill $rpid $wpid $bpid; wait $rpid $wpid $bpid 2>/dev/null || true
  for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done; groups=()
  echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$d"
done
done
# Ratios within each round, then their median and range over the rounds.
awk '
  { split($1, a, "/"); srv = a[1]; key = a[2] " " $2 " " $3; sub(":$", "", key)
    i = ++n[srv, key]; rate[srv, key, i] = $4
    for (j = 1; j <= NF; j++) { if ($j == "p99") p99[srv, key, i] = $(j + 1); if ($j == "p99.9") p999[srv, key, i] = $(j + 1); if ($j == "CPU" && $(j - 1) == "server") cpu[srv, key, i] = $(j + 1); if ($j == "CPU" && $(j - 1) == "client") ccpu[srv, key, i] = $(j + 1) }
    keys[key] = 1 }
  function report(srv, key,   i, m) {
    m = n[srv, key]; if (m == 0 || n["redis", key] < m) return
    for (i = 1; i <= m; i++) { rr[i] = rate[srv, key, i] / rate["redis", key, i]; pp[i] = p99[srv, key, i] / p99["redis", key, i]; qq[i] = p999[srv, key, i] / p999["redis", key, i]; cc[i] = cpu[srv, key, i] / cpu["redis", key, i]; kk[i] = ccpu[srv, key, i] / ccpu["redis", key, i] }
    printf "# %s/redis %s: rate %s; p99 %s; p99.9 %s; server CPU per request %s; client CPU per request %s\n", srv, key, summary(rr, m), summary(pp, m), summary(qq, m), summary(cc, m), summary(kk, m)
  }
  function summary(v, m,   i, j, t, s) {
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    s = ""; for (i = 1; i <= m; i++) s = s sprintf("%.2f ", v[i])
    return sprintf("%s(median %.2f, range %.2f-%.2f)", s, (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2, v[1], v[m])
  }
  END { for (k in keys) { report("ours", k); report("base", k) } }
' "$tmp/results" | sort
