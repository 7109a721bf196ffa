package session

import (
	"context"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
)

// observed wraps src so that each query it answers is told to the
// observer: the analysis reports only its stages, and a stage of a week
// over a large fleet is dozens of queries and many seconds. The wrapper
// keeps src's range queries, which the analysis looks for by type.
func observed(src source.Source, obs Observer) source.Source {
	c := observedSource{Source: src, obs: obs}
	if rq, ok := src.(source.RangeQuerier); ok {
		return observedRangeSource{c, rq}
	}
	return c
}

type observedSource struct {
	source.Source
	obs Observer
}

func (c observedSource) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	defer c.obs.Query()
	return c.Source.Query(ctx, q, ts)
}

type observedRangeSource struct {
	observedSource
	rq source.RangeQuerier
}

func (c observedRangeSource) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	defer c.obs.Query()
	return c.rq.QueryRange(ctx, q, start, end, step)
}

// RawSamples keeps the source's raw reads, which the analysis prefers to
// its PromQL engine; each read of a selector counts as a query.
func (c observedSource) RawSamples() (source.RawStore, bool) {
	return source.WrapRawSamples(c.Source, c.obs.Query)
}
