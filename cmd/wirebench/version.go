package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

func init() {
	register("version", command{
		summary: "print the version, VCS revision and time, and Go version of this binary (also --version)",
		run:     runVersion,
	})
}

// Stamped by release and container builds, where the VCS information Go
// records itself is missing (a build from a tarball, or a git worktree
// whose .git lies outside the Docker context):
//
//	go build -ldflags "-X main.buildVersion=v1.2.0 -X main.buildRevision=$(git rev-parse HEAD) \
//	  -X main.buildTime=$(git log -1 --format=%cI) -X main.buildModified=false" ./cmd/wirebench
//
// Values stamped win over the build info (see docs/install.md).
var buildVersion, buildRevision, buildTime, buildModified string

func runVersion(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "version", "   (also: wirebench --version, wirebench load --version)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintln(env.stdout, "wirebench", version())
	return nil
}

// buildInfo is what version reads, from the binary unless a test says.
var buildInfo = debug.ReadBuildInfo

// version is one line: module version, VCS revision, its commit time, a
// modified mark, and the Go version. A binary without VCS information (go
// run, go test, a build outside a checkout) says so and how to get it,
// rather than a bare "(devel)".
func version() string {
	v, rev, at, modified, goVersion := buildVersion, buildRevision, buildTime, buildModified, runtime.Version()
	if bi, ok := buildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && rev == "":
				rev = s.Value
			case s.Key == "vcs.time" && at == "":
				at = s.Value
			case s.Key == "vcs.modified" && modified == "":
				modified = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	parts := []string{v}
	if rev == "" {
		if v == "(devel)" {
			parts = []string{"(devel, no VCS info: build with go build or go install)"}
		}
	} else {
		parts = append(parts, "revision "+rev)
		if at != "" {
			parts = append(parts, at)
		}
		if modified == "true" {
			parts = append(parts, "(modified)")
		}
	}
	return strings.Join(append(parts, goVersion), " ")
}
