#!/usr/bin/env bash
# kv-zipf-vs-redis.sh: wirebench's own client (skewed keys, which
# redis-benchmark cannot draw) against redis-server and wirebench serve
# --resp at matched persistence: servers pinned to CPU 1, the client on
# CPU 0, every value checked. A round starts fresh servers per AOF mode
# and measures every cell (test × pipeline depth) on each server back to
# back, the order alternating cell by cell and round by round (redis
# first, then ours first: ABAB), so a round's ratio pairs two runs a few
# seconds apart. Per cell it prints the rate, p99, the server's CPU per
# request (from /proc), and from perf stat its context switches, socket
# reads and writes and epoll waits per request and its requests per
# event-loop pass (epoll waits that returned events), the client's CPU
# per request, how many CPUs each kept busy (which one was the limit)
# and, with PROF, where it went.
# Run it under the load lock, a few rounds a hold, the rounds collected in
# one RESULTS file, then the verdicts:
#   for i in 1 2 3; do flock /tmp/wirebench-load.lock env RESULTS=r.jsonl ROUNDS=2 scripts/kv-zipf-vs-redis.sh; done
#   ROUNDS=0 RESULTS=r.jsonl scripts/kv-zipf-vs-redis.sh     # the summary alone, no load
# Env: DIST (zipf:0.99), MODES ("everysec always"), TESTS ("set get"),
# PS (pipelines, "1"), C (50), D (measured seconds, 4s), RATE (open loop
# at this many requests/s, -P 1 only: every server gets the same load, so
# the CPU per request compares their cost below saturation), ROUNDS (1),
# RESULTS (a file the rounds' figures are appended to, as JSON lines;
# rounds continue its numbering, so several runs add up to one comparison),
# WB, BASE (a second wirebench binary run beside WB: before/after in one
# run), PROF (a directory: wirebench serve --cpuprofile per mode and perf
# record -g of redis-server, both over the whole server run), QUOTA (CPUs,
# e.g. 0.5: each server in a cgroup of its own under that CFS quota, 2 ms
# period (longer below 0.5 CPU), as study --server-cpu-quota: the server,
# not the client, is then the limit at -P 1).
# Ends with scripts/kvrounds over RESULTS: per cell the ratio ours/redis
# (base/redis) of rate, p99 and server CPU per request, median and range
# over the rounds, the paired estimate with its 95% interval and the
# Wilcoxon signed-rank test's verdict, then each server's system calls per
# request. At -P 1 the client is as busy as the server (each 12-14 us of
# CPU a request), so its CPU per request moves the rate as much: there,
# QUOTA or RATE compares the servers.
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${DIST:-zipf:0.99} MODES=${MODES:-"everysec always"} TESTS=${TESTS:-"set get"} PS=${PS:-1}
C=${C:-50} D=${D:-4s} ROUNDS=${ROUNDS:-1} BASE=${BASE:-} PROF=${PROF:-} RATE=${RATE:-}
QUOTA=${QUOTA:-} RESULTS=${RESULTS:-}
open=(); [ -z "$RATE" ] || open=(-r "$RATE")
tmp=$(mktemp -d)
groups=()
trap 'kill $(jobs -p) 2>/dev/null || true; wait; for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
[ -n "$RESULTS" ] || RESULTS=$tmp/results.jsonl
touch "$RESULTS"
go build -o "$tmp/kvrounds" ./scripts/kvrounds
if [ "$ROUNDS" = 0 ]; then "$tmp/kvrounds" "$RESULTS"; exit; fi
WB=${WB:-$tmp/wirebench}
[ -x "$WB" ] || go build -o "$WB" ./cmd/wirebench
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
# What perf stat counts on a server during a cell: its context switches
# and, where the syscall tracepoints are, its socket reads and writes
# (the AOF's writes count too) and its epoll waits, all of them and those
# that returned events (an event-loop pass; ours also counts the runtime
# netpoller's wait that wakes its loop).
sc=()
if command -v perf >/dev/null && perf stat -e syscalls:sys_enter_read true >/dev/null 2>&1; then
  for e in read write epoll_wait epoll_pwait; do sc+=(-e "syscalls:sys_enter_$e"); done
  for e in epoll_wait epoll_pwait; do sc+=(-e "syscalls:sys_exit_$e" --filter 'ret > 0'); done
