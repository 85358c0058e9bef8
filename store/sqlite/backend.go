package sqlite

// The SQLite driver is chosen at build time (backend_cgo.go with cgo,
// backend_nocgo.go without); everything else in this package talks to it
// through these two interfaces, so Upsert, Count, Checksum and every test
// are one piece of code on both. Neither is safe for concurrent use: DB
// holds its mutex around every call.

// conn is one open database connection.
type conn interface {
	// exec runs one statement that takes no parameters and returns no
	// rows we read (BEGIN, COMMIT, PRAGMA, CREATE).
	exec(sql string) error
	prepare(sql string) (stmt, error)
	close() error
}

// stmt is one prepared statement. Parameters and columns count from 1 and
// 0 respectively, as in SQLite's C API.
type stmt interface {
	// bindText binds v to parameter i (1-based) for the next exec or the
	// next query started by step. v may be reused by the caller at once.
	bindText(i int, v string) error
	// exec runs the statement with its bound parameters to completion
	// and resets it, ready to be bound again.
	exec() error
	// step advances a query to its next row: false at the end or on an
	// error (which it returns).
	step() (bool, error)
	// columnText and columnInt64 read column i (0-based) of the current row.
	columnText(i int) string
	columnInt64(i int) int64
	close() error
}
