package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
)

type plainSource struct{}

func (plainSource) Query(context.Context, string, time.Time) (model.Vector, error) { return nil, nil }
func (plainSource) MetricNames(context.Context, time.Time, time.Time) ([]string, error) {
	return nil, nil
}
func (plainSource) Describe() string { return "plain" }
func (plainSource) Close() error     { return nil }

type rangeSource struct{ plainSource }

func (rangeSource) QueryRange(context.Context, string, time.Time, time.Time, time.Duration) (model.Matrix, error) {
	return nil, nil
}

// TestCountQueriesKeepsRangeQueries: the pipeline draws its charts only from
// a source that is a RangeQuerier, so counting must not hide it, nor add it.
func TestCountQueriesKeepsRangeQueries(t *testing.T) {
	var n atomic.Int64
	ctx := context.Background()
	plain := countQueries(plainSource{}, &n, nil)
	if _, ok := plain.(source.RangeQuerier); ok {
		t.Error("a source without range queries gained them")
	}
	_, _ = plain.Query(ctx, "up", time.Time{})
	ranged := countQueries(rangeSource{}, &n, nil)
	rq, ok := ranged.(source.RangeQuerier)
	if !ok {
		t.Fatal("the range queries were hidden")
	}
	_, _ = ranged.Query(ctx, "up", time.Time{})
	_, _ = rq.QueryRange(ctx, "up", time.Time{}, time.Time{}, time.Minute)
	if n.Load() != 3 {
		t.Errorf("counted %d queries, want 3", n.Load())
	}
}
