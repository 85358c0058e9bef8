package bulkapi

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/store/sqlite"
)

// stalledUpload is a POST /airports that sends body, then nothing until
// the test ends. It returns once the handler has read all of body (so it
// is inside its request), and reports the request's end on done.
func stalledUpload(t *testing.T, srv *httptest.Server, seen *readCounter, body string) (done <-chan error) {
	t.Helper()
	pr, pw := ioPipe()
	pw.Write([]byte(body))
	t.Cleanup(func() { pw.Close() })
	req, _ := http.NewRequest("POST", srv.URL+"/airports", pr)
	req.Header.Set("Content-Type", "application/x-ndjson")
	ch := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			err = errors.New("answered " + resp.Status + ": " + string(b))
		}
		ch <- err
	}()
	select {
	case <-seen.reached(int64(len(body))):
	case err := <-ch:
		t.Fatalf("stalled upload ended early: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the handler never read the stalled upload's body")
	}
	return ch
}

// readCounter wraps the handler so the test knows how much of a request
// body the handler has read.
type readCounter struct {
	handlers sync.WaitGroup // handlers running
	mu       sync.Mutex
	n        int64
	waiters  map[int64]chan struct{}
}

func (c *readCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.handlers.Add(1)
		defer c.handlers.Done()
		r.Body = &countingBody{ReadCloser: r.Body, c: c}
		h.ServeHTTP(w, r)
	})
}

func (c *readCounter) reached(n int64) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	if c.n >= n {
		close(ch)
		return ch
	}
	if c.waiters == nil {
		c.waiters = map[int64]chan struct{}{}
	}
	c.waiters[n] = ch
	return ch
}

type countingBody struct {
	io.ReadCloser
	c *readCounter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.n += int64(n)
	for want, ch := range b.c.waiters {
		if b.c.n >= want {
			close(ch)
			delete(b.c.waiters, want)
		}
	}
	b.c.mu.Unlock()
	return n, err
}

// spoolServer is a handler over a file database with a small page cache
// (so a few thousand records spill it, and a writer inside its
// transaction holds SQLite's exclusive lock) and a long stall timeout (so
// a stalled upload lasts the whole test).
func spoolServer(t *testing.T, o Options) (*httptest.Server, *sqlite.DB, *readCounter) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{CacheKiB: 64})
	if err != nil {
		t.Fatal(err)
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = 2 * time.Minute
	}
	rc := &readCounter{}
	srv := httptest.NewServer(rc.wrap(New(db, o)))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); db.Close() })
	return srv, db, rc
}

// Issue 34 item 5: a stalled upload (part of a body, then nothing) does
// not hold up another upload. Before the spool, the second waited for the
// first's stall timeout (here 2 min; the test gives up after 10 s). The
// issue's bar is one second; 10 s is the generous bound of a busy 2-CPU
// machine, far below the stall timeout.
func TestStalledUploadDoesNotDelayAnother(t *testing.T) {
	srv, db, rc := spoolServer(t, Options{})
	stalled := stalledUpload(t, srv, rc, gen(t, bulk.FormatNDJSON, 5000))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/airports", strings.NewReader(gen(t, bulk.FormatCSV, 3)))
	req.Header.Set("Content-Type", "text/csv")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("second upload behind a stalled one: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("second upload answered in %v", time.Since(start))
	if resp.StatusCode != 200 || string(b) != `{"inserted":3,"updated":0,"records":3}`+"\n" {
		t.Fatalf("second upload: %d %s", resp.StatusCode, b)
	}
	select {
	case err := <-stalled:
		t.Fatalf("the stalled upload ended first: %v", err)
	default:
	}
	if c, _ := db.Count(); c != 3 {
		t.Fatalf("%d rows: want the second upload's 3", c)
	}
}

// An outside reader (database/sql on the same file with no busy timeout,
// and the sqlite3 shell when installed) reads while an upload is under
// way. Before the spool, the upload held the write lock, exclusive once
// its pages spilled from the cache: "database is locked".
func TestOutsideReaderReadsDuringUpload(t *testing.T) {
	srv, db, rc := spoolServer(t, Options{})
	if code, body := post(t, srv.URL+"/airports", "text/csv", gen(t, bulk.FormatCSV, 3)); code != 200 {
		t.Fatalf("first upload: %d %s", code, body)
	}
	stalledUpload(t, srv, rc, gen(t, bulk.FormatNDJSON, 5000))
	rdb, err := sql.Open("sqlite3", readerDSN(db.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var n int
	if err := rdb.QueryRow("SELECT count(*) FROM airports").Scan(&n); err != nil || n != 3 {
		t.Fatalf("database/sql reader during an upload: %d rows, %v; want the 3 committed", n, err)
	}
	sh, err := exec.LookPath("sqlite3")
	if err != nil {
		if testkit.InCI() {
			t.Fatal("sqlite3 shell not installed (CI installs it)")
		}
		t.Log("sqlite3 shell not installed: database/sql reader only")
		return
	}
	out, err := exec.Command(sh, db.Path(), "SELECT count(*) FROM airports").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Fatalf("sqlite3 shell during an upload: %q %v", out, err)
	}
}

// A bad record after the spool has gone to its file: 400 naming it, and
// nothing of the request committed.
func TestBadRecordAfterSpooledPartCommitsNothing(t *testing.T) {
	const n, bad = 20_000, 19_000
	srv, db, _ := spoolServer(t, Options{SpoolMem: 4 << 10})
	lines := strings.Split(gen(t, bulk.FormatNDJSON, n), "\n")
	lines[bad] = strings.Replace(lines[bad], `"name":"`, `"name":1,"x":"`, 1)
	code, reply := post(t, srv.URL+"/airports", "application/x-ndjson", strings.Join(lines, "\n"))
	var e ErrorReply
	json.Unmarshal([]byte(reply), &e)
	if code != 400 || e.Index == nil || *e.Index != bad || e.Field != "name" {
		t.Fatalf("%d %s", code, reply)
	}
	if c, _ := db.Count(); c != 0 {
		t.Fatalf("%d rows committed", c)
	}
	// The same body without the bad record goes through the file too.
	lines[bad] = strings.Split(gen(t, bulk.FormatNDJSON, n), "\n")[bad]
	if code, reply := post(t, srv.URL+"/airports", "application/x-ndjson", strings.Join(lines, "\n")); code != 200 {
		t.Fatalf("good body: %d %s", code, reply)
	}
	if sum, _ := db.Checksum(); sum != bulk.GeneratedChecksum(n) {
		t.Fatalf("table %v", sum)
	}
}

// MaxSpool is a limit of its own: records past it answer 413 and commit
// nothing, while the body limit is not reached.
func TestSpoolLimitAnswers413(t *testing.T) {
	body := gen(t, bulk.FormatCSV, 1000)
	srv, db, _ := spoolServer(t, Options{MaxSpool: 10_000, SpoolMem: 1 << 10})
	code, reply := post(t, srv.URL+"/airports", "text/csv", body)
	var e ErrorReply
	json.Unmarshal([]byte(reply), &e)
	if code != 413 || e.Code != "too_large" || !strings.Contains(e.Error, "spool") {
		t.Fatalf("%d %s", code, reply)
	}
	if c, _ := db.Count(); c != 0 {
		t.Fatalf("%d rows committed", c)
	}
	// Under the limit, the same route takes it.
	if code, reply := post(t, srv.URL+"/airports", "text/csv", gen(t, bulk.FormatCSV, 10)); code != 200 {
		t.Fatalf("small body: %d %s", code, reply)
	}
}

// The spool's file is in SpoolDir, unlinked as soon as it is made: the
// process holds it open while the request is under way, and nothing is
// left in the directory, then or after a crash.
func TestSpoolFileIsUnlinked(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd (Linux)")
	}
	dir := t.TempDir()
	srv, _, rc := spoolServer(t, Options{SpoolDir: dir, SpoolMem: 1 << 10})
	stalledUpload(t, srv, rc, gen(t, bulk.FormatNDJSON, 2000))
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("spool dir holds %v", ents)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	open := 0
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, filepath.Join(dir, "wirebench-spool-")) {
			if !strings.HasSuffix(l, " (deleted)") {
				t.Fatalf("spool file %s not unlinked", l)
			}
			open++
		}
	}
	if open != 1 {
		t.Fatalf("%d spool files open in %s: want the stalled upload's one", open, dir)
	}
}

