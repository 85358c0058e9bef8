#!/usr/bin/env bash
# h3-instr.sh — HTTP/3 per request in user-space instructions, ours against
# bare quic-go (bench/h3bare), the figure that holds still where CPU time
# swings by ±10-30% on a shared VM (bench/h3-cpu.sh's rounds). As
# bench/engine-instr.sh does for HTTP/1.1: a program runs under valgrind's
# cachegrind through a run of N1 and then, in a second process, N2 GETs of
# /users/1 (-c C loops on CONNS connections, 1 s of warm-up not needed:
# both runs pay the same start-up, handshakes and shutdown); the difference
# of the two instruction totals over N2-N1 is the instructions per request,
# start-up and handshakes cancelled out.
#   server: `h3bare serve` and `wirebench serve --https --http3` under
#           cachegrind, each driven by the same `h3bare load -n` (not under
#           valgrind); also the server's allocations per request (the
#           runtime's malloc count at the end of each run, bare: SIGUSR1,
#           ours: /metrics; differenced the same way).
#   client: `h3bare load -n` and `wirebench load --transport h3 -k -n`
#           (default, and --no-layers) under cachegrind, against one bare
#           server (not under valgrind); and `h3bare load -trace`
#           ("baretrace"): the bare client with the trace our default
#           bytes-by-layer split puts on each connection (http3's frame
#           events counted, quic-go's packet events off), so that
#           ours/baretrace judges the split's implementation against what
#           the same events cost a bare quic-go client.
# It counts what the program's own code, quic-go and the Go runtime
# execute (the GC included), not the kernel's work (system calls, the UDP
# stack) nor cycles lost to cache misses: it ranks user-space work per
# request, not whole processes. Valgrind runs a program's threads one at a
# time, so the GC's background work is counted as it is done, and repeats
# of one binary agree to about ±1-2% at the default counts (REPS=2 shows
# it; with a few thousand requests fewer they spread more: at 500/1500 the
# client moved 6%, the GC cycles in the difference being few). The programs run
# about 20-50x slower under valgrind: the default counts take a few
# minutes for both parts.
# With LINKED=1 both parts run "linked" too: h3bare built with -tags
# linked (bench/h3bare/linked.go: every library package cmd/wirebench
# links, their package inits run), bare quic-go in a binary like ours; as a
# server driven as bare is, as a client against the bare server.
# LINKED=pgo: built with cmd/wirebench/default.pgo too, as ours is.
# With CACHE=1 cachegrind also simulates the caches (first-level
# instruction and data, and the last level, as it models this machine's),
# and each line adds the misses per request: where two programs with equal
# instructions still differ in cycles (a larger heap for the GC to walk, a
# larger binary). About 3x slower.
# With PROFILE=DIR the difference of the two runs' cachegrind files
# (cg_diff: N2-N1 requests' worth, start-up cancelled) is kept in DIR, per
# part and kind, the last rep's: `cg_annotate DIR/server-ours.cg` gives
# instructions by function; divide by N2-N1 for per request.
# usage: [PARTS="server client"] [REPS=1] [C=50] [CONNS=4] [LINKED=1|pgo] [CACHE=1] [PROFILE=DIR] [SERVE_FLAGS=...] [BARE_FLAGS=...] bench/h3-instr.sh [N1=2000] [N2=10000]
# needs: valgrind (apt-get install -y valgrind), taskset, curl. On a shared
# machine: flock /tmp/wirebench-load.lock bench/h3-instr.sh
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${1:-2000} n2=${2:-10000}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
C=${C:-50} CONNS=${CONNS:-4} PARTS=${PARTS:-server client} REPS=${REPS:-1}
users=1000
for tool in valgrind taskset curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y valgrind util-linux curl)" >&2; exit 1; }
done
[ "$n2" -gt "$n1" ] || { echo "N2 ($n2) must be more than N1 ($n1)" >&2; exit 2; }
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
. bench/lib.sh
if [ -z "${BIN:-}" ]; then
  go build -o "$tmp/wirebench" ./cmd/wirebench
  go build -o "$tmp/h3bare" ./bench/h3bare
  if [ -n "${LINKED:-}" ]; then
    # LINKED=pgo: built with cmd/wirebench's PGO profile too, as ours is.
    pgo=()
    [ "$LINKED" = pgo ] && pgo=(-pgo=cmd/wirebench/default.pgo)
    go build -tags linked "${pgo[@]}" -o "$tmp/h3bare-linked" ./bench/h3bare
  fi
  BIN=$tmp
fi
servers="bare ours" clients="bare ours nolayers baretrace"
if [ -n "${LINKED:-}" ]; then
  [ -x "$BIN/h3bare-linked" ] || { echo "LINKED=1: no $BIN/h3bare-linked (go build -tags linked -o $BIN/h3bare-linked ./bench/h3bare)" >&2; exit 1; }
  servers="bare linked ours" clients="bare linked ours nolayers baretrace"
