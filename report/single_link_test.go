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
