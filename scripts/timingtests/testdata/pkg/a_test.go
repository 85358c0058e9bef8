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
