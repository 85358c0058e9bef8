#!/usr/bin/env bash
# HTTP/3 CPU per request, ours against bare quic-go (DESIGN rule 9: our
# code is judged against a bare program on the same library).
# bench/h3bare is the bare pair: quic-go's http3.Server serving
# servercpu.BareHandler (GET /users/{id}, the same JSON bytes), and an
# http3.Transport request loop (-c loops on -conns connections).
#   server: `h3bare serve` against `wirebench serve --https --http3`, both
#           driven by the same bare client; the server's CPU is utime+stime
#           from /proc/PID/stat across the measured run, its allocations
#           the runtime's malloc count (bare: SIGUSR1; ours: /metrics),
#           each divided by the requests the client counted.
#   client: `h3bare load` against `wirebench load --transport h3 -k`, both
#           against one bare server; the client's CPU is user+sys from
#           /usr/bin/time (the whole process: start, handshakes, run),
#           divided by its requests.
# With CADDY=1 the server part runs Caddy too (/usr/bin/caddy, Debian's
# 2.6: cmd/wirebench/testdata/h3.Caddyfile without its access log,
# answering the reference server's JSON for user 1 from `respond`),
# addressed as https://localhost:PORT (it refuses a handshake without SNI);
# its allocations are not known ("-").
# With LINKED=1 both parts run a third contender, "linked": h3bare built
# with -tags linked (bench/h3bare/linked.go blank-imports every library
# package cmd/wirebench links, so their package inits run and their code
# and globals are in the binary): bare quic-go in a binary like ours,
# nothing of ours serving or sending. bare -> linked is what the one
# binary costs; linked -> ours what our code does. LINKED=pgo builds it
# with cmd/wirebench/default.pgo as well, as `go build ./cmd/wirebench`
# builds ours (PGO reaches quic-go and the runtime too: on 2026-11-30 it
# took ~13.6 k of ~188 k instructions off the server's request, most of
# them in goroutine stack growth). Each line ends with the
# garbage collector's cycles per 10,000 requests (servers: the runtime's
# count, bare: SIGUSR1's gc-scan line, ours: /metrics; clients: the
# process's GODEBUG=gctrace=1 lines, start-up included).
# Server pinned to SERVER_CPU (1), clients to CLIENT_CPU (0); each server
# gets a 1 s warm-up first. Rounds alternate bare and ours (ABAB), so
# background load hits both alike: read the ratios, with the per-round
# range beside them, not the absolute figures.
#
# LOAD_FLAGS are extra `wirebench load` flags for our client (--no-layers: without
# the bytes-by-layer split, i.e. without quic-go's trace events), BARE_LOAD_FLAGS
# extra `h3bare load` flags for the client part's bare client (-trace: the
# bare client carrying the trace our default split puts on a connection, so
# that ours/bare judges the split's implementation against what the same
# events cost quic-go; the server part's driving client gets none).
# With PAIRED=1 the client part runs the two clients at the same time, both
# on CLIENT_CPU (each gets about half of it), against the one bare server:
# background load then hits both within the same seconds, and on a busy
# machine the per-round ratios spread far less (at load average 5-7: two
# bare clients 1.02-1.07 in 4 rounds, ours --no-layers/bare 1.10-1.16 in
# 6, where sequential rounds of the same pair spread 0.81-1.16). Read it
# beside the sequential figures, not instead of them: each client runs at
# about half the rate it gets alone.
# CPU time on a shared machine moves ±10-30% between rounds; for a ratio
# of a few per cent, bench/h3-instr.sh counts instructions per request
# under valgrind (the same pair, the same client), which holds still.
# usage: [C=50] [CONNS=4] [PARTS="server client"] [CADDY=1] [LINKED=1|pgo] [PAIRED=1] [LOAD_FLAGS=...] [BARE_LOAD_FLAGS=...] bench/h3-cpu.sh [seconds=5] [rounds=3]
# needs: taskset, /usr/bin/time, curl; 2 CPUs or more. On a shared
# machine: flock /tmp/wirebench-load.lock bench/h3-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} rounds=${2:-3}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
# Every server gets the same GOMAXPROCS on its one CPU: wirebench serve
# runs two Ps there by default (a large encoding must not hold the only
# one), and a bare server given fewer would differ by a runtime knob,
# not by its code. SERVER_PROCS overrides it for all of them.
server_procs=${SERVER_PROCS:-2}
C=${C:-50} CONNS=${CONNS:-4} PARTS=${PARTS:-server client}
users=1000
for tool in taskset /usr/bin/time curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y util-linux time curl)" >&2; exit 1; }
done
tmp=$(mktemp -d)
. bench/lib.sh
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
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
hz=$(getconf CLK_TCK)
servers="bare ours" clients="bare ours"
if [ -n "${LINKED:-}" ]; then
  [ -x "$BIN/h3bare-linked" ] || { echo "LINKED=1: no $BIN/h3bare-linked (go build -tags linked -o $BIN/h3bare-linked ./bench/h3bare)" >&2; exit 1; }
  servers="bare linked ours" clients="bare linked ours"
