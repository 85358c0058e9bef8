package flags

import (
	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/bulkapi"
	lflags "github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/server"
	"github.com/wirebench/wirebench/store/sqlite"
)

// bulkFlags are serve's flags for POST /airports (package bulkapi).
type bulkFlags struct {
	path     string
	maxBody  int64
	maxSpool int64
	spoolTot int64
	db       sqlite.Options
}

func (b *bulkFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&b.path, "sqlite", "", "SQLite `file` holding the airports table for POST /airports (created if missing; default: a fresh file in a temporary directory, removed at exit; net/http engine only)")
	fs.Int64Var(&b.maxBody, "bulk-max-body", bulkapi.DefaultMaxBody, "streamed POST /airports body limit in `bytes` (413 beyond); ?mode=buffered is limited by --max-body")
	fs.Int64Var(&b.maxSpool, "bulk-max-spool", bulk.DefaultMaxSpool, "`bytes` of one streamed POST /airports's records held aside (a temporary file beside the database) until its body is all in and its transaction runs (413 beyond)")
	fs.Int64Var(&b.spoolTot, "bulk-max-spool-total", bulkapi.DefaultMaxSpoolTotal, "`bytes` held aside by all the streamed POST /airports receiving at once (503 with Retry-After beyond)")
	fs.StringVar(&b.db.Journal, "sqlite-journal", sqlite.DefaultJournal, "SQLite journal_mode for the airports database")
	fs.StringVar(&b.db.Sync, "sqlite-sync", sqlite.DefaultSync, "SQLite synchronous setting for the airports database")
	fs.IntVar(&b.db.CacheKiB, "sqlite-cache", sqlite.DefaultCacheKiB, "SQLite page cache in `KiB` (the bulk path's largest memory)")
}

// apply puts the flags in o (package server opens the database).
func (b *bulkFlags) apply(o *server.Options) error {
	if b.maxBody <= 0 || b.maxSpool <= 0 || b.spoolTot <= 0 {
		return lflags.Usagef("-bulk-max-body, -bulk-max-spool and -bulk-max-spool-total must be > 0")
	}
	if b.path != "" && o.Engine == server.EngineFastHTTP {
		return lflags.Usagef("-sqlite: POST /airports is served by the %s engine only", server.EngineNetHTTP)
	}
	o.Bulk = server.Bulk{SQLite: b.path, DB: b.db, API: bulkapi.Options{MaxBody: b.maxBody, MaxBufferedBody: o.HTTP.MaxBody, MaxSpool: b.maxSpool, MaxSpoolTotal: b.spoolTot}}
	return nil
}
