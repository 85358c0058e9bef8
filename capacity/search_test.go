package capacity

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// server is a fake server's behaviour at a rate: how long its requests
// took from the send (svc), how late the client sent them (lag), the
// failed fraction, the client's CPU use.
type server func(rate float64) (svc, lag time.Duration, failed, clientCPU float64)

// knee is a server that answers in 1 ms up to its capacity and in 1 s
// above it.
func knee(capacity float64) server {
	return func(rate float64) (time.Duration, time.Duration, float64, float64) {
		if rate <= capacity {
			return time.Millisecond, 0, 0, 0.1
		}
		return time.Second, 0, 0, 0.1
	}
}

// fakeLoad is what the engine would return for one step against srv.
func fakeLoad(srv server, rate float64, conc int, d time.Duration) *results.Load {
	svc, lag, failed, cpu := srv(rate)
	l := &results.Load{Schema: results.LoadSchema, Latency: measure.NewHistogram(), Service: measure.NewHistogram(), Lag: measure.NewHistogram(),
		Status: map[string]int64{}, Failures: map[string]int64{}}
	l.Options.Rate, l.Options.Duration, l.Options.Concurrency, l.Options.Open = rate, d, conc, true
	l.Start = time.Unix(1000, 0)
	l.End, l.Window = l.Start.Add(d), d
	l.Requests = int64(math.Ceil(rate*d.Seconds() - 1e-9))
	l.Failed = int64(failed * float64(l.Requests))
	for range 200 { // enough for the percentiles: the counts are above
		l.Latency.Record(svc + lag)
		l.Service.Record(svc)
		l.Lag.Record(lag)
	}
	l.CPU = results.CPU{User: time.Duration(cpu * float64(d)), CPUs: 1}
	return l
}

// fakeStep measures srv, advancing the fake clock by what a real step costs.
func fakeStep(srv server, clock *time.Time, warmup time.Duration, calls *int) StepFunc {
	return func(_ context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		*calls++
		*clock = clock.Add(warmup + d)
		return Measurement{Load: fakeLoad(srv, rate, conc, d)}, nil
	}
}

func slo(t *testing.T, exprs ...string) []results.Threshold {
	t.Helper()
	var out []results.Threshold
	for _, e := range exprs {
		th, err := results.ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, th)
	}
	return out
}

