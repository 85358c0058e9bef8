package main

import (
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// streamScenario builds a --stream or --browser scenario against the REST
// port at url (and --grpc for the native gRPC kinds).
func (f *loadFlags) streamScenario(url string) (load.Scenario, results.Config, error) {
	if f.stream.Kind != "" && f.browser.Kind != "" {
		return nil, results.Config{}, loadUsagef("--stream and --browser: pick one")
	}
	if f.stream.Kind != "" {
		f.stream.Options = f.raw.Options // h3: rest-list, ndjson, sse
		sc, err := stream.New(f.stream)
		if err != nil {
			return nil, results.Config{}, loadUsagef("%s", cliMessage(err))
		}
		return sc, results.Config{Scenario: "stream " + f.stream.Kind, Stream: results.NewClientOptions(f.stream)}, nil
	}
	if f.o.Concurrency != 1 {
		return nil, results.Config{}, loadUsagef("--browser runs one page: use -c 1")
	}
	f.browser.URL = url
	sc, err := browser.New(f.browser)
	if err != nil {
		return nil, results.Config{}, loadUsagef("%s", cliMessage(err))
	}
	return sc, results.Config{Scenario: "browser " + f.browser.Kind, Browser: results.NewClientOptions(f.browser)}, nil
}
