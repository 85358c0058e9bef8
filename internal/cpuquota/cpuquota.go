// Package cpuquota caps the CPU of processes with a cgroup's CFS
// bandwidth quota: cgroup v2's cpu.max where the unified hierarchy has the
// cpu controller, else cgroup v1's cpu.cfs_quota_us.
//
// A benchmark gives its server a quota so that the client, which spends
// about as much CPU checking a response as the server spends making it,
// has headroom: the search then ends on the server's limit, and capacity
// is stated per core of the quota. The period is short (2 ms by default)
// so that a throttled server waits at most a millisecond or two, not the
// kernel's default 100 ms, which would become the tail latency.
//
// Groups are named wirebench-<pid>-<n> after the process that made them:
// RemoveStale (called by New) removes those whose maker is gone, so a
// crashed or killed run leaves nothing behind for long.
package cpuquota

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrUnavailable reports that no quota can be set here: no cgroup cpu
// controller mounted, or no permission to make a group.
var ErrUnavailable = errors.New("cpuquota: unavailable")

// Kernel bounds of the CFS bandwidth controller.
const (
	minQuota  = time.Millisecond
	minPeriod = time.Millisecond
	maxPeriod = time.Second
	// DefaultPeriod is short enough that a throttled server waits at most
	// (1 - cores) × 2 ms for its next slice.
	DefaultPeriod = 2 * time.Millisecond
	prefix        = "wirebench-"
)

// Quota is a CPU allowance: Cores of CPU time per wall-clock second,
// granted in slices of Period.
type Quota struct {
	Cores  float64
	Period time.Duration // 0: Period(Cores)
}

// Period is the period used for cores: DefaultPeriod, or longer where the
// quota per period would fall under the kernel's 1 ms minimum.
func Period(cores float64) time.Duration {
	p := DefaultPeriod
	if cores > 0 {
		p = max(p, time.Duration(math.Ceil(float64(minQuota)/cores)))
	}
	return min(p, maxPeriod)
}

func (q Quota) withDefaults() (Quota, error) {
	if !(q.Cores > 0) || math.IsInf(q.Cores, 0) {
		return q, fmt.Errorf("cpuquota: %g cores: want a positive number", q.Cores)
	}
	if q.Period == 0 {
		q.Period = Period(q.Cores)
	}
	if q.Period < minPeriod || q.Period > maxPeriod {
		return q, fmt.Errorf("cpuquota: period %v: want 1ms to 1s", q.Period)
	}
	if q.quota() < minQuota {
		return q, fmt.Errorf("cpuquota: %g cores of a %v period is under the kernel's 1ms minimum", q.Cores, q.Period)
	}
	return q, nil
}

func (q Quota) quota() time.Duration {
	return time.Duration(math.Round(q.Cores*float64(q.Period)/float64(time.Microsecond))) * time.Microsecond
}

// String reads "0.5 CPU (1ms per 2ms)".
func (q Quota) String() string {
	return fmt.Sprintf("%s CPU (%v per %v)", strconv.FormatFloat(q.Cores, 'f', -1, 64), q.quota(), q.Period)
}

// hierarchy is where groups are made: a cgroup v2 root with the cpu
// controller, or a v1 mount of the cpu controller.
type hierarchy struct {
	root string
	v2   bool
}

// Paths of the cgroup hierarchies, variables for tests.
var (
	mountinfo = "/proc/self/mountinfo"
	procRoot  = "/proc"
)

