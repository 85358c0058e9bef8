package load

import (
	"time"

	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/results"
)

// ConnResult is the result's record of how a scenario set up its
// connections, for its Finish: the URL, the transport in effect and
// --transport auto's choice, and over HTTP/3 the handshakes made before
// the run, or with 0-RTT what 0-RTT did (its handshakes are inside the
// first requests' latency, so they are not listed apart).
func ConnResult(url, transport, auto string, handshakes []time.Duration, z *h3.ZeroRTTStats) *results.Conn {
	url, _ = reqlog.RedactTarget(url) // a result keeps no credential (reqlog's rules)
	c := &results.Conn{URL: url, Transport: transport, Auto: auto}
	if z != nil {
		c.ZeroRTT = &results.ZeroRTT{Full: z.Full, Resumed: z.Resumed, Used: z.Used, EarlyRequests: z.EarlyRequests,
			Refused: z.Refused, NoEarly: z.NoEarly, NoTicket: z.NoTicket}
	} else {
		c.Handshakes = handshakes
	}
	return c
}
