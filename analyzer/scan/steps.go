package scan

import (
	"context"
	"slices"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// Steps is a range evaluation's answer as the scan holds it: every series
// with a value at one step at least, sorted by labels as the engine's
// range query sorts them, each with its value at every step of Grid
// (IsAbsent where it has none). The values are the evaluation's own
// arrays, lent until Release: a caller that folds them in place saves
// writing a week of points per series (RangeSteps' reason to exist).
type Steps struct {
	Grid   Grid
	Series []StepSeries
	r      *reader
}

// StepSeries is one series of Steps.
type StepSeries struct {
	Labels labels.Labels
	V      []float64
}

// Metric is the series' labels as an answer of the engine's API names them.
func (s StepSeries) Metric() model.Metric {
	m := make(model.Metric, s.Labels.Len())
	s.Labels.Range(func(l labels.Label) { m[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
	return m
}

// Release gives the answer's arrays back for the next evaluation; the
// Steps must not be read after it. It may be called more than once.
func (s *Steps) Release() {
	if s.r != nil {
		s.r.release()
		s.r = nil
	}
	s.Series = nil
}

// IsAbsent says that a value of Steps is no value: the series has none at
// that step. It is the stale marker's bit pattern, which no arithmetic
// yields and no answer holds as a value.
func IsAbsent(v float64) bool { return isAbsent(v) }

// FillAbsent marks every step of v as having no value.
func FillAbsent(v []float64) { fillAbsent(v) }

// RangeSteps is Range that lends its arrays instead of writing points.
func RangeSteps(ctx context.Context, q storage.Queryable, expr string, g Grid, rules Rules) (*Steps, error) {
	ev, e, err := newEvaluator(ctx, q, expr, g, rules)
	if err != nil {
		return nil, err
	}
	v, err := ev.eval(e)
	if err != nil {
		ev.r.release()
		return nil, err
	}
	out := &Steps{Grid: g, Series: make([]StepSeries, 0, len(v.vec)), r: ev.r}
	for _, s := range v.vec {
		if !s.empty() {
			out.Series = append(out.Series, StepSeries{Labels: s.lset, V: s.v})
		}
	}
	slices.SortFunc(out.Series, func(a, b StepSeries) int { return labels.Compare(a.Labels, b.Labels) })
	return out, nil
}
