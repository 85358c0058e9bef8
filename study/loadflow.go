package study

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/wirebench/wirebench/load/flow"
	"github.com/wirebench/wirebench/load/replay"
)

// flowOrReplay reads a load that is a flow file (flow:, data_file:) or a
// recording (replay:, speed:, as_format:, loop:) sent to url. Both name
// their own requests; a replay is its own schedule.
func (p *parser) flowOrReplay(ls *loadSpec, l *LoadSpec, n *yaml.Node, path string, line func(string) int) {
	co := p.connOptions(ls)
	if ls.Flow != "" && ls.Replay != "" {
		p.errorf(line("replay"), "%s: flow and replay exclude each other", path)
		return
	}
	what := "flow"
	if ls.Replay != "" {
		what = "replay"
	}
	for _, k := range []string{"method", "headers", "body", "body_file", "expect_status", "expect_body_contains", "scenario", "format", "compression"} {
		if isSet(n, k) && !(k == "format" && what == "flow") {
			p.errorf(line(k), "%s.%s: a %s names its own requests and checks", path, k, what)
		}
	}
	if ls.Replay != "" {
		for _, k := range []string{"data_file", "rate", "open", "stages", "requests", "arrivals", "arrivals_seed"} {
			if isSet(n, k) {
				p.errorf(line(k), "%s.%s: a replay's schedule is the recording's (times × 1/speed)", path, k)
			}
		}
		if ls.Speed < 0 || ls.Speed > 1e9 {
			p.errorf(line("speed"), "%s.speed: %g: want > 0 and at most 1e9 (1: as recorded, 2: twice as fast)", path, ls.Speed)
		}
		l.Replay = &replay.Options{File: p.path(ls.Replay), Speed: ls.Speed, AsFormat: ls.AsFormat, Loop: ls.Loop, Options: co}
		if l.Replay.Speed == 0 {
			l.Replay.Speed = 1
		}
		return
	}
	for _, k := range []string{"speed", "as_format", "loop"} {
		if isSet(n, k) {
			p.errorf(line(k), "%s.%s: applies to replay", path, k)
		}
	}
	file := p.path(ls.Flow)
	text, err := p.readFile(file)
	if err != nil {
		p.errorf(line("flow"), "%s.flow: %v", path, err)
		return
	}
	data := ""
	if ls.DataFile != "" {
		data = p.path(ls.DataFile)
	}
	f, err := flow.Parse(file, text, data, p.readFile)
	if err != nil {
		p.errorf(line("flow"), "%s.flow: %s", path, strings.TrimPrefix(err.Error(), flow.ErrFlow.Error()+": "))
		return
	}
	l.Flow, l.FlowConn = f, flow.Options{Options: co, Format: ls.Format}
}