// runFake searches srv with the defaults' range, start and precision.
func runFake(t *testing.T, srv server, o Options) (*results.Capacity, int) {
	t.Helper()
	clock := time.Unix(0, 0)
	calls := 0
	if o.SLO == nil {
		o.SLO = slo(t, "p99<20ms")
	}
	o.Now = func() time.Time { return clock }
	o.ConfirmDuration = -1
	res, err := Search(context.Background(), o, fakeStep(srv, &clock, DefaultWarmup, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if calls != len(res.Steps) {
		t.Fatalf("%d step calls, %d steps recorded", calls, len(res.Steps))
	}
	return res, calls
}

// TestSearchStepsOverTheRange: for capacities spread over 1–100k req/s
// at 5% precision, the search brackets the capacity within 5% in at most
// 12 steps.
func TestSearchStepsOverTheRange(t *testing.T) {
	t.Parallel()
	cases, most := 0, 0
	for e := 0.0; e < 5; e += 0.013 {
		capacity := math.Pow(10, e) * 1.0001 // off the grid of rates tried
		res, steps := runFake(t, knee(capacity), Options{MinRate: 1, MaxRate: 100_000})
		cases++
		most = max(most, steps)
		if res.Limit != results.LimitSLO || res.Low > capacity || res.High <= capacity || res.High/res.Low > 1.05+1e-9 {
			t.Fatalf("capacity %.4g: limit %s, interval [%.4g, %.4g) in %d steps", capacity, res.Limit, res.Low, res.High, steps)
		}
		if steps > 12 {
			t.Errorf("capacity %.4g: %d steps, want ≤ 12", capacity, steps)
		}
		if res.Rate != res.Low {
			t.Errorf("capacity %.4g: rate %v, want the last passing %v", capacity, res.Rate, res.Low)
		}
	}
	if cases < 300 {
		t.Fatalf("only %d cases ran", cases)
	}
	t.Logf("%d capacities, at most %d steps", cases, most)
}

func TestSearchEnds(t *testing.T) {
	t.Parallel()
	t.Run("above max", func(t *testing.T) {
		res, steps := runFake(t, knee(1e9), Options{MaxRate: 5000})
		if res.Limit != results.LimitMaxRate || res.Rate != 5000 || res.High != 0 || steps > 4 {
			t.Errorf("limit %s rate %v high %v in %d steps", res.Limit, res.Rate, res.High, steps)
		}
	})
	t.Run("below min", func(t *testing.T) {
		res, _ := runFake(t, knee(0.5), Options{MinRate: 1})
		if res.Limit != results.LimitMinRate || res.Rate != 0 || res.High != 1 {
			t.Errorf("limit %s rate %v high %v", res.Limit, res.Rate, res.High)
		}
	})
	t.Run("time budget", func(t *testing.T) {
		res, steps := runFake(t, knee(3000), Options{MaxTime: 20 * time.Second})
		if res.Limit != results.LimitTime || steps != 3 || !strings.Contains(strings.Join(res.Warnings, " "), "stopped after 3 steps") {
			t.Errorf("limit %s in %d steps, warnings %q", res.Limit, steps, res.Warnings)
		}
		if res.Low != 1600 || res.High != 0 {
			t.Errorf("interval [%v, %v), want [1600, none)", res.Low, res.High)
		}
	})
}

// TestSearchClientLimit: a client that saturates its CPU above 2000/s
// in front of a server that carries 5000/s: the search never blames the
// server, and says the client was the limit with what passed below.
func TestSearchClientLimit(t *testing.T) {
	t.Parallel()
	srv := func(rate float64) (time.Duration, time.Duration, float64, float64) {
		svc, _, _, _ := knee(5000)(rate)
		cpu := 0.2
		if rate > 2000 {
			cpu = 0.97
		}
		return svc, 0, 0, cpu
	}
	res, _ := runFake(t, srv, Options{})
	if res.Limit != results.LimitClient || res.High != 0 || res.Rate > 2000 || res.Rate < 2000/1.05 || res.ClientLimit <= 2000 {
		t.Errorf("limit %s rate %v high %v client %v", res.Limit, res.Rate, res.High, res.ClientLimit)
	}
	for _, s := range res.Steps {
		if s.Verdict == results.StepFail {
			t.Errorf("step at %v blamed the server: %s", s.Offered, s.Why)
		}
		if s.Offered > 2000 && (s.KeptUp || !strings.Contains(s.Why, "client CPU 97%")) {
			t.Errorf("step at %v: kept up %v, why %q", s.Offered, s.KeptUp, s.Why)
		}
	}
}

// TestSearchNoisyServer: a server that passes or fails at random near
// its capacity still gives an interval that does not cross, within
// precision, in a bounded number of steps.
func TestSearchNoisyServer(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		srv := func(rate float64) (time.Duration, time.Duration, float64, float64) {
			if rate > 4000*(0.9+0.2*rng.Float64()) {
				return time.Second, 0, 0, 0.1
			}
			return time.Millisecond, 0, 0, 0.1
		}
		res, steps := runFake(t, srv, Options{})
		if res.Limit != results.LimitSLO || !(res.Low < res.High) || res.High/res.Low > 1.05+1e-9 || steps > 12 {
			t.Fatalf("limit %s [%v, %v) in %d steps", res.Limit, res.Low, res.High, steps)
		}
	}
}

// searchConfirmed searches knee(3000) whose confirmation runs (10 s)
// meet a server of capacity confirmCap instead.
func searchConfirmed(t *testing.T, confirmCap float64) (*results.Capacity, int) {
	t.Helper()
	clock, calls, confirms := time.Unix(0, 0), 0, 0
	base := fakeStep(knee(3000), &clock, DefaultWarmup, &calls)
	step := func(ctx context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		if d == 10*time.Second {
			confirms++
			return Measurement{Load: fakeLoad(knee(confirmCap), rate, conc, d), ServerCPU: time.Second}, nil
		}
		return base(ctx, rate, conc, d)
	}
	res, err := Search(context.Background(), Options{SLO: slo(t, "p99<20ms"), Now: func() time.Time { return clock }}, step)
	if err != nil {
		t.Fatal(err)
	}
	return res, confirms
}

func TestSearchConfirms(t *testing.T) {
	t.Parallel()
	res, confirms := searchConfirmed(t, 1e9)
	if confirms != 1 || res.Confirm == nil || !res.Confirm.Passed() || res.Confirm.Offered != res.Rate || len(res.Warnings) != 0 {
		t.Fatalf("confirmations %d, confirm %+v, warnings %q", confirms, res.Confirm, res.Warnings)
	}
	if want := time.Second / time.Duration(res.Confirm.Requests); res.ServerCPUPerRequest != want {
		t.Errorf("server CPU/req %v, want %v (the confirmation's)", res.ServerCPUPerRequest, want)
	}
}

// TestSearchConfirmFallsBack: an answer the server fails when confirmed
// is withdrawn, the search resumes between it and the next passing rate
// below, and the new answer is confirmed in turn.
func TestSearchConfirmFallsBack(t *testing.T) {
	t.Parallel()
	found, _ := searchConfirmed(t, 1e9)
	res, confirms := searchConfirmed(t, found.Rate*0.99) // the answer fails now; the one below passes
	steps := len(found.Steps)
	if confirms != 2 || res.High != found.Rate || res.Rate >= found.Rate || res.Confirm == nil || !res.Confirm.Passed() ||
		res.Confirm.Offered != res.Rate || len(res.Steps) != steps+2 || res.Limit != results.LimitSLO || res.High/res.Low > 1.05 {
		t.Fatalf("confirmations %d, [%v, %v) (was %v), %d steps (search %d), confirm %+v", confirms, res.Low, res.High, found.Rate, len(res.Steps), steps, res.Confirm)
	}
	if w := strings.Join(res.Warnings, " "); !strings.Contains(w, "the rate is withdrawn and the search resumed below it") {
		t.Errorf("warnings %q", w)
	}
	res, confirms = searchConfirmed(t, 1) // every confirmation fails
	if confirms != maxConfirms || res.Confirm != nil || !strings.Contains(strings.Join(res.Warnings, " "), "is not confirmed (3 confirmations failed)") {
		t.Errorf("confirmations %d, confirm %v, warnings %q", confirms, res.Confirm != nil, res.Warnings)
	}
}

func TestSearchStepError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connect refused")
	_, err := Search(context.Background(), Options{SLO: slo(t, "p99<1s")}, func(context.Context, float64, int, time.Duration) (Measurement, error) {
		return Measurement{}, boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "step at 100/s") {
		t.Errorf("err %v", err)
	}
}

func TestOptionsRefused(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]Options{
		"no slo":    {},
		"rps slo":   {SLO: slo(t, "rps>10")},
		"min > max": {SLO: slo(t, "p99<1s"), MinRate: 10, MaxRate: 5},
		"growth":    {SLO: slo(t, "p99<1s"), Growth: 1},
		"precision": {SLO: slo(t, "p99<1s"), Precision: 5},
		"negative":  {SLO: slo(t, "p99<1s"), StepDuration: -1},
		"nan":       {SLO: slo(t, "p99<1s"), MaxRate: math.NaN()},
	} {
		if _, err := o.withDefaults(); !errors.Is(err, ErrOptions) {
			t.Errorf("%s: err %v, want ErrOptions", name, err)
		}
	}
}

