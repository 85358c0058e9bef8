#!/usr/bin/env bash
# scoreboard.sh: every speed ratio wirebench promises, in one run, as one
# table (median and range of the per-round ratios; lower is better for CPU
# per request, higher for rates). Each row comes from the bench script
# that owns it, run here with short settings; those scripts pin the
# server to CPU 1 and the client to CPU 0 and alternate their contenders
# round by round, so background load hits both alike:
#   client vs wrk           bench/wrk-vs-wirebench.sh (client CPU/request, keep-alive)
#   server vs bare          bench/engine-cpu-interleaved.sh (server CPU/request:
#                           net/http engine vs bare net/http, fasthttp engine vs bare fasthttp;
#                           again against both built with our PGO profile, like for like)
#   gRPC vs bare grpc-go    bench/grpc-cpu.sh (server CPU/call: unary -c 50, a stream of 1,000;
#                           against the default bare server, then one given our stream workers,
#                           and that one linked like ours and built with our PGO profile)
#   KV vs redis-server      scripts/kv-vs-redis.sh (rate and server CPU/request, per
#                           fsync mode, -P 1 and -P 16; at -P 1 also the client's
#                           CPU share, which says the rate there is the client's)
#   bulk vs sqlite3 .import scripts/bulk-judge.sh (wall time of 200k rows, and the server's
#                           RssAnon peak; ROUNDS runs of the judge)
#   h3 vs bare quic-go      bench/h3-cpu.sh (server and client CPU/request, also
#                           against bare linked like ours and built with our PGO
#                           profile; server allocations/request; the
#                           client again with --no-layers, without quic-go's trace,
#                           sequential and paired)
#   h3instr (not in the default list; ONLY=h3instr) bench/h3-instr.sh (instructions
#                           per request under valgrind, server and client, the
#                           client again with --no-layers, and against a bare
#                           client carrying the same trace: the figures that
#                           hold still on a busy machine; ~5 minutes, one rep)
#   grpcinstr (not in the default list; ONLY=grpcinstr) bench/grpc-instr.sh
#                           (the gRPC server's instructions per call under
#                           valgrind: unary -c 50 and a stream of 1,000; ~2
#                           minutes, one rep each)
# Each script takes the load lock for itself (each hold a few minutes at
# most), so other users of the machine get turns between them.
#
# usage: [ROUNDS=3] [SECS=3] [IREPS=2] [RAW=DIR] [ONLY="client server grpc kv bulk h3 h3instr grpcinstr"] scripts/scoreboard.sh
# needs: what those scripts need (wrk, ghz, redis-server, redis-benchmark,
# sqlite3, curl, taskset, /usr/bin/time). The full run holds the lock for
# about 9 minutes in turns (bulk: one turn a round, ~10 s each); the h3
# part takes three (about 2 minutes at ROUNDS=3 SECS=3: server and client,
# the client with --no-layers, and that pair again run at once, PAIRED=1).
# The instruction parts (h3instr, grpcinstr; not in the default ONLY) run
# each program IREPS times under valgrind, ~2 minutes a rep for h3instr,
# ~1 for each gRPC case; their rows are the median and range of the reps.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
ROUNDS=${ROUNDS:-3} SECS=${SECS:-3} ONLY=${ONLY:-client server grpc kv bulk h3}
IREPS=${IREPS:-2} # the instruction parts' repeats (under valgrind: minutes each)
lock=/tmp/wirebench-load.lock
tmp=$(mktemp -d)
# RAW=DIR keeps every part's own output there (the per-round lines the
# table's medians come from).
trap '[ -n "${RAW:-}" ] && mkdir -p "$RAW" && cp -r "$tmp"/. "$RAW"/; rm -rf "$tmp"' EXIT
rows=$tmp/rows
: > "$rows"

# row PROMISE MEDIAN RANGE ROUNDS BAR
row() { printf '| %s | %s | %s | %s | %s |\n' "$@" >> "$rows"; }

# medrange: the per-round ratios on stdin (one a line) as "median<TAB>min-max<TAB>n".
medrange() {
  sort -g | awk '{v[NR] = $1} END {if (!NR) {print "-\t-\t0"; exit}
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f\t%.2f-%.2f\t%d\n", m, v[1], v[NR], NR}'
}

# medrange3: medrange to three decimals (instruction counts agree to ±1-2%).
medrange3() {
  sort -g | awk '{v[NR] = $1} END {if (!NR) {print "-\t-\t0"; exit}
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.3f\t%.3f-%.3f\t%d\n", m, v[1], v[NR], NR}'
}

run() { # NAME CMD...: runs a bench under the lock, its output kept in $tmp/NAME
  local name=$1; shift
  echo "== $name: $*" >&2
  if ! flock "$lock" "$@" > "$tmp/$name" 2>&1; then
    echo "$name failed:" >&2; tail -20 "$tmp/$name" >&2
    return 1
  fi
}

