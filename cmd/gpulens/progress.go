package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
)

// countQueries wraps src so that each query it answers is counted in n
// and then reported to tick (which may be nil): the analysis reports only
// its stages, and a stage of a week over a large fleet is dozens of queries
// and many seconds. The wrapper keeps src's range queries, which the
// pipeline looks for by type.
func countQueries(src source.Source, n *atomic.Int64, tick func()) source.Source {
	if tick == nil {
		tick = func() {}
	}
	c := countingSource{Source: src, n: n, tick: tick}
	if rq, ok := src.(source.RangeQuerier); ok {
		return countingRangeSource{c, rq}
	}
	return c
}

type countingSource struct {
	source.Source
	n    *atomic.Int64
	tick func()
}

func (c countingSource) done() {
	c.n.Add(1)
	c.tick()
}

func (c countingSource) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	defer c.done()
	return c.Source.Query(ctx, q, ts)
}

type countingRangeSource struct {
	countingSource
	rq source.RangeQuerier
}

func (c countingRangeSource) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	defer c.done()
	return c.rq.QueryRange(ctx, q, start, end, step)
}
