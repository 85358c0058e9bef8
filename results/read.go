package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	switch head.Schema {
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
	return nil, fmt.Errorf("%w: schema %q, want %q, %q or %q", ErrResults, head.Schema, StudySchema, LoadSchema, CapacitySchema)
}

func readStudy(data []byte) (*Study, error) {
	var r Study
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrResults, err)
	}
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
	cell := Cell{ID: scenario, Group: scenario, Label: scenario, Baseline: true, Load: res.Config}
	return &Study{
		Schema: StudySchema, Study: "load", Title: title, SingleRun: true,
		Options: res.Config, Env: res.Env, Start: res.Start, End: res.End,
		Cells:  []Cell{cell},
		Trials: []Trial{{Cell: cell.ID, Load: res}},
	}
}

// LoadTarget digs the URL out of a load run's configuration ("" when
// unknown): raw mode keeps it under "raw", scenarios under
// "scenario_options". In a result read from a file they are JSON
// objects; in one just run they may still be the client's options
// struct, which is read through its JSON form (results knows no client).
func LoadTarget(res *Load) string {
	for _, key := range []string{"raw", "scenario_options"} {
		v, ok := res.Config[key].(map[string]any)
		if !ok && res.Config[key] != nil {
			b, err := json.Marshal(res.Config[key])
			if err != nil || json.Unmarshal(b, &v) != nil {
				continue
			}
		}
		if u, ok := v["url"].(string); ok {
			return u
		}
		if u, ok := v["URL"].(string); ok {
			return u
		}
	}
	return ""
}
