package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/wirebench/wirebench/bulkapi"
	"github.com/wirebench/wirebench/store/sqlite"
)

// Bulk configures POST /airports (package bulkapi), served by the
// net/http engine; the zero value is a temporary database.
type Bulk struct {
	// SQLite is the airports database file, created if missing and
	// opened by Start, so a bad path fails the start. "" is a fresh file
	// in a temporary directory, opened at the first POST /airports (a
	// server that never sees one never loads SQLite: 2.5 MiB of RSS at
	// idle) and removed by Close.
	SQLite string
	DB     sqlite.Options
	API    bulkapi.Options
}

// openBulk returns the handler and what closes its database.
func openBulk(b Bulk) (*bulkapi.Handler, func() error, error) {
	if b.SQLite != "" {
		db, err := sqlite.Open(b.SQLite, b.DB)
		if err != nil {
			return nil, nil, err
		}
		return bulkapi.New(db, b.API), db.Close, nil
	}
	var mu sync.Mutex
	var db *sqlite.DB
	tmp := ""
	h := bulkapi.NewLazy(func() (*sqlite.DB, error) {
		mu.Lock()
		defer mu.Unlock()
		dir, err := os.MkdirTemp("", "wirebench-airports-")
		if err != nil {
			return nil, fmt.Errorf("server: bulk database: %w", err)
		}
		tmp = dir
		db, err = sqlite.Open(filepath.Join(dir, "airports.db"), b.DB)
		return db, err
	}, b.API)
	return h, func() error {
		mu.Lock()
		defer mu.Unlock()
		var err error
		if db != nil {
			err = db.Close()
			db = nil
		}
		if tmp != "" {
			os.RemoveAll(tmp)
			tmp = ""
		}
		return err
	}, nil
}
