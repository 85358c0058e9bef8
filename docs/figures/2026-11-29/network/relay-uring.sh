#!/bin/sh
# The relay's reader with a read system call a packet ("offload") and
# through one io_uring multishot read ("uring", the default), alternately
# in one session. As root, from the repository's root:
set -e
go test -c -o /tmp/link.test ./link
cd link
flock /tmp/wirebench-load.lock sh -c '
for i in 1 2 3 4 5; do for m in offload uring; do
	/tmp/link.test -test.run - -test.bench "RelayUDP/gso=false/$m\$" -test.benchtime 150000x
done; done
for i in 1 2 3; do for m in offload uring; do
	/tmp/link.test -test.run - -test.bench "RelayTCP/$m\$" -test.benchtime 200x
done; done'
# The read path alone (ring-vs-tun.go), three runs each:
cd ../docs/figures/2026-11-29/network && go build -o /tmp/rvt ring-vs-tun.go
flock /tmp/wirebench-load.lock sh -c 'for i in 1 2 3; do for m in tun uring; do DRAIN=5000 unshare -n /tmp/rvt $m; done; done'
