package sqlite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/bulk"
)

func open(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "a.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type recs []bulk.Airport

func (r *recs) Next(a *bulk.Airport) error {
	if len(*r) == 0 {
		return io.EOF
	}
	*a = (*r)[0]
	*r = (*r)[1:]
	return nil
}

func upsert(t *testing.T, db *DB, rs ...bulk.Airport) (Result, error) {
	t.Helper()
	r := recs(rs)
	return db.Upsert(context.Background(), &r)
}

func rows(t *testing.T, db *DB) map[string]bulk.Airport {
	t.Helper()
	st, err := db.conn.prepare("SELECT iata_code, name, city, country FROM airports")
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	m := map[string]bulk.Airport{}
	for {
		ok, err := st.step()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return m
		}
		a := bulk.Airport{IATACode: st.columnText(0), Name: st.columnText(1), City: st.columnText(2), Country: st.columnText(3)}
		m[a.IATACode] = a
	}
}

func TestSchemaIsExactlyTheIssuesTable(t *testing.T) {
	db := open(t)
	st, err := db.conn.prepare("SELECT sql FROM sqlite_master WHERE name = 'airports'")
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if ok, err := st.step(); !ok {
		t.Fatalf("schema: row %v, err %v", ok, err)
	}
	if got := st.columnText(0); got != Schema {
		t.Fatalf("schema %q, want %q", got, Schema)
	}
}

func TestInsertUpdateAndDuplicatesInOneRequest(t *testing.T) {
	db := open(t)
	a, b := bulk.Generated(0), bulk.Generated(1)
	res, err := upsert(t, db, a, b)
	if err != nil || res != (Result{Inserted: 2}) {
		t.Fatalf("insert: %+v %v", res, err)
	}
	a2 := a
	a2.Name, a2.City = "Renamed", "Moved"
	c := bulk.Generated(2)
	c2 := c
	c2.Country = "Elsewhere"
	// a is updated, c inserted then updated in the same request: the last wins.
	res, err = upsert(t, db, a2, c, c2)
	if err != nil || res != (Result{Inserted: 1, Updated: 2}) {
		t.Fatalf("update: %+v %v", res, err)
	}
	got := rows(t, db)
	want := map[string]bulk.Airport{a.IATACode: a2, b.IATACode: b, c.IATACode: c2}
	if len(got) != len(want) {
		t.Fatalf("rows %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("row %s: %+v, want %+v", k, got[k], v)
		}
	}
	// The same upsert again is all updates.
	res, err = upsert(t, db, a2, c2)
	if err != nil || res != (Result{Updated: 2}) {
		t.Fatalf("again: %+v %v", res, err)
	}
}

// A bad record at the start, middle or end: the decoder's error comes back
// as it is, and the table is as it was (nothing of the request commits,
// neither new rows nor updates).
func TestBadRecordCommitsNothing(t *testing.T) {
	const n = 1001
	for _, bad := range []int{0, n / 2, n - 1} {
		db := open(t)
		if _, err := upsert(t, db, bulk.Generated(0), bulk.Generated(1)); err != nil {
			t.Fatal(err)
		}
		before, _ := db.Checksum()
		var body bytes.Buffer
		enc, _ := bulk.NewEncoder(bulk.FormatNDJSON, &body, n)
		for i := range n {
			a := bulk.Generated(i)
			a.Name += " v2" // records 0 and 1 would be updates
			if i == bad {
				a.Country = ""
			}
			enc.Write(&a)
		}
		enc.Close()
		dec, _ := bulk.NewDecoder(bulk.FormatNDJSON, &body)
		_, err := db.Upsert(context.Background(), dec)
		var re *bulk.RecordError
		if !errors.As(err, &re) || re.Index != bad || re.Field != "country" {
			t.Fatalf("bad=%d: %v", bad, err)
		}
		after, _ := db.Checksum()
		if after != before {
			t.Fatalf("bad=%d: table changed: %v -> %v", bad, before, after)
		}
		// The connection is usable after the rollback.
		if res, err := upsert(t, db, bulk.Generated(5)); err != nil || res.Inserted != 1 {
			t.Fatalf("after rollback: %+v %v", res, err)
		}
	}
}

func TestChecksumMatchesGenerator(t *testing.T) {
	db := open(t)
	var body bytes.Buffer
	want, _ := bulk.Generate(&body, bulk.FormatCSV, 5000)
	dec, _ := bulk.NewDecoder(bulk.FormatCSV, &body)
	if _, err := db.Upsert(context.Background(), dec); err != nil {
		t.Fatal(err)
	}
	got, err := db.Checksum()
	if err != nil || got != want {
		t.Fatalf("checksum %v, want %v (%v)", got, want, err)
	}
	if c, _ := db.Count(); c != 5000 {
		t.Fatalf("count %d", c)
	}
}

func TestCancelledContextCommitsNothing(t *testing.T) {
	db := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := recs{bulk.Generated(0)}
	if _, err := db.Upsert(ctx, &r); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if c, _ := db.Count(); c != 0 {
		t.Fatalf("count %d", c)
	}
}

func TestOptionsAndClose(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "a.db"), Options{CacheKiB: -1}); err == nil {
		t.Fatal("negative cache accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "a.db"), Options{Journal: "NONSENSE;"}); err == nil {
		t.Fatal("bad journal accepted")
	}
	db := open(t)
	db.Close()
	if _, err := upsert(t, db); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if _, err := db.Count(); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

// A failure of the upsert statement itself (here a trigger's RAISE, as a
// full disk or an I/O error would) is an ErrDB naming the record, and
// rolls the whole request back, on both backends.
func TestStatementErrorRollsBack(t *testing.T) {
	db := open(t)
	bad := bulk.Generated(2)
	if err := db.conn.exec(`CREATE TRIGGER refuse BEFORE INSERT ON airports WHEN new.iata_code = '` + bad.IATACode + `' BEGIN SELECT RAISE(ABORT, 'refused by test'); END`); err != nil {
		t.Fatal(err)
	}
	_, err := upsert(t, db, bulk.Generated(0), bulk.Generated(1), bad, bulk.Generated(3))
	if !errors.Is(err, ErrDB) || !strings.Contains(err.Error(), "record 2") || !strings.Contains(err.Error(), "refused by test") {
		t.Fatalf("err %v", err)
	}
	if c, err := db.Count(); c != 0 || err != nil {
		t.Fatalf("count %d %v after the failed request", c, err)
	}
	if res, err := upsert(t, db, bulk.Generated(0)); err != nil || res.Inserted != 1 {
		t.Fatalf("after rollback: %+v %v", res, err)
	}
}

// Open opens the file it is given, whatever the name: not a URI, not a
// DSN with parameters ('?', '%', '#', ':' and spaces are only characters),
// relative or absolute, on both backends.
func TestOpenTakesTheNameLiterally(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, name := range []string{
		filepath.Join(dir, "a?mode=ro&_mutex=full.db"),
		filepath.Join(dir, "b%3F c#d.db"),
		"rel:ative?x.db",
	} {
		db, err := Open(name, Options{})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if _, err := upsert(t, db, bulk.Generated(0)); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		db.Close()
		abs := name
		if !filepath.IsAbs(name) {
			abs = filepath.Join(dir, name)
		}
		if fi, err := os.Stat(abs); err != nil || fi.Size() == 0 {
			t.Errorf("%q: not created as named: %v", name, err)
		}
	}
	var names []string // the journal_mode=TRUNCATE journals aside
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "-journal") {
			names = append(names, e.Name())
		}
	}
	if len(names) != 3 {
		t.Errorf("files %q, want the three named", names)
	}
}
