#!/usr/bin/env bash
# Server CPU per call of our gRPC service on grpc-go against a bare grpc-go
# server (issue 41's goal: ≤ 1.0×; DESIGN rule 9: our code is judged against
# a bare server on the same library). bench/grpcgobare is the bare server:
# the same generated UserService on a map, grpc.NewServer()'s defaults.
# ours is `wirebench serve` (--grpc-transport grpc-go, serve's default).
# ghz drives both with the same calls, from pb/wirebench.proto:
#   get    UserService/Get {"id":1}, at each concurrency in UNARY_C
#          (one connection, ghz's default)
#   stream UserService/Stream: a server stream of all 1,000 seeded users, c=1
# Each server is pinned to one CPU, ghz to another (1 s warm-up, then the
# measured run); the server's CPU is utime+stime from /proc/PID/stat across
# the measured run, divided by ghz's call count (a stream is one call), and
# its allocations per call are the runtime's malloc count across the same
# run (ours: /metrics; bare: its SIGUSR1 line). Rounds alternate the two
# servers, each case bare first then ours, so background load hits both
# alike; the ratios are of the means, with the per-round range (min-max of
# ours/bare within a round) beside them.
#
# With BASE=<git revision> that revision's `wirebench serve` (git archive:
# uncommitted changes stay out) runs too, as "base" after ours in every
# round, for an A/B of a change against the same bare server.
#
# BARE_FLAGS adds grpcgobare flags (-stream-workers N: grpc-go's stream
# workers as ours has them; -ballast-kb N): off, the bare server is
# grpc.NewServer()'s defaults, the yardstick.
#
# With LINKED=1 "linked" runs too, after bare in every round: grpcgobare
# built with -tags linked (bench/grpcgobare/linked.go: the library
# packages cmd/wirebench links, their package inits run), bare grpc-go in
# a binary whose libraries are ours, with BARE_FLAGS as bare's. LINKED=pgo
# builds it with cmd/wirebench/default.pgo too, as ours is built.
#
# usage: [UNARY_C="1 50"] [BASE=rev] [LINKED=1|pgo] [SERVE_FLAGS=...] [BARE_FLAGS=...] bench/grpc-cpu.sh [seconds=5] [rounds=3]
# needs: ghz (go install github.com/bojand/ghz/cmd/ghz@v0.93.0), curl,
# taskset; 2 CPUs or more. On a shared machine run it under the load lock:
# flock /tmp/wirebench-load.lock bench/grpc-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} rounds=${2:-3}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
# Every server gets the same GOMAXPROCS on its one CPU: wirebench serve
# runs two Ps there by default (a large encoding must not hold the only
# one), and a bare server given fewer would differ by a runtime knob,
# not by its code. SERVER_PROCS overrides it for all of them.
server_procs=${SERVER_PROCS:-2}
UNARY_C=${UNARY_C:-1 50}
users=1000
PATH=$PATH:$(go env GOPATH)/bin
for tool in ghz curl taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (ghz: go install github.com/bojand/ghz/cmd/ghz@v0.93.0)" >&2; exit 1; }
done
tmp=$(mktemp -d)
. bench/lib.sh
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/wirebench" ./cmd/wirebench
go build -o "$tmp/grpcgobare" ./bench/grpcgobare
kinds="bare ours"
if [ -n "${LINKED:-}" ]; then
  pgo=()
  [ "$LINKED" = pgo ] && pgo=(-pgo=cmd/wirebench/default.pgo)
  go build -tags linked "${pgo[@]}" -o "$tmp/grpcgobare-linked" ./bench/grpcgobare
  kinds="bare linked ours"
fi
if [ -n "${BASE:-}" ]; then
  build_base "$BASE" "$tmp/wirebench-base"
  kinds="$kinds base"
fi
hz=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }


