#!/bin/bash
# (run from /tmp/h3s with BIN binaries there: D=/tmp/h3s holds h3bare and wirebench built from this commit)
# client CPU/request: bare, old ours, new ours against one bare server (per round);
# sequential rotated, then paired (bare & X at once on CPU 0).
set -e
D=/tmp/h3s; secs=${1:-4}; rounds=${2:-5}
OLD=${OLD:-$D/old/wirebench}; NEW=${NEW:-$D/wirebench}
cd /work/wt/h3speed
client() { # kind -> prints "kind us/req n"
  local k=$1 t=$D/t.$1.$$ o=$D/o.$1.$$ n
  case $k in
  bare) /usr/bin/time -f '%U %S' -o $t taskset -c 0 $D/h3bare load -c 50 -conns 4 -d ${secs}s https://$h3/users/1 > $o; n=$(awk '{print $2}' $o);;
  old|new|nol) b=$NEW; [ $k = old ] && b=$OLD; fl=; [ $k = nol ] && fl=--no-layers
     /usr/bin/time -f '%U %S' -o $t taskset -c 0 $b load -q --transport h3 -k $fl -c 50 --conns 4 -d ${secs}s https://$h3/users/1 > $o
     grep -q 'failed 0 ' $o || { echo "fail $k: $(cat $o)" >&2; exit 1; }
     n=$(awk '$1=="requests"{print $2; exit}' $o);;
  esac
  read -r u s < $t; rm -f $t $o
  awk -v k=$k -v u=$u -v s=$s -v n=$n 'BEGIN{printf "%s %.2f %d\n", k, (u+s)*1e6/n, n}'
}
echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) secs=$secs rounds=$rounds kinds=${KINDS:-bare old new}"
kinds=${KINDS:-bare old new}
for r in $(seq $rounds); do
  taskset -c 1 $D/h3bare serve -seed-users 1000 > $D/sv.out 2>&1 & srv=$!
  for i in $(seq 200); do h3=$(sed -n 's/^listening h3=//p' $D/sv.out); [ -n "$h3" ] && break; sleep 0.05; done
  taskset -c 0 $D/h3bare load -d 1s https://$h3/users/1 >/dev/null
  for k in $kinds; do echo "seq $r $(client $k)"; done
  if [ -n "$PAIRED" ]; then
    for k in $PAIRED; do

      ( client bare > $D/pa.$$ ) & pa=$!; bb=$(client $k); wait $pa; echo "pair $r $(cat $D/pa.$$) $bb"; rm -f $D/pa.$$
    done
  fi
  kill $srv; wait $srv 2>/dev/null || true
  kinds=$(tr ' ' '\n' <<<"$kinds" | tac | tr '\n' ' ')
done
echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
