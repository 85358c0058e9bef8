//go:build !race

// Not in the race step (CI adds no package to it): the server's tests run
// the ticker under -race through the watchdog and idleread.

package tick

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTicks: a Ticker ticks more than once, at about its period (a guard
// of a minute, not a measurement), and sends nothing once stopped.
func TestTicks(t *testing.T) {
	tk := New(time.Millisecond)
	start := time.Now()
	for i := range 3 {
		select {
		case <-tk.C:
		case <-time.After(time.Minute):
			t.Fatalf("tick %d never came", i)
		}
	}
	if el := time.Since(start); el < 2*time.Millisecond {
		t.Errorf("3 ticks of 1 ms in %v", el)
	}
	tk.Stop()
	time.Sleep(5 * time.Millisecond)
	select {
	case <-tk.C: // one tick may have been waiting
	default:
	}
	select {
	case <-tk.C:
		t.Error("a tick after Stop")
	case <-time.After(20 * time.Millisecond):
	}
}

// TestTimerfdOnLinux: on Linux the ticker is a timerfd, whose goroutine
// waits in the netpoller and keeps no timer in the runtime's heaps, and
// Stop ends that goroutine.
func TestTimerfdOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("timerfd is Linux's")
	}
	tk := New(time.Hour)
	if !tk.timerfd {
		t.Fatal("not a timerfd")
	}
	waiting := func() bool {
		b := make([]byte, 1<<20)
		return strings.Contains(string(b[:runtime.Stack(b, true)]), "internal/tick.newTimerfd.func")
	}
	if !waiting() {
		t.Fatal("no goroutine reading the timerfd")
	}
	tk.Stop()
	for end := time.Now().Add(time.Minute); waiting(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the timerfd's goroutine still runs after Stop")
		}
	}
}
