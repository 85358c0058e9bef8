#!/usr/bin/env bash
# Mutation testing with gremlins: plants small bugs (a flipped comparison,
# an off-by-one, a negated condition) one at a time in the packages whose
# logic is a promise, runs their tests, and reports the share of the bugs
# the tests caught (efficacy = killed / (killed + lived)).
#
# usage: scripts/mutation.sh [--gate PCT] [package...]
#   default packages: api codec measure httpapi report load
#   --gate PCT   exit non-zero if any package's efficacy is below PCT (CI
#                runs: scripts/mutation.sh --gate 90 api codec measure httpapi)
# Environment: WORKERS (default 1: it is CPU heavy; CI may raise it),
#   TIMEOUT_COEFFICIENT (default 10: the machine is noisy), OUT (directory for
#   the per-package JSON reports, default a temporary one).
# Each package runs under the load lock (/tmp/wirebench-load.lock) so it does
# not disturb measurements on a shared machine. Results and timings so far
# are in scripts/mutation-efficacy.md.
set -euo pipefail
cd "$(dirname "$0")/.."
gate=
if [ "${1:-}" = --gate ]; then gate=$2; shift 2; fi
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(api codec measure httpapi report load)
export PATH="$PATH:$(go env GOPATH)/bin"
command -v gremlins >/dev/null || go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
fail=0
printf '%-10s %8s %6s %6s %10s %8s\n' package killed lived other efficacy seconds
for p in "${pkgs[@]}"; do
  s=$SECONDS
  # Exit status ignored here: the gate below reads the report itself.
  flock /tmp/wirebench-load.lock gremlins unleash "./$p" --workers "${WORKERS:-1}" \
    --timeout-coefficient "${TIMEOUT_COEFFICIENT:-10}" -o "$out/$p.json" > "$out/$p.log" 2>&1 || true
  line=$(python3 - "$out/$p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k, l = r["mutants_killed"], r["mutants_lived"]
other = r.get("mutants_not_viable", 0) + r.get("mutants_not_covered", 0)
eff = r["test_efficacy"]
print(k, l, other, f"{eff:.2f}")
PY
) || { echo "$p: no report (see $out/$p.log)"; tail -20 "$out/$p.log"; fail=1; continue; }
  read -r k l o eff <<< "$line"
  printf '%-10s %8s %6s %6s %9s%% %8s\n' "$p" "$k" "$l" "$o" "$eff" $((SECONDS - s))
  grep -E '^ +LIVED' "$out/$p.log" | sed "s|^ *|  $p: |" || true
  if [ -n "$gate" ] && python3 -c "import sys; sys.exit(0 if float('$eff') < float('$gate') else 1)"; then
    echo "$p: efficacy $eff% is below $gate%"
    fail=1
  fi
done
exit $fail
