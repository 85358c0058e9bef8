package scenario

import (
	"context"
	"fmt"
	"sync"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/h1"
	"github.com/wirebench/wirebench/measure"
)

// preloadBatch is how many SETs the RESP preload pipelines per write.
const preloadBatch = 1000

// preloadConns is how many connections the HTTP preload spreads over.
const preloadConns = 8

// preload writes every key of the key space once, at its size and with
// no TTL (not measured: its connections count into a Bytes of their own
// and its requests are not in the result), so that whatever key the
// distribution draws is there — a GET misses only where the load deletes
// or expires keys or asks for absent ones (--miss-ratio) — and otherwise
// a missing key is the server's fault.
func (s *kvScenario) preload(ctx context.Context) error {
	if s.o.Protocol == ProtocolRESP {
		return s.preloadRESP(ctx)
	}
	var wg sync.WaitGroup
	errs := make([]error, preloadConns)
	for w := range preloadConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := newHTTPKVVU(kvVU{s: s, counts: new(kvCounts)}, h1.NewConn(s.addr, new(measure.Bytes), s.o.Timeout, true), s.o.Protocol == ProtocolHTTPJSON)
			defer v.Close()
			for k := s.o.KeyMin + int64(w); k <= s.o.KeyMax; k += preloadConns {
				var o load.Outcome
				if v.put(ctx, kvDraw{op: kvOpSet, key: k}, &o); o.Fail != "" {
					errs[w] = fmt.Errorf("load: preloading %d keys into %s: key %d: %s", s.o.Keys, s.addr, k, o.Fail)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *kvScenario) preloadRESP(ctx context.Context) error {
	v := &respVU{kvVU: kvVU{s: s, counts: new(kvCounts)}, c: newRESPConn(s.addr, new(measure.Bytes), s.o.Timeout)}
	defer v.Close()
	for k0 := s.o.KeyMin; k0 <= s.o.KeyMax; k0 += preloadBatch {
		v.cmds = v.cmds[:0]
		n := min(preloadBatch, s.o.KeyMax+1-k0)
		for k := k0; k < k0+n; k++ {
			var o load.Outcome
			v.cmds = v.appendCommand(v.cmds, kvDraw{op: kvOpSet, key: k}, &o)
		}
		if err := v.c.send(ctx, v.cmds); err != nil {
			return fmt.Errorf("load: preloading %d keys into %s: %w", s.o.Keys, s.addr, err)
		}
		for k := k0; k < k0+n; k++ {
			r, err := v.c.read()
			if err != nil {
				return fmt.Errorf("load: preloading %d keys into %s: %w", s.o.Keys, s.addr, err)
			}
			var o load.Outcome
			if v.check(r, kvDraw{op: kvOpSet, key: k}, &o); o.Fail != "" {
				return fmt.Errorf("load: preloading %d keys into %s: key %d: %s", s.o.Keys, s.addr, k, o.Fail)
			}
		}
	}
	return nil
}