fi
# measure port label pid test pipeline: one cell on one server; prints a
# line and appends its figures as JSON to $RESULTS.
measure() {
  local t0 t1 out=$tmp/out.json ps=
  : >"$tmp/cs"
  if command -v perf >/dev/null; then
    perf stat -x, -o "$tmp/cs" -e context-switches "${sc[@]}" -p "$3" 2>/dev/null &
    ps=$!
  fi
  t0=$(ticks "$3")
  taskset -c 0 "$WB" load -q --scenario "kv-$4" --key-dist "$DIST" --no-preload -c "$C" -P "$5" "${open[@]}" -d "$D" \
    --out "$out" --force "redis://127.0.0.1:$1" >/dev/null
  t1=$(ticks "$3")
  [ -z "$ps" ] || { kill -INT "$ps"; wait "$ps" 2>/dev/null || true; }
  python3 - "$out" "$2" "$4" "$5" "$((t1 - t0))" "$(getconf CLK_TCK)" "$tmp/cs" "$round" "$RESULTS" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
n, failed, rps, p99, p999 = r["requests"], r["failed"], r["rps"], r["latency"]["p99_ms"], r["latency"]["p999_ms"]
cpu = int(sys.argv[5]) / int(sys.argv[6]) * 1e6 / n
count = {}
for line in open(sys.argv[7]):
    f = line.strip().split(",")
    if len(f) > 2 and f[0].replace(".", "").isdigit():
        k = f[2].replace("syscalls:sys_", "")
        count[k] = count.get(k, 0) + float(f[0])
def per(*names):
    return sum(count[k] for k in names) / n if all(k in count for k in names) else -1
cs, reads, writes = per("context-switches"), per("enter_read"), per("enter_write")
polls, ready = per("enter_epoll_wait", "enter_epoll_pwait"), per("exit_epoll_wait", "exit_epoll_pwait")
cli = r.get("per_request", {}).get("client_cpu_ns", 0) / 1e3
server, mode = sys.argv[2].split("/")
extra = f"; {cs:.3f} context switches/request" if cs >= 0 else ""
if reads >= 0:
    extra += f"; per request {reads:.3f} reads, {writes:.3f} writes, {polls:.3f} epoll waits; {1 / ready if ready > 0 else 0:.1f} requests per pass"
print(f"round {sys.argv[8]} {sys.argv[2]} {sys.argv[3].upper()} -P{sys.argv[4]}: {rps:.0f} requests/s p99 {p99:.3f} ms p99.9 {p999:.3f} ms; server CPU {cpu:.2f} us/request{extra}; client CPU {cli:.2f} us/request; busy: server {cpu * rps / 1e6:.2f}, client {cli * rps / 1e6:.2f} CPUs; {n} requests, {failed} failed")
row = dict(round=int(sys.argv[8]), server=server, mode=mode, op=sys.argv[3].upper(), p=int(sys.argv[4]), rps=rps, p99_ms=p99, p999_ms=p999,
           cpu_us=cpu, client_cpu_us=cli, cs=cs, reads=reads, writes=writes, polls=polls, ready=ready, requests=n, failed=failed)
with open(sys.argv[9], "a") as f:
    f.write(json.dumps(row) + "\n")
EOF
}
first=$(python3 -c 'import json, sys; print(1 + max([json.loads(l)["round"] for l in open(sys.argv[1]) if l.strip()] or [0]))' "$RESULTS")
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) CPUs; wirebench load --key-dist $DIST -c $C -P {$PS}${RATE:+ -r $RATE} -d $D, 10000 keys, 128 B${QUOTA:+; servers under a quota of $QUOTA CPU each}; rounds $first-$((first + ROUNDS - 1)) into $RESULTS; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$first" $((first + ROUNDS - 1))); do
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
  # The servers of this mode: port label pid, in the order of the first cell.
  srv=("$rp redis/$mode $rpid" "$wp ours/$mode $wpid")
  bpid=
  if [ -n "$BASE" ]; then
    bp=$(port); mkdir -p "$d/b"
    bargs=(); [ "$mode" = none ] || bargs=(--data-dir "$d/b" --appendfsync "$mode")
    taskset -c 1 "$BASE" serve --http 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 \
      --resp "127.0.0.1:$bp" "${bargs[@]}" >/dev/null 2>"$tmp/base.err" &
    bpid=$!
    srv+=("$bp base/$mode $bpid")
  fi
  for p in $rpid $wpid $bpid; do cap "$p"; done
  for s in "${srv[@]}"; do
    read -r p _ _ <<<"$s"
    for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$p" ping >/dev/null || { echo "server on $p did not start:"; cat "$tmp/wb.err"; exit 1; }
  done
  perfpid=
  if [ -n "$PROF" ]; then
    perf record -q -g -o "$PROF/redis-$mode-r$round.perf" -p "$rpid" 2>/dev/null &
    perfpid=$!
  fi
  k=0
  for t in $TESTS; do
    if [ "$t" = get ]; then # a preload of every key (not measured)
      for s in "${srv[@]}"; do
        read -r p _ _ <<<"$s"
        taskset -c 0 "$WB" load -q --scenario kv-get -c 1 -n 1 "redis://127.0.0.1:$p" >/dev/null
      done
    fi
    for pl in $PS; do
      # Rotate who goes first by cell and by round.
      n=${#srv[@]}
      for i in $(seq 0 $((n - 1))); do
        read -r p label pid <<<"${srv[$(((round + k + i + 1) % n))]}"
        measure "$p" "$label" "$pid" "$t" "$pl"
      done
      k=$((k + 1))
    done
  done
  [ -z "$perfpid" ] || { kill -INT "$perfpid"; wait "$perfpid" 2>/dev/null || true; }
  # SIGTERM: serve stops its profile and exits.
  kill $rpid $wpid $bpid; wait $rpid $wpid $bpid 2>/dev/null || true
  for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done; groups=()
  echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$d"
done
done
"$tmp/kvrounds" "$RESULTS"
