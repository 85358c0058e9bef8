package study

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/link"
	"github.com/wirebench/wirebench/results"
)

// Links as a study axis: every cell runs on every link, its trials
// interleaved with all the others, and the report compares cells with
// their group's baseline on the same link (a group per group and link).
//
// The servers stay in the host's namespace; the client side of a trial
// (warm-up, then the measured load or capacity search) runs on the far
// side of the link, in an agent: this same study started again in the
// link's namespace (Options.Agent, with AgentEnv set), which builds the
// same cells and runs the client phases it is sent. A process's sockets
// belong to the namespace of the thread that makes them, and the load
// clients' many dialers run on any thread: a process of its own, born in
// the namespace, is the one way every client (HTTP/1.1, h2, h3, gRPC,
// streams, the browser) crosses the link unchanged.

// AgentEnv marks a wirebench started on the far side of a study's link to
// run the client phases of its trials (ServeAgent): requests on file
// descriptor 3, replies on 4.
const AgentEnv = "WIREBENCH_STUDY_AGENT"

// LinkNone names loopback in a links axis: no emulated link.
const LinkNone = "none"

// ParseLinks reads --links values: each a link spec, several separated by
// ';', and a comma list of preset names is one link per name ("none,3g,4g");
// a spec with values keeps its commas ("rtt=50ms,loss=1%").
func ParseLinks(vals []string) ([]string, error) {
	var out []string
	for _, v := range vals {
		for part := range strings.SplitSeq(v, ";") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			items := strings.Split(part, ",")
			names := !slices.ContainsFunc(items, func(it string) bool {
				it = strings.TrimSpace(it)
				return it != LinkNone && !slices.Contains(link.PresetNames(), it)
			})
			if !names {
				items = []string{part}
			}
			for _, it := range items {
				out = append(out, strings.TrimSpace(it))
			}
		}
	}
	return out, checkLinks(out)
}

// checkLinks rejects a links axis with a bad spec or a link twice.
func checkLinks(links []string) error {
	seen := map[string]bool{}
	for _, l := range links {
		if _, err := link.Parse(l); err != nil {
			msg := strings.TrimPrefix(err.Error(), link.ErrSpec.Error()+": ")
			if !strings.HasPrefix(msg, strconv.Quote(l)+":") { // the item at fault, if not the whole spec
				msg = strconv.Quote(l) + ": " + msg
			}
			return fmt.Errorf("%w: links: %s", ErrDefinition, msg)
		}
		if seen[l] {
			return fmt.Errorf("%w: links: %q is given twice", ErrDefinition, l)
		}
		seen[l] = true
	}
	return nil
}

// emulated reports whether a links axis needs the relay (a link other
// than none).
func emulated(links []string) bool {
	return slices.ContainsFunc(links, func(l string) bool { s, _ := link.Parse(l); return s != nil })
}

// LinksNeedPrivileges is nil when def's links (or opts') can be set up
// here, else link.ErrPrivilege with what is missing: callers check it
// before they start anything.
func LinksNeedPrivileges(def Definition, opts Options) error {
	if !emulated(linksOf(def, opts)) {
		return nil
	}
	return link.Available()
}

// linksOf is the links axis of a run of def: --links, else the study's
// own (its quick ones in a quick run).
func linksOf(def Definition, opts Options) []string {
	switch {
	case len(opts.Links) > 0:
		return opts.Links
	case opts.Quick && len(def.QuickLinks) > 0:
		return def.QuickLinks
	}
	return def.Links
}

// withLinks is cells once per link, link after link (the report lists
// them so); no links: cells as they are.
func withLinks(cells []Cell, links []string) []Cell {
	if len(links) == 0 {
		return cells
	}
	out := make([]Cell, 0, len(cells)*len(links))
	for _, l := range links {
		for _, c := range cells {
			c.Link = l
			out = append(out, c)
		}
	}
	return out
}

// linkAnswerMetric: on an emulated link the question is time, which is
// what a link changes; a study asked in server CPU or req/s answers on
// its links in p50 latency (its other metrics stay in the tables).
const linkAnswerMetric = "lat_p50"

// linkAnswer is the answer metric of a study with links, and a note when
// it replaced the study's own.
func linkAnswer(a results.Answer) (results.Answer, string) {
	if strings.HasPrefix(a.Metric, "lat_") || a.Metric == "capacity" {
		return a, ""
	}
	was := a.Metric
	if was == "" {
		was = "rps"
	}
	a.Metric = linkAnswerMetric
	return a, fmt.Sprintf("links axis: the question is answered in p50 latency on each link (the study's own metric, %s, is in the tables): a link changes time, not the server's work", was)
}

