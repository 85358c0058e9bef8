package payload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/measure"
)

// Input kinds (Options.Input).
const (
	InputAuto      = ""
	InputJSON      = "json"      // a document, a JSON array of samples, or JSON lines
	InputHAR       = "har"       // HAR 1.2: the requests' JSON bodies
	InputWirebench = "wirebench" // serve/load --record's request log: its JSON bodies
)

// Sample is one payload read from the input.
type Sample struct {
	File  string
	Index int // 0-based, over all files, in reading order
	Line  int // where it starts (JSON input; 0 for recordings)
	Val   Value
	// Size is the sample's bytes as read.
	Size int
	// nodes counts its values (the shape walk sets it).
	nodes int
}

// where names a sample for messages: "orders.jsonl:12 (sample 11)".
func (s *Sample) where() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d (sample %d)", s.File, s.Line, s.Index)
	}
	return fmt.Sprintf("%s (sample %d)", s.File, s.Index)
}

// InputStats says what was read.
type InputStats struct {
	Files []string `json:"files"`
	Kind  string   `json:"kind"`
	// Read counts the samples read; Kept those measured (all of them
	// unless Read > Options.Samples, then a uniform random subset).
	Read int `json:"samples_read"`
	Kept int `json:"samples_kept"`
	// Bytes is the input's bytes (the samples' JSON as read).
	Bytes int64 `json:"bytes_read"`
	// Skipped counts recorded requests whose body is not JSON (or empty),
	// and Malformed lines or entries the recording's reader skipped.
	Skipped   int `json:"skipped_bodies,omitempty"`
	Malformed int `json:"malformed_records,omitempty"`
}

// reservoir keeps a uniform random subset of at most n samples of a
// stream (Algorithm R), so a 1 GB file is analysed in the memory of n
// samples; the seed is fixed so a run repeats. It also bounds the kept
// samples' memory (maxCost, in sampleCost units): once the first samples
// reach it, n shrinks to what is held, and a replacement that would go
// over it is passed over (a slight bias against the largest samples,
// which the output's sample count shows).
type reservoir struct {
	n       int
	seen    int
	kept    []Sample
	rng     *rand.Rand
	cost    int64
	maxCost int64
}

// sampleCost estimates a kept sample's memory: its tree of Values (about
// 80 bytes a node) beside its JSON size, which the encodings are of.
func sampleCost(s *Sample) int64 { return int64(s.Size) + 80*int64(s.nodes) }

// slot says where a sample of cost c goes, before it is parsed: -1 if it
// is passed over, else the index to put it at (len(kept): appended).
func (r *reservoir) slot(c int64) int {
	r.seen++
	if len(r.kept) < r.n {
		if r.maxCost > 0 && r.cost+c > r.maxCost && len(r.kept) > 0 {
			r.n = len(r.kept)
		} else {
			return len(r.kept)
		}
	}
	if j := r.rng.IntN(r.seen); j < r.n {
		if d := c - sampleCost(&r.kept[j]); r.maxCost > 0 && r.cost+d > r.maxCost {
			return -1
		}
		return j
	}
	return -1
}

// put stores s at j, a slot's answer.
func (r *reservoir) put(j int, s Sample) {
	c := sampleCost(&s)
	if j == len(r.kept) {
		r.kept = append(r.kept, s)
		r.cost += c
		return
	}
	r.cost += c - sampleCost(&r.kept[j])
	r.kept[j] = s
}

// readInputs reads every file into the reservoir and the shape statistics.
func readInputs(paths []string, o *Options, res *reservoir, shape *shapeAcc) (InputStats, error) {
	st := InputStats{Files: paths}
	for _, path := range paths {
		kind, err := readFile(path, o, res, shape, &st)
		if err != nil {
			return st, err
		}
		if st.Kind == "" || st.Kind == kind {
			st.Kind = kind
		} else {
			st.Kind = "mixed"
		}
	}
	st.Read, st.Kept = res.seen, len(res.kept)
	if st.Read == 0 {
		return st, fmt.Errorf("%w: no JSON sample in %s", ErrInput, strings.Join(paths, ", "))
	}
	return st, nil
}

