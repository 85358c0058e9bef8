//go:build !cgo

package sqlite

import (
	"strings"
	"testing"
)

// Without cgo (CGO_ENABLED=0, the static image) the build keeps ncruces.
func TestBackendIsNcrucesWithoutCgo(t *testing.T) {
	db := open(t)
	if _, ok := db.conn.(ncConn); !ok || !strings.HasPrefix(Driver, "ncruces/") {
		t.Fatalf("conn %T, Driver %q: want ncruces/go-sqlite3 without cgo", db.conn, Driver)
	}
}
