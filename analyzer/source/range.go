package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// RangeQuerier evaluates range queries. It is separate from Source because
// only charts need time series: the analysis itself aggregates inside the
// engine with instant queries, and a Source without it still analyses.
type RangeQuerier interface {
	QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error)
}

var (
	_ RangeQuerier = (*Embedded)(nil)
	_ RangeQuerier = (*Remote)(nil)
)

// MaxRangeSteps is zero: the embedded engine takes a range query of any
// number of steps (MaxSamples still bounds its points), where Prometheus's
// HTTP API refuses more than 11,000 points per series. The analysis then
// reads a week of minutes (10,080 steps) in one query, not two.
func (e *Embedded) MaxRangeSteps() int { return 0 }

// QueryRange evaluates q at every step in [start, end].
func (e *Embedded) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	if step <= 0 {
		return nil, fmt.Errorf("%s: range query step must be positive", e.Describe())
	}
	qry, err := e.engine.NewRangeQuery(ctx, e.queryable, nil, q, start, end, step)
	if err != nil {
		return nil, fmt.Errorf("%s: query failed: %w", e.Describe(), err)
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if len(res.Warnings) > 0 {
		e.logger.Warn("PromQL warnings", "source", e.Describe(), "query", q, "warnings", res.Warnings.AsErrors())
	}
	if res.Err != nil {
		return nil, fmt.Errorf("%s: query failed: %w", e.Describe(), res.Err)
	}
	m, ok := res.Value.(promql.Matrix)
	if !ok {
		return nil, fmt.Errorf("%s: query %q: unexpected result type %T, want matrix", e.Describe(), q, res.Value)
	}
	out := make(model.Matrix, 0, len(m))
	for _, s := range m {
		if len(s.Histograms) > 0 {
			return nil, errors.New("native histogram results are not supported")
		}
		met := make(model.Metric, s.Metric.Len())
		s.Metric.Range(func(l labels.Label) { met[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		ss := &model.SampleStream{Metric: met, Values: make([]model.SamplePair, len(s.Floats))}
		for i, p := range s.Floats {
			ss.Values[i] = model.SamplePair{Timestamp: model.Time(p.T), Value: model.SampleValue(p.F)}
		}
		out = append(out, ss)
	}
	return out, nil
}

// QueryRange evaluates q at every step in [start, end], with the same
// retries and error reporting as Query.
func (r *Remote) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	if step <= 0 {
		return nil, fmt.Errorf("%s: range query step must be positive", r.describe)
	}
	var m model.Matrix
	err := r.do(ctx, "range query", func(ctx context.Context) (v1.Warnings, error) {
		v, warnings, _, err := r.api.QueryRange(ctx, q, v1.Range{Start: start, End: end, Step: step}, v1.WithTimeout(r.timeout))
		if err != nil {
			return warnings, err
		}
		switch x := v.(type) {
		case model.Matrix:
			m = x
		case nil:
			m = model.Matrix{}
		default:
			return warnings, fmt.Errorf("unexpected result type %s, want matrix", v.Type())
		}
		return warnings, nil
	}, "query", q)
	return m, err
}