fi
if [ -n "${CADDY:-}" ]; then
  command -v caddy >/dev/null || { echo "missing caddy (apt-get install -y caddy)" >&2; exit 1; }
  servers="$servers caddy"
  mkdir "$tmp/caddy"
  # The access log off: neither other server logs a line per request.
  sed '/^\tlog {/,/^\t}/d' cmd/wirebench/testdata/h3.Caddyfile > "$tmp/caddy/Caddyfile"
fi

# start KIND: a server pinned to $server_cpu; sets srv, h3 (and http: ours).
start() {
  : > "$tmp/out"
  if [ "$1" = bare ] || [ "$1" = linked ]; then
    GOMAXPROCS=$server_procs taskset -c "$server_cpu" "$BIN/$(barebin "$1")" serve -seed-users "$users" > "$tmp/out" 2>"$tmp/err" &
  elif [ "$1" = caddy ]; then
    local port body
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    body=$(cat "$tmp/body")
    DIR=$tmp/caddy PORT=$port BODY=$body HOME=$tmp/caddy XDG_DATA_HOME=$tmp/caddy XDG_CONFIG_HOME=$tmp/caddy \
      GOMAXPROCS=$server_procs taskset -c "$server_cpu" caddy run --adapter caddyfile --config "$tmp/caddy/Caddyfile" > "$tmp/err" 2>&1 &
    srv=$!
    for _ in $(seq 200); do grep -q 'serving initial configuration' "$tmp/err" && break; sleep 0.05; done
    grep -q 'serving initial configuration' "$tmp/err" || { echo "caddy did not start: $(cat "$tmp/err")" >&2; exit 1; }
    h3=localhost:$port http=
    return
  else
    # shellcheck disable=SC2086 # SERVE_FLAGS: extra `wirebench serve` flags
    GOMAXPROCS=$server_procs taskset -c "$server_cpu" "$BIN/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 \
      --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users "$users" --seed-todos 10 ${SERVE_FLAGS:-} > "$tmp/out" 2>"$tmp/err" &
  fi
  srv=$!
  h3= http=
  for _ in $(seq 200); do
    h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' "$tmp/out")
    http=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
    [ -n "$h3" ] && break
    sleep 0.05
  done
  [ -n "$h3" ] || { echo "$1 server did not start: $(cat "$tmp/err")" >&2; exit 1; }
}
stop() { kill "$srv"; wait "$srv" 2>/dev/null || true; srv=; }
# barebin KIND: the bare program's binary for bare or linked.
barebin() { if [ "$1" = linked ]; then echo h3bare-linked; else echo h3bare; fi; }

