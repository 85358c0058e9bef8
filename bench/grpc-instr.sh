#!/usr/bin/env bash
# grpc-instr.sh — our gRPC server's user-space instructions per unary call
# against a bare grpc-go server's (bench/grpcgobare), the figure that holds
# still where CPU time per call swings by ±5-10% between rounds
# (bench/grpc-cpu.sh). As bench/h3-instr.sh does for HTTP/3: a server runs
# under valgrind's cachegrind through N1 and then, in a second process, N2
# `ghz -c C` unary calls of UserService/Get {"id":1} (one connection,
# ghz's default); the difference of the two instruction totals over N2-N1
# is the instructions per call, start-up and shutdown cancelled out. ours
# is `wirebench serve --grpc-transport grpc-go` with bench/grpc-cpu.sh's
# flags; both at GOMAXPROCS=2 (valgrind runs one thread at a time either
# way). It counts the program's code, grpc-go, protobuf and the Go runtime
# (the GC included), not the kernel's work. Each line also gives the GC
# cycles of the difference per 10,000 calls (the runtime's count at each
# run's end, from GODEBUG=gctrace=1's lines).
# With CASE=stream the calls are UserService/Stream instead, a server
# stream of all 1,000 seeded users each, one at a time (ghz -c 1), as
# bench/grpc-cpu.sh's stream case; give counts of calls to match, e.g. 20 100.
# With BASE=<git revision> that revision's `wirebench serve` runs too, as
# "base", for an A/B of a change against the same bare server; with
# BIN=DIR the binaries DIR/wirebench and DIR/grpcgobare are used as they
# are (DIR/wirebench-base too, with BASE=prebuilt; DIR/grpcgobare-linked
# with LINKED=1).
# BARE_FLAGS adds grpcgobare flags: `-stream-workers 64` gives the bare
# server grpc-go's stream workers as ours has them (the two then differ by
# code only), `-ballast-kb N` N kB more live heap (the one binary's).
# With LINKED=1 "linked" runs too, between bare and ours: grpcgobare built
# with -tags linked (bench/grpcgobare/linked.go: the library packages
# cmd/wirebench links, their package inits run), bare grpc-go in a binary
# whose libraries are ours, with BARE_FLAGS as bare's; linked/bare is what
# the one binary's libraries cost, ours/linked what our code does.
# LINKED=pgo: linked is built with cmd/wirebench/default.pgo too, as
# `go build ./cmd/wirebench` builds ours (PGO's inlining moves
# instructions a call in grpc-go, x/net and the runtime).
# With PROFILE=DIR the difference of each kind's two runs (cg_diff) is kept
# as DIR/KIND.cg: `cg_annotate DIR/ours.cg` gives instructions by function
# (divide by N2-N1 for per call).
# usage: [REPS=1] [C=50] [CASE=get|stream] [BASE=rev] [LINKED=1|pgo] [BIN=DIR] [PROFILE=DIR] [SERVE_FLAGS=...] [BARE_FLAGS=...] bench/grpc-instr.sh [N1=2000] [N2=10000]
# needs: valgrind, ghz (go install github.com/bojand/ghz/cmd/ghz@v0.93.0),
# taskset. About 2 minutes a rep at the default counts. On a shared
# machine: flock /tmp/wirebench-load.lock bench/grpc-instr.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${1:-2000} n2=${2:-10000}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
C=${C:-50} REPS=${REPS:-1} CASE=${CASE:-get}
call=Get data='{"id":1}'
if [ "$CASE" = stream ]; then call=Stream data='{}' C=1; fi
users=1000
PATH=$PATH:$(go env GOPATH)/bin
for tool in valgrind ghz taskset; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y valgrind util-linux; go install github.com/bojand/ghz/cmd/ghz@v0.93.0)" >&2; exit 1; }
done
[ "$n2" -gt "$n1" ] || { echo "N2 ($n2) must be more than N1 ($n1)" >&2; exit 2; }
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
. bench/lib.sh
kinds="bare ours"
if [ -z "${BIN:-}" ]; then
  go build -o "$tmp/wirebench" ./cmd/wirebench
  go build -o "$tmp/grpcgobare" ./bench/grpcgobare
  if [ -n "${LINKED:-}" ]; then
    pgo=()
    [ "$LINKED" = pgo ] && pgo=(-pgo=cmd/wirebench/default.pgo)
    go build -tags linked "${pgo[@]}" -o "$tmp/grpcgobare-linked" ./bench/grpcgobare
  fi
  BIN=$tmp
fi
if [ -n "${LINKED:-}" ]; then
  [ -x "$BIN/grpcgobare-linked" ] || { echo "LINKED=1: no $BIN/grpcgobare-linked (go build -tags linked -o $BIN/grpcgobare-linked ./bench/grpcgobare)" >&2; exit 1; }
  kinds="bare linked ours"
