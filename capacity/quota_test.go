package capacity

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/wirebench/wirebench/load"
)

// TestServerQuotaNone: no server named, or no quota asked for, leaves
// every server as it is and says nothing.
func TestServerQuotaNone(t *testing.T) {
	for _, c := range []struct {
		pid   int
		cores float64
	}{{0, 0.5}, {0, 0}, {os.Getpid(), -1}} {
		var log bytes.Buffer
		q, release, err := ServerQuota(context.Background(), load.Options{}, nil, c.pid, c.cores, &log)
		release()
		if q != nil || err != nil || log.Len() > 0 {
			t.Errorf("pid %d cores %g: quota %v, err %v, log %q", c.pid, c.cores, q, err, log.String())
		}
	}
}
