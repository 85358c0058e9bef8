package study

import (
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/results"
)

// grpc-vs-rest's finding (DESIGN rule 9): the ratio of gRPC to REST is
// not a goal to tune but something the report explains from the run —
// server CPU and allocations per call, bytes per call by layer — with the
// lean transport's cell as the floor that splits gRPC's extra cost into
// grpc-go's transport and the protocol itself.

// grpcPair is one like-for-like comparison of the study: the REST cell and
// the gRPC cell of a group, and the lean cell when the group has one.
type grpcPair struct{ group, rest, grpc, lean string }

var grpcPairs = []grpcPair{
	{"CRUD c=1", "REST json", "gRPC", leanLabel},
	{"CRUD c=50", "REST json", "gRPC", leanLabel},
	{"unary transports", "REST json get", "gRPC native", ""},
	{"stream of 1000", "REST list (one JSON array)", "gRPC server stream", ""},
}

// callFigures are one cell's medians over its trials, per call (a stream
// cell's call is one whole exchange).
type callFigures struct {
	trials       int
	cpuUS        float64 // server CPU, µs
	allocs       float64 // server allocations (-1: not measured)
	wire, body   float64 // bytes on the socket and of bodies, both directions
	layers       results.Layers
	layersByCell bool // layers were measured (stream cells)
}

func grpcCallFigures(res *results.Study, id string) callFigures {
	var cpu, allocs, wire, body []float64
	var f callFigures
	var ls []results.Layers
	for _, t := range res.TrialsOf(id) {
		l := t.Load
		if l == nil || l.Requests == 0 || t.Error != "" {
			continue
		}
		n := float64(l.Requests)
		f.trials++
		if t.Server.CPU > 0 {
			cpu = append(cpu, t.Server.CPU.Seconds()*1e6/n)
		}
		end, ok1 := t.Server.GoMem["go_memstats_mallocs_total"]
		start, ok2 := t.Server.GoMem["go_memstats_mallocs_total_at_start"]
		if ok1 && ok2 && end >= start {
			allocs = append(allocs, (end-start)/n)
		}
		wire = append(wire, float64(l.Bytes.WireIn+l.Bytes.WireOut)/n)
		body = append(body, float64(l.Bytes.BodyIn+l.Bytes.BodyOut)/n)
		if s := l.Stream; s != nil && !s.InBrowser {
			ls = append(ls, grpcPerCall(s.In.Add(s.Out), l.Requests))
		}
	}
	f.cpuUS, f.wire, f.body = kvMedian(cpu), kvMedian(wire), kvMedian(body)
	f.allocs = -1
	if len(allocs) > 0 {
		f.allocs = kvMedian(allocs)
	}
	if len(ls) > 0 { // the middle trial's split (they are alike: the same calls)
		f.layers, f.layersByCell = ls[len(ls)/2], true
	}
	return f
}

