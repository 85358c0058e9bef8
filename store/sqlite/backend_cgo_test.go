//go:build cgo

package sqlite

import (
	"strings"
	"testing"
)

// With cgo the build must get the C SQLite (mattn), the fast one.
func TestBackendIsMattnWithCgo(t *testing.T) {
	db := open(t)
	if _, ok := db.conn.(mConn); !ok || !strings.HasPrefix(Driver, "mattn/") {
		t.Fatalf("conn %T, Driver %q: want mattn/go-sqlite3 under cgo", db.conn, Driver)
	}
}
