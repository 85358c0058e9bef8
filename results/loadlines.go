package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// WriteJSONLine writes r as one line of JSON (JSON Lines), for results
// sent down a pipe or a log rather than into a file: one line per run,
// any number of runs on one stream.
func (r *Load) WriteJSONLine(w io.Writer) error {
	// One Write per line, so lines from several writers to one pipe
	// do not interleave.
	var b bytes.Buffer
	if err := EncodeJSON(&b, r, ""); err != nil {
		return fmt.Errorf("load: write result: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("load: write result: %w", err)
	}
	return nil
}

// ReadLoads reads every load result on a stream: JSON Lines, a result file
// (indented JSON), or several concatenated, each checked as ReadLoad
// checks one. Errors say which value on the stream (1-based) is wrong.
// An empty stream holds no results.
func ReadLoads(rd io.Reader) ([]*Load, error) {
	dec := json.NewDecoder(rd)
	var out []*Load
	for i := 1; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: result %d: %v", ErrLoad, i, err)
		}
		r, err := ReadLoad(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
		out = append(out, r)
	}
}
