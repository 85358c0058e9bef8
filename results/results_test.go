package results

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

func loadRun() *Load {
	h := measure.NewHistogram()
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	start := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	return &Load{
		Schema: LoadSchema, Scenario: "raw", Options: Options{Concurrency: 20},
		Config: Config{Scenario: "raw", Raw: NewClientOptions(map[string]string{"url": "http://127.0.0.1:8080/"})},
		Start:  start, End: start.Add(2 * time.Second), Requests: 100,
		Latency: h, Service: h, Lag: measure.NewHistogram(),
		Ops:    []Op{{Name: "GET /", Requests: 100, Latency: h, Service: h}},
		Status: map[string]int64{"200": 100}, Failures: map[string]int64{},
	}
}

func TestReadLoadRun(t *testing.T) {
	var buf bytes.Buffer
	if err := loadRun().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	s, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !s.SingleRun || s.Schema != StudySchema || len(s.Cells) != 1 || len(s.Trials) != 1 {
		t.Fatalf("load run read as %+v", s)
	}
	if got := s.TrialsOf(s.Cells[0].ID); len(got) != 1 || got[0].Load.Requests != 100 {
		t.Errorf("the one trial holds %+v", got)
	}
	if !strings.Contains(s.Title, "http://127.0.0.1:8080/") {
		t.Errorf("title %q does not name the target", s.Title)
	}
	if s.Sampled() {
		t.Error("a load run has no server samples")
	}
}

func TestReadStudyRoundTrip(t *testing.T) {
	in := FromLoad(loadRun())
	in.SingleRun = false
	in.Question = "Is it fast?"
	var buf bytes.Buffer
	if err := in.Write(&buf); err != nil {
		t.Fatal(err)
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Question != in.Question || out.SingleRun || len(out.Trials) != 1 || !out.Trials[0].Load.Latency.Equal(in.Trials[0].Load.Latency) {
		t.Errorf("round trip changed the study: %+v", out)
	}
}

func TestReadRefuses(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", "hello", "invalid character"},
		{"other schema", `{"schema":"other/v9"}`, `schema "other/v9"`},
		{"no schema", `{}`, `schema ""`},
		{"unknown cell", `{"schema":"wirebench.study/v1","cells":[{"id":"a"}],"trials":[{"cell":"b"}]}`, `unknown cell "b"`},
		{"duplicate cell", `{"schema":"wirebench.study/v1","cells":[{"id":"a"},{"id":"a"}]}`, `cell "a" appears twice`},
		{"trial without histograms", `{"schema":"wirebench.study/v1","cells":[{"id":"a"}],"trials":[{"cell":"a","load":{}}]}`, "missing histograms"},
		{"load without histograms", `{"schema":"wirebench.load/v1"}`, "missing histograms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in))
			if !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrResults mentioning %q", err, tt.want)
			}
		})
	}
}

func TestReadFileLabelsLoadRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "before.json")
	if err := WriteFile(path, false, loadRun().WriteJSON); err != nil {
		t.Fatal(err)
	}
	s, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cells[0].Label != "before" {
		t.Errorf("label %q, want the file name", s.Cells[0].Label)
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	loadRun().WriteJSON(&buf)
	f.Add(buf.Bytes())
	buf.Reset()
	FromLoad(loadRun()).Write(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"wirebench.study/v1","cells":[{"id":"a"}],"trials":[{"cell":"a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrResults) {
				t.Fatalf("error %v does not wrap ErrResults", err)
			}
			return
		}
		// Whatever was accepted can be written and read back.
		var out bytes.Buffer
		if err := s.Write(&out); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&out); err != nil {
			t.Fatalf("accepted input does not round-trip: %v", err)
		}
	})
}

func TestWriteFileNeverReplacesWithoutForce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFile(path, false, write("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, false, write("second")); !errors.Is(err, ErrExists) {
		t.Fatalf("second write: %v, want ErrExists", err)
	}
	if err := CheckNew(path, false); !errors.Is(err, ErrExists) {
		t.Errorf("CheckNew: %v, want ErrExists", err)
	}
	assertFile(t, path, "first")
	if err := WriteFile(path, true, write("third")); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "third")
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	assertNoTemp(t, dir)
}

