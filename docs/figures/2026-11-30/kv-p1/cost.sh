#!/usr/bin/env bash
# cost.sh MODE TEST N P [C]: fresh servers, warm-up, then N requests: rate,
# server CPU ns/request (schedstat, all threads), server context switches per
# request, client CPU us/request.
set -eu
MODE=$1 T=$2 N=${3:-200000} P=${4:-1} C=${5:-50}
WB=${WB:-/tmp/kvp1/wb} WHO=${WHO:-"redis ours"}
d=$(mktemp -d)
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
sched() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk "{s+=\$1} END{printf \"%.0f\", s}"; }
csw() { cat /proc/$1/task/*/status 2>/dev/null | awk '/^voluntary_ctxt/{v+=$2} /^nonvoluntary_ctxt/{n+=$2} END{print v, n}'; }
for w in $WHO; do
  p=$(port); mkdir -p $d/$w
  if [ $w = redis ]; then
    case $MODE in none) a=(--appendonly no);; *) a=(--appendonly yes --appendfsync $MODE);; esac
    taskset -c 1 redis-server --port $p --bind 127.0.0.1 --save '' --dir $d/$w --loglevel warning "${a[@]}" >/dev/null 2>&1 &
  else
    case $MODE in none) a=();; *) a=(--data-dir $d/$w --appendfsync $MODE);; esac
    bin=$WB; envs=${WBENV:-X=1}
    [ $w = exp ] && { bin=${WB_EXP:-/tmp/kvp1/wb-exp}; envs=${EXPENV:-WB_LOOPWAIT=block}; }
    [ $w = new ] && { bin=${WB_NEW:-/tmp/kvp1/wb-new}; envs=X=1; }
    taskset -c 1 env $envs $bin serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --no-grpc --seed-users 0 --seed-todos 0 --resp 127.0.0.1:$p "${a[@]}" >/dev/null 2>$d/err &
  fi
  pid=$!
  for _ in $(seq 100); do redis-cli -p $p ping >/dev/null 2>&1 && break; sleep 0.1; done
  taskset -c 0 redis-benchmark -p $p -c $C -d 128 -r 10000 -n 50000 -P $P -t $T -q >/dev/null 2>&1
  s0=$(sched $pid); c0=$(csw $pid)
  /usr/bin/time -f "%U %S" -o $d/ct taskset -c 0 redis-benchmark -p $p -c $C -d 128 -r 10000 -n $N -P $P -t $T -q 2>/dev/null | tr '\r' '\n' | grep -E '^(SET|GET):' | tail -1 > $d/rate
  s1=$(sched $pid); c1=$(csw $pid)
  [ -n "${THREADS:-}" ] && for t in /proc/$pid/task/*; do echo "   thread $(basename $t) $(awk '{print $1}' $t/schedstat) ns, $(awk '/ctxt/{printf "%s %s ", $1, $2}' $t/status)"; done
  kill $pid; wait $pid 2>/dev/null || true
  set -- $c0 $c1
  echo "$w $MODE $T -P $P -c $C: $(awk '{print $2}' $d/rate)/s srv $(( (s1 - s0) / N )) ns/req, csw vol $(awk -v a=$1 -v b=$3 -v n=$N 'BEGIN{printf "%.4f", (b-a)/n}') invol $(awk -v a=$2 -v b=$4 -v n=$N 'BEGIN{printf "%.4f", (b-a)/n}')/req, client $(awk -v n=$N '{printf "%.2f", ($1+$2)*1e6/n}' $d/ct) us/req"
done
rm -rf $d
