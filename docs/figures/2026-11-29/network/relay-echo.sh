#!/bin/sh
# The relay under request and answer (BenchmarkRelayEcho: 64-byte UDP
# echoes, 1, 16 or 64 in flight) against the floor of any TUN relay
# (tunrelay.c: a plain read and write a packet, one thread a direction or
# one for both), and the options measured and not adopted: the reader's
# spin before it sleeps, IFF_NAPI. As root, from the repository's root.
# Takes the load lock per batch, never for a build.
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -pthread -o "$dir/tunrelay" docs/figures/2026-11-29/network/tunrelay.c
go test -c -o "$dir/link.test" ./link
cd link
export WIREBENCH_BARE_RELAY="$dir/tunrelay" WIREBENCH_RELAY_SPIN=${SPIN:-30us} WIREBENCH_RELAY_NAPI=1
for i in 1 2; do
	flock /tmp/wirebench-load.lock sh -c "
		echo \"== round $i, load \$(cut -d' ' -f1-3 /proc/loadavg)\"
		for m in uring handoff bare-2t bare-1t; do
			$dir/link.test -test.run - -test.bench \"RelayEcho/inflight=.*/\$m\\\$\" -test.benchtime 1s | grep ^Bench
		done"
	flock /tmp/wirebench-load.lock sh -c "
		for m in uring spin=$WIREBENCH_RELAY_SPIN napi; do
			$dir/link.test -test.run - -test.bench \"RelayEcho/inflight=(16|64)/\$m\\\$\" -test.benchtime 20000x | grep ^Bench
			$dir/link.test -test.run - -test.bench \"RelayUDP/gso=false/\$m\\\$\" -test.benchtime 150000x | grep ^Bench
		done"
done
