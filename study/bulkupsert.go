package study

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/store/sqlite"
)

// The bulk-upsert study is the airports seed done right: every format,
// streaming against buffered, a fresh database per trial, time, rows/s,
// server CPU, bytes on the wire, peak RSS and RSS over time sampled from the
// server's own PID, the table compared with the generator after every
// trial, and sqlite3 .import of the same rows beside them as the physical
// limit. Its trials are uploads of a fixed size, not load runs of a fixed
// duration, so it has its own runner (RunBulkUpsert) and results.

// BulkUpsertName is the study's name on the command line.
const BulkUpsertName = "bulk-upsert"

func init() {
	Register(BulkUpsertName, func() Definition {
		return Definition{
			Name:     BulkUpsertName,
			Title:    "1M airports into SQLite: streaming vs buffered, in every format (the airports seed, done right)",
			Question: "What do streaming and buffered bulk upserts cost in time, CPU and memory, per format, next to sqlite3 .import?",
			Description: "POST /airports with 1M generated airports (--quick: 100k) in JSON, NDJSON, TOON, protobuf and CSV, " +
				"streamed and ?mode=buffered; a fresh database per trial; rows and checksum verified; sqlite3 .import as the limit.",
		}
	})
}

// BulkOptions configure RunBulkUpsert; the zero value is the full run.
type BulkOptions struct {
	Options
	// Records per upload (default 1,000,000; 100,000 with Quick).
	Records int
	// Formats (default: all of bulk.Formats()).
	Formats []string
	// MaxBufferedBody is --max-body of the buffered cells' servers
	// (default 1 GiB: room for 1M records in any format).
	MaxBufferedBody int64
	// Dir holds the trials' databases and the CSV for .import (default:
	// a temporary directory, removed at the end).
	Dir string
}

// Cell modes.
const (
	ModeStream   = "stream"
	ModeBuffered = "buffered"
	ModeImport   = "sqlite3 .import"
)

// BulkResults are a bulk-upsert run.
type BulkResults struct {
	Schema   string         `json:"schema"`
	Title    string         `json:"title"`
	Question string         `json:"question"`
	Quick    bool           `json:"quick"`
	Records  int            `json:"records"`
	Trials   int            `json:"trials"`
	Seed     int64          `json:"seed"`
	Env      measure.Env    `json:"env"`
	Options  BulkRunOptions `json:"options"`
	Expected bulk.Checksum  `json:"expected"`
	Cells    []*BulkCell    `json:"cells"`
	Warnings []string       `json:"warnings,omitempty"`
	Start    time.Time      `json:"start"`
	End      time.Time      `json:"end"`
}

// BulkRunOptions are the options a bulk-upsert run ran with, defaults
// filled in, and the sqlite3 shell its reference cell used. The fields
// are in the order of the map they replace, so files keep their shape.
type BulkRunOptions struct {
	Binary          string   `json:"binary"`
	ClientCPUs      []int    `json:"client_cpus"`
	Formats         []string `json:"formats"`
	MaxBufferedBody int64    `json:"max_buffered_body"`
	Records         int      `json:"records"`
	Seed            int64    `json:"seed"`
	ServeArgs       []string `json:"serve_args"`
	ServerCPUs      []int    `json:"server_cpus"`
	SQLite3         string   `json:"sqlite3"`
	Trials          int      `json:"trials"`
}

// BulkCell is one mode and format (or the .import reference).
type BulkCell struct {
	Mode   string       `json:"mode"`
	Format string       `json:"format"`
	Trials []*BulkTrial `json:"trials"`
}

// ID names the cell.
func (c *BulkCell) ID() string {
	if c.Mode == ModeImport {
		return ModeImport + " (csv)"
	}
	return c.Mode + " " + c.Format
}

// BulkTrial is one upload into a fresh database.
type BulkTrial struct {
	Order     int           `json:"order"`
	ServerPID int           `json:"server_pid"`
	Wall      time.Duration `json:"wall_ns"`
	RowsPerS  float64       `json:"rows_per_s"`
	ServerCPU time.Duration `json:"server_cpu_ns"`
	// PeakRSS is the server's VmHWM at the end of the upload (the
	// kernel's own peak, which samples can miss); Samples are VmRSS over
	// time from the same PID.
	PeakRSS   int64                `json:"peak_rss_bytes"`
	Samples   []bulkSample         `json:"samples"`
	Upload    *scenario.BulkResult `json:"upload,omitempty"`
	Rows      int64                `json:"rows"`
	Checksum  bulk.Checksum        `json:"checksum"`
	Verified  bool                 `json:"verified"` // rows and checksum equal the generator's
	Error     string               `json:"error,omitempty"`
	ServerLog string               `json:"server_log,omitempty"`
}

type bulkSample struct {
	T   time.Duration `json:"t_ns"`
	RSS int64         `json:"rss_bytes"`
}

