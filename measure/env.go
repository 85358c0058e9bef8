package measure

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Env is the machine a result was measured on (fairness rule 8): two
// result files are comparable only if these agree, and a report says so.
type Env struct {
	Hostname   string `json:"hostname"`
	CPUModel   string `json:"cpu_model"`
	NumCPU     int    `json:"num_cpu"`
	Affinity   []int  `json:"cpu_affinity"` // CPUs this process may run on
	GOMAXPROCS int    `json:"gomaxprocs"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GitCommit  string `json:"git_commit,omitempty"`
	GitDirty   bool   `json:"git_dirty,omitempty"`
}

// Environment describes the current machine and process, and the git
// commit of the working directory (AddGit). Fields it cannot learn are
// left empty rather than failing: a result without a git commit is still
// a result.
func Environment(ctx context.Context) Env {
	e := Machine()
	e.AddGit(ctx)
	return e
}

// Machine is Environment without the git commit. An unstamped binary
// learns that from a git process, whose CPU a run timed as a whole
// process pays (a few ms outside a repository, tens inside a large one):
// a load run whose result is only printed never needs it, and the caller
// that writes the result adds it then (AddGit).
func Machine() Env {
	e := Env{
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPUModel:   cpuModel(),
		Affinity:   Affinity(),
	}
	e.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		e.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	return e
}

// AddGit fills GitCommit and GitDirty from the build's VCS stamp or, for
// a binary without one, from git in the working directory; a commit set
// already is kept.
func (e *Env) AddGit(ctx context.Context) {
	if e.GitCommit == "" {
		e.GitCommit, e.GitDirty = gitCommit(ctx)
		gitProbes.Add(1)
	}
}

// gitProbes counts AddGit's lookups, for tests: a run that writes no
// result makes none.
var gitProbes atomic.Int64

// GitProbes is how many times this process looked up its git commit.
func GitProbes() int64 { return gitProbes.Load() }

// Affinity lists the CPUs the calling thread may run on.
func Affinity() []int { return AffinityOf(0) }

// AffinityOf lists the CPUs process (or thread) pid may run on (0: the
// calling thread), nil if it cannot be read.
func AffinityOf(pid int) []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(pid, &set) != nil {
		return nil
	}
	var cpus []int
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// gitCommit prefers the VCS stamp of the build; with -buildvcs=false (or
// go run) there is none, so it asks git about the working directory.
func gitCommit(ctx context.Context) (string, bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev string
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			return rev, dirty
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	// One process, not rev-parse and then status: a short run pays for
	// each (~3 ms of CPU here). Porcelain v2 heads its list of changed
	// tracked files with "# branch.oid <commit>" ("(initial)" before the
	// first commit).
	out, err := exec.CommandContext(ctx, "git", "status", "--porcelain=v2", "--branch", "--untracked-files=no").Output()
	if err != nil {
		return "", false
	}
	var commit string
	var dirty bool
	for line := range bytes.Lines(out) {
		line = bytes.TrimSpace(line)
		if oid, ok := bytes.CutPrefix(line, []byte("# branch.oid ")); ok {
			commit = string(oid)
		} else if len(line) > 0 && line[0] != '#' {
			dirty = true
		}
	}
	if commit == "(initial)" || commit == "" {
		return "", false
	}
	return commit, dirty
}
