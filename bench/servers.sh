# servers.sh — sourced by bench/engine-cpu-interleaved.sh and
# bench/engine-instr.sh, with $tmp set: builds issue 17's three servers
# into $tmp and fills `names` (in the order they run) and `cmd` (how to
# start each, listening on 127.0.0.1:0): the bare net/http handler, both
# engines, and the bare fasthttp handler (the fasthttp engine's floor). With BASE=<git revision> it also
# builds that revision's `wirebench serve` (git archive, so uncommitted
# changes stay out) and adds it as "base" on the net/http engine and
# "basefast" on the fasthttp engine, for an A/B in the same run. With
# BARE_PGO=1 both bare handlers run a second time built with
# cmd/wirebench/default.pgo, as wirebench is ("barepgo", "barefastpgo"):
# the like-for-like floor, since the profile speeds up the libraries'
# code (net/http, fasthttp) in ours and not in a bare build.
# SERVE_FLAGS are extra flags for every wirebench.
go build -o "$tmp/bare" ./bench/bare
go build -o "$tmp/wirebench" ./cmd/wirebench
names=(bare nethttp fasthttp barefast)
declare -A cmd=(
  [bare]="$tmp/bare -addr 127.0.0.1:0"
  [barefast]="$tmp/bare -engine fasthttp -addr 127.0.0.1:0"
  [nethttp]="$tmp/wirebench serve --no-grpc --http 127.0.0.1:0 --engine nethttp ${SERVE_FLAGS:-}"
  [fasthttp]="$tmp/wirebench serve --no-grpc --http 127.0.0.1:0 --engine fasthttp ${SERVE_FLAGS:-}"
)
if [ -n "${BARE_PGO:-}" ]; then
  go build -pgo=cmd/wirebench/default.pgo -o "$tmp/barepgo" ./bench/bare
  names+=(barepgo barefastpgo)
  cmd[barepgo]="$tmp/barepgo -addr 127.0.0.1:0"
  cmd[barefastpgo]="$tmp/barepgo -engine fasthttp -addr 127.0.0.1:0"
fi
if [ -n "${BASE:-}" ]; then
  . bench/lib.sh
  build_base "$BASE" "$tmp/wirebench-base"
  names+=(base basefast)
  cmd[base]="$tmp/wirebench-base serve --no-grpc --http 127.0.0.1:0 --engine nethttp ${SERVE_FLAGS:-}"
  cmd[basefast]="$tmp/wirebench-base serve --no-grpc --http 127.0.0.1:0 --engine fasthttp ${SERVE_FLAGS:-}"
fi
