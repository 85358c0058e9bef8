package bulk

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestChecksumSQLMatchesGo: the documented query, run by the sqlite3
// shell on a real airports table, prints exactly the Checksum that Go
// computes for the same rows — the generated ones and rows with empty
// fields, newlines, quotes, a colon after digits and multi-byte letters
// (where a length in characters instead of bytes would differ).
func TestChecksumSQLMatchesGo(t *testing.T) {
	sqlite3 := testkit.NeedTool(t, "sqlite3", "apt-get install -y sqlite3")
	const n = 3000
	var want Checksum
	var body bytes.Buffer
	w := csv.NewWriter(&body)
	for i := range n {
		a := Generated(i)
		want.Add(&a)
		w.Write([]string{a.IATACode, a.Name, a.City, a.Country})
	}
	for _, a := range []Airport{
		{IATACode: "ZZ1", Name: "", City: "", Country: ""},
		{IATACode: "ZZ2", Name: "two\nlines, \"quoted\"", City: "12:34", Country: "Ελλάδα"},
		{IATACode: "ZZ3", Name: "3:ab", City: "c", Country: "日本"},
	} {
		want.Add(&a)
		w.Write([]string{a.IATACode, a.Name, a.City, a.Country})
	}
	w.Flush()
	dir := t.TempDir()
	csvPath, db := filepath.Join(dir, "a.csv"), filepath.Join(dir, "a.db")
	if err := os.WriteFile(csvPath, body.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	setup := "CREATE TABLE airports(iata_code TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, country TEXT NOT NULL);\n" +
		".import --csv " + csvPath + " airports\n"
	setupCmd := exec.Command(sqlite3, "-batch", db)
	setupCmd.Stdin = strings.NewReader(setup)
	if out, err := setupCmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("sqlite3 setup: %v: %s", err, out)
	}
	cmd := exec.Command(sqlite3, "-batch", db)
	cmd.Stdin = strings.NewReader(ChecksumSQL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != want.String() {
		t.Fatalf("sqlite3 prints %q, Go %q", got, want.String())
	}
	if want.Rows != n+3 {
		t.Fatalf("Go counted %d rows, want %d", want.Rows, n+3)
	}
}
