package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Kinds are the page's kinds (browser/src/bench.ts).
var Kinds = []string{"fetch-json", "connect", "grpc-web", "ws-tunnel", "connect-stream", "ws-tunnel-stream"}

// ErrNoBrowser is returned when no chromium executable is found.
var ErrNoBrowser = errors.New("load: no chromium executable (set WIREBENCH_CHROMIUM or install chromium)")

// Options configure a browser scenario.
type Options struct {
	Kind string `json:"kind"`
	// URL is the REST port (http://host:port); the page is URL/bench/.
	URL string `json:"url"`
	// Batch is the calls per operation (default 50).
	Batch int `json:"batch,omitempty"`
	// Chromium is the browser executable (default: $WIREBENCH_CHROMIUM,
	// else chromium, chromium-browser or google-chrome on PATH).
	Chromium string        `json:"chromium,omitempty"`
	Timeout  time.Duration `json:"timeout"`
}

// FindChromium returns the browser executable: path if set, else
// $WIREBENCH_CHROMIUM, else the first of the usual names on PATH.
func FindChromium(path string) (string, error) {
	if path == "" {
		path = os.Getenv("WIREBENCH_CHROMIUM")
	}
	if path != "" {
		return exec.LookPath(path)
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

type scenario struct {
	o    Options
	exe  string
	page string

	mu         sync.Mutex
	lat        *measure.Histogram
	calls      int64
	failed     int64
	items      int64
	isolated   bool
	cpuU, cpuS time.Duration
	procs      int
}

// New validates o and finds the browser; it starts when the run's
// VU is made.
func New(o Options) (load.Scenario, error) {
	found := false
	for _, k := range Kinds {
		found = found || k == o.Kind
	}
	if !found {
		return nil, fmt.Errorf("%w: browser kind %q (want one of %s)", load.ErrOptions, o.Kind, strings.Join(Kinds, ", "))
	}
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" || u.Scheme != "http" {
		return nil, fmt.Errorf("%w: browser URL %q: want http://host:port", load.ErrOptions, o.URL)
	}
	if o.Batch <= 0 {
		o.Batch = 50
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	exe, err := FindChromium(o.Chromium)
	if err != nil {
		return nil, err
	}
	return &scenario{o: o, exe: exe, page: "http://" + u.Host + "/bench/", lat: measure.NewHistogram()}, nil
}

func (s *scenario) Name() string  { return "browser " + s.o.Kind }
func (s *scenario) Ops() []string { return []string{stream.Op(s.o.Kind)} }

// NewVU starts chromium on the page; a browser run has one VU (the page
// makes its calls one after another).
func (s *scenario) NewVU(ctx context.Context, id int, _ *measure.Bytes) (load.VU, error) {
	if id > 0 {
		return nil, fmt.Errorf("%w: a browser scenario runs one page: concurrency 1", load.ErrOptions)
	}
	var cmd *exec.Cmd // the browser's, for its exit status if it fails to start
	actx, acancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(s.exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.DisableGPU, chromedp.Flag("disable-extensions", true), chromedp.Flag("mute-audio", true),
		chromedp.ModifyCmdFunc(func(c *exec.Cmd) {
			cmd = c
			c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // chromedp's own default, which this replaces
		}))
	bctx, bcancel := chromedp.NewContext(actx)
	v := &vu{s: s, ctx: bctx, cancel: func() { bcancel(); acancel() }}
	// the first Run starts the browser: no timeout on it (that would end
	// the browser); the navigation below is bounded instead
	if err := chromedp.Do(bctx); err != nil {
		v.cancel() // waits for the process: its exit status is known after
		return nil, fmt.Errorf("load: start %s: %s", s.exe, startFailure(s.exe, cmd, err))
	}
	nctx, ncancel := context.WithTimeout(bctx, s.o.Timeout)
	defer ncancel()
	if err := chromedp.Do(nctx, chromedp.Navigate(s.page)); err != nil {
		v.cancel()
		return nil, fmt.Errorf("load: open %s: %w", s.page, err)
	}
	if _, err := chromedp.Run(nctx, chromedp.Poll[bool]("window.wirebench && window.wirebench.ready")); err != nil {
		v.cancel()
		return nil, fmt.Errorf("load: page %s never became ready: %w", s.page, err)
	}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		v.pid = p.Pid
		v.u0, v.s0, _ = treeCPU(v.pid)
	}
	return v, nil
}

type vu struct {
	s      *scenario
	ctx    context.Context
	cancel func()
	pid    int
	u0, s0 time.Duration
}

// pageRun is what the page's run() resolves to.
type pageRun struct {
	Kind                string    `json:"kind"`
	LatenciesUS         []float64 `json:"latencies_us"`
	Items               int64     `json:"items"`
	Failed              int64     `json:"failed"`
	FirstError          string    `json:"first_error"`
	CrossOriginIsolated bool      `json:"cross_origin_isolated"`
}

func (v *vu) Do(ctx context.Context, o *load.Outcome) {
	rctx, cancel := context.WithTimeout(v.ctx, v.s.o.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	expr := fmt.Sprintf("wirebench.run({kind: %s, calls: %d})", strconv.Quote(v.s.o.Kind), v.s.o.Batch)
	r, err := chromedp.Run(rctx, chromedp.Evaluate[pageRun](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		o.Fail = "browser: " + err.Error()
		if rctx.Err() != nil {
			o.Fail = "timeout"
		}
		return
	}
	s := v.s
	s.mu.Lock()
	for _, us := range r.LatenciesUS {
		s.lat.Record(time.Duration(us * float64(time.Microsecond)))
	}
	s.calls += int64(len(r.LatenciesUS)) + r.Failed
	s.failed += r.Failed
	s.items += r.Items
	s.isolated = r.CrossOriginIsolated
	s.mu.Unlock()
	o.Status = 200
	if r.Failed > 0 {
		o.Fail = "in page: " + firstLine(r.FirstError)
	}
}

func (v *vu) Close() error {
	if v.pid > 0 {
		u1, s1, n := treeCPU(v.pid)
		v.s.mu.Lock()
		v.s.cpuU, v.s.cpuS, v.s.procs = u1-v.u0, s1-v.s0, n
		v.s.mu.Unlock()
	}
	v.cancel()
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

func (s *scenario) streamResult() *results.Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &results.Stream{Kind: "browser " + s.o.Kind, Exchanges: s.calls - s.failed, Items: s.items,
		First: s.lat, Last: s.lat, PerMessage: measure.NewHistogram(), InBrowser: true}
}

// Driver implements Scenario.
func (s *scenario) Driver() load.Driver { return load.PerVU }

// Finish implements Scenario: the stream section, and the page's own
// latencies in place of the batches'.
func (s *scenario) Finish(res *results.Load) {
	res.Stream = s.streamResult()
	s.ownLatency(res)
}

// ownLatency puts the page's measurements in place of the batches'.
func (s *scenario) ownLatency(res *results.Load) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Latency, res.Service = s.lat, s.lat
	res.Requests, res.Failed = s.calls, s.failed
	if len(res.Ops) == 1 {
		res.Ops[0].Latency, res.Ops[0].Service = s.lat, s.lat
		res.Ops[0].Requests, res.Ops[0].Failed = s.calls, s.failed
	}
	res.CPU.User += s.cpuU
	res.CPU.System += s.cpuS
	res.Warnings = append(res.Warnings, fmt.Sprintf(
		"in-browser latencies (performance.now(), cross-origin isolated: %v) in batches of %d calls; client CPU includes %d chromium processes; no byte counts (the browser's sockets)",
		s.isolated, s.o.Batch, s.procs))
}

// startFailure says why the browser did not start: its own exit status
// and its last lines of output. A launcher script's complaints are left
// out: Debian's /usr/bin/chromium prints a harmless shell error ("…/chromium:
// 9: [: 25276514304: unexpected operator") before it execs the browser,
// and that line used to be all a failed start showed.
func startFailure(exe string, cmd *exec.Cmd, err error) string {
	out, ok := strings.CutPrefix(err.Error(), "chrome failed to start:\n")
	if !ok {
		return err.Error()
	}
	var own []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, exe+": ") {
			own = append(own, line)
		}
	}
	const keep = 8 // the reason is at the end; dbus noise comes first
	if len(own) > keep {
		own = append([]string{fmt.Sprintf("(%d lines before)", len(own)-keep)}, own[len(own)-keep:]...)
	}
	status := "the browser exited before it listened for DevTools"
	if cmd != nil && cmd.ProcessState != nil {
		status = "the browser exited with " + cmd.ProcessState.String()
	}
	if len(own) == 0 {
		return status + ", printing nothing of its own"
	}
	return status + "; its output:\n  " + strings.Join(own, "\n  ")
}
