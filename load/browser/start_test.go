package browser

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartFailureShowsBrowsersOwnExit: a browser that fails to start
// behind a launcher script like Debian's /usr/bin/chromium (which prints a
// harmless shell error, then execs the browser) is reported by the
// browser's own exit status and output, not by the launcher's line.
func TestStartFailureShowsBrowsersOwnExit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	launcher, browser := filepath.Join(dir, "chromium"), filepath.Join(dir, "chromium-bin")
	for path, script := range map[string]string{
		launcher: "#!/bin/sh\necho \"$0: 9: [: 25276514304: unexpected operator\" >&2\nexec \"$0-bin\" \"$@\"\n",
		browser: "#!/bin/sh\necho '[1:1:ERROR:zygote_host_impl_linux.cc(103)] Running as root without --no-sandbox is not supported.' >&2\n" +
			"echo 'second line of its own' >&2\nexit 21\n",
	} {
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := New(Options{Kind: "fetch-json", URL: "http://127.0.0.1:1", Chromium: launcher})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sc.NewVU(context.Background(), 0, nil)
	if err == nil {
		t.Fatal("a browser that exits at once started")
	}
	msg := err.Error()
	for _, want := range []string{"the browser exited with exit status 21", "Running as root without --no-sandbox", "second line of its own"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "unexpected operator") {
		t.Errorf("error shows the launcher's harmless line:\n%s", msg)
	}
}