# counts KIND: "MALLOCS GC-CYCLES" of the running server so far (caddy:
# "0 0", not known). A bare one prints both on SIGUSR1 (server_mallocs
# sends it), ours reports go_gc_duration_seconds_count beside its mallocs.
counts() {
  case $1 in
  caddy) echo 0 0 ;;
  bare | linked)
    local m; m=$(server_mallocs bare)
    echo "$m $(sed -n 's/^gc-scan .* cycles \([0-9]*\)$/\1/p' "$tmp/out" | tail -1)" ;;
  *) curl -fsS "http://$http/metrics" | awk '$1 == "go_memstats_mallocs_total" { m = $2 } $1 == "go_gc_duration_seconds_count" { c = $2 }
       END { printf "%.0f %.0f\n", m, c }' ;;
  esac
}

bare_load() { taskset -c "$client_cpu" "$BIN/h3bare" load -c "$C" -conns "$CONNS" -d "$1s" "https://$h3/users/1"; }

# server KIND: one measured run of a server.
server() {
  local kind=$1 u0 s0 u1 s1 m0 m1 g0 g1 out n
  start "$kind"
  bare_load 1 > /dev/null
  read -r m0 g0 < <(counts "$kind")
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$srv/stat")
  out=$(bare_load "$secs")
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$srv/stat")
  read -r m1 g1 < <(counts "$kind")
  stop
  n=$(awk '{print $2}' <<<"$out")
  [ "$(awk '{print $4}' <<<"$out")" = 0 ] && [ "$n" -gt 0 ] || { echo "server $kind: $out" >&2; exit 1; }
  awk -v k="$kind" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v hz="$hz" -v n="$n" -v m=$((m1 - m0)) -v g=$((g1 - g0)) -v t="$secs" \
    'BEGIN{printf "server %-6s %8.2f us/req  %8.0f req/s  %6s allocs/req  user %.2f  sys %.2f us/req  gc %5s /10k req\n", k, (u+s)/hz*1e6/n, n/t, k == "caddy" ? "-" : sprintf("%.1f", m/n), u/hz*1e6/n, s/hz*1e6/n, k == "caddy" ? "-" : sprintf("%.1f", g*1e4/n)}' | tee -a "$tmp/results"
}

# client KIND: one measured run of a client against the bare server.
client() {
  local kind=$1 n u s g
  # GODEBUG=gctrace=1: a line on stderr per GC cycle, counted below.
  if [ "$kind" = bare ] || [ "$kind" = linked ]; then
    # shellcheck disable=SC2086 # BARE_LOAD_FLAGS: extra `h3bare load` flags (-trace)
    GODEBUG=gctrace=1 /usr/bin/time -f '%U %S' -o "$tmp/t.$kind" taskset -c "$client_cpu" "$BIN/$(barebin "$kind")" load -c "$C" -conns "$CONNS" -d "${secs}s" ${BARE_LOAD_FLAGS:-} "https://$h3/users/1" > "$tmp/cout.$kind" 2> "$tmp/cerr.$kind"
    n=$(awk '{print $2}' "$tmp/cout.$kind")
    [ "$(awk '{print $4}' "$tmp/cout.$kind")" = 0 ] || { echo "client $kind: $(cat "$tmp/cout.$kind")" >&2; exit 1; }
  else
    GODEBUG=gctrace=1 /usr/bin/time -f '%U %S' -o "$tmp/t.$kind" taskset -c "$client_cpu" "$BIN/wirebench" load -q --transport h3 -k \
      -c "$C" --conns "$CONNS" -d "${secs}s" ${LOAD_FLAGS:-} "https://$h3/users/1" > "$tmp/cout.$kind" 2> "$tmp/cerr.$kind"
    n=$(awk '$1=="requests"{print $2; exit}' "$tmp/cout.$kind")
    grep -q 'failed 0 ' "$tmp/cout.$kind" || { echo "client ours: $(cat "$tmp/cout.$kind" "$tmp/cerr.$kind")" >&2; exit 1; }
  fi
  read -r u s < "$tmp/t.$kind"
  g=$(grep -c '^gc [0-9]' "$tmp/cerr.$kind" || true)
  awk -v k="$kind" -v u="$u" -v s="$s" -v n="$n" -v g="$g" -v t="$secs" \
    'BEGIN{printf "client %-6s %8.2f us/req  %8.0f req/s  %6s allocs/req  user %.2f  sys %.2f us/req  gc %5.1f /10k req\n", k, (u+s)*1e6/n, n/t, "-", u*1e6/n, s*1e6/n, g*1e4/n}' | tee -a "$tmp/results"
}

