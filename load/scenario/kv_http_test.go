package scenario

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/results"
)

// kvPeer is the KV contract's HTTP face as this test reads the contract
// (PUT and GET /kv/{key}, raw or JSON bodies): a peer for the client's
// HTTP path until the reference server's own /kv is merged; it counts
// what it served so the client's counts can be checked against it.
type kvPeer struct {
	mu         sync.Mutex
	m          map[string]string
	puts, gets atomic.Int64
	badCT      atomic.Int64
}

func (p *kvPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, ok := strings.CutPrefix(r.URL.Path, "/kv/")
	if !ok || key == "" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case "PUT":
		p.puts.Add(1)
		b, _ := io.ReadAll(r.Body)
		val := string(b)
		switch r.Header.Get("Content-Type") {
		case "application/octet-stream":
		case "application/json":
			var v struct {
				Value string `json:"value"`
				TTL   int64  `json:"ttl_ms"`
			}
			if json.Unmarshal(b, &v) != nil {
				http.Error(w, "bad json", 400)
				return
			}
			val = v.Value
		default:
			p.badCT.Add(1)
			http.Error(w, "content type", http.StatusUnsupportedMediaType)
			return
		}
		p.mu.Lock()
		p.m[key] = val
		p.mu.Unlock()
		w.WriteHeader(204)
	case "GET":
		p.gets.Add(1)
		p.mu.Lock()
		val, ok := p.m[key]
		p.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Accept") == "application/octet-stream" {
			w.Header().Set("Content-Type", "application/octet-stream")
			io.WriteString(w, val)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"key": key, "value": val, "ttl_ms": 0})
	default:
		w.WriteHeader(405)
	}
}

// TestKVHTTP runs the KV scenarios over both HTTP protocols: the peer
// served exactly what we counted, every GET was checked, and the bytes
// we counted on the socket are the peer's.
func TestKVHTTP(t *testing.T) {
	for _, proto := range []string{ProtocolHTTPRaw, ProtocolHTTPJSON} {
		for _, sc := range []string{ScenarioKVSet, ScenarioKVGet, ScenarioKVMixed} {
			peer := &kvPeer{m: map[string]string{}}
			ts := loadtest.StartHTTP(t, peer.ServeHTTP)
			const n, keys = 600, 100
			res := runKV(t, load.Options{Options: results.Options{Concurrency: 3, Requests: n}}, KVOptions{Name: sc, Protocol: proto, URL: strings.TrimSuffix(ts.URL, "/"), Keys: keys, ValueSize: 50})
			ts.Close()
			preload := int64(0)
			if sc != ScenarioKVSet {
				preload = keys
			}
			if res.Requests != n || res.Failed != 0 || peer.puts.Load()+peer.gets.Load() != n+preload || peer.badCT.Load() != 0 {
				t.Errorf("%s %s: requests %d failed %d %v; peer served %d PUT %d GET (preload %d)", proto, sc, res.Requests, res.Failed, res.Failures, peer.puts.Load(), peer.gets.Load(), preload)
			}
			if sc == ScenarioKVSet && (res.Bytes.WireOut != ts.Ln.Bytes.In.Load() || res.Bytes.WireIn != ts.Ln.Bytes.Out.Load()) {
				t.Errorf("%s %s: we counted %d out %d in; the peer %d in %d out", proto, sc, res.Bytes.WireOut, res.Bytes.WireIn, ts.Ln.Bytes.In.Load(), ts.Ln.Bytes.Out.Load())
			}
			if sc == ScenarioKVGet && res.Bytes.BodyIn < n*50 {
				t.Errorf("%s: %d body bytes in for %d GETs of 50 bytes", proto, res.Bytes.BodyIn, n)
			}
		}
	}
}

