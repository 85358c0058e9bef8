#!/bin/sh
# h2 against h3 under packet loss, by the kernel's own means: a network
# namespace whose loopback drops LOSS% of the packets it receives, at
# random (nftables' numgen; tc netem, which would add delay too, is not in
# this kernel: CONFIG_NET_SCH_NETEM is not set — docs/http3.md).
#
#   flock /tmp/wirebench-load.lock sh bench/h3-loss.sh [LOSS ...]   (default: 0 1 5)
#
# Needs root, ip(8) and nft(8) (apt-get install nftables). One serve
# --https --http3 per loss rate inside the namespace on CPU 1, the load on
# CPU 0; GET /users/1, 50 VUs on 4 connections, h2 and h3 alternating,
# ROUNDS rounds of DUR each. The summaries go to stdout.
set -eu
BIN=${BIN:-./wirebench}
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-5s}
NS=wirebench-loss-$$
[ "$(id -u)" = 0 ] || { echo "h3-loss.sh: needs root (a network namespace)" >&2; exit 2; }
command -v nft >/dev/null || { echo "h3-loss.sh: needs nft: apt-get install -y nftables" >&2; exit 2; }
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/wirebench
ip netns add "$NS"
trap 'ip netns del "$NS"' EXIT
ip netns exec "$NS" ip link set lo up
ip netns exec "$NS" nft add table inet loss
ip netns exec "$NS" nft add chain inet loss in '{ type filter hook input priority 0; }'
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, kernel $(uname -r)"
for loss in ${*:-0 1 5}; do
	ip netns exec "$NS" nft flush chain inet loss in
	[ "$loss" = 0 ] || ip netns exec "$NS" nft add rule inet loss in iif lo numgen random mod 100 '<' "$loss" counter drop
	ip netns exec "$NS" taskset -c 1 "$BIN" serve --http 127.0.0.1:8080 --grpc 127.0.0.1:0 \
		--https 127.0.0.1:8443 --http3 127.0.0.1:8443 --seed-users 100 >/dev/null 2>&1 &
	srv=$!
	sleep 2
	echo "=== loss ${loss}% $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
	for r in $(seq "$ROUNDS"); do
		for t in h2 h3; do
			echo "--- round $r $t"
			ip netns exec "$NS" taskset -c 0 "$BIN" load --transport "$t" -k -c 50 --conns 4 -d "$DUR" -t 10s \
				https://127.0.0.1:8443/users/1 2>&1 | grep -E 'requests|latency  |bytes (in|out)|client CPU' || true
		done
	done
	ip netns exec "$NS" nft list chain inet loss in | grep -o 'counter packets [0-9]*' || true
	kill "$srv"
	wait "$srv" 2>/dev/null || true
done
