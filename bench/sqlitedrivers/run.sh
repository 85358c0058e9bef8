#!/bin/sh
# run.sh [N] [ROUNDS] — the bulk path's SQLite job on each driver beside
# sqlite3 .import of the same rows, pinned to CPU 1, rounds alternating;
# prints wall time and the process's user/sys CPU (the steadier number on a
# shared box). Run under the load lock:
#   flock /tmp/wirebench-load.lock bench/sqlitedrivers/run.sh 1000000 2
set -eu
N=${1:-1000000}
ROUNDS=${2:-2}
cd "$(dirname "$0")"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
go build -tags modernc -o "$d/modernc" .
go build -tags ncruces -o "$d/ncruces" .
CGO_ENABLED=1 go build -tags mattn -o "$d/mattn" .
"$d/ncruces" -n "$N" -csv "$d/rows.csv"
for r in $(seq "$ROUNDS"); do
	for j in "TRUNCATE FULL" "WAL NORMAL"; do
		set -- $j
		rm -f "$d/ref.db"*
		sqlite3 "$d/ref.db" "PRAGMA journal_mode=$1;" "PRAGMA synchronous=$2;" \
			"CREATE TABLE airports(iata_code TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, country TEXT NOT NULL);" >/dev/null
		/usr/bin/time -f "sqlite3  journal=$1 sync=$2 .import wall=%es user=%U sys=%S maxrss=%MKiB" \
			taskset -c 1 sqlite3 "$d/ref.db" "PRAGMA synchronous=$2;" ".import --csv $d/rows.csv airports"
		for drv in modernc mattn ncruces; do
			/usr/bin/time -f "  user=%U sys=%S" taskset -c 1 "$d/$drv" -n "$N" -journal "$1" -synchronous "$2"
		done
	done
done
