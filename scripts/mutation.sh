#!/usr/bin/env bash
# Mutation testing with gremlins: plants small bugs (a flipped comparison,
# an off-by-one, a negated condition) one at a time in the packages whose
# logic is a promise, runs their tests, and reports the share of the bugs
# the tests caught (efficacy = killed / (killed + lived)).
#
# usage: scripts/mutation.sh [--gate PCT] [package...]
#   default packages: the gated ones, api codec measure httpapi; load and
#   report may be named too (slow: see scripts/mutation-efficacy.md)
#   --gate PCT   exit non-zero if any package's efficacy is below PCT (CI
#                runs it on api codec measure httpapi internal/sema
#                internal/idleread promtext: see .ci/run)
# Environment: WORKERS (default 1: it is CPU heavy; CI may raise it),
#   TIMEOUT_COEFFICIENT (default 10: the machine is noisy), OUT (directory for
#   the per-package JSON reports, default a temporary one), ONLY (a regexp:
#   mutate only the package files whose names match, e.g. report's statistics:
#   ONLY='^(utest|stats|delta)\.go$' scripts/mutation.sh report).
# Each package runs under the load lock (/tmp/wirebench-load.lock; LOCK=
# names another, LOCK=none runs without one) so it does not disturb
# measurements on a shared machine. Results and timings so far
# are in scripts/mutation-efficacy.md.
set -euo pipefail
cd "$(dirname "$0")/.."
gate=
if [ "${1:-}" = --gate ]; then gate=$2; shift 2; fi
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(api codec measure httpapi)
export PATH="$PATH:$(go env GOPATH)/bin"
command -v gremlins >/dev/null || go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
# Per mutant, gremlins compiles and links a test binary and runs the tests:
# -short skips the tests that pin libraries' own limits (nothing here to
# mutate, a second each), -vet=off and -ldflags=-w save vet and DWARF on
# every build (CI vets once, before). About a quarter of the gate's time.
# -count=1: gremlins times each mutant against its first test run; a
# cached result (a second run of the same package) made that a few
# milliseconds, and 125 of h2grpc's 265 mutants "timed out" uncounted.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-short -vet=off -ldflags=-w -count=1"
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
fail=0
for p in "${pkgs[@]}"; do
  s=$SECONDS
  rep=${p//\//_} # internal/sema -> internal_sema: report file names
  args=(unleash "./$p" --workers "${WORKERS:-1}" --timeout-coefficient "${TIMEOUT_COEFFICIENT:-10}" -o "$out/$rep.json")
  # Not gremlins' --threshold-efficacy: in v0.6.0 it let 100% pass a
  # threshold of 101 (exit 0), so the gate reads the summary line itself.
  if [ -n "${ONLY:-}" ]; then
    # gremlins mutates the packages below ./$p too (load/h1, load/stream…
    # since load was split): ONLY names files of $p itself.
    args+=(-E '/')
    for f in "$p"/*.go; do
      b=$(basename "$f")
      case $b in *_test.go) continue ;; esac
      echo "$b" | grep -qE "$ONLY" || args+=(-E "^$b\$")
    done
  fi
  rc=0
  # httpapi's tests run once per REST engine; the code gremlins mutates is
  # the engine-neutral core, so one engine is enough (and half the time).
  lock=(flock "${LOCK:-/tmp/wirebench-load.lock}")
  [ "${LOCK:-}" != none ] || lock=()
  WIREBENCH_TEST_ENGINE=nethttp "${lock[@]}" gremlins "${args[@]}" > "$out/$rep.log" 2>&1 || rc=$?
  # gremlins ends its log with: Killed: K, Lived: L, Not covered: N / ... / Test efficacy: E%
  summary=$(grep -E '^(Killed|Test efficacy)' "$out/$rep.log" | tr '\n' ' ')
  echo "$p: ${summary:-no summary} ($((SECONDS - s)) s)"
  grep -E '^ +LIVED' "$out/$rep.log" | sed "s|^ *|  $p: |" || true
  eff=$(sed -n 's/^Test efficacy: \([0-9.]*\)%$/\1/p' "$out/$rep.log")
  if [ "$rc" -ne 0 ] || [ -z "$eff" ]; then
    echo "$p: gremlins failed (exit $rc):"
    tail -5 "$out/$rep.log"
    fail=1
  elif [ -n "$gate" ] && awk -v e="$eff" -v g="$gate" 'BEGIN { exit !(e < g) }'; then
    echo "$p: efficacy $eff% is below $gate%"
    fail=1
  fi
done
exit $fail
