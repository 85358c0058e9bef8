package link

import (
	"math"
	"math/rand/v2"
	"time"
)

// Verdict is what a Pipe does with a packet.
type Verdict uint8

const (
	Deliver   Verdict = iota // delivered at the time Admit returns
	Lost                     // lost on the link (the loss model)
	QueueDrop                // dropped at the tail of a full queue
)

// PipeStats count what a Pipe did, by packets and bytes.
type PipeStats struct {
	Packets, Bytes         int64 // admitted to the pipe, all verdicts
	Lost, QueueDrops       int64
	Delivered, DeliveredBy int64 // packets and bytes delivered
}

// Pipe is one direction of a link, as a pure function of each packet's
// arrival time and size: a loss draw, a drop-tail queue in front of a
// serialiser at the rate, then the propagation delay with its jitter.
// Time is a Duration since any fixed origin, so that tests drive it with
// a fake clock. A Pipe is not safe for concurrent use: one goroutine
// reads each direction.
type Pipe struct {
	rate          float64 // bits per second, 0 unlimited
	delay, jitter time.Duration
	reorder       bool
	qBytes, qPkts int
	loss          lossState
	rng           *rand.Rand
	busy          time.Duration // when the serialiser finishes the last packet admitted
	inQ           []queued      // packets not yet fully serialised, oldest first
	head          int           // inQ[:head] are done
	inQBytes      int
	lastOut       time.Duration // the latest delivery so far (order keeping)
	Stats         PipeStats
}

type queued struct {
	done time.Duration
	size int
}

// NewPipe is the pipe of one direction of s: up (client → server) or down.
func NewPipe(s Spec, up bool) *Pipe {
	r := s.Down
	stream := uint64(2)
	if up {
		r, stream = s.Up, 1
	}
	seed := uint64(s.Seed)
	if s.Seed == 0 {
		seed = 0x5eed
	}
	p := &Pipe{
		rate: float64(r), delay: s.Delay, jitter: s.Jitter, reorder: s.Reorder,
		qBytes: s.QueueBytes, qPkts: s.QueuePackets,
		loss: lossState{m: s.Loss},
		// Each direction its own stream of one seed: the same spec loses
		// the same packets of each direction in every run.
		rng: rand.New(rand.NewPCG(seed, stream)),
	}
	if p.qBytes == 0 && p.qPkts == 0 {
		p.qPkts = DefaultQueuePackets
	}
	return p
}

// Admit takes a packet of size bytes (the IP packet) arriving at now and
// says when it leaves the far end, or that it is lost or dropped. now
// must not go backwards between calls.
func (p *Pipe) Admit(now time.Duration, size int) (time.Duration, Verdict) {
	p.Stats.Packets++
	p.Stats.Bytes += int64(size)
	if p.loss.lose(p.rng) {
		p.Stats.Lost++
		return 0, Lost
	}
	at := now
	if p.rate > 0 {
		// The queue holds what the serialiser has not finished by now.
		for p.head < len(p.inQ) && p.inQ[p.head].done <= now {
			p.inQBytes -= p.inQ[p.head].size
			p.head++
		}
		if p.head > 64 && p.head*2 > len(p.inQ) {
			p.inQ = append(p.inQ[:0], p.inQ[p.head:]...)
			p.head = 0
		}
		if (p.qPkts > 0 && len(p.inQ)-p.head >= p.qPkts) || (p.qBytes > 0 && p.inQBytes+size > p.qBytes) {
			p.Stats.QueueDrops++
			return 0, QueueDrop
		}
		start := max(now, p.busy)
		p.busy = start + time.Duration(math.Round(float64(size)*8*1e9/p.rate))
		p.inQ = append(p.inQ, queued{p.busy, size})
		p.inQBytes += size
		at = p.busy
	}
	at += p.delay
	if p.jitter > 0 {
		at += time.Duration(p.rng.NormFloat64() * float64(p.jitter))
		at = max(at, p.busy, now) // a packet never leaves before it arrived and was sent
	}
	if !p.reorder {
		at = max(at, p.lastOut)
	}
	p.lastOut = max(p.lastOut, at)
	p.Stats.Delivered++
	p.Stats.DeliveredBy += int64(size)
	return at, Deliver
}
