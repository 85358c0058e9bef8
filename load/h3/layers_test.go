package h3

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	h3qlog "github.com/quic-go/quic-go/http3/qlog"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/wirebench/wirebench/results"
)

// layerRun sends reqs requests of random body sizes (seeded) asking for
// random response sizes over conns connections, closes the pool and
// returns it with the body bytes it sent and read. checked: the pool
// counts quic-go's packet events too (CheckLayers).
func layerRun(t *testing.T, s *testServer, seed uint64, conns, reqs int, checked bool, wrap func(qlogwriter.Trace) qlogwriter.Trace) (p *Pool, sent, read int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	p = NewPool(conns, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	if checked {
		p.CheckLayers()
	}
	p.wrapTrace = wrap
	sizes := []int{0, 1, 63, 64, 1200, 1500, 16383, 16384, 70000, 300000}
	pick := func() int {
		if rng.IntN(2) == 0 {
			return sizes[rng.IntN(len(sizes))]
		}
		return rng.IntN(100000)
	}
	type job struct{ up, down int }
	jobs := make([]job, reqs)
	for i := range jobs {
		jobs[i] = job{pick(), pick()}
		sent += int64(jobs[i].up)
		read += int64(jobs[i].down)
	}
	// Four VUs at once, so that streams interleave in packets.
	var wg sync.WaitGroup
	for vu := range 4 {
		wg.Go(func() {
			for i := vu; i < reqs; i += 4 {
				up, down := jobs[i].up, jobs[i].down
				method, body := "POST", io.Reader(bytes.NewReader(bytes.Repeat([]byte("q"), up)))
				if up == 0 && i%2 == 0 {
					method, body = "GET", nil
				}
				req, _ := http.NewRequestWithContext(context.Background(), method, fmt.Sprintf("https://%s/x?n=%d", s.addr, down), body)
				resp, err := p.Client(i).Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || n != int64(down) {
					t.Errorf("response %d: read %d of %d: %v", i, n, down, err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return p, sent, read
}

// Every UDP payload byte the client's sockets counted is in exactly one
// layer, per direction, over random request and response sizes (GET
// without a body, POST bodies from 0 to 300 kB, responses the same): the
// layers add up to the socket's count, the STREAM data QUIC carried first
// time is exactly what HTTP/3 framed, and the body layer is exactly the
// bodies the test wrote and read (counted apart, by the test itself).
func TestLayersAddUpToTheSocket(t *testing.T) {
	s := startServer(t, 100)
	runs := 0
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			p, sent, read := layerRun(t, s, seed, 1+int(seed%3), 12, true, nil)
			runs++
			if err := p.Layers.Check(p.Bytes.In.Load(), p.Bytes.Out.Load()); err != nil {
				t.Fatal(err)
			}
			in, out := p.LayersNow()
			if in.Total() != p.Bytes.In.Load() || out.Total() != p.Bytes.Out.Load() {
				t.Errorf("layers in %d out %d, socket in %d out %d", in.Total(), out.Total(), p.Bytes.In.Load(), p.Bytes.Out.Load())
			}
			if in.Message != read || out.Message != sent {
				t.Errorf("body layer in %d out %d, bodies read %d sent %d", in.Message, out.Message, read, sent)
			}
			for _, l := range []results.Layers{in, out} {
				if l.QUIC <= 0 || l.H3Frames <= 0 || l.QPACK <= 0 {
					t.Errorf("a layer is empty: %+v", l)
				}
			}
			// The default split (no packet events) is the socket minus the
			// HTTP/3 layers: on the same counts, the checked split.
			p.Layers.packets = false
			if in2, out2 := p.LayersNow(); in2 != in || out2 != out {
				t.Errorf("without packet events in %+v out %+v, checked in %+v out %+v", in2, out2, in, out)
			}
			t.Logf("in %+v\nout %+v", in, out)
		})
	}
	if runs != 6 {
		t.Fatalf("%d runs, want 6", runs)
	}
}

// Without CheckLayers (the default), quic-go's connection gets no
// recorder (no packet event is counted), and the split is the checked
// one: the bodies exactly, everything we send exactly as a checked run of
// the same requests counts it (our control stream, HEADERS and DATA
// frames, QPACK blocks: no field of ours varies between runs), and the
// layers add up to the socket.
func TestLayersWithoutPacketEvents(t *testing.T) {
	s := startServer(t, 100)
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			conns := 1 + int(seed%3)
			c, _, _ := layerRun(t, s, seed, conns, 12, true, nil)
			p, sent, read := layerRun(t, s, seed, conns, 12, false, nil)
			for _, d := range []*dirCounts{&p.Layers.in, &p.Layers.out} {
				if n, sd := d.packets.Load(), d.streamData.Load(); n != 0 || sd != 0 {
					t.Fatalf("packet events counted: %d bytes of packets, %d of STREAM data", n, sd)
				}
			}
			if err := p.Layers.Check(p.Bytes.In.Load(), p.Bytes.Out.Load()); err != nil {
				t.Fatal(err)
			}
			in, out := p.LayersNow()
			_, cout := c.LayersNow()
			if in.Total() != p.Bytes.In.Load() || out.Total() != p.Bytes.Out.Load() {
				t.Errorf("layers in %d out %d, socket in %d out %d", in.Total(), out.Total(), p.Bytes.In.Load(), p.Bytes.Out.Load())
			}
			if in.Message != read || out.Message != sent {
				t.Errorf("body layer in %d out %d, bodies read %d sent %d", in.Message, out.Message, read, sent)
			}
			if out.H3Frames != cout.H3Frames || out.QPACK != cout.QPACK || out.Message != cout.Message {
				t.Errorf("out %+v, checked %+v", out, cout)
			}
			for _, l := range []results.Layers{in, out} {
				if l.QUIC <= 0 || l.H3Frames <= 0 || l.QPACK <= 0 {
					t.Errorf("a layer is empty: %+v", l)
				}
			}
		})
	}
}

// Without packet events, Check still refuses HTTP/3 layers larger than
// what the socket carried.
func TestLayersWithoutPacketEventsCheck(t *testing.T) {
	var l LayerCounts
	l.out.qpack.Add(30)
	l.out.h3Frames.Add(3)
	if err := l.Check(0, 40); err != nil {
		t.Errorf("33 bytes of HTTP/3 in 40 carried: %v", err)
	}
	if _, out := l.Layers(0, 40); out.QUIC != 7 {
		t.Errorf("QUIC out %d, want 7", out.QUIC)
	}
	if err := l.Check(0, 32); !errors.Is(err, ErrLayers) {
		t.Errorf("33 bytes of HTTP/3 in 32 carried: %v", err)
	}
}

// twice is a trace that records the events dup picks a second time: a
// layer counted twice.
type twice struct {
	qlogwriter.Trace
	dup func(qlogwriter.Event) bool
}

type twiceRec struct {
	qlogwriter.Recorder
	dup func(qlogwriter.Event) bool
}

func (t twice) AddProducer() qlogwriter.Recorder {
	return twiceRec{t.Trace.AddProducer(), t.dup}
}

func (r twiceRec) RecordEvent(e qlogwriter.Event) {
	r.Recorder.RecordEvent(e)
	if r.dup(e) {
		r.Recorder.RecordEvent(e)
	}
}

// A layer counted twice does not go unnoticed: with each kind of event
// recorded twice (so QUIC packets, HTTP/3 frame headers, QPACK blocks or
// bodies counted twice), Check fails.
func TestLayersDoubleCountFails(t *testing.T) {
	s := startServer(t, 100)
	isFrame := func(in bool, want func(any) bool) func(qlogwriter.Event) bool {
		return func(e qlogwriter.Event) bool {
			switch e := e.(type) {
			case h3qlog.FrameCreated:
				return !in && want(e.Frame.Frame)
			case h3qlog.FrameParsed:
				return in && want(e.Frame.Frame)
			}
			return false
		}
	}
	headers := func(f any) bool { _, ok := f.(h3qlog.HeadersFrame); return ok }
	data := func(f any) bool { _, ok := f.(h3qlog.DataFrame); return ok }
	settings := func(f any) bool { _, ok := f.(h3qlog.SettingsFrame); return ok }
	for _, tc := range []struct {
		name string
		dup  func(qlogwriter.Event) bool
	}{
		{"packets sent", func(e qlogwriter.Event) bool { _, ok := e.(qlog.PacketSent); return ok }},
		{"packets received", func(e qlogwriter.Event) bool { _, ok := e.(qlog.PacketReceived); return ok }},
		{"QPACK out", isFrame(false, headers)},
		{"QPACK in", isFrame(true, headers)},
		{"body out", isFrame(false, data)},
		{"body in", isFrame(true, data)},
		{"SETTINGS in", isFrame(true, settings)},
		{"stream types in", func(e qlogwriter.Event) bool { _, ok := e.(h3qlog.StreamTypeSet); return ok }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _ := layerRun(t, s, 7, 1, 4, true, func(tr qlogwriter.Trace) qlogwriter.Trace { return twice{tr, tc.dup} })
			err := p.Layers.Check(p.Bytes.In.Load(), p.Bytes.Out.Load())
			if !errors.Is(err, ErrLayers) {
				t.Fatalf("%s counted twice, Check: %v", tc.name, err)
			}
		})
	}
}

