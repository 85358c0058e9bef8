#!/bin/bash
# (run from /tmp/h3s with BIN binaries there: D=/tmp/h3s holds h3bare and wirebench built from this commit)
# paired server CPU/request: servers A and B at once on CPU 1, each driven by its own bare client on CPU 0
set -e
D=/tmp/h3s; secs=${1:-4}; rounds=${2:-5}; hz=$(getconf CLK_TCK)
WB=${WB:-$D/wirebench}
start() { # kind outfile -> pid in $!
  case $1 in
  bare) taskset -c 1 $D/h3bare serve -seed-users 1000 > $2 2>&1 & ;;
  bareg) GOGC=${G:-130} taskset -c 1 $D/h3bare serve -seed-users 1000 > $2 2>&1 & ;;
  ballast) taskset -c 1 $D/h3bare serve -seed-users 1000 -ballast-kb ${BKB:-560} > $2 2>&1 & ;;
  ours) taskset -c 1 $WB serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10 $SERVE_FLAGS > $2 2>/dev/null & ;;
  oursg) GOGC=${G:-130} taskset -c 1 $WB serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10 $SERVE_FLAGS > $2 2>/dev/null & ;;
  ours2) taskset -c 1 ${WB2:-$WB} serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10 $SERVE_FLAGS2 > $2 2>/dev/null & ;;
  esac
}
addr() { for i in $(seq 200); do a=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' $1); [ -n "$a" ] && break; sleep 0.05; done; echo $a; }
A=${A:-bare}; B=${B:-ours}
echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) A=$A B=$B secs=$secs"
for r in $(seq $rounds); do
  start $A $D/pa.out; pa=$!; start $B $D/pb.out; pb=$!
  ha=$(addr $D/pa.out); hb=$(addr $D/pb.out)
  taskset -c 0 $D/h3bare load -d 1s https://$ha/users/1 >/dev/null & w=$!; taskset -c 0 $D/h3bare load -d 1s https://$hb/users/1 >/dev/null; wait $w; sleep 0.2
  read -r ua sa < <(awk '{print $14, $15}' /proc/$pa/stat); read -r ub sb < <(awk '{print $14, $15}' /proc/$pb/stat)
  taskset -c 0 $D/h3bare load -c 50 -conns 4 -d ${secs}s https://$ha/users/1 > $D/la.out & la=$!
  taskset -c 0 $D/h3bare load -c 50 -conns 4 -d ${secs}s https://$hb/users/1 > $D/lb.out
  wait $la
  read -r ua1 sa1 < <(awk '{print $14, $15}' /proc/$pa/stat); read -r ub1 sb1 < <(awk '{print $14, $15}' /proc/$pb/stat)
  kill $pa $pb; wait $pa $pb 2>/dev/null || true
  na=$(awk '{print $2}' $D/la.out); nb=$(awk '{print $2}' $D/lb.out)
  awk -v r=$r -v A=$A -v B=$B -v ca=$((ua1-ua+sa1-sa)) -v cb=$((ub1-ub+sb1-sb)) -v hz=$hz -v na=$na -v nb=$nb 'BEGIN{a=ca/hz*1e6/na; b=cb/hz*1e6/nb; printf "%d %s %.2f (%d) %s %.2f (%d) ratio %.3f\n", r, A, a, na, B, b, nb, b/a}'
done
echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