if [ -n "${CADDY:-}" ]; then
  # Caddy answers what the reference server answers for user 1.
  start ours
  curl -fsS "http://$http/users/1" > "$tmp/body"
  stop
fi
echo "# $(date -u +%FT%TZ) $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); server on CPU $server_cpu, client on CPU $client_cpu; -c $C, $CONNS connections, ${secs}s x $rounds rounds${PAIRED:+, clients paired}${LOAD_FLAGS:+, ours with $LOAD_FLAGS}${BARE_LOAD_FLAGS:+, bare with $BARE_LOAD_FLAGS}${LINKED:+, linked bare too (LINKED=$LINKED)}; $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)"
for round in $(seq "$rounds"); do
  for part in $PARTS; do
    if [ "$part" = client ]; then start bare; fi
    # ABAB across rounds, BA within odd ones: neither goes always first.
    kinds=$clients
    [ "$part" = server ] && kinds=$servers
    [ $((round % 2)) = 0 ] && kinds=$(tr ' ' '\n' <<<"$kinds" | tac | tr '\n' ' ')
    if [ "$part" = client ] && [ -n "${PAIRED:-}" ]; then
      # Both clients at once on the client CPU: whatever else runs on the
      # machine then hits both alike within the round.
      # (LINKED=1: all three at once, a third of it each.)
      pids=()
      for k in $kinds; do client "$k" & pids+=($!); done
      for p in "${pids[@]}"; do wait "$p"; done
    else
      for k in $kinds; do "$part" "$k"; done
    fi
    if [ "$part" = client ]; then stop; fi
  done
done
echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Per part: the means, and each kind/bare per round (median, range); GC
# cycles per 10k requests, the means.
awk '{ p = $1; k = $2; val = $3; s[p, k] += val; c[p, k]++; x[p, k, c[p, k]] = val; ps[p] = 1; ks[p, k] = 1; a[p, k] += $7; gc[p, k] += $15 }
  END {
    split("linked ours caddy", others, " ")
    for (p in ps) {
      r = c[p, "bare"]
      printf "%s CPU per request: bare %.2f us", p, s[p, "bare"] / r
      if (p == "server") printf " (%.1f allocs)", a[p, "bare"] / r
      for (o = 1; o <= 3; o++) {
        k = others[o]
        if (!((p, k) in ks)) continue
        for (i = 1; i <= r; i++) {
          q = x[p, k, i] / x[p, "bare", i]
          for (j = i - 1; j >= 1 && v[j] > q; j--) v[j + 1] = v[j]
          v[j + 1] = q
        }
        med = r % 2 ? v[(r + 1) / 2] : (v[r / 2] + v[r / 2 + 1]) / 2
        printf "; %s %.2f us", k, s[p, k] / r
        if (p == "server" && k != "caddy") printf " (%.1f allocs)", a[p, k] / r
        printf ", %s/bare %.2f of the means, median of rounds %.2f (range %.2f-%.2f, %d rounds)", k, (s[p, k] / r) / (s[p, "bare"] / r), med, v[1], v[r], r
      }
      printf "\n%s GC cycles per 10k requests:", p
      split("bare linked ours", all, " ")
      for (o = 1; o <= 3; o++) if ((p, all[o]) in ks) printf " %s %.1f", all[o], gc[p, all[o]] / c[p, all[o]]
      printf "\n"
    }
  }' "$tmp/results"
