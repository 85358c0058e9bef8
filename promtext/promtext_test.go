package promtext

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// parse reads b with Prometheus' own text parser (a test-only dependency),
// so that what a scraper would refuse fails here.
func parse(t testing.TB, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Prometheus' parser refuses the text: %v\n%s", err, b)
	}
	return mfs
}

func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	mf, ok := mfs[name]
	if !ok || len(mf.GetMetric()) != 1 {
		t.Fatalf("family %s: missing or not one sample", name)
	}
	m := mf.GetMetric()[0]
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_SUMMARY:
		return float64(m.GetSummary().GetSampleCount())
	}
	t.Fatalf("family %s: type %v", name, mf.GetType())
	return 0
}

var sink [][]byte

// TestGo: every family parses, with the names and types the studies and
// dashboards read, and the figures move as the runtime's do.
func TestGo(t *testing.T) {
	before := parse(t, AppendGo(nil))
	for i := range 1024 {
		sink = append(sink, make([]byte, 1024+i%7))
	}
	runtime.GC()
	after := parse(t, AppendGo(nil))
	sink = nil
	for name, typ := range map[string]dto.MetricType{
		"go_goroutines": dto.MetricType_GAUGE, "go_threads": dto.MetricType_GAUGE,
		"go_gc_duration_seconds": dto.MetricType_SUMMARY, "go_info": dto.MetricType_GAUGE,
		"go_memstats_alloc_bytes_total": dto.MetricType_COUNTER, "go_memstats_mallocs_total": dto.MetricType_COUNTER,
		"go_memstats_heap_inuse_bytes": dto.MetricType_GAUGE, "go_memstats_sys_bytes": dto.MetricType_GAUGE,
		"go_gc_heap_allocs_bytes_total": dto.MetricType_COUNTER, "go_memory_classes_total_bytes": dto.MetricType_GAUGE,
		"go_gc_cycles_total_gc_cycles_total": dto.MetricType_COUNTER, "go_sched_gomaxprocs_threads": dto.MetricType_GAUGE,
	} {
		if mf, ok := after[name]; !ok || mf.GetType() != typ {
			t.Errorf("%s: %v, want type %v", name, mf.GetType(), typ)
		}
	}
	// Prometheus' parser drops a family without samples: read the text.
	text := string(AppendGo(nil))
	for line := range strings.Lines(text) {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name = strings.Fields(name)[0]
			if !strings.Contains(text, "\n"+name+" ") && !strings.Contains(text, "\n"+name+"{") {
				t.Errorf("family %s has no sample", name)
			}
		}
	}
	for name, mf := range after {
		if len(mf.GetMetric()) == 0 || mf.GetType() == dto.MetricType_HISTOGRAM {
			t.Errorf("%s: %d samples, type %v", name, len(mf.GetMetric()), mf.GetType())
		}
	}
	if last := value(t, after, "go_memstats_last_gc_time_seconds"); last < float64(time.Now().Add(-time.Minute).Unix()) || last > float64(time.Now().Unix()+1) {
		t.Errorf("go_memstats_last_gc_time_seconds %v, right after runtime.GC at %v", last, time.Now().Unix())
	}
	if d := value(t, after, "go_memstats_alloc_bytes_total") - value(t, before, "go_memstats_alloc_bytes_total"); d < 1024*1024 {
		t.Errorf("alloc_bytes_total grew %v over 1 MiB of allocations", d)
	}
	if d := value(t, after, "go_memstats_mallocs_total") - value(t, before, "go_memstats_mallocs_total"); d < 1024 {
		t.Errorf("mallocs_total grew %v over 1024 allocations", d)
	}
	if d := value(t, after, "go_gc_duration_seconds") - value(t, before, "go_gc_duration_seconds"); d < 1 {
		t.Errorf("go_gc_duration_seconds_count grew %v over runtime.GC", d)
	}
	if g := value(t, after, "go_goroutines"); g != float64(runtime.NumGoroutine()) {
		t.Errorf("go_goroutines %v, runtime says %d", g, runtime.NumGoroutine())
	}
	if v := after["go_info"].GetMetric()[0].GetLabel()[0]; v.GetName() != "version" || v.GetValue() != runtime.Version() {
		t.Errorf("go_info label %v", v)
	}
	// The memstats sums: inuse = objects + unused ≥ alloc; sys ≥ heap sys.
	if value(t, after, "go_memstats_heap_inuse_bytes") < value(t, after, "go_memstats_heap_alloc_bytes") ||
		value(t, after, "go_memstats_sys_bytes") < value(t, after, "go_memstats_heap_sys_bytes") ||
		value(t, after, "go_memstats_heap_sys_bytes") != value(t, after, "go_memstats_heap_inuse_bytes")+value(t, after, "go_memstats_heap_idle_bytes") {
		t.Errorf("memstats do not add up: %v", after)
	}
}