start=$(date -u +%FT%TZ) load0=$(cut -d' ' -f1-3 /proc/loadavg)

for part in $ONLY; do
  case $part in
  client)
    if run client env MODES=keepalive bench/wrk-vs-wirebench.sh "$SECS" 50 "$ROUNDS"; then
      IFS=$'\t' read -r m r n < <(awk '$1 == "keepalive" && $3 == "wrk" {w[$2] = $6} $1 == "keepalive" && $3 == "wirebench-lean" {o[$2] = $6}
        END {for (k in o) if (w[k]) print o[k] / w[k]}' "$tmp/client" | medrange)
      row "load client CPU/request vs wrk (keep-alive, 50 conns)" "$m" "$r" "$n" "≤ 1.0 (0.84 quiet)"
    fi ;;
  server)
    # BARE_PGO=1: the bare handlers again, built with our PGO profile as
    # wirebench is (the profile speeds up net/http's and fasthttp's code in
    # ours): the like-for-like rows, beside the promise's.
    if run server env BARE_PGO=1 bench/engine-cpu-interleaved.sh "$((ROUNDS * 2))" "$SECS"; then
      for pair in "nethttp bare ≤_1.0 net/http" "fasthttp barefast ≤_1.0 fasthttp" \
        "nethttp barepgo none:_like_for_like net/http built with our PGO profile" "fasthttp barefastpgo none:_like_for_like fasthttp built with our PGO profile"; do
        read -r ours bare bar what <<<"$pair"
        IFS=$'\t' read -r m r n < <(awk -v o="$ours" -v b="$bare" '$1 == "round" {for (i = 3; i < NF; i += 3) v[$i] = $(i + 1); if (v[b] > 0) print v[o] / v[b]; delete v}' "$tmp/server" | medrange)
        row "server CPU/request, $ours engine vs bare $what (GET /users/1)" "$m" "$r" "$n" "${bar//_/ }"
      done
    fi ;;
  grpc)
    # Against grpc.NewServer()'s defaults (what a user writes), then against
    # a bare server given the options ours sets (grpcapi.StreamWorkers, 64
    # stream workers): the first is the promise, the second what our code
    # and the one binary cost beside the same grpc-go setup.
    # The second run has a third contender (LINKED=pgo): the bare server
    # with our options, the libraries the one binary links (their inits)
    # and our PGO profile: what our own code adds, like for like.
    for bare in "default::" "same-options:-stream-workers 64:pgo"; do
      IFS=: read -r kind flags linked <<<"$bare"
      if run "grpc-$kind" env UNARY_C=50 BARE_FLAGS="$flags" LINKED="$linked" bench/grpc-cpu.sh "$SECS" "$ROUNDS"; then
        for c in get-c50 stream; do
          IFS=$'\t' read -r m r n < <(awk -v c="$c" '$1 == "bare" && $2 == c {b[++nb] = $3} $1 == "ours" && $2 == c {o[++no] = $3}
            END {for (i = 1; i <= no; i++) print o[i] / b[i]}' "$tmp/grpc-$kind" | medrange)
          if [ "$kind" = default ]; then
            row "gRPC server CPU/call vs bare grpc-go ($c)" "$m" "$r" "$n" "≤ 1.0 (1.00 quiet)"
            continue
          fi
          row "gRPC server CPU/call vs bare grpc-go with our 64 stream workers ($c)" "$m" "$r" "$n" "none: what our code and binary add"
          IFS=$'\t' read -r m r n < <(awk -v c="$c" '$1 == "linked" && $2 == c {b[++nb] = $3} $1 == "ours" && $2 == c {o[++no] = $3}
            END {for (i = 1; i <= no; i++) if (b[i] > 0) print o[i] / b[i]}' "$tmp/grpc-$kind" | medrange)
          row "gRPC server CPU/call vs that bare server linked like ours, built with our PGO profile ($c)" "$m" "$r" "$n" "none: what our code adds, like for like"
        done
      fi
    done ;;
  kv)
    for p in 1 16; do
      # N grows with the pipeline: 30,000 at -P 16 was a 27-ms run, mostly
      # a cold server's first milliseconds.
      if run "kv-p$p" env N=$((30000 * p)) P="$p" ROUNDS="$ROUNDS" scripts/kv-vs-redis.sh; then
        # "# ours/redis MODE TEST: rate a b (median M, range x-y); CPU per
        # request ... (median ...); client CPU per request ...; client busy
        # with ours ... (median ...), with redis ... (median ...)": the
        # (median, range) pairs in that order.
        awk '$2 == "ours/redis" { sub(":", "", $4); printf "%s %s", $3, $4; s = $0
            while (match(s, /\(median [0-9.]+, range [0-9.-]+\)/)) { x = substr(s, RSTART + 8, RLENGTH - 9); sub(", range", "", x); printf " %s", x; s = substr(s, RSTART + RLENGTH) }
            print "" }' "$tmp/kv-p$p" |
          while read -r mode test m r cm cr _ _ bo bor br _; do
            row "KV $test rate vs redis-server, appendfsync $mode, -P $p" "$m" "$r" "$ROUNDS" "≥ 1.0 (SET always 1.04, GET -P 16 1.15 quiet)"
            # What each server costs, beside a rate that at -P 1 is the
            # client's: redis-benchmark's one thread is on its CPU 97-98% of
            # the run against either server there (docs/kv.md).
            row "KV $test server CPU/request vs redis-server, appendfsync $mode, -P $p" "$cm" "$cr" "$ROUNDS" "≤ 1.0"
            if [ "$p" = 1 ]; then
              row "KV $test client (redis-benchmark) CPU share of its run against ours (against redis-server: $br), appendfsync $mode, -P $p" "$bo" "$bor" "$ROUNDS" "none: as high as against redis-server, the client sets the rate"
            fi
          done
      fi
    done ;;
  bulk)
    # ROUNDS runs of the judge, one binary built outside the lock: each
    # times .import and our upload of the same 200k rows on the server's
    # CPU (the ratio a round) and samples the server's RssAnon.
    go build -o "$tmp/bulk-wirebench" ./cmd/wirebench
    for i in $(seq "$ROUNDS"); do
      if run "bulk-$i" env SERVE_ARGS= WIREBENCH="$tmp/bulk-wirebench" scripts/bulk-judge.sh 200000; then :; fi
    done
    IFS=$'\t' read -r m r n < <(cat "$tmp"/bulk-* | sed -n 's/.*sqlite3 .import [0-9.]*s: \([0-9.]*\)x.*/\1/p' | medrange)
    row "bulk upsert speed vs sqlite3 .import (200k rows, .import time / ours)" "$m" "$r" "$n" "≥ 0.8 (1.00 quiet)"
    IFS=$'\t' read -r m r n < <(cat "$tmp"/bulk-* | sed -n 's/.*RssAnon sampled max [0-9]* MiB (\([0-9]*\) KiB.*/\1/p' | awk '{print $1 / 1024}' | medrange)
    row "bulk upsert server RssAnon peak, MiB (200k rows; issue 41's judge: 1M)" "$m" "$r" "$n" "≤ 20 (17 quiet)" ;;
  h3)
    # Built here, outside the lock (the script would build under it).
    mkdir -p "$tmp/h3bin"
    go build -o "$tmp/h3bin/wirebench" ./cmd/wirebench
    go build -o "$tmp/h3bin/h3bare" ./bench/h3bare
    # The third contender (LINKED): bare quic-go linked with every package
    # the one binary links and built with our PGO profile, like for like.
    go build -tags linked -pgo=cmd/wirebench/default.pgo -o "$tmp/h3bin/h3bare-linked" ./bench/h3bare
    if run h3 env BIN="$tmp/h3bin" LINKED=pgo bench/h3-cpu.sh "$SECS" "$ROUNDS"; then
      for side in server client; do
        IFS=$'\t' read -r m r n < <(awk -v p="$side" '$1 == p && $2 == "bare" {b[++nb] = $3} $1 == p && $2 == "ours" {o[++no] = $3}
          END {for (i = 1; i <= no; i++) print o[i] / b[i]}' "$tmp/h3" | medrange)
        row "h3 $side CPU/request vs bare quic-go" "$m" "$r" "$n" "≤ 1.0"
        IFS=$'\t' read -r m r n < <(awk -v p="$side" '$1 == p && $2 == "linked" {b[++nb] = $3} $1 == p && $2 == "ours" {o[++no] = $3}
          END {for (i = 1; i <= no; i++) if (b[i] > 0) print o[i] / b[i]}' "$tmp/h3" | medrange)
        row "h3 $side CPU/request vs bare quic-go linked like ours, built with our PGO profile" "$m" "$r" "$n" "none: what our code adds, like for like"
      done
      # The server's allocations per request (bare: SIGUSR1, ours: /metrics).
      IFS=$'\t' read -r m r n < <(awk '$1 == "server" && $2 == "bare" {b[++nb] = $7} $1 == "server" && $2 == "ours" {o[++no] = $7}
        END {for (i = 1; i <= no; i++) if (b[i] > 0) print o[i] / b[i]}' "$tmp/h3" | medrange)
      row "h3 server allocations/request vs bare quic-go" "$m" "$r" "$n" "≤ 1.0"
    fi
    # The client without its bytes-by-layer split (quic-go's trace events):
    # what bounds the row above.
    if run h3-nolayers env BIN="$tmp/h3bin" PARTS=client LOAD_FLAGS=--no-layers bench/h3-cpu.sh "$SECS" "$ROUNDS"; then
      IFS=$'\t' read -r m r n < <(awk '$1 == "client" && $2 == "bare" {b[++nb] = $3} $1 == "client" && $2 == "ours" {o[++no] = $3}
        END {for (i = 1; i <= no; i++) print o[i] / b[i]}' "$tmp/h3-nolayers" | medrange)
      row "h3 client CPU/request vs bare quic-go, --no-layers" "$m" "$r" "$n" "≤ 1.0 (the split's trace left out)"
    fi
    # The same pair run at once on the client CPU (PAIRED=1): the row that
    # background load moves least.
    if run h3-paired env BIN="$tmp/h3bin" PARTS=client PAIRED=1 LOAD_FLAGS=--no-layers bench/h3-cpu.sh "$SECS" "$ROUNDS"; then
      IFS=$'\t' read -r m r n < <(awk '$1 == "client" && $2 == "bare" {b[++nb] = $3} $1 == "client" && $2 == "ours" {o[++no] = $3}
        END {for (i = 1; i <= no; i++) print o[i] / b[i]}' "$tmp/h3-paired" | medrange)
      row "h3 client CPU/request vs bare quic-go, --no-layers, both at once" "$m" "$r" "$n" "≤ 1.0 (the split's trace left out)"
    fi ;;
  h3instr)
    mkdir -p "$tmp/h3bin"
    [ -x "$tmp/h3bin/wirebench" ] || go build -o "$tmp/h3bin/wirebench" ./cmd/wirebench
    [ -x "$tmp/h3bin/h3bare" ] || go build -o "$tmp/h3bin/h3bare" ./bench/h3bare
    # bench/h3-instr.sh's own counts: at 1,000/5,000 the client read
    # 1.048-1.075 where 2,000/10,000 reads 1.03 (start-up is less of N2-N1).
    if run h3instr env BIN="$tmp/h3bin" REPS="$IREPS" bench/h3-instr.sh 2000 10000; then
      # "server ours 168929 instr/req 95.1 allocs/req": fields 3 and 5.
      # The last row: ours (the split on) against a bare client carrying
      # the same quic-go trace (h3bare -trace), what bounds the one above it.
      for x in "server ours bare 3 h3 server instructions/request vs bare quic-go" "server ours bare 5 h3 server allocations/request vs bare quic-go (under valgrind)" \
        "client ours bare 3 h3 client instructions/request vs bare quic-go" "client nolayers bare 3 h3 client instructions/request vs bare quic-go, --no-layers" \
        "client ours baretrace 3 h3 client instructions/request vs bare quic-go carrying the same trace"; do
        read -r p k y f name <<<"$x"
        # Rep by rep (each rep runs every kind once, in turn).
        IFS=$'\t' read -r m r n < <(awk -v p="$p" -v k="$k" -v y="$y" -v f="$f" 'NF > 3 && $1 == p && $2 == y {b[++nb] = $f} NF > 3 && $1 == p && $2 == k {o[++no] = $f}
          END {for (i = 1; i <= no; i++) if (b[i] > 0) printf "%.4f\n", o[i] / b[i]}' "$tmp/h3instr" | medrange3)
        row "$name" "$m" "$r" "$n" "≤ 1.0"
      done
    fi ;;
  grpcinstr)
    mkdir -p "$tmp/grpcbin"
    go build -o "$tmp/grpcbin/wirebench" ./cmd/wirebench
    go build -o "$tmp/grpcbin/grpcgobare" ./bench/grpcgobare
    # "ours 75986 instr/call ...": field 2; the stream at 40/400 calls
    # (at 20/100 its few GC cycles in the difference moved it ±4%).
    for x in "get 2000 10000 get-c50" "stream 40 400 stream"; do
      read -r c n1 n2 name <<<"$x"
      if run "grpcinstr-$c" env BIN="$tmp/grpcbin" CASE="$c" REPS="$IREPS" bench/grpc-instr.sh "$n1" "$n2"; then
        IFS=$'\t' read -r m r n < <(awk '$3 == "instr/call" && $1 == "bare" {b[++nb] = $2} $3 == "instr/call" && $1 == "ours" {o[++no] = $2}
          END {for (i = 1; i <= no; i++) if (b[i] > 0) printf "%.4f\n", o[i] / b[i]}' "$tmp/grpcinstr-$c" | medrange3)
        row "gRPC server instructions/call vs bare grpc-go ($name)" "$m" "$r" "$n" "≤ 1.0"
      fi
    done ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done

echo "# scoreboard $start to $(date -u +%FT%TZ), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; commit $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty); ROUNDS=$ROUNDS SECS=$SECS"
echo
echo "| ratio (ours / yardstick) | median | range | rounds | bar |"
echo "|---|---:|---:|---:|---|"
cat "$rows"
