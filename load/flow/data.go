package flow

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Data is a data file's rows: iteration N takes row N mod len(Rows), so
// the file feeds the run in order and starts again at its end (Artillery's
// payload order: sequence).
type Data struct {
	File    string
	Columns []string
	Rows    [][]string // each of len(Columns)
}

// Bounds of a data file, read whole before the run.
const (
	MaxDataFile = 256 << 20
	MaxColumns  = 1024
)

// ReadData reads a CSV file with a header line, or JSON lines (one object
// of names to scalar values per line): .csv is CSV, .jsonl, .ndjson and
// .json are JSON lines, any other name is sniffed (a first '{' is JSON).
// Errors name the file and line.
func ReadData(file string) (*Data, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: data file: %v", ErrFlow, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxDataFile {
		return nil, fmt.Errorf("%w: data file %s: %d bytes, more than the limit of %d", ErrFlow, file, st.Size(), MaxDataFile)
	}
	br := bufio.NewReader(io.LimitReader(f, MaxDataFile))
	jsonl := false
	switch strings.ToLower(filepath.Ext(file)) {
	case ".csv":
	case ".jsonl", ".ndjson", ".json":
		jsonl = true
	default:
		head, _ := br.Peek(512)
		jsonl = len(bytes.TrimSpace(head)) > 0 && bytes.TrimSpace(head)[0] == '{'
	}
	var d *Data
	if jsonl {
		d, err = readJSONLines(file, br)
	} else {
		d, err = readCSV(file, br)
	}
	if err != nil {
		return nil, err
	}
	if len(d.Rows) == 0 {
		return nil, fmt.Errorf("%w: %s: no rows", ErrFlow, file)
	}
	return d, nil
}

func readCSV(file string, r io.Reader) (*Data, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFlow, file, csvErr(err))
	}
	d := &Data{File: file}
	for i, h := range head {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a byte order mark
		}
		if err := d.addColumn(strings.TrimSpace(h)); err != nil {
			return nil, fmt.Errorf("%w: %s:1: %v", ErrFlow, file, err)
		}
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return d, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFlow, file, csvErr(err))
		}
		d.Rows = append(d.Rows, rec)
	}
}

// csvErr is encoding/csv's error with its line ("record on line 3:
// wrong number of fields").
func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	if err == io.EOF {
		return errors.New("empty: want a header line naming the columns")
	}
	return err
}

func readJSONLines(file string, br *bufio.Reader) (*Data, error) {
	d := &Data{File: file}
	col := map[string]int{}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), MaxDataFile)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: want a JSON object per line: %v", ErrFlow, file, line, err)
		}
		row := make([]string, len(d.Columns), max(len(d.Columns), len(m)))
		for k, v := range m {
			i, ok := col[k]
			if !ok {
				if len(d.Rows) > 0 {
					return nil, fmt.Errorf("%w: %s:%d: %q is not in the first line: every line has the same names", ErrFlow, file, line, k)
				}
				if err := d.addColumn(k); err != nil {
					return nil, fmt.Errorf("%w: %s:%d: %v", ErrFlow, file, line, err)
				}
				i = len(d.Columns) - 1
				col[k] = i
				row = append(row, "")
			}
			v = bytes.TrimSpace(v)
			if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
				return nil, fmt.Errorf("%w: %s:%d: %q: want a string, number or boolean, got an object or list", ErrFlow, file, line, k)
			}
			row[i] = Text(v)
		}
		if len(m) != len(d.Columns) {
			return nil, fmt.Errorf("%w: %s:%d: %d names, the first line has %d: every line has the same names", ErrFlow, file, line, len(m), len(d.Columns))
		}
		d.Rows = append(d.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFlow, file, err)
	}
	return d, nil
}

// addColumn adds a column, whose name must be a template variable's.
func (d *Data) addColumn(name string) error {
	switch {
	case len(d.Columns) == MaxColumns:
		return fmt.Errorf("more than %d columns", MaxColumns)
	case !isIdent(name):
		return fmt.Errorf("column %q: a template variable's name is letters, digits and _ (not first a digit), as {{.%s}} needs", name, "user_id")
	case name == VarN || name == VarVU:
		return fmt.Errorf("column %q: the name of a built-in variable (the iteration's number N, the VU's VU)", name)
	}
	for _, c := range d.Columns {
		if c == name {
			return fmt.Errorf("column %q twice", name)
		}
	}
	d.Columns = append(d.Columns, name)
	return nil
}

// isIdent: a name text/template accepts after a dot.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
