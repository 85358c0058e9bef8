#!/bin/sh
# ping (iputils) across `wirebench link` from the far side to the near
# side's address: 200 echoes 10 ms apart on each link, min / median / p90
# / max. As root, with wirebench on PATH (the same as TestPeerLinkPing).
for spec in rtt=2ms rtt=20ms rtt=100ms 4g; do
	wirebench link $spec --link-calibrate=false -- sh -c 'ping -n -c 200 -i 0.01 -W 2 "$WIREBENCH_LINK_HOST"' |
		sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | sort -n |
		awk -v s=$spec '{v[NR]=$1} END {printf "%s: %d replies, min %s, median %s, p90 %s, max %s ms\n", s, NR, v[1], v[int(NR/2)+1], v[int(NR*0.9)], v[NR]}'
done
