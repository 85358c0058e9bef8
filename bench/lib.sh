# lib.sh — shell functions the bench scripts share; sourced with $tmp set
# (the script's scratch folder) from the repository's root.

# build_base REV OUT: builds revision REV's wirebench into OUT from
# `git archive`, so uncommitted changes stay out of the baseline.
build_base() {
  mkdir -p "$tmp/base"
  git archive "$1" | tar -x -C "$tmp/base"
  (cd "$tmp/base" && go build -o "$2" ./cmd/wirebench)
}

# server_mallocs KIND: the running server's malloc count so far. A bare
# server ($srv, its output in $tmp/out) prints "mallocs N" on SIGUSR1;
# wirebench serve reports go_memstats_mallocs_total on http://$http/metrics.
server_mallocs() {
  if [ "$1" = bare ]; then
    local n; n=$(grep -c '^mallocs ' "$tmp/out" || true)
    kill -USR1 "$srv"
    for _ in $(seq 100); do
      [ "$(grep -c '^mallocs ' "$tmp/out" || true)" -gt "$n" ] && break
      sleep 0.01
    done
    grep '^mallocs ' "$tmp/out" | tail -1 | awk '{print $2}'
  else
    curl -fsS "http://$http/metrics" | awk '$1 == "go_memstats_mallocs_total" { printf "%.0f\n", $2 }'
  fi
}
