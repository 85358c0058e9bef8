#!/usr/bin/env bash
# check.sh: what quic-go asks of Linux, granted or not, in each server and client.
set -u
cd /tmp/h3bin/udp; B=/tmp/h3bin
rm -f *.strace out-* err-* cl-* ss-*
report() { # NAME STRACE ERR SS
  echo "== $1"
  echo "  warnings: $(grep -ci 'buffer size\|failed to' "$3")"
  echo "  setsockopt: $(grep -oE 'SO_RCVBUFFORCE, \[[0-9]+\]|SO_SNDBUFFORCE, \[[0-9]+\]|SO_RCVBUF, \[[0-9]+\]|SO_SNDBUF, \[[0-9]+\]|IP_RECVTOS, \[1\]|IPV6_RECVTCLASS, \[1\]|IP_MTU_DISCOVER, \[[A-Z_0-9]+\]' "$2" | sort | uniq -c | tr '\n' ';' | tr -s ' ')"
  echo "  getsockopt UDP_SEGMENT: $(grep 'getsockopt.*UDP_SEGMENT' "$2" | head -1 | sed 's/.*= /= /')"
  echo "  sendmsg $(grep -c 'sendmsg(' "$2"), with UDP_SEGMENT cmsg $(grep 'sendmsg(' "$2" | grep -c 'UDP_SEGMENT'), with IP_TOS cmsg $(grep 'sendmsg(' "$2" | grep -c 'IP_TOS'); recvmmsg $(grep -c 'recvmmsg(' "$2")"
  echo "  ss: $(grep -o 'rb[0-9]*,t0,tb[0-9]*\|rb[0-9]*,t[0-9]*,tb[0-9]*' "$4" | sort -u | tr '\n' ' ')"
}
start() { # KIND
  case $1 in
    bare) set -- "$B/h3bare" serve -seed-users 1000 ;;
    linked) set -- "$B/h3bare-linked" serve -seed-users 1000 ;;
    ours) set -- "$B/wirebench" serve --http 127.0.0.1:0 --grpc 127.0.0.1:0 --https 127.0.0.1:0 --http3 127.0.0.1:0 --seed-users 1000 --seed-todos 10 ;;
  esac
  strace -f -qq -e trace=setsockopt,getsockopt,sendmsg,recvmmsg -o "srv-$k.strace" "$@" > "out-$k" 2> "err-$k" &
  for _ in $(seq 100); do h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' "out-$k"); [ -n "$h3" ] && break; sleep 0.1; done
  srv=$(pgrep -P $! | head -1)
}
for k in bare linked ours; do
  start $k
  "$B/h3bare" load -c 50 -conns 4 -n 2000 "https://$h3/users/1" > "cl-$k" &
  cp=$!; sleep 0.3; ss -uamp > "ss-$k"; wait $cp
  grep "pid=$srv," -A1 "ss-$k" > "ss-$k.own"
  kill "$srv"; wait
  report "server $k ($(cat cl-$k))" "srv-$k.strace" "err-$k" "ss-$k.own"
done
# clients against one bare server (not traced)
"$B/h3bare" serve -seed-users 1000 > out-s 2> err-s & s=$!
for _ in $(seq 100); do h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' out-s); [ -n "$h3" ] && break; sleep 0.1; done
for k in bare linked ours; do
  case $k in
    bare) c=("$B/h3bare" load -c 50 -conns 4 -n 2000) ;;
    linked) c=("$B/h3bare-linked" load -c 50 -conns 4 -n 2000) ;;
    ours) c=("$B/wirebench" load -q --transport h3 -k -c 50 --conns 4 -n 2000) ;;
  esac
  strace -f -qq -e trace=setsockopt,getsockopt,sendmsg,recvmmsg -o "cl-$k.strace" "${c[@]}" "https://$h3/users/1" > "clout-$k" 2> "clerr-$k" & t=$!
  sleep 0.4; ss -uamp > "ss-cl-$k"; wait $t
  grep -E '"(h3bare|h3bare-linked|wirebench)"' -A1 "ss-cl-$k" | grep -v "pid=$s," > "ss-cl-$k.own"
  report "client $k ($(grep -m1 'requests' clout-$k | tr -s ' '))" "cl-$k.strace" "clerr-$k" "ss-cl-$k.own"
done
kill $s; wait
