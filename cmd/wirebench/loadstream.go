package main

import (
	"github.com/wirebench/wirebench/load/spec"
)

// streamClient is a --stream or --browser client against the REST port
// at url (and --grpc for the native gRPC kinds).
func (f *loadFlags) streamClient(c *spec.Client, url string) error {
	if f.stream.Kind != "" && f.browser.Kind != "" {
		return loadUsagef("--stream and --browser: pick one")
	}
	if f.stream.Kind != "" {
		f.stream.Options = f.raw.Options // h3: rest-list, ndjson, sse
		c.Stream = &f.stream
		return nil
	}
	if f.o.Concurrency != 1 {
		return loadUsagef("--browser runs one page: use -c 1")
	}
	f.browser.URL = url
	c.Browser = &f.browser
	return nil
}
