package grpcany

import (
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// streamStats are a streaming method's measurements beside the engine's
// (the stream section: time to the first and last reply, the gap between
// replies), one set per shard as load/stream keeps them.
type streamStats struct {
	shards *measure.Shards[streamShard]
}

type streamShard struct {
	exchanges, items  int64
	first, last, each *measure.Histogram
}

func newStreamStats() *streamStats {
	return &streamStats{shards: measure.NewShards(measure.ShardCount(load.MaxConcurrency), func(s *streamShard) {
		*s = streamShard{first: measure.NewHistogram(), last: measure.NewHistogram(), each: measure.NewHistogram()}
	})}
}

func (s *streamStats) add(vu, items int, first, last time.Duration) {
	i := s.shards.Lock(vu)
	sh := s.shards.At(i)
	sh.exchanges++
	sh.items += int64(items)
	if items > 0 {
		sh.first.Record(first)
	}
	sh.last.Record(last)
	s.shards.Unlock(i)
}

func (s *streamStats) gap(vu int, d time.Duration) {
	i := s.shards.Lock(vu)
	s.shards.At(i).each.Record(d)
	s.shards.Unlock(i)
}

func (s *streamStats) result(kind string) *results.Stream {
	sum := streamShard{first: measure.NewHistogram(), last: measure.NewHistogram(), each: measure.NewHistogram()}
	s.shards.Each(func(sh *streamShard) {
		sum.exchanges += sh.exchanges
		sum.items += sh.items
		sum.first.Merge(sh.first)
		sum.last.Merge(sh.last)
		sum.each.Merge(sh.each)
	})
	return &results.Stream{Kind: "grpc " + kind, Exchanges: sum.exchanges, Items: sum.items,
		First: sum.first, Last: sum.last, PerMessage: sum.each}
}