// TestSLORefused: criteria that no rate can meet, or that every rate
// meets, are refused with the reason; the ones just inside are taken.
func TestSLORefused(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"p99<0ms":      "no rate can meet it",
		"p99<=0ms":     "no rate can meet it",
		"avg<1ns":      "no rate can meet it",
		"p50<1µs":      "no rate can meet it",
		"p99>20ms":     "an SLO bounds latency from above (p99<20ms)",
		"max>=1s":      "an SLO bounds latency from above (max<1s)",
		"p99<2m":       "every rate meets it",
		"errors<200%":  "every rate meets it",
		"errors<=100%": "every rate meets it",
		"errors<100%":  "every rate meets it",
		"errors<0%":    "no rate can have fewer than no errors",
		"errors<=0%":   "no rate can have fewer than no errors",
		"errors>1%":    "an SLO bounds errors from above",
		"rps>10":       "the rate is what the search finds",
	} {
		_, err := Options{SLO: slo(t, "p99<1s", expr)}.withDefaults()
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), expr+": "+want) {
			t.Errorf("%s: err %v, want %q", expr, err, want)
		}
	}
	for _, ok := range []string{"p99<2µs", "p99.9<=60s", "avg<10ms", "errors<0.001%", "errors<=99.9%"} {
		if _, err := (Options{SLO: slo(t, ok)}).withDefaults(); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

func TestWorkers(t *testing.T) {
	t.Parallel()
	o := Options{SLO: slo(t, "p50<5ms", "p99<20ms", "errors<1%"), Concurrency: 300}
	for _, tc := range []struct {
		rate      float64
		need, use int
	}{{10, 8, 8}, {1000, 40, 40}, {10000, 400, 300}} {
		if need, use := o.workers(tc.rate); need != tc.need || use != tc.use {
			t.Errorf("rate %v: need %d use %d, want %d %d", tc.rate, need, use, tc.need, tc.use)
		}
	}
}

func TestStepWarnings(t *testing.T) {
	t.Parallel()
	o := Options{SLO: slo(t, "p50<5ms", "p99<100ms"), StepDuration: time.Second, Precision: 0.05}
	w := stepWarnings(o)
	if len(w) != 1 || !strings.Contains(w[0], "queue grows by only 50ms in a step, under the SLO's 100ms; --step-duration 2s or more can") {
		t.Errorf("warnings %q", w)
	}
	o.StepDuration = 2 * time.Second
	if w := stepWarnings(o); len(w) != 0 {
		t.Errorf("2s steps at 5%% and 100ms: %q", w)
	}
	if w := stepWarnings(Options{SLO: slo(t, "errors<1%"), StepDuration: time.Millisecond, Precision: 0.05}); len(w) != 0 {
		t.Errorf("no latency bound: %q", w)
	}
}

// TestSearchInterrupted: a cancelled search ends with what it has, the
// step cut short not counted.
func TestSearchInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	clock, calls := time.Unix(0, 0), 0
	base := fakeStep(knee(3000), &clock, DefaultWarmup, &calls)
	step := func(ctx context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		if calls == 2 {
			cancel() // during the third step
		}
		return base(ctx, rate, conc, d)
	}
	res, err := Search(ctx, Options{SLO: slo(t, "p99<20ms"), Now: func() time.Time { return clock }}, step)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || res.Limit != results.LimitTime || res.Low != 400 || res.Confirm != nil ||
		!strings.Contains(strings.Join(res.Warnings, " "), "interrupted after 2 steps") || strings.Contains(strings.Join(res.Warnings, " "), "time budget") {
		t.Errorf("steps %d limit %s low %v confirm %v warnings %q", len(res.Steps), res.Limit, res.Low, res.Confirm != nil, res.Warnings)
	}
}

