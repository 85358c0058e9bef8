#!/usr/bin/env bash
# instr.sh N1 N2 NAME=BINDIR[:flags] ... (bare*: BINDIR/h3bare load; baretrace: with H3BARE_TRACE=1, a scratch h3bare whose transports carry a trace like load/h3's default split; others: BINDIR/wirebench load) : client instructions per request under cachegrind, against one bare server
set -euo pipefail
n1=$1 n2=$2; shift 2
tmp=$(mktemp -d)
GOMAXPROCS=2 taskset -c 1 /tmp/h3l/base/h3bare serve -seed-users 1000 > $tmp/out 2>$tmp/err &
srv=$!
trap 'kill $srv; rm -rf $tmp' EXIT
for _ in $(seq 100); do h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' $tmp/out); [ -n "$h3" ] && break; sleep 0.1; done
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) N1 $n1 N2 $n2"
for spec in "$@"; do
  name=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; flags=""; [[ $rest == *:* ]] && flags=${rest#*:}
  for n in $n1 $n2; do
    if [[ $name == bare* ]]; then
      tr=; [ "$name" = baretrace ] && tr=1
      H3BARE_TRACE=$tr taskset -c 0 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$tmp/$name.$n.cg $bin/h3bare load -c 50 -conns 4 -n $n https://$h3/users/1 > $tmp/cout 2>$tmp/cerr
      grep -q "^requests $n errors 0 " $tmp/cout || { echo "bad: $(cat $tmp/cout)"; exit 1; }
    else
      taskset -c 0 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$tmp/$name.$n.cg $bin/wirebench load -q --transport h3 -k -c 50 --conns 4 -n $n $flags https://$h3/users/1 > $tmp/cout 2>$tmp/cerr
      grep -q 'failed 0 ' $tmp/cout || { echo "bad: $(cat $tmp/cout $tmp/cerr)"; exit 1; }
    fi
    grep '^summary:' $tmp/$name.$n.cg | awk '{print $2}' > $tmp/$name.$n.ir
  done
  [ -n "${PROFILE:-}" ] && cg_diff $tmp/$name.$n1.cg $tmp/$name.$n2.cg > $PROFILE/$name.cg 2>/dev/null
  echo "$name $(( ($(cat $tmp/$name.$n2.ir) - $(cat $tmp/$name.$n1.ir)) / (n2 - n1) ))"
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