// bulkSampleInterval is finer than the load studies': a 100k upload lasts
// about a second.
const bulkSampleInterval = 25 * time.Millisecond

// RunBulkUpsert runs the study. Trial failures are recorded, not returned.
func RunBulkUpsert(ctx context.Context, o BulkOptions) (*BulkResults, error) {
	def, _ := Lookup(BulkUpsertName)
	if o.Trials == 0 {
		o.Trials = 3
		if o.Quick {
			o.Trials = 2
		}
	}
	o.Options = o.Options.withDefaults(def)
	if o.Records == 0 {
		o.Records = 1_000_000
		if o.Quick {
			o.Records = 100_000
		}
	}
	if o.Records < 1 || o.Records > bulk.MaxGenerate {
		return nil, fmt.Errorf("%w: %d records", ErrDefinition, o.Records)
	}
	if len(o.Formats) == 0 {
		o.Formats = bulk.Formats()
	}
	for _, f := range o.Formats {
		if bulk.MediaType(f) == "" {
			return nil, fmt.Errorf("%w: format %q (want %v)", ErrDefinition, f, bulk.Formats())
		}
	}
	o.MaxBufferedBody = cmp.Or(o.MaxBufferedBody, 1<<30)
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("study: find the wirebench binary: %w", err)
		}
		o.Binary = exe
	}
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		return nil, fmt.Errorf("study %s: the reference cell needs the sqlite3 shell (apt-get install sqlite3): %w", BulkUpsertName, err)
	}
	if o.Dir == "" {
		if o.Dir, err = os.MkdirTemp("", "wirebench-bulk-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(o.Dir)
	}
	res := &BulkResults{Schema: "wirebench-bulk-upsert/1", Title: def.Title, Question: def.Question, Quick: o.Quick,
		Records: o.Records, Trials: o.Trials, Seed: o.Seed, Start: time.Now(), Expected: bulk.GeneratedChecksum(o.Records)}
	restore, warn := pin(&o.Options)
	defer restore()
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	if o.Quick {
		res.Warnings = append(res.Warnings, fmt.Sprintf("quick run: %d records, %d trials per cell; the goals are stated for 1M records", o.Records, o.Trials))
	}
	res.Env = measure.Environment(ctx)
	res.Options = BulkRunOptions{Records: o.Records, Trials: o.Trials, Seed: o.Seed, Formats: o.Formats,
		ClientCPUs: o.ClientCPUs, ServerCPUs: o.ServerCPUs, Binary: o.Binary, ServeArgs: o.ServeArgs,
		MaxBufferedBody: o.MaxBufferedBody, SQLite3: sqlite3}
	for _, mode := range []string{ModeStream, ModeBuffered} {
		for _, f := range o.Formats {
			res.Cells = append(res.Cells, &BulkCell{Mode: mode, Format: f})
		}
	}
	res.Cells = append(res.Cells, &BulkCell{Mode: ModeImport, Format: bulk.FormatCSV})

	// The rows .import reads: the same generated records, as CSV.
	csvPath := filepath.Join(o.Dir, "airports.csv")
	if err := writeGenerated(csvPath, o.Records); err != nil {
		return nil, err
	}
	for i, tr := range trialOrder(len(res.Cells), o.Trials, o.Seed) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		c := res.Cells[tr.cell]
		dbPath := filepath.Join(o.Dir, fmt.Sprintf("trial-%d.db", i))
		var t *BulkTrial
		if c.Mode == ModeImport {
			t = importTrial(ctx, o, sqlite3, csvPath, dbPath)
		} else {
			t = uploadTrial(ctx, o, c, dbPath)
		}
		t.Order = i
		if t.Error == "" {
			t.verify(dbPath, res.Expected)
		}
		for _, p := range []string{dbPath, dbPath + "-journal", dbPath + "-wal", dbPath + "-shm"} {
			os.Remove(p)
		}
		c.Trials = append(c.Trials, t)
		status := "ok"
		if t.Error != "" {
			status = "FAILED: " + t.Error
		}
		o.Progress(fmt.Sprintf("[%d/%d] %-22s %8.2fs %9.0f rows/s  peak RSS %6.1f MiB  %s", i+1, o.Trials*len(res.Cells),
			c.ID(), t.Wall.Seconds(), t.RowsPerS, float64(t.PeakRSS)/(1<<20), status))
	}
	res.End = time.Now()
	return res, nil
}

func writeGenerated(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("study: %w", err)
	}
	if _, err := bulk.Generate(f, bulk.FormatCSV, n); err != nil {
		f.Close()
		return fmt.Errorf("study: generate %s: %w", path, err)
	}
	return f.Close()
}

