package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: module version, revision, commit time, the modified mark
// and the Go version from the build info; stamped values win; a binary
// without VCS information says how to get it.
func TestVersion(t *testing.T) {
	saved := buildInfo
	defer func() { buildInfo = saved; buildVersion, buildRevision, buildTime, buildModified = "", "", "", "" }()
	vcs := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-27T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	devel := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}
	for _, tc := range []struct {
		name    string
		bi      *debug.BuildInfo
		stamped [4]string
		want    string
	}{
		{"vcs", vcs, [4]string{}, "v1.2.3 revision abc123 2026-11-27T12:00:00Z (modified) go1.26.0"},
		{"go run", devel, [4]string{}, "(devel, no VCS info: build with go build or go install) go1.26.0"},
		{"stamped", devel, [4]string{"v2.0.0", "def456", "2026-12-01T00:00:00Z", "false"}, "v2.0.0 revision def456 2026-12-01T00:00:00Z go1.26.0"},
	} {
		buildInfo = func() (*debug.BuildInfo, bool) { return tc.bi, true }
		buildVersion, buildRevision, buildTime, buildModified = tc.stamped[0], tc.stamped[1], tc.stamped[2], tc.stamped[3]
		if got := version(); got != tc.want {
			t.Errorf("%s: version() = %q, want %q", tc.name, got, tc.want)
		}
	}
	buildVersion, buildRevision, buildTime, buildModified = "", "", "", ""
	buildInfo = func() (*debug.BuildInfo, bool) { return vcs, true }
	for _, args := range [][]string{{"--version"}, {"version"}, {"-v"}, {"load", "--version"}} {
		code, out, errs := runCLI(t, args...)
		if code != 0 || errs != "" || out != "wirebench v1.2.3 revision abc123 2026-11-27T12:00:00Z (modified) go1.26.0\n" {
			t.Errorf("wirebench %v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, "version", "extra"); code != 2 || !strings.Contains(errs, "unexpected argument") {
		t.Errorf("version extra: exit %d, %q", code, errs)
	}
}
