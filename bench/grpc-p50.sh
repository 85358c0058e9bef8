#!/usr/bin/env bash
# gRPC unary against REST JSON at c=1, p50: one `wirebench serve` pinned
# to one CPU (gRPC on grpc-go's server, serve's default); on another CPU,
# in the same run and alternating, our load client's `get` scenario over
# REST JSON and over gRPC with each of its clients (lean, the default, and
# std, grpc-go's: what the study's "unary transports" cells use), ghz
# calling UserService/Get (when installed), and bench/grpcbare, the same
# call over a bare HTTP/2 framer in one goroutine (the server's share: what
# grpc-go's client adds is the difference). The same lean client also
# calls a second server in the same rotation on our minimal transport
# (--grpc-transport lean, the floor): grpc-ours-lean. Prints each run's
# p50, the ratios of the means to REST JSON and their per-round range (the
# spread to hold the study's figures against: docs/server-cost.md, "gRPC
# on grpc-go").
#
# usage: [SERVE_FLAGS="--json-lib fast"] bench/grpc-p50.sh [seconds=5] [rounds=2]
# needs: taskset; ghz optional (go install github.com/bojand/ghz/cmd/ghz@v0.93.0, as CI).
# On a shared machine: flock /tmp/wirebench-load.lock bench/grpc-p50.sh
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5} rounds=${2:-2}
server_cpu=${SERVER_CPU:-1} client_cpu=${CLIENT_CPU:-0}
PATH=$PATH:$(go env GOPATH)/bin # ghz from go install
command -v taskset >/dev/null || { echo "missing taskset (apt-get install -y util-linux)" >&2; exit 1; }
tmp=$(mktemp -d)
srv= srv2=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "$srv2" ] && kill "$srv2" 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/wirebench" ./cmd/wirebench
go build -o "$tmp/grpcbare" ./bench/grpcbare
# shellcheck disable=SC2086 # SERVE_FLAGS: extra `wirebench serve` flags
taskset -c "$server_cpu" "$tmp/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 ${SERVE_FLAGS:-} > "$tmp/out" 2>"$tmp/err" &
srv=$!
# shellcheck disable=SC2086
taskset -c "$server_cpu" "$tmp/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --grpc-transport lean ${SERVE_FLAGS:-} > "$tmp/out2" 2>"$tmp/err2" &
srv2=$!
for _ in $(seq 100); do
  grep -q '^listening' "$tmp/out" && grep -q '^listening' "$tmp/out2" && break
  sleep 0.05
done
grpc2=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' "$tmp/out2")
http=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' "$tmp/out")
grpc=$(sed -n 's/^listening.* grpc=\([^ ]*\).*/\1/p' "$tmp/out")
[ -n "$http" ] && [ -n "$grpc" ] && [ -n "$grpc2" ] || { echo "server did not start: $(cat "$tmp/err")" >&2; exit 1; }

# p50 in µs from our client's --percentiles 50 output ("50%  106µs").
p50() { awk '$1 == "50%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[^0-9.].*/, "", v);
  printf "%.1f\n", v * (u == "ms" ? 1000 : u == "s" ? 1e6 : u == "ns" ? 1e-3 : 1) }'; }
ours() { taskset -c "$client_cpu" "$tmp/wirebench" load -q -c 1 -d "${secs}s" --percentiles 50 --scenario get "$@" | p50; }
ghz_p50() { taskset -c "$client_cpu" ghz --insecure --call wirebench.v1.UserService/Get -d '{"id":1}' -c 1 -z "${secs}s" "$grpc" |
  awk '/50 % in/ { v = $4; printf "%.1f\n", v * ($5 == "ms" ? 1000 : $5 == "s" ? 1e6 : 1) }'; }

bare_p50() { taskset -c "$client_cpu" "$tmp/grpcbare" -n $((secs * 6000)) "$grpc" | awk '{ print $4 }'; }

# warm-up: connections, pools, the server's first GC cycles
ours --transport grpc -d 1s "$grpc" > /dev/null
ours --transport grpc -d 1s "$grpc2" > /dev/null
ours -d 1s "http://$http" > /dev/null
for round in $(seq "$rounds"); do
  r=$(ours "http://$http"); echo "round $round rest-json-ours $r us" | tee -a "$tmp/results"
  g=$(ours --transport grpc "$grpc"); echo "round $round grpc-ours $g us" | tee -a "$tmp/results"
  g2=$(ours --transport grpc "$grpc2"); echo "round $round grpc-ours-lean $g2 us" | tee -a "$tmp/results"
  s=$(ours --transport grpc --client std "$grpc"); echo "round $round grpc-ours-std $s us" | tee -a "$tmp/results"
  b=$(bare_p50); echo "round $round grpc-bare $b us" | tee -a "$tmp/results"
  if command -v ghz >/dev/null; then
    z=$(ghz_p50); echo "round $round grpc-ghz $z us" | tee -a "$tmp/results"
  fi
done
awk '$3 == "rest-json-ours" { rest[$2] = $4 } { s[$3] += $4; n[$3]++; v[$2, $3] = $4; if ($2 > r) r = $2 }
  END {
    for (k in s) m[k] = s[k] / n[k]
    split("grpc-ours grpc-ours-lean grpc-ours-std grpc-bare grpc-ghz", names, " ")
    printf "mean p50: rest-json-ours %.1f us", m["rest-json-ours"]
    for (i = 1; i <= 5; i++) if (names[i] in m) printf "  %s %.1f us", names[i], m[names[i]]
    printf "\nratio to REST JSON (of the means; per-round min-max):"
    for (i = 1; i <= 5; i++) {
      k = names[i]
      if (!(k in m)) continue
      lo = 1e9; hi = 0
      for (j = 1; j <= r; j++) { q = v[j, k] / rest[j]; if (q < lo) lo = q; if (q > hi) hi = q }
      printf "  %s %.2f (%.2f-%.2f)", k, m[k] / m["rest-json-ours"], lo, hi
    }
    printf "\n"
  }' "$tmp/results"
