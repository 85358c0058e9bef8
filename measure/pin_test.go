package measure

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// parseCPUList reads a kernel CPU list such as "0-3,6,8-9".
func parseCPUList(t *testing.T, s string) []int {
	t.Helper()
	var cpus []int
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			t.Fatalf("CPU list %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				t.Fatalf("CPU list %q: %v", s, err)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// allowedList is the Cpus_allowed_list line of a /proc status file.
func allowedList(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return parseCPUList(t, v)
		}
	}
	t.Fatalf("%s has no Cpus_allowed_list", path)
	return nil
}

// TestAffinityIsWhatTheKernelSays compares Affinity with the kernel's own
// account in /proc/self/status.
func TestAffinityIsWhatTheKernelSays(t *testing.T) {
	runtime.LockOSThread() // Affinity reads this thread's mask, status the main thread's
	defer runtime.UnlockOSThread()
	got, want := Affinity(), allowedList(t, "/proc/self/status")
	if len(got) == 0 || !slices.Equal(got, want) {
		t.Errorf("Affinity() = %v, /proc/self/status says %v", got, want)
	}
	if e := Environment(t.Context()); !slices.Equal(e.Affinity, want) {
		t.Errorf("Environment().Affinity = %v, want %v", e.Affinity, want)
	}
}

const pinChildEnv = "WIREBENCH_TEST_PIN_CHILD"

// TestPinToOneCPU pins a child process (this test binary again) to one
// CPU of those it was granted, the last, and reads back what the kernel
// reports for every thread: pinning the test process itself would change
// every other test. Pinning to the CPUs already granted would prove
// nothing, so with a single CPU the test cannot observe Pin and skips.
func TestPinToOneCPU(t *testing.T) {
	if os.Getenv(pinChildEnv) != "" {
		t.Skip("child")
	}
	granted := Affinity()
	if len(granted) < 2 {
		if testkit.InCI() {
			t.Fatalf("CI needs 2 CPUs to test Pin; granted %v", granted)
		}
		t.Skipf("granted CPUs %v: need 2 to observe a pin", granted)
	}
	cpu := granted[len(granted)-1]
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), pinChildEnv+"="+strconv.Itoa(cpu))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	// Every line names a status file and its Cpus_allowed_list, the
	// process's first, then each thread's; the last line counts them.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 || lines[len(lines)-1] != fmt.Sprintf("threads %d GOMAXPROCS 1", len(lines)-2) {
		t.Fatalf("child output:\n%s", out)
	}
	for _, l := range lines[:len(lines)-1] {
		path, list, _ := strings.Cut(l, " ")
		if got := parseCPUList(t, list); !slices.Equal(got, []int{cpu}) {
			t.Errorf("%s: Cpus_allowed_list %v after Pin([%d])", path, got, cpu)
		}
	}
	if !strings.HasPrefix(lines[0], "/proc/self/status ") {
		t.Errorf("first line %q", lines[0])
	}
	if err := Pin(nil); err == nil {
		t.Error("Pin(nil) succeeded")
	}
	// A CPU the machine does not have: every thread refuses (EINVAL), so
	// Pin fails and nothing changes.
	if err := Pin([]int{1023}); err == nil || !strings.Contains(err.Error(), "invalid argument") {
		t.Errorf("Pin([1023]) = %v, want EINVAL", err)
	}
	if got := Affinity(); !slices.Equal(got, granted) {
		t.Errorf("affinity %v after a failed Pin, want %v", got, granted)
	}
}

// TestMain runs pinChild instead of the tests in TestPinToOneCPU's child.
func TestMain(m *testing.M) {
	if arg := os.Getenv(pinChildEnv); arg != "" {
		if err := pinChild(arg); err != nil {
			fmt.Println("child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// pinChild pins this process to one CPU and prints what the kernel then
// reports for the process and for every thread.
func pinChild(arg string) error {
	cpu, err := strconv.Atoi(arg)
	if err != nil {
		return err
	}
	// Make sure the process has several threads before pinning.
	done := make(chan bool)
	for range 4 {
		go func() { runtime.LockOSThread(); <-done }()
	}
	defer close(done)
	if err := Pin([]int{cpu}); err != nil {
		return err
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	paths := []string{"/proc/self/status"}
	for _, task := range tasks {
		paths = append(paths, "/proc/self/task/"+task.Name()+"/status")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				fmt.Printf("%s %s\n", p, strings.TrimSpace(v))
			}
		}
	}
	fmt.Printf("threads %d GOMAXPROCS %d\n", len(tasks), runtime.GOMAXPROCS(0))
	return nil
}