// TestSearchErrorsBounded: a server answering only fast errors does not
// pass a latency-only SLO: errors<1% joins an SLO without an error bound.
func TestSearchErrorsBounded(t *testing.T) {
	t.Parallel()
	errs := func(float64) (time.Duration, time.Duration, float64, float64) { return time.Millisecond, 0, 1, 0.1 }
	res, _ := runFake(t, errs, Options{SLO: slo(t, "p99<20ms")})
	if res.Limit != results.LimitFailed || res.Rate != 0 || !slices.Equal(res.SLO, []string{"p99<20ms", "errors<1%"}) {
		t.Errorf("limit %s rate %v slo %q", res.Limit, res.Rate, res.SLO)
	}
	some := func(float64) (time.Duration, time.Duration, float64, float64) { return time.Millisecond, 0, 0.3, 0.1 }
	res, _ = runFake(t, some, Options{SLO: slo(t, "p99<20ms", "errors<=50%")})
	if res.Limit != results.LimitMaxRate || len(res.SLO) != 2 {
		t.Errorf("an explicit error bound is the user's: limit %s slo %q", res.Limit, res.SLO)
	}
}

// TestSearchRecordsArrivals: a search's steps are Poisson unless asked
// otherwise, and the answer's line names the process.
func TestSearchRecordsArrivals(t *testing.T) {
	t.Parallel()
	step := func(_ context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		return Measurement{Load: fakeLoad(knee(500), rate, conc, d)}, nil
	}
	for _, tc := range []struct {
		a    results.Arrivals
		want string
	}{{"", "poisson arrivals (seed 1)"}, {results.Uniform, "uniform arrivals"}} {
		res, err := Search(context.Background(), Options{SLO: slo(t, "p99<20ms"), MaxRate: 1000, Arrivals: tc.a, ConfirmDuration: -1}, step)
		if err != nil {
			t.Fatal(err)
		}
		if line := results.CapacityLine(res); !strings.HasSuffix(line, ", "+tc.want) {
			t.Errorf("arrivals %q: %q, want it to end with %q", tc.a, line, tc.want)
		}
	}
	if _, err := Search(context.Background(), Options{SLO: slo(t, "p99<20ms"), Arrivals: "bursty"}, step); !errors.Is(err, ErrOptions) {
		t.Errorf("arrivals bursty: %v", err)
	}
}