// find reads mountinfo for a v2 mount whose controllers include cpu, else
// a v1 mount of cpu.
func find() (hierarchy, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return hierarchy{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer f.Close()
	var v1 string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || pf[3] != "/" {
			continue // a bind mount of a subtree: not the hierarchy's root
		}
		switch qf[0] {
		case "cgroup2":
			b, err := os.ReadFile(filepath.Join(pf[4], "cgroup.controllers"))
			if err == nil && hasWord(string(b), "cpu") {
				return hierarchy{root: pf[4], v2: true}, nil
			}
		case "cgroup":
			if v1 == "" && hasWord(strings.ReplaceAll(qf[2], ",", " "), "cpu") {
				v1 = pf[4]
			}
		}
	}
	if v1 == "" {
		return hierarchy{}, fmt.Errorf("%w: no cgroup cpu controller mounted", ErrUnavailable)
	}
	return hierarchy{root: v1}, nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// Group is one cgroup under a quota. Close removes it.
type Group struct {
	h     hierarchy
	dir   string
	quota Quota
	// from is where each added process was, to put it back on Close
	// (a server given by PID outlives the run).
	from map[int]string
}

var seq atomic.Int64

// New makes a group under q, after removing stale groups of runs that
// are gone. It returns ErrUnavailable where no group can be made.
func New(q Quota) (*Group, error) {
	q, err := q.withDefaults()
	if err != nil {
		return nil, err
	}
	h, err := find()
	if err != nil {
		return nil, err
	}
	_, _ = removeStale(h)
	if h.v2 {
		// Children get the cpu controller only if the parent hands it on.
		if err := write(filepath.Join(h.root, "cgroup.subtree_control"), "+cpu"); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	dir := filepath.Join(h.root, fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	g := &Group{h: h, dir: dir, quota: q, from: map[int]string{}}
	if err := g.set(q); err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return g, nil
}

func (g *Group) set(q Quota) error {
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	if g.h.v2 {
		return write(filepath.Join(g.dir, "cpu.max"), us(q.quota())+" "+us(q.Period))
	}
	// The period first: a quota is checked against the period in force.
	if err := write(filepath.Join(g.dir, "cpu.cfs_period_us"), us(q.Period)); err != nil {
		return err
	}
	return write(filepath.Join(g.dir, "cpu.cfs_quota_us"), us(q.quota()))
}

// Quota is the group's quota, as set.
func (g *Group) Quota() Quota { return g.quota }

// Dir is the group's directory.
func (g *Group) Dir() string { return g.dir }

// Add moves pid and its descendants, every thread, into the group.
// Threads and children they start later are born in it.
func (g *Group) Add(pid int) error {
	for _, p := range append([]int{pid}, descendants(pid)...) {
		if _, ok := g.from[p]; !ok {
			g.from[p] = g.current(p)
		}
		if err := write(filepath.Join(g.dir, "cgroup.procs"), strconv.Itoa(p)); err != nil {
			if p == pid {
				return fmt.Errorf("cpuquota: add pid %d: %w", pid, err)
			}
			// a child that exited meanwhile
		}
	}
	return nil
}

// current is pid's group in this hierarchy, as a directory ("" unknown).
func (g *Group) current(pid int) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if (g.h.v2 && f[0] == "0" && f[1] == "") || (!g.h.v2 && hasWord(strings.ReplaceAll(f[1], ",", " "), "cpu")) {
			return filepath.Join(g.h.root, f[2])
		}
	}
	return ""
}

// descendants are pid's children, theirs, and so on.
func descendants(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(filepath.Join(procRoot, strconv.Itoa(pid), "task"))
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
				out = append(out, descendants(c)...)
			}
		}
	}
	return out
}

// Stats are the group's throttling counters since it was made.
type Stats struct {
	Periods, Throttled int64 // periods with runnable tasks; of those, throttled
	ThrottledTime      time.Duration
}

// Stats reads the group's cpu.stat.
func (g *Group) Stats() (Stats, error) {
	b, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return Stats{}, fmt.Errorf("cpuquota: %w", err)
	}
	var s Stats
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_periods":
			s.Periods = n
		case "nr_throttled":
			s.Throttled = n
		case "throttled_time": // v1, ns
			s.ThrottledTime = time.Duration(n)
		case "throttled_usec": // v2
			s.ThrottledTime = time.Duration(n) * time.Microsecond
		}
	}
	return s, nil
}

// Close moves what is left in the group back where it came from (or to
// the root) and removes the group.
func (g *Group) Close() error {
	return removeGroup(g.h, g.dir, g.from)
}

func removeGroup(h hierarchy, dir string, from map[int]string) error {
	var err error
	for range 50 {
		b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if errors.Is(rerr, os.ErrNotExist) {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			to := from[pid]
			if to == "" || write(filepath.Join(to, "cgroup.procs"), f) != nil {
				_ = write(filepath.Join(h.root, "cgroup.procs"), f)
			}
		}
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // a task still exiting keeps it busy
	}
	return fmt.Errorf("cpuquota: remove %s: %w", dir, err)
}

// RemoveStale removes groups left by wirebench processes that are gone
// (killed, crashed) and returns how many it removed.
func RemoveStale() (int, error) {
	h, err := find()
	if err != nil {
		return 0, err
	}
	return removeStale(h)
}

func removeStale(h hierarchy) (int, error) {
	ents, err := os.ReadDir(h.root)
	if err != nil {
		return 0, fmt.Errorf("cpuquota: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range ents {
		owner, ok := ownerOf(e.Name())
		if !ok || !e.IsDir() || alive(owner) {
			continue
		}
		if err := removeGroup(h, filepath.Join(h.root, e.Name()), nil); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// ownerOf reads the maker's PID from a group name wirebench-<pid>-<n>.
func ownerOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	pid, err1 := strconv.Atoi(p)
	_, err2 := strconv.Atoi(n)
	return pid, ok && err1 == nil && err2 == nil && pid > 0
}

func alive(pid int) bool {
	_, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid)))
	return err == nil
}

func write(path, s string) error {
	return os.WriteFile(path, []byte(s), 0o644)
}
