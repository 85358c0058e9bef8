package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wirebench/wirebench/results"
)

// The payload lab (wirebench payload) answers "which format for my data?"
// in three tables: sizes and codec cost per format and compression, the
// round trip per format (what came back changed), and the shape of the
// samples that explains the first two.

// labSizeTable is one row per format and compression.
func labSizeTable(p *results.PayloadLab) table {
	t := table{
		Header: []string{"format", "compression", "bytes/msg (median)", "range", "vs json",
			"encode/msg", "range", "allocs", "decode/msg", "range", "allocs", "round trip"},
		LabelCols: 2,
	}
	base := map[string]float64{}
	for _, r := range p.Rows {
		if r.Format == "json" {
			base[r.Compression] = r.Bytes.Median
		}
	}
	verdict := map[string]string{}
	for _, rt := range p.RoundTrips {
		verdict[rt.Format] = rt.Verdict
	}
	for i, r := range p.Rows {
		if i > 0 && r.Format != p.Rows[i-1].Format {
			if t.RowGroupStart == nil {
				t.RowGroupStart = map[int]bool{}
			}
			t.RowGroupStart[len(t.Rows)] = true
		}
		vs := "–"
		if b := base[r.Compression]; b > 0 && r.Format != "json" {
			vs = fmt.Sprintf("%+.0f%%", (r.Bytes.Median/b-1)*100)
		}
		t.Rows = append(t.Rows, []string{
			r.Format, compressionName(r.Compression),
			formatBytes(r.Bytes.Median), labRange(formatBytes(float64(r.Bytes.Min)), formatBytes(float64(r.Bytes.Max))), vs,
			labNs(r.Encode.Ns), labNsRange(r.Encode), labAllocs(r.Encode),
			labNs(r.Decode.Ns), labNsRange(r.Decode), labAllocs(r.Decode),
			verdict[r.Format],
		})
	}
	return t
}

func labRange(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

func labNs(ns float64) string {
	if ns == 0 {
		return "–"
	}
	return formatNs(ns)
}

// formatNs prints a per-message time: 812ns, 12.35µs, 1.235ms.
func formatNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return sig4(ns/1e6) + "ms"
	case ns >= 1e3:
		return sig4(ns/1e3) + "µs"
	}
	return sig4(ns) + "ns"
}

func labNsRange(c results.PayloadCPU) string {
	if c.Ns == 0 {
		return "–"
	}
	return labRange(formatNs(c.NsMin), formatNs(c.NsMax))
}

func labAllocs(c results.PayloadCPU) string {
	if c.Ns == 0 {
		return "–"
	}
	return sig4(c.Allocs)
}

// labOwnTable sets each format's codec cost in wirebench beside the
// library's own calls on the same samples and Go values (raw rows that
// have them): the ratio is wirebench's time over the library's, the
// median over alternating batches.
func labOwnTable(p *results.PayloadLab) table {
	t := table{Header: []string{"format", "encode/msg", "library's own", "ratio", "decode/msg", "library's own", "ratio"}, LabelCols: 1}
	for _, r := range p.Rows {
		if r.Own == nil || r.Compression != "" {
			continue
		}
		t.Rows = append(t.Rows, []string{r.Format,
			labNs(r.Encode.Ns), labNs(r.Own.Encode.Ns), labRatio(r.Own.EncodeRatio),
			labNs(r.Decode.Ns), labNs(r.Own.Decode.Ns), labRatio(r.Own.DecodeRatio)})
	}
	return t
}

// labOwnOver is how far above the library's own cost a codec may be
// before the report points at it: the lab's goal is within 10%.
const labOwnOver = 1.10

func labRatio(r float64) string {
	if r == 0 {
		return "–"
	}
	s := fmt.Sprintf("%.2f×", r)
	if r > labOwnOver {
		s += " †"
	}
	return s
}

// labOwnLines say what each library's own figure timed, and what
// wirebench's codec does beyond it.
func labOwnLines(p *results.PayloadLab) []string {
	var out []string
	for _, r := range p.Rows {
		if r.Own == nil || r.Compression != "" {
			continue
		}
		l := r.Format + ": timed " + r.Own.Calls
		if r.Own.Adds != "" {
			l += "; wirebench adds: " + r.Own.Adds
		} else {
			l += "; wirebench makes the same calls"
		}
		out = append(out, l)
	}
	return out
}

// labOwnNote says how the comparison with the libraries was measured.
const labOwnNote = "library's own: the format library's Marshal, and Unmarshal into a fresh value of the same Go type, called directly in a tight loop " +
	"over the same samples and Go values, as its own benchmarks do, timed in batches alternating with wirebench's; ratio: wirebench's time over the library's, " +
	"the median over the pairs of batches (1.00×: nothing added; † over 1.10×)."