fi
# barebin KIND: the bare program's binary for bare, baretrace or linked.
barebin() { if [ "$1" = linked ]; then echo h3bare-linked; else echo h3bare; fi; }
[ -n "${PROFILE:-}" ] && mkdir -p "$PROFILE"
# Both servers at GOMAXPROCS=2 as in bench/h3-cpu.sh (valgrind runs one
# thread at a time either way).
cachesim=no
[ -n "${CACHE:-}" ] && cachesim=yes
vg() { taskset -c "$client_cpu" valgrind --tool=cachegrind --cache-sim=$cachesim --cachegrind-out-file="$1" "${@:2}"; }

# start KIND [valgrind OUT]: a server pinned to $server_cpu; sets srv, h3, http.
start() {
  local kind=$1 pre=()
  [ -n "${2:-}" ] && pre=(valgrind --tool=cachegrind --cache-sim=$cachesim --cachegrind-out-file="$2")
  : > "$tmp/out"
  if [ "$kind" = bare ] || [ "$kind" = linked ]; then
    # shellcheck disable=SC2086 # BARE_FLAGS: extra `h3bare serve` flags (-ballast-kb N)
    GOMAXPROCS=2 taskset -c "$server_cpu" "${pre[@]}" "$BIN/$(barebin "$kind")" serve -seed-users "$users" ${BARE_FLAGS:-} > "$tmp/out" 2> "$tmp/err" &
  else
    # shellcheck disable=SC2086 # SERVE_FLAGS: extra `wirebench serve` flags
    GOMAXPROCS=2 taskset -c "$server_cpu" "${pre[@]}" "$BIN/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 \
      --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users "$users" --seed-todos 10 ${SERVE_FLAGS:-} > "$tmp/out" 2> "$tmp/err" &
  fi
  srv=$!
  h3= http=
  for _ in $(seq 600); do
    h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' "$tmp/out")
    http=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$h3" ] && break
    sleep 0.1
  done
  [ -n "$h3" ] || { echo "$kind server did not start: $(cat "$tmp/err")" >&2; exit 1; }
}
stop() { kill -INT "$srv"; wait "$srv" 2>/dev/null || true; srv=; }
summary() { sed -n 's/^summary: //p' "$1"; }

# server_run KIND N: the server's malloc count and cachegrind's totals
# over a run of N requests, as "mallocs Ir [misses...]" in $tmp/r.$N (not
# printed: srv must be set in this shell, for stop and the exit trap).
# A run with failed requests is run again (three tries): under valgrind a
# handshake's cryptography takes 20-50x its time, and our server's
# handshake gate rests its lane in proportion to it (h3gate.go), so on a
# busy machine a connection's handshake can outlast the bare client's 5 s
# handshake timeout; the failed attempts' work would not cancel out.
server_run() {
  local kind=$1 n=$2 cg="$tmp/server-$1.$2.cg" out m try
  for try in 1 2 3; do
    start "$kind" "$cg"
    out=$(taskset -c "$client_cpu" "$BIN/h3bare" load -c "$C" -conns "$CONNS" -n "$n" "https://$h3/users/1")
    awk -v n="$n" '$2 == n && $4 == 0 {ok = 1} END {exit !ok}' <<<"$out" && break
    stop
    echo "server $kind, $n requests, try $try: $out" >&2
    [ "$try" = 3 ] && exit 1
  done
  if [ "$kind" = linked ]; then m=$(server_mallocs bare); else m=$(server_mallocs "$kind"); fi
  stop
  echo "$m $(summary "$cg")" > "$tmp/r.$n"
}

# client_run KIND N: the same for a client (mallocs 0: not counted) run
# against the bare server ($h3).
client_run() {
  local kind=$1 n=$2 cg="$tmp/client-$1.$2.cg"
  case $kind in
  bare | baretrace | linked)
    local trace=()
    [ "$kind" = baretrace ] && trace=(-trace)
    vg "$cg" "$BIN/$(barebin "$kind")" load -c "$C" -conns "$CONNS" -n "$n" "${trace[@]}" "https://$h3/users/1" > "$tmp/cout" 2> "$tmp/cerr"
    grep -q "^requests $n errors 0 " "$tmp/cout" || { echo "client $kind: $(cat "$tmp/cout" "$tmp/cerr")" >&2; exit 1; } ;;
  *)
    local flags=()
    [ "$kind" = nolayers ] && flags=(--no-layers)
    vg "$cg" "$BIN/wirebench" load -q --transport h3 -k -c "$C" --conns "$CONNS" -n "$n" "${flags[@]}" \
      "https://$h3/users/1" > "$tmp/cout" 2> "$tmp/cerr"
    grep -q 'failed 0 ' "$tmp/cout" && grep -q "^ *requests *$n " "$tmp/cout" || { echo "client $kind: $(cat "$tmp/cout" "$tmp/cerr")" >&2; exit 1; } ;;
  esac
  echo "0 $(summary "$cg")" > "$tmp/r.$n"
}

