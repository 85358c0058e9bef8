#!/bin/sh
# The relay benchmarks of two commits, alternately in one session: the
# UDP flood (64-byte datagrams one a send, at rate=unlimited and at
# rtt=10ms), the TCP bulk transfer and the UDP echoes (1, 16 and 64 in
# flight), default mode (uring); with BARE=1 also the echoes through
# tunrelay.c (docs/figures/2026-11-29/network/), one thread a direction
# and one for both, the floor of any relay on TUN devices, in the same
# rounds. As root, from the repository's root:
#   sh bench/link/relay-ab.sh BEFORE AFTER [ROUNDS]
# Prints each run's benchmark line with the load average; take the lock
# per round, never for a build.
set -eu
before=$1 after=$2 rounds=${3:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for c in "$before" "$after"; do
	git worktree add -q --detach "$dir/src" "$c"
	(cd "$dir/src" && go test -c -o "$dir/$c.test" ./link)
	git worktree remove --force "$dir/src"
done
bare=
if [ "${BARE:-}" = 1 ]; then
	cc -O2 -pthread -o "$dir/tunrelay" docs/figures/2026-11-29/network/tunrelay.c
	bare="WIREBENCH_BARE_RELAY=$dir/tunrelay $dir/$after.test -test.run - -test.bench 'RelayEcho/inflight=.*/bare-' -test.benchtime 1s | grep ^Bench"
fi
cd link
for i in $(seq "$rounds"); do
	for c in "$before" "$after"; do
		flock /tmp/wirebench-load.lock sh -c "
			echo \"== $c round $i, load \$(cut -d' ' -f1-3 /proc/loadavg), \$(date -u +%H:%M:%S) UTC\"
			$dir/$c.test -test.run - -test.bench 'RelayUDP/gso=false/uring' -test.benchtime 200000x -test.benchmem | grep ^Bench
			$dir/$c.test -test.run - -test.bench 'RelayTCP/uring' -test.benchtime 300x -test.benchmem | grep ^Bench
			$dir/$c.test -test.run - -test.bench 'RelayEcho/inflight=.*/uring\$' -test.benchtime 1s | grep ^Bench"
	done
	if [ -n "$bare" ]; then
		flock /tmp/wirebench-load.lock sh -c "
			echo \"== bare round $i, load \$(cut -d' ' -f1-3 /proc/loadavg), \$(date -u +%H:%M:%S) UTC\"
			$bare"
	fi
done
