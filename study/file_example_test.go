package study

import "testing"

func TestExampleParses(t *testing.T) {
	def, err := Parse("dir/study.yaml", Example(), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", def)
	for _, c := range def.Cells {
		t.Logf("%+v %+v %+v", c, c.Server, c.Load.Raw)
	}
}
