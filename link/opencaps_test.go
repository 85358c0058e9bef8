package link

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// Root without CAP_NET_ADMIN and CAP_SYS_ADMIN (a container's root, or
// capabilities dropped): Open passes its first checks and fails half-way.
// It must return the error, not panic closing a link it no longer holds.
// The test runs itself again under setpriv with the two capabilities
// dropped.
func TestOpenWithoutCapabilities(t *testing.T) {
	needRoot(t)
	if os.Getenv("WIREBENCH_TEST_NOCAPS") == "1" {
		l, err := Open(Spec{})
		if err == nil {
			l.Close()
			t.Skip("Open worked without CAP_NET_ADMIN and CAP_SYS_ADMIN")
		}
		if !errors.Is(err, ErrPrivilege) {
			t.Errorf("Open without the capabilities: %v, want ErrPrivilege", err)
		}
		t.Logf("Open: %v", err)
		return
	}
	setpriv := testkit.NeedTool(t, "setpriv", "apt-get install util-linux")
	cmd := exec.Command(setpriv, "--inh-caps=-all", "--bounding-set=-net_admin,-sys_admin",
		os.Args[0], "-test.run=^TestOpenWithoutCapabilities$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "WIREBENCH_TEST_NOCAPS=1")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "panic") {
		t.Fatalf("Open without the capabilities: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
