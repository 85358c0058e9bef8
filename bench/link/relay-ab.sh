#!/bin/sh
# The relay benchmarks of two commits, alternately in one session: the
# UDP flood (64-byte datagrams one a send, at rate=unlimited and at
# rtt=10ms) and the TCP bulk transfer, default mode (uring). As root,
# from the repository's root:
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
cd link
for i in $(seq "$rounds"); do
	for c in "$before" "$after"; do
		flock /tmp/wirebench-load.lock sh -c "
			echo \"== $c round $i, load \$(cut -d' ' -f1-3 /proc/loadavg)\"
			$dir/$c.test -test.run - -test.bench 'RelayUDP/gso=false/uring' -test.benchtime 200000x -test.benchmem | grep ^Bench
			$dir/$c.test -test.run - -test.bench 'RelayTCP/uring' -test.benchtime 300x -test.benchmem | grep ^Bench"
	done
done