// A request whose body is all in may wait for its turn (here: an outside
// writer holds the lock for a second) longer than the stall timeout: the
// stall timeout is for a body that stops coming, not for a turn (the
// connection's read deadline is left at the last read's; net/http does not
// end the request for it once the body is read). Both modes.
func TestWaitForTurnIsNotAStall(t *testing.T) {
	for _, mode := range []string{"", "?mode=buffered"} {
		srv, db, _ := spoolServer(t, Options{StallTimeout: 200 * time.Millisecond})
		w, err := sql.Open("sqlite3", writerDSN(db.Path()))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		tx, err := w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO airports VALUES('ZZZ','n','c','d')"); err != nil {
			t.Fatal(err)
		}
		go func() { time.Sleep(time.Second); tx.Commit() }()
		if code, reply := post(t, srv.URL+"/airports"+mode, "text/csv", gen(t, bulk.FormatCSV, 3)); code != 200 {
			t.Fatalf("mode %q: %d %s", mode, code, reply)
		}
		if c, _ := db.Count(); c != 4 {
			t.Fatalf("mode %q: %d rows, want the outside writer's 1 and the upload's 3", mode, c)
		}
	}
}

// MaxSpoolTotal bounds the spools of all uploads receiving at once: an
// upload that would pass it answers 503 with Retry-After and commits
// nothing; once the others end, it goes through.
func TestSpoolTotalAnswers503(t *testing.T) {
	srv, db, rc := spoolServer(t, Options{MaxSpoolTotal: 2 * spoolStep, SpoolMem: 4 << 10})
	body := gen(t, bulk.FormatNDJSON, 6000) // about 340 KB spooled: both steps
	pr, pw := ioPipe()
	pw.Write([]byte(body))
	req, _ := http.NewRequest("POST", srv.URL+"/airports", pr)
	req.Header.Set("Content-Type", "application/x-ndjson")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-rc.reached(int64(len(body))):
	case <-time.After(time.Minute):
		t.Fatal("the handler never read the first upload's body")
	}
	resp, err := http.Post(srv.URL+"/airports", "text/csv", strings.NewReader(gen(t, bulk.FormatCSV, 3)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "spool budget") {
		t.Fatalf("over the total: %d %s", resp.StatusCode, b)
	}
	if c, _ := db.Count(); c != 0 {
		t.Fatalf("%d rows committed", c)
	}
	pw.Close() // the first upload's body breaks off: its reservation goes
	<-done
	rc.handlers.Wait()
	if code, reply := post(t, srv.URL+"/airports", "text/csv", gen(t, bulk.FormatCSV, 3)); code != 200 {
		t.Fatalf("after the first ended: %d %s", code, reply)
	}
}
