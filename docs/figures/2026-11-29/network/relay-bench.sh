#!/bin/sh
# The relay before and after the TUN offloads, in one session. As root,
# from the repository's root, with wirebench (this tree) and
# wirebench-old (built from 6029985^, the commit before) on PATH:
# the relay's benchmarks in both of its modes ("plain": one packet a
# read and a write, as before; "offload": super-packets, the default),
# and `wirebench link`'s calibration of rtt=0 and datacenter by each.
set -e
go test -c -o /tmp/link.test ./link
cd link
flock /tmp/wirebench-load.lock /tmp/link.test -test.run - -test.bench RelayUDP -test.benchtime 200000x -test.count 3
flock /tmp/wirebench-load.lock sh -c '
/tmp/link.test -test.run - -test.bench RelayTCP -test.benchtime 300x -test.count 3
for v in wirebench-old wirebench; do
	for spec in rtt=0 datacenter; do $v link $spec --link-check=false -- true; done
done'