// TestSearchNeverAnswered: a target that fails every request for a
// reason no rate changes (nothing listening, 403) ends the search at its
// first step, limit "failed", with the cause in the step; one that fails
// every request for a reason load can cause (429, timeouts) is searched
// down to the lowest rate first, and ends "failed" too when nothing ever
// succeeded.
func TestSearchNeverAnswered(t *testing.T) {
	t.Parallel()
	all := func(float64) (time.Duration, time.Duration, float64, float64) { return time.Millisecond, 0, 1, 0.1 }
	for _, tc := range []struct {
		msg   string
		steps int
		why   string
	}{
		{"connection refused", 1, "server: errors<1% (measured 100.000%): connection refused 100%"},
		{"status 403", 1, "status 4xx 100% (403×500)"},
		{"status 429", 5, "status 4xx 100% (429×"},
		{"timeout", 5, "timeout 100%"},
	} {
		clock, calls := time.Unix(0, 0), 0
		base := fakeStep(all, &clock, DefaultWarmup, &calls)
		step := func(ctx context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
			m, err := base(ctx, rate, conc, d)
			m.Load.Failures[tc.msg] = m.Load.Failed
			return m, err
		}
		res, err := Search(context.Background(), Options{SLO: slo(t, "p99<20ms"), Now: func() time.Time { return clock }}, step)
		if err != nil {
			t.Fatal(err)
		}
		if res.Limit != results.LimitFailed || res.Rate != 0 || len(res.Steps) != tc.steps || res.Confirm != nil ||
			!strings.Contains(res.Steps[0].Why, tc.why) || !strings.Contains(results.CapacityLine(res), "none: no request succeeded at any rate tried: ") {
			t.Errorf("%s: limit %s rate %v steps %d, first %q, line %q", tc.msg, res.Limit, res.Rate, len(res.Steps), res.Steps[0].Why, results.CapacityLine(res))
		}
	}
}