// labRoundTripTable is one row per change a format made (a row saying
// "none" for a lossless one).
func labRoundTripTable(p *results.PayloadLab) table {
	t := table{Header: []string{"format", "verdict", "samples changed", "change", "count", "first at", "input", "came back"}, LabelCols: 4}
	for _, rt := range p.RoundTrips {
		changed := fmt.Sprintf("%d of %d", rt.Changed, rt.Samples)
		if len(rt.Changes) == 0 {
			t.Rows = append(t.Rows, []string{rt.Format, rt.Verdict, changed, "none", "", "", "", ""})
			continue
		}
		for i, c := range rt.Changes {
			kind := c.Kind
			if c.Spelling {
				kind += " (same value)"
			}
			row := []string{"", "", "", kind, formatInt(int64(c.Count)), fmt.Sprintf("sample %d %s", c.Sample, c.Path), c.Before, c.After}
			if i == 0 {
				row[0], row[1], row[2] = rt.Format, rt.Verdict, changed
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// labShapeLines describe the samples in a few sentences' worth of facts.
func labShapeLines(p *results.PayloadLab) []string {
	s := p.Shape
	if s == nil || s.Samples == 0 {
		return nil
	}
	total := float64(s.KeyBytes + s.StringBytes + s.NumberBytes + s.OtherBytes)
	pct := func(n int64) string {
		if total == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%", float64(n)/total*100)
	}
	leaves := s.Numbers + s.Strings + s.Bools + s.Nulls
	share := func(n int64) string {
		if leaves == 0 {
			return "0%"
		}
		return fmt.Sprintf("%.0f%%", float64(n)/float64(leaves)*100)
	}
	rep := "–"
	if s.DistinctKeys > 0 {
		rep = sig4(float64(s.Keys) / float64(s.DistinctKeys))
	}
	uni := "no arrays of objects"
	if s.ObjectArrays > 0 {
		uni = fmt.Sprintf("%d of %d arrays of objects are uniform tables (%s items)", s.UniformArrays, s.ObjectArrays, formatInt(s.UniformItems))
	}
	return []string{
		fmt.Sprintf("depth: median %s, max %d", sig4(s.DepthMedian), s.DepthMax),
		fmt.Sprintf("bytes: keys %s, strings %s, numbers %s, punctuation and literals %s", pct(s.KeyBytes), pct(s.StringBytes), pct(s.NumberBytes), pct(s.OtherBytes)),
		fmt.Sprintf("values: %s numbers (%s integers, %s past 2^53), %s strings (%s base64-like, %s timestamps), %s bools, %s nulls",
			share(s.Numbers), formatInt(s.Integers), formatInt(s.BigInts), share(s.Strings), formatInt(s.Binary), formatInt(s.Timestamps), share(s.Bools), share(s.Nulls)),
		fmt.Sprintf("keys: %s written, %d distinct: each name repeats %s times", formatInt(s.Keys), s.DistinctKeys, rep),
		"arrays: " + uni,
	}
}

// labInputLine says what was read and measured.
func labInputLine(p *results.PayloadLab) string {
	in := p.Input
	s := fmt.Sprintf("%s (%s): %s samples, %s", strings.Join(in.Files, ", "), in.Kind, formatInt(int64(in.Read)), formatBytes(float64(in.Bytes)))
	if in.Sampled {
		s += fmt.Sprintf("; measured a uniform random %s of them (--sample)", formatInt(int64(in.Kept)))
	}
	if in.Skipped > 0 {
		s += fmt.Sprintf("; %s recorded bodies were not JSON and were skipped", formatInt(int64(in.Skipped)))
	}
	if in.Malformed > 0 {
		s += fmt.Sprintf("; %s malformed records skipped", formatInt(int64(in.Malformed)))
	}
	return s
}

// labSizeNote says how the size table was measured.
const labSizeNote = "bytes/msg: each message encoded alone and compressed alone (gzip 6, zstd 3, brotli 4), median over the samples and their range; " +
	"vs json: the median against encoding/json's under the same compression. encode and decode: per message, the median of the timed batches " +
	"and the fastest and slowest batch; allocs: heap allocations per message. A compressed row's CPU adds the compression's to the codec's."

// labHowLines say what each format decoded into: that decides much of
// what a round trip changes.
func labHowLines(p *results.PayloadLab) []string {
	var out []string
	for _, rt := range p.RoundTrips {
		if rt.How != "" {
			out = append(out, rt.Format+": "+rt.How)
		}
	}
	return out
}

// writeMDPayloadLab is the lab's section of report.md.
func writeMDPayloadLab(w io.Writer, p *results.PayloadLab) {
	fmt.Fprintf(w, "## Formats on these payloads\n\n%s\n\n", mdEscape(labInputLine(p)))
	writeMDTable(w, labSizeTable(p))
	fmt.Fprintf(w, "\n%s The HTML report plots bytes against CPU per format.\n\n", mdEscape(labSizeNote))
	if own := labOwnTable(p); len(own.Rows) > 0 {
		fmt.Fprintf(w, "## Codec cost against each library's own\n\n")
		writeMDTable(w, own)
		fmt.Fprintf(w, "\n%s\n\n", mdEscape(labOwnNote))
		for _, l := range labOwnLines(p) {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Round trip\n\n")
	writeMDTable(w, labRoundTripTable(p))
	fmt.Fprintln(w)
	for _, l := range labHowLines(p) {
		fmt.Fprintf(w, "- decoded into: %s\n", mdEscape(l))
	}
	for _, l := range p.LeftOut {
		fmt.Fprintf(w, "- %s left out: %s\n", mdEscape(l.Format), mdEscape(l.Reason))
	}
	fmt.Fprintln(w)
	if lines := labShapeLines(p); len(lines) > 0 {
		fmt.Fprintf(w, "## Shape of the samples\n\n")
		for _, l := range lines {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
		fmt.Fprintln(w)
	}
}

// WritePayloadLabText writes the lab's tables for a terminal.
func WritePayloadLabText(w io.Writer, p *results.PayloadLab) error {
	fmt.Fprintf(w, "payload: %s\n\n", labInputLine(p))
	writeTextTable(w, labSizeTable(p))
	fmt.Fprintf(w, "\n%s\n\n", labSizeNote)
	if own := labOwnTable(p); len(own.Rows) > 0 {
		writeTextTable(w, own)
		fmt.Fprintf(w, "\n%s\n", labOwnNote)
		for _, l := range labOwnLines(p) {
			fmt.Fprintf(w, "  %s\n", l)
		}
		fmt.Fprintln(w)
	}
	writeTextTable(w, labRoundTripTable(p))
	fmt.Fprintln(w)
	for _, l := range labHowLines(p) {
		fmt.Fprintf(w, "decoded into: %s\n", l)
	}
	for _, l := range p.LeftOut {
		fmt.Fprintf(w, "%s left out: %s\n", l.Format, l.Reason)
	}
	if lines := labShapeLines(p); len(lines) > 0 {
		fmt.Fprintln(w, "\nshape of the samples:")
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// writeTextTable aligns a table's columns with spaces.
func writeTextTable(w io.Writer, t table) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// labCols are the payload lab's CSV columns: sizes in bytes per message,
// times in ns per message.
var labCols = []string{"lab_format", "lab_library", "lab_compression", "lab_samples",
	"bytes_per_msg_median", "bytes_per_msg_min", "bytes_per_msg_max",
	"encode_ns_per_msg", "encode_ns_min", "encode_ns_max", "encode_allocs_per_msg",
	"decode_ns_per_msg", "decode_ns_min", "decode_ns_max", "decode_allocs_per_msg",
	"own_encode_ns_per_msg", "own_decode_ns_per_msg", "encode_ratio", "decode_ratio",
	"round_trip", "change", "change_count", "change_sample", "change_path", "change_before", "change_after"}

// labCSVRows are the lab's CSV rows: each the row's kind, then labCols.
func labCSVRows(p *results.PayloadLab) [][]string {
	verdict := map[string]string{}
	for _, rt := range p.RoundTrips {
		verdict[rt.Format] = rt.Verdict
	}
	var out [][]string
	for _, r := range p.Rows {
		own := []string{"", "", "", ""}
		if r.Own != nil {
			own = []string{num(r.Own.Encode.Ns), num(r.Own.Decode.Ns), num(r.Own.EncodeRatio), num(r.Own.DecodeRatio)}
		}
		row := []string{"payload_lab", r.Format, r.Library, compressionName(r.Compression), itoa(r.Samples),
			num(r.Bytes.Median), num(float64(r.Bytes.Min)), num(float64(r.Bytes.Max)),
			num(r.Encode.Ns), num(r.Encode.NsMin), num(r.Encode.NsMax), num(r.Encode.Allocs),
			num(r.Decode.Ns), num(r.Decode.NsMin), num(r.Decode.NsMax), num(r.Decode.Allocs)}
		row = append(append(row, own...), verdict[r.Format], "", "", "", "", "", "")
		out = append(out, row)
	}
	for _, rt := range p.RoundTrips {
		for _, c := range rt.Changes {
			out = append(out, []string{"round_trip", rt.Format, "", "", itoa(rt.Samples),
				"", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
				rt.Verdict, c.Kind, itoa(c.Count), itoa(c.Sample), c.Path, c.Before, c.After})
		}
	}
	return out
}
