#!/bin/bash
# Per-process fixed CPU of the h3 client: 20 one-request runs (-c 1, one
# connection) of the old and new binaries and of h3bare (-d 1ms), from the
# repository's directory as bench/h3-cpu.sh runs them; alternating, 3 rounds.
# wb-old: 3c9d699, wb-new: c766189, both built with GOFLAGS=-buildvcs=false
# (unstamped, as this machine builds them). Under the load lock:
#   B=/tmp/bins REPO=/path/to/wirebench flock /tmp/wirebench-load.lock ./fixed2.sh
cd "${REPO:-.}"  # the repository (bench/h3-cpu.sh runs its clients there)
GOMAXPROCS=2 taskset -c 1 $B/h3bare serve -seed-users 1000 > $B/f2.out 2>&1 & srv=$!
sleep 0.5; h3=$(sed -n 's/^listening.* h3=\([^ ]*\).*/\1/p' $B/f2.out)
for r in 1 2 3; do
for k in old new bare; do
  if [ $k = bare ]; then cmd="$B/h3bare load -c 1 -conns 1 -d 1ms https://$h3/users/1"
  else cmd="$B/wb-$k load -q --transport h3 -k -c 1 --conns 1 -n 1 https://$h3/users/1"; fi
  /usr/bin/time -f "$k %U %S" bash -c "for i in \$(seq 20); do taskset -c 0 $cmd >/dev/null; done" 2>&1 | awk '{printf "%s %.1f ms per process\n", $1, ($2+$3)*1000/20}'
done; done
kill $srv