// grpcVsRESTNotes is the study's "why" section.
func grpcVsRESTNotes(res *results.Study) []string {
	ids := map[[2]string]string{}
	for _, c := range res.Cells {
		ids[[2]string{c.Group, c.Label}] = c.ID
	}
	var b strings.Builder
	b.WriteString("## Why gRPC costs what it costs (measured in this run)\n\n" +
		"gRPC runs on grpc-go's server, what users deploy; \"" + leanLabel + "\" is our own minimal transport (h2grpc), " +
		"the floor: the same services, decoded and encoded alike, answered on the connection's goroutine in one write. " +
		"Per call, medians over the trials: the server's CPU (from its /proc) and allocations (its runtime's counter), " +
		"and the bytes on the socket, both directions, beside the bodies' (a stream cell's call is one whole stream).\n\n")
	b.WriteString("| Group | Cell | server CPU/call | × REST | server allocs/call | × REST | wire bytes/call | body bytes/call |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|\n")
	type row struct {
		p          grpcPair
		rest, grpc callFigures
		lean       *callFigures
	}
	var rows []row
	for _, p := range grpcPairs {
		restID, ok1 := ids[[2]string{p.group, p.rest}]
		grpcID, ok2 := ids[[2]string{p.group, p.grpc}]
		if !ok1 || !ok2 {
			continue
		}
		r := row{p: p, rest: grpcCallFigures(res, restID), grpc: grpcCallFigures(res, grpcID)}
		if r.rest.trials == 0 || r.grpc.trials == 0 {
			continue
		}
		cells := []struct {
			label string
			f     callFigures
		}{{p.rest, r.rest}, {p.grpc, r.grpc}}
		if leanID, ok := ids[[2]string{p.group, p.lean}]; ok && p.lean != "" {
			if lf := grpcCallFigures(res, leanID); lf.trials > 0 {
				r.lean = &lf
				cells = append(cells, struct {
					label string
					f     callFigures
				}{p.lean, lf})
			}
		}
		for _, c := range cells {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.0f | %.0f |\n", p.group, c.label, grpcUS(c.f.cpuUS),
				kvRatio(c.f.cpuUS, r.rest.cpuUS), grpcAllocs(c.f.allocs), grpcAllocRatio(c.f.allocs, r.rest.allocs), c.f.wire, c.f.body)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil
	}
	b.WriteString("\n")
	for _, r := range rows {
		if r.lean == nil || r.rest.cpuUS == 0 || r.grpc.cpuUS == 0 || r.lean.cpuUS == 0 {
			if r.rest.cpuUS == 0 || r.grpc.cpuUS == 0 {
				continue
			}
			fmt.Fprintf(&b, "- **%s**: gRPC spends %s per call against REST's %s (%s), with %s against %s allocations per call",
				r.p.group, grpcUS(r.grpc.cpuUS), grpcUS(r.rest.cpuUS), kvRatio(r.grpc.cpuUS, r.rest.cpuUS), grpcAllocs(r.grpc.allocs), grpcAllocs(r.rest.allocs))
			if r.grpc.layersByCell && r.rest.layersByCell {
				g, h := r.grpc.layers, r.rest.layers
				gf, hf := g.Envelope+g.H2Frames+g.H2Headers, h.Envelope+h.H2Frames+h.H2Headers+h.H1Headers+h.H1Framing
				fmt.Fprintf(&b, "; framing (envelopes, frames, headers) is %d of its %d bytes per call against REST's %d of %d",
					gf, g.Total(), hf, h.Total())
			}
			b.WriteString(".\n")
			continue
		}
		extra, transport := r.grpc.cpuUS-r.rest.cpuUS, r.grpc.cpuUS-r.lean.cpuUS
		fmt.Fprintf(&b, "- **%s**: gRPC on grpc-go spends %s per call against REST's %s (%s, %+.1f µs). "+
			"Split at the floor: grpc-go's transport over our minimal one %+.1f µs (what the floor does not do: "+
			"each call handed from the connection's reader goroutine to a handler goroutine and its reply to the writer's; "+
			"grpc-go allocates %s objects per call against the floor's %s), and gRPC itself against REST, both on their floor, %+.1f µs "+
			"(HTTP/2 frames and HPACK against an HTTP/1.1 head, protobuf against JSON).\n",
			r.p.group, grpcUS(r.grpc.cpuUS), grpcUS(r.rest.cpuUS), kvRatio(r.grpc.cpuUS, r.rest.cpuUS),
			extra, transport, grpcAllocs(r.grpc.allocs), grpcAllocs(r.lean.allocs), r.lean.cpuUS-r.rest.cpuUS)
	}
	var layered []row
	for _, r := range rows {
		if r.grpc.layersByCell && r.rest.layersByCell {
			layered = append(layered, r)
		}
	}
	if len(layered) > 0 {
		b.WriteString("\nBytes per call by layer, both directions (stream cells count them on the socket):\n\n" +
			"| Group | Cell | message | envelope | HTTP/2 frames | HPACK | HTTP/1.1 head | chunking | total |\n" +
			"|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range layered {
			for _, c := range []struct {
				label string
				l     results.Layers
			}{{r.p.rest, r.rest.layers}, {r.p.grpc, r.grpc.layers}} {
				l := c.l
				fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d |\n", r.p.group, c.label,
					l.Message, l.Envelope, l.H2Frames, l.H2Headers, l.H1Headers, l.H1Framing, l.Total())
			}
		}
	}
	return []string{b.String()}
}

func grpcUS(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f µs", v)
}

func grpcAllocs(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

func grpcAllocRatio(a, b float64) string {
	if a < 0 || b < 0 {
		return "–"
	}
	return kvRatio(a, b)
}

// grpcPerCall divides every layer by n calls.
func grpcPerCall(l results.Layers, n int64) results.Layers {
	return results.Layers{Message: l.Message / n, Envelope: l.Envelope / n, H2Frames: l.H2Frames / n, H2Headers: l.H2Headers / n,
		WS: l.WS / n, H1Headers: l.H1Headers / n, H1Framing: l.H1Framing / n, Other: l.Other / n}
}