// TestKVHTTPChecks: a wrong value and a missing key fail the GETs of that
// key, over both HTTP protocols.
func TestKVHTTPChecks(t *testing.T) {
	for _, proto := range []string{ProtocolHTTPRaw, ProtocolHTTPJSON} {
		peer := &kvPeer{m: map[string]string{}}
		ts := loadtest.StartHTTP(t, peer.ServeHTTP)
		sc, err := NewKV(KVOptions{Name: ScenarioKVGet, Protocol: proto, URL: strings.TrimSuffix(ts.URL, "/"), Keys: 2, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s := sc
		s.once.Do(func() { s.preloadErr = s.preload(t.Context()) })
		if s.preloadErr != nil {
			t.Fatal(s.preloadErr)
		}
		peer.mu.Lock()
		peer.m["key:000000000000"] = strings.Repeat("0", 128) // right size, wrong bytes
		delete(peer.m, "key:000000000001")
		peer.mu.Unlock()
		res, err := load.Run(t.Context(), load.Options{Options: results.Options{Concurrency: 1, Requests: 200}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != 200 || res.Failures[kvCheckFail] == 0 || res.Failures[kvMissingFail] == 0 || res.Status["404"] != res.Failures[kvMissingFail] {
			t.Errorf("%s: failed %d %v status %v", proto, res.Failed, res.Failures, res.Status)
		}
	}
}

// TestKVOptionsRefused: every bound of KVOptions refuses one past it.
func TestKVOptionsRefused(t *testing.T) {
	ok := KVOptions{Name: ScenarioKVSet, URL: "redis://127.0.0.1:6379"}
	if _, err := NewKV(ok); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(o *KVOptions){
		func(o *KVOptions) { o.Name = "kv-del" },
		func(o *KVOptions) { o.Protocol = "memcache" },
		func(o *KVOptions) { o.Keys = -1 },
		func(o *KVOptions) { o.Keys = 1_000_000_000_000 },
		func(o *KVOptions) { o.ValueSize = maxKVValueSize + 1 },
		func(o *KVOptions) { o.ValueSize = -1 },
		func(o *KVOptions) { o.Pipeline = maxKVPipeline + 1 },
		func(o *KVOptions) { o.Pipeline = 2; o.Protocol = ProtocolHTTPRaw; o.URL = "http://127.0.0.1:80" },
		func(o *KVOptions) { o.URL = "http://127.0.0.1:6379" },
		func(o *KVOptions) { o.URL = "redis://127.0.0.1" },
		func(o *KVOptions) { o.URL = "redis://127.0.0.1:6379/2" },
		func(o *KVOptions) { o.KeyMin, o.KeyMax = 10, 9 },
		func(o *KVOptions) { o.KeyMin, o.KeyMax, o.Keys = 0, 99, 10 },
		func(o *KVOptions) { o.KeyMax = 1_000_000_000_000 },
		func(o *KVOptions) { o.KeyMin, o.Keys = 999_999_999_990, 11 },
		func(o *KVOptions) { o.KeyDist = keydist.Spec{Pattern: keydist.Zipf, Exp: 5} },
		func(o *KVOptions) { o.KeyDist = keydist.Spec{Pattern: "pareto"} },
		func(o *KVOptions) { o.Sizes = keydist.Sizes{Min: 1, Max: maxKVValueSize + 1} },
		func(o *KVOptions) { o.Ratio = Ratio{Set: 1, Get: 1} }, // kv-set with a mix
		func(o *KVOptions) { o.Name, o.Ratio = ScenarioKVMixed, Ratio{Set: 1, Expire: 1} },
		func(o *KVOptions) { o.ExpiryMin, o.ExpiryMax = 2*time.Second, time.Second },
		func(o *KVOptions) { o.ExpiryMin, o.ExpiryMax = time.Microsecond, time.Second },
		func(o *KVOptions) { o.MissRatio = 0.5 }, // kv-set sends no GET
		func(o *KVOptions) { o.Name, o.MissRatio = ScenarioKVGet, 1.5 },
	} {
		o := ok
		bad(&o)
		if _, err := NewKV(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	for _, good := range []func(o *KVOptions){
		func(o *KVOptions) { o.Keys = 999_999_999_999 },
		func(o *KVOptions) { o.ValueSize = maxKVValueSize },
		func(o *KVOptions) { o.Pipeline = maxKVPipeline },
		func(o *KVOptions) { o.KeyMin, o.KeyMax = 0, 999_999_999_999 },
		func(o *KVOptions) { o.KeyDist = keydist.Spec{Pattern: keydist.Zipf, Exp: 0.01} },
		func(o *KVOptions) { o.Ratio = Ratio{Set: 3} }, // kv-set's own
		func(o *KVOptions) { o.Name, o.Ratio = ScenarioKVMixed, Ratio{Set: 1, Get: 8, Del: 1} },
		func(o *KVOptions) { o.Name, o.MissRatio = ScenarioKVGet, 1 },
	} {
		o := ok
		good(&o)
		if _, err := NewKV(o); err != nil {
			t.Errorf("%+v refused: %v", o, err)
		}
	}
}