// uploadTrial starts a fresh server on a fresh database, streams the
// generated body to it and stops it.
func uploadTrial(ctx context.Context, o BulkOptions, c *BulkCell, dbPath string) *BulkTrial {
	t := &BulkTrial{}
	ports, err := freePorts(2, o.Ports)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	args := []string{"{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--grpc", "127.0.0.1:{port2}", "--sqlite", dbPath}
	if c.Mode == ModeBuffered {
		args = append(args, "--max-body", strconv.FormatInt(o.MaxBufferedBody, 10))
	}
	s := &Server{Command: append(args, o.ServeArgs...), Ready: "http://127.0.0.1:{port}/healthz"}
	v := vars{ports: ports, wirebench: o.Binary}
	srv, err := startProc(s, v, o.ServerCPUs)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	defer srv.stop(defaultStopSignal, DefaultStopGrace)
	if len(o.ClientCPUs) > 0 {
		_ = measure.Pin(o.ClientCPUs) // see runTrial
	}
	t.ServerPID = srv.pid()
	if err := srv.waitReady(ctx, v.expand(s.Ready), DefaultReadyTimeout); err != nil {
		t.Error = err.Error()
		return t
	}
	smp, err := startSampler(t.ServerPID, bulkSampleInterval)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	url := v.expand("http://127.0.0.1:{port}/airports")
	if c.Mode == ModeBuffered {
		url += "?mode=buffered"
	}
	up, err := scenario.PostBulk(ctx, scenario.BulkOptions{URL: url, Format: c.Format, Records: o.Records})
	if ps, perr := measure.SampleProc(t.ServerPID); perr == nil {
		t.PeakRSS = ps.PeakRSS
	}
	st := smp.stop()
	t.takeSamples(st.Samples)
	t.ServerCPU = st.CPU
	t.Upload = &up
	t.Wall = up.Duration
	switch {
	case err != nil:
		t.Error = err.Error()
	case up.Status != 200:
		t.Error = fmt.Sprintf("status %d: %s", up.Status, up.Reply)
	}
	if crash := srv.crashed(); crash != nil {
		t.Error = "the server died: " + crash.Error()
		t.ServerLog = srv.output()
	}
	if t.Wall > 0 {
		t.RowsPerS = float64(o.Records) / t.Wall.Seconds()
	}
	return t
}

// importTrial times sqlite3 .import of the CSV into a fresh database with
// the same schema, on the server's CPUs, sampled like a server.
func importTrial(ctx context.Context, o BulkOptions, sqlite3, csvPath, dbPath string) *BulkTrial {
	t := &BulkTrial{}
	if out, err := exec.CommandContext(ctx, sqlite3, dbPath, sqlite.Schema+";").CombinedOutput(); err != nil {
		t.Error = fmt.Sprintf("create the table: %v: %s", err, out)
		return t
	}
	s := &Server{Command: []string{sqlite3, dbPath, ".import --csv --skip 1 " + csvPath + " airports"}}
	start := time.Now()
	p, err := startProc(s, vars{}, o.ServerCPUs)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	if len(o.ClientCPUs) > 0 {
		_ = measure.Pin(o.ClientCPUs)
	}
	t.ServerPID = p.pid()
	smp, serr := startSampler(t.ServerPID, bulkSampleInterval)
	// Peak RSS: VmHWM sampled until it exits. Not wait4's ru_maxrss,
	// which counts the forking study process's RSS from before exec.
	for done := false; !done; {
		select {
		case <-p.done:
			done = true
		case <-time.After(bulkSampleInterval):
			if ps, err := measure.SampleProc(t.ServerPID); err == nil {
				t.PeakRSS = max(t.PeakRSS, ps.PeakRSS)
			}
		}
	}
	t.Wall = time.Since(start)
	if serr == nil {
		st := smp.stop()
		t.takeSamples(st.Samples)
	}
	// CPU from wait4's rusage: exact, however short the run.
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.ServerCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if p.err != nil {
		t.Error = fmt.Sprintf("sqlite3 .import: %v: %s", p.err, p.output())
	}
	p.log.Close()
	t.RowsPerS = float64(o.Records) / t.Wall.Seconds()
	return t
}

func (t *BulkTrial) takeSamples(ss []results.ProcSample) {
	for _, s := range ss {
		t.Samples = append(t.Samples, bulkSample{T: s.T, RSS: s.RSS})
	}
}

// verify reads the trial's table back and compares it with the generator.
func (t *BulkTrial) verify(dbPath string, want bulk.Checksum) {
	db, err := sqlite.Open(dbPath, sqlite.Options{})
	if err != nil {
		t.Error = "verify: " + err.Error()
		return
	}
	defer db.Close()
	if t.Checksum, err = db.Checksum(); err != nil {
		t.Error = "verify: " + err.Error()
		return
	}
	t.Rows = t.Checksum.Rows
	t.Verified = t.Checksum == want
	if !t.Verified {
		t.Error = fmt.Sprintf("table holds %v, the generator wrote %v", t.Checksum, want)
	}
}