fi
if [ -n "${BASE:-}" ]; then
  [ "$BASE" = prebuilt ] || build_base "$BASE" "$BIN/wirebench-base"
  kinds="$kinds base"
fi
[ -n "${PROFILE:-}" ] && mkdir -p "$PROFILE"

# run KIND N: a server under cachegrind through N calls; "Ir cycles" into $tmp/r.N.
run() {
  local kind=$1 n=$2 cg="$tmp/$1.$2.cg" bin=$BIN/wirebench out
  : > "$tmp/out"
  local pre=(env GODEBUG=gctrace=1 GOMAXPROCS=2 taskset -c "$server_cpu" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$cg")
  if [ "$kind" = bare ] || [ "$kind" = linked ]; then
    local b=grpcgobare
    [ "$kind" = linked ] && b=grpcgobare-linked
    # shellcheck disable=SC2086 # BARE_FLAGS: -stream-workers N, -ballast-kb N
    "${pre[@]}" "$BIN/$b" -seed-users "$users" ${BARE_FLAGS:-} > "$tmp/out" 2> "$tmp/err" &
  else
    [ "$kind" = base ] && bin=$BIN/wirebench-base
    # shellcheck disable=SC2086 # SERVE_FLAGS: extra `wirebench serve` flags
    "${pre[@]}" "$bin" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --grpc-transport grpc-go \
      --seed-users "$users" --seed-todos 10 ${SERVE_FLAGS:-} > "$tmp/out" 2> "$tmp/err" &
  fi
  srv=$!
  local grpc=
  for _ in $(seq 600); do
    grpc=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$grpc" ] && break
    sleep 0.1
  done
  [ -n "$grpc" ] || { echo "$kind server did not start: $(cat "$tmp/err")" >&2; exit 1; }
  out=$(taskset -c "$client_cpu" ghz --insecure --proto pb/wirebench.proto --import-paths pb \
    --call "wirebench.v1.UserService/$call" -d "$data" -c "$C" -n "$n" "$grpc")
  grep -Eq "^ *\[OK\] +$n responses" <<<"$out" || { echo "$kind, $n calls: $out" >&2; exit 1; }
  kill -TERM "$srv"; wait "$srv" 2>/dev/null || true; srv=
  echo "$(sed -n 's/^summary: //p' "$cg") $(grep -c '^gc ' "$tmp/err")" > "$tmp/r.$n"
}

echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); server on CPU $server_cpu, ghz on CPU $client_cpu; $call, -c $C, N1 $n1, N2 $n2, $REPS reps${BARE_FLAGS:+, bare $BARE_FLAGS}${LINKED:+, linked bare too}${SERVE_FLAGS:+, ours $SERVE_FLAGS}; $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)"
: > "$tmp/results"
for rep in $(seq "$REPS"); do
  for k in $kinds; do
    run "$k" "$n1"
    run "$k" "$n2"
    [ -z "${PROFILE:-}" ] || cg_diff "$tmp/$k.$n1.cg" "$tmp/$k.$n2.cg" > "$PROFILE/$k.cg"
    read -r i1 g1 < "$tmp/r.$n1"
    read -r i2 g2 < "$tmp/r.$n2"
    awk -v k="$k" -v n=$((n2 - n1)) -v i=$((i2 - i1)) -v g=$((g2 - g1)) \
      'BEGIN { printf "%-4s %9.0f instr/call  %5.2f GC cycles per 10k calls\n", k, i / n, g * 10000 / n
               printf "%s %.0f %.2f\n", k, i / n, g * 10000 / n >> "'"$tmp/results"'" }'
  done
done
echo "# end $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk '{ s[$1] += $2; c[$1]++; g[$1] += $3
       if (!($1 in lo) || $2 < lo[$1]) lo[$1] = $2
       if (!($1 in hi) || $2 > hi[$1]) hi[$1] = $2 }
  END {
    b = s["bare"] / c["bare"]
    printf "instructions per call: bare %.0f (%.1f GC cycles/10k)", b, g["bare"] / c["bare"]
    split("linked ours base", others, " ")
    for (o = 1; o <= 3; o++) {
      k = others[o]
      if (!(k in c)) continue
      printf "; %s %.0f (%.1f GC cycles/10k), %s/bare %.3f", k, s[k] / c[k], g[k] / c[k], k, s[k] / c[k] / b
      if (c[k] > 1) printf " (reps %.3f-%.3f)", lo[k] / b, hi[k] / b
    }
    if ("linked" in c) printf "; ours/linked %.3f", s["ours"] / c["ours"] / (s["linked"] / c["linked"])
    printf "\n"
  }' "$tmp/results"
