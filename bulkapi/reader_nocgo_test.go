//go:build !cgo

package bulkapi

import _ "github.com/ncruces/go-sqlite3/driver" // database/sql driver "sqlite3", for an outside reader

// readerDSN opens path for database/sql as another process would, with no
// busy timeout: a locked database is an error at once, not a wait.
func readerDSN(path string) string { return "file:" + path + "?mode=ro&_pragma=busy_timeout(0)" }

// writerDSN opens path read-write for database/sql, as another process.
func writerDSN(path string) string { return "file:" + path + "?_pragma=busy_timeout(0)" }