// Our control stream's SETTINGS count when a packet carries them, once,
// and not when http3 logs them: a connection closed in between never sent
// them (the bytes would be framed but not carried).
func TestLayersControlStreamCountedWhenCarried(t *testing.T) {
	l := LayerCounts{packets: true}
	tr := l.newTrace(nil)
	rec := tr.AddProducer()
	const id, n = 2, 8
	rec.RecordEvent(h3qlog.StreamTypeSet{Initiator: h3qlog.InitiatorLocal, StreamID: id, StreamType: h3qlog.StreamTypeControl})
	rec.RecordEvent(h3qlog.FrameCreated{StreamID: id, Raw: h3qlog.RawInfo{Length: n, PayloadLength: -1}, Frame: h3qlog.Frame{Frame: h3qlog.SettingsFrame{}}})
	if got := l.out.h3Frames.Load(); got != 0 {
		t.Fatalf("framed, not carried: %d bytes of HTTP/3 frames, want 0", got)
	}
	sent := qlog.PacketSent{Raw: qlog.RawInfo{Length: 40}, Frames: []qlog.Frame{{Frame: &qlog.StreamFrame{StreamID: id, Offset: 0, Length: n}}}}
	for range 2 { // the second time a retransmission: not first-time data
		rec.RecordEvent(sent)
		if f, d := l.out.h3Frames.Load(), l.out.streamData.Load(); f != n || d != n {
			t.Fatalf("carried: %d bytes of HTTP/3 frames, %d of stream data, want %d each", f, d, n)
		}
	}
	if _, out := l.StreamMismatch(); out != 0 {
		t.Errorf("stream data minus HTTP/3 bytes out %d", out)
	}
}

