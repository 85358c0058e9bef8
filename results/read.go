package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrResults marks a result file that cannot be read.
var ErrResults = errors.New("results: bad results file")

// MaxFileSize bounds what Read accepts: a study of many long trials is a
// few MB (every histogram is serialized whole); 256 MiB is far beyond any
// real one and keeps a wrong file from exhausting memory.
const MaxFileSize = 256 << 20

// Read reads a study file or a load file, told apart by their schema, and
// gives the one model: a load run becomes a one-cell, one-trial study
// marked SingleRun (see FromLoad). Other schemas are refused.
func Read(rd io.Reader) (*Study, error) {
	data, err := io.ReadAll(io.LimitReader(rd, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrResults, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrResults, MaxFileSize>>20)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrResults, err)
	}
	if head.Schema == PayloadLabSchema { // its own version line, not current()'s
		p, err := ReadPayloadLab(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrResults, err)
		}
		return FromPayloadLab(p), nil
	}
	switch current(head.Schema) {
	case StudySchema:
		return readStudy(data)
	case LoadSchema:
		res, err := ReadLoad(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrResults, err)
		}
		return FromLoad(res), nil
	case CapacitySchema:
		c, err := ReadCapacity(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrResults, err)
		}
		return FromCapacity(c), nil
	}
	return nil, fmt.Errorf("%w: schema %q, want %q, %q, %q or %q", ErrResults, head.Schema, StudySchema, LoadSchema, CapacitySchema, PayloadLabSchema)
}

func readStudy(data []byte) (*Study, error) {
	var r Study
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrResults, err)
	}
	r.upgrade()
	ids := map[string]bool{}
	for _, c := range r.Cells {
		if ids[c.ID] {
			return nil, fmt.Errorf("%w: cell %q appears twice", ErrResults, c.ID)
		}
		ids[c.ID] = true
	}
	for _, t := range r.Trials {
		if !ids[t.Cell] {
			return nil, fmt.Errorf("%w: trial %d names unknown cell %q", ErrResults, t.Order, t.Cell)
		}
		if t.Load != nil && (t.Load.Latency == nil || t.Load.Service == nil || t.Load.Lag == nil) {
			return nil, fmt.Errorf("%w: trial %d of %q: missing histograms", ErrResults, t.Index, t.Cell)
		}
	}
	return &r, nil
}

// ReadFile reads a result file of either schema; a load run's cell is
// labelled with the file's name (a.json → "a"), so that two runs compared
// side by side are told apart.
func ReadFile(path string) (*Study, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.SingleRun && len(r.Cells) == 1 {
		r.Cells[0].Label = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return r, nil
}

// FromLoad wraps one load run as a study of one cell and one trial, marked
// SingleRun: no server process was sampled, and one run gives a number
// but no spread, so nothing may be called significant from it.
func FromLoad(res *Load) *Study {
	scenario := res.Scenario
	if scenario == "" {
		scenario = "load"
	}
	target := LoadTarget(res)
	title := "wirebench load: " + scenario
	if target != "" {
		title += " " + target
	}
	cell := Cell{ID: scenario, Group: scenario, Label: scenario, Baseline: true, Load: cellLoad(res, nil)}
	s := &Study{
		Schema: StudySchema, Study: "load", Title: title, SingleRun: true,
		Env: res.Env, Start: res.Start, End: res.End,
		Trials: []Trial{{Cell: cell.ID, Load: res}},
	}
	s.Cells = []Cell{s.onLink(cell, res.Link)}
	return s
}

// onLink puts a single run's cell on the link it ran across (--link), so
// that its report states the link and its calibration as a study's do;
// the relay's figures over the run go on its one trial, as a study's
// trials hold theirs, with the same warning when the relay set the pace.
func (s *Study) onLink(c Cell, l *Link) Cell {
	if l != nil {
		sl := *l
		sl.Relay = nil
		s.Links = []Link{sl}
		c.Link = l.Spec
		s.Trials[0].Relay = l.Relay
		if w := l.Relay.Warning(); w != "" {
			s.Warnings = append(slices.Clip(s.Warnings), w)
		}
	}
	return c
}

// cellLoad is a single run's client as a study cell's.
func cellLoad(res *Load, slo []string) CellLoad {
	tr, url := LoadTransport(res)
	l := CellLoad{Scenario: res.Scenario, Transport: tr, URL: url, Concurrency: res.Options.Concurrency, SLO: slo}
	if kv := res.Config.KVOptions; kv != nil {
		l.Protocol = kv.Protocol
	}
	if len(slo) > 0 {
		l.Measure = "capacity"
	}
	return l
}

// LoadTarget is a load run's URL ("" when unknown): its Conn's, or in a
// result written before Conn, its configuration's.
func LoadTarget(res *Load) string {
	if res.Conn != nil && res.Conn.URL != "" {
		return res.Conn.URL
	}
	for _, o := range []*ClientOptions{res.Config.Raw, res.Config.ScenarioOptions} {
		if o != nil && o.URL != "" {
			return o.URL
		}
	}
	return ""
}

// LoadTransport is the transport a load run's requests went over, as the
// --transport flag names it ("http1", "h2", "h2c", "h3", "grpc", "resp"),
// and its target URL; "" when the result does not say. Its Conn says
// (raw mode's is the transport it settled on: an https:// default becomes
// h2 or http1 by ALPN); a result written before Conn, its configuration:
// the transport asked for.
func LoadTransport(res *Load) (transport, url string) {
	if c := res.Conn; c != nil && c.Transport != "" {
		return c.Transport, c.URL
	}
	return res.Config.transport(res.Scenario)
}

// streamTransport is the transport a stream kind implies when none was
// given: gRPC's own on the gRPC port, else HTTP/1.1 on the REST port.
func streamTransport(kind string) string {
	if strings.HasPrefix(kind, "grpc-") {
		return "grpc"
	}
	return "http1"
}

// Protocol names a transport for people, with the flag value that asks for
// it: "HTTP/3 over QUIC (h3)", "HTTP/1.1 over TLS (http1)". url decides
// whether HTTP/1.1 ran over TLS. "" for an unknown transport name stays
// the name itself.
func Protocol(transport, url string) string {
	tls := strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "wss://")
	var words string
	switch transport {
	case "":
		return ""
	case "http1":
		words = "HTTP/1.1"
		if tls {
			words += " over TLS"
		}
	case "h2":
		words = "HTTP/2 over TLS"
	case "h2c":
		words = "HTTP/2 cleartext"
	case "h3":
		words = "HTTP/3 over QUIC"
	case "grpc":
		words = "gRPC over HTTP/2"
	case "resp":
		words = "RESP over TCP"
	default:
		return transport
	}
	return words + " (" + transport + ")"
}

// LoadProtocol is Protocol of a load run's transport; "" when unknown.
func LoadProtocol(res *Load) string { return Protocol(LoadTransport(res)) }
