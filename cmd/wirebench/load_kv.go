package main

import (
	"github.com/wirebench/wirebench/load/spec"
)

// kvClient is a kv-* client from the flags: RESP to redis://host:port,
// or wirebench's /kv over HTTP to http://host:port.
func (f *loadFlags) kvClient(c *spec.Client, url string) error {
	if err := f.kv.Read(f.fs); err != nil {
		return err
	}
	o := &f.kv.Options
	o.Name, o.URL, o.Timeout = f.scenario, url, f.o.Timeout
	c.KV = o
	return nil
}
