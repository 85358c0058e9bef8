package results

import (
	"time"

	"github.com/wirebench/wirebench/measure"
)

// StudySchema names the study result format (results.json of a study).
// LoadSchema (load.Schema) names a plain load run's file; Read accepts
// both and gives a Study either way.
const StudySchema = "wirebench.study/v2"

// Study is one run of a study: every trial's raw load result and server
// samples, the environment and all options. It is results.json.
type Study struct {
	Schema string `json:"schema"`
	Study  string `json:"study"`
	Title  string `json:"title"`
	// Question is what the study asks, in one sentence ("Which wire
	// format serves the reference API fastest?"); reports open with it.
	Question string `json:"question,omitempty"`
	// Answer says in which metric, and for a yes/no question from which
	// cell, the question is answered; reports put that answer first.
	Answer Answer `json:"answer,omitzero"`
	// Quick marks a shortened run (fewer, shorter trials): reports say so.
	Quick bool `json:"quick"`
	// SingleRun marks a plain load run read as a study: one cell, one
	// trial, no server process sampled. Reports claim no significance
	// from it, and compare two of them side by side.
	SingleRun bool `json:"single_run,omitempty"`
	// Seed is the seed of the shuffled trial order, so a run can be repeated.
	Seed    int64        `json:"seed"`
	Options StudyOptions `json:"options"`
	Env     measure.Env  `json:"env"`
	Start   time.Time    `json:"start"`
	End     time.Time    `json:"end"`

	// Cells are what the report compares: within a Group, each Label
	// against the group's baseline (the cell marked Baseline, else the
	// group's first cell). A cell is one server variant under one client
	// scenario.
	Cells []Cell `json:"cells"`
	// Trials are in run order (interleaved across cells).
	Trials []Trial `json:"trials"`
	// Payloads are static size measurements (the payload-size study).
	Payloads []Payload `json:"payloads,omitempty"`
	// PayloadLab is a payload lab run (wirebench payload --out) read as a
	// study: formats measured on the user's samples, no load.
	PayloadLab *PayloadLab `json:"payload_lab,omitempty"`
	Warnings   []string    `json:"warnings,omitempty"`
	// Notes are the study's own Markdown sections (study kv: the seed's
	// tables beside this run's), rendered after the tables.
	Notes []string `json:"notes,omitempty"`
	// Stop is set when the study was cut short (a signal): which trials
	// ran and which cells are complete. Reports say so first.
	Stop *StudyStop `json:"stop,omitempty"`
	// ServerQuota is the CPU quota the study gave its servers (nil: none;
	// a server's own cpu_quota is on its trials).
	ServerQuota *CPUQuota `json:"server_quota,omitempty"`
	// Links are the emulated networks the study ran every cell on (its
	// links axis), each with its calibration, in the order given; a cell
	// names its own (Cell.Link). Empty: loopback only, no axis.
	Links []Link `json:"links,omitempty"`
}

// Answer names what answers a study's question. The zero value answers
// in req/s against each group's baseline.
type Answer struct {
	// Metric is the report's metric key the question is asked in:
	// "server_cpu_per_req" for "is it cheaper to serve?", "rps" for "is it
	// faster?". Reports fall back to req/s when the cells lack it; a group
	// that measured capacity answers in capacity, and in-browser cells in
	// latency (p50), whatever this says.
	Metric string `json:"metric,omitempty"`
	// Cell, for a yes/no question ("Is TOON cheaper to serve than
	// JSON?"), is the label of the cell whose comparison with its group's
	// baseline answers it ("toon"): yes when it is significantly better.
	// Empty: the answer sums up every cell against its baseline.
	Cell string `json:"cell,omitempty"`
	// Yes is the verdict that answers the question yes: "better" (the
	// default: "Is TOON cheaper?") or "worse" ("Is the new build slower?").
	Yes string `json:"yes,omitempty"`
}

