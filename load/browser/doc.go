// Package browser is the load engine's in-browser scenario, apart from
// the engine so that chromedp is imported only by who asks for it. It
// runs the page the server serves at /bench/ (package
// webbench) in headless chromium, driven through the DevTools protocol:
// one operation asks the page for a batch of calls of one kind, made one
// after another, and gets back each call's latency as the page measured it
// with performance.now(). Those in-page latencies, not the DevTools round
// trip of the batch, become the run's latency histogram and request count
// (ownLatency). Client CPU is the Go driver's plus every chromium process's.
// The browser's sockets are its own: no byte split for these cells (the Go
// kinds of the same protocols have one).
//
// New makes a load.Scenario (driver PerVU, one VU: the page); its
// Finish puts the stream section and the page's latencies in the result.
package browser
