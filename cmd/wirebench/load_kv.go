package main

import (
	"strings"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/scenario"
)

// kvScenario builds a kv-* scenario from the flags: RESP to
// redis://host:port, or wirebench's /kv over HTTP to http://host:port.
func (f *loadFlags) kvScenario(url string) (load.Scenario, map[string]any, error) {
	f.kv.Name, f.kv.URL, f.kv.Timeout = f.scenario, url, f.o.Timeout
	if f.kv.Protocol == "" {
		f.kv.Protocol = scenario.ProtocolHTTPRaw
		if strings.HasPrefix(url, "redis://") {
			f.kv.Protocol = scenario.ProtocolRESP
		}
	}
	sc, err := scenario.NewKV(f.kv)
	if err != nil {
		return nil, nil, loadUsagef("%s", cliMessage(err))
	}
	return sc, map[string]any{"scenario": f.scenario, "kv_options": f.kv}, nil
}
