package study

import (
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

func init() { Register("networks", networksStudy) }

// The networks study's links and times: the full run's, and --quick's
// (three links, 2 trials of 0.5 s + 2.5 s: about 6 minutes here, as its
// help says; a 1.5-s run on 3g holds too few round trips to mean much).
var (
	networkLinks      = []string{LinkNone, "lte", "3g", "lte-lossy"}
	networkQuickLinks = []string{LinkNone, "3g", "lte-lossy"}
)

const (
	networkWarmup        = 2 * time.Second
	networkDuration      = 5 * time.Second
	networkQuickWarmup   = 500 * time.Millisecond
	networkQuickDuration = 2500 * time.Millisecond
)

// NetworksQuickTime is what study networks --quick takes on a 2-CPU
// machine (measured), for its help.
const NetworksQuickTime = "about 6 minutes"

// networksStudy answers the question users bring to a network: which
// format and which transport, on which link. The reference API's list of
// 100 users (bytes matter on a slow link) in JSON, TOON and protobuf over
// HTTP/1.1, HTTP/2 and HTTP/3, all on TLS, and over gRPC, on loopback and
// on three presets; every response decoded and checked.
func networksStudy() Definition {
	lo := load.Options{Options: results.Options{Concurrency: 4}}
	srv := []string{"--https", "127.0.0.1:{port4}", "--http3", "127.0.0.1:{port3}"}
	const tlsURL = "https://127.0.0.1:{port4}"
	def := Definition{
		Name:     "networks",
		Title:    "Formats and transports on the networks users have",
		Question: "Which format and which transport serve this API fastest on each network?",
		Answer:   results.Answer{Metric: "lat_p50"},
		Description: "GET /users (the list of 100 seeded users: 11 KiB in JSON, 7.8 KiB in TOON) by 4 closed-loop VUs, every response decoded and checked; " +
			"JSON, TOON and protobuf over HTTP/1.1 (a connection per VU), HTTP/2 and HTTP/3 (one connection shared), all on TLS, and gRPC (one connection, h2c); " +
			"on loopback, LTE, 3G and a lossy LTE cell edge (the link presets; --links chooses others), the servers here and the client across the link. " +
			"HTTP/3's handshake is made before each measured run, HTTP/1.1's and HTTP/2's at its first request (a few round trips of the run).",
		Links:  networkLinks,
		Warmup: networkWarmup, Duration: networkDuration,
		QuickLinks: networkQuickLinks, QuickWarmup: networkQuickWarmup, QuickDuration: networkQuickDuration,
	}
	const group = "list of 100 users, 4 VUs"
	for _, f := range []string{"json", "toon", "protobuf"} {
		for _, tr := range []struct{ label, transport, url string }{
			{"h1", conn.HTTP1, tlsURL}, {"h2", conn.H2, tlsURL}, {"h3", conn.H3, refH3},
		} {
			so := scenario.Options{Name: scenario.List, Format: f, Options: conn.Options{Transport: tr.transport, Insecure: true}}
			if tr.transport != conn.HTTP1 {
				so.Connections = 1
			}
			c := apiCell(group, f+" "+tr.label, defaultDataset, srv, lo, so)
			c.Load.Scenario.URL = tr.url
			def.Cells = append(def.Cells, c)
		}
	}
	def.Cells = append(def.Cells, apiCell(group, "gRPC (protobuf)", defaultDataset, srv, lo,
		scenario.Options{Name: scenario.List, Options: conn.Options{Transport: scenario.TransportGRPC, Connections: 1}}))
	return def
}