func readFile(path string, o *Options, res *reservoir, shape *shapeAcc, st *InputStats) (_ string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInput, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInput, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%w: %s is a directory", ErrInput, path)
	}
	if fi.Size() > o.MaxFileSize {
		return "", fmt.Errorf("%w: %s: %d bytes, over the limit of %d (--max-file)", ErrInput, path, fi.Size(), o.MaxFileSize)
	}
	var r io.Reader = io.LimitReader(f, o.MaxFileSize)
	if o.ReadProgress != nil {
		pr := newProgressReader(r, path, fi.Size(), o.ReadProgress, func() int { return res.seen })
		defer func() {
			if err == nil {
				pr.send(time.Now(), true)
			}
		}()
		r = pr
	}
	br := bufio.NewReaderSize(r, 64<<10)
	kind := o.Input
	if kind == InputAuto {
		kind = sniff(br, path)
	}
	// add counts raw, a sample's JSON, and parses it only if the
	// reservoir keeps it: its error is the parser's.
	add := func(s Sample, raw []byte) error {
		nodes, err := shape.scan(raw, o.MaxDepth)
		if err != nil {
			return err
		}
		s.Index, s.Size, s.nodes = res.seen, len(raw), nodes
		st.Bytes += int64(s.Size)
		// The reservoir keeps a first sample whatever its cost; one over
		// the whole bound alone (a 100 MB document, --max-sample raised)
		// took gigabytes to measure and ended in the runtime's
		// out-of-memory crash.
		if c := sampleCost(&s); res.maxCost > 0 && c > res.maxCost {
			return fmt.Errorf("sample %d: about %s in memory to measure (its %s of JSON, %d values), over the limit of %s (--max-kept)",
				s.Index, measure.FormatBytes(float64(c)), measure.FormatBytes(float64(s.Size)), nodes, measure.FormatBytes(float64(res.maxCost)))
		}
		if j := res.slot(sampleCost(&s)); j >= 0 {
			if s.Val, err = parseValue(raw, o.MaxDepth); err != nil {
				return err
			}
			res.put(j, s)
		}
		return nil
	}
	switch kind {
	case InputJSON:
		return kind, readJSON(br, path, o, add)
	case InputHAR, InputWirebench:
		switch {
		case o.Bodies != "" && o.Bodies != BodiesRequests && kind == InputWirebench:
			return kind, fmt.Errorf("%w: %s: a request log records requests only (--bodies %s)", ErrInput, path, o.Bodies)
		case o.Bodies == BodiesResponses || o.Bodies == BodiesBoth:
			return kind, readHARBodies(br, path, o, add, st)
		case o.Bodies != "" && o.Bodies != BodiesRequests:
			return kind, fmt.Errorf("%w: --bodies %q (want requests, responses or both)", ErrInput, o.Bodies)
		}
		format := replay.FormatHAR
		if kind == InputWirebench {
			format = replay.FormatReqlog
		}
		src, err := replay.NewSource(br, path, format, replay.FieldMap{})
		if err != nil {
			return kind, fmt.Errorf("%w: %s: %v", ErrInput, path, err)
		}
		err = readRecorded(src, path, o, add, st)
		st.Malformed += int(src.Malformed().N)
		return kind, err
	}
	return kind, fmt.Errorf("%w: unknown input kind %q (want json, har or wirebench)", ErrInput, kind)
}

// sniff tells a recording from plain JSON: a .har name or a document
// opening with "log" is HAR, a first line {"wirebench": our request log.
func sniff(br *bufio.Reader, name string) string {
	if strings.HasSuffix(strings.ToLower(name), ".har") {
		return InputHAR
	}
	head, _ := br.Peek(512)
	head = bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if bytes.HasPrefix(head, []byte(`{"wirebench"`)) {
		return InputWirebench
	}
	if rest, ok := bytes.CutPrefix(head, []byte("{")); ok {
		if bytes.HasPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte(`"log"`)) {
			return InputHAR
		}
	}
	return InputJSON
}

func readJSON(r io.Reader, path string, o *Options, add func(Sample, []byte) error) error {
	sp := newSplitter(r, o.MaxSample)
	sp.whole = o.Whole
	for {
		raw, line, _, err := sp.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// The splitter counts nesting only: a bracket closed by the
			// wrong kind ([1,}) keeps it reading past the sample's end, to
			// the end of the input or the sample bound. What it read shows
			// the place.
			if end := mismatch(sp.buf); line > 0 && end > 0 {
				var se *syntaxError
				if _, perr := parseValue(sp.buf[:end], o.MaxDepth); errors.As(perr, &se) && se.Off < end {
					return inputError(path, line, sp.buf[:end], perr)
				}
			}
			if errors.Is(err, errTooLarge) {
				return fmt.Errorf("%w: %s:%d: %v (--max-sample)", ErrInput, path, line, err)
			}
			return fmt.Errorf("%w: %s:%d: %v", ErrInput, path, sp.line, err)
		}
		if err := add(Sample{File: path, Line: line}, raw); err != nil {
			return inputError(path, line, raw, err)
		}
	}
}

// mismatch returns the length of raw up to and with its first closing
// bracket of the wrong kind, or 0 if there is none. It holds only the
// open brackets: raw may be a sample as long as the bound.
func mismatch(raw []byte) int {
	var open []byte
	inStr, esc := false, false
	for i, c := range raw {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			open = append(open, c)
		case c == '}' || c == ']':
			if len(open) == 0 || open[len(open)-1] != c-2 { // '{'+2 is '}', '['+2 is ']'
				return i + 1
			}
			open = open[:len(open)-1]
		}
	}
	return 0
}

// inputError names the line and column of a parse error within a sample
// that starts on line.
func inputError(path string, line int, raw []byte, err error) error {
	var se *syntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("%w: %s:%d: %v", ErrInput, path, line, err)
	}
	before := raw[:min(se.Off, len(raw))]
	l := line + bytes.Count(before, []byte{'\n'})
	col := se.Off - bytes.LastIndexByte(before, '\n')
	if l == line {
		col = se.Off + 1 // the column within the sample's first line
	}
	return fmt.Errorf("%w: %s:%d:%d: %s", ErrInput, path, l, col, se.Msg)
}

// readRecorded takes the JSON bodies of a recording's requests; other
// bodies (none, not JSON, cut by the recorder) are counted as skipped.
func readRecorded(src replay.Source, path string, o *Options, add func(Sample, []byte) error, st *InputStats) error {
	for n := 0; ; n++ {
		req, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInput, path, err)
		}
		body := bytes.TrimSpace(req.Body)
		if len(body) == 0 || req.Truncated || body[0] != '{' && body[0] != '[' {
			st.Skipped++
			continue
		}
		if len(body) > o.MaxSample {
			return fmt.Errorf("%w: %s: request %d (%s %s): a body of %d bytes, over the limit of %d (--max-sample)",
				ErrInput, path, n+1, req.Method, cut(req.Target, 60), len(body), o.MaxSample)
		}
		if err := add(Sample{File: path}, body); err != nil {
			var se *syntaxError
			if errors.As(err, &se) {
				err = fmt.Errorf("%s at byte %d of the body", se.Msg, se.Off)
			}
			return fmt.Errorf("%w: %s: request %d (%s %s): %v", ErrInput, path, n+1, req.Method, cut(req.Target, 60), err)
		}
	}
}