// Cell is one compared configuration.
type Cell struct {
	ID    string `json:"id"`    // unique, e.g. "crud/toon"
	Group string `json:"group"` // e.g. "crud" or "Create c=1"
	Label string `json:"label"` // e.g. "toon" or "gRPC"
	// ServeArgs are the flags of the server process (after the common ones).
	ServeArgs []string `json:"serve_args"`
	// Load is the client configuration (scenario, format, transport, options).
	Load CellLoad `json:"load"`
	// Command is the server command as written in the study, before the
	// per-trial ports are substituted; empty for an external server.
	Command []string `json:"command,omitempty"`
	// Baseline marks the cell the others of its group are compared with.
	Baseline bool `json:"baseline,omitempty"`
	// External is the URL of a server that was already running: no fresh
	// process per trial and no process sampling (CPU, RSS) for this cell.
	External string `json:"external,omitempty"`
	// Rev is the git revision the cell was built from, as written in the
	// study (main, HEAD~1, a tag), and Commit what it resolved to; both
	// empty for a cell run from the working tree as it is.
	Rev    string `json:"rev,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Link is the emulated network the cell's client ran across, as the
	// study's links name it (Study.Links): "3g", "rtt=50ms,loss=1%", or
	// "none" for loopback. Empty when the study has no links axis. Cells
	// are compared with their group's baseline on the same link only.
	Link string `json:"link,omitempty"`
}

// Trial is one fresh server process under one load run.
type Trial struct {
	Cell  string `json:"cell"`  // Cell.ID
	Index int    `json:"index"` // 0-based trial number within the cell
	Order int    `json:"order"` // 0-based position in the run
	// ServerPID is the PID of this trial's server process (a fresh one each time).
	ServerPID  int   `json:"server_pid"`
	ServerCPUs []int `json:"server_cpus,omitempty"`
	// ServerQuota is the CPU quota the server ran under (nil: none).
	ServerQuota *CPUQuota `json:"server_quota,omitempty"`
	ClientCPUs  []int     `json:"client_cpus,omitempty"`
	// Dataset sizes before and after the measured run (fairness rule 1).
	UsersBefore int `json:"users_before"`
	UsersAfter  int `json:"users_after"`
	TodosBefore int `json:"todos_before"`
	TodosAfter  int `json:"todos_after"`

	Load *Load `json:"load"`
	// Capacity is set when the cell measured capacity (measure:
	// capacity): the search, whose answer's measurement is Load.
	Capacity *Capacity   `json:"capacity,omitempty"`
	Server   ServerStats `json:"server"`
	Error    string      `json:"error,omitempty"`
	// Ports are the free loopback ports chosen for this trial ({port},
	// {port2}, ... in the study's templates).
	Ports []int `json:"ports,omitempty"`
	// Checks are the outcomes of the cell's check commands after the load.
	Checks []CheckResult `json:"checks,omitempty"`
	// External are figures measured beside the trial by another tool on
	// the same server (study kv: redis-benchmark's requests/s, as
	// "redis-benchmark SET rps").
	External map[string]float64 `json:"external,omitempty"`
	// Relay is what the emulated link's relay did during the measured
	// run (nil on loopback).
	Relay *LinkRelay `json:"relay,omitempty"`
}

// CheckResult is one check command run after a trial's load.
type CheckResult struct {
	Command  []string      `json:"command"` // with the trial's ports
	OK       bool          `json:"ok"`
	ExitCode int           `json:"exit_code"`
	Output   string        `json:"output,omitempty"` // the tail of stdout and stderr
	Duration time.Duration `json:"duration_ns"`
}

// ServerStats are sampled from the server's own PID during the measured run.
type ServerStats struct {
	// CPU is user+system time the server spent during the measured run.
	CPU     time.Duration `json:"cpu_ns"`
	PeakRSS int64         `json:"peak_rss_bytes"`
	// Samples every ~100 ms: time since the measured run began, RSS, and
	// cumulative CPU since then.
	Samples []ProcSample `json:"samples"`
	// GoMem is read from the server's /metrics at the end of the trial
	// (e.g. go_memstats_heap_inuse_bytes, go_gc_duration_seconds_count).
	GoMem map[string]float64 `json:"go_mem,omitempty"`
}

// ProcSample is one sample of the server process.
type ProcSample struct {
	T   time.Duration `json:"t_ns"`
	RSS int64         `json:"rss_bytes"`
	CPU time.Duration `json:"cpu_ns"`
}

// Payload is the size of one response, measured once (it is deterministic).
type Payload struct {
	Dataset     string `json:"dataset"` // "users" or "todos"
	N           int    `json:"n"`       // items in the list
	Format      string `json:"format"`
	Transport   string `json:"transport"`   // http1, h2c, grpc
	Compression string `json:"compression"` // "", gzip, zstd
	// Body is the encoded message before content coding: the format's own
	// size. Coded is the body after content coding (HTTP only; 0 when
	// uncompressed or unknown). Wire is every response byte on the socket
	// per request on a warm connection: body plus headers and framing.
	Body  int64 `json:"body_bytes"`
	Coded int64 `json:"coded_bytes,omitempty"`
	Wire  int64 `json:"wire_bytes"`
}

// CellByID returns the cell with the given id.
func (r *Study) CellByID(id string) (Cell, bool) {
	for _, c := range r.Cells {
		if c.ID == id {
			return c, true
		}
	}
	return Cell{}, false
}

// TrialsOf returns the trials of one cell in run order, skipping failed
// ones.
func (r *Study) TrialsOf(id string) []Trial {
	var out []Trial
	for _, t := range r.Trials {
		if t.Cell == id && t.Error == "" && t.Load != nil {
			out = append(out, t)
		}
	}
	return out
}

// HasLoad reports whether the study ran load trials at all; a sizes-only
// study (payload-size) has none, and its report must not speak of trials.
func (r *Study) HasLoad() bool { return len(r.Cells) > 0 || len(r.Trials) > 0 }

// Sampled reports whether any trial sampled a server process: a single
// load run, or cells that only name a running server's URL, have no
// server CPU or memory to show.
func (r *Study) Sampled() bool {
	for _, t := range r.Trials {
		if t.ServerPID > 0 || t.Server.PeakRSS > 0 || t.Server.CPU > 0 {
			return true
		}
	}
	return false
}
