package study

import (
	"errors"
	"testing"
)

func TestBulkOptionsCheck(t *testing.T) {
	if err := (BulkOptions{Formats: []string{"json", "csv"}, Records: 10}).Check(); err != nil {
		t.Fatal(err)
	}
	for _, o := range []BulkOptions{{Formats: []string{"xml"}}, {Records: -1}, {Options: Options{Ports: PortRange{Lo: 9000, Hi: 9000}}}} {
		if err := o.Check(); !errors.Is(err, ErrDefinition) {
			t.Errorf("%+v: %v, want ErrDefinition", o, err)
		}
	}
	r := &BulkResults{Cells: []*BulkCell{
		{Trials: []*BulkTrial{{Error: "x"}, {}}},
		{Trials: []*BulkTrial{{Error: "x"}}},
		{},
	}}
	if n := r.Unsuccessful(); n != 2 {
		t.Errorf("%d cells without a successful trial, want 2", n)
	}
}