// studyLinks are a running study's links: set up, calibrated, each with
// its agent.
type studyLinks struct {
	byName map[string]*linkAgent
}

// linkAgent is one emulated link and the agent running clients across it.
type linkAgent struct {
	name  string
	l     *link.Link
	cmd   *exec.Cmd
	req   *os.File // our end of the requests pipe
	resp  *bufio.Reader
	rfile *os.File
	dead  error // set when the agent is gone
	mu    sync.Mutex
	warn  map[string]bool
}

// openLinks sets up every link of the axis (none needs nothing),
// calibrates each and starts its agent; the results get the links as
// asked for and as measured. A link measured off its spec fails the
// study unless opts.LinkNoCheck.
func openLinks(ctx context.Context, links []string, opts Options, res *results.Study, ids []string) (*studyLinks, error) {
	sl := &studyLinks{byName: map[string]*linkAgent{}}
	for _, name := range links {
		spec, err := link.Parse(name)
		if err != nil {
			sl.close()
			return nil, err
		}
		rl := results.Link{Spec: name, Effective: LinkNone}
		if spec == nil {
			res.Links = append(res.Links, rl)
			continue
		}
		rl.Effective, rl.Preset, rl.Source = spec.String(), spec.Preset, link.PresetSource(spec.Preset)
		l, err := link.Open(*spec)
		if err != nil {
			sl.close()
			return nil, fmt.Errorf("study: link %s: %w", name, err)
		}
		a := &linkAgent{name: name, l: l, warn: map[string]bool{}}
		sl.byName[name] = a
		if !opts.LinkNoCalibrate {
			opts.Progress(fmt.Sprintf("link %s (%s): calibrating…", name, rl.Effective))
			if rl.Calibration, err = l.Calibrate(ctx, link.CalibrateOptions{}); err != nil {
				sl.close()
				return nil, fmt.Errorf("study: link %s: %w", name, err)
			}
			var b strings.Builder
			results.WriteLinkSummary(&b, &rl)
			opts.Progress(strings.TrimRight(strings.TrimLeft(b.String(), "\n"), "\n"))
			if off := rl.Calibration.Off; off != "" && !opts.LinkNoCheck {
				sl.close()
				return nil, fmt.Errorf("study: link %s: the link measured is off its spec: %s (--link-check=false runs anyway, recording it)", name, off)
			}
		}
		res.Links = append(res.Links, rl)
		if err := a.start(opts, ids); err != nil {
			sl.close()
			return nil, fmt.Errorf("study: link %s: %w", name, err)
		}
	}
	return sl, nil
}

func (sl *studyLinks) close() {
	if sl == nil {
		return
	}
	for _, a := range sl.byName {
		a.stop()
		a.l.Close()
	}
}

// client is the trial client of a cell: its link's agent, or this process.
func (sl *studyLinks) client(c Cell) trialClient {
	if sl != nil {
		if a, ok := sl.byName[c.Link]; ok {
			return a
		}
	}
	return localClient{}
}

// agentHello is an agent's first message: the cells it built, which must
// be the study's.
type agentHello struct {
	Cells []string `json:"cells"`
	Error string   `json:"error,omitempty"`
}

type agentReq struct {
	Cell   string         `json:"cell"`
	Warmup bool           `json:"warmup,omitempty"`
	Vars   agentVars      `json:"vars"`
	Trial  *results.Trial `json:"trial"`
}

type agentVars struct {
	Ports                     []int  `json:"ports,omitempty"`
	Wirebench, Worktree, Repo string `json:",omitempty"`
}

type agentResp struct {
	Load     *results.Load     `json:"load,omitempty"`
	Capacity *results.Capacity `json:"capacity,omitempty"`
	Error    string            `json:"error,omitempty"`
}

// agentStartTimeout bounds an agent's start: it builds the study's cells
// (parsing a study file, no builds) and says hello.
const agentStartTimeout = 30 * time.Second

