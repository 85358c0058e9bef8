package promtext

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"
)

// memstats are client_golang's go_memstats_* figures, derived from
// runtime/metrics as its Go collector derives them (no stop-the-world,
// unlike runtime.ReadMemStats): the sum of the named samples.
var memstats = []struct {
	name, help, typ string
	from            []string
}{
	{"alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", Gauge, []string{"/memory/classes/heap/objects:bytes"}},
	{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", Counter, []string{"/gc/heap/allocs:bytes"}},
	{"sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", Gauge, []string{"/memory/classes/total:bytes"}},
	{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", Counter, []string{"/gc/heap/allocs:objects", "/gc/heap/tiny/allocs:objects"}},
	{"frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", Counter, []string{"/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects"}},
	{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", Gauge, []string{"/memory/classes/heap/objects:bytes"}},
	{"heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", Gauge, []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", Gauge, []string{"/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes.", Gauge, []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}},
	{"heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", Gauge, []string{"/memory/classes/heap/released:bytes"}},
	{"heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", Gauge, []string{"/gc/heap/objects:objects"}},
	{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", Gauge, []string{"/memory/classes/heap/stacks:bytes"}},
	{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", Gauge, []string{"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"}},
	{"mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", Gauge, []string{"/memory/classes/metadata/mspan/inuse:bytes"}},
	{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", Gauge, []string{"/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/mspan/free:bytes"}},
	{"mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", Gauge, []string{"/memory/classes/metadata/mcache/inuse:bytes"}},
	{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", Gauge, []string{"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mcache/free:bytes"}},
	{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", Gauge, []string{"/memory/classes/profiling/buckets:bytes"}},
	{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", Gauge, []string{"/memory/classes/metadata/other:bytes"}},
	{"other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", Gauge, []string{"/memory/classes/other:bytes"}},
	{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", Gauge, []string{"/gc/heap/goal:bytes"}},
}

// exported says which runtime/metrics are written under their own
// names, as client_golang's Go collector with its GC and memory rules
// does. Histograms are left out (go_gc_duration_seconds summarizes the
// pauses).
func exported(d *metrics.Description) bool {
	if d.Kind != metrics.KindUint64 && d.Kind != metrics.KindFloat64 {
		return false
	}
	return strings.HasPrefix(d.Name, "/gc/") || strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/sched/gomaxprocs:threads"
}

// RuntimeName is client_golang's name for a runtime/metrics metric:
// "/gc/heap/allocs:bytes", cumulative, is go_gc_heap_allocs_bytes_total.
func RuntimeName(d *metrics.Description) string {
	path, unit, _ := strings.Cut(d.Name, ":")
	r := strings.NewReplacer("/", "_", "-", "_", "*", "_")
	unit = strings.NewReplacer("-", "_", "*", "_", "/", "_per_").Replace(unit)
	name := "go" + r.Replace(path) + "_" + unit
	if d.Cumulative {
		name += "_total"
	}
	return name
}

// AppendGo appends the Go runtime's figures: goroutines, threads, GC
// pauses, the go_memstats_* set, go_info, and the runtime/metrics
// metrics under /gc/ and /memory/classes/.
func AppendGo(b []byte) []byte {
	descs := metrics.All()
	samples := make([]metrics.Sample, 0, len(descs))
	byName := make(map[string]int, len(descs))
	for i := range descs {
		if d := &descs[i]; exported(d) { // memstats' inputs among them
			byName[d.Name] = len(samples)
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	value := func(name string) uint64 {
		if i, ok := byName[name]; ok && samples[i].Value.Kind() == metrics.KindUint64 {
			return samples[i].Value.Uint64()
		}
		return 0
	}

	b = AppendGauge(b, "go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	b = AppendGauge(b, "go_threads", "Number of OS threads created.", float64(threads))

	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	b = AppendHeader(b, "go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", Summary)
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		b = AppendFloat(b, "go_gc_duration_seconds", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	b = AppendFloat(b, "go_gc_duration_seconds_sum", gc.PauseTotal.Seconds())
	b = AppendUint(b, "go_gc_duration_seconds_count", uint64(gc.NumGC))
	b = AppendGauge(b, "go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(gc.LastGC.UnixNano())/1e9)

	for _, m := range memstats {
		var v uint64
		for _, n := range m.from {
			v += value(n)
		}
		b = AppendHeader(b, "go_memstats_"+m.name, m.help, m.typ)
		b = AppendUint(b, "go_memstats_"+m.name, v)
	}
	b = AppendHeader(b, "go_info", "Information about the Go environment.", Gauge)
	b = AppendUint(b, "go_info", 1, "version", runtime.Version())

	for i := range descs {
		d := &descs[i]
		if !exported(d) {
			continue
		}
		name, typ := RuntimeName(d), Gauge
		if d.Cumulative {
			typ = Counter
		}
		b = AppendHeader(b, name, d.Description, typ)
		switch s := samples[byName[d.Name]]; s.Value.Kind() {
		case metrics.KindUint64:
			b = AppendUint(b, name, s.Value.Uint64())
		case metrics.KindFloat64:
			b = AppendFloat(b, name, s.Value.Float64())
		}
	}
	return b
}
