package report_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
)

func renderHTML(t *testing.T, o reporttest.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, report.Build(reporttest.Results(o))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHTMLSelfContained: the page must open offline and from a file, so
// nothing may be fetched.
func TestHTMLSelfContained(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			page := renderHTML(t, tc.opt)
			bad := []*regexp.Regexp{
				regexp.MustCompile(`(?i)\b(src|href)\s*=\s*["']?\s*(https?:)?//`),
				regexp.MustCompile(`(?i)<script[^>]*\bsrc`),
				regexp.MustCompile(`(?i)<link[^>]*rel\s*=\s*["']?stylesheet`),
				regexp.MustCompile(`(?i)@import`),
				regexp.MustCompile(`(?i)url\(\s*["']?(https?:)?//`),
			}
			for _, re := range bad {
				if loc := re.FindIndex(page); loc != nil {
					t.Errorf("external reference %q", page[loc[0]:min(loc[1]+40, len(page))])
				}
			}
			want := 4 * 2 // 4 per group, 2 groups
			if tc.opt.SizesOnly {
				want = 0
			}
			if tc.opt.Faults || tc.opt.SizesOnly {
				want += 2 * 2 // 2 per payload dataset, 2 datasets
			}
			if n := bytes.Count(page, []byte("<svg")); n != want {
				t.Errorf("%d SVG plots, want %d", n, want)
			}
			wants := []string{"crud c=50", "echo c=1", "req/s vs base", "baseline"}
			if tc.opt.SizesOnly {
				wants = []string{"Payload sizes", "vs json", "grpc wire bytes per response"}
			}
			for _, want := range wants {
				if !bytes.Contains(page, []byte(want)) {
					t.Errorf("page lacks %q", want)
				}
			}
		})
	}
}

// TestHTMLInChromium renders the page in headless Chromium: it must load
// without console errors and its DOM must hold the plots.
func TestHTMLInChromium(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if testkit.InCI() {
			t.Fatal("chromium not installed (apt-get install -y chromium); required when CI=true")
		}
		t.Skip("chromium not installed (apt-get install -y chromium): HTML not rendered")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, renderHTML(t, reporttest.Options{Faults: true}), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0"}
	shot := os.Getenv("WIREBENCH_SCREENSHOT") // e.g. /tmp/report.png, to look at it
	if shot != "" {
		cmd := exec.CommandContext(ctx, bin, append(args, "--screenshot="+shot, "--window-size=1280,2000", "file://"+page)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("screenshot: %v\n%s", err, out)
		}
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "--dump-dom", "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") {
			t.Errorf("console: %s", line)
		}
	}
	dom := stdout.String()
	if n := strings.Count(dom, "<svg"); n != 12 {
		t.Errorf("rendered DOM has %d SVG plots, want 12 (4 per group, 2 per payload dataset)", n)
	}
	if n := strings.Count(dom, "<polyline"); n < 5 {
		t.Errorf("rendered DOM has %d polylines (latency curves, RSS lines), want at least 5", n)
	}
	if !strings.Contains(dom, "Synthetic study") {
		t.Errorf("rendered DOM lacks the title; got %d bytes", len(dom))
	}
}
