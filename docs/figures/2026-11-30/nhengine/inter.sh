#!/bin/bash
# inter.sh ROUNDS SECS NAME=CMD... : all servers up pinned on CPU1 GOMAXPROCS=2, wrk -t1 -c50 on CPU0 turning between them
set -euo pipefail
cd /tmp/nh20
rounds=$1 secs=$2; shift 2
names=(); declare -A cmd pid addr cpu req
for a in "$@"; do n=${a%%=*}; names+=("$n"); cmd[$n]=${a#*=}; done
trap 'for p in "${pid[@]}"; do kill $p 2>/dev/null || true; done' EXIT
for n in "${names[@]}"; do
  eval "exec env GOMAXPROCS=2 taskset -c 1 ${cmd[$n]}" >i.$n.out 2>i.$n.err &
  pid[$n]=$!
done
for n in "${names[@]}"; do
  for _ in $(seq 100); do addr[$n]=$(sed -n 's/^listening http=\([^ ]*\).*/\1/p' i.$n.out); [ -n "${addr[$n]}" ] && break; sleep 0.05; done
  [ -n "${addr[$n]}" ] || { echo "$n did not start"; exit 1; }
  taskset -c 0 wrk -t1 -c50 -d1s http://${addr[$n]}/users/1 >/dev/null
  cpu[$n]=0 req[$n]=0
done
: > i.rounds
ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
for r in $(seq $rounds); do
  for n in "${names[@]}"; do
    t0=$(ticks ${pid[$n]}); out=$(taskset -c 0 wrk -t1 -c50 -d${secs}s http://${addr[$n]}/users/1); t1=$(ticks ${pid[$n]})
    grep -q Non-2xx <<<"$out" && { echo "$n non-2xx"; exit 1; }
    k=$(awk '/requests in/{print $1}' <<<"$out")
    cpu[$n]=$((cpu[$n]+t1-t0)) req[$n]=$((req[$n]+k))
    echo "$r $n $(awk -v t=$((t1-t0)) -v k=$k 'BEGIN{printf "%.4f", t/100*1e6/k}')" >> i.rounds
  done
done
first=${names[0]}
for n in "${names[@]}"; do
  awk -v n=$n -v t=${cpu[$n]} -v k=${req[$n]} 'BEGIN{printf "%-10s %6.3f us/req (%d req)\n", n, t/100*1e6/k, k}'
done
for n in "${names[@]}"; do
  [ $n = $first ] && continue
  awk -v f=$first -v n=$n '$2==f{b[$1]=$3} $2==n{v[$1]=$3} END{for(r in v) print v[r]/b[r]}' i.rounds | sort -g | awk -v n=$n -v f=$first '{x[NR]=$1} END{printf "%s/%s median %.3f  quartiles %.3f-%.3f  min-max %.3f-%.3f (%d)\n", n, f, x[int((NR+1)/2)], x[int((NR+3)/4)], x[int((3*NR+3)/4)], x[1], x[NR], NR}'
done