# ghz_run SECONDS CASE: one ghz run against $grpc; prints its summary.
ghz_run() {
  local call=Get data='{"id":1}' c=${2#get-c}
  if [ "$2" = stream ]; then call=Stream data='{}' c=1; fi
  taskset -c "$client_cpu" ghz --insecure --proto pb/wirebench.proto --import-paths pb \
    --call "wirebench.v1.UserService/$call" -d "$data" -c "$c" -z "$1s" "$grpc"
}

# run KIND CASE: one measured run; appends "KIND CASE us/call calls/s allocs/call" to $tmp/results.
run() {
  local kind=$1 case=$2
  # Emptied here, not by the child's redirection: the loop below must not
  # read the previous server's address before the child has truncated it.
  : > "$tmp/out"
  if [ "$kind" = bare ] || [ "$kind" = linked ]; then
    local b=grpcgobare
    [ "$kind" = linked ] && b=grpcgobare-linked
    # shellcheck disable=SC2086 # BARE_FLAGS: grpcgobare's -stream-workers N, -ballast-kb N
    GOMAXPROCS=$server_procs taskset -c "$server_cpu" "$tmp/$b" -seed-users "$users" ${BARE_FLAGS:-} > "$tmp/out" 2>"$tmp/err" &
  else
    local bin=$tmp/wirebench
    [ "$kind" = base ] && bin=$tmp/wirebench-base
    # shellcheck disable=SC2086 # SERVE_FLAGS: extra `wirebench serve` flags
    GOMAXPROCS=$server_procs taskset -c "$server_cpu" "$bin" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --grpc-transport grpc-go \
      --seed-users "$users" --seed-todos 10 ${SERVE_FLAGS:-} > "$tmp/out" 2>"$tmp/err" &
  fi
  srv=$!
  grpc= http=
  for _ in $(seq 200); do
    grpc=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' "$tmp/out")
    http=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$grpc" ] && { [ "$kind" = bare ] || [ "$kind" = linked ] || [ -n "$http" ]; } && break
    sleep 0.05
  done
  [ -n "$grpc" ] || { echo "$kind did not start: $(cat "$tmp/err")" >&2; exit 1; }
  ghz_run 1 "$case" > /dev/null
  local u0 s0 u1 s1 m0 m1 out calls rps
  local mk=$kind # the bare program's way to tell its mallocs, linked or not
  [ "$kind" = linked ] && mk=bare
  m0=$(server_mallocs "$mk")
  read -r u0 s0 < <(cpu_ticks "$srv")
  out=$(ghz_run "$secs" "$case")
  read -r u1 s1 < <(cpu_ticks "$srv")
  m1=$(server_mallocs "$mk")
  kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
  # The calls are those that answered OK. At -z's end ghz closes its
  # connection under the calls in flight ("transport is closing", or
  # Canceled, "the client connection is closing"): one per concurrent
  # worker, and one more that a worker started as the connection closed
  # (seen on the stream at -c 1: both kinds in one run, 2026-11-30 14:35).
  # Any other failure stops the script.
  local all bad c=1
  [ "$case" = stream ] || c=${case#get-c}
  all=$(awk '$1 == "Count:" {print $2}' <<<"$out")
  calls=$(awk '$1 == "[OK]" {print $2}' <<<"$out")
  bad=$(awk '/^Error distribution:/ {e = 1; next} e && /rpc error/ && !/transport is closing|client connection is closing/' <<<"$out")
  if [ -z "$calls" ] || [ -n "$bad" ] || [ $((all - calls)) -gt $((c + 1)) ]; then
    echo "$kind $case: calls that did not answer OK:"$'\n'"$out" >&2; exit 1
  fi
  rps=$(awk -v n="$calls" -v t="$secs" 'BEGIN {printf "%.0f", n / t}')
  awk -v k="$kind" -v c="$case" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$hz" -v n="$calls" -v rps="$rps" -v m=$((m1 - m0)) \
    'BEGIN{printf "%-5s %-9s %8.2f us/call  %8.0f calls/s  %8.1f allocs/call  user %.2f  system %.2f us/call\n", k, c, (u+s)/hz*1e6/n, rps, m/n, u/hz*1e6/n, s/hz*1e6/n}' | tee -a "$tmp/results"
}

cases=
for c in $UNARY_C; do cases="$cases get-c$c"; done
cases="$cases stream"
echo "# $(date -u +%FT%TZ) $(uname -m) $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; server on CPU $server_cpu, ghz on CPU $client_cpu; ${secs}s x $rounds rounds${BARE_FLAGS:+; bare $BARE_FLAGS}${LINKED:+; linked bare too}; $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)"
for round in $(seq "$rounds"); do
  echo "round $round"
  for c in $cases; do
    for k in $kinds; do run "$k" "$c"; done
  done
done
awk '$1 == "bare" {r[$2]++} {k = $1 SUBSEP $2; s[k] += $3; a[k] += $7; n[k]++; x[$1, $2, r[$2]] = $3; cs[$2] = 1; ks[$1] = 1}
  END {
    for (c in cs) order[++nc] = c
    for (i = 1; i <= nc; i++) {
      c = order[i]; mb = s["bare", c] / n["bare", c]
      printf "%-9s server CPU per call: bare %.2f us (%.1f allocs)", c, mb, a["bare", c] / n["bare", c]
      for (kind in ks) {
        if (kind == "bare") continue
        mo = s[kind, c] / n[kind, c]
        # the per-round ratios, sorted (insertion: a handful of rounds)
        for (k = 1; k <= r[c]; k++) {
          q = x[kind, c, k] / x["bare", c, k]
          for (j = k - 1; j >= 1 && v[j] > q; j--) v[j + 1] = v[j]
          v[j + 1] = q
        }
        med = r[c] % 2 ? v[(r[c] + 1) / 2] : (v[r[c] / 2] + v[r[c] / 2 + 1]) / 2
        printf "; %s %.2f us (%.1f allocs): %s/bare %.2f of the means, median of rounds %.2f (range %.2f-%.2f, %d rounds)",
          kind, mo, a[kind, c] / n[kind, c], kind, mo / mb, med, v[1], v[r[c]], r[c]
      }
      if ((("linked", c) in n) && (("ours", c) in n))
        printf "; ours/linked %.2f of the means", s["ours", c] / n["ours", c] / (s["linked", c] / n["linked", c])
      printf "\n"
    }
  }' "$tmp/results"
