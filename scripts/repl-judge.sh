#!/usr/bin/env bash
# The replication check of issue 13, with the built binary, redis-cli and
# curl only: a leader and a follower started with --replica-of; 20,000
# writes; the follower refuses writes; BGREWRITEAOF and more writes; kill -9
# and restart of the leader and more writes; the follower must end with
# exactly the leader's keys and values.
#
#   scripts/repl-judge.sh [N]        # N writes in the first phase (20000)
#
# Everything listens on 127.0.0.1 (port 0, then the leader's port again for
# its restart). Exit status 0 only when the follower equals the leader.
set -euo pipefail
N=${1:-20000}
TOKEN=judge-$$-$RANDOM
command -v redis-cli >/dev/null || { echo "redis-cli missing: apt-get install redis-tools" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl missing" >&2; exit 2; }
cd "$(dirname "$0")/.."
W=$(mktemp -d /tmp/wirebench-repl-judge.XXXXXX)
PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null || true; done
  rm -rf "$W"
  exit $rc
}
trap cleanup EXIT
go build -o "$W/wirebench" ./cmd/wirebench
BIN=$W/wirebench

# start NAME ARGS...: runs serve in the background, waits for its
# "listening" line and sets HTTP_<NAME>, RESP_<NAME>, PID_<NAME>.
start() {
  local name=$1; shift
  "$BIN" serve --no-grpc --auth-token "$TOKEN" "$@" >"$W/$name.out" 2>>"$W/$name.err" &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 100); do
    if grep -q '^listening' "$W/$name.out" 2>/dev/null; then break; fi
    kill -0 "$pid" 2>/dev/null || { cat "$W/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  local line; line=$(grep '^listening' "$W/$name.out")
  printf -v "HTTP_$name" '%s' "$(sed -E 's/.*http=([^ ]+).*/\1/' <<<"$line")"
  printf -v "RESP_$name" '%s' "$(sed -E 's/.*resp=([^ ]+).*/\1/' <<<"$line")"
  printf -v "PID_$name" '%s' "$pid"
}
cli() { local addr=$1; shift; redis-cli --no-auth-warning -a "$TOKEN" -h "${addr%:*}" -p "${addr##*:}" "$@"; }

# writes ADDR FROM TO: SETs, overwrites, DELs and expiries through one pipe.
writes() {
  local addr=$1 from=$2 to=$3
  awk -v a="$from" -v b="$to" 'BEGIN {
    for (i = a; i < b; i++) {
      printf "SET key:%d value-%d-%d\n", i, i, a
      if (i % 7 == 0)  printf "SET key:%d overwritten-%d\n", int(i/2), i
      if (i % 11 == 0) printf "DEL key:%d\n", int(i/3)
      if (i % 13 == 0) printf "SET short:%d gone PX 200\n", i
      if (i % 17 == 0) printf "SET long:%d stays EX 86400\n", i
      if (i % 19 == 0) printf "INCR counter\n"
    }
  }' | cli "$addr" >/dev/null
}

repl_field() { cli "$1" INFO replication | tr -d '\r' | sed -n "s/^$2://p"; }

# converge: the follower has the leader's replid and (at least, the leader read
# first) its offset, link up.
converge() {
  for _ in $(seq 300); do
    local lid lo fid fo link
    lid=$(repl_field "$RESP_L" master_replid); lo=$(repl_field "$RESP_L" master_repl_offset)
    fid=$(repl_field "$RESP_F" master_replid); fo=$(repl_field "$RESP_F" slave_repl_offset)
    link=$(repl_field "$RESP_F" master_link_status)
    if [ "$lid" = "$fid" ] && [ -n "$fo" ] && [ "$fo" -ge "$lo" ] && [ "$link" = up ]; then
      echo "converged: replid $lid offset $lo"
      return 0
    fi
    sleep 0.1
  done
  echo "no convergence: leader $lid/$lo follower $fid/$fo link $link" >&2
  tail -5 "$W/F.err" >&2
  return 1
}

dump() { # every key with its value, sorted
  cli "$1" --scan | sort >"$W/keys.$2"
  sed 's/^/GET /' "$W/keys.$2" | cli "$1" | paste -d' ' "$W/keys.$2" - >"$W/dump.$2"
  wc -l <"$W/dump.$2"
}

T0=$(date +%s.%N)
start L --http 127.0.0.1:0 --resp 127.0.0.1:0 --data-dir "$W/leader" --appendfsync everysec
start F --http 127.0.0.1:0 --resp 127.0.0.1:0 --data-dir "$W/follower" --replica-of "http://$HTTP_L"
echo "leader http=$HTTP_L resp=$RESP_L; follower http=$HTTP_F resp=$RESP_F"

echo "1. $N writes"
writes "$RESP_L" 0 "$N"

echo "2. the follower refuses writes"
r=$(cli "$RESP_F" SET x 1 2>&1); echo "   RESP SET: $r"; [[ $r == READONLY* ]]
c=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOKEN" --data 1 "http://$HTTP_F/kv/x"); echo "   HTTP PUT: $c"; [ "$c" = 403 ]
c=$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP_F/kv/key:1"); echo "   HTTP GET without the token: $c"; [ "$c" = 401 ]
r=$(redis-cli -h "${RESP_F%:*}" -p "${RESP_F##*:}" GET key:1 2>&1); echo "   RESP GET without AUTH: $r"; [[ $r == NOAUTH* ]]

echo "3. BGREWRITEAOF and more writes"
cli "$RESP_L" BGREWRITEAOF
writes "$RESP_L" "$N" $((N + N / 4))

echo "4. kill -9 of the leader, restart on its ports, more writes"
kill -9 "$PID_L"; wait "$PID_L" 2>/dev/null || true
start L --http "$HTTP_L" --resp "$RESP_L" --data-dir "$W/leader" --appendfsync everysec
writes "$RESP_L" $((N + N / 4)) $((N + N / 2))

echo "5. compare"
converge
sleep 0.3 # let the 200 ms expiries pass on both sides
nl=$(dump "$RESP_L" leader); nf=$(dump "$RESP_F" follower)
echo "   leader $nl keys, follower $nf keys"
cli "$RESP_F" INFO replication | tr -d '\r' | grep -E '^(role|master_link_status|slave_repl_offset|wirebench_resyncs|wirebench_applied_records)' | sed 's/^/   /'
[ "$nl" -ge $((N / 2)) ] || { echo "FAIL: the leader holds only $nl keys" >&2; exit 1; }
if ! cmp -s "$W/dump.leader" "$W/dump.follower"; then
  diff "$W/dump.leader" "$W/dump.follower" | head -20 >&2
  echo "FAIL: the follower differs from the leader" >&2
  exit 1
fi
printf 'PASS: the follower holds exactly the leader'"'"'s %s keys and values (%.1f s)\n' "$nl" "$(echo "$(date +%s.%N) - $T0" | bc)"
