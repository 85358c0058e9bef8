package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/httpapi"
)

// exchange sends POST /echo in format in (none: GET /users) with the given
// Accept and Accept-Encoding, in process, and returns the recorder.
func exchange(t *testing.T, h http.Handler, in, accept, acceptEncoding string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", "/users", nil)
	if in != "" {
		e := codec.MustLookup(in)
		body, err := e.Codec.Marshal(&api.EchoRequest{FirstMessage: "a", SecondMessage: "b"})
		if err != nil {
			t.Fatal(err)
		}
		r = httptest.NewRequest("POST", "/echo", bytes.NewReader(body))
		r.Header.Set("Content-Type", e.MediaTypes[0])
	}
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	if acceptEncoding != "" {
		r.Header.Set("Accept-Encoding", acceptEncoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAcceptPrecedence: the highest q wins; among equals the request's own
// format wins, else the first listed; q=1 is the top and q=0 refuses;
// a type wildcard prefers the request's format, else the first format of
// that type in the server's fixed order.
func TestAcceptPrecedence(t *testing.T) {
	h := newAPI(t, httpapi.Options{})
	for _, tc := range []struct{ in, accept, want string }{
		{"", "application/msgpack, application/cbor", "application/msgpack"},
		{"", "application/cbor, application/msgpack", "application/cbor"},
		{"msgpack", "application/json, application/msgpack", "application/msgpack"},
		{"msgpack", "application/msgpack, application/json", "application/msgpack"},
		{"cbor", "application/json, application/msgpack", "application/json"},
		{"", "application/cbor;q=0.5, application/msgpack;q=0.9", "application/msgpack"},
		{"", "application/msgpack;q=0.9, application/cbor;q=1", "application/cbor"},
		{"", "application/msgpack;q=1.0", "application/msgpack"},
		{"", "application/msgpack;q=0, application/cbor;q=0.1", "application/cbor"},
		{"", "application/msgpack;q=1.5, application/cbor;q=0.1", "application/cbor"},
		{"", "application/msgpack;q=-0.5, application/cbor;q=0.1", "application/cbor"},
		{"", "application/msgpack;q=x, application/cbor;q=0.1", "application/cbor"},
		{"", "application/msgpack ; Q=0.2, application/cbor;q=0.1", "application/msgpack"},
		{"toon", "application/*", "application/json"},
		{"msgpack", "application/*", "application/msgpack"},
		{"", "text/*", "text/toon"},
		{"msgpack", "*/*", "application/msgpack"},
		{"", "image/png, */*;q=0.1", "application/json"},
	} {
		w := exchange(t, h, tc.in, tc.accept, "")
		if got := w.Header().Get("Content-Type"); w.Code/100 != 2 || got != tc.want {
			t.Errorf("request %q, Accept %q: %d %q, want %q", tc.in, tc.accept, w.Code, got, tc.want)
		}
	}
	for _, accept := range []string{"image/png", "application/msgpack;q=0", "application/cbor;q=2"} {
		if w := exchange(t, h, "", accept, ""); w.Code != http.StatusNotAcceptable {
			t.Errorf("Accept %q: %d, want 406", accept, w.Code)
		}
	}
}

// TestCodingPrecedence: gzip and zstd by q, zstd on a tie whatever the
// order, q=0 refuses a coding, anything else is identity.
func TestCodingPrecedence(t *testing.T) {
	h := newAPI(t, httpapi.Options{})
	for ae, want := range map[string]string{
		"gzip":                       "gzip",
		"zstd":                       "zstd",
		"gzip, zstd":                 "zstd",
		"zstd, gzip":                 "zstd",
		"gzip;q=0.5, zstd;q=0.4":     "gzip",
		"zstd;q=0.4, gzip;q=0.5":     "gzip",
		"gzip;q=0, zstd;q=0":         "",
		"gzip;q=0":                   "",
		"gzip;q=0.001":               "gzip",
		"br, deflate":                "",
		"identity":                   "",
		"GZIP":                       "gzip",
		"gzip;q=1, zstd;q=1.0":       "zstd",
		"zstd;q=0.5, gzip;q=0.5, br": "zstd",
	} {
		w := exchange(t, h, "json", "", ae)
		if got := w.Header().Get("Content-Encoding"); w.Code != 200 || got != want {
			t.Errorf("Accept-Encoding %q: %d coding %q, want %q", ae, w.Code, got, want)
		}
	}
}

// threadCPU is the calling thread's CPU time (getrusage RUSAGE_THREAD).
func threadCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestBurnCostsCPUDelayDoesNot is what the calibration relies on: --burn
// spins (lost capacity), --delay sleeps (latency only). The server handles
// n requests on this test's own locked thread, whose CPU time getrusage
// reports apart from the rest of the process. Spinning 5 ms n times is
// 200 ms of wall time; on a busy 2-CPU machine the thread gets far from
// all of it (70% here when idle, less under gremlins' parallel builds), so
// the bounds are loose: burning must cost at least 30 ms of CPU (15%) and
// at least 3 times what the same requests cost with the same delay slept
// (about 6 ms: decoding and encoding 40 echoes; spinning measured 25 times that). Both must take at least n × 5 ms of wall time.
func TestBurnCostsCPUDelayDoesNot(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n, d = 40, 5 * time.Millisecond
	cost := func(o httpapi.Options) (cpu, wall time.Duration) {
		h := newAPI(t, o)
		exchange(t, h, "json", "", "") // warm the pools and the codec
		began, c0 := time.Now(), threadCPU(t)
		for range n {
			if w := exchange(t, h, "json", "", ""); w.Code != 200 {
				t.Fatalf("%+v: status %d", o, w.Code)
			}
		}
		return threadCPU(t) - c0, time.Since(began)
	}
	burnCPU, burnWall := cost(httpapi.Options{Burn: d})
	delayCPU, delayWall := cost(httpapi.Options{Delay: d})
	t.Logf("burn: %v CPU in %v; delay: %v CPU in %v", burnCPU, burnWall, delayCPU, delayWall)
	if burnWall < n*d || delayWall < n*d {
		t.Errorf("wall time burn %v, delay %v: each must be at least %v", burnWall, delayWall, n*d)
	}
	if burnCPU < 30*time.Millisecond || burnCPU < 3*delayCPU {
		t.Errorf("burn cost %v of CPU, delay %v: burning must cost CPU, sleeping must not", burnCPU, delayCPU)
	}
}
