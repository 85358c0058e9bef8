#!/usr/bin/env bash
# gate-check.sh: does scripts/gate.sh (CI's perf gate) catch what it is
# for, and only that? In a throwaway clone of this repository's HEAD it
# alternates, ROUNDS times:
#   same     main against itself: scripts/gate.sh HEAD on main (FORCE=1),
#            two builds of the same code; must never exit 1;
#   planted  a branch whose reference handler (GET /users/{id}, getUser)
#            does PCT% more CPU work per request than the whole request
#            costs the server (measured: the base's CPU per request in the
#            fastest trial of the first "same" run, or PLANT_US), as a fixed
#            multiply-add loop calibrated in CPU time; scripts/gate.sh with
#            its default base (the merge base with main); should exit 1.
# and prints each run's verdict line and the tally of exit codes.
#
# usage: [ROUNDS=5] [PCT=20] [PLANT_US=] scripts/gate-check.sh
#   (scripts/gate.sh's env passes through: TRIALS, DURATION, TOLERANCE, LOCK…)
# needs: what scripts/gate.sh needs, and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
ROUNDS=${ROUNDS:-5} PCT=${PCT:-20} PLANT_US=${PLANT_US:-}
head=$(git rev-parse HEAD)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-hardlinks . "$tmp/repo"
cd "$tmp/repo"
git -c advice.detachedHead=false checkout -q -B main "$head"
git config user.name gate-check && git config user.email gate-check@localhost
git remote remove origin # the merge base is with this clone's main
export STRICT=1          # undecidable exits 3 here, to be counted

# The cost of one iteration of the planted loop, in CPU time.
mkdir "$tmp/cal"
cat > "$tmp/cal/main.go" <<'EOF'
package main

import (
	"fmt"
	"syscall"
)

func cpu() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	const n = 300_000_000
	t := cpu()
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		println()
	}
	fmt.Printf("%.4f\n", (cpu()-t)/n)
}
EOF
(cd "$tmp/cal" && printf 'module cal\n\ngo 1.22\n' > go.mod && go build -o cal .)
ns_per_iter=$("$tmp/cal/cal")
echo "planted loop: $ns_per_iter ns of CPU per iteration" >&2

declare -A tally
out=$root/wirebench-out/gate-check/$(date -u +%Y%m%dT%H%M%SZ) # kept: every run's results
run() { # KIND ARGS...: one gate run, its verdict line and exit code recorded
  local kind=$1 code
  shift
  set +e
  OUT=$out/$kind "$@" > "$tmp/verdict" 2> "$tmp/log"
  code=$?
  set -e
  line=$(grep -m1 '^cpu_per_req ' "$tmp/verdict" || true)
  printf '%-8s exit %d  %s\n' "$kind" "$code" "${line:-$(tail -3 "$tmp/log")}"
  grep -E '^gate: (built|waited|study|verdict)' "$tmp/log" | sed 's/^/         /'
  tally[$kind]+=" $code"
}

plant() { # makes the planted branch once the cost is known
  local us=$1 iters
  iters=$(awk -v us="$us" -v ns="$ns_per_iter" -v p="$PCT" 'BEGIN {printf "%d", us * 1000 * p / 100 / ns}')
  echo "planted: $PCT% of $us µs = $iters iterations (about $(awk -v i="$iters" -v ns="$ns_per_iter" 'BEGIN {printf "%.2f", i * ns / 1000}') µs of CPU) in getUser" >&2
  git checkout -q -b planted main
  cat > httpapi/planted.go <<EOF
package httpapi

// planted is gate-check's planted slowdown: CPU work the compiler
// cannot drop, a fixed count of multiply-adds.
func planted() {
	x := uint64(1)
	for i := 0; i < $iters; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		println()
	}
}
EOF
  sed -i 's/^func (s \*Server) getUser(q \*request) (int, any, error) {$/&\n\tplanted()/' httpapi/handlers.go
  grep -q '^	planted()$' httpapi/handlers.go || { echo "could not plant in httpapi/handlers.go getUser" >&2; exit 2; }
  git add -A && git commit -q -m "planted: $PCT% more CPU per GET /users/{id}"
  git checkout -q main
}

for r in $(seq "$ROUNDS"); do
  git checkout -q main
  run same env FORCE=1 scripts/gate.sh HEAD
  if ! git rev-parse -q --verify planted >/dev/null; then
    us=$PLANT_US
    if [ -z "$us" ]; then
      res=$(ls -dt "$out"/same/gate-*/results.json | head -1)
      # The least disturbed trial's cost: the plant is then at most PCT% of
      # any trial's, and 20% of what a quiet machine measures.
      us=$(jq -r '[.trials[] | select(.cell == "gate/base") | .server.cpu_ns / .load.requests / 1000] | min' "$res")
    fi
    plant "$us"
  fi
  git checkout -q planted
  run planted scripts/gate.sh
done
echo
for k in same planted; do
  n0=0 n1=0 n3=0 nx=0
  for c in ${tally[$k]:-}; do
    case $c in 0) n0=$((n0 + 1)) ;; 1) n1=$((n1 + 1)) ;; 3) n3=$((n3 + 1)) ;; *) nx=$((nx + 1)) ;; esac
  done
  printf '%-8s exit codes:%s  (0 pass: %d, 1 regression: %d, 3 undecidable: %d, other: %d)\n' "$k" "${tally[$k]:-}" $n0 $n1 $n3 $nx
done