// disturbedSearch searches a 3000/s knee whose failing steps see other
// processes busy on their CPUs: at the rates in spurious, once, a failure
// the server did not cause (a 1-s stall); above the knee, with the server
// using serverCPU of its one core.
func disturbedSearch(t *testing.T, spurious map[float64]bool, serverCPU float64) *results.Capacity {
	t.Helper()
	clock, calls := time.Unix(0, 0), 0
	base := fakeStep(knee(3000), &clock, DefaultWarmup, &calls)
	step := func(ctx context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		m, err := base(ctx, rate, conc, d)
		if spurious[rate] {
			delete(spurious, rate)
			m.Load = fakeLoad(knee(0), rate, conc, d)
			m.OtherCPU, m.ServerCPU = d, d/4
		} else if rate > 3000 {
			m.OtherCPU, m.ServerCPU = d/2, time.Duration(serverCPU*float64(d))
		}
		return m, err
	}
	res, err := Search(context.Background(), Options{SLO: slo(t, "p99<20ms"), ServerCores: 1, ConfirmDuration: -1, Now: func() time.Time { return clock }}, step)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A step failed while others took the CPU is measured again, and the
// retry decides; a server failing at its full allowance is at its limit,
// whatever runs beside it. (Without the retry the spurious failure at
// 400/s ends the search at 383/s.)
func TestSearchRetriesDisturbedStep(t *testing.T) {
	t.Parallel()
	res := disturbedSearch(t, map[float64]bool{400: true}, 1)
	retried := 0
	for _, s := range res.Steps {
		if s.Retried {
			retried++
			if s.Offered != 400 || len(s.Disturbed) == 0 || !strings.Contains(s.Disturbed[0], "other processes used 1.00 CPU") {
				t.Errorf("retried step %+v", s)
			}
		}
	}
	if retried != 1 || res.Rate < 2800 || res.Rate > 3000 || res.Limit != results.LimitSLO || res.BoundDisturbed || res.Untrusted() != "" || len(res.Disturbed) != 0 {
		t.Fatalf("retried %d, %s, disturbed %q", retried, results.CapacityLine(res), res.Disturbed)
	}
}

// A disturbance that persists through the retries and bounds the answer
// makes it untrusted, and says so.
func TestSearchDisturbedBound(t *testing.T) {
	t.Parallel()
	res := disturbedSearch(t, nil, 0.3) // every failure above the knee with the server at 0.3 of its core
	retried := 0
	for _, s := range res.Steps {
		if s.Retried {
			retried++
		}
	}
	if retried != DefaultMaxRetries || !res.BoundDisturbed || res.Untrusted() != "disturbed" || len(res.Disturbed) == 0 {
		t.Fatalf("retried %d, bound disturbed %v, %q", retried, res.BoundDisturbed, res.Disturbed)
	}
	if w := strings.Join(res.Warnings, " "); !strings.Contains(w, "rests on a step that was disturbed after 3 retries") {
		t.Errorf("warnings %q", w)
	}
}

// TestNoWarmup: a negative Warmup is no warm-up (--warmup 0), recorded as
// 0s; the zero value stays the default. Before, --warmup 0 was the zero
// value and ran the default 1-s warm-up at every step, while a negative
// one was refused: no step could run without one.
func TestNoWarmup(t *testing.T) {
	step := func(_ context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		return Measurement{Load: fakeLoad(knee(500), rate, conc, d)}, nil
	}
	res, err := Search(context.Background(), Options{SLO: slo(t, "p99<20ms"), MaxRate: 1000, Warmup: -1, ConfirmDuration: -1}, step)
	if err != nil {
		t.Fatal(err)
	}
	if res.Search.Warmup != 0 {
		t.Errorf("warm-up recorded as %v, want 0s", res.Search.Warmup)
	}
	o, err := Options{SLO: slo(t, "p99<20ms")}.withDefaults()
	if err != nil || o.Warmup != DefaultWarmup {
		t.Errorf("zero Warmup: %v, %v; want the default", o.Warmup, err)
	}
}
