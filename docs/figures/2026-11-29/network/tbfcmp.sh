#!/bin/sh
# The same 10 Mbit/s set by --link and by the kernel's tbf, measured by a
# 6-MB curl download (speed in bytes/s, three runs each). As root, with
# wirebench on PATH and, in another shell:
#   head -c 6000000 /dev/urandom > f.bin && python3 -m http.server --bind 127.0.0.1 18777
echo "link down=10mbit:"
for i in 1 2 3; do
	wirebench link rtt=20ms,down=10mbit --link-calibrate=false -- \
		curl -s -o /dev/null -w '%{speed_download}\n' http://127.0.0.1:18777/f.bin 2>/dev/null
done
echo "tbf 10mbit on the near TUN:"
for i in 1 2 3; do
	wirebench link rtt=20ms --link-calibrate=false -- \
		sh -c 'sleep 0.5; curl -s -o /dev/null -w "%{speed_download}\n" http://127.0.0.1:18777/f.bin' 2>/dev/null &
	sleep 0.2
	dev=$(ip -o link | grep -o 'wb[0-9a-f]*l[0-9a-f]*' | head -1)
	tc qdisc add dev "$dev" root tbf rate 10mbit burst 15k latency 1000ms
	wait
done
