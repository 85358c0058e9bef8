#!/bin/sh
# The same random loss set two ways on one emulated link, alternated:
#   link: `wirebench link BASE,loss=N%,seed=ROUND` (the relay drops N% each
#         way; its loss draws are seeded: a seed a round, so the rounds differ);
#   nft:  `wirebench link BASE` (no loss in the relay) and nftables dropping
#         N% of the packets each receiver takes from the link, on its input
#         hook (`numgen random mod 100 < N`): down in the far namespace,
#         up in the host's (below). Both directions, as the relay's loss.
# Then the rate: BASE's rate against tbf at that rate on the near TUN.
# Three transfers each: h2 and h3 GETs of the 100-user list (~10 KB, a few
# segments; `wirebench load`, 8 VUs, DUR) and a TCP bulk download (curl,
# BULK bytes from python3 -m http.server; KINDS picks among h2 h3 bulk). All on the host's loopback,
# the clients on the far side of the link.
#
#   flock -o /tmp/wirebench-load.lock sh nftcmp.sh [LOSS ...]   (default: 1 5; "rate" for tbf)
#   (-o: the servers started here never hold the lock, should the script die)
#
# Needs root, nft (apt-get install -y nftables), tc, curl, python3 and
# wirebench on PATH (or BIN=). Each line: RESULT loss method transfer
# round value [unit]; the nftables counters follow each nft run (packets
# seen / dropped each way: skbs, so a super-packet would count once), the
# relay's own counts each run; at the end, each cell's median [min–max]
# over the rounds. Nothing is left behind: the far namespace and its
# table go with `wirebench link`'s descriptors, the host's table is deleted
# after each transfer and on exit, tbf goes with the TUN device, the
# servers are killed on exit.
set -eu
BIN=${BIN:-wirebench}
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-4s}
BASE=${BASE:-rtt=20ms,rate=20mbit}
RATE=${RATE:-20mbit}
BULK=${BULK:-2000000}
KINDS=${KINDS:-h2 h3 bulk}
HP=18443 FP=18777
[ "$(id -u)" = 0 ] || { echo "nftcmp.sh: needs root" >&2; exit 2; }
command -v nft >/dev/null || { echo "nftcmp.sh: needs nft: apt-get install -y nftables" >&2; exit 2; }
dir=$(mktemp -d)
head -c "$BULK" /dev/urandom >"$dir/f.bin"
"$BIN" serve --https 127.0.0.1:$HP --http3 127.0.0.1:$HP --http 127.0.0.1:0 --grpc 127.0.0.1:0 --seed-users 100 >/dev/null 2>&1 &
srv=$!
python3 -m http.server --bind 127.0.0.1 --directory "$dir" $FP >/dev/null 2>&1 &
py=$!
trap 'set +e; nft delete table inet wbloss$$ 2>/dev/null; kill $srv $py 2>/dev/null; wait $srv $py 2>/dev/null; rm -rf "$dir"; true' EXIT
trap 'exit 1' INT TERM HUP
sleep 2
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs, kernel $(uname -r); base link $BASE"

# transfer KIND: the far side's command.
transfer() {
	case $1 in
	h2 | h3) echo "$BIN load --transport $1 -k -c 8 -d $DUR -t 10s https://127.0.0.1:$HP/users" ;;
	bulk) echo "curl -s -o /dev/null -w 'VALUE %{speed_download} B/s\\n' http://127.0.0.1:$FP/f.bin" ;;
	esac
}

# value OUTPUT: the transfer's figure: requests/s and p50 of a load, B/s of curl.
value() {
	echo "$1" | awk '/^VALUE/ {print $2, $3} $1=="requests" {r=$3} $1=="latency" {p=$4} END {if (r != "") print r, "p50", p}'
}

# The nft case: the relay carries BASE without loss; each receiver drops
# N% of what arrives from the link on its input hook, as bench/h3-loss.sh
# does on loopback: down in the far namespace (from wblink), up in the
# host's (from the near TUN, found by its address; table wbloss$$, deleted
# by the far side after the transfer and again on exit). Not on the
# senders' output hooks: a packet dropped there is no wire loss (sendmsg
# fails with EPERM: quic-go fails the request, TCP holds the segment back).
cat >"$dir/far.sh" <<'EOF'
# far.sh LOSS HOSTNS TABLE COMMAND: on the far side of the link;
# far.sh counters WAY TABLE: prints and deletes the table.
counters() { # way: packets dropped of those seen (bytes)
	nft list table inet "$2" | grep -o 'counter packets [0-9]* bytes [0-9]*' |
		awk -v w="$1" '{p[NR]=$3; b[NR]=$5} END {printf "NFT %s: %d of %d packets dropped, %d of %d bytes\n", w, p[2], p[1], b[2], b[1]}'
	nft delete table inet "$2"
}
[ "$1" = counters ] && { counters "$2" "$3"; exit; }
loss=$1 hostns=$2 t=$3
dev=$(nsenter --net="$hostns" ip -o addr show to "$WIREBENCH_LINK_HOST" | awk '{print $2}')
rules() {
	printf 'table inet %s {\n\tchain in { type filter hook input priority 0; iifname "%s" counter; iifname "%s" numgen random mod 100 < %s counter drop; }\n}\n' "$t" "$1" "$1" "$loss"
}
rules wblink | nft -f - && rules "$dev" | nsenter --net="$hostns" nft -f - || exit 1
sh -c "$4"
counters down "$t"
nsenter --net="$hostns" sh "$0" counters up "$t"
EOF

