// Package h1 is the load engine's lean HTTP/1.1 client: ParseResponse
// (pull, from a bufio.Reader) and Stream (push, for the event loops of
// raw mode, load/h1loop.go) read a response with one set of header rules
// (headState) and explicit limits (clientio.MaxHead, clientio.MaxBody;
// FuzzParseResponse, FuzzStreamMatchesParse); Conn is one keep-alive
// connection owned by one VU, writing pre-serialized requests and reading
// through raw system calls (fdreader.go) so that it costs no more CPU per
// request than wrk. Conn is not safe for concurrent use.
//
// It knows nothing of the engine: the raw, REST and KV scenarios in
// package load put it behind a VU.
package h1
