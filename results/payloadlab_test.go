package results

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadPayloadLab(t *testing.T) {
	p := &PayloadLab{Schema: PayloadLabSchema, Input: PayloadInput{Files: []string{"a.json"}, Read: 2, Kept: 2},
		Rows: []PayloadRow{{Format: "json", Bytes: PayloadBytes{Median: 10, Min: 9, Max: 11, Total: 20}}}}
	var buf bytes.Buffer
	if err := WritePayloadLab(&buf, p); err != nil {
		t.Fatal(err)
	}
	s, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if s.PayloadLab == nil || s.Study != "payload" || s.PayloadLab.Rows[0].Bytes.Median != 10 || !s.SingleRun {
		t.Errorf("read %+v", s)
	}
	bad := strings.Replace(buf.String(), PayloadLabSchema, "wirebench.payload/v9", 1)
	if _, err := Read(strings.NewReader(bad)); err == nil {
		t.Error("an unknown payload schema version was read")
	}
}
