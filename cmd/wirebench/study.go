package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/study"
)

func init() {
	register("study", command{
		summary: "run an experiment end to end and write its report (study list: the built-in ones)",
		run:     runStudy,
	})
}

func runStudy(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 && args[0] == "init" {
		return runStudyInit(env, args[1:])
	}
	fs := newFlagSet(env, "study", "<name> [flags]   (names: "+strings.Join(study.Names(), ", ")+"; 'list' describes them)\n"+
		"       wirebench study run FILE.yaml [flags]   (a study of your own servers)\n"+
		"       wirebench study init [FILE.yaml]        (write a commented example, default study.yaml)\n\n"+
		"Exit status: 0 ok, 1 a cell had no successful trial or the study failed, 2 bad usage or study file.")
	var sf study.Flags
	sf.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := sf.Check(); err != nil {
		return err
	}
	var err error
	var def study.Definition
	switch {
	case fs.NArg() == 2 && fs.Arg(0) == "run":
		if def, err = study.ParseFile(fs.Arg(1)); err != nil {
			return usageError{Err: err}
		}
	case fs.NArg() >= 1 && fs.Arg(0) == "run":
		return usagef("study run: want one study file, got %d arguments", fs.NArg()-1)
	case fs.NArg() != 1:
		return usagef("want one study name (%s), list, run FILE or init", strings.Join(study.Names(), ", "))
	case fs.Arg(0) == "list":
		for _, n := range study.Names() {
			def, _ := study.Lookup(n)
			fmt.Fprintf(env.stdout, "%-14s %s\n%14s %s\n", n, def.Title, "", def.Description)
		}
		return nil
	default:
		if def, err = study.Lookup(fs.Arg(0)); err != nil {
			return usageError{Err: err}
		}
	}
	if def, err = sf.Apply(ctx, fs, def); err != nil {
		return err
	}
	o := sf.Options
	o.Agent = func() *exec.Cmd {
		exe, err := linkExe()
		if err != nil {
			exe = os.Args[0]
		}
		return exec.Command(exe, append([]string{"study"}, args...)...)
	}
	o.Progress = func(line string) { fmt.Fprintln(env.stderr, line) }
	if os.Getenv(study.AgentEnv) != "" { // the far side of a link: this study's clients (study/links.go)
		return study.ServeAgent(ctx, def, o, os.NewFile(3, "study-agent-requests"), os.NewFile(4, "study-agent-replies"))
	}
	if err := study.LinksNeedPrivileges(def, o); err != nil {
		if done, err := retryUnprivileged(ctx, env, err, "--links"); done {
			return err
		}
		return exitError{2, fmt.Errorf("--links: %s: run as root (sudo), or in a container with CAP_NET_ADMIN and CAP_SYS_ADMIN and /dev/net/tun", linkMessage(err))}
	}
	if def.Name == study.BulkUpsertName {
		return runBulkStudy(ctx, env, o, sf.Out, sf.Records, sf.BulkFormats())
	}

	if err := o.Ports.Fits(def); err != nil { // before the results directory is made
		return usageError{Err: err}
	}
	dir, err := results.NewRunDir(sf.Out, def.Name) // exclusive: two runs in one second never share a dir
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "study %s: %s -> %s\n", def.Name, cellsLine(len(def.Cells)), dir)
	res, runErr := study.Run(ctx, def, o)
	sig, cut := interruption(ctx)
	if res == nil {
		if cut {
			return exitError{sig.ExitCode(), fmt.Errorf("%v before the first trial: no results", sig)}
		}
		return runErr
	}
	if err := report.WriteAll(dir, res); err != nil {
		return err
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	_, _ = env.stdout.Write(md)
	fmt.Fprintf(env.stderr, "\nwrote %s/{results.json,report.md,report.csv,report.html}\n", dir)
	if cut && res.Stop != nil {
		return exitError{sig.ExitCode(), fmt.Errorf("%v after %d of %d trials: a partial study in %s", sig, res.Stop.TrialsRun, res.Stop.TrialsPlanned, dir)}
	}
	if runErr != nil {
		return runErr
	}
	if bad := study.Unsuccessful(res); len(bad) > 0 {
		return fmt.Errorf("%d of %d cells had no successful trial:\n  %s", len(bad), len(res.Cells), strings.Join(bad, "\n  "))
	}
	return nil
}

// runStudyInit writes the commented example study file, never over an
// existing file.
func runStudyInit(env *cliEnv, args []string) error {
	fs := newFlagSet(env, "study init", "[FILE.yaml]   (default study.yaml; an existing file is never overwritten)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("study init: want at most one file name")
	}
	path := "study.yaml"
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return fmt.Errorf("%s exists; not overwriting it (choose another name)", path)
		}
		return err
	}
	if _, err := f.Write(study.Example()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "wrote %s; edit it, then: wirebench study run %s\n", path, path)
	return nil
}