run() { # loss method kind round
	case $2 in
	link) out=$("$BIN" link "$BASE,loss=$1%,seed=$4" --link-calibrate=false -- sh -c "$(transfer "$3")" 2>&1) || true ;;
	nft) out=$("$BIN" link "$BASE" --link-calibrate=false -- sh "$dir/far.sh" "$1" /proc/$$/ns/net "wbloss$$" "$(transfer "$3")" 2>&1) || true ;;
	esac
	echo "$out" | grep -E '^NFT|link relay \(|failed [1-9]|rror' | sed 's/^/  /' || true
	echo "RESULT $1 $2 $3 $4 $(value "$out")" | tee -a "$dir/res"
}

for loss in ${*:-1 5}; do
	echo "=== loss ${loss}% $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ "$loss" = rate ]; then
		# down (server -> client) at RATE: the relay's down=RATE, or tbf on the near
		# TUN's egress with the relay unlimited; up unlimited in both.
		for r in $(seq "$ROUNDS"); do
			for kind in bulk h3; do
				out=$("$BIN" link "${BASE%%,rate=*},down=$RATE" --link-calibrate=false -- sh -c "$(transfer $kind)" 2>&1) || true
				echo "RESULT rate link $kind $r $(value "$out")" | tee -a "$dir/res"
				# the far side puts tbf on the near TUN (found by its address), then transfers
				"$BIN" link "${BASE%%,rate=*}" --link-calibrate=false -- sh -c "dev=\$(nsenter --net=/proc/$$/ns/net ip -o addr show to \"\$WIREBENCH_LINK_HOST\" | awk '{print \$2}') &&
					nsenter --net=/proc/$$/ns/net tc qdisc add dev \"\$dev\" root tbf rate $RATE burst 15k latency 1000ms && $(transfer $kind)" >"$dir/out" 2>&1 || true
				echo "RESULT rate tbf $kind $r $(value "$(cat "$dir/out")")" | tee -a "$dir/res"
			done
		done
		continue
	fi
	for r in $(seq "$ROUNDS"); do
		for kind in $KINDS; do
			if [ $((r % 2)) = 1 ]; then m1=link m2=nft; else m1=nft m2=link; fi
			run "$loss" $m1 $kind "$r"
			run "$loss" $m2 $kind "$r"
		done
	done
done

# The summary: per loss, transfer and method, the median [min–max] of the
# rounds (requests/s and p50 for a load, Mbit/s for a download).
echo "=== summary: median [min–max] of $ROUNDS rounds"
sort -k2,2 -k4,4 -k3,3 -s "$dir/res" | awk '
function isort(a, n,  i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j+1] = a[j]; a[j+1] = x } }
function med(a, n) { return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
function flush() {
	if (k == "") return
	n = i; isort(v, n); isort(q, n)
	if (u == "B/s") printf "%-6s %-5s %-5s %7.2f Mbit/s [%.2f–%.2f]\n", L, T, M, med(v, n)*8e-6, v[1]*8e-6, v[n]*8e-6
	else printf "%-6s %-5s %-5s %7.1f req/s [%.1f–%.1f], p50 %.1f ms [%.1f–%.1f]\n", L, T, M, med(v, n), v[1], v[n], med(q, n), q[1], q[n]
	delete v; delete q; n = 0
}
{ key = $2 " " $4 " " $3; if (key != k) { flush(); k = key; i = 0 }
  L = $2; T = $4; M = $3; i++; v[i] = $6 + 0; sub(/\/s$/, "", $6); v[i] = $6 + 0; u = $7
  if ($7 == "p50") { q[i] = $8 + 0; if ($8 ~ /µs$/) q[i] /= 1000; if ($8 ~ /[0-9]s$/ && $8 !~ /ms$/) q[i] *= 1000 } }
END { flush() }'
