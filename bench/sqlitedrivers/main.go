// Command sqlitedrivers times the bulk path's one SQLite job — an upsert of
// N airports in one transaction through a prepared statement — on each
// candidate driver, one driver per build (they register clashing names):
//
//	go run -tags modernc . -n 1000000
//	CGO_ENABLED=1 go run -tags mattn . -n 1000000
//	go run -tags ncruces . -n 1000000
//
// run.sh runs all three, alternating, beside `sqlite3 .import` of the same
// rows. Its own module, so the losers never enter the main go.mod.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const schema = `CREATE TABLE airports(iata_code TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, country TEXT NOT NULL)`

const upsert = `INSERT INTO airports(iata_code, name, city, country) VALUES(?, ?, ?, ?)
ON CONFLICT(iata_code) DO UPDATE SET name = excluded.name, city = excluded.city, country = excluded.country`

// row is the i-th airport: the same scrambled key order and field sizes as
// `wirebench gen airports` (keys are a bijection of i, so inserts land all
// over the index, as real data would).
func row(i int) (code, name, city, country string) {
	const space = 26 * 26 * 26 * 26 * 26 * 26
	x := (uint64(i)*2654435761 + 12345) % space
	var b [6]byte
	for j := 5; j >= 0; j-- {
		b[j] = byte('A' + x%26)
		x /= 26
	}
	code = string(b[:])
	return code, "Airport " + code + " International", fmt.Sprintf("City %d", i%50000), fmt.Sprintf("Country %d", i%250)
}

func main() {
	n := flag.Int("n", 1_000_000, "rows")
	journal := flag.String("journal", "TRUNCATE", "journal_mode")
	syncMode := flag.String("synchronous", "FULL", "synchronous")
	cache := flag.Int("cache", -2000, "cache_size (negative: KiB)")
	csvOut := flag.String("csv", "", "write the rows as CSV to this file and exit")
	flag.Parse()
	if *csvOut != "" {
		f, err := os.Create(*csvOut)
		check(err)
		for i := 0; i < *n; i++ {
			c, nm, ci, co := row(i)
			fmt.Fprintf(f, "%s,%s,%s,%s\n", c, nm, ci, co)
		}
		check(f.Close())
		return
	}
	dir, err := os.MkdirTemp("", "sqlitedrivers")
	check(err)
	defer os.RemoveAll(dir)
	db, err := sql.Open(driverName, dsn(filepath.Join(dir, "a.db")))
	check(err)
	db.SetMaxOpenConns(1)
	for _, p := range []string{"journal_mode=" + *journal, "synchronous=" + *syncMode, fmt.Sprintf("cache_size=%d", *cache)} {
		_, err := db.Exec("PRAGMA " + p)
		check(err)
	}
	_, err = db.Exec(schema)
	check(err)
	start := time.Now()
	tx, err := db.Begin()
	check(err)
	st, err := tx.Prepare(upsert)
	check(err)
	for i := 0; i < *n; i++ {
		c, nm, ci, co := row(i)
		_, err := st.Exec(c, nm, ci, co)
		check(err)
	}
	check(st.Close())
	check(tx.Commit())
	el := time.Since(start)
	var count int
	check(db.QueryRow("SELECT count(*) FROM airports").Scan(&count))
	st2, _ := os.ReadFile("/proc/self/status")
	hwm := ""
	for _, l := range strings.Split(string(st2), "\n") {
		if strings.HasPrefix(l, "VmHWM") || strings.HasPrefix(l, "RssAnon") {
			hwm += strings.Join(strings.Fields(l), " ") + " "
		}
	}
	fmt.Printf("%-8s journal=%s sync=%s cache=%d rows=%d time=%.3fs rows/s=%.0f %s\n", driverLabel, *journal, *syncMode, *cache, count, el.Seconds(), float64(*n)/el.Seconds(), hwm)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
