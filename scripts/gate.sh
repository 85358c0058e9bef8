#!/usr/bin/env bash
# gate.sh: wirebench's own regression gate on its reference server (CI's
# "perf gate" step, and the same command before pushing). It builds
# `wirebench serve` at a base revision and from the working tree, runs them
# as the two cells of a short interleaved study (ABBA, a fresh server per
# trial, client and server pinned to separate CPUs where there are two) on
# the hot path, GET /users/1 in JSON over HTTP/1.1 keep-alive, and judges it
# with `wirebench gate` (docs/gate.md):
#   exit 0  pass, or undecidable (the verdict says so; STRICT=1: exit 3)
#   exit 1  a significant regression beyond the tolerance
#   exit 2  the gate could not run (a build, the study or the verdict failed)
#
# usage: scripts/gate.sh [BASE]
#   BASE: a git revision. Default: the merge base of HEAD with origin/main
#   (or main); when HEAD is on main already (a clean clone of main, CI),
#   HEAD's first parent. The change is the working tree: HEAD plus any
#   uncommitted edits.
# env: TRIALS=16 per cell, WARMUP=300ms, DURATION=1500ms (each trial),
#   TOLERANCE="cpu_per_req:+8%" (space-separated, each a --max-regression),
#   CONCURRENCY=32, OUT=wirebench-out/gate (the study's results are kept
#   there), LOCK=/tmp/wirebench-load.lock (held for the study only, not
#   the builds; none: CI, which runs alone), FORCE=1 runs even when no
#   non-test Go file, go.mod, go.sum or PGO profile differs from BASE (by
#   default that is a pass without a run: the binaries would be the same).
# needs: git, go, flock (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
TRIALS=${TRIALS:-16} WARMUP=${WARMUP:-300ms} DURATION=${DURATION:-1500ms}
TOLERANCE=${TOLERANCE:-cpu_per_req:+8%} CONCURRENCY=${CONCURRENCY:-32}
OUT=${OUT:-wirebench-out/gate} LOCK=${LOCK:-/tmp/wirebench-load.lock}
FORCE=${FORCE:-0} STRICT=${STRICT:-0}
t0=$SECONDS
say() { printf 'gate: %s\n' "$*" >&2; }

if [ $# -gt 0 ]; then
  base=$(git rev-parse --verify --quiet --end-of-options "$1^{commit}") || { say "$1 is not a commit"; exit 2; }
  why="given"
else
  up=
  for r in origin/main main; do
    if git rev-parse --verify --quiet "$r^{commit}" >/dev/null; then up=$r; break; fi
  done
  [ -n "$up" ] || { say "no origin/main or main to take the merge base with: give BASE"; exit 2; }
  base=$(git merge-base HEAD "$up")
  why="merge base with $up"
  if [ "$base" = "$(git rev-parse HEAD)" ]; then
    # HEAD is on main: gate the last commit, against its first parent.
    base=$(git rev-parse --verify --quiet HEAD^1) || { say "HEAD has no parent: nothing to compare with"; exit 0; }
    why="HEAD's first parent (HEAD is on $up)"
  fi
fi
head=$(git rev-parse --short=12 HEAD)
dirty=; git diff --quiet HEAD || dirty=" + uncommitted edits"
say "base $(git rev-parse --short=12 "$base") ($why); change: the working tree, HEAD $head$dirty"

# Only these make a different server binary; tests and docs do not.
paths=('*.go' ':(exclude)*_test.go' go.mod go.sum '*.pgo')
if [ "$FORCE" != 1 ] && git diff --quiet "$base" -- "${paths[@]}" &&
  [ -z "$(git ls-files --others --exclude-standard -- "${paths[@]}")" ]; then
  say "no Go source, go.mod, go.sum or PGO profile differs from the base: nothing to gate (FORCE=1 runs it)"
  exit 0
fi

tmp=$(mktemp -d)
wt=${TMPDIR:-/tmp}/wirebench-gate-base-$(id -u)
cleanup() {
  if [ -d "$wt" ]; then git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"; fi
  git worktree prune 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# The change: the working tree, built where CI's tests built it, so the
# build cache holds all of it but the link.
go build -o "$tmp/wirebench-change" ./cmd/wirebench || { say "the change does not build"; exit 2; }
# The base: a worktree at a fixed path, so that a package unchanged since
# the last gate's base is a cache hit (the cache keys a package by its
# directory, unless -trimpath, which would rebuild every dependency once).
# Its lock keeps two gates from sharing the checkout at once.
exec 9>"$wt.lock"
flock 9
if [ -d "$wt" ]; then git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"; fi
git worktree prune
git worktree add --detach --quiet "$wt" "$base"
(cd "$wt" && go build -o "$tmp/wirebench-base" ./cmd/wirebench) || { say "the base does not build"; exit 2; }
git worktree remove --force "$wt"
flock -u 9
say "built both in $((SECONDS - t0)) s"

# Each cell runs its own build's server; the client (the study) is the
# change's build, the same for both cells.
cat > "$tmp/gate.yaml" <<EOF
name: gate
title: "wirebench serve, GET /users/1 (JSON, HTTP/1.1): base $(git rev-parse --short=12 "$base") vs change $head$dirty"
question: "Does the change make the reference server's hot path dearer?"
trials: $TRIALS
warmup: $WARMUP
duration: $DURATION
order: abba
baseline: base
server: {ready: "http://127.0.0.1:{port}/healthz"}
load: {url: "http://127.0.0.1:{port}/users/1", concurrency: $CONCURRENCY, expect_status: 200, expect_body_contains: '"id":1,'}
cells:
  - {name: base, server: {command: ["$tmp/wirebench-base", "serve", "--http", "127.0.0.1:{port}", "--no-grpc"]}}
  - {name: change, server: {command: ["$tmp/wirebench-change", "serve", "--http", "127.0.0.1:{port}", "--no-grpc"]}}
EOF
mkdir -p "$OUT"
study=("$tmp/wirebench-change" study run "$tmp/gate.yaml" --out "$OUT")
if [ "$LOCK" != none ]; then
  t1=$SECONDS
  exec 8>>"$LOCK"
  flock 8
  say "waited $((SECONDS - t1)) s for the load lock $LOCK"
fi
t1=$SECONDS
# Its report goes to the results folder (report.md); the progress lines,
# one a trial, to stderr.
"${study[@]}" 8>&- >"$tmp/study.out" || { tail -40 "$tmp/study.out" >&2; say "the study failed"; exit 2; }
[ "$LOCK" = none ] || flock -u 8
say "study of 2 × $TRIALS trials in $((SECONDS - t1)) s"
run=$(ls -dt "$OUT"/gate-*/ | head -1)
args=()
for tol in $TOLERANCE; do args+=(--max-regression "$tol"); done
set +e
"$tmp/wirebench-change" gate "$run" "${args[@]}"
code=$?
set -e
say "verdict in $((SECONDS - t0)) s in all; results in $run"
case $code in
  0) say "pass" ;;
  1) say "REGRESSION"; exit 1 ;;
  3) say "undecidable: not a failure (STRICT=1 makes it one); more TRIALS or a quieter machine resolve it"
     # An if, not `[ … ] && exit 3`: as the script's last command that
     # list's status (1 when not strict) would be its exit status, and CI
     # fails on it.
     if [ "$STRICT" = 1 ]; then exit 3; fi ;;
  *) say "the gate could not judge (exit $code)"; exit 2 ;;
esac
exit 0
