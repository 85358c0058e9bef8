package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/bulkapi"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/store/sqlite"
)

// bulkFlags are serve's flags for POST /airports (package bulkapi).
type bulkFlags struct {
	path    string
	maxBody int64
	db      sqlite.Options
}

func addBulkFlags(fs *pflag.FlagSet) *bulkFlags {
	b := &bulkFlags{}
	fs.StringVar(&b.path, "sqlite", "", "SQLite `file` holding the airports table for POST /airports (created if missing; default: a fresh file in a temporary directory, removed at exit; net/http engine only)")
	fs.Int64Var(&b.maxBody, "bulk-max-body", bulkapi.DefaultMaxBody, "streamed POST /airports body limit in `bytes` (413 beyond); ?mode=buffered is limited by --max-body")
	fs.StringVar(&b.db.Journal, "sqlite-journal", sqlite.DefaultJournal, "SQLite journal_mode for the airports database")
	fs.StringVar(&b.db.Sync, "sqlite-sync", sqlite.DefaultSync, "SQLite synchronous setting for the airports database")
	fs.IntVar(&b.db.CacheKiB, "sqlite-cache", sqlite.DefaultCacheKiB, "SQLite page cache in `KiB` (the bulk path's largest memory)")
	return b
}

// open opens the database and mounts the handler on o; done closes the
// database and removes a temporary one.
func (b *bulkFlags) open(o *server.Options) (done func(), err error) {
	if b.maxBody <= 0 {
		return nil, usagef("-bulk-max-body must be > 0")
	}
	if o.Engine == server.EngineFastHTTP {
		if b.path != "" {
			return nil, usagef("-sqlite: POST /airports is served by the %s engine only", server.EngineNetHTTP)
		}
		return func() {}, nil // no bulk route on fasthttp
	}
	bo := bulkapi.Options{MaxBody: b.maxBody, MaxBufferedBody: o.HTTP.MaxBody}
	if b.path != "" {
		// A file named by the user is opened now: a bad path fails the start.
		db, err := sqlite.Open(b.path, b.db)
		if err != nil {
			return nil, err
		}
		o.Airports = bulkapi.New(db, bo)
		return func() { db.Close() }, nil
	}
	// The default, a fresh file in a temporary directory, is opened at the
	// first POST /airports: the other studies' servers never load SQLite
	// (2.5 MiB of RSS at idle).
	var mu sync.Mutex
	var db *sqlite.DB
	tmp := ""
	o.Airports = bulkapi.NewLazy(func() (*sqlite.DB, error) {
		mu.Lock()
		defer mu.Unlock()
		dir, err := os.MkdirTemp("", "wirebench-airports-")
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		tmp = dir
		db, err = sqlite.Open(filepath.Join(dir, "airports.db"), b.db)
		return db, err
	}, bo)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if db != nil {
			db.Close()
		}
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}, nil
}
