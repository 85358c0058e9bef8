package study

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestKVReplCells pins the replication cells' shape: the seed's settings,
// the leader at AOF everysec with its HTTP face on {port2}, the 0-follower
// cell the baseline, the follower check only in the 1-follower cell.
func TestKVReplCells(t *testing.T) {
	def, err := Lookup("kv")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, c := range def.Cells {
		if c.Group != kvReplGroup {
			continue
		}
		n++
		k := c.Load.KV
		if k == nil || k.Keys != kvKeys || k.ValueSize != kvValueSize || c.Load.Options.Concurrency != kvConns || k.Name != "kv-set" {
			t.Errorf("%s: not the seed's SET: %+v", c.ID(), k)
		}
		cmd := strings.Join(c.Server.Command, " ")
		if !strings.Contains(cmd, "--appendfsync everysec") || !strings.Contains(cmd, "--http 127.0.0.1:{port2}") {
			t.Errorf("%s: %s", c.ID(), cmd)
		}
		hasFollower := false
		for _, ch := range c.Checks {
			hasFollower = hasFollower || strings.HasPrefix(ch.Name, "follower")
		}
		if want := strings.Contains(c.Label, "1 follower"); hasFollower != want || c.Baseline == want {
			t.Errorf("%s: follower check %v, baseline %v", c.ID(), hasFollower, c.Baseline)
		}
	}
	if n != 2 {
		t.Fatalf("%d replication cells, want 2", n)
	}
}

// TestKVReplQuick runs both replication cells for one short trial: the
// follower syncs, its lag is sampled and it catches up; the notes hold
// the replication table.
func TestKVReplQuick(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	if help, _ := exec.Command(bin, "serve", "-h").CombinedOutput(); !strings.Contains(string(help), "-replica-of") {
		if testkit.InCI() {
			t.Fatal("serve has no --replica-of")
		}
		t.Skip("this wirebench has no serve --replica-of")
	}
	def, _ := Lookup("kv")
	var cells []Cell
	for _, c := range def.Cells {
		if c.Group == kvReplGroup {
			cells = append(cells, c)
		}
	}
	def.Cells = cells
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Quick: true, Trials: 1, Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Seed: 3, Binary: bin, Ports: testPorts(),
		Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("%s: %s", tr.Cell, tr.Error)
		}
		follower := strings.Contains(tr.Cell, "1 follower")
		if _, ok := tr.External[kvReplCatchUpSec]; ok != follower {
			t.Errorf("%s: catch-up recorded %v: %v", tr.Cell, ok, tr.External)
		}
		if follower && tr.External[kvReplSamples] < 1 {
			t.Errorf("%s: no lag sample during %v of load: %v", tr.Cell, 500*time.Millisecond, tr.External)
		}
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "## Replication (issue 13)") || !strings.Contains(res.Notes[0], "1 follower(s)") {
		t.Fatalf("notes: %q", res.Notes)
	}
	t.Log(res.Notes[0][strings.Index(res.Notes[0], "## Replication"):])
}
