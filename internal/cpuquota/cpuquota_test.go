package cpuquota

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

func TestPeriod(t *testing.T) {
	for _, c := range []struct {
		cores float64
		want  time.Duration
	}{
		{0.5, 2 * time.Millisecond},
		{1, 2 * time.Millisecond},
		{1.5, 2 * time.Millisecond},
		{0.25, 4 * time.Millisecond},
		{0.1, 10 * time.Millisecond},
		{0.0001, time.Second},
	} {
		if got := Period(c.cores); got != c.want {
			t.Errorf("Period(%g) = %v, want %v", c.cores, got, c.want)
		}
	}
	q, err := Quota{Cores: 0.5}.withDefaults()
	if err != nil || q.String() != "0.5 CPU (1ms per 2ms)" {
		t.Errorf("0.5 cores: %v, %v", q, err)
	}
	for _, bad := range []Quota{{Cores: 0}, {Cores: -1}, {Cores: 0.1, Period: time.Millisecond}, {Cores: 1, Period: 2 * time.Second}} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestOwnerOf(t *testing.T) {
	for name, want := range map[string]int{"wirebench-123-4": 123, "wirebench-1-1": 1, "wirebench-x-1": 0, "wirebench-12": 0, "other-1-2": 0, "wirebench-12-": 0} {
		got, ok := ownerOf(name)
		if ok != (want > 0) || got != want && ok {
			t.Errorf("ownerOf(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

func TestFindPrefersV2WithCPU(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "unified")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		t.Fatal(err)
	}
	// This machine's shape: v2 mounted beside v1, without the cpu controller.
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("hugetlb\n"), 0o644)
	mi := filepath.Join(dir, "mountinfo")
	lines := "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n" +
		"31 25 0:27 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n" +
		"32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
	os.WriteFile(mi, []byte(strings.ReplaceAll(lines, "/sys/fs/cgroup/unified", v2)), 0o644)
	defer func(old string) { mountinfo = old }(mountinfo)
	mountinfo = mi
	h, err := find()
	if err != nil || h.v2 || h.root != "/sys/fs/cgroup/cpu,cpuacct" {
		t.Fatalf("v1 cpu: %+v, %v", h, err)
	}
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpuset cpu io memory\n"), 0o644)
	if h, err = find(); err != nil || !h.v2 || h.root != v2 {
		t.Fatalf("v2 with cpu: %+v, %v", h, err)
	}
	os.WriteFile(mi, []byte("31 25 0:27 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"), 0o644)
	if _, err = find(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("no cpu controller: %v", err)
	}
}

// newOrSkip makes a group, skipping where this machine cannot (no
// controller mounted, not root).
func newOrSkip(t *testing.T, q Quota) *Group {
	t.Helper()
	g, err := New(q)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("no cgroup here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// A spinning process in a group at 0.2 CPU uses no more than that, is
// throttled, and the group is gone after Close. (A cap, not a speed: it
// holds on a busy machine too.)
func TestQuotaCapsCPU(t *testing.T) {
	g := newOrSkip(t, Quota{Cores: 0.2})
	if _, err := os.Stat(g.Dir()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	before, _ := measure.SampleProc(cmd.Process.Pid)
	start := time.Now()
	time.Sleep(time.Second)
	after, err := measure.SampleProc(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	cores := (after.CPU() - before.CPU()).Seconds() / time.Since(start).Seconds()
	if cores > 0.2+0.05 { // the 10-ms resolution of /proc's CPU times
		t.Errorf("a spinning process used %.2f cores under a quota of 0.2", cores)
	}
	st, err := g.Stats()
	if err != nil || st.Periods == 0 || st.Throttled == 0 {
		t.Errorf("stats %+v, %v: want throttled periods", st, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("group still there after Close: %v", err)
	}
}

// A group whose maker is gone is removed by the next New; a live maker's
// group is kept.
func TestRemoveStale(t *testing.T) {
	g := newOrSkip(t, Quota{Cores: 1})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(g.h.root, prefix+strconv.Itoa(dead.Process.Pid)+"-7")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(stale)
	n, err := RemoveStale()
	if err != nil || n < 1 {
		t.Fatalf("RemoveStale = %d, %v", n, err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale group kept: %v", err)
	}
	if _, err := os.Stat(g.Dir()); err != nil {
		t.Errorf("this process's own group removed: %v", err)
	}
}
