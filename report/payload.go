package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/wirebench/wirebench/results"
)

// The payload-size study measures one list response per dataset, item
// count, format, transport and compression. A reader asks three things of
// it: how big is each format's message, how much does compression take
// off, and what does each transport add on the wire. So there is one
// table per dataset, a row per format grouped by item count (reading down
// a format shows how it scales), and column groups for the body and for
// each transport.

// payloadBaseline is the format every body is compared with: the format
// every API already speaks.
const payloadBaseline = "json"

// compressionRank orders compression columns: none first, then the
// common codings, then anything else by name.
func compressionRank(c string) int {
	switch c {
	case "":
		return 0
	case "gzip":
		return 1
	case "zstd":
		return 2
	}
	return 3
}

// compressionName is a column's name for a compression: "none" for "".
func compressionName(c string) string {
	if c == "" {
		return "none"
	}
	return c
}

// payloadSet is the measurements of one dataset, indexed.
type payloadSet struct {
	Dataset string
	Ns      []int    // ascending
	Formats []string // baseline first, then in order of appearance
	// Wire columns: transports in order of appearance, each with its
	// compressions in compressionRank order.
	Transports []string
	Comps      map[string][]string
	// Codings are the content codings with a coded size (HTTP only).
	Codings []string
	body    map[payloadFN]int64
	coded   map[payloadFNC]int64
	wire    map[payloadFNTC]int64
}

type payloadFN struct {
	Format string
	N      int
}

type payloadFNC struct {
	payloadFN
	Comp string
}

type payloadFNTC struct {
	payloadFNC
	Transport string
}

// payloadSets groups measurements by dataset, in order of appearance.
func payloadSets(ps []results.Payload) []*payloadSet {
	var sets []*payloadSet
	byName := map[string]*payloadSet{}
	for _, p := range ps {
		s, ok := byName[p.Dataset]
		if !ok {
			s = &payloadSet{Dataset: p.Dataset, Comps: map[string][]string{},
				body: map[payloadFN]int64{}, coded: map[payloadFNC]int64{}, wire: map[payloadFNTC]int64{}}
			byName[p.Dataset] = s
			sets = append(sets, s)
		}
		s.add(p)
	}
	for _, s := range sets {
		slices.Sort(s.Ns)
		if i := slices.Index(s.Formats, payloadBaseline); i > 0 {
			s.Formats = slices.Insert(slices.Delete(s.Formats, i, i+1), 0, payloadBaseline)
		}
		for _, cs := range s.Comps {
			slices.SortStableFunc(cs, func(a, b string) int {
				return cmp.Or(cmp.Compare(compressionRank(a), compressionRank(b)), cmp.Compare(a, b))
			})
		}
		slices.SortStableFunc(s.Codings, func(a, b string) int {
			return cmp.Or(cmp.Compare(compressionRank(a), compressionRank(b)), cmp.Compare(a, b))
		})
	}
	return sets
}

func (s *payloadSet) add(p results.Payload) {
	if !slices.Contains(s.Ns, p.N) {
		s.Ns = append(s.Ns, p.N)
	}
	if !slices.Contains(s.Formats, p.Format) {
		s.Formats = append(s.Formats, p.Format)
	}
	if !slices.Contains(s.Transports, p.Transport) {
		s.Transports = append(s.Transports, p.Transport)
	}
	if !slices.Contains(s.Comps[p.Transport], p.Compression) {
		s.Comps[p.Transport] = append(s.Comps[p.Transport], p.Compression)
	}
	fn := payloadFN{p.Format, p.N}
	if _, ok := s.body[fn]; !ok || p.Compression == "" {
		s.body[fn] = p.Body
	}
	fnc := payloadFNC{fn, p.Compression}
	if p.Coded > 0 {
		if !slices.Contains(s.Codings, p.Compression) {
			s.Codings = append(s.Codings, p.Compression)
		}
		if _, ok := s.coded[fnc]; !ok {
			s.coded[fnc] = p.Coded // the same for every HTTP transport
		}
	}
	s.wire[payloadFNTC{fnc, p.Transport}] = p.Wire
}

// Body is a format's encoded size at n items, and whether it was measured.
func (s *payloadSet) Body(format string, n int) (int64, bool) {
	b, ok := s.body[payloadFN{format, n}]
	return b, ok
}

// baseline is the format the "vs" column compares with.
func (s *payloadSet) baseline() string { return s.Formats[0] }

// payloadTable renders one dataset: a row per (items, format), the items
// printed on the first row of each group only.
func payloadTable(s *payloadSet) table {
	t := table{Header: []string{"items", "format", "body", "vs " + s.baseline()}, RowGroupStart: map[int]bool{}, LabelCols: 2}
	t.Groups = []headerGroup{{"", 2}, {"body bytes (the encoded message)", 2 + len(s.Codings)}}
	t.Short = []string{"items", "format", "bytes", "vs " + s.baseline()}
	for _, c := range s.Codings {
		t.Header = append(t.Header, "body "+c)
		t.Short = append(t.Short, c)
	}
	for _, tr := range s.Transports {
		t.Groups = append(t.Groups, headerGroup{tr + " wire bytes per response", len(s.Comps[tr])})
		for _, c := range s.Comps[tr] {
			t.Header = append(t.Header, tr+" "+compressionName(c))
			t.Short = append(t.Short, compressionName(c))
		}
	}
	for _, n := range s.Ns {
		t.RowGroupStart[len(t.Rows)] = true
		base, hasBase := s.Body(s.baseline(), n)
		for k, f := range s.Formats {
			body, ok := s.Body(f, n)
			if !ok {
				continue
			}
			row := []string{"", f, formatInt(body)}
			if k == 0 {
				row[0] = strconv.Itoa(n)
			}
			switch {
			case f == s.baseline():
				row = append(row, "baseline")
			case !hasBase || base == 0:
				row = append(row, "—")
			default:
				row = append(row, fmt.Sprintf("%+.0f%%", (float64(body)/float64(base)-1)*100))
			}
			for _, c := range s.Codings {
				row = append(row, intOrDash(s.coded[payloadFNC{payloadFN{f, n}, c}]))
			}
			for _, tr := range s.Transports {
				for _, c := range s.Comps[tr] {
					row = append(row, intOrDash(s.wire[payloadFNTC{payloadFNC{payloadFN{f, n}, c}, tr}]))
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func intOrDash(n int64) string {
	if n <= 0 {
		return "—"
	}
	return formatInt(n)
}

// payloadNote explains the payload tables, for Markdown and HTML alike.
func payloadNote(sets []*payloadSet) string {
	base := payloadBaseline
	if len(sets) > 0 {
		base = sets[0].baseline()
	}
	return fmt.Sprintf("Bytes of one list response, measured once (they are deterministic). "+
		"Body is the encoded message, the format's own size; \"vs %s\" compares it with %s at the same item count; "+
		"body gzip and zstd are that message after HTTP content coding. "+
		"Wire columns are every response byte on the socket per request on a warm connection (headers and framing included), "+
		"per transport without and with compression; — marks a combination not measured (gRPC carries only protobuf).", base, base)
}
