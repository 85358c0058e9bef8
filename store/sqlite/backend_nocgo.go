//go:build !cgo

package sqlite

import (
	sqlite3 "github.com/ncruces/go-sqlite3"
)

// Driver names the SQLite binding this build uses.
const Driver = "ncruces/go-sqlite3 v0.37.0 (SQLite via wasm2go, pure Go)"

// ncruces/go-sqlite3 is SQLite compiled to Wasm and translated to Go: the
// build without cgo (the static image, a machine without a C compiler).

type ncConn struct{ c *sqlite3.Conn }

func openConn(path string) (conn, error) {
	c, err := sqlite3.Open(path)
	if err != nil {
		return nil, err
	}
	return ncConn{c}, nil
}

func (c ncConn) exec(sql string) error { return c.c.Exec(sql) }
func (c ncConn) close() error          { return c.c.Close() }

func (c ncConn) prepare(sql string) (stmt, error) {
	s, _, err := c.c.Prepare(sql)
	if err != nil {
		return nil, err
	}
	return ncStmt{s}, nil
}

type ncStmt struct{ s *sqlite3.Stmt }

func (s ncStmt) bindText(i int, v string) error { return s.s.BindText(i, v) }
func (s ncStmt) exec() error                    { return s.s.Exec() }
func (s ncStmt) columnText(i int) string        { return s.s.ColumnText(i) }
func (s ncStmt) columnInt64(i int) int64        { return s.s.ColumnInt64(i) }
func (s ncStmt) close() error                   { return s.s.Close() }

func (s ncStmt) step() (bool, error) {
	if s.s.Step() {
		return true, nil
	}
	return false, s.s.Err()
}