// A writer that fails half-way leaves the previous file as it was and no
// temporary file behind: an interrupted run never leaves half a result.
func TestWriteFileFailureKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := WriteFile(path, true, func(w io.Writer) error {
		io.WriteString(w, "half a res")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the writer's", err)
	}
	assertFile(t, path, "previous")
	assertNoTemp(t, dir)
}

// Racing writers for one new name: exactly one wins without --force.
func TestWriteFileRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = WriteFile(path, false, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrExists):
			t.Errorf("unexpected error %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d writers won, want exactly 1", won)
	}
}

func assertFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("%s holds %q (%v), want %q", path, got, err, want)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestNewRunDirUnique(t *testing.T) {
	base := filepath.Join(t.TempDir(), "results")
	now := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for i := range 5 {
		dir, err := newRunDir(base, "formats", now)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("run %d got %s again", i, dir)
		}
		seen[dir] = true
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("%s not created: %v", dir, err)
		}
	}
	want := filepath.Join(base, "formats-20261123T130000Z-3")
	if !seen[want] {
		t.Errorf("dirs %v lack %s", seen, want)
	}
}

// Many studies starting at once (the same second): every one gets its
// own directory.
func TestNewRunDirConcurrent(t *testing.T) {
	base := t.TempDir()
	now := time.Now()
	dirs := make([]string, 20)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Go(func() {
			d, err := newRunDir(base, "s", now)
			if err != nil {
				t.Error(err)
			}
			dirs[i] = d
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			t.Errorf("%s handed out twice", d)
		}
		seen[d] = true
	}
}

func TestNewRunDirGivesUp(t *testing.T) {
	base := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range MaxRunDirTries {
		if _, err := newRunDir(base, "s", now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := newRunDir(base, "s", now); err == nil || !strings.Contains(err.Error(), "exist already") {
		t.Errorf("after %d dirs: err = %v, want a refusal", MaxRunDirTries, err)
	}
}

// A file over MaxFileSize is refused without being read whole.
func TestReadRefusesHugeFile(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"schema":"wirebench.study/v1","x":"`), infiniteA{})
	if _, err := Read(r); !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), "larger than 256 MiB") {
		t.Errorf("err = %v, want a refusal naming the limit", err)
	}
}

type infiniteA struct{}

func (infiniteA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestNewRunDirSafeName(t *testing.T) {
	base := t.TempDir()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, want := range map[string]string{
		"my/ab":   "my-ab-20260102T030405Z",
		"../up":   "-up-20260102T030405Z",
		"":        "study-20260102T030405Z",
		"a b":     "a-b-20260102T030405Z",
		"json.v2": "json.v2-20260102T030405Z",
	} {
		dir, err := newRunDir(base, name, now)
		if err != nil {
			t.Fatal(err)
		}
		if dir != filepath.Join(base, want) {
			t.Errorf("study %q: dir %s, want %s", name, dir, filepath.Join(base, want))
		}
	}
}

// Without hard links (link fails with EPERM) a new file is still written
// whole and an existing one still refused.
func TestWriteFileWithoutHardLinks(t *testing.T) {
	link = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	t.Cleanup(func() { link = os.Link })
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFile(path, false, write("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, false, write("second")); !errors.Is(err, ErrExists) {
		t.Fatalf("second write: %v, want ErrExists", err)
	}
	assertFile(t, path, "first")
	assertNoTemp(t, dir)
}

// --force onto a device or pipe (--out /dev/null, /dev/stdout, a FIFO)
// writes into it and leaves it what it was: the rename used to replace
// /dev/null with a regular file for the whole machine. A FIFO stands in
// for the device (making one needs no privilege).
func TestWriteFileIntoAPipe(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(path) // opens the reading end; EOF when the writer closes
		got <- string(b)
	}()
	err := WriteFile(path, true, func(w io.Writer) error { _, err := io.WriteString(w, "result"); return err })
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after WriteFile %s is %v (%v), want the named pipe", path, fi.Mode(), err)
	}
	if s := <-got; s != "result" {
		t.Errorf("read %q from the pipe, want %q", s, "result")
	}
	assertNoTemp(t, dir)
}