// holdSettings holds the goroutine that writes our control stream just
// after http3 logged its SETTINGS, until release is closed; held is closed
// when it got there, done when http3's last producer closed (the
// goroutine ended).
type holdSettings struct {
	qlogwriter.Trace
	held, release, done chan struct{}
}

// holdRec is one producer's recorder; settings says it logged our
// SETTINGS (http3's connection: it closes after the goroutine ended).
type holdRec struct {
	qlogwriter.Recorder
	h        *holdSettings
	settings atomic.Bool
}

func (h *holdSettings) AddProducer() qlogwriter.Recorder {
	return &holdRec{Recorder: h.Trace.AddProducer(), h: h}
}

func (r *holdRec) RecordEvent(e qlogwriter.Event) {
	r.Recorder.RecordEvent(e)
	if f, ok := e.(h3qlog.FrameCreated); ok {
		if _, ok := f.Frame.Frame.(h3qlog.SettingsFrame); ok {
			r.settings.Store(true)
			close(r.h.held)
			<-r.h.release
		}
	}
}

func (r *holdRec) Close() error {
	err := r.Recorder.Close()
	if r.settings.Load() {
		close(r.h.done)
	}
	return err
}

// A connection closed after http3 logged our SETTINGS but before it wrote
// them (its goroutine descheduled on a busy machine: TestZeroRTTAccepted's
// rare "out -8") still adds up: nothing is counted that was not carried.
func TestLayersSettingsNeverSent(t *testing.T) {
	s := startServer(t, 100)
	p := NewPool(1, s.addr, 10*time.Second, &tls.Config{RootCAs: s.roots})
	p.CheckLayers()
	h := &holdSettings{held: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	p.wrapTrace = func(tr qlogwriter.Trace) qlogwriter.Trace { h.Trace = tr; return h }
	resp, err := p.Client(0).Get("https://" + s.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case <-h.held:
	case <-time.After(10 * time.Second):
		t.Fatal("http3 logged no SETTINGS within 10 s")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	close(h.release)
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the control stream's goroutine did not end within 10 s")
	}
	if err := p.Layers.Check(p.Bytes.In.Load(), p.Bytes.Out.Load()); err != nil {
		t.Error(err)
	}
	if _, out := p.LayersNow(); out.H3Frames == 0 || out.QPACK == 0 {
		t.Errorf("out %+v: a request's frames are missing", out)
	}
}
