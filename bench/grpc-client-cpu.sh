#!/usr/bin/env bash
# Client CPU per unary call: wirebench load --grpc against ghz, side by
# side in one run, the same templated request to the same server (the
# reference server's wirebench.v1.EchoService/Echo, by server reflection
# for both clients). issue 50's goal: ours ≤ 0.8× ghz's.
#
# The server is pinned to one CPU, each client in turn to the other
# (taskset); a client's CPU is its whole process's user + system time
# (/usr/bin/time: start-up and reflection included, for both), divided by
# the calls it made. Open loop by default (RATE calls/s, C calls in
# flight at most, as ghz's -r and -c; ghz on one connection, its
# default, and ours --conns 1); RATE=0 runs closed loop with C workers.
# Rounds alternate which client goes first, so background load hits both
# alike; the ratio is the median of the rounds' ours/ghz, with the range,
# and the ratio of the means beside it. Every call must answer OK (ghz:
# but the at most C cut at -z's end); ours also checks each reply's
# message (--expect).
#
# With BASE=<git revision> that revision's wirebench (git archive:
# uncommitted changes stay out) runs too, after ours in every round, for
# an A/B of a change against the same ghz.
#
# usage: [RATE=2000] [C=50] [BASE=rev | BASE_BIN=file] [WIREBENCH=file] [CPUPROFILE=dir]
#        bench/grpc-client-cpu.sh [seconds=5] [rounds=3]
# needs: ghz (go install github.com/bojand/ghz/cmd/ghz@v0.93.0), jq,
# taskset, /usr/bin/time; 2 CPUs or more. On a shared machine run it under
# the load lock: flock /tmp/wirebench-load.lock bench/grpc-client-cpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} rounds=${2:-3}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
rate=${RATE:-2000} c=${C:-50}
PATH=$PATH:$(go env GOPATH)/bin
for tool in ghz jq taskset /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (ghz: go install github.com/bojand/ghz/cmd/ghz@v0.93.0)" >&2; exit 1; }
done
tmp=$(mktemp -d)
. bench/lib.sh
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
# WIREBENCH and BASE_BIN name binaries built beforehand (so that a run
# under the load lock does not build)
if [ -n "${WIREBENCH:-}" ]; then cp "$WIREBENCH" "$tmp/wirebench"; else go build -o "$tmp/wirebench" ./cmd/wirebench; fi
kinds="ours ghz"
if [ -n "${BASE_BIN:-}" ]; then
  cp "$BASE_BIN" "$tmp/wirebench-base"
  kinds="ours base ghz"
elif [ -n "${BASE:-}" ]; then
  build_base "$BASE" "$tmp/wirebench-base"
  kinds="ours base ghz"
fi

taskset -c "$server_cpu" "$tmp/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 > "$tmp/out" 2>"$tmp/err" &
srv=$!
grpc=
for _ in $(seq 200); do
  grpc=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' "$tmp/out")
  [ -n "$grpc" ] && break
  sleep 0.05
done
[ -n "$grpc" ] || { echo "the server did not start: $(cat "$tmp/err")" >&2; exit 1; }

method=wirebench.v1.EchoService/Echo
pace=(-c "$c")
[ "$rate" != 0 ] && pace+=(-r "$rate")

# run KIND ROUND: one measured run; appends "KIND us/call calls" to $tmp/results.
run() {
  local kind=$1 round=$2 bin=$tmp/wirebench calls cpu
  case $kind in
  ghz)
    /usr/bin/time -f '%U %S' -o "$tmp/time" taskset -c "$client_cpu" ghz --insecure --call "$method" \
      -d '{"first_message": "m{{.RequestNumber}}", "second_message": "-x"}' \
      "${pace[@]}" -z "${secs}s" --format json "$grpc" > "$tmp/ghz.json"
    local all
    all=$(jq .count "$tmp/ghz.json")
    calls=$(jq '.statusCodeDistribution.OK // 0' "$tmp/ghz.json")
    # At -z's end ghz closes its connection under the calls in flight.
    if [ "$calls" = 0 ] || [ $((all - calls)) -gt "$c" ]; then
      echo "ghz: calls that did not answer OK: $(jq -c '.statusCodeDistribution, .errorDistribution' "$tmp/ghz.json")" >&2; exit 1
    fi
    ;;
  *)
    [ "$kind" = base ] && bin=$tmp/wirebench-base
    local prof=()
    [ -n "${CPUPROFILE:-}" ] && prof=(--cpuprofile "$CPUPROFILE/$kind-$round.pprof")
    rm -f "$tmp/ours.json"
    /usr/bin/time -f '%U %S' -o "$tmp/time" taskset -c "$client_cpu" "$bin" load -q --grpc "$method" \
      --data '{"first_message": "m{{.N}}", "second_message": "-x"}' --expect 'message!=""' \
      "${pace[@]}" --conns 1 -d "${secs}s" "${prof[@]}" --out "$tmp/ours.json" "$grpc" > /dev/null
    calls=$(jq .requests "$tmp/ours.json")
    if [ "$(jq .failed "$tmp/ours.json")" != 0 ]; then
      echo "$kind: failed calls: $(jq -c .failures "$tmp/ours.json")" >&2; exit 1
    fi
    ;;
  esac
  read -r u s < "$tmp/time"
  cpu=$(awk -v u="$u" -v s="$s" -v n="$calls" 'BEGIN {printf "%.1f", (u + s) * 1e6 / n}')
  printf '%-5s %7s us/call  %6d calls  user %s s  system %s s\n' "$kind" "$cpu" "$calls" "$u" "$s" | tee -a "$tmp/results"
}

mode="open loop at $rate calls/s, at most $c in flight"
[ "$rate" = 0 ] && mode="closed loop, c=$c"
echo "# $(date -u +%FT%TZ) $(uname -m) $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); server on CPU $server_cpu, clients on CPU $client_cpu; $mode; ${secs}s x $rounds rounds; $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)"
for round in $(seq "$rounds"); do
  echo "round $round"
  order=$kinds
  [ $((round % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$kinds" | tac | tr '\n' ' ')
  for k in $order; do run "$k" "$round"; done
done
awk '{k = $1; n[k]++; s[k] += $2; x[k, n[k]] = $2; ks[k] = 1}
  END {
    printf "client CPU per call: ghz mean %.1f us", s["ghz"] / n["ghz"]
    for (kind in ks) {
      if (kind == "ghz") continue
      r = n[kind]
      for (i = 1; i <= r; i++) {
        q = x[kind, i] / x["ghz", i]
        for (j = i - 1; j >= 1 && v[j] > q; j--) v[j + 1] = v[j]
        v[j + 1] = q
      }
      med = r % 2 ? v[(r + 1) / 2] : (v[r / 2] + v[r / 2 + 1]) / 2
      printf "; %s mean %.1f us: %s/ghz median of rounds %.2f (range %.2f-%.2f, %d rounds), %.2f of the means",
        kind, s[kind] / r, kind, med, v[1], v[r], r, (s[kind] / r) / (s["ghz"] / n["ghz"])
    }
    printf "\n"
  }' "$tmp/results"
