package pkg

import "testing"

func TestDirect(t *testing.T) { testkit.NeedTiming(t) }

func TestViaHelper(t *testing.T) { waitFor(t) }

func TestViaMethod(t *testing.T) { var s srv; s.check(t) }

func TestInSubtest(t *testing.T) {
	t.Run("x", func(t *testing.T) {
		if testkit.Timing() {
			t.Log("timed")
		}
	})
}

func TestNotTiming(t *testing.T) { plain() }

func waitFor(t *testing.T) { deeper() }

func deeper() bool { return testkit.Timing() }

type srv struct{}

func (srv) check(t *testing.T) { testkit.NeedTiming(t) }

func plain() {}

// TestSwitched does other work with the switch on: the main suite runs it too.
func TestSwitched(t *testing.T) {
	n := 400
	if testkit.Timing() {
		n = 2
	}
	_ = n
}

// TestCheckDeclares only checks with the switch on (its := declares).
func TestCheckDeclares(t *testing.T) {
	if testkit.Timing() {
		if d := 3; d > 2 {
			t.Error(d)
		}
	}
}
