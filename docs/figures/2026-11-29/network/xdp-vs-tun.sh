#!/bin/sh
# A 64-byte UDP datagram read from a TUN device (tun: a read each; uring:
# one io_uring multishot read) and from an AF_XDP socket on a veth (xdp:
# native XDP, copy mode; xdpskb: generic XDP), flooded one a write, paced
# at 40 a millisecond, and 64 a write with UDP_SEGMENT: three rounds, the
# modes alternately in each. As root, from the repository's root; takes
# the load lock itself (do not wrap it in another flock).
set -e
go build -o /tmp/xdpvt docs/figures/2026-11-29/network/xdp-vs-tun.go
unshare -n /tmp/xdpvt xdpzc || true # zero-copy: veth refuses it
flock /tmp/wirebench-load.lock sh -c '
for round in 1 2 3; do
  echo "round $round, $(date -u +%H:%M:%S) UTC, load average $(cut -d" " -f1-3 /proc/loadavg)"
  for env in GSO=0 RATE=40 GSO=64; do
    modes="tun uring xdp xdpskb"
    # generic XDP gets the 64-datagram super-packet whole, larger than a
    # UMEM frame, and drops it
    [ $env = GSO=64 ] && modes="tun uring xdp"
    for m in $modes; do env $env timeout 20 unshare -n /tmp/xdpvt $m 2>/dev/null; done
  done
done
echo "end $(date -u +%H:%M:%S) UTC, load average $(cut -d" " -f1-3 /proc/loadavg)"'
rm -f /tmp/xdpvt
