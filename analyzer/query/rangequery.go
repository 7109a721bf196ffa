package query

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
)

// maxRangeSteps is the most steps one range query asks for. Prometheus
// refuses a range query of more than 11,000 points per series (a week of
// minutes is 10,080), so a longer window is read in pieces, unless the
// source says it has no such limit (source.Embedded.MaxRangeSteps).
const maxRangeSteps = 10_000

// rangeStepLimiter is a source that says how many steps one range query
// may have; zero means any number.
type rangeStepLimiter interface {
	MaxRangeSteps() int
}

// queryWindow evaluates expr at every step of w (Window.firstStep), the
// steps a subquery over the window evaluates it at, in pieces of at most
// maxRangeSteps (or the source's own limit), and joins each series'
// points in time order. Each step is evaluated on its own, so the pieces
// give the points one query over the window would.
func queryWindow(ctx context.Context, rq source.RangeQuerier, expr string, w fleet.Window) (model.Matrix, error) {
	step := w.Step.Milliseconds()
	first, n := firstStep(w), int64(w.ExpectedSteps())
	limit := int64(maxRangeSteps)
	if l, ok := rq.(rangeStepLimiter); ok {
		if limit = int64(l.MaxRangeSteps()); limit <= 0 {
			limit = max(n, 1)
		}
	}
	var out model.Matrix
	index := map[model.Fingerprint]*model.SampleStream{}
	for i := int64(0); i < n; i += limit {
		start := first + i*step
		end := first + (min(i+limit, n)-1)*step
		m, err := rq.QueryRange(ctx, expr, time.UnixMilli(start).UTC(), time.UnixMilli(end).UTC(), w.Step)
		if err != nil {
			return nil, err
		}
		if i == 0 && limit >= n {
			return m, nil
		}
		for _, s := range m {
			fp := s.Metric.Fingerprint()
			if prev, ok := index[fp]; ok {
				prev.Values = append(prev.Values, s.Values...)
				continue
			}
			index[fp] = s
			out = append(out, s)
		}
	}
	return out, nil
}

// rangeQuerier is src's range queries, for the passes over the window;
// an error naming src where it has none.
func rangeQuerier(src source.Source) (source.RangeQuerier, error) {
	rq, ok := src.(source.RangeQuerier)
	if !ok {
		return nil, fmt.Errorf("%s has no range queries (source.RangeQuerier), which the analysis reads every signal with", src.Describe())
	}
	return rq, nil
}