func (a *linkAgent) start(opts Options, ids []string) error {
	if opts.Agent == nil {
		return fmt.Errorf("%w: a links axis needs Options.Agent (the command that runs the study's clients across a link)", ErrDefinition)
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return err
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return err
	}
	a.cmd = opts.Agent()
	a.cmd.Env = append(a.cmd.Environ(), AgentEnv+"=1")
	a.cmd.ExtraFiles = []*os.File{reqR, respW}
	a.cmd.Stdout = os.Stderr // an agent's words are diagnostics
	// Its own process group: a terminal's Ctrl-C reaches this process
	// only, which passes exactly one SIGINT on (phase); a second one
	// would end the agent before it returns the cut trial.
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if a.cmd.Stderr == nil {
		a.cmd.Stderr = os.Stderr
	}
	err = a.l.Start(a.cmd)
	reqR.Close()
	respW.Close()
	if err != nil {
		reqW.Close()
		respR.Close()
		return fmt.Errorf("starting the agent: %w", err)
	}
	a.req, a.rfile, a.resp = reqW, respR, bufio.NewReader(respR)
	var hello agentHello
	done := make(chan error, 1)
	go func() {
		line, err := a.resp.ReadBytes('\n') // each message is one line (json.Encoder)
		if err == nil {
			err = json.Unmarshal(line, &hello)
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(agentStartTimeout):
		err = fmt.Errorf("no answer in %v", agentStartTimeout)
	}
	if err == nil && hello.Error != "" {
		err = errors.New(hello.Error)
	}
	if err == nil && !slices.Equal(hello.Cells, ids) {
		err = fmt.Errorf("it built other cells (%d) than this study's (%d)", len(hello.Cells), len(ids))
	}
	if err != nil {
		a.stop()
		return fmt.Errorf("the study's agent across the link: %w", err)
	}
	return nil
}

func (a *linkAgent) stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	if a.req != nil {
		a.req.Close() // the agent ends at the end of its requests
	}
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		a.cmd.Process.Kill()
		<-done
	}
	if a.rfile != nil {
		a.rfile.Close()
	}
	a.cmd = nil
}

// phase runs a client phase in the agent, across the link. A signal that
// ends ctx is passed on, so that the agent's load stops as an in-process
// one would and its partial result comes back.
func (a *linkAgent) phase(ctx context.Context, cell Cell, opts Options, v vars, t *results.Trial, warmup bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dead != nil {
		return a.dead
	}
	req := agentReq{Cell: cell.ID(), Warmup: warmup, Vars: agentVars{Ports: v.ports, Wirebench: v.wirebench, Worktree: v.worktree, Repo: v.repo}, Trial: t}
	st0, t0 := a.l.Stats(), time.Now()
	if err := json.NewEncoder(a.req).Encode(req); err != nil {
		a.dead = fmt.Errorf("the agent across link %s is gone: %w", a.name, err)
		return a.dead
	}
	var resp agentResp
	done := make(chan error, 1)
	go func() {
		line, err := a.resp.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &resp)
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		a.cmd.Process.Signal(syscall.SIGINT)
		select {
		case err = <-done:
		case <-time.After(agentStopGrace):
			a.cmd.Process.Kill()
			err = <-done
		}
	}
	if err != nil {
		a.dead = fmt.Errorf("the agent across link %s is gone: %w", a.name, err)
		return a.dead
	}
	if !warmup {
		t.Load, t.Capacity = resp.Load, resp.Capacity
		st := a.l.Stats().Since(st0)
		t.Relay = st.Result(a.l.Spec, time.Since(t0))
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}

// agentStopGrace is how long an agent has to return a load cut by a
// signal.
const agentStopGrace = 10 * time.Second

// ServeAgent is the far side of a study's link: it builds def's cells as
// Run does, says which, then runs each client phase it is sent (requests
// on in, replies on out) until in ends. opts must be the study's own
// (the same command line): the phases' durations come from it.
func ServeAgent(ctx context.Context, def Definition, opts Options, in io.Reader, out io.Writer) error {
	opts = opts.withDefaults(def)
	links := linksOf(def, opts)
	cells := withLinks(withCapacity(def.Cells, opts.Capacity), links)
	enc := json.NewEncoder(out)
	var hello agentHello
	byID := map[string]Cell{}
	for _, c := range cells {
		hello.Cells = append(hello.Cells, c.ID())
		byID[c.ID()] = c
	}
	if err := enc.Encode(hello); err != nil {
		return err
	}
	dec := json.NewDecoder(in)
	for {
		var req agentReq
		if err := dec.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("study agent: %w", err)
		}
		var resp agentResp
		cell, ok := byID[req.Cell]
		t := req.Trial
		if t == nil {
			t = &results.Trial{}
		}
		if !ok {
			resp.Error = fmt.Sprintf("study agent: no cell %q", req.Cell)
		} else {
			v := vars{ports: req.Vars.Ports, wirebench: req.Vars.Wirebench, worktree: req.Vars.Worktree, repo: req.Vars.Repo}
			if err := clientPhase(ctx, cell, opts, v, t, req.Warmup); err != nil {
				resp.Error = err.Error()
			}
			resp.Load, resp.Capacity = t.Load, t.Capacity
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
}