// TestProcess: the figures are this process's, from /proc.
func TestProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process figures come from /proc")
	}
	// Some user and some system time to read (getppid is a real system
	// call), so that a sum that mixed them up would be off by ticks.
	for start := time.Now(); time.Since(start) < 60*time.Millisecond; {
	}
	for start := time.Now(); time.Since(start) < 60*time.Millisecond; {
		syscall.Getppid()
	}
	b, err := AppendProcess(nil)
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, b)
	// /proc counts in 10-ms ticks: within two of getrusage's figure.
	if cpu, ru := value(t, mfs, "process_cpu_seconds_total"), time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(); cpu < ru-0.02 || cpu > ru+0.02 {
		t.Errorf("process_cpu_seconds_total %v, getrusage %v", cpu, ru)
	}
	for _, name := range []string{"process_resident_memory_bytes", "process_virtual_memory_bytes", "process_start_time_seconds", "process_open_fds", "process_max_fds"} {
		if v := value(t, mfs, name); v <= 0 {
			t.Errorf("%s = %v", name, v)
		}
	}
	// One more open file is one more descriptor.
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := AppendProcess(nil)
	f.Close()
	if d := value(t, parse(t, b2), "process_open_fds") - value(t, mfs, "process_open_fds"); d != 1 {
		t.Errorf("process_open_fds moved by %v over one open file", d)
	}
	// The start time is this test process's: now or within the hour.
	if st := value(t, mfs, "process_start_time_seconds"); st > float64(timeNow()+1) || st < float64(timeNow()-3600) {
		t.Errorf("process_start_time_seconds %v", st)
	}
}

func TestParseProcStat(t *testing.T) {
	line := "4242 (a b) c)) S 1 2 3 4 5 6 7 8 9 10 111 222 13 14 15 16 17 18 333 444 555 20 21"
	s, err := parseProcStat([]byte(line))
	if err != nil || s != (procStat{utime: 111, stime: 222, starttime: 333, vsize: 444, rss: 555}) {
		t.Fatalf("%+v, %v", s, err)
	}
	// The fields are counted from the last ')', wherever it is.
	if s, err := parseProcStat([]byte(line[strings.Index(line, ") S"):])); err != nil || s.rss != 555 {
		t.Errorf("from the ')': %+v, %v", s, err)
	}
	for _, bad := range []string{"", "4242 no paren S 1", "4242 (x) S 1 2 3", strings.Replace(line, "222", "-2", 1), strings.Replace(line, "555", "x", 1)} {
		if _, err := parseProcStat([]byte(bad)); !errors.Is(err, ErrProcStat) {
			t.Errorf("%q: %v, want ErrProcStat", bad, err)
		}
	}
	if _, err := parseProcStat([]byte("1 (x) S 1 2")); err == nil || !strings.Contains(err.Error(), "has 3 fields after the command name, want at least 22") {
		t.Errorf("short line: %v", err)
	}
	if v, err := parseBootTime([]byte("cpu 1 2\nbtime 1700000000\nprocesses 3\n")); v != 1700000000 || err != nil {
		t.Errorf("btime %v, %v", v, err)
	}
	for _, bad := range []string{"cpu 1\n", "btime x\n"} {
		if _, err := parseBootTime([]byte(bad)); !errors.Is(err, ErrProcStat) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23"))
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseProcStat(b)
		if err != nil {
			if !errors.Is(err, ErrProcStat) {
				t.Fatalf("error %v does not wrap ErrProcStat", err)
			}
			return
		}
		// What parsed is what a well-formed line with those fields holds.
		canon := []byte("1 (c) S")
		for i := 4; i <= 24; i++ {
			v := map[int]uint64{14: s.utime, 15: s.stime, 22: s.starttime, 23: s.vsize, 24: s.rss}[i]
			canon = append(canon, ' ')
			canon = append(canon, []byte(uitoa(v))...)
		}
		if s2, err := parseProcStat(canon); err != nil || s2 != s {
			t.Fatalf("%q → %+v; canonical %q → %+v, %v", b, s, canon, s2, err)
		}
	})
}

// TestEscaping: help text and label values with the characters the
// format escapes read back as written.
func TestEscaping(t *testing.T) {
	for _, v := range []string{"", `a"b`, `back\slash`, "new\nline", `\n`, "ünï", `"\"`} {
		checkLabel(t, v)
	}
}

// TestOddLabels: a last label name without a value is left out.
func TestOddLabels(t *testing.T) {
	if got := string(AppendUint(nil, "x", 1, "a", "b", "c")); got != "x{a=\"b\"} 1\n" {
		t.Errorf("%q", got)
	}
	if got := string(AppendFloat(nil, "x", 0.5, "a")); got != "x 0.5\n" {
		t.Errorf("%q", got)
	}
}

func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"", `a"b\c`, "x\ny", "GET /users/{id}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !utf8.ValidString(v) {
			return // label values are UTF-8 text by the format
		}
		checkLabel(t, v)
	})
}

func checkLabel(t testing.TB, v string) {
	t.Helper()
	b := AppendHeader(nil, "x_total", "help with "+v, Counter)
	b = AppendUint(b, "x_total", 7, "a", v, "b", "c")
	mf := parse(t, b)["x_total"]
	if mf.GetHelp() != "help with "+v {
		t.Errorf("help %q, want %q", mf.GetHelp(), "help with "+v)
	}
	m := mf.GetMetric()[0]
	if l := m.GetLabel(); len(l) != 2 || l[0].GetValue() != v || l[1].GetValue() != "c" || m.GetCounter().GetValue() != 7 {
		t.Errorf("label %q read back as %v, value %v", v, l, m.GetCounter().GetValue())
	}
}

func uitoa(v uint64) string { return strconv.FormatUint(v, 10) }

func timeNow() int64 { return time.Now().Unix() }