# perreq PART KIND: the two runs' difference per request, one line into
# $tmp/results: "PART KIND instructions allocations [misses...]"; with
# PROFILE, their difference by function into $PROFILE/PART-KIND.cg.
perreq() {
  [ -z "${PROFILE:-}" ] || cg_diff "$tmp/$1-$2.$n1.cg" "$tmp/$1-$2.$n2.cg" > "$PROFILE/$1-$2.cg"
  paste <(tr ' ' '\n' < "$tmp/r.$n1") <(tr ' ' '\n' < "$tmp/r.$n2") | awk -v p="$1" -v k="$2" -v n=$((n2 - n1)) '
    { d[NR] = ($2 - $1) / n }
    END {
      printf "%s %s %.0f %.1f", p, k, d[2], d[1] >> "'"$tmp/results"'"
      printf "%s %-8s %9.0f instr/req", p, k, d[2]
      if (p == "server") printf "  %6.1f allocs/req", d[1]
      # events after Ir with the cache simulation: I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
      if (NR > 2) {
        printf " %.1f %.2f %.1f %.2f", d[3], d[4], d[6] + d[9], d[7] + d[10] >> "'"$tmp/results"'"
        printf "  misses/req: I1 %.0f  LL-instr %.2f  D1 %.0f  LL-data %.2f", d[3], d[4], d[6] + d[9], d[7] + d[10]
      }
      printf "\n" >> "'"$tmp/results"'"
      printf "\n"
    }'
}

echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); server on CPU $server_cpu, client on CPU $client_cpu; -c $C, $CONNS connections, N1 $n1, N2 $n2, $REPS reps${CACHE:+, cache simulated}${LINKED:+, linked bare too (LINKED=$LINKED)}; $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)"
: > "$tmp/results"
for rep in $(seq "$REPS"); do
  for part in $PARTS; do
    if [ "$part" = server ]; then
      for k in $servers; do
        server_run "$k" "$n1"
        server_run "$k" "$n2"
        perreq server "$k"
      done
    else
      start bare
      for k in $clients; do
        client_run "$k" "$n1"
        client_run "$k" "$n2"
        perreq client "$k"
      done
      stop
    fi
  done
done
echo "# end $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Per part: each kind / bare, of the means over the reps (and the reps' range).
awk '{ p = $1; k = $2; s[p, k] += $3; c[p, k]++; a[p, k] += $4; ks[p, k] = 1; ps[p] = 1
       if (!((p, k, "lo") in r) || $3 < r[p, k, "lo"]) r[p, k, "lo"] = $3
       if (!((p, k, "hi") in r) || $3 > r[p, k, "hi"]) r[p, k, "hi"] = $3
       if (NF > 4) { i1[p, k] += $5; d1[p, k] += $7 } }
  END {
    for (p in ps) {
      b = s[p, "bare"] / c[p, "bare"]
      printf "%s instructions per request: bare %.0f", p, b
      if (c[p, "bare"] > 1) printf " (reps %.0f-%.0f)", r[p, "bare", "lo"], r[p, "bare", "hi"]
      split("linked ours nolayers baretrace", others, " ")
      for (o = 1; o <= 4; o++) {
        k = others[o]
        if (!((p, k) in ks)) continue
        printf "; %s %.0f", k, s[p, k] / c[p, k]
        if (c[p, k] > 1) printf " (reps %.0f-%.0f)", r[p, k, "lo"], r[p, k, "hi"]
        printf ", %s/bare %.3f", k, s[p, k] / c[p, k] / b
        if ((p, k) in d1 && d1[p, "bare"] > 0) printf " (misses: I1 %.2f, D1 %.2f of bare'"'"'s)", i1[p, k] / i1[p, "bare"], d1[p, k] / d1[p, "bare"]
      }
      if (p == "client" && (p, "baretrace") in ks) printf "; ours/baretrace %.3f", (s[p, "ours"] / c[p, "ours"]) / (s[p, "baretrace"] / c[p, "baretrace"])
      if ((p, "linked") in ks) printf "; ours/linked %.3f", (s[p, "ours"] / c[p, "ours"]) / (s[p, "linked"] / c[p, "linked"])
      if (p == "server") printf "; allocations per request bare %.1f, ours %.1f, ours/bare %.3f", a[p, "bare"] / c[p, "bare"], a[p, "ours"] / c[p, "ours"], a[p, "ours"] / a[p, "bare"]
      printf "\n"
    }
  }' "$tmp/results"
