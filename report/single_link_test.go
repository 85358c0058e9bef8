package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// TestCompareSaysTheLinks: two runs on different links are said to be,
// and runs on loopback say nothing of links.
func TestCompareSaysTheLinks(t *testing.T) {
	old, new := capLoad(100, time.Millisecond), capLoad(100, time.Millisecond)
	var b bytes.Buffer
	if err := writeRunCompare(&b, "old", "new", old, new); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "link") {
		t.Errorf("loopback runs mention a link:\n%s", b.String())
	}
	new.Link = &results.Link{Spec: "3g", Effective: "rtt=300ms,up=768kbit,down=1.6mbit", Preset: "3g"}
	b.Reset()
	if err := writeRunCompare(&b, "old", "new", old, new); err != nil {
		t.Fatal(err)
	}
	if want := "link: old loopback, new 3g (rtt=300ms,up=768kbit,down=1.6mbit): different links"; !strings.Contains(b.String(), want) {
		t.Errorf("want %q in:\n%s", want, b.String())
	}
}

// TestSingleRunReportShowsItsLink: the report of a load or capacity --out
// file run with --link states the link and its calibration beside the
// spec, in Markdown and HTML (it said nothing of the link: a 30-ms p50
// read as the server's).
func TestSingleRunReportShowsItsLink(t *testing.T) {
	lk := &results.Link{Spec: "rtt=30ms,loss=1%", Effective: "rtt=30ms,loss=1%", Calibration: &results.LinkCalibration{
		RTTExpected: 30 * time.Millisecond, RTTUDP: 30540 * time.Microsecond, RTTUDPMedian: 30600 * time.Microsecond, LossSet: 0.01, LossUp: 0.0088}}
	load := capLoad(100, 31*time.Millisecond)
	load.Link = lk
	search := capSearch(500, time.Millisecond)
	search.Link = lk
	for name, r := range map[string]*results.Study{"load": results.FromLoad(load), "capacity": results.FromCapacity(search)} {
		var md, html bytes.Buffer
		if err := WriteMarkdown(&md, Build(r)); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&html, Build(r)); err != nil {
			t.Fatal(err)
		}
		for format, out := range map[string]string{"markdown": md.String(), "html": html.String()} {
			for _, want := range []string{"rtt=30ms,loss=1%", "30.54ms / 30.60ms", "1.00% → 0.88%"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s, %s: no %q in:\n%s", name, format, want, out)
				}
			}
		}
	}
}
